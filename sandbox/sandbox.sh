#!/usr/bin/env bash
# A "sandbox host": the cached Debian rootfs (rootfs.sh, SANDBOX_SUITE) booted with
# `systemd-nspawn -b`, so systemd is PID 1 inside and the module can be
# applied for real on a machine whose own PID 1 is not systemd.
#
#   sandbox.sh up NAME            boot sandbox NAME (fails if it is already up)
#   sandbox.sh down NAME          power it off, unmount, remove its state (idempotent)
#   sandbox.sh exec NAME CMD...   run CMD inside; exits with CMD's status
#   sandbox.sh server NAME        configure and start Puppet Server inside, wait until it answers
#   sandbox.sh restart NAME       orderly poweroff, then boot again keeping its state (upper layer,
#                                 data dir); starts Puppet Server again if it was configured
#   sandbox.sh status NAME        print pid, leader and systemd state
#
# Layout, all under $SANDBOX_CACHE/sandboxes/NAME:
#   upper/ work/  the overlay's writable layer over the cached rootfs (the cache stays untouched)
#   root/         the overlay mount: the sandbox's /
#   data/         a real directory bound at /var/lib/puppet-clone-army inside: the clones put
#                 their own overlay upper/work dirs there, and an upper dir cannot live on an overlay
#   nspawn.pid    the systemd-nspawn supervisor's PID;  console.log  its output (the boot console)
#
# The sandbox shares this machine's network namespace, so its loopback (and its
# clones') is this machine's: Puppet Server binds SERVER_ADDR:8140 and nothing else.
#
# Environment: MODULE_DIR (default: this checkout) is bound read-only at the
# sandbox's modulepath as clone_army; BOOT_TIMEOUT, SERVER_TIMEOUT, STOP_TIMEOUT
# (seconds); STOP_WAVE (50) clones stopped at a time by `down` before the poweroff;
# SERVER_JRUBIES (1), SERVER_HEAP (1g) size Puppet Server.
# SERVER_ADDR (127.0.0.1) is the loopback address Puppet Server binds and
# `puppet` resolves to, so two sandboxes with servers can run side by side
# (e.g. `make test` on 127.0.0.1 and another suite on 127.0.0.3).
# SERVER_ALIASES (puppet2) are further names for the server, in /etc/hosts and
# in its certificate's dns_alt_names (a server change can point clones at one).
# SERVER_CPUS and CLONE_CPUS (empty: no pinning), CPU lists such as 0 or 1-3,
# pin Puppet Server, PuppetDB and PostgreSQL, and the clones, to CPUs of their
# own (systemd's CPUAffinity=, which the clones' processes inherit), so the
# server's CPU is not the clones' and each CPU's busy share in the recorder's
# samples says whose it was.
# SERVER_CPU_QUOTA (empty: none), a percentage of one CPU such as 10, is all the
# CPU time Puppet Server, PuppetDB and PostgreSQL may use together, counted by
# this machine's cgroup v1 cpu controller (the sandbox's own systemd cannot set
# it there): a server smaller than its load host, so the load gives the server
# out first. It holds for the processes `server` started and those they start.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sandbox/lib.sh
source "$here/lib.sh"

