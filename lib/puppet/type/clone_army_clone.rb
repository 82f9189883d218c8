# frozen_string_literal: true

require_relative '../../puppet_x/clone_army/helper'
require_relative '../../puppet_x/clone_army/helper_param'
require_relative '../../puppet_x/clone_army/master_param'
require_relative '../../puppet_x/clone_army/names'
require_relative '../../puppet_x/clone_army/schema'
require_relative '../../puppet_x/clone_army/secrets'
require_relative '../../puppet_x/clone_army/shape'
require_relative '../../puppet_x/clone_army/twins'

Puppet::Type.newtype(:clone_army_clone) do
  @doc = <<-DOC
    @summary A puppet-agent clone: a systemd-nspawn container over an OverlayFS.

    A clone boots the base image named by `base` (the lower layer) with its
    own upper layer at `/var/lib/puppet-clone-army/<name>-overlay`, mounted at
    `/var/lib/machines/<name>` by a systemd mount unit, and runs as the unit
    `puppet-clone-army@<name>.service` (wanted by `puppet-clone-army.target`).
    Inside, the Puppet agent runs against `server` with the certname
    `certname`, which is also the clone's hostname.

    Stopping a clone unmounts its overlay, so its upper layer can then be
    edited safely. `machinectl list`, `machinectl status <name>` and
    `machinectl shell <name>` work on running clones.

    All clones are listed with one call of the `clone-army` helper per Puppet
    run, however many there are.

    Refreshing a clone (a `notify` or `subscribe` that fires) restarts it when
    it is running; a stopped clone stays stopped.

    Autorequires the `clone_army_base` named by `base` (autobefore instead
    when `ensure => absent`, so clones go before their base), the `File`
    of the helper, and for a twin, the `clone_army_twins` that imports its
    node.

    @example A clone pointed at a Puppet Server, started when created
      clone_army_clone { 'clone1':
        ensure   => present,
        base     => 'debian-12',
        server   => 'puppet.example.com',
        certname => 'clone1.loadhost.example.com',
      }

    @example A clone in timer mode, third of ten phases, with limits and facts
      clone_army_clone { 'clone3':
        ensure          => running,
        base            => 'debian-12',
        server          => 'puppet.example.com',
        certname        => 'clone3.loadhost.example.com',
        run_mode        => 'timer',
        runinterval     => 1800,
        phase_index     => 2,
        phase_count     => 10,
        phasing         => 'prefix-even',
        memory_max      => '512M',
        cpu_quota       => '50%',
        facts           => { 'role' => 'web' },
        generated_facts => 500,
        churn_percent   => 15,
      }

    @example The twin of a real node imported by `clone-army twin import`, in noop
      clone_army_clone { 'clone4':
        ensure     => running,
        base       => 'debian-12',
        server     => 'puppet-test.example.com',
        certname   => 'clone4.web01.loadhost.example.com',
        twin       => 'web01.example.com',
        agent_noop => true,
      }

    @example Making one clone from the command line (server and certname default as in the class)
      puppet resource clone_army_clone test1 ensure=running base=debian-12

    @example Stopping one clone from the command line
      puppet resource clone_army_clone clone2 ensure=stopped

    @example Listing all clones
      puppet resource clone_army_clone
  DOC

  newproperty(:ensure) do
    desc <<-DOC
      The state of the clone, as with Puppet's `service` type.

      * `present`: the clone exists. A clone that is created is started once
        (after all clones of the run are evaluated, in waves over
        `ramp_up`); after that its run state is left alone, so a Puppet run on the host
        never stops an experiment on a clone.
      * `running`: the clone exists and is running.
      * `stopped`: the clone exists and is stopped (its overlay unmounted). A
        clone that is created is left stopped.
      * `absent`: the clone is stopped and removed: its units, upper layer,
        work directory and mount point. The clones removed in a run go
        together after all clones are evaluated, with one
        `clone-army clone remove` (one batch of stops, one daemon-reload).

      The current state is reported as `running`, `stopped` or `absent`, or as
      `incomplete` for a clone whose create or remove was killed half-way (no
      `ensure` is in sync with it: the next run creates it again, which
      finishes it, or removes it).
      Creating a clone needs `base`; a clone created without `server` or
      `certname` gets the same defaults class clone_army uses (see those
      attributes).
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
      return "finished (was incomplete), #{started_or_stopped(desired)}" if current == :incomplete
      return super unless current == :absent && desired != :absent

      desired == :stopped ? 'created (left stopped)' : 'created and started'
    end

    def started_or_stopped(desired)
      desired == :stopped ? 'left stopped' : 'started'
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
      PuppetX::CloneArmy::Names.validate_base_name('base', value, 'debian-12')
    end
  end

  newproperty(:server) do
    desc <<-DOC
      The Puppet Server the clone's agent runs against: `server` in the
      `[main]` section of the clone's `puppet.conf` (kept on the host, bound
      read-only into the clone). A host name, e.g. `puppet.example.com`.
      A clone created without it gets the server this host's own agent uses
      (the first host of its `server_list`, else its `server`), as
      `puppet resource` users expect; `apply` run mode needs none. Changing
      it re-points the clone in place, without rebuilding or restarting
      anything; a running agent uses the new server at its next run.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_hostname('server', value, 'puppet.example.com')
    end
  end

  newproperty(:server_port) do
    desc <<-DOC
      The port of `server`: `serverport` in the `[main]` section of the
      clone's `puppet.conf`, 1 to 65535, e.g. `8141`. Without it the clone's
      `puppet.conf` sets none and its agent uses Puppet's default, 8140; a
      clone created without `server` gets the port of the server this host's
      own agent uses (that of the first entry of its `server_list`, else its
      `serverport`) when that is not 8140. Changing it re-points the clone
      in place, as for `server`.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.integer(:server_port, value, PuppetX::CloneArmy::Schema.range(:server_port))
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.integer(:server_port, value, PuppetX::CloneArmy::Schema.range(:server_port))
    end
  end

  newproperty(:certname) do
    desc <<-DOC
      The certname of the clone's agent (`certname` in its `puppet.conf`),
      also its hostname when it is at most 64 characters long (the kernel
      takes no longer hostname; a clone with a longer certname keeps its
      name as hostname). A host name. A clone created without it gets
      `<name>.<certname of this host>`, as class clone_army gives every
      clone, so that clones on many load hosts never collide. Changing it
      reconfigures the clone in place and restarts a running clone
      (batched, as for `run_mode`), so that its hostname changes too; the
      agent uses the new certname (and asks the server for a certificate
      under it) at its next run.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_hostname('certname', value, 'clone1.loadhost.example.com')
    end
  end

  newproperty(:run_mode) do
    desc <<-DOC
      How the clone's agent is scheduled:

      * `daemon`: the agent service runs as a daemon, every `runinterval`
        seconds.
      * `timer`: a systemd timer in the clone starts a one-shot agent run
        every `runinterval` seconds, so an idle clone holds no Ruby process.
      * `manual`: no scheduled runs; runs only on demand (`clone-army exec`,
        the `clone_army::exec` task).
      * `apply`: masterless. A systemd timer in the clone runs
        `puppet apply --reports=none` of `apply_source` (bound read-only into
        the clone at `/srv/clone-army-apply`: its `manifests/` with its
        `modules/` as the modulepath) every `runinterval` seconds, phased as
        in `timer` mode. No compile server is asked and no report is sent;
        `server` is not needed.

      Changed in place; a running clone (not to be stopped) is then
      restarted, because its systemd reads the run units when it boots: after
      all clones are evaluated, every clone to restart is stopped with one
      `clone-army clone stop` and started again in waves over `ramp_up`. The
      same holds for `runinterval`, `splay` and `certname` (the provider's
      `restart_on` list); a new phase, phasing, limit or facts alone restart nothing.
      A clone made before run modes existed is reported with no mode
      (`absent`).
    DOC
    newvalues(*PuppetX::CloneArmy::Shape::RUN_MODES)
  end

  # Schedule settings the helper forgets in manual mode (it reads them back
  # as null), so they are in sync whatever they are then.
  schedule_property = lambda do |name, doc|
    newproperty(name) do
      desc doc

      validate do |value|
        PuppetX::CloneArmy::Shape.integer(name, value)
      end

      munge do |value|
        PuppetX::CloneArmy::Shape.integer(name, value)
      end

      define_method(:insync?) do |is|
        return true if resource.shape_value(:run_mode) == :manual

        super(is)
      end
    end
  end

  schedule_property.call(:runinterval, <<-DOC)
    Seconds between two agent runs of the clone (`runinterval` of the daemon,
    or the timer's period), 60 to 604800. Not used in `manual` mode. A
    change restarts a running clone (as for `run_mode`).
  DOC

  schedule_property.call(:splay, <<-DOC)
    Up to this many seconds, at random, are added to the clone's runs, 0
    to 604800 (0: none). In `timer` mode to every run
    (`RandomizedDelaySec=`); in `daemon` mode once, before the first run
    after the daemon starts (Puppet's `splay`/`splaylimit`). Not used in
    `manual` mode. A change restarts a running clone (as for `run_mode`).
  DOC

  schedule_property.call(:phase_index, <<-DOC)
    The clone's place among `phase_count` clones (0 to `phase_count` - 1),
    which `phasing` turns into the offset of its runs in each interval,
    counted from the clone's start, so that a fleet started together sends
    its runs as an even stream rather than a herd. Class clone_army gives
    clone i of N the index i - 1. A change reaches a running clone at its
    next start (it restarts nothing). Not used in `manual` mode.
  DOC

  schedule_property.call(:phase_count, <<-DOC)
    How many clones the fleet has, 1 to 100000 (with `phase_index`; class
    clone_army uses the fleet's size): `phase_index` is below it, and
    `phasing => 'fleet-even'` divides the interval by it. Not used in
    `manual` mode.
  DOC

  newproperty(:phasing) do
    desc <<-DOC
      How `phase_index` becomes the offset of the clone's runs in each
      interval T (the helper's rule; `clone-army schema`'s `phasings`):

      * `prefix-even`: `floor(T * vdc(phase_index))`, where vdc is the
        base-2 van der Corput sequence (0, 1/2, 1/4, 3/4, 1/8, 5/8, ...):
        whenever clones 0 to n - 1 run, for any n, their runs are spread
        within a factor of two of evenly, so a fleet started or grown a step
        at a time in index order is evenly loaded at every step, and a
        change of `phase_count` moves no clone's runs. The helper's default.
      * `fleet-even`: `floor(phase_index * T / phase_count)`: exactly even
        when all `phase_count` clones run, bunched into the first n/N of the
        interval when only the first n do. A clone made before the rules had
        names reports this one.

      A change reaches a running clone at its next start (it restarts
      nothing). Not used in `manual` mode.
    DOC
    newvalues(*PuppetX::CloneArmy::Shape::PHASINGS)

    def insync?(is)
      return true if resource.shape_value(:run_mode) == :manual

      super(is)
    end
  end

  newproperty(:apply_source) do
    desc <<-DOC
      In `apply` run mode: the host directory the clone applies, with
      `manifests/` (every `.pp` file in it is applied) and `modules/` (the
      modulepath). It is bound read-only into the clone at
      `/srv/clone-army-apply` (by the clone's `.nspawn` settings on the host,
      `/etc/systemd/nspawn/<clone>.nspawn`), from the clone's next start. An
      absolute path of letters, digits and `. _ - + @ /`; the helper checks
      that it exists and holds `manifests/`, and refuses a top-level or system
      directory (every clone can read it), a path through a symlink, and a
      directory that is not root's or that anyone else can write, or under
      one (whoever can write it writes what the clone runs as root); it checks
      again before every start of the clone, which does not start when the
      check fails.
      Only with `run_mode => apply`; leaving apply mode removes the bind.
      Edits to the files in it reach the clones at their next run.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.apply_source(value)
    end
  end

  newproperty(:twin) do
    desc <<-DOC
      The real node this clone stands in for: its certname, whose record
      `clone-army twin import` took into
      `/var/lib/puppet-clone-army/.twins/<node>.json`. The clone gets the
      node's facts (as external facts that win over its own), its environment
      and its trusted extensions (as extension requests of its certificate),
      never its certname: a clone whose `certname` is the node's is refused, as
      is a node whose `os.family` is not the base's. `absent`: no twin (a node
      named `absent` cannot have one).

      The extensions reach the clone's certificate only when its certname has
      none yet, so a clone made the twin of another node needs a new
      `certname` with it: the helper refuses otherwise. Making a twin a clone
      of no node again creates it anew (its upper layer is lost, as for a new
      `base`). Twins should run with `agent_noop => true`: their catalogs are
      the nodes' own.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Twins.validate_node('twin', value) unless value.to_s == 'absent'
    end

    munge do |value|
      value.to_s == 'absent' ? :absent : value
    end
  end

  newproperty(:agent_noop) do
    desc <<-DOC
      Whether the clone's agent runs in noop: `noop = true` in its
      puppet.conf (`[agent]`, and `[user]` for `puppet apply` in apply mode),
      so the server compiles full catalogs and the agent evaluates them
      without changing the clone. `clone-army report` shows such runs as
      `would-change` with the resources they would change. (Puppet's own
      `noop` is a metaparameter of every resource, hence the name.) Reaches
      the clone at its agent's next run; restarts nothing.
    DOC

    newvalues(:true, :false)
  end

  newproperty(:memory_max) do
    desc <<-DOC
      The most memory the clone's unit may use (systemd's `MemoryMax=`, set
      in a drop-in on the host): bytes as an integer, or a string with a
      `K`, `M`, `G` or `T` suffix (base 1024), e.g. `'512M'`; `'none'`
      for no limit. Compared by the bytes it means, so `'1G'` is in sync
      with `'1024M'`. Holds from the clone's next start at the latest.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.memory_max(value)
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.memory_max(value)
    end

    def insync?(is)
      PuppetX::CloneArmy::Shape.memory_bytes(is) == PuppetX::CloneArmy::Shape.memory_bytes(should)
    end
  end

  newproperty(:cpu_quota) do
    desc <<-DOC
      The CPU time the clone's unit may use, in percent of one CPU
      (systemd's `CPUQuota=`): `'50%'` (or the integer 50) to `'100000%'`;
      `'none'` for no limit. Holds from the clone's next start at the latest.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.cpu_quota(value)
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.cpu_quota(value)
    end

    def insync?(is)
      PuppetX::CloneArmy::Shape.cpu_percent(is) == PuppetX::CloneArmy::Shape.cpu_percent(should)
    end
  end

  newproperty(:tasks_max) do
    desc <<-DOC
      The most tasks (processes and threads) the clone's unit may run
      (systemd's `TasksMax=`), 1 to 4194304; `'none'` for the unit
      template's own `TasksMax=16384`.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.tasks_max(value)
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.tasks_max(value)
    end
  end

  newproperty(:facts) do
    desc <<-DOC
      External facts of the clone, a Hash of fact names (`a-z`, `0-9`, `_`;
      1 to 128 characters) to strings (at most 4096 characters), numbers or
      booleans, e.g. `{ 'role' => 'web', 'tier' => 3 }`. Written to
      `/etc/facter/facts.d/clone_army.json` in the clone; `{}` removes them.
      The agent sees them at its next run.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.facts('facts', value)
    end

    def insync?(is)
      is.is_a?(Hash) && is == should
    end
  end

  newproperty(:generated_facts) do
    desc <<-DOC
      How many generated facts (`clone_army_fact_0001` ...) the clone's agent
      sends, 0 to 9999 (0: none), like Puppet's clamps load test: a fact
      script in the clone prints them, the share `churn_percent` with new
      values on every run.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.integer(:generated_facts, value)
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.integer(:generated_facts, value)
    end
  end

  newproperty(:churn_percent) do
    desc <<-DOC
      The share of the generated facts, in percent (0 to 100), whose values
      change on every run (the first `ceil(generated_facts * churn_percent
      / 100)`), so that PuppetDB sees fact churn. Not used without
      generated facts.
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.integer(:churn_percent, value)
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.integer(:churn_percent, value)
    end

    # Without generated facts there is no script to hold it: the helper
    # reads it back as null.
    def insync?(is)
      return true if resource.shape_value(:generated_facts).to_i.zero?

      super(is)
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
      helper in a file of mode 0600, never on its command line. One line of
      1 to 255 bytes without control characters.

      Used only when the clone is created (or recreated on a new base).
    DOC
    sensitive true

    validate do |value|
      PuppetX::CloneArmy::Secrets.validate_challenge_password('challenge_password', value)
    end

    munge do |value|
      PuppetX::CloneArmy::Secrets.unwrap(value)
    end
  end

  newparam(:ramp_up) do
    desc <<-DOC
      Seconds over which the clones created in one Puppet run are started
      (0 to 86400; default 0). They are not started one by one as each is
      created: after all clones are evaluated, the provider starts them with
      one `clone-army clone start --ramp-up N`, and the helper starts them in
      waves of `ceil(N / max(1, ramp_up / 5))` clones about every 5
      seconds, so a large fleet does not hit the server as one herd. With
      0, all are started at once. When the
      clones of a run give different values, the largest is used. A clone
      that then fails to start is reported as failed in the run.
    DOC
    defaultto 0

    validate do |value|
      PuppetX::CloneArmy::Shape.integer(:ramp_up, value, PuppetX::CloneArmy::Schema.range(:ramp_up))
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.integer(:ramp_up, value, PuppetX::CloneArmy::Schema.range(:ramp_up))
    end
  end

  PuppetX::CloneArmy::HelperParam.define(self)
  PuppetX::CloneArmy::MasterParam.define(self)

  validate do
    PuppetX::CloneArmy::MasterParam.take(self)
    index = self[:phase_index]
    count = self[:phase_count]
    raise ArgumentError, 'phase_index and phase_count go together: give both or neither' if index.nil? != count.nil?
    raise ArgumentError, "phase_index must be below phase_count (0 to #{count - 1}); got #{index}" if index && index >= count
    if self[:apply_source] && self[:run_mode] && self[:run_mode] != :apply
      raise ArgumentError, "apply_source is only used with run_mode => apply; run_mode is #{self[:run_mode]}"
    end
  end

  autorequire(:file) do
    [self[:helper] || PuppetX::CloneArmy::Helper::DEFAULT_PATH]
  end

  # A clone needs its base first, and must be gone before its base can go.
  autorequire(:clone_army_base) do
    self[:ensure] == :absent ? [] : [self[:base]].compact
  end

  # A twin's node is imported before the twin is made of it.
  autorequire(:clone_army_twins) do
    twin = self[:twin]
    next [] if twin.nil? || twin == :absent || catalog.nil?

    catalog.resources.select { |resource| resource.type == :clone_army_twins }.map(&:title)
  end

  autobefore(:clone_army_base) do
    self[:ensure] == :absent ? [self[:base]].compact : []
  end

  # The value a shape property is to have: the one asked for, else the
  # clone's current one.
  def shape_value(name)
    wanted = self[name]
    return wanted unless wanted.nil?

    provider.respond_to?(name) ? provider.public_send(name) : nil
  end

  # When `ensure` changes the run state of an existing clone, Puppet syncs no
  # other property of the resource in that run. The run-state change calls
  # this first, so a clone is started with its new base, server or certname
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
