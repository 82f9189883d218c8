# @summary Turns this host into a fleet of puppet-agent clones that put load on a Puppet Server.
#
# Each clone is a `systemd-nspawn` container booted from a shared base image
# (`/var/lib/puppet-clone-army/<base>`) through an OverlayFS mount at
# `/var/lib/machines/<clone>`, with its own upper layer at
# `/var/lib/puppet-clone-army/<clone>-overlay`, run by the unit
# `puppet-clone-army@<clone>.service`. All clones hang off
# `puppet-clone-army.target`.
#
# The class installs the packages the helper runs on the host
# (`manage_packages`), then the `clone-army` helper (and, through it, its man
# page and bash, zsh and fish completions under `/usr/local`: `clone-army host
# docs`); on a RHEL-family host with SELinux enforcing (`os.family` is
# `RedHat` and `os.selinux.enforced` is true) it declares
# `clone_army::selinux` between the helper and the fleet (untested here);
# then it declares one `clone_army_base` and the clones `clone1` ..
# `clone<num_clones>` as `clone_army_clone` resources. Each clone's certname
# (and hostname) is `<clone>.<certname of this host>`, so one class on many
# load hosts gives unique certnames.
#
# @example Classified through a Puppet Server (the clones use the server this host's agent uses, as many as the host holds)
#   include clone_army
#
# @example The same, sized: ten clones to start with
#   class { 'clone_army':
#     num_clones => 10,
#   }
#
# @example With Bolt or `puppet apply` (no Puppet Server facts: `server` is required)
#   class { 'clone_army':
#     server     => 'puppet.example.com',
#     num_clones => 20,
#   }
#
# @example 500 timer-mode clones checking in every 30 minutes, phased, started over 5 minutes
#   class { 'clone_army':
#     server      => 'puppet.example.com',
#     num_clones  => 500,
#     run_mode    => 'timer',
#     runinterval => 1800,
#     splay       => 30,
#     ramp_up     => 300,
#     memory_max  => '256M',
#   }
#
# @example Facts like Puppet's clamps: 500 generated facts, 15 % of them changing every run
#   class { 'clone_army':
#     server          => 'puppet.example.com',
#     fleet_facts     => { 'role' => 'loadtest', 'datacenter' => 'lab' },
#     clone_facts     => { 'clone1' => { 'role' => 'canary' } },
#     generated_facts => 500,
#     churn_percent   => 15,
#   }
#
# @example Masterless clones: each applies a manifest on its own, no server asked
#   class { 'clone_army':
#     num_clones   => 50,
#     run_mode     => 'apply',
#     apply_source => '/srv/clone-army-apply', # manifests/site.pp and modules/
#     runinterval  => 600,
#   }
#
# @example Keep the whole fleet stopped, e.g. while editing the base image
#   class { 'clone_army':
#     server       => 'puppet.example.com',
#     clone_ensure => 'stopped',
#   }
#
# @example Deployed from git (r10k, Code Manager): the helper of the release, fetched and verified
#   class { 'clone_army':
#     server          => 'puppet.example.com',
#     helper_source   => 'https://artifacts.example.com/clone-army-0.4.0-x86_64-linux',
#     helper_checksum => '<the 64 hex digits of clone-army-0.4.0-x86_64-linux.sha256>',
#   }
#
# @example A fleet of twins, recorded by role
#   class { 'clone_army':
#     server          => 'puppet.example.com',
#     twins           => { 'facts_dir' => '/srv/estate-facts', 'exports' => 'isolated', 'assign' => 'mix' },
#     agent_noop      => true,
#     record          => true,
#     record_group_by => 'pp_role',
#   }
#
# @param server
#   The Puppet Server the clones run their agents against (`server` in each
#   clone's `puppet.conf`). When undef and the catalog comes from a Puppet
#   Server: the name this load host's own agent reaches its server by (the
#   `clone_army_agent_server` fact: the first host of its `server_list`, else
#   its `server` setting), which is known to work from this host, where the
#   server's fqdn may not be in its certificate; without that fact, the
#   server that compiled the catalog (`$server_facts['servername']`, its
#   fqdn). With `puppet apply` or `bolt apply` there is no such server, so
#   the parameter must be given, and the catalog fails with a message saying
#   so (except with `run_mode => 'apply'`, whose clones ask no server, unless
#   `puppet_source` is `pe`: a PE base is built from the primary server).
#   Changing it re-points every existing clone without rebuilding anything.
#   With several compilers behind a load balancer, give the load balancer's
#   name here. The load host must resolve the name and the server's
#   certificate must hold it.
#
#   Example: `server => 'puppet.example.com'`
#
# @param server_port
#   The port of `server`, 1 to 65535 (`serverport` in each clone's
#   `puppet.conf`; the recorder asks the server there too). When undef and
#   the clones' server is the one this host's own agent uses (the
#   `clone_army_agent_server` fact), the port that agent reaches it on (the
#   `clone_army_agent_server_port` fact: the port of the first entry of its
#   `server_list`, else its `serverport`, when that is not 8140). Otherwise
#   the clones are given no port and use Puppet's default, 8140, and a clone
#   that has a port keeps it (give 8140 to go back). Changing it re-points
#   every existing clone in place, as for `server`. Given in
#   `run_mode => 'apply'` without `server`, it fails the catalog. A `pe`
#   base still fetches its agent installer from port 8140.
#
#   Example: `server_port => 8141`
#
# @param master
#   Deprecated: the older word for `server`, taken as `server` with a
#   warning. Giving both with different values fails the catalog.
#
#   Example: `master => 'puppet.example.com'` (the same as
#   `server => 'puppet.example.com'`)
#
# @param num_clones
#   How many clones (`clone1` .. `cloneN`) to run. 0 is a valid count (a
#   fleet of none). When undef, it is this host's capacity for clones running
#   the agent in `run_mode` at `runinterval`: the smaller of the memory bound
#   and the CPU bound, as the function `clone_army::fleet_capacity` computes
#   them (the `clone_army` fact's formula too) from
#   `$facts['memory']['system']['total_bytes']` and
#   `$facts['processors']['count']` (one core when that fact is missing):
#
#   ```
#   memory   = max(0, floor((total_bytes - 2 GiB) / cost))    # cost: 100 MiB daemon, 20 MiB timer, apply and manual
#   cpu      = floor(cpu_share_percent / 100 * cores * runinterval / cpu_seconds_per_run)   # none for manual
#   capacity = min(memory, cpu)
#   ```
#
#   2 GiB are left to the OS and the host's own agent. 100 MiB is what one
#   daemon-mode clone is given (measured: the idle agent daemon with its
#   booted clone, about 68 MB PSS, plus an agent run's peak of about
#   100 MB); 20 MiB what one timer-, apply- or manual-mode clone is given
#   (measured: about 10 MB PSS idle, with no Ruby process between runs, plus
#   a tenth of a ~100 MB run peak, since phased runs overlap about 10 %).
#   The CPU bound keeps one interval's runs (one per clone) within
#   `cpu_share_percent` of the cores at `cpu_seconds_per_run` each; `manual`
#   clones run only when asked and have no CPU bound. A 2-core, 24 GiB host
#   gets 225 daemon-mode clones (memory) or 1080 timer-mode clones at 1800 s
#   (CPU; memory holds 1126), and 360 timer-mode clones at 600 s; a host with
#   2 GiB or less gets none.
#
#   A count beyond the capacity fails the catalog, naming the capacity, its
#   bound and how it was reckoned, the other bound, and `force_num_clones`,
#   unless `force_num_clones` is true:
#
#   ```
#   clone_army: num_clones => 400 is more than this host holds: its capacity is 360 clones,
#   bound by cpu (one run every 600 s a clone at 2.5 CPU-s a run within 75 % of 2 cores;
#   the memory bound is 1126). Lower num_clones, or set force_num_clones => true to run 400 clones anyway.
#   ```
#
#   **On a Puppet Server.** Left undef on a host that is a Puppet Server
#   itself (it has PE's `pe_server_version` fact, or the clones' server is
#   its certname or fqdn), the catalog fails instead: a fleet sized to the
#   whole host would take the memory and CPU the server runs on. A
#   `num_clones` given is taken there as anywhere.
#
#   **Shrinking.** Lowering the count removes the surplus clones completely:
#   every clone named `clone<N>` with N > num_clones that the `clone_army`
#   fact lists is declared `ensure => absent` (stopped, its overlay
#   unmounted, its units, upper layer and work directory removed), all of
#   them with one `clone-army clone remove` after the run's clones are
#   evaluated. Clones with other names (`test1`, `clone01`, ... made by
#   hand, e.g. `puppet resource clone_army_clone test1 ...`) are left alone.
#   When the fact could not list the clones (its `error` is set), nothing is
#   removed in that run and the compiler logs a warning. Growing adds
#   `clone<N+1>` .. and restarts none of the existing clones.
#
#   Example: `num_clones => 20`
#
# @param force_num_clones
#   Run `num_clones` clones even when that is more than the host's capacity
#   (see `num_clones`). Clones that do not fit in memory make the host swap
#   or the kernel's OOM killer end agent runs, which distorts the load; runs
#   that do not fit in the CPU queue behind each other, so their times
#   measure the load host instead of the server.
#
#   Example: `force_num_clones => true` (with `num_clones => 300`)
#
# @param cpu_share_percent
#   The share of all the host's cores, in percent (1-100), that one interval
#   of the fleet's agent runs may take in the CPU bound of the capacity (see
#   `num_clones`). Undef: 75 (the helper's default, `clone-army schema`'s
#   `ranges.cpu_share_percent`), leaving the rest to the clones' systemd, the
#   nspawn supervisors and the host's own work, so that run times measure the
#   server and not a saturated load host.
#
#   Example: `cpu_share_percent => 50` (a 2-core host at 1800 s: 720 timer
#   clones)
#
# @param cpu_seconds_per_run
#   CPU-seconds one agent run takes in a clone, for the CPU bound of the
#   capacity (see `num_clones`). Undef: 2.5 (the helper's
#   `capacity.cpu_seconds_per_run`), what `make bench` measured for the
#   module's own workload (median 2.3-2.4 CPU-s), rounded up. A role with
#   hundreds of resources costs more: take the bench's "CPU per agent run in
#   a clone" measured with your catalog.
#
#   Example: `cpu_seconds_per_run => 6.0` (a 2-core host at 1800 s: 450
#   timer clones)
#
# @param clone_ensure
#   The state every clone is kept in: `present` (exists; a new clone is
#   started once, after that its run state is left alone so a host agent run
#   never stops an experiment), `running` or `stopped` (a new clone is
#   created stopped).
#
#   Example: `clone_ensure => 'running'`
#
# @param base
#   The name of the base image the clones boot from. Defaults to the host's
#   OS name and major release, lower-cased, with anything outside
#   `[a-z0-9-]` turned into `-`: `debian-12`, `ubuntu-22-04`. The helper
#   builds it with the host's OS and release. Changing it recreates every
#   clone on the new base (each clone is removed, upper layer included, and
#   created again), so anything written inside the clones is lost.
#
#   Example: `base => 'bookworm-lab'`
#
# @param puppet_source
#   Where the Puppet agent in the base comes from (the base's
#   `puppet_source`): `distro` (the distribution's `puppet-agent` package),
#   `puppet` or `openvox` (their official repositories) or `pe` (Puppet
#   Enterprise, from the primary server's `/packages/current/`, verified
#   against `pe_ca_cert`). When undef: `pe` when the server is PE (the
#   catalog was compiled by a PE server, so `$server_facts['pe_serverversion']`
#   is set, or the host has PE's `pe_server_version` fact), else `distro` on
#   Debian and Ubuntu and `openvox` elsewhere (only Debian and Ubuntu ship
#   an agent package of their own; the helper refuses `distro` on the
#   others). Under `bolt apply` or `puppet apply` on a plain agent there are
#   no server facts, so give `pe` explicitly there.
#
#   Used only when the base is built: changing it does not rebuild an
#   existing base. To rebuild, give the class a new `base` name (the clones
#   are recreated on it) and remove the old base with
#   `puppet resource clone_army_base <old> ensure=absent`.
#
#   Example: `puppet_source => 'openvox'`
#
# @param pe_ca_cert
#   With `puppet_source => 'pe'`: the host's copy of the PE CA certificate,
#   which the helper verifies the primary server against when it downloads
#   the agent installer (it never skips verification). Defaults to the host
#   agent's own copy, `/etc/puppetlabs/puppet/ssl/certs/ca.pem`. Given with
#   another `puppet_source`, it fails the catalog.
#
#   Example: `pe_ca_cert => '/etc/puppetlabs/puppet/ssl/certs/ca.pem'`
#
# @param root_password_hash
#   The crypt(3) hash of the clones' root password (a `Clone_army::Crypt_hash`:
#   `mkpasswd -m yescrypt`, `openssl passwd -6`), so that
#   `machinectl login <clone>` works. Without it root has no password in the
#   clones (the base's is locked) and only `machinectl shell <clone>` gets
#   in. A value that is not a crypt hash fails the catalog with a message
#   that does not show it.
#
#   `Sensitive` all the way: never shown in logs, reports or diffs (the
#   `clone_army_clone` attribute is always sensitive), and handed to the
#   helper in a file of mode 0600 in a private temporary directory that is
#   removed after the call, never on a command line. Set when a clone is
#   created (or recreated on a new base): changing it does not change the
#   password of existing clones; remove them (lower `num_clones`, or
#   `puppet resource clone_army_clone cloneN ensure=absent`) to have them
#   created again with it. In Hiera, encrypt it with hiera-eyaml and convert
#   it with `lookup_options: { clone_army::root_password_hash: { convert_to:
#   Sensitive } }`.
#
#   Example: `root_password_hash => Sensitive('$y$j9T$...$...')`
#
# @param challenge_password
#   A challenge password every clone puts into its certificate request
#   (`challengePassword` under `custom_attributes` in the clone's
#   `csr_attributes.yaml`), for a Puppet Server that signs by policy:
#   `autosign` in the server's `puppet.conf` pointing at an executable that
#   reads the CSR and checks the password. This is the secure alternative to
#   `*` in `autosign.conf`, which signs anything that asks. One line of 1 to
#   255 characters (the helper counts bytes: at most 255, no control
#   characters). `Sensitive` and handed to the helper in a file, like
#   `root_password_hash`, and set when a clone is created.
#
#   Example: `challenge_password => Sensitive('load-test-2026')`
#
# @param run_mode
#   How each clone's agent is scheduled:
#
#   * `daemon`: the agent service, a run every `runinterval` seconds (as
#     `sharpie-clone_army` did).
#   * `timer`: a systemd timer in the clone starts one-shot agent runs
#     (`puppet agent --onetime --no-daemonize`), so an idle clone holds no
#     Ruby process and the host holds about four times as many clones.
#   * `manual`: no scheduled runs; run them on demand with `clone-army exec`
#     or the `clone_army::exec` task.
#   * `apply`: masterless. The same phased timer as `timer` runs
#     `puppet apply --reports=none --modulepath=/srv/clone-army-apply/modules
#     /srv/clone-army-apply/manifests` in each clone, on the host directory
#     `apply_source` bound there read-only. No server is asked and no report
#     is sent or stored (the run summary is still written, so `clone-army
#     report` sees the runs): load on the agents themselves (facter, catalog
#     application) without a compile server. The clones reach PuppetDB only
#     if the applied code or their puppet.conf sets that up; the module does
#     not. `server` may be undef.
#
#   It also picks the capacity `num_clones` defaults to and is checked
#   against (the daemon cost of memory, or the timer cost for `timer`,
#   `manual` and `apply`; no CPU bound for `manual`). A change restarts the
#   running clones in the same run (their systemd reads the run units when
#   it boots): after all clones are evaluated, one `clone-army clone stop` of
#   all of them, then starts in waves over `ramp_up`. So does a change of
#   `runinterval`, `splay` or `apply_source`; a change of `num_clones` (every
#   clone's phase) restarts nothing.
#
#   Example: `run_mode => 'timer'`
#
# @param apply_source
#   With `run_mode => 'apply'` (required there, refused otherwise): a
#   directory on this host with `manifests/` (every `.pp` file in it is
#   applied) and `modules/` (the modulepath), bound read-only into every
#   clone at `/srv/clone-army-apply` by its `.nspawn` settings
#   (`/etc/systemd/nspawn/<clone>.nspawn`). The helper checks that it exists
#   and holds `manifests/`, and refuses the root, a top-level directory and,
#   symlinks resolved, system trees: anything in `/etc` (but
#   `/etc/puppetlabs/code` and `/etc/puppet/code`), `/root`, `/boot`,
#   `/proc`, `/sys`, `/dev`, `/run`, `/var/lib`, `/var/log`, `/var/cache` or
#   `/var/spool`, since every clone can read it. Whoever can write it writes
#   what every clone runs as root, so it and every directory above it must
#   be root's and writable by no one else (not under a user's home, not in
#   `/tmp`), and the path must be the directory itself, not a symlink to it;
#   the helper checks this again before every start of a clone, which does
#   not start while the check fails. Put `clone_army::workload` in it (with
#   this module copied to `modules/clone_army`) for catalogs that are not
#   empty. Changes to its files reach the clones at their next run; a new
#   path restarts the running clones, as for `run_mode`.
#
#   Example: `apply_source => '/srv/clone-army-apply'`
#
# @param agent_noop
#   Run every clone's agent in noop (`noop = true` in its puppet.conf:
#   `[agent]`, and `[user]` for `puppet apply` in apply mode): the server
#   compiles full catalogs and PuppetDB stores them, the agents evaluate
#   them, and nothing in the clones changes, so a fleet classified with real
#   roles loads the stack as production agents would. `clone-army report`
#   shows such runs as `would-change` with the number of resources they
#   would change (Puppet itself calls them `unchanged`). (Puppet's `noop` is
#   a metaparameter of every resource, hence the name.) Reaches the clones
#   at their next run; restarts nothing. Twins (see `twins`) require it
#   unless waived.
#
#   Example: `agent_noop => true`
#
# @param twins
#   Make the clones twins of real nodes, so that the server compiles the
#   estate's own catalogs: each clone takes one node's facts (as external
#   facts that win over its own), its trusted extensions (`pp_role`, ...,
#   as extension requests of its certificate) and its environment, never
#   its certname. The nodes come from a directory of fact sets or a PuppetDB
#   query (see `Clone_army::Twins` for every key), imported on this host by
#   `clone_army_twins` (`clone-army twin import`).
#
#   - **When the twins appear.** The clones become twins at the run after the
#     one that imports the nodes (the `clone_army` fact lists the imported
#     nodes); until then the fleet is left as it is. A new source is
#     imported again.
#   - **Which nodes get a twin.** Only nodes of the base's OS family are
#     dealt to clones (their catalogs need its providers); the others are
#     named in a warning, and a set with none of the family fails the
#     catalog.
#   - **Certnames.** Each twin's certname is
#     `clone<N>.<node label>.<certname of this host>`, or, with
#     `'certnames' => 'node_prefix'`,
#     `<node label>-clone<N>.<certname of this host>` (`node /^web\d+/`
#     matches it; an exact name or a domain pattern does not). Either
#     changes when the clone's node does, since its certificate holds its
#     node's extensions.
#   - **Refusals.** Twins are refused in `run_mode => 'apply'`, without
#     `agent_noop => true` unless `'noop' => 'waived'`, and without
#     `exports`; `'exports' => 'isolated'` is refused when the twins' server
#     is the host of the PuppetDB the nodes come from.
#   - **It counts as a node.** A twin counts wherever nodes are counted (PE
#     licences, the console, reports).
#
#   Undef: no twins (clones made twins before are created anew as plain
#   clones).
#
#   Example: `twins => { 'facts_dir' => '/srv/estate-facts', 'exports' => 'isolated', 'assign' => 'mix' }`
#
# @param runinterval
#   Seconds between two runs of each clone's agent, 60 to 604800 (7 days).
#   Runs are phased (see `phasing`): clone i of N gets `phase_index => i - 1,
#   phase_count => N` and runs at its own offset into each interval, counted
#   from its start, so that the server sees an even stream of N runs per
#   interval rather than a herd; a clone's first run comes within one
#   interval of its start. Not used in `manual` mode. A change restarts the
#   running clones, as for `run_mode`. A shorter interval lowers the CPU
#   bound of the capacity (see `num_clones`).
#
#   Example: `runinterval => 3600`
#
# @param splay
#   Up to this many seconds, at random, added to the phased runs (0: none),
#   0 to 604800. In `timer` mode to every run (`RandomizedDelaySec=`); in
#   `daemon` mode once, when the agent starts (Puppet's
#   `splay`/`splaylimit`). A change restarts the running clones, as for
#   `run_mode`.
#
#   Example: `splay => 30`
#
# @param phasing
#   How clone i's runs are placed in each interval T (the helper's rules,
#   `clone-army schema`'s `phasings`).
#
#   - `prefix-even`: clone i runs at `floor(T * vdc(i - 1))` seconds into
#     the interval, where vdc is the base-2 van der Corput sequence (0, 1/2,
#     1/4, 3/4, 1/8, 5/8, ...): clone1 at 0, clone2 at T/2, clone3 at T/4,
#     clone4 at 3T/4, ... Whenever `clone1` .. `clone<n>` run, for any n,
#     their runs are spread within a factor of two of evenly (no 12 s of the
#     interval holds more than twice the even share), so a fleet grown a
#     step at a time (`clone-army ramp run`, which starts stopped clones in
#     name order, its steps whole intervals apart) loads the server evenly
#     at every step, and changing `num_clones` moves no clone's runs.
#   - `fleet-even`: clone i of N runs at `floor((i - 1) * T / N)`: exactly
#     even when all N run, but bunched into the first n/N of the interval
#     while only n do, and moved for every clone when N changes (the only
#     rule before the rules had names).
#
#   Offsets count from each clone's start, so clones started in `ramp_up`
#   waves are shifted by their wave's delay. A change reaches a running
#   clone at its next start; it restarts nothing. Not used in `manual` mode.
#
#   Example: `phasing => 'fleet-even'`
#
# @param fleet_facts
#   External facts every clone's agent sends (a `Clone_army::Facts`: names of
#   `a-z`, `0-9` and `_` to strings of at most 4096 characters, numbers or
#   booleans), written to `/etc/facter/facts.d/clone_army.json` in each
#   clone. (`facts` is a reserved variable name in Puppet and cannot be a
#   parameter, hence the name.)
#
#   Example: `fleet_facts => { 'role' => 'loadtest', 'datacenter' => 'lab' }`
#
# @param clone_facts
#   Facts of single clones, by clone name, merged over `fleet_facts` (a
#   clone's own value wins). Names of clones outside `clone1` .. `cloneN`
#   are ignored, with a warning from the compiler naming them.
#
#   Example: `clone_facts => { 'clone1' => { 'role' => 'canary' } }`
#
# @param generated_facts
#   How many generated facts (`clone_army_fact_0001` ...) each clone's agent
#   sends on top, 0 to 9999 (0: none), like Puppet's clamps load test, so
#   that PuppetDB stores fact sets of a realistic size. A fact script in
#   each clone prints them.
#
#   Example: `generated_facts => 500`
#
# @param churn_percent
#   The share of the generated facts, in percent, whose values change on
#   every run (the first `ceil(generated_facts * churn_percent / 100)`; the
#   rest keep a value per clone), 0 to 100, so that PuppetDB sees fact
#   churn. Not used without `generated_facts`.
#
#   Example: `churn_percent => 15`
#
# @param memory_max
#   A memory limit for each clone (systemd's `MemoryMax=` in a drop-in for
#   its unit): bytes as an Integer, or a string with a `K`, `M`, `G` or `T`
#   suffix (base 1024). Undef: no limit (a limit set before is removed: the
#   clones get `'none'`). Holds from a clone's next start at the latest.
#
#   Example: `memory_max => '256M'`
#
# @param cpu_quota
#   A CPU limit for each clone in percent of one CPU (systemd's
#   `CPUQuota=`), `'1%'` to `'100000%'` or the percentage as an Integer.
#   Undef: no limit.
#
#   Example: `cpu_quota => '50%'`
#
# @param tasks_max
#   The most processes and threads each clone may run (systemd's
#   `TasksMax=`), 1 to 4194304. Undef: the unit template's `TasksMax=16384`.
#
#   Example: `tasks_max => 2048`
#
# @param ramp_up
#   Seconds over which the clones created in one run are started, 0 to
#   86400. They are not started one by one as each is created: when all
#   clones are evaluated, they are started with one `clone-army clone start
#   --ramp-up <ramp_up>`, and the helper starts them in waves of
#   `ceil(N / max(1, floor(ramp_up / 5)))` clones about every 5 seconds, so
#   that a new fleet's boots, certificate requests and first runs do not hit
#   the server at once. 0 (or less than 5): all at once. Clones that already
#   exist are not affected, except those restarted in the run for a new
#   `run_mode`, `runinterval`, `splay` or `apply_source`: they are started in
#   the same waves. That helper call is given its usual time limit
#   (`waits.call_seconds` in the module's `schema.json`, 900 s) plus the
#   ramp-up, so a ramp of any allowed length runs to its end. If it fails,
#   the clones are retried one at a time at the ramp's pace (one every
#   `ramp_up / N` seconds), with a warning.
#
#   Example: `ramp_up => 300` (500 new clones: 56 waves of up to 9 clones,
#   5 s apart)
#
# @param manage_packages
#   Install the packages the helper runs on this host, as `package`
#   resources (`ensure => installed`) in the private class
#   `clone_army::packages`, ordered before the helper's install and so before
#   the base is built and the clones run. The list per OS family is
#   `clone_army::host_packages`'s:
#
#   - Debian (Debian, Ubuntu): `systemd-container` and `debootstrap`, and
#     `curl` with `puppet_source` `puppet`, `openvox` or `pe`.
#     `systemd-nspawn` and `machinectl` run the clones and the commands
#     inside a base being built, `debootstrap` builds the base, and `curl`
#     downloads the vendor's release package or PE's installer on the host.
#   - RedHat: `systemd-container`. The host's own `dnf` builds the base, and
#     its minimal install has curl (`curl-minimal` on EL 9, which a `curl`
#     package would conflict with).
#   - Suse: `systemd-container` and `curl` (every agent source there is
#     downloaded). The host's own `zypper` and `rpm` build the base.
#
#   On another OS family nothing is installed and the catalog has a warning.
#   A package another class declared before `clone_army` is evaluated is
#   left to that declaration; one declared after it would be a duplicate
#   declaration, so set `false` then. `false`: nothing is installed; the
#   packages are yours to install.
#
#   Example: `manage_packages => false`
#
# @param helper_path
#   Where the `clone-army` helper binary is installed (mode 0755). The
#   types' providers run it from there. The `clone_army` fact looks for it
#   only at the default path (never on the PATH): installed elsewhere, the
#   fact lists no clones and shrinking `num_clones` removes nothing.
#
#   The helper comes from the module's `files/clone-army`, which the
#   module's release tarball carries (`puppet module install` of what `make
#   dist` builds) and a checkout has after `make build`; or from
#   `helper_source`. With neither (a git checkout deployed by r10k, Code
#   Manager or Bolt), the catalog fails at once, saying so. The module's own
#   helper is built for x86_64 Linux (`Clone_army::Helper_arch`): on a host
#   whose `os.hardware` (or, without it, `os.architecture`) is another
#   architecture the catalog fails, naming it, unless `helper_source` gives
#   a helper built for that host. Before a new helper replaces the installed
#   one, the `file` resource runs it (`validate_cmd`: `<new helper>
#   schema`): one that does not run on the host, or that answers in another
#   protocol version than the module's providers speak
#   (`clone_army::helper_protocol`), fails the run with which side to
#   upgrade, and the installed helper stays.
#
#   Example: `helper_path => '/opt/clone-army/bin/clone-army'`
#
# @param helper_source
#   Where to fetch the helper from instead of the module's `files/clone-army`:
#   an `https://` or `http://` URL, or an absolute path on this host. For a
#   module deployed from git (r10k, Code Manager, Bolt's git modules), whose
#   checkout has no `files/clone-army` (it is built, not tracked): point it
#   at the helper of the module's release (`make dist` writes it as
#   `target/dist/clone-army-<version>-<arch>-linux`, with its `.sha256`).
#   Puppet's own `file` resource fetches it (`source`) and verifies it
#   (`checksum => 'sha256'`, `checksum_value => helper_checksum`); a download
#   that does not match fails the run and is not installed. So
#   `helper_checksum` is required with it: the integrity comes from the
#   checksum, not from the transport, which is why plain `http://` on a
#   network you trust (an internal artifact server, a loopback address) is
#   acceptable; `https://` also keeps the download private and needs the
#   host's agent to trust the server's CA. A helper given here is taken to be
#   built for this host: the class then does not refuse architectures other
#   than `Clone_army::Helper_arch` (the install's check still refuses a
#   helper that does not run on the host).
#
#   Example: `helper_source => 'http://artifacts.example.com/clone-army-0.4.0-x86_64-linux'`
#
# @param helper_checksum
#   The SHA-256 of the helper at `helper_source`, in lower-case hex as
#   `sha256sum` prints it (the first field of the release's
#   `clone-army-<version>-<arch>-linux.sha256`). Required with
#   `helper_source`, refused without it. A helper that does not match fails
#   the run and is not installed.
#
#   Example: `helper_checksum => '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'`
#   (with `helper_source`)
#
# @param record
#   Record the load run. The service `puppet-clone-army-record` (unit
#   `/etc/systemd/system/puppet-clone-army-record.service`) runs
#   `clone-army record --output <record_file> --interval <runinterval>
#   [--every <record_every>] [--server <server>[:<server_port>]]
#   [--puppetdb <record_puppetdb>] [--access-log <record_access_log>]
#   [--group-by <record_group_by>]`, which samples every `record_every`
#   seconds the fleet (runs finished since the last sample, their status,
#   run and catalog retrieval times, clones running and silent), the
#   server's view (`/status/v1/services?level=debug`: JRuby pool, borrow and
#   wait times, compile time; verified against this host agent's CA),
#   PuppetDB's command queue with `record_puppetdb`, and this host's load,
#   memory and CPU, one JSON line each, into `record_file`. The service
#   starts after the helper is installed and before the clones are created,
#   so the timeline holds the fleet's growth; it is enabled (it records
#   again after a reboot), restarts 10 s after a crash, and restarts when a
#   new helper is installed, appending to the same timeline. It may write
#   only to `record_file`'s directory (`ProtectSystem=strict`).
#   `clone-army report --from <record_file> --format html --output PAGE`
#   (or the `clone_army::report` task with `from`) makes the run's page.
#   `false` stops and disables the service and removes its unit; the
#   timeline is kept.
#
#   Example: `record => true` (then `clone-army report --from
#   /var/log/puppet-clone-army/timeline.jsonl --format html --output
#   /root/run.html`)
#
# @param record_file
#   The recorder's timeline (JSON lines). The helper rotates it by size
#   beside itself (`<file>.1` .. `<file>.4`, 64 MiB each: its defaults), so
#   at most about 320 MiB stay on disk. Its directory is made when missing
#   (an existing one keeps its owner and mode) and is the only one the
#   service may write to. The class names that directory in
#   `/etc/puppet-clone-army/record_dir` (root's, 0644, with `record` true or
#   false): the `clone_army::report` task reads timelines (`from`) and
#   writes pages (`output`) there and nowhere else.
#
#   Example: `record_file => '/srv/load-runs/server-8.7.jsonl'`
#
# @param record_every
#   Seconds between two samples, 1 or more. Undef: the helper's default
#   (10 s).
#
#   Example: `record_every => 5`
#
# @param record_puppetdb
#   PuppetDB to record the command queue of: an `https://` URL, or a host
#   name or `host:port` (port 8081 when left out). The recorder presents
#   this host agent's certificate to it (the one key in the agent's
#   ssldir), verified against the agent's CA. Undef: PuppetDB is not asked.
#
#   Example: `record_puppetdb => 'https://puppetdb.example.com:8081'`
#
# @param record_access_log
#   Puppet Server's access log, read as it grows, when the server runs on
#   this host or shares its log with it. Each sample then holds the requests
#   the server logged per endpoint (node, catalog, file metadata and
#   content, report), their 5xx and their p50 and p95: the server's own time
#   per request, which its status API gives only as means. The log must be
#   in Puppet Server's default pattern; a symlink or anything but a regular
#   file is refused. Undef: no log is read.
#
#   Example: `record_access_log => '/var/log/puppetlabs/puppetserver/puppetserver-access.log'`
#
# @param record_group_by
#   Also count each sample's runs by what the clones' twins stand in for
#   (`clone-army record --group-by`), as `clone-army report --group-by`
#   groups the live fleet: `'pp_role'` (or another trusted extension a twin
#   takes, by its `pp_*` name or OID), `'node'` or `'environment'`, read from
#   each twin's record on the load host. Clones that are no twins are the
#   group `-`. The run's page then has a section "By <key>": per group its
#   runs, failed runs, run time and catalog retrieval p50 and p95 over the
#   whole recording (the max instead of a p95 for a group of fewer than 20
#   runs), median catalog size and the changes its noop runs would have
#   made, and a chart of each group's run time (the 8 groups with the most
#   runs; the others are named under it). Undef: no groups.
#
#   Example: `record_group_by => 'pp_role'` (with `twins` and `record => true`)
#
class clone_army (
  Optional[Clone_army::Hostname] $server = undef,
  Optional[Clone_army::Hostname] $master = undef,
  Optional[Integer[1, 65535]] $server_port = undef,
  Optional[Integer[0]] $num_clones = undef,
  Boolean $force_num_clones = false,
  Optional[Integer[1, 100]] $cpu_share_percent = undef,
  Optional[Variant[Integer[1], Float[0.01]]] $cpu_seconds_per_run = undef,
  Clone_army::Clone_ensure $clone_ensure = 'present',
  Clone_army::Name $base = regsubst(downcase("${facts['os']['name']}-${facts['os']['release']['major']}"), '[^a-z0-9-]', '-', 'G'),
  Clone_army::Absolutepath $helper_path = '/usr/local/sbin/clone-army',
  Optional[Clone_army::Helper_source] $helper_source = undef,
  Optional[Clone_army::Sha256] $helper_checksum = undef,
  Optional[Clone_army::Puppet_source] $puppet_source = undef,
  Optional[Clone_army::Absolutepath] $pe_ca_cert = undef,
  Optional[Sensitive[String]] $root_password_hash = undef,
  Optional[Sensitive[String[1, 255]]] $challenge_password = undef,
  Clone_army::Run_mode $run_mode = 'daemon',
  Clone_army::Apply_source $apply_source = undef,
  Boolean $agent_noop = false,
  Optional[Clone_army::Twins] $twins = undef,
  Integer[60, 604800] $runinterval = 1800,
  Integer[0, 604800] $splay = 0,
  Clone_army::Phasing $phasing = 'prefix-even',
  Clone_army::Facts $fleet_facts = {},
  Hash[Clone_army::Name, Clone_army::Facts] $clone_facts = {},
  Integer[0, 9999] $generated_facts = 0,
  Integer[0, 100] $churn_percent = 0,
  Optional[Clone_army::Memory_max] $memory_max = undef,
  Optional[Clone_army::Cpu_quota] $cpu_quota = undef,
  Optional[Integer[1, 4194304]] $tasks_max = undef,
  Integer[0, 86400] $ramp_up = 0,
  Boolean $record = false,
  Clone_army::Timeline_path $record_file = '/var/log/puppet-clone-army/timeline.jsonl',
  Optional[Integer[1]] $record_every = undef,
  Optional[Clone_army::Service_address] $record_puppetdb = undef,
  Optional[Clone_army::Timeline_path] $record_access_log = undef,
  Optional[Clone_army::Group_key] $record_group_by = undef,
  Boolean $manage_packages = true,
) {
  $given_server = clone_army::given_server($server, $master)
  # Only a catalog compiled by a Puppet Server for a remote agent has a server
  # to point the clones at; `puppet apply` and Bolt compile locally and have
  # no `servername` (getvar keeps this safe under strict variables).
  $agent_server = $facts['clone_army_agent_server']
  $compiling_server = $trusted['authenticated'] ? {
    'remote' => $agent_server ? {
      Clone_army::Hostname => $agent_server,
      default              => getvar('server_facts.servername'),
    },
    default  => undef,
  }
  $_server = [$given_server, $compiling_server].filter |$name| { $name =~ NotUndef }[0]
  # A port belongs to the name it was found with: the host agent's port goes
  # only with the host agent's server.
  $agent_server_port = ($_server =~ NotUndef and $_server == $agent_server) ? {
    true    => $facts['clone_army_agent_server_port'] ? {
      Integer[1, 65535] => $facts['clone_army_agent_server_port'],
      default           => undef,
    },
    default => undef,
  }
  $_server_port = [$server_port, $agent_server_port].filter |$port| { $port =~ NotUndef }[0]
  if $run_mode == 'apply' and $apply_source =~ Undef {
    fail(@("MSG"/L))
      clone_army: run_mode => 'apply' needs apply_source: a directory on this host \
      with manifests/ (and modules/) for the clones to apply, \
      e.g. apply_source => '/srv/clone-army-apply'
      |- MSG
  }
  if $run_mode != 'apply' and $apply_source =~ NotUndef {
    fail(@("MSG"/L))
      clone_army: apply_source is only used with run_mode => 'apply'; \
      run_mode is '${run_mode}'
      |- MSG
  }
  # Masterless clones ask no server.
  if $_server =~ Undef and $run_mode != 'apply' {
    fail(@("MSG"/L))
      clone_army: no Puppet Server to point the clones at. This catalog was not \
      compiled by a Puppet Server (puppet apply or bolt apply), so pass `server`, \
      e.g. class { 'clone_army': server => 'puppet.example.com' }
      |- MSG
  }
  if $_server_port =~ NotUndef and $_server =~ Undef {
    fail(@("MSG"/L))
      clone_army: server_port is the port of `server`, and in run_mode => 'apply' \
      without `server` the clones ask no server; pass `server` as well, or leave \
      server_port out
      |- MSG
  }

  if $twins =~ NotUndef {
    if $run_mode == 'apply' {
      fail("clone_army: twins need a Puppet Server to compile their nodes' catalogs; run_mode is 'apply'")
    }
    if !$agent_noop and $twins['noop'] != 'waived' {
      fail(@("MSG"/L))
        clone_army: twins run their nodes' own catalogs, so they run in noop: set \
        agent_noop => true, or twins' noop => 'waived' to let them apply those \
        catalogs to the clones
        |- MSG
    }
    # One source, checked by the rule the type shares; the fleet imports it.
    $twin_source = clone_army::twin_source($twins, $_server)
  } else {
    $twin_source = undef
  }

  # PE's servers add pe_serverversion to the server facts; PE infrastructure
  # nodes also have the pe_server_version fact (Bolt, puppet apply).
  $server_is_pe = getvar('server_facts.pe_serverversion') =~ NotUndef or $facts['pe_server_version'] =~ NotUndef
  # Only Debian and Ubuntu ship a puppet-agent package of their own; the
  # helper refuses `distro` elsewhere, and OpenVox's repositories are public.
  $_puppet_source = $puppet_source ? {
    undef   => $server_is_pe ? {
      true    => 'pe',
      default => $facts['os']['family'] ? {
        'Debian' => 'distro',
        default  => 'openvox',
      },
    },
    default => $puppet_source,
  }
  # A PE base downloads its agent from the primary server, apply mode or not.
  if $_puppet_source == 'pe' and $_server =~ Undef {
    fail(@("MSG"/L))
      clone_army: puppet_source => 'pe' builds the base from the PE primary server's \
      install.bash, so pass `server` (the primary server), also in run_mode => 'apply'
      |- MSG
  }
  if $pe_ca_cert =~ NotUndef and $_puppet_source != 'pe' {
    fail(@("MSG"/L))
      clone_army: pe_ca_cert is only used with puppet_source => 'pe'; \
      puppet_source is '${_puppet_source}'
      |- MSG
  }
  $_pe_ca_cert = $_puppet_source ? {
    'pe'    => $pe_ca_cert ? {
      undef   => '/etc/puppetlabs/puppet/ssl/certs/ca.pem',
      default => $pe_ca_cert,
    },
    default => undef,
  }

  # The value is never put into the message.
  if $root_password_hash =~ NotUndef and $root_password_hash.unwrap !~ Clone_army::Crypt_hash {
    # A literal heredoc (no interpolation), so '$6$' stays as written.
    fail(@(MSG/L))
      clone_army: root_password_hash must be a crypt(3) password hash such as \
      '$6$<salt>$<hash>' or '$y$<params>$<salt>$<hash>' (make one with \
      `mkpasswd -m yescrypt` or `openssl passwd -6`); the value given is not one (not shown)
      |- MSG
  }

  # What this host holds in this run mode and interval: the smaller of its
  # memory and CPU bounds (lib/puppet_x/clone_army/capacity.rb).
  # A host whose facts lack a processor count is taken as the function says.
  $cores = $facts.dig('processors', 'count') ? {
    Integer[1] => $facts.dig('processors', 'count'),
    default    => undef,
  }
  $fleet_capacity = clone_army::fleet_capacity(
    $facts['memory']['system']['total_bytes'], $cores,
    $run_mode, $runinterval, $cpu_share_percent, $cpu_seconds_per_run,
  )
  $capacity = $fleet_capacity['clones']
  $other_bound = $fleet_capacity['bound'] ? {
    'memory' => $fleet_capacity['cpu'] ? {
      undef   => 'no CPU bound in manual mode',
      default => "the CPU bound is ${fleet_capacity['cpu']}",
    },
    default  => "the memory bound is ${fleet_capacity['memory']}",
  }

  # The default fills the host's memory but 2 GiB: on a host that is a
  # Puppet Server itself (a bare include classified onto the server, say) the
  # clones would take what the server and PuppetDB run on. Such a fleet is
  # sized by hand or not at all.
  $this_host = [$trusted['certname'], $facts.dig('networking', 'fqdn')].filter |$name| { $name =~ NotUndef }
  $server_here = $facts['pe_server_version'] ? {
    undef   => ($_server =~ NotUndef and $_server in $this_host) ? {
      true    => "the clones' server, ${_server}, is this host",
      default => undef,
    },
    default => "it is PE infrastructure: pe_server_version is ${facts['pe_server_version']}",
  }
  if $num_clones =~ Undef and $server_here =~ NotUndef and $capacity > 0 {
    fail(@("MSG"/L))
      clone_army: this host is a Puppet Server (${server_here}), and without num_clones \
      the class runs as many clones as the whole host holds (${capacity}, bound by \
      ${fleet_capacity['bound']}), taking the memory and CPU the server runs on. \
      Give num_clones (e.g. num_clones => 10) to run a fleet here anyway, or classify \
      a load host of its own
      |- MSG
  }

  $_num_clones = $num_clones ? {
    undef   => $capacity,
    default => $num_clones,
  }
  if $_num_clones > $capacity and !$force_num_clones {
    fail(@("MSG"/L))
      clone_army: num_clones => ${_num_clones} is more than this host holds: \
      its capacity is ${capacity} clones, bound by ${fleet_capacity['bound']} \
      (${fleet_capacity['reason']}; ${other_bound}). Lower num_clones, or set \
      force_num_clones => true to run ${_num_clones} clones anyway.
      |- MSG
  }

  # The packages come first: the base build runs debootstrap and
  # systemd-nspawn, and the clones' units run systemd-nspawn.
  if $manage_packages {
    class { 'clone_army::packages':
      puppet_source => $_puppet_source,
    }
    contain clone_army::packages
    Class['clone_army::packages'] -> Class['clone_army::install']
  }

  contain clone_army::install

  # nspawn clones under an enforcing policy need container-selinux's labels
  # (clone_army::selinux); untested here, where there is no SELinux.
  $selinux_enforced = $facts['os']['family'] == 'RedHat' and $facts.dig('os', 'selinux', 'enforced') == true
  if $selinux_enforced {
    contain clone_army::selinux
    Class['clone_army::install'] -> Class['clone_army::selinux'] -> Class['clone_army::fleet']
  }

  class { 'clone_army::fleet':
    server        => $_server,
    server_port   => $_server_port,
    num_clones    => $_num_clones,
    puppet_source => $_puppet_source,
    pe_ca_cert    => $_pe_ca_cert,
  }
  contain clone_army::fleet

  # The recorder starts before the clones are made, so that it sees them come.
  class { 'clone_army::record':
    server      => $_server,
    server_port => $_server_port,
  }
  contain clone_army::record

  Class['clone_army::install'] -> Class['clone_army::record'] -> Class['clone_army::fleet']
}
