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

    The one provider, `clone_army`, lists all clones with one `clone-army
    clone list` per Puppet run, however many there are, so `puppet resource
    clone_army_clone` costs one helper call. A helper that fails, answers
    nothing or nonsense, or speaks another protocol version fails the clones
    with the helper's error kind and message; it is never taken to mean "no
    clones". The properties that changed are applied in `flush` with one
    `clone-army clone configure` carrying only their flags (`--server`,
    `--certname`, `--run-mode`, `--runinterval`, `--splay`,
    `--phase-index`/`--phase-count`, `--phasing`, `--memory-max`,
    `--cpu-quota`, `--tasks-max`, `--facts-file`, `--generated-facts`,
    `--churn-percent`, ...). Creating a clone passes every one that is given;
    recreating it on a new base keeps them.

    Refreshing a clone (a `notify` or `subscribe` that fires) restarts it when
    it is running; a stopped clone stays stopped. A clone that was started
    in the same run is not restarted again.

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

    @example Restarting a clone when the host's resolv.conf changes (a clone copies it when it starts)
      file { '/etc/resolv.conf':
        source => 'puppet:///modules/profile/resolv.conf',
        notify => Clone_army_clone['clone1'],
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
        work directory and mount point. The clones removed in a run are queued
        and go together after all clones are evaluated, with one
        `clone-army clone remove -- NAME...`: the helper queues every stop job
        and waits for them together, removes the files, then reloads systemd
        once (29 clones one by one took 201 s, batched 19.7 s). A
        `clone_army_base` removed in the same run removes the queued clones
        first. When the batch fails, the clones are removed one by one, and
        "Could not remove clone NAME: ..." fails the one that failed.

      The current state is reported as `running`, `stopped` or `absent`, or as
      `incomplete` for a clone whose create or remove was killed half-way (no
      `ensure` is in sync with it: the next run creates it again, which
      finishes it, or removes it).
      Creating a clone needs `base`; a clone created without `server` or
      `certname` gets the same defaults class clone_army uses (see those
      attributes), so `puppet resource clone_army_clone test1 ensure=running
      base=debian-12` makes one. When `ensure` starts or stops an existing
      clone, its other out-of-sync properties (a new `base`, `server`,
      `certname`, ...) are applied first, in the same run. Without `ensure`
      the clone's existence and run state are not managed.

      Example: `ensure => running`
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
      and the directories under `/var/lib/puppet-clone-army/`. Anything else is
      refused with a message naming the attribute and what is allowed.

      Example: `clone_army_clone { 'clone1': }`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_name('name', value, 'clone1')
    end
  end

  newproperty(:base) do
    desc <<-DOC
      The `clone_army_base` the clone boots from: a base name (lower-case
      letters, digits and `-`, at most 64 characters). Needed to create a
      clone. Changing it recreates the clone on the new base: the clone is
      removed, upper layer included, and created again (started again if it
      was running, unless `ensure => stopped`), so anything written inside the
      clone is lost.

      Example: `base => 'debian-12'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_base_name('base', value, 'debian-12')
    end
  end

  newproperty(:server) do
    desc <<-DOC
      The Puppet Server the clone's agent runs against: `server` in the
      `[main]` section of the clone's `puppet.conf` (kept on the host, bound
      read-only into the clone). A host name: labels of letters, digits and
      `-` separated by `.`, at most 253 characters.
      A clone created without it gets the server this host's own agent uses
      (the first host of its `server_list`, else its `server`), as
      `puppet resource` users expect; `apply` run mode needs none. Changing
      it re-points the clone in place (`clone-army clone configure`), without
      rebuilding or restarting anything; a running agent uses the new server
      at its next run.

      Example: `server => 'puppet.example.com'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_hostname('server', value, 'puppet.example.com')
    end
  end

  newproperty(:server_port) do
    desc <<-DOC
      The port of `server`: `serverport` in the `[main]` section of the
      clone's `puppet.conf`, 1 to 65535. Without it the clone's
      `puppet.conf` sets none and its agent uses Puppet's default, 8140; a
      clone created without `server` gets the port of the server this host's
      own agent uses (that of the first entry of its `server_list`, else its
      `serverport`) when that is not 8140. Changing it re-points the clone
      in place (`clone-army clone configure --server-port`), as for `server`.

      Example: `server_port => 8141`
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
      name as hostname). A host name, as for `server`. A clone created without
      it gets `<name>.<certname of this host>`, as class clone_army gives every
      clone, so that clones on many load hosts never collide. Changing it
      reconfigures the clone in place and restarts a running clone
      (batched, as for `run_mode`), so that its hostname changes too; the
      agent uses the new certname (and asks the server for a certificate
      under it) at its next run.

      Example: `certname => 'clone1.loadhost.example.com'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Names.validate_hostname('certname', value, 'clone1.loadhost.example.com')
    end
  end

  newproperty(:run_mode) do
    desc <<-DOC
      How the clone's agent is scheduled (see also the class parameter
      `run_mode`):

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
        `server` is not needed to create the clone.

      In `timer` and `apply` mode the run is the clone's
      `clone-army-agent.service`, `Type=exec` with
      `RuntimeMaxSec=<runinterval>`: a run still going after one interval is
      stopped, and the timer never starts a run while one is active.

      Changed in place; a running clone (not to be stopped) is then
      restarted, because its systemd reads the run units when it boots: after
      all clones are evaluated, every clone to restart is stopped with one
      `clone-army clone stop` and started again in waves over `ramp_up`, with
      the clones created in the run. The same holds for `runinterval`,
      `splay`, `certname` and `apply_source` (the provider's `restart_on`
      list); a new phase, phasing, server, limit or facts alone restart
      nothing. A clone made before run modes existed is reported with no mode
      (`absent`).

      Example: `run_mode => 'timer'`
    DOC
    # Written out for the reference; the type's spec holds them to the schema.
    newvalues(:daemon, :timer, :manual, :apply)
  end

  # Schedule settings the helper forgets in manual mode (it reads them back
  # as null), so they are in sync whatever they are then. Each property is
  # written out below, where puppet-strings reads its text.
  schedule_setting = lambda do |property|
    property.validate do |value|
      PuppetX::CloneArmy::Shape.integer(property.name, value)
    end

    property.munge do |value|
      PuppetX::CloneArmy::Shape.integer(property.name, value)
    end

    property.define_method(:insync?) do |is|
      return true if resource.shape_value(:run_mode) == :manual

      super(is)
    end
  end

  newproperty(:runinterval) do
    desc <<-DOC
      Seconds between two agent runs of the clone, 60 to 604800: the
      daemon's `runinterval`, or the timer's `OnUnitActiveSec=`. Not used,
      and always in sync, in `manual` mode (the helper reads it back as null
      there). A change restarts a running clone (as for `run_mode`).

      Example: `runinterval => 1800`
    DOC
    schedule_setting.call(self)
  end

  newproperty(:splay) do
    desc <<-DOC
      Up to this many seconds, at random, are added to the clone's runs, 0
      to 604800 (0: none). In `timer` mode to every run
      (`RandomizedDelaySec=`); in `daemon` mode once, before the first run
      after the daemon starts (Puppet's `splay`/`splaylimit`). Not used in
      `manual` mode. A change restarts a running clone (as for `run_mode`).

      Example: `splay => 30`
    DOC
    schedule_setting.call(self)
  end

  newproperty(:phase_index) do
    desc <<-DOC
      The clone's place among `phase_count` clones (0 to `phase_count` - 1),
      which `phasing` turns into the offset of its runs in each interval,
      counted from the clone's start, so that a fleet started together sends
      its runs as an even stream rather than a herd. Class clone_army gives
      clone i of N the index i - 1. Given together with `phase_count`
      (either alone is refused); a change of either is passed to the helper
      as the pair. A change reaches a running clone at its next start (it
      restarts nothing). Not used in `manual` mode.

      Example: `phase_index => 2`
    DOC
    schedule_setting.call(self)
  end

  newproperty(:phase_count) do
    desc <<-DOC
      How many clones the fleet has, 1 to 100000 (with `phase_index`; class
      clone_army uses the fleet's size): `phase_index` is below it, and
      `phasing => 'fleet-even'` divides the interval by it. A change (the
      fleet grew or shrank) is written into the clone without restarting
      it: under `fleet-even` a running clone keeps its old offset until its
      next start, under `prefix-even` the offset does not change. Not used
      in `manual` mode.

      Example: `phase_count => 10`
    DOC
    schedule_setting.call(self)
  end

  newproperty(:phasing) do
    desc <<-DOC
      How `phase_index` becomes the offset of the clone's runs in each
      interval T (the helper's rule; `clone-army schema`'s `phasings`; see
      also the class parameter `phasing`):

      * `prefix-even`: `floor(T * vdc(phase_index))`, where vdc is the
        base-2 van der Corput sequence (0, 1/2, 1/4, 3/4, 1/8, 5/8, ...):
        whenever clones 0 to n - 1 run, for any n, their runs are spread
        within a factor of two of evenly, so a fleet started or grown a step
        at a time in index order is evenly loaded at every step, and a
        change of `phase_count` moves no clone's runs. The helper's default
        when a clone is created.
      * `fleet-even`: `floor(phase_index * T / phase_count)`: exactly even
        when all `phase_count` clones run, bunched into the first n/N of the
        interval when only the first n do. A clone made before the rules had
        names reports this one.

      A change reaches a running clone at its next start (it restarts
      nothing). Not used in `manual` mode.

      Example: `phasing => 'prefix-even'`
    DOC
    # Written out for the reference; the type's spec holds them to the schema.
    newvalues(:'prefix-even', :'fleet-even')

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
      `/srv/clone-army-apply` by the clone's `.nspawn` settings on the host
      (`/etc/systemd/nspawn/<clone>.nspawn`). An absolute path of letters,
      digits and `. _ - + @ /` without `..`; the helper checks that it exists
      and holds `manifests/`, and refuses a top-level or system directory
      (every clone can read it), a path through a symlink, and a directory
      that is not root's or that anyone else can write, or under one (whoever
      can write it writes what the clone runs as root); it checks again
      before every start of the clone, which does not start when the check
      fails.
      Only with `run_mode => apply` (refused with another `run_mode`);
      leaving apply mode removes the bind. A new path restarts a running
      clone (as for `run_mode`); edits to the files in it reach the clone at
      its next run. Reported as `absent` when the clone has none.

      Example: `apply_source => '/srv/clone-army-apply'`
    DOC

    validate do |value|
      PuppetX::CloneArmy::Shape.apply_source(value)
    end
  end

  newproperty(:twin) do
    desc <<-DOC
      The real node this clone stands in for: its certname, whose record
      `clone-army twin import` took into
      `/var/lib/puppet-clone-army/.twins/<node>.json` (passed to
      `clone-army clone create|configure --twin-file`). The clone takes three
      things of the node, never its certname: its facts (as external facts
      that win over its own), its environment, and its trusted extensions (as
      extension requests of its certificate). A clone whose `certname` is the
      node's is refused, as is a node whose `os.family` is not the base's.
      `absent`: no twin (a node named `absent` cannot have one); a plain clone
      is reported as `absent`.

      The extensions reach the clone's certificate only when its certname has
      none yet, so a clone made the twin of another node needs a new
      `certname` with it: the helper refuses otherwise. Making a twin a clone
      of no node again creates it anew (its upper layer is lost, as for a new
      `base`). Twins should run with `agent_noop => true`: their catalogs are
      the nodes' own.

      Example: `twin => 'web01.example.com'`
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
      puppet.conf (`[agent]`, and `[user]` for `puppet apply` in apply mode;
      `clone-army clone configure --agent-noop true|false`), so the server
      compiles full catalogs and the agent evaluates them without changing
      the clone. `clone-army report` shows such runs as `would-change` with
      the resources they would change. (Puppet's own `noop` is a
      metaparameter of every resource, hence the name.) Reaches the clone at
      its agent's next run; restarts nothing. A clone listed by an older
      helper, which has no noop, reads back as `false`.

      Example: `agent_noop => true`
    DOC

    newvalues(:true, :false)
  end

  newproperty(:memory_max) do
    desc <<-DOC
      The most memory the clone's unit may use (systemd's `MemoryMax=`, set
      in a drop-in on the host): bytes as an integer, or a string with a
      `K`, `M`, `G` or `T` suffix (base 1024); `'none'` for no limit. The
      helper reads the value back as it was written, so values are compared
      by the bytes they mean: `'1G'` is in sync with `'1024M'` and with
      `1073741824`. Holds from the clone's next start at the latest.

      Example: `memory_max => '512M'`
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
      (systemd's `CPUQuota=`): `'1%'` to `'100000%'`, or the percentage as an
      integer (`50` is `'50%'`); `'none'` for no limit. Holds from the clone's
      next start at the latest.

      Example: `cpu_quota => '50%'`
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

      Example: `tasks_max => 2048`
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
      booleans. Written to `/etc/facter/facts.d/clone_army.json` in the
      clone; `{}` removes them. The agent sees them at its next run. Compared
      as a whole (`3` and `'3'` differ). The provider hands them to the
      helper as `--facts-file PATH`, a file of mode 0600 in a private
      temporary directory that is removed after the call, also when it fails.

      Example: `facts => { 'role' => 'web', 'tier' => 3 }`
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

      Example: `generated_facts => 500`
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
      / 100)`), so that PuppetDB sees fact churn. Not used without generated
      facts, and then always in sync (the helper has nowhere to keep it and
      reads it back as null).

      Example: `churn_percent => 15`
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
      The crypt(3) hash of the clone's root password (`$6$...`, `$y$...`;
      make one with `mkpasswd -m yescrypt` or `openssl passwd -6`), so that
      `machinectl login <name>` works. Without it root has no password and
      only `machinectl shell <name>` gets in. Anything that is not a crypt
      hash is refused with a message that does not show the value.

      Always sensitive: Puppet never shows it, whether it is given as
      `Sensitive` or not (as a parameter it makes no change events, and the
      type marks it sensitive without Puppet's "cannot be automatically
      redacted" warning). The provider hands it to the helper as
      `--root-password-hash-file PATH`, a file of mode 0600 in a private
      temporary directory that is removed after the call, also when the call
      fails, never on its command line.

      A parameter, not a property: used only when the clone is created (or
      recreated on a new base). Changing it does not change an existing
      clone's password.

      Example: `root_password_hash => Sensitive('$y$j9T$...$...')`
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
      checks it): the secure alternative to `*` in `autosign.conf`. One line
      of 1 to 255 bytes without control characters. Always sensitive, like
      `root_password_hash`, and handed to the helper the same way
      (`--challenge-password-file PATH`, a file of mode 0600), never on its
      command line.

      Used only when the clone is created (or recreated on a new base).

      Example: `challenge_password => Sensitive('load-test-2026')`
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
      0 (or less than 5), all are started at once. When the clones of a run
      give different values, the largest is used. Running clones restarted
      in the run for a changed `run_mode`, `runinterval`, `splay`, `certname`
      or `apply_source` are stopped together first and started in the same
      call.

      When that call fails, the clones are started again one at a time, at
      the ramp's pace (one every `ramp_up / N` seconds, with a warning that
      says so), so that the failure lands on the clone that failed: "Could
      not start clone NAME: ..." is logged against it and the run reports a
      failure. The clones that did start are running.

      Example: `ramp_up => 300`
    DOC
    defaultto 0

    validate do |value|
      PuppetX::CloneArmy::Shape.integer(:ramp_up, value, PuppetX::CloneArmy::Schema.range(:ramp_up))
    end

    munge do |value|
      PuppetX::CloneArmy::Shape.integer(:ramp_up, value, PuppetX::CloneArmy::Schema.range(:ramp_up))
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
