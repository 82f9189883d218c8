#!/usr/bin/env bash
# The benchmark's measurements that need the sandbox host's own view of
# systemd, cgroups and /proc. `bench.rb run` calls it inside the sandbox (the
# module checkout is bound read-only there), one verb per call:
#
#   inside.sh create-fleet BASE MASTER DOMAIN FIRST LAST RUNINTERVAL   clone-army clone create-many cloneFIRST..cloneLAST
#                                 (timer mode, phase i-1 of LAST)
#   inside.sh pss CLONE...        "<clone> <PSS KiB> <processes> <agent processes>" per clone: every process in the
#                                 clone's unit cgroup (its nspawn supervisor included), from /proc/<pid>/smaps_rollup
#   inside.sh cpu-usec CLONE...   usage_usec of each clone unit's cgroup (cpu.stat), a line each
#   inside.sh unit-cpu-usec UNIT  usage_usec of any unit's cgroup (the recorder's, say)
#   inside.sh wait-booted CLONE...  "<clone> <state> <seconds waited>" once each clone's own systemd has
#                                 finished booting (`systemctl --machine=CLONE is-system-running` says
#                                 running or degraded, asked every 0.2 s, BOOT_TIMEOUT s each)
#   inside.sh pid1-cpu            CPU seconds (user + system) the sandbox host's systemd has used so far
#   inside.sh host-run            one `puppet agent -t` on the sandbox host as a transient unit; prints its CPU seconds
#   inside.sh summaries CLONE...  clones whose agent has written a last_run_summary.yaml
#   inside.sh cpu-split           "<name> <usec>" lines: usage_usec of the server's, PuppetDB's and PostgreSQL's
#                                 units, of machine.slice (the clones) and system.slice, and the machine's
#                                 busy and total CPU time from /proc/stat (every core, whatever runs there)
set -euo pipefail

SERVER_NAME=${SERVER_NAME:-puppet}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}

# The cgroup2 tree: /sys/fs/cgroup, or its unified/ part on a hybrid (v1) host
# (systemd's "hybrid" layout), where only it has usage_usec for every cgroup.
cgroup2_root() {
  if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
    printf '/sys/fs/cgroup/unified\n'
  else
    printf '/sys/fs/cgroup\n'
  fi
}

unit_cgroup() {
  local cg
  cg=$(systemctl show -p ControlGroup --value "$1")
  [ -n "$cg" ] || { echo "inside.sh: $1 has no cgroup (not running?)" >&2; return 1; }
  [ -d "$(cgroup2_root)$cg" ] || { echo "inside.sh: no cgroup dir $(cgroup2_root)$cg" >&2; return 1; }
  printf '%s%s\n' "$(cgroup2_root)" "$cg"
}

clone_cgroup() { unit_cgroup "puppet-clone-army@$1.service"; }

# One `clone create-many` for them all, as the class grows a fleet: one lock and one
# daemon-reload, so the time per clone does not grow with the clones already there.
cmd_create_fleet() {
  local base=$1 server=$2 domain=$3 first=$4 n=$5 interval=$6 i list
  list=$(mktemp /tmp/create-fleet.XXXXXX)
  for ((i = first; i <= n; i++)); do
    printf '["clone%d","--base","%s","--server","%s","--certname","clone%d.%s","--run-mode","timer","--runinterval","%s","--phase-index","%d","--phase-count","%d"]\n' \
      "$i" "$base" "$server" "$i" "$domain" "$interval" $((i - 1)) "$n" >>"$list"
  done
  if ! clone-army clone create-many "$list" >/dev/null; then
    rm -f "$list"
    echo "inside.sh: clone create-many clone$first..clone$n failed" >&2
    return 1
  fi
  rm -f "$list"
}

cmd_pss() {
  local c cg pid v total procs agents comm
  for c in "$@"; do
    cg=$(clone_cgroup "$c")
    total=0 procs=0 agents=0
    while read -r pid; do
      case "$pid" in '' | 0) continue ;; esac # 0: a process of another PID namespace
      v=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup" 2>/dev/null) || continue
      [ -n "$v" ] || continue
      total=$((total + v)) procs=$((procs + 1))
      comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
      case "$comm" in puppet* | ruby*) agents=$((agents + 1)) ;; esac
    done < <(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)
    printf '%s %s %s %s\n' "$c" "$total" "$procs" "$agents"
  done
}

