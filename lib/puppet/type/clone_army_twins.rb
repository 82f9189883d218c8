# frozen_string_literal: true

require_relative '../../puppet_x/clone_army/helper_param'
require_relative '../../puppet_x/clone_army/names'
require_relative '../../puppet_x/clone_army/twins'

Puppet::Type.newtype(:clone_army_twins) do
  @doc = <<-DOC
    @summary The real nodes twins are made from, imported by `clone-army twin import`.

    The helper takes the nodes' records (facts, environment, trusted
    extensions) from a directory of fact sets or from a PuppetDB query into
    `/var/lib/puppet-clone-army/.twins/` (root's alone, mode 0700), one
    `<node>.json` each, replacing the set there whole, so that the twins of
    a fleet are made from a set that does not change under them. What a
    twin must not take is left out as the records are read: the node's
    certname, secret-named facts, cloud metadata, `pp_preshared_key` and
    authorization extensions; `clone-army twin list` shows what was left
    out and why.

    The set is imported again when `source` changes. The same source read
    again later (a PuppetDB whose estate changed) is not: run `clone-army twin
    import` by hand for that, or change the source.

    A host holds one set: declare one resource (class clone_army names it
    `clone_army`). Every `clone_army_clone` with a `twin` autorequires it.

    @example The nodes of a directory of `puppet facts show` or PuppetDB factsets output
      clone_army_twins { 'clone_army':
        source => { 'facts_dir' => '/srv/estate-facts' },
      }

    @example The Debian web nodes of a PuppetDB, with the load host's own certificate
      clone_army_twins { 'clone_army':
        source => {
          'puppetdb' => 'https://puppetdb.example.com:8081',
          'query'    => 'inventory[certname, environment, facts, trusted] { facts.os.family = "Debian" and trusted.extensions.pp_role ~ "web" }',
        },
      }

    @example The same PuppetDB, asked with a certificate of its own
      clone_army_twins { 'clone_army':
        source      => {
          'puppetdb' => 'https://puppetdb.example.com:8081',
          'query'    => 'inventory[certname, environment, facts, trusted] { facts.os.family = "Debian" }',
        },
        ca_cert     => '/etc/puppetlabs/puppet/ssl/certs/ca.pem',
        client_cert => '/etc/clone-army/pdb-reader.pem',
        client_key  => '/etc/clone-army/pdb-reader.key',
      }
  DOC

  newparam(:name, namevar: true) do
    desc <<-DOC
      A name of your choosing; the host holds one set whatever it is.

      Example: `clone_army_twins { 'clone_army': source => { 'facts_dir' => '/srv/estate-facts' } }`
    DOC
  end

  newproperty(:source) do
    desc <<-DOC
      Where the nodes come from, as the helper recorded it at the last import
      (`absent` before any), one of two forms:

      - `{ 'facts_dir' => DIR }`: a directory of `*.json` records. Each file
        holds one node or an array of nodes, as PuppetDB `inventory` or
        `factsets` answers, `puppet facts show` or `puppet facts find` output,
        or bare facts.
      - `{ 'puppetdb' => URL, 'query' => PQL }`: an `inventory` or `factsets`
        query whose records are the nodes.

      A change imports the set anew.

      Example: `source => { 'facts_dir' => '/srv/estate-facts' }`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Twins.validate_source(value)
    end

    munge do |value|
      value.transform_keys(&:to_s)
    end
  end

  # The TLS files the helper asks a PuppetDB source with, each written out
  # where puppet-strings reads its text.
  tls_file = lambda do |param|
    param.validate do |value|
      PuppetX::CloneArmy::Names.validate_absolute_path(param.name.to_s, value)
    end
  end

  newparam(:ca_cert) do
    desc <<-DOC
      With a `puppetdb` source: the CA certificate PuppetDB is verified
      against, a PEM file on this host. Undef: the host agent's CA
      certificate.

      Example: `ca_cert => '/etc/puppetlabs/puppet/ssl/certs/ca.pem'`
    DOC
    tls_file.call(self)
  end

  newparam(:client_cert) do
    desc <<-DOC
      With a `puppetdb` source: the client certificate the helper presents
      to PuppetDB, a PEM file on this host, given with `client_key` (one
      without the other is refused). Undef: the host agent's own
      certificate.

      Example: `client_cert => '/etc/clone-army/pdb-reader.pem'`
    DOC
    tls_file.call(self)
  end

  newparam(:client_key) do
    desc <<-DOC
      With a `puppetdb` source: the private key of `client_cert`, a PEM
      file on this host. Undef: the host agent's own key.

      Example: `client_key => '/etc/clone-army/pdb-reader.key'`
    DOC
    tls_file.call(self)
  end

  # `helper` reads the same in every type that has it
  # (spec/unit/puppet_x/clone_army/shared_params_spec.rb).
  newparam(:helper) do
    desc <<-DOC
      The absolute path of the `clone-army` helper the provider runs.
      Defaults to `/usr/local/sbin/clone-army` (where class clone_army
      installs it); a `clone-army` on the PATH is never run, since whatever
      a directory on it holds would run as root. A `File` resource for this
      path is autorequired, so the helper is installed before it is used.

      Example: `helper => '/opt/clone-army/bin/clone-army'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::HelperParam.validate(value)
    end
  end

  validate do
    tls = [:client_cert, :client_key].map { |name| self[name] }
    raise ArgumentError, 'client_cert and client_key go together: give both or neither' if tls.compact.size == 1
  end

  autorequire(:file) do
    [self[:helper] || PuppetX::CloneArmy::Helper::DEFAULT_PATH]
  end
end
