# frozen_string_literal: true

require_relative '../../puppet_x/clone_army/base_rules'
require_relative '../../puppet_x/clone_army/helper'
require_relative '../../puppet_x/clone_army/helper_param'
require_relative '../../puppet_x/clone_army/master_param'
require_relative '../../puppet_x/clone_army/names'
require_relative '../../puppet_x/clone_army/schema'

Puppet::Type.newtype(:clone_army_base) do
  @doc = <<-DOC
    @summary A base image that clone_army clones boot from.

    A base is a complete root filesystem with systemd and a Puppet agent,
    kept at `/var/lib/puppet-clone-army/<name>` (mode 0755). Clones mount it
    read-only as the lower layer of an OverlayFS, so everything put into
    the base is seen by every clone on it, and nothing a clone does is
    written into it.

    The `clone-army` helper builds the base in a staging directory
    (`/var/lib/puppet-clone-army/.staging-<name>`) and renames it into place
    only when it is complete, so a half-built base is never used. Building a
    Debian 12 base with debootstrap takes about a minute.

    `os`, `release`, `mirror`, `puppet_source`, `server` and `pe_ca_cert` are used
    only when the base is built: changing them later does not rebuild an existing base. To
    rebuild, remove the base (`ensure => absent`, which the helper refuses
    while clones use it) and let it be built again.

    The one provider, `clone_army`, lists every base with one `clone-army
    base list` per Puppet run, so `puppet resource clone_army_base` costs one
    helper call. A helper that fails, answers nothing or nonsense, or speaks
    another protocol version fails the bases with the helper's error kind and
    message; it is never taken to mean "no bases". Autorequires the `File`
    of the helper (`helper`).

    @example The base class clone_army declares on a Debian 12 host
      clone_army_base { 'debian-12':
        ensure => present,
      }

    @example An Ubuntu base from a local mirror
      clone_army_base { 'ubuntu-jammy':
        ensure  => present,
        os      => 'ubuntu',
        release => 'jammy',
        mirror  => 'http://mirror.example.com/ubuntu',
      }

    @example A PE base: the agent installer of the primary server, verified against its CA
      clone_army_base { 'debian-12-pe':
        ensure        => present,
        puppet_source => 'pe',
        server        => 'puppet.example.com',
        pe_ca_cert    => '/etc/puppetlabs/puppet/ssl/certs/ca.pem',
      }

    @example Listing the bases on a host
      puppet resource clone_army_base
  DOC

  ensurable do
    desc <<-DOC
      Whether the base exists. `present` builds it when it is missing;
      `absent` removes it, which the helper refuses (`base-in-use`, naming
      the clones) while any clone is built on it.

      Example: `ensure => absent`
    DOC
    defaultvalues
    defaultto :present
  end

  newparam(:name, namevar: true) do
    desc <<-DOC
      The name of the base: lower-case letters, digits and `-`, starting with
      a letter or digit, at most 64 characters (e.g. `debian-12`). It is the
      directory name under `/var/lib/puppet-clone-army/` and what
      `clone_army_clone`'s `base` refers to. Anything else is refused with a
      message naming the attribute and what is allowed.

      Example: `clone_army_base { 'debian-12': }`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_base_name('name', value, 'debian-12')
    end
  end

  newparam(:os) do
    desc <<-DOC
      The distribution of the base (the helper's list, `clone-army schema`'s
      `os`): `debian` and `ubuntu` are built with debootstrap, the RHEL family
      (`rhel`, `rocky`, `almalinux`, `centos`) with `dnf --installroot`,
      `sles` and `opensuse` with `zypper --root` (the README's "Tested here"
      says which of them are run here). Defaults to the host's own, which the
      helper reads from its `/etc/os-release`. Used only when the base is
      built.

      Example: `os => 'ubuntu'`
    DOC
    # Written out for the reference; the type's spec holds them to the schema.
    newvalues(:debian, :ubuntu, :rhel, :rocky, :almalinux, :centos, :sles, :opensuse)
  end

  newparam(:release) do
    desc <<-DOC
      The release of the base: a codename such as `bookworm` or `noble` for
      Debian and Ubuntu, `8` or `9` for the RHEL family, a SUSE 15 release
      such as `15.6` for SLES and openSUSE (the schema's `base_releases`,
      by `os`). A release the helper would refuse for the given `os` fails
      when the catalog is built. Defaults to the host's own. Used only when
      the base is built.

      Example: `release => 'bookworm'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::BaseRules.validate_release(value)
    end
  end

  newparam(:mirror) do
    desc <<-DOC
      The package mirror debootstrap builds the base from: an `http://`,
      `https://` or `file:/` URL without spaces or control characters (the
      schema's `base_mirror`). Defaults to the mirror in the host's own apt
      sources. Used only when the base is built.

      Example: `mirror => 'http://deb.debian.org/debian'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::BaseRules.validate_mirror(value)
    end
  end

  newparam(:puppet_source) do
    desc <<-DOC
      Where the Puppet agent in the base comes from:

      * `distro`: the distribution's own `puppet-agent` package (the
        helper's default, when not given).
      * `puppet`: Puppet's official repositories (their release package,
        then `puppet-agent`).
      * `openvox`: OpenVox's official repositories (likewise).
      * `pe`: Puppet Enterprise, from the primary server's
        `/packages/current/` (`install.bash`), verifying the server's
        certificate against `pe_ca_cert` (never `curl -k`), with the agent
        service left to start in the clones.

      Used only when the base is built.

      Example: `puppet_source => 'openvox'`
    DOC
    newvalues(:distro, :puppet, :openvox, :pe)
  end

  newparam(:pe_ca_cert) do
    desc <<-DOC
      With `puppet_source => pe`: the absolute path, on the host, of the PE
      CA certificate the helper verifies the primary server against when it
      downloads the installer (e.g. `/etc/puppetlabs/puppet/ssl/certs/ca.pem`,
      the host agent's own copy). Refused with any other `puppet_source`,
      by a message naming both attributes. Used only when the base is built.

      Example: `pe_ca_cert => '/etc/puppetlabs/puppet/ssl/certs/ca.pem'` (with
      `puppet_source => 'pe'` and `server`)
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_absolute_path('pe_ca_cert', value)
    end
  end

  newparam(:server) do
    desc <<-DOC
      With `puppet_source => pe`: the PE primary server (a host name, e.g.
      `puppet.example.com`) whose `/packages/current/install.bash` installs
      the agent (`clone-army base create --puppet-source pe --server
      <server> --pe-ca-cert <path>`). Class clone_army passes its `server`.
      Required with `pe` (but with `ensure => absent`), refused with any
      other `puppet_source`: both are checked when the catalog is built. Used
      only when the base is built.

      Example: `server => 'puppet.example.com'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_hostname('server', value, 'puppet.example.com')
    end
  end

  # `helper` and `master` read the same in every type that has them
  # (spec/unit/puppet_x/clone_army/shared_params_spec.rb): each is written
  # out here, where puppet-strings reads it, and checked by the shared module.
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

  newparam(:master) do
    desc <<-DOC
      Deprecated: the older word for `server`, taken as `server` with a
      warning. Giving both with different values is refused when the
      catalog is built.

      Example: `master => 'puppet.example.com'` (the same as
      `server => 'puppet.example.com'`)
    DOC

    validate do |value|
      PuppetX::CloneArmy::MasterParam.validate(value)
    end
  end

  validate do
    PuppetX::CloneArmy::MasterParam.take(self)
    PuppetX::CloneArmy::BaseRules.validate_release_of(self[:os], self[:release]) if self[:os] && self[:release]
    if self[:pe_ca_cert] && self[:puppet_source] != :pe
      raise ArgumentError,
            "pe_ca_cert is only used with puppet_source => pe (puppet_source is #{self[:puppet_source] || 'not set'})"
    end
    if self[:server] && self[:puppet_source] != :pe
      raise ArgumentError,
            "server is only used with puppet_source => pe (puppet_source is #{self[:puppet_source] || 'not set'})"
    end
    # The helper downloads PE's agent installer from the primary server, so
    # it must know which one; say so when the catalog is built.
    if self[:puppet_source] == :pe && self[:ensure] != :absent && self[:server].nil?
      raise ArgumentError, 'puppet_source => pe needs server: the PE primary server the agent installer is downloaded from'
    end
  end

  autorequire(:file) do
    [self[:helper] || PuppetX::CloneArmy::Helper::DEFAULT_PATH]
  end
end
