# frozen_string_literal: true

require_relative '../../puppet_x/clone_army/helper_param'
require_relative '../../puppet_x/clone_army/names'
require_relative '../../puppet_x/clone_army/twins'

Puppet::Type.newtype(:clone_army_twins) do
  @doc = <<-DOC
    @summary The real nodes twins are made from, imported by `clone-army twin import`.

    The helper takes the nodes' records (facts, environment, trusted
    extensions) from a directory of fact sets or from a PuppetDB query into
    `/var/lib/puppet-clone-army/.twins/`, one `<node>.json` each, replacing
    the set there whole, so that the twins of a fleet are made from a set that
    does not change under them. What a twin must not take is left out as the
    records are read: the node's certname, secret-named facts, cloud metadata,
    `pp_preshared_key` and authorization extensions.

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
  DOC

  newparam(:name, namevar: true) do
    desc 'A name of your choosing; the host holds one set whatever it is.'
  end

  newproperty(:source) do
    desc <<-DOC
      Where the nodes come from, as the helper recorded at the last import:
      `{ 'facts_dir' => DIR }` (a directory of `*.json` records: PuppetDB
      inventory or factsets, `puppet facts show` or `puppet facts find`
      output, or bare facts, one node or an array of them a file) or
      `{ 'puppetdb' => URL, 'query' => PQL }` (an `inventory` or `factsets`
      query whose records are the nodes). A change imports the set anew.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Twins.validate_source(value)
    end

    munge do |value|
      value.transform_keys(&:to_s)
    end
  end

  [:ca_cert, :client_cert, :client_key].each do |name|
    newparam(name) do
      desc <<-DOC
        With a `puppetdb` source: the #{name.to_s.tr('_', ' ')} the helper
        speaks to PuppetDB with (a PEM file on this host). Undef: the host
        agent's own (its CA certificate, its certificate and key).
      DOC

      validate do |value|
        PuppetX::CloneArmy::Names.validate_absolute_path(name.to_s, value)
      end
    end
  end

  PuppetX::CloneArmy::HelperParam.define(self)

  validate do
    tls = [:client_cert, :client_key].map { |name| self[name] }
    raise ArgumentError, 'client_cert and client_key go together: give both or neither' if tls.compact.size == 1
  end

  autorequire(:file) do
    [self[:helper] || PuppetX::CloneArmy::Helper::DEFAULT_PATH]
  end
end
