# frozen_string_literal: true

require_relative '../../puppet_x/clone_army/helper'
require_relative '../../puppet_x/clone_army/names'
require_relative '../../puppet_x/clone_army/secrets'

Puppet::Type.newtype(:clone_army_clone) do
  @doc = <<-DOC
    @summary A puppet-agent clone: a systemd-nspawn container over an OverlayFS.

    A clone boots the base image named by `base` (the lower layer) with its
    own upper layer at `/var/lib/puppet-clone-army/<name>-overlay`, mounted at
    `/var/lib/machines/<name>` by a systemd mount unit, and runs as the unit
    `puppet-clone-army@<name>.service` (wanted by `puppet-clone-army.target`).
    Inside, the Puppet agent runs against `master` with the certname
    `certname`, which is also the clone's hostname.

    Stopping a clone unmounts its overlay, so its upper layer can then be
    edited safely. `machinectl list`, `machinectl status <name>` and
    `machinectl shell <name>` work on running clones.

    All clones are listed with one call of the `clone-army` helper per Puppet
    run, however many there are.

    Refreshing a clone (a `notify` or `subscribe` that fires) restarts it when
    it is running; a stopped clone stays stopped.

    Autorequires the `clone_army_base` named by `base` (autobefore instead
    when `ensure => absent`, so clones go before their base) and the `File`
    of the helper.

    @example A clone pointed at a Puppet Server, started when created
      clone_army_clone { 'clone1':
        ensure   => present,
        base     => 'debian-12',
        master   => 'puppet.example.com',
        certname => 'clone1.loadhost.example.com',
      }

    @example Stopping one clone from the command line
      puppet resource clone_army_clone clone2 ensure=stopped

    @example Listing all clones
      puppet resource clone_army_clone
  DOC

  newproperty(:ensure) do
    desc <<-DOC
      The state of the clone, as with Puppet's `service` type.

      * `present`: the clone exists. A clone that is created is started once;
        after that its run state is left alone, so a Puppet run on the host
        never stops an experiment on a clone.
      * `running`: the clone exists and is running.
      * `stopped`: the clone exists and is stopped (its overlay unmounted). A
        clone that is created is left stopped.
      * `absent`: the clone is stopped and removed: its units, upper layer,
        work directory and mount point.

      The current state is reported as `running`, `stopped` or `absent`.
      Creating a clone needs `base`, `master` and `certname`.
    DOC

    newvalue(:present, event: :clone_created, invalidate_refreshes: true) do
      provider.create(start: true)
    end

    newvalue(:running, event: :clone_started, invalidate_refreshes: true) do
      if provider.exists?
        @resource.sync_configuration
        provider.start
      else
        provider.create(start: true)
      end
    end

    newvalue(:stopped, event: :clone_stopped) do
      if provider.exists?
        @resource.sync_configuration
        provider.stop
      else
        provider.create(start: false)
      end
    end

    newvalue(:absent, event: :clone_removed) do
      provider.destroy
    end

    def retrieve
      provider.state
    end

    def insync?(is)
      return [:running, :stopped].include?(is) if should == :present

      is == should
    end

    # Says what happened to the clone rather than Puppet's generic
    # "undefined 'ensure' from 'running'" for a removal.
    def change_to_s(current, desired)
      return "removed (was #{current})" if desired == :absent && current != :absent
      return super unless current == :absent && desired != :absent

      desired == :stopped ? 'created (left stopped)' : 'created and started'
    end
  end

  newparam(:name, namevar: true) do
    desc <<-DOC
      The name of the clone: lower-case letters, digits and `-`, starting
      with a letter or digit, at most 64 characters (e.g. `clone1`). It names
      the container (`machinectl`), the unit `puppet-clone-army@<name>.service`
      and the directories under `/var/lib/puppet-clone-army/`.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_name('name', value, 'clone1')
    end
  end

  newproperty(:base) do
    desc <<-DOC
      The `clone_army_base` the clone boots from (e.g. `debian-12`). Needed
      to create a clone. Changing it recreates the clone on the new base: the
      clone is removed, upper layer included, and created again (started
      again if it was running), so anything written inside the clone is lost.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_name('base', value, 'debian-12')
    end
  end

  newproperty(:master) do
    desc <<-DOC
      The Puppet Server the clone's agent runs against: `server` in the
      `[main]` section of the clone's `puppet.conf` (in its upper layer). A
      host name, e.g. `puppet.example.com`. Needed to create a clone.
      Changing it re-points the clone in place, without rebuilding or
      restarting anything; a running agent uses the new server at its next
      run.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_hostname('master', value, 'puppet.example.com')
    end
  end

  newproperty(:certname) do
    desc <<-DOC
      The certname of the clone's agent (`certname` in its `puppet.conf`),
      also its hostname. A host name; class clone_army uses
      `<clone>.<certname of the host>` so that clones on many load hosts
      never collide. Needed to create a clone. Changing it reconfigures the
      clone in place without restarting it: the agent uses the new certname
      (and asks the server for a certificate under it) at its next run, the
      hostname changes at the clone's next start.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_hostname('certname', value, 'clone1.loadhost.example.com')
    end
  end

  newparam(:root_password_hash) do
    desc <<-DOC
      The crypt(3) hash of the clone's root password (e.g. from
      `mkpasswd -m yescrypt` or `openssl passwd -6`), so that
      `machinectl login <name>` works. Without it root has no password and
      only `machinectl shell` gets in. Pass it as `Sensitive`; it is always
      treated as sensitive, never shown in logs or reports, and handed to
      the helper in a file of mode 0600, never on its command line.

      Used only when the clone is created (or recreated on a new base):
      changing it does not change an existing clone's password.
    DOC
    sensitive true

    validate do |value|
      PuppetX::CloneArmy::Secrets.validate_crypt_hash('root_password_hash', value)
    end

    munge do |value|
      PuppetX::CloneArmy::Secrets.unwrap(value)
    end
  end

  newparam(:challenge_password) do
    desc <<-DOC
      A challenge password the clone's agent puts into its certificate
      request (`challengePassword` in `csr_attributes.yaml`), for a Puppet
      Server that signs by policy (`autosign` set to a policy executable that
      checks it): the secure alternative to `*` in `autosign.conf`. Pass it
      as `Sensitive`; it is always treated as sensitive and handed to the
      helper in a file of mode 0600, never on its command line.

      Used only when the clone is created (or recreated on a new base).
    DOC
    sensitive true

    validate do |value|
      PuppetX::CloneArmy::Secrets.validate_secret('challenge_password', value)
    end

    munge do |value|
      PuppetX::CloneArmy::Secrets.unwrap(value)
    end
  end

  newparam(:helper) do
    desc <<-DOC
      The path of the `clone-army` helper the provider runs. Defaults to
      `/usr/local/sbin/clone-army` (where class clone_army installs it), then
      `clone-army` on the PATH. A `File` resource for this path is
      autorequired, so the helper is installed before it is used.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_absolute_path('helper', value)
    end
  end

  autorequire(:file) do
    [self[:helper] || PuppetX::CloneArmy::Helper::DEFAULT_PATH]
  end

  # A clone needs its base first, and must be gone before its base can go.
  autorequire(:clone_army_base) do
    self[:ensure] == :absent ? [] : [self[:base]].compact
  end

  autobefore(:clone_army_base) do
    self[:ensure] == :absent ? [self[:base]].compact : []
  end

  # When `ensure` changes the run state of an existing clone, Puppet syncs no
  # other property of the resource in that run. The run-state change calls
  # this first, so a clone is started with its new base, master or certname
  # (or stopped after being re-pointed) within one run.
  def sync_configuration
    properties.each do |property|
      next if property.name == :ensure || property.should.nil?

      current = property.retrieve
      next if property.safe_insync?(current)

      property.sync
      property.notice(property.change_to_s(current, property.should))
    end
    provider.flush_changes
  end

  # Secrets are parameters, which Puppet only warns about when they arrive
  # as Sensitive ("cannot be automatically redacted"). They are never shown
  # (parameters make no change events), so mark them sensitive quietly.
  def set_sensitive_parameters(sensitive_parameters) # rubocop:disable Naming/AccessorMethodName
    secrets = sensitive_parameters & PuppetX::CloneArmy::Secrets::PARAMETERS
    secrets.each { |name| parameter(name)&.sensitive = true }
    super(sensitive_parameters - secrets)
  end

  # A notify restarts a running clone, as it does a running service.
  def refresh
    if provider.state == :running
      provider.restart
    else
      debug('Skipping restart: the clone is not running')
    end
  end
end