# A clone is booted when its systemd says so: `running`, or `degraded` (a unit
# failed, which a container may have, e.g. systemd-modules-load), not when its
# unit is active (nspawn launched). Asked every 0.2 s, without `--wait`: until the
# clone's own bus is up systemctl cannot reach it and says nothing, and a `--wait`
# that reached it early was seen to wait on long after the clone said `running`.
# Not booted after BOOT_TIMEOUT s: its last answer (`starting`, or `unknown`).
cmd_wait_booted() {
  local c state answer start deadline
  for c in "$@"; do
    start=$SECONDS
    deadline=$((start + BOOT_TIMEOUT))
    state=''
    while :; do
      answer=$(timeout 10 systemctl --machine="$c" is-system-running 2>/dev/null) || true
      [ -z "$answer" ] || state=$answer
      case "$state" in running | degraded) break ;; esac
      ((SECONDS < deadline)) || break
      sleep 0.2
    done
    printf '%s %s %s\n' "$c" "${state:-unknown}" $((SECONDS - start))
  done
}

cmd_cpu_usec() {
  local clone
  for clone in "$@"; do
    awk '$1 == "usage_usec" { print $2 }' "$(clone_cgroup "$clone")/cpu.stat"
  done
}

cmd_unit_cpu_usec() {
  awk '$1 == "usage_usec" { print $2 }' "$(unit_cgroup "$1")/cpu.stat"
}

# PID 1 does every daemon-reload, unit start and mount-table update of the host on
# one thread: what it used over a batch is the host-side cost of the batch.
cmd_pid1_cpu() {
  awk -v tck="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / tck }' /proc/1/stat
}

# The same run a clone does, on the sandbox host itself, as a transient unit:
# the unit's shell reads its own cgroup's usage_usec once the agent has ended
# (the cgroup's usage includes its exited processes). systemd-run's own "CPU time
# consumed" is not given in a sandbox whose cgroup has no cpu controller.
cmd_host_run() {
  local usec
  # shellcheck disable=SC2016 # expanded by the unit's shell
  usec=$(timeout 600 systemd-run --unit="bench-host-run-$$-$RANDOM" --collect --wait --pipe --quiet -- \
    bash -c 'puppet agent -t --server "$1" --color=false >/dev/null 2>&1
      awk '"'"'$1 == "usage_usec" { print $2 }'"'"' "$2$(sed -n "s/^0:://p" /proc/self/cgroup)/cpu.stat"' \
    bash "$SERVER_NAME" "$(cgroup2_root)" </dev/null)
  [[ $usec =~ ^[0-9]+$ ]] || { echo "inside.sh: no CPU figure from the host run ('$usec')" >&2; return 1; }
  awk -v u="$usec" 'BEGIN { printf "%.3f\n", u / 1e6 }'
}

# A unit that is not there (no PuppetDB on this suite) is left out, not an error:
# the figures add up the parts that are there.
usec_of() {
  local cg
  cg=$(systemctl show -p ControlGroup --value "$1" 2>/dev/null) || return 0
  [ -n "$cg" ] && [ -f "$(cgroup2_root)$cg/cpu.stat" ] || return 0
  awk -v n="$2" '$1 == "usage_usec" { print n, $2 }' "$(cgroup2_root)$cg/cpu.stat"
}

cmd_cpu_split() {
  local pg
  usec_of puppetserver.service server
  usec_of puppetdb.service puppetdb
  for pg in $(systemctl list-units --plain --no-legend 'postgresql@*.service' | awk '{ print $1 }'); do
    usec_of "$pg" postgresql
  done
  usec_of machine.slice clones
  usec_of system.slice system
  awk -v tck="$(getconf CLK_TCK)" '$1 == "cpu" {
    busy = $2 + $3 + $4 + $7 + $8 + $9; total = busy + $5 + $6
    printf "host_busy %d\nhost_total %d\n", busy * 1e6 / tck, total * 1e6 / tck }' /proc/stat
}

cmd_summaries() {
  local c
  for c in "$@"; do
    [ ! -f "/var/lib/puppet-clone-army/$c-overlay/var/cache/puppet/public/last_run_summary.yaml" ] || printf '%s\n' "$c"
  done
}

verb=${1:-}
shift || true
case "$verb" in
  create-fleet) cmd_create_fleet "$@" ;;
  pss) cmd_pss "$@" ;;
  wait-booted) cmd_wait_booted "$@" ;;
  cpu-usec) cmd_cpu_usec "$@" ;;
  unit-cpu-usec) cmd_unit_cpu_usec "$@" ;;
  pid1-cpu) cmd_pid1_cpu ;;
  host-run) cmd_host_run ;;
  summaries) cmd_summaries "$@" ;;
  cpu-split) cmd_cpu_split ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