MODULE_DIR=${MODULE_DIR:-$SANDBOX_REPO}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
SERVER_TIMEOUT=${SERVER_TIMEOUT:-600}
# Everything is deleted afterwards, so an orderly poweroff gets a short
# bound; then SIGKILL to the container's PID 1 ends its whole PID namespace.
STOP_TIMEOUT=${STOP_TIMEOUT:-30}
# `restart` keeps the state, so it waits longer for an orderly poweroff.
RESTART_STOP_TIMEOUT=${RESTART_STOP_TIMEOUT:-180}
# `down` stops a sandbox's running clones this many at a time before its poweroff.
STOP_WAVE=${STOP_WAVE:-50}
SERVER_JRUBIES=${SERVER_JRUBIES:-1}
SERVER_HEAP=${SERVER_HEAP:-1g}
# The name clones use for the server; the sandbox's /etc/hosts maps it to SERVER_ADDR.
SERVER_NAME=${SERVER_NAME:-puppet}
SERVER_ADDR=${SERVER_ADDR:-127.0.0.1}
SERVER_ALIASES=${SERVER_ALIASES:-puppet2}
SERVER_CPUS=${SERVER_CPUS:-}
CLONE_CPUS=${CLONE_CPUS:-}
SERVER_CPU_QUOTA=${SERVER_CPU_QUOTA:-}
[[ $SERVER_ADDR =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || {
  echo "SERVER_ADDR must be a loopback IPv4 address (127.x.y.z), not '$SERVER_ADDR'" >&2
  exit 2
}
# Debian 12 (`puppet config print modulepath`): /etc/puppet/code/modules:/usr/share/puppet/modules
SANDBOX_MODULE_PATH=/etc/puppet/code/modules/clone_army
# The cached rootfs, read-only inside too: a ready lower layer for nested-clone smoke tests.
SANDBOX_ROOTFS_INSIDE=/var/lib/clone-army-sandbox/rootfs
PATH_INSIDE=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# --- helpers ---------------------------------------------------------------

# The live nspawn PID of sandbox NAME, or nothing. A PID is only trusted
# while it is still a systemd-nspawn whose command line names our root dir.
nspawn_pid() {
  local dir pid
  dir=$(sandbox_dir "$1")
  [ -r "$dir/nspawn.pid" ] || return 0
  pid=$(<"$dir/nspawn.pid")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  [ -r "/proc/$pid/cmdline" ] || return 0
  is_our_nspawn "$pid" "$dir" || return 0
  printf '%s\n' "$pid"
}

# Is PID a systemd-nspawn booting DIR/root?
is_our_nspawn() {
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = systemd-nspawn ] &&
    grep -qxF -- "--directory=$2/root" <<<"$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null)"
}

# Every systemd-nspawn process booting sandbox NAME's root (also when the
# PID file is lost), for teardown. The supervisor forks helpers of its own.
all_our_nspawns() {
  local dir p
  dir=$(sandbox_dir "$1")
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    if is_our_nspawn "$p" "$dir"; then printf '%s\n' "$p"; fi
  done
}

# The container's PID 1 (as seen from here): the child of the nspawn
# supervisor that lives in another PID namespace.
leader_pid() {
  local nspawn=$1 child children
  read -r -a children < <(cat "/proc/$nspawn/task/"*/children 2>/dev/null; echo)
  for child in "${children[@]}"; do
    if [ "$(readlink "/proc/$child/ns/pid" 2>/dev/null)" != "$(readlink /proc/self/ns/pid)" ]; then
      printf '%s\n' "$child"
      return 0
    fi
  done
  return 1
}

require_up() {
  local pid leader
  pid=$(nspawn_pid "$1")
  [ -n "$pid" ] || die "sandbox $1 is not up (sandbox.sh up $1)"
  leader=$(leader_pid "$pid") || die "sandbox $1: no container leader under nspawn PID $pid"
  printf '%s\n' "$leader"
}

# Run CMD... inside sandbox NAME: every namespace of the container's PID 1,
# its root, a clean environment with a sane PATH.
exec_in() {
  local name=$1 leader
  shift
  leader=$(require_up "$name")
  local bound=()
  # EXEC_TIMEOUT bounds the command (seconds; 0, the default, does not: an
  # interactive shell must stay in the terminal's foreground process group).
  if ((${EXEC_TIMEOUT:-0} > 0)); then
    bound=(timeout --kill-after=10 "$EXEC_TIMEOUT")
  fi
  "${bound[@]}" nsenter --target "$leader" --all --root --wd \
    env -i PATH="$PATH_INSIDE" HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 \
    TERM="${TERM:-dumb}" "$@"
}

# The kernel limits a fleet needs, as the helper wants them (`clone-army host
# limits`, README "Kernel limits"). /proc/sys is read-only inside the sandbox, so
# they are raised here, on the outer machine, as the helper would on a real host.
raise_kernel_limits() {
  local helper=$SANDBOX_REPO/files/clone-army name want key have
  [ -x "$helper" ] || die "$helper is missing; run make build first"
  # shellcheck disable=SC2016 # Ruby's interpolation, not the shell's.
  local wanted='JSON.parse($stdin.read).fetch("result").fetch("limits").each { |l| puts "#{l["name"]} #{l["wanted"]}" }'
  while read -r name want; do
    key=/proc/sys/${name//.//}
    have=$(<"$key")
    if ((have < want)); then
      log "raising $name from $have to $want (a fleet needs it)"
      printf '%s\n' "$want" >"$key" || die "cannot raise $key; clones will fail to boot"
    fi
  done < <("$helper" host limits | ruby -rjson -e "$wanted")
}

# Stops the running clones of sandbox NAME, STOP_WAVE at a time, each wave stopped
# before the next, when the helper is installed there. A poweroff alone stops every
# clone at once, and the BPF programs of a thousand clones (seccomp filters, cgroup
# device programs) freed in one burst have left a kernel unable to load any BPF
# program again (README, "Tested here"). Best effort: the poweroff stops what is left.
stop_clones_in_waves() {
  local name=$1 running=() wave=() i stopped=0
  # shellcheck disable=SC2016 # jq's string, not the shell's
  mapfile -t running < <(EXEC_TIMEOUT=120 exec_in "$name" sh -c 'command -v clone-army >/dev/null || exit 0
    clone-army clone list --format json | jq -r ".result.clones[] | select(.state == \"running\") | .name"' 2>/dev/null) || true
  ((${#running[@]} > 0)) || return 0
  for ((i = 0; i < ${#running[@]}; i += STOP_WAVE)); do
    wave=("${running[@]:i:STOP_WAVE}")
    if EXEC_TIMEOUT=300 exec_in "$name" clone-army clone stop -- "${wave[@]}" >/dev/null; then
      stopped=$((stopped + ${#wave[@]}))
    else
      log "sandbox $name: warning: clone stop of ${wave[*]} failed; the poweroff stops them"
    fi
  done
  log "sandbox $name: stopped $stopped of ${#running[@]} running clones, $STOP_WAVE at a time"
}

# --- up --------------------------------------------------------------------

cmd_up() {
  local name=$1 dir rootfs
  require_root
  valid_sandbox_name "$name"
  dir=$(sandbox_dir "$name")
  [ -z "$(nspawn_pid "$name")" ] || die "sandbox $name is already up (sandbox.sh down $name first)"
  # Leftovers of a run that was killed hard: clear them first.
  [ ! -e "$dir" ] || cmd_down "$name"
  [ -f "$MODULE_DIR/metadata.json" ] || die "MODULE_DIR=$MODULE_DIR is not a module checkout"
  command -v systemd-nspawn >/dev/null || die "systemd-nspawn is not installed (make deps)"

  rootfs=$(bash "$here/rootfs.sh" build)
  raise_kernel_limits

  # From here on, a failure (or an interrupt) takes down what was set up so far.
  up_name=$name
  trap up_failed EXIT
  trap 'exit 130' INT TERM HUP

  mkdir -p "$dir"/{upper,work,root,data}
  chmod 0755 "$dir" "$dir/upper" "$dir/root" "$dir/data"
  boot "$name" "$rootfs"
  trap - EXIT INT TERM HUP
}

# Mount sandbox NAME's overlay over ROOTFS (its upper layer as it is: empty
# for `up`, the old state for `restart`), boot it and wait until systemd is up.
boot() {
  local name=$1 rootfs=$2 dir started pid state
  dir=$(sandbox_dir "$name")
  mount -t overlay "clone-army-sandbox-$name" \
    -o "lowerdir=$rootfs,upperdir=$dir/upper,workdir=$dir/work" "$dir/root"
  chmod 0755 "$dir/root"
  write_config "$name" "$dir/root"

  started=$SECONDS
  # Host network (no --private-network): the sandbox's loopback is this machine's.
  # --register=no: there is no machined out here. --capability=all: the sandbox
  # mounts overlays and runs systemd-nspawn itself for its clones.
  local cgroups cg
  mapfile -t cgroups < <(sandbox_cgroups "$name")
  mkdir -p "${cgroups[@]}"
  (
    for cg in "${cgroups[@]}"; do printf '%s\n' "$BASHPID" >"$cg/cgroup.procs"; done
    exec setsid systemd-nspawn --quiet \
      --directory="$dir/root" --machine="$name" --boot \
      --register=no --keep-unit --capability=all \
      --resolv-conf=copy-host --timezone=off --console=read-only \
      --bind="$dir/data:/var/lib/puppet-clone-army" \
      --bind-ro="$MODULE_DIR:$SANDBOX_MODULE_PATH" \
      --bind-ro="$rootfs:$SANDBOX_ROOTFS_INSIDE"
  ) </dev/null >"$dir/console.log" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" >"$dir/nspawn.pid"
  log "sandbox $name: systemd-nspawn PID $pid, waiting up to ${BOOT_TIMEOUT}s for boot"

  if ! wait_until "$BOOT_TIMEOUT" 1 booted "$name"; then
    tail -n 40 "$dir/console.log" >&2 || true
    die "sandbox $name did not boot within ${BOOT_TIMEOUT}s"
  fi
  state=$(exec_in "$name" systemctl is-system-running 2>/dev/null || true)
  if [ "$state" != running ]; then
    log "sandbox $name is $state; failed units:"
    exec_in "$name" systemctl --failed --no-legend --plain >&2 || true
  fi
  log "sandbox $name booted in $((SECONDS - started)) s (systemd: $state)"
}

# The cgroups sandbox NAME's systemd-nspawn starts in, one per hierarchy it uses:
# the named systemd one and the unified one of a hybrid (cgroup v1) machine, or
# the one of a cgroup v2 machine. With --keep-unit, systemd-nspawn puts itself
# in supervisor/ and the container in payload/ below the cgroup it starts in, so
# two sandboxes started from one cgroup would share one payload/: each one's
# systemd would see the other's units, and the first to stop would remove the
# other's cgroups from under it ("Failed to spawn executor").
sandbox_cgroups() {
  local hierarchy found=0
  for hierarchy in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified; do
    [ -e "$hierarchy/cgroup.procs" ] || continue
    printf '%s/clone-army-sandbox-%s\n' "$hierarchy" "$1"
    found=1
  done
  if ((!found)) && [ -e /sys/fs/cgroup/cgroup.controllers ]; then
    printf '/sys/fs/cgroup/clone-army-sandbox-%s\n' "$1"
  fi
}

# Removes sandbox NAME's cgroups once nothing runs in them (deepest first).
remove_cgroups() {
  local cg
  while read -r cg; do
    [ -d "$cg" ] || continue
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null ||
      log "sandbox $1: could not remove its cgroup $cg (something still runs in it?)"
  done < <(sandbox_cgroups "$1"; server_cpu_cgroup "$1")
}

# Where limit_server_cpu puts the server's services (under this machine's cpu hierarchy).
server_cpu_cgroup() {
  printf '/sys/fs/cgroup/cpu/clone-army-sandbox-%s\n' "$1"
}

# --- restart ---------------------------------------------------------------

# An orderly poweroff (the clones stop through their units, as on a real host),
# then a boot of the same state: the upper layer and the data dir are kept, so
# whatever systemd enabled inside comes back by itself. Puppet Server is started
# again when `server` had configured it (it is not enabled in the sandbox).
cmd_restart() {
  local name=$1 dir pid leader m rootfs
  require_root
  dir=$(sandbox_dir "$name")
  pid=$(nspawn_pid "$name")
  [ -n "$pid" ] || die "sandbox $name is not up (sandbox.sh up $name)"
  leader=$(leader_pid "$pid" || true)
  log "sandbox $name: restarting; powering off (nspawn PID $pid${leader:+, leader $leader})"
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_until "$RESTART_STOP_TIMEOUT" 1 pid_gone "$pid"; then
    die "sandbox $name did not power off within ${RESTART_STOP_TIMEOUT}s (not an orderly restart; sandbox.sh down $name)"
  fi
  if [ -n "$leader" ]; then
    kill_nsenters_of "$leader"
    wait_until 15 1 pid_gone "$leader" || die "sandbox $name: its PID 1 ($leader) is still there"
  fi
  while read -r m; do
    [ -n "$m" ] || continue
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done < <(mounts_below "$dir")
  [ -z "$(mounts_below "$dir")" ] || die "still mounted below $dir after poweroff: $(mounts_below "$dir")"
  log "sandbox $name is off; booting it again"
  rootfs=$(bash "$here/rootfs.sh" path)
  [ -d "$rootfs" ] || die "the cached rootfs $rootfs is gone"
  raise_kernel_limits
  boot "$name" "$rootfs"
  if grep -q '^\[server\]' "$dir/root/etc/puppet/puppet.conf"; then
    cmd_server "$name"
  fi
}

up_name=
server_sandbox=
up_failed() {
  local rc=$?
  trap - EXIT INT TERM HUP
  log "up of sandbox $up_name failed; tearing it down"
  cmd_down "$up_name" || true
  exit "$rc"
}

# Booted: nspawn alive, its leader found, systemd done starting up.
booted() {
  local pid leader state started_pid
  pid=$(nspawn_pid "$1")
  if [ -z "$pid" ]; then
    # Just started, the PID is the shell's fork, then setsid's, until it has
    # exec'd systemd-nspawn; the exec may land between nspawn_pid's look and
    # this one. While that process is there, look again next round (the boot
    # timeout bounds it); only a process that is gone (or a zombie) has exited.
    started_pid=$(cat "$(sandbox_dir "$1")/nspawn.pid" 2>/dev/null || true)
    if [[ $started_pid =~ ^[0-9]+$ ]] && ! pid_gone "$started_pid"; then
      return 1
    fi
    tail -n 40 "$(sandbox_dir "$1")/console.log" >&2 || true
    die "systemd-nspawn for sandbox $1 exited during boot"
  fi
  leader=$(leader_pid "$pid") || return 1
  state=$(exec_in "$1" systemctl is-system-running 2>/dev/null) || true
  [ "$state" = running ] || [ "$state" = degraded ]
}

# Files the sandbox gets per run (none of this is in the cached rootfs, so
# changing it needs no rebuild). ROOT is the sandbox's / seen from here.
write_config() {
  local name=$1 root=$2
  # The server's name, for the sandbox and (through the helper's
  # --bind-ro=/etc/hosts) for every clone. 127.0.1.1 gives the sandbox a
  # fully qualified name, so its certname and the clones' hostnames
  # (<clone>.<host certname>) are proper FQDNs.
  local server_line="$SERVER_ADDR	$SERVER_NAME $SERVER_ALIASES"
  [ "$SERVER_ADDR" != 127.0.0.1 ] || server_line="127.0.0.1	localhost $SERVER_NAME $SERVER_ALIASES"
  cat >"$root/etc/hosts" <<EOF
$server_line
127.0.1.1	$name.sandbox.test $name
::1	localhost ip6-localhost ip6-loopback
EOF
  [ "$SERVER_ADDR" = 127.0.0.1 ] || printf '127.0.0.1\tlocalhost\n' >>"$root/etc/hosts"
  printf '%s\n' "$name" >"$root/etc/hostname"
}

# --- server ----------------------------------------------------------------

cmd_server() {
  local name=$1 dir root started conf
  require_root
  dir=$(sandbox_dir "$name")
  root=$dir/root
  require_up "$name" >/dev/null
  [[ $SERVER_JRUBIES =~ ^[1-9][0-9]*$ ]] || die "SERVER_JRUBIES must be a positive number, not '$SERVER_JRUBIES'"
  [[ $SERVER_HEAP =~ ^[1-9][0-9]*[kmgKMG]$ ]] || die "SERVER_HEAP must look like 1g or 768m, not '$SERVER_HEAP'"
  local cpus
  [[ -z $SERVER_CPU_QUOTA || $SERVER_CPU_QUOTA =~ ^[1-9][0-9]{0,3}$ ]] ||
    die "SERVER_CPU_QUOTA must be a percentage of one CPU from 1 to 9999 (or empty), not '$SERVER_CPU_QUOTA'"
  for cpus in SERVER_CPUS CLONE_CPUS; do
    [[ -z ${!cpus} || ${!cpus} =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
      die "$cpus must be a CPU list such as 0, 1-3 or 0,2 (or empty), not '${!cpus}'"
  done
  # The sandboxes share this machine's network: one Puppet Server at a time
  # (the lab and the acceptance suite cannot run together).
  if port_8140_taken "$SERVER_ADDR"; then
    die "$SERVER_ADDR:8140 is already in use on this machine (another sandbox's Puppet Server? sandbox.sh down it first, or pick another SERVER_ADDR)"
  fi

  # Bound to loopback only; a small heap and SERVER_JRUBIES JRuby instances
  # (default 1, Debian's own default on 2 cores: each one costs start-up time
  # and heap), so it fits beside a fleet.
  conf=$root/etc/puppet/puppetserver/conf.d
  [ -d "$conf" ] || die "no $conf in the sandbox (is puppetserver in the rootfs?)"
  sed -i -E 's/^([[:space:]]*ssl-host:).*/\1 '"$SERVER_ADDR"'/' "$conf/webserver.conf"
  grep -qF "ssl-host: $SERVER_ADDR" "$conf/webserver.conf" || die "could not bind puppetserver to $SERVER_ADDR in $conf/webserver.conf"
  if grep -qE '^[[:space:]]*#?[[:space:]]*max-active-instances:' "$conf/puppetserver.conf"; then
    sed -i -E 's/^([[:space:]]*)#?[[:space:]]*max-active-instances:.*/\1max-active-instances: '"$SERVER_JRUBIES"'/' "$conf/puppetserver.conf"
  fi
  if [ -f "$root/etc/default/puppetserver" ]; then
    sed -i -E 's/^JAVA_ARGS=.*/JAVA_ARGS="-Xms256m -Xmx'"$SERVER_HEAP"' -Djruby.logger.class=com.puppetlabs.jruby_utils.jruby.Slf4jLogger"/' \
      "$root/etc/default/puppetserver"
  fi
  # The server's identity and autosigning, in the [server] section only: the
  # sandbox's own `puppet apply` keeps its FQDN certname.
  # (Written directly: three `puppet config set` cost ~10 s on a busy machine.)
  local reports=store
  [ "$SANDBOX_PUPPETDB" != yes ] || reports=store,puppetdb
  if ! grep -q '^\[server\]' "$root/etc/puppet/puppet.conf"; then
    cat >>"$root/etc/puppet/puppet.conf" <<EOF

[server]
# Written by clone_army's sandbox/sandbox.sh for tests: autosign everything.
# allow_duplicate_certs stays at Puppet's default (false), as on a real CA: a
# clone made again keeps its key (its SSL directory outlives it on the load host).
certname = $SERVER_NAME
dns_alt_names = $SERVER_NAME,$SERVER_NAME.sandbox.test,localhost${SERVER_ALIASES:+,${SERVER_ALIASES// /,}}
autosign = true
# Stored report files are the suite's evidence of a check-in. Debian 13's server
# stores none by default (reports = none); both suites keep them in one place.
reports = $reports
reportdir = /var/lib/puppetserver/reports
EOF
    [ "$SANDBOX_PUPPETDB" != yes ] || printf 'storeconfigs = true\nstoreconfigs_backend = puppetdb\n' >>"$root/etc/puppet/puppet.conf"
  fi
  [ "$SANDBOX_PUPPETDB" != yes ] || configure_puppetdb "$root"
  settle_server_start "$root"
  pin_cpus "$name" "$root"

  started=$SECONDS
  log "starting puppetserver in sandbox $name (up to ${SERVER_TIMEOUT}s)"
  EXEC_TIMEOUT=$SERVER_TIMEOUT exec_in "$name" systemctl start puppetserver.service ||
    journal_and_die "$name" "puppetserver did not start in sandbox $name" puppetserver
  server_sandbox=$name
  wait_until "$SERVER_TIMEOUT" 2 server_answers ||
    journal_and_die "$name" "puppetserver in sandbox $name did not answer on https://$SERVER_ADDR:8140 within ${SERVER_TIMEOUT}s" puppetserver
  log "puppetserver in sandbox $name answers after $((SECONDS - started)) s"
  [ "$SANDBOX_PUPPETDB" != yes ] || start_puppetdb "$name"
  limit_server_cpu "$name"
}

# Moves the server's services' processes (seen from here through the sandbox's
# name=systemd cgroup) into a cpu cgroup of this machine's with SERVER_CPU_QUOTA.
limit_server_cpu() {
  local name=$1 cg procs pid moved=0
  [ -n "$SERVER_CPU_QUOTA" ] || return 0
  [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] ||
    die "SERVER_CPU_QUOTA needs the cgroup v1 cpu controller at /sys/fs/cgroup/cpu"
  cg=$(server_cpu_cgroup "$name")/server
  mkdir -p "$cg"
  echo 100000 >"$cg/cpu.cfs_period_us"
  echo $((SERVER_CPU_QUOTA * 1000)) >"$cg/cpu.cfs_quota_us"
  while read -r procs; do
    while read -r pid; do
      echo "$pid" >"$cg/cgroup.procs" && moved=$((moved + 1))
    done <"$procs"
  done < <(find "/sys/fs/cgroup/systemd/clone-army-sandbox-$name" -name cgroup.procs \
    \( -path '*/puppetserver.service/*' -o -path '*/puppetdb.service/*' -o -path '*/postgresql@*.service/*' \))
  ((moved > 0)) || die "sandbox $name: no process of the server's services found to limit"
  log "sandbox $name: Puppet Server, PuppetDB and PostgreSQL ($moved processes) limited to $SERVER_CPU_QUOTA % of one CPU"
}

# Debian 12's puppetserver.service checks its main process with `kill -0` as
# soon as it is forked, which fails ("Operation not permitted") while systemd's
# child has not yet dropped to the puppet user: the start fails now and then on
# a busy machine. Debian 13's unit waits a second first; both suites get its
# line. Read at the daemon-reload of pin_cpus.
settle_server_start() {
  local dropin=$1/etc/systemd/system/puppetserver.service.d/40-sandbox-start.conf
  mkdir -p "${dropin%/*}"
  cat >"$dropin" <<'EOF'
# Written by clone_army's sandbox/sandbox.sh: wait before checking the main
# process, as Debian 13's unit does (Debian 12's races the drop to its user).
[Service]
ExecStartPost=
ExecStartPost=sh -c "sleep 1; while ! head -c1 ${RUNTIME_DIRECTORY}/restart | grep -q '^1'; do kill -0 $MAINPID && sleep 1 || exit 1; done"
EOF
}

# The server's services and the clones on CPUs of their own (SERVER_CPUS,
# CLONE_CPUS), as drop-ins in the sandbox's /etc/systemd/system, before any of
# them starts. postgresql@.service is the unit Debian's clusters run as.
pin_cpus() {
  local name=$1 root=$2 unit cpus
  for unit in puppetserver.service puppetdb.service postgresql@.service puppet-clone-army@.service; do
    cpus=$SERVER_CPUS
    [ "$unit" != puppet-clone-army@.service ] || cpus=$CLONE_CPUS
    local dropin=$root/etc/systemd/system/$unit.d/50-sandbox-cpus.conf
    if [ -z "$cpus" ]; then
      rm -f "$dropin"
      continue
    fi
    mkdir -p "${dropin%/*}"
    printf "# Written by clone_army's sandbox/sandbox.sh: this unit's CPUs.\n[Service]\nCPUAffinity=%s\n" \
      "$cpus" >"$dropin"
  done
  exec_in "$name" systemctl daemon-reload
  [ -z "$SERVER_CPUS$CLONE_CPUS" ] ||
    log "sandbox $name: Puppet Server, PuppetDB and PostgreSQL on CPUs ${SERVER_CPUS:-any}, clones on CPUs ${CLONE_CPUS:-any}"
}

# PuppetDB's and PostgreSQL's settings, and the server's use of PuppetDB (it
# stores facts, catalogs and reports there). Everything binds SERVER_ADDR, as
# the server does, so sandboxes on other addresses do not collide on 5432/8081.
configure_puppetdb() {
  local root=$1 pgconf
  cat >"$root/etc/puppet/puppetdb.conf" <<EOF
# Written by clone_army's sandbox/sandbox.sh: the server's PuppetDB.
[main]
server_urls = https://$SERVER_NAME:$PUPPETDB_TLS_PORT
EOF
  cat >"$root/etc/puppet/routes.yaml" <<EOF
---
server:
  facts:
    terminus: puppetdb
    cache: yaml
EOF
  for pgconf in "$root"/etc/postgresql/*/main; do
    [ -d "$pgconf" ] || die "no PostgreSQL cluster in the sandbox rootfs (is postgresql in lib.sh's packages?)"
    mkdir -p "$pgconf/conf.d"
    printf "listen_addresses = '%s'\n" "$SERVER_ADDR" >"$pgconf/conf.d/clone-army-sandbox.conf"
    grep -qxF "host puppetdb puppetdb $SERVER_ADDR/32 scram-sha-256" "$pgconf/pg_hba.conf" ||
      printf 'host puppetdb puppetdb %s/32 scram-sha-256\n' "$SERVER_ADDR" >>"$pgconf/pg_hba.conf"
  done
  # Debian's package wrote a password into database.ini; the role is made with it.
  sed -i -E "s#^([[:space:]]*subname[[:space:]]*=[[:space:]]*//)[^/:]*(:[0-9]+)?/#\1$SERVER_ADDR:5432/#" \
    "$root/etc/puppetdb/conf.d/database.ini"
  grep -qF "//$SERVER_ADDR:5432/" "$root/etc/puppetdb/conf.d/database.ini" ||
    die "could not point PuppetDB at $SERVER_ADDR:5432 in /etc/puppetdb/conf.d/database.ini"
  cat >"$root/etc/puppetdb/conf.d/jetty.ini" <<EOF
# Written by clone_army's sandbox/sandbox.sh: loopback only, TLS with the server's certificate.
[jetty]
host = $SERVER_ADDR
port = $PUPPETDB_PORT
ssl-host = $SERVER_ADDR
ssl-port = $PUPPETDB_TLS_PORT
ssl-key = /etc/puppetdb/ssl/private.pem
ssl-cert = /etc/puppetdb/ssl/public.pem
ssl-ca-cert = /etc/puppetdb/ssl/ca.pem
EOF
}

# Once the server has made its CA and certificate: PuppetDB gets that
# certificate, PostgreSQL its role and database, and both start.
start_puppetdb() {
  local name=$1 started
  started=$SECONDS
  log "starting PostgreSQL and PuppetDB in sandbox $name (up to ${SERVER_TIMEOUT}s)"
  if ! EXEC_TIMEOUT=$SERVER_TIMEOUT exec_in "$name" bash -s -- "$SERVER_NAME" <<'SCRIPT'; then
set -euo pipefail
server=$1
ssl=$(puppet config print --section server ssldir)
install -d -o puppetdb -g puppetdb -m 0700 /etc/puppetdb/ssl
install -o puppetdb -g puppetdb -m 0600 "$ssl/private_keys/$server.pem" /etc/puppetdb/ssl/private.pem
install -o puppetdb -g puppetdb -m 0644 "$ssl/certs/$server.pem" /etc/puppetdb/ssl/public.pem
install -o puppetdb -g puppetdb -m 0644 "$ssl/certs/ca.pem" /etc/puppetdb/ssl/ca.pem
systemctl start postgresql.service
password=$(sed -n -E 's/^[[:space:]]*password[[:space:]]*=[[:space:]]*//p' /etc/puppetdb/conf.d/database.ini)
[ -n "$password" ] || { echo "no password in /etc/puppetdb/conf.d/database.ini" >&2; exit 1; }
psql_() { PGOPTIONS='--client-min-messages=warning' runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qtA "$@"; }
if [ -z "$(psql_ -d postgres -c "select 1 from pg_roles where rolname = 'puppetdb'")" ]; then
  psql_ -d postgres -v pw="$password" <<'SQL'
create role puppetdb login password :'pw';
create database puppetdb owner puppetdb;
SQL
fi
psql_ -d puppetdb -c 'create extension if not exists pg_trgm'
systemctl start puppetdb.service
SCRIPT
    journal_and_die "$name" "PuppetDB did not start in sandbox $name" puppetdb 'postgresql*'
  fi
  puppetdb_sandbox=$name
  wait_until "$SERVER_TIMEOUT" 2 puppetdb_answers ||
    journal_and_die "$name" "PuppetDB in sandbox $name did not answer on http://$SERVER_ADDR:$PUPPETDB_PORT within ${SERVER_TIMEOUT}s" puppetdb
  log "PuppetDB in sandbox $name answers after $((SECONDS - started)) s"
}

puppetdb_sandbox=
puppetdb_answers() {
  EXEC_TIMEOUT=10 exec_in "$puppetdb_sandbox" curl -fs --max-time 5 \
    "http://$SERVER_ADDR:$PUPPETDB_PORT/status/v1/services/puppetdb-status" 2>/dev/null |
    grep -q '"state":"running"'
}

# What went wrong with a service: the last journal lines of UNIT... in sandbox
# NAME, then die with MESSAGE.
journal_and_die() {
  local name=$1 message=$2 unit units=()
  shift 2
  for unit in "$@"; do units+=(-u "$unit"); done
  exec_in "$name" journalctl "${units[@]}" --no-pager -n 40 >&2 || true
  die "$message"
}

# Asked from inside the sandbox (same loopback), so this machine needs no curl.
server_answers() {
  [ "$(EXEC_TIMEOUT=10 exec_in "$server_sandbox" curl -fsk --max-time 5 \
    "https://$SERVER_ADDR:8140/status/v1/simple" 2>/dev/null)" = running ]
}

# --- down ------------------------------------------------------------------

cmd_down() {
  local name=$1 dir pid leader m left
  require_root
  valid_sandbox_name "$name"
  dir=$(sandbox_dir "$name")
  pid=$(nspawn_pid "$name")
  if [ -n "$pid" ]; then
    leader=$(leader_pid "$pid" || true)
    [ -z "$leader" ] || stop_clones_in_waves "$name"
    log "sandbox $name: powering off (nspawn PID $pid${leader:+, leader $leader})"
    # For a booted container nspawn turns SIGTERM into SIGRTMIN+3 for its
    # PID 1: an orderly poweroff that stops the clones and their mounts.
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_until "$STOP_TIMEOUT" 1 pid_gone "$pid"; then
      log "sandbox $name did not power off within ${STOP_TIMEOUT}s; killing it"
      # Killing the container's PID 1 kills its whole PID namespace, clones included.
      [ -z "$leader" ] || kill -KILL "$leader" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
      wait_until 30 1 pid_gone "$pid" || die "systemd-nspawn PID $pid survived SIGKILL"
    fi
  fi
  # Strays (a lost PID file, a half-started boot): never unmount or remove
  # the root of a container that still runs.
  local stray
  for stray in $(all_our_nspawns "$name"); do
    log "sandbox $name: stopping stray systemd-nspawn PID $stray"
    kill -TERM "$stray" 2>/dev/null || true
    wait_until 30 1 pid_gone "$stray" || kill -KILL "$stray" 2>/dev/null || true
    wait_until 10 1 pid_gone "$stray" || die "systemd-nspawn PID $stray survived SIGKILL; not removing $dir"
  done
  # `exec` callers (nsenter). A killed container's PID 1 cannot finish dying
  # while a process of its namespace is a zombie that a *stopped* nsenter
  # (outside) never reaps, so they go, and then the leader is waited for.
  if [ -n "${leader:-}" ]; then
    kill_nsenters_of "$leader"
    wait_until 15 1 pid_gone "$leader" || log "sandbox $name: its PID 1 ($leader) is still there"
  fi
  remove_cgroups "$name"
  [ -e "$dir" ] || return 0
  # Our overlay at root/, and anything else left below the state dir.
  while read -r m; do
    [ -n "$m" ] || continue
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done < <(mounts_below "$dir")
  left=$(mounts_below "$dir")
  [ -z "$left" ] || die "still mounted below $dir, not removing it: $left"
  rm -rf --one-file-system "$dir"
  log "sandbox $name is down"
}

# Gone, or a zombie (nothing left to stop; its parent may never reap it).
pid_gone() {
  [ ! -e "/proc/$1" ] || [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" = Z ]
}

# SIGKILL every `nsenter --target LEADER` (what exec_in runs).
kill_nsenters_of() {
  local leader=$1 p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = nsenter ] || continue
    if tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null |
      awk -v l="$leader" 'prev == "--target" && $0 == l { f = 1 } { prev = $0 } END { exit !f }'; then
      log "killing nsenter PID $p left from sandbox exec"
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
}

cmd_status() {
  local name=$1 pid leader
  pid=$(nspawn_pid "$name")
  if [ -z "$pid" ]; then
    echo "sandbox $name: down"
    return 3
  fi
  leader=$(leader_pid "$pid" || true)
  echo "sandbox $name: nspawn PID $pid, leader PID ${leader:-?}, systemd $(exec_in "$name" systemctl is-system-running 2>/dev/null || true)"
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 2 ] || usage
verb=$1 name=$2
shift 2
valid_sandbox_name "$name"
case "$verb" in
  up) cmd_up "$name" ;;
  down) cmd_down "$name" ;;
  server) cmd_server "$name" ;;
  restart) cmd_restart "$name" ;;
  status) cmd_status "$name" ;;
  exec)
    [ "${1:-}" != -- ] || shift
    [ $# -gt 0 ] || usage
    require_root
    exec_in "$name" "$@"
    ;;
  *) usage ;;
esac
