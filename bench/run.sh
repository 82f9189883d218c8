#!/usr/bin/env bash
# `make bench`: the fleet's performance benchmark. Boots a sandbox host "bench" (sandbox/)
# with Debian's Puppet Server on SERVER_ADDR (127.0.0.5, so it runs beside the
# acceptance suites' servers), applies the class clone_army (with its recorder,
# record => true), measures, and writes bench/results/<UTC date-time>.json and .md
# (the table is printed too), the raw readings and the recorder's timeline in
# <UTC date-time>.raw/, and .html (the page of the recorded run, not committed:
# make bench-pages makes it again from the timeline).
# Everything it started is torn down on exit, also on failure.
#
# This script drives the sandbox (sandbox/sandbox.sh) and takes the readings; every
# figure made of them (medians, shares, counts, the results' JSON and table) is
# computed by bench/bench.rb, which make bench-derive also uses on committed results.
#
# The fleet grows in steps, as a user grows one: the class with 50 clones and a
# timed no-op apply, 100 and a timed no-op apply, 40 new clones made by the helper
# on the existing base (seconds per clone), then the rest up to CLONES in one apply
# with ramp_up. Steps above CLONES are left out.
#
# BENCH=growth measures the making of a fleet alone instead: after the base, clones
# are added GROW_BATCH at a time up to CLONES, each batch made with one create-many,
# started with one clone start and waited for until every one has booted (seconds
# per clone at each size), then the idle memory of the whole fleet.
#
# Environment (the scale used is recorded in the JSON):
#   BENCH         fleet (default: the steps above) or growth
#   CLONES        the large fleet: timer-mode clones (default 500; e.g. 40 for a quick run)
#   GROW_BATCH    growth: clones added a batch (default 100)
#   GROW_RUNINTERVAL  growth: the clones' interval (default 86400: their phased first
#                 runs, the fleet's interval apart over CLONES, leave the boots alone)
#   RUNINTERVAL   the fleet's interval in seconds (default 3.6 * CLONES, at least 60: one run
#                 every 3.6 s, the issue's 500 clones at 1800 s)
#   RAMP_UP       ramp_up of the last step's apply, seconds (default 300)
#   K             clones averaged for idle memory, per mode (default 3)
#   CPU_REPS      agent runs per side for the CPU ratio (default 5; a median takes at least 3)
#   NOOP_REPS     timed no-op applies (each beside an empty apply) per step (default 5; at least 3)
#   START_TIMEOUT seconds allowed for a step's clones to be running (default 120 + CLONES)
#   BENCH_DRY_RUN 1: check the settings, print what the run would do, start nothing
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=sandbox/lib.sh
source "$repo/sandbox/lib.sh"

NAME=bench
# A second sandbox host with no fleet, for the agent's CPU per run on a plain host.
PLAIN=benchplain
export SERVER_ADDR=${SERVER_ADDR:-127.0.0.5}
export SERVER_NAME=${SERVER_NAME:-puppet}
export MODULE_DIR=$repo
BENCH=${BENCH:-fleet}
CLONES=${CLONES:-500}
GROW_BATCH=${GROW_BATCH:-100}
GROW_RUNINTERVAL=${GROW_RUNINTERVAL:-86400}
# growth: seconds the running fleet's idle CPU is read over before each batch
GROW_IDLE_WINDOW=10
RUNINTERVAL=${RUNINTERVAL:-$((CLONES * 36 / 10 > 60 ? CLONES * 36 / 10 : 60))}
RAMP_UP=${RAMP_UP:-300}
K=${K:-3}
CPU_REPS=${CPU_REPS:-5}
NOOP_REPS=${NOOP_REPS:-5}
START_TIMEOUT=${START_TIMEOUT:-$((120 + CLONES))}
APPLY_TIMEOUT=${APPLY_TIMEOUT:-1800}
DOMAIN=$NAME.sandbox.test
INSIDE=/etc/puppet/code/modules/clone_army/bench/inside.sh
RESULTS=$here/results
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
JSON=$RESULTS/$STAMP.json
MD=$RESULTS/$STAMP.md
PAGE=$RESULTS/$STAMP.html
RECORDER=puppet-clone-army-record.service
# Made by main (a dry run or a refused setting leaves nothing behind).
WORK=''

# The targets of the figures both kinds of run take.
CREATE_BOOT_TARGET=0.3 # seconds per clone created and booted
PSS_TIMER_TARGET=8     # MiB of an idle timer-mode clone
GROW_FLAT_TARGET=1.5   # growth: the last batch's seconds per clone over the first's

# The figures' arithmetic: bench/bench.rb VERB ... (its header lists the verbs).
bench_rb() { ruby "$here/bench.rb" "$@"; }

[[ $BENCH =~ ^(fleet|growth)$ ]] || die "BENCH must be fleet or growth, not '$BENCH'"
for v in CLONES RUNINTERVAL K CPU_REPS NOOP_REPS START_TIMEOUT GROW_BATCH GROW_RUNINTERVAL; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive number, not '${!v}'"
done
MIN_RUNS=$(bench_rb min-runs)
for v in CPU_REPS NOOP_REPS; do
  ((${!v} >= MIN_RUNS)) || die "$v must be at least $MIN_RUNS (the runs a median is taken of), not '${!v}'"
done
[[ $RAMP_UP =~ ^[0-9]+$ ]] || die "RAMP_UP must be a number of seconds, not '$RAMP_UP'"
((RUNINTERVAL >= 60)) || die "RUNINTERVAL must be at least 60 (clone-army's minimum)"
((GROW_RUNINTERVAL >= 60)) || die "GROW_RUNINTERVAL must be at least 60 (clone-army's minimum)"

blog() { printf '%s [bench] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
sandbox() { bash "$repo/sandbox/sandbox.sh" "$@"; }
# A command inside the sandbox host, bounded (EXEC_TIMEOUT, default 600 s).
inside() { EXEC_TIMEOUT=${EXEC_TIMEOUT:-600} sandbox exec "$NAME" "$@"; }
# A command inside the plain sandbox host, bounded as inside.
plain() { EXEC_TIMEOUT=${EXEC_TIMEOUT:-600} sandbox exec "$PLAIN" "$@"; }
now() { date +%s.%N; }
# Arithmetic on two or three readings (a difference, a rate): calc '<expr>' [var=value...]
calc() {
  local expr=$1
  shift
  awk "$@" "BEGIN { printf \"%.3f\", $expr }"
}

# --- results ---------------------------------------------------------------
# Figures accumulate as JSON lines in $WORK/figures; scale and notes in $WORK/meta.

# fig KEY LABEL VALUE UNIT TARGET MET [NOTE]   (VALUE a number or null; MET true|false|null)
fig() {
  bench_rb fig "$1" "$2" "${3:-null}" "$4" "$5" "$6" "${7:-}" >>"$WORK/figures"
  blog "$2: ${3:-null} $4 (target: $5; met: $6)"
}
meta() { bench_rb meta "$1" "$2" >>"$WORK/meta"; }
met_le() { bench_rb met-le "$1" "$2"; }

write_results() {
  local status=$1
  mkdir -p "$RESULTS"
  touch "$WORK/figures" "$WORK/meta"
  bench_rb write "$WORK" "$RESULTS" "$STAMP" "$status"
  # The raw measurements, to check a figure later (make bench-derive).
  mkdir -p "$RESULTS/$STAMP.raw"
  cp "$WORK"/pss-* "$WORK"/booted-* "$WORK"/runs "$WORK"/reports "$WORK"/times "$WORK"/report.json "$WORK"/start.json \
    "$RESULTS/$STAMP.raw/" 2>/dev/null || true
  blog "wrote $JSON and $MD"
  write_page || blog "no page of the recorded run: the recorder's timeline could not be read"
}

# The recorder's timeline, kept with the raw data (compressed), and the page of the
# run drawn from it by the helper, next to the JSON. The timeline is read through the
# sandbox's own gzip, so no path inside the sandbox is followed from here.
write_page() {
  local timeline=$RESULTS/$STAMP.raw/timeline.jsonl.gz
  inside gzip -c "$RECORD_TIMELINE" >"$timeline.tmp" || { rm -f "$timeline.tmp"; return 1; }
  mv "$timeline.tmp" "$timeline"
  gzip -dc "$timeline" >"$WORK/timeline.jsonl"
  "$repo/files/clone-army" report --from "$WORK/timeline.jsonl" --format html --output "$PAGE" >"$WORK/page.json" || return 1
  blog "wrote $PAGE ($(jq -r '.result.samples' "$WORK/page.json") samples)"
}

# The recorder's CPU time so far (usage_usec of its unit's cgroup, as for the clones),
# its PID and the time of the reading.
recorder_cpu() {
  printf '%s %s %s\n' "$(inside bash "$INSIDE" unit-cpu-usec "$RECORDER")" \
    "$(inside systemctl show -p MainPID --value "$RECORDER")" "$(now)"
}

# The recorder's share of one core from the reading in $WORK/recorder-start to now,
# the whole fleet running; NOTE says over what window.
recorder_figure() {
  local note=$1 cpu_a pid_a wall_a cpu_b pid_b wall_b secs met
  read -r cpu_a pid_a wall_a <"$WORK/recorder-start"
  read -r cpu_b pid_b wall_b < <(recorder_cpu)
  local label="the recorder's CPU with all $CLONES clones running (its default period)"
  if [[ $cpu_a =~ ^[0-9]+$ && $cpu_b =~ ^[0-9]+$ ]] && [ "$pid_a" = "$pid_b" ] && [ "$pid_a" != 0 ]; then
    secs=$(calc '(b - a) / 1e4 / (wb - wa)' -v a="$cpu_a" -v b="$cpu_b" -v wa="$wall_a" -v wb="$wall_b")
    met=$(awk -v v="$secs" 'BEGIN { print (v < 1) ? "true" : "false" }')
    fig recorder_cpu "$label" "$secs" "% of one core" "< 1" "$met" \
      "$(calc '(b - a) / 1e6' -v a="$cpu_a" -v b="$cpu_b") CPU-s over $(calc 'b - a' -v a="$wall_a" -v b="$wall_b") s, $note"
  else
    fig recorder_cpu "$label" null "% of one core" "< 1" null \
      "not measured: usage_usec ${cpu_a:-?} -> ${cpu_b:-?}, MainPID ${pid_a:-?} -> ${pid_b:-?}"
  fi
}

# For cleanup: the recorder's figure so far, when the run ended inside its window.
recorder_partial() {
  [ -s "$WORK/recorder-start" ] || return 0
  grep -q '"key":"recorder_cpu"' "$WORK/figures" 2>/dev/null && return 0
  recorder_figure "partial: the run ended inside the check-in window"
}

finished=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if ((!finished)); then
    blog "failed (exit $rc); writing what was measured"
    stop_runs_watcher || true
    checkin_partial || true
    recorder_partial || true
    write_results "failed (exit $rc)" || true
  fi
  blog "tearing down sandboxes $PLAIN and $NAME"
  sandbox down "$PLAIN" || rc=1
  sandbox down "$NAME" || rc=1
  rm -rf "$WORK"
  local s
  for s in "$NAME" "$PLAIN"; do
    if awk -v p="$(sandbox_dir "$s")" 'index($5, p) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
      blog "warning: mounts of sandbox $s are left"
      rc=1
    fi
  done
  exit "$rc"
}

# --- steps -------------------------------------------------------------------

# apply_class NUM_CLONES [RAMP_UP]: sets APPLY_SECS (wall seconds) and APPLY_RC (0 no change, 2 changes).
APPLY_SECS='' APPLY_RC=''
apply_class() {
  local n=$1 ramp_up=${2:-0} t0 manifest
  manifest="class { 'clone_army': server => '$SERVER_NAME', num_clones => $n, run_mode => 'timer', runinterval => $RUNINTERVAL, ramp_up => $ramp_up, record => true }"
  t0=$(now)
  APPLY_RC=0
  EXEC_TIMEOUT=$APPLY_TIMEOUT inside puppet apply --detailed-exitcodes --color=false -e "$manifest" >"$WORK/apply.log" 2>&1 || APPLY_RC=$?
  APPLY_SECS=$(calc 'b - a' -v a="$t0" -v b="$(now)")
  if [ "$APPLY_RC" != 0 ] && [ "$APPLY_RC" != 2 ]; then
    tail -n 30 "$WORK/apply.log" >&2
    die "puppet apply with num_clones => $n failed (exit $APPLY_RC)"
  fi
}

mem_used_kib() { awk '/^MemTotal:/ { t = $2 } /^MemAvailable:/ { a = $2 } END { print t - a }' /proc/meminfo; }

# The fleet's clones: the class names them clone1..N; the bench's own (benchcpu, benchd*) are apart.
FLEET_CLONES='^clone[0-9]+$'

running_count() {
  inside clone-army clone list | jq -r --arg re "$FLEET_CLONES" \
    '[.result.clones[] | select((.name | test($re)) and .state == "running")] | length'
}

# wait_running N: polls (bounded by START_TIMEOUT) until N fleet clones run; sets N_RUN.
N_RUN=''
wait_running() {
  local n=$1 deadline=$((SECONDS + START_TIMEOUT))
  while N_RUN=$(running_count) && ((N_RUN < n && SECONDS < deadline)); do sleep 2; done
  [[ $N_RUN =~ ^[0-9]+$ ]] || die "could not list the clones"
}

# median: the median of the runs on stdin (at least MIN_RUNS of them).
median() { bench_rb median; }

# time_empty_apply: sets EMPTY_SECS to the wall seconds of `puppet apply -e ''` in the
# sandbox: Puppet's own start, facts and (empty) catalog, without the class.
EMPTY_SECS=''
time_empty_apply() {
  local t0 rc=0
  t0=$(now)
  EXEC_TIMEOUT=$APPLY_TIMEOUT inside puppet apply --detailed-exitcodes --color=false -e '' >"$WORK/empty.log" 2>&1 || rc=$?
  EMPTY_SECS=$(calc 'b - a' -v a="$t0" -v b="$(now)")
  [ "$rc" = 0 ] || die "puppet apply -e '' failed (exit $rc): $(tail -n 5 "$WORK/empty.log")"
}

# grow_and_time_noop N: the class with N clones, then NOOP_REPS timed no-op applies,
# each beside a timed empty `puppet apply -e ''` (alternating, under the same fleet
# load), so that the class's own share of the time is seen apart from Puppet's.
grow_and_time_noop() {
  local n=$1 target="–" m=null i noop=() empty=() rcs=() noop_s empty_s
  blog "puppet apply: the fleet grows to $n clones"
  apply_class "$n"
  wait_running "$n"
  ((N_RUN >= n)) || die "only $N_RUN of $n clones running after ${START_TIMEOUT}s"
  for ((i = 1; i <= NOOP_REPS; i++)); do
    blog "puppet apply at num_clones => $n again: timed no-op $i of $NOOP_REPS, and an empty apply"
    apply_class "$n"
    noop+=("$APPLY_SECS") rcs+=("$APPLY_RC")
    time_empty_apply
    empty+=("$EMPTY_SECS")
  done
  noop_s=$(printf '%s\n' "${noop[@]}" | median)
  empty_s=$(printf '%s\n' "${empty[@]}" | median)
  if ((n >= 100)); then
    target="≤ 5"
    m=$(met_le "$noop_s" 5)
  fi
  [[ " ${rcs[*]} " =~ ^(\ 0)+\ $ ]] || m=false
  fig "noop_apply_$n" "no-op puppet apply at $n clones (median of $NOOP_REPS)" "$noop_s" s "$target" "$m" \
    "$(bench_rb quote "${noop[@]}"); exits: ${rcs[*]}"
  fig "empty_apply_$n" "puppet apply -e '' beside it, same fleet load (median of $NOOP_REPS)" "$empty_s" s "–" null \
    "$(bench_rb quote "${empty[@]}")"
  fig "noop_class_share_$n" "the class's own share at $n clones: no-op minus empty apply" \
    "$(calc 'a - b' -v a="$noop_s" -v b="$empty_s")" s "–" null "medians"
}

# Runs: from the last step's apply on, a watcher in the background reads every clone's
# last run (`clone-army report`) every 15 s and keeps each one it sees in $WORK/runs as
# "<clone> <end> <succeeded> <total seconds>". Intervals are at least 60 s, so no run is missed, and the
# figures below are the runs' own end times, whenever the bench gets to read them.
RUNS_WATCHER=''
start_runs_watcher() {
  rm -f "$WORK/runs.stop"
  : >>"$WORK/runs"
  (
    while [ ! -e "$WORK/runs.stop" ]; do
      inside clone-army report 2>/dev/null | jq -r --argjson p "${APPLY_T0%.*}" --arg re "$FLEET_CLONES" '
        (.result.clones // [])[] | select((.name | test($re)) and .last_run != null and .last_run >= $p)
        | "\(.name) \(.last_run) \(.succeeded) \(.total_time // 0)"' >>"$WORK/runs" 2>/dev/null || true
      sleep 15
    done
  ) &
  RUNS_WATCHER=$!
}
# Stops the watcher (it ends within one poll) and waits for it.
stop_runs_watcher() {
  [ -n "$RUNS_WATCHER" ] || return 0
  touch "$WORK/runs.stop"
  wait "$RUNS_WATCHER" 2>/dev/null || true
  RUNS_WATCHER=''
}

# Check-ins: every clone must finish a successful run within one interval (+ 60 s) of
# the time the whole fleet runs (FLEET_T0), as its timer runs it once per interval (a
# report PUT alone would count failed runs too). Waited for in short steps until every
# clone has or the window is over; each step leaves the count in $WORK/checkin, so an
# interrupted run still records how far it got.
# Also: one puppet apply to a fleet checked in, from the last step's apply (APPLY_T0)
# to the end of the run that made the last clone's first check-in since it (ALL_IN_AT).
FLEET_T0='' CHECKIN_END='' APPLY_T0='' ALL_IN_AT=''
# Clones with a successful run that ended between FROM and TO (epoch seconds).
checked_in_between() { bench_rb checked-in "$1" "$2" <"$WORK/runs"; }
# The end of the last clone's first successful run since the apply; empty until every
# one of CLONES has one.
all_in_at() { bench_rb all-in-at "$APPLY_T0" "$CLONES" <"$WORK/runs"; }

poll_checkins() {
  local ok
  while :; do
    ok=$(checked_in_between "${FLEET_T0%.*}" "${CHECKIN_END%.*}")
    printf '%s %s\n' "$ok" "$(calc 'n - a' -v n="$(now)" -v a="$FLEET_T0")" >"$WORK/checkin"
    ((ok >= CLONES)) && break
    awk -v n="$(now)" -v e="$CHECKIN_END" 'BEGIN { exit !(n > e + 20) }' && break
    sleep 15
  done
  fig fleet_checkin "large fleet: clones with a successful run within one interval of all running" "$ok" "of $CLONES" "all $CLONES" \
    "$([ "$ok" -ge "$CLONES" ] && echo true || echo false)" \
    "window ${RUNINTERVAL} s + 60 s from all running; counted $(cut -d' ' -f2 "$WORK/checkin") s in, from the runs the watcher saw"
  ALL_IN_AT=$(all_in_at)
  if [ -n "$ALL_IN_AT" ]; then
    fig apply_to_checked_in "large fleet: one puppet apply to all $CLONES checked in (last step, ramp_up $RAMP_UP s)" \
      "$(calc 'b - a' -v a="$APPLY_T0" -v b="$ALL_IN_AT")" s "–" null \
      "from the apply's start to the end of the last clone's first successful run since"
  else
    fig apply_to_checked_in "large fleet: one puppet apply to all $CLONES checked in (last step, ramp_up $RAMP_UP s)" null s "–" null \
      "not every clone had a successful run by the window's end"
  fi
}

# For cleanup: the check-in count so far, when the run ended before the window closed.
checkin_partial() {
  [ -s "$WORK/checkin" ] || return 0
  grep -q '"key":"fleet_checkin"' "$WORK/figures" 2>/dev/null && return 0
  local ok at
  read -r ok at <"$WORK/checkin"
  fig fleet_checkin "large fleet: clones with a successful run within one interval of all running" "$ok" "of $CLONES" "all $CLONES" \
    null "partial: the run ended $at s into the window of $RUNINTERVAL s + 60 s"
}

# What the fleet asked of the server: the catalog size of the clones' last runs and the
# server's compile time (its mean over every compile since it started, which the
# fleet's runs dominate), from one report with the server's view.
catalog_figures() {
  inside clone-army report --server "https://$SERVER_NAME:8140" --ca-cert "$SERVER_CA_CERT" \
    >"$WORK/server-report.json" 2>/dev/null || true
  local resources compile
  resources=$(jq -r --arg re "$FLEET_CLONES" '(.result.clones // [])[] | select(.name | test($re)) | .resources // empty' \
    "$WORK/server-report.json" 2>/dev/null | bench_rb median-any 2>/dev/null || echo null)
  compile=$(jq -r '.result.server.compile.mean_ms // "null"' "$WORK/server-report.json" 2>/dev/null || echo null)
  fig catalog_resources "catalog size of the fleet's last runs (median)" "$resources" resources "–" null \
    "the summaries' resources.total"
  fig compile_mean "the server's compile time (mean since it started)" "$compile" ms "–" null \
    "$(jq -r '.result.server | "\(.compile.count // "?") compiles; JRuby wait mean \(.jruby.average_wait_time_ms // "?") ms; \(.error // "")"' \
      "$WORK/server-report.json" 2>/dev/null || echo "no server view")"
}

# Average PSS (MiB) over lines "<clone> <kib> <procs> <agents>" on stdin.
avg_pss_mib() { bench_rb pss-avg; }

# add_and_boot FIRST LAST RUNINTERVAL: cloneFIRST..cloneLAST made on the base with one
# create-many (timer mode, phase i-1 of LAST), as the class makes new clones, started
# with one clone start, and waited for until every one runs and its own systemd has
# finished booting (an active unit only means nspawn launched). Sets ADD_NEW, ADD_SECS
# (seconds per clone, from the making to the last booted), ADD_NOTE (the three parts,
# the CPU the sandbox's systemd used making them and starting and booting them, and
# what its other services used meanwhile),
# ADD_OK (every one running and booted) and ADD_MET (ADD_OK, within CREATE_BOOT_TARGET).
BASE='' ADD_NEW='' ADD_SECS='' ADD_NOTE='' ADD_OK='' ADD_MET=''
add_and_boot() {
  local first=$1 last=$2 interval=$3 t0 t1 t1s t2 t3 booted p0 p1 p3 s0 s3 boot_cpu idle=''
  ADD_NEW=$((last - first + 1))
  # What the clones already running take while idle is CPU the batch's boots do not get.
  if ((first > 1)); then
    idle=$(inside bash "$INSIDE" unit-cpu-usec machine.slice)
    sleep "$GROW_IDLE_WINDOW"
    idle=$(calc '(b - a) / w / 10000' -v a="$idle" -v b="$(inside bash "$INSIDE" unit-cpu-usec machine.slice)" \
      -v w="$GROW_IDLE_WINDOW")
  fi
  blog "creating $ADD_NEW timer-mode clones clone$first..clone$last on base $BASE"
  p0=$(inside bash "$INSIDE" pid1-cpu)
  s0=$(inside bash "$INSIDE" unit-cpu-usec system.slice)
  t0=$(now)
  EXEC_TIMEOUT=$((60 + 5 * ADD_NEW)) inside bash "$INSIDE" create-fleet "$BASE" "$SERVER_NAME" "$DOMAIN" \
    "$first" "$last" "$interval" 2>>"$WORK/helper.err"
  t1=$(now)
  p1=$(inside bash "$INSIDE" pid1-cpu)
  # The reading is not the batch's: the start is timed from after it.
  t1s=$(now)
  # shellcheck disable=SC2046 # the names are clone<N>
  if ! EXEC_TIMEOUT=$START_TIMEOUT inside clone-army clone start $(seq -f 'clone%g' "$first" "$last") \
    >"$WORK/start.json" 2>>"$WORK/helper.err"; then
    blog "clone start did not report every clone active; polling up to ${START_TIMEOUT}s"
    jq -r '.error.message // empty' "$WORK/start.json" >&2 || true
  fi
  wait_running "$last"
  t2=$(now)
  # shellcheck disable=SC2046 # the names are clone<N>
  EXEC_TIMEOUT=$((START_TIMEOUT + 60)) inside env BOOT_TIMEOUT="$START_TIMEOUT" \
    bash "$INSIDE" wait-booted $(seq -f 'clone%g' "$first" "$last") >"$WORK/booted"
  t3=$(now)
  p3=$(inside bash "$INSIDE" pid1-cpu)
  s3=$(inside bash "$INSIDE" unit-cpu-usec system.slice)
  cp "$WORK/booted" "$WORK/booted-$first"
  booted=$(awk '$2 == "running" || $2 == "degraded"' "$WORK/booted" | wc -l)
  # The median, as the batch's first clone may have run its agent already (phase 0).
  # shellcheck disable=SC2046 # the names are clone<N>
  boot_cpu=$(inside bash "$INSIDE" cpu-usec $(seq -f 'clone%g' "$first" "$last") | bench_rb median-any)
  ADD_SECS=$(calc '((b - a) + (d - c)) / n' -v a="$t0" -v b="$t1" -v c="$t1s" -v d="$t3" -v n="$ADD_NEW")
  ADD_NOTE="create $(calc 'b - a' -v a="$t0" -v b="$t1") s + start to active $(calc 'b - a' -v a="$t1s" -v b="$t2") s"
  ADD_NOTE+=" + to booted (is-system-running) $(calc 'b - a' -v a="$t2" -v b="$t3") s; $booted of $ADD_NEW booted;"
  ADD_NOTE+=" the host's systemd used $(calc 'b - a' -v a="$p0" -v b="$p1") CPU-s making them"
  ADD_NOTE+=" and $(calc 'b - a' -v a="$p1" -v b="$p3") CPU-s starting and booting them;"
  ADD_NOTE+=" the host's services (system.slice: the bus, machined, the journal) $(calc '(b - a) / 1000000' -v a="$s0" -v b="$s3") CPU-s;"
  ADD_NOTE+=" a clone used $(calc 'u / 1000000' -v u="$boot_cpu") CPU-s booting (median)"
  [ -z "$idle" ] || ADD_NOTE+="; before the batch the $((first - 1)) running clones used $idle % of a core, idle"
  ADD_OK=$([ "$N_RUN" -ge "$last" ] && [ "$booted" -ge "$ADD_NEW" ] && echo true || echo false)
  ADD_MET=$([ "$ADD_OK" = true ] && met_le "$ADD_SECS" "$CREATE_BOOT_TARGET" || echo false)
}

# fleet_memory_figures MEM0 N: idle memory of K of clone1..N with no agent run at the
# moment, the PSS of all N, and the machine's memory growth since MEM0 (KiB used before
# the fleet).
fleet_memory_figures() {
  local mem0=$1 n=$2 v
  # shellcheck disable=SC2046 # the names are clone<N>
  inside bash "$INSIDE" pss $(seq -f 'clone%g' 1 "$n") >"$WORK/pss-timer"
  bench_rb pss-idle "$K" <"$WORK/pss-timer" >"$WORK/pss-timer-idle"
  v=$(avg_pss_mib <"$WORK/pss-timer-idle")
  fig pss_timer "idle memory per clone, timer mode (PSS, avg of $K)" "$v" MiB "≤ $PSS_TIMER_TARGET" \
    "$(met_le "$v" "$PSS_TIMER_TARGET")" "$(bench_rb pss-note <"$WORK/pss-timer-idle")"
  v=$(bench_rb pss-total <"$WORK/pss-timer")
  fig fleet_pss "large fleet: PSS of all $n clones" "$v" MiB "–" null \
    "$(calc 's / n' -v s="$v" -v n="$n") MiB per clone, runs in progress included"
  v=$(awk -v a="$mem0" -v b="$(mem_used_kib)" 'BEGIN { printf "%.0f", (b - a) / 1024 }')
  fig fleet_mem "large fleet: machine memory used, growth since before the fleet" "$v" MiB "–" null \
    "MemTotal − MemAvailable; the machine is shared, so other work is in it"
}

# BENCH=growth: the fleet made GROW_BATCH clones at a time up to CLONES, each batch
# beside the ones before, its seconds per clone a figure; flat when the last batch's is
# within GROW_FLAT_TARGET times the first's. Growing stops at a batch that did not all boot.
grow_in_batches() {
  local mem0 first last first_secs='' last_secs='' ratio running=() secs=()
  meta grow_batch "$GROW_BATCH"
  meta grow_runinterval "$GROW_RUNINTERVAL"
  mem0=$(mem_used_kib)
  for ((first = 1; first <= CLONES; first += GROW_BATCH)); do
    last=$((first + GROW_BATCH - 1 < CLONES ? first + GROW_BATCH - 1 : CLONES))
    add_and_boot "$first" "$last" "$GROW_RUNINTERVAL"
    fig "grow_$((first - 1))" "seconds per clone created and booted ($ADD_NEW new clones, $((first - 1)) running)" \
      "$ADD_SECS" s "≤ $CREATE_BOOT_TARGET" "$ADD_MET" "$ADD_NOTE"
    first_secs=${first_secs:-$ADD_SECS}
    last_secs=$ADD_SECS
    running+=("$((first - 1))") secs+=("$ADD_SECS")
    if [ "$ADD_OK" != true ]; then
      blog "not every clone of clone$first..clone$last runs and booted: the fleet grows no further"
      break
    fi
  done
  ratio=$(calc 'b / a' -v a="$first_secs" -v b="$last_secs")
  fig grow_flat "seconds per clone, last batch / first batch (clone$last running)" "$ratio" "" "≤ $GROW_FLAT_TARGET" \
    "$([ "$ADD_OK" = true ] && ((last == CLONES)) && met_le "$ratio" "$GROW_FLAT_TARGET" || echo false)" \
    "$first_secs s with none running, $last_secs s in the last batch"
  # The trend over every batch, not only its ends: seconds per clone added per 1000 running.
  local slope
  slope=$(bench_rb slope "${running[*]}" "${secs[*]}")
  [ "$slope" = null ] || slope=$(calc 's * 1000' -v s="$slope")
  fig grow_slope "seconds per clone, fitted growth per 1000 clones running (least squares over ${#secs[@]} batches)" \
    "$slope" s "–" null "batches at ${running[*]} running: ${secs[*]} s"
  fleet_memory_figures "$mem0" "$last"
}

# The fleet's steps (FLEET_STEPS: 50, 100, 40 more, then the rest, none above CLONES).
fleet_steps() {
  local step1 step2 step3
  step1=$((CLONES < 50 ? CLONES : 50))
  step2=$((CLONES < 100 ? CLONES : 100))
  step3=$((step2 + 40 < CLONES ? step2 + 40 : CLONES))
  FLEET_STEPS=("$step1" "$step2" "$step3" "$CLONES")
}

# BENCH_DRY_RUN=1: what the run would do with these settings, in order; nothing runs.
dry_run() {
  local first last
  printf 'bench %s, CLONES=%s RUNINTERVAL=%s RAMP_UP=%s K=%s CPU_REPS=%s NOOP_REPS=%s SERVER_ADDR=%s\n' \
    "$BENCH" "$CLONES" "$RUNINTERVAL" "$RAMP_UP" "$K" "$CPU_REPS" "$NOOP_REPS" "$SERVER_ADDR"
  printf 'would run: %s\n' "sandbox.sh down $PLAIN" "sandbox.sh down $NAME" "sandbox.sh up $NAME" "sandbox.sh server $NAME" \
    "puppet apply (in $NAME): class clone_army, num_clones => 0, record => true"
  if [ "$BENCH" = growth ]; then
    for ((first = 1; first <= CLONES; first += GROW_BATCH)); do
      last=$((first + GROW_BATCH - 1 < CLONES ? first + GROW_BATCH - 1 : CLONES))
      printf 'would run: inside.sh create-fleet … %s %s %s; clone-army clone start clone%s..clone%s; inside.sh wait-booted\n' \
        "$first" "$last" "$GROW_RUNINTERVAL" "$first" "$last"
    done
    printf 'would run: inside.sh pss clone1..clone%s\n' "$CLONES"
  else
    fleet_steps
    printf 'would run: puppet apply num_clones => %s, then %s timed no-op applies each beside puppet apply -e \x27\x27\n' \
      "${FLEET_STEPS[0]}" "$NOOP_REPS"
    ((FLEET_STEPS[1] > FLEET_STEPS[0])) && printf 'would run: puppet apply num_clones => %s, then %s timed no-op applies each beside puppet apply -e \x27\x27\n' \
      "${FLEET_STEPS[1]}" "$NOOP_REPS"
    ((FLEET_STEPS[2] > FLEET_STEPS[1])) && printf 'would run: inside.sh create-fleet … %s %s %s; clone-army clone start; inside.sh wait-booted\n' \
      $((FLEET_STEPS[1] + 1)) "${FLEET_STEPS[2]}" "$RUNINTERVAL"
    printf 'would run: %s\n' "puppet apply num_clones => $CLONES, ramp_up => $RAMP_UP (the runs watched every 15 s from here)" \
      "clone-army clone create benchcpu (manual) and $K daemon-mode clones benchd1..benchd$K" "sandbox.sh up $PLAIN" \
      "$CPU_REPS agent runs each in benchcpu, on $PLAIN and on $NAME, after a warm-up each" "sandbox.sh down $PLAIN" \
      "inside.sh pss (daemon and fleet clones); the check-ins counted for $RUNINTERVAL s + 60 s; clone-army report --server" \
      "the phasing read over the next interval ($RUNINTERVAL s)"
  fi
  printf 'would write: %s\n' "$JSON" "$MD" "$RESULTS/$STAMP.raw/" "$PAGE"
  printf 'would run: %s\n' "sandbox.sh down $PLAIN" "sandbox.sh down $NAME"
}

main() {
  if [ "${BENCH_DRY_RUN:-0}" = 1 ]; then
    dry_run
    return
  fi
  require_root
  WORK=$(mktemp -d)
  [ -x "$repo/files/clone-army" ] || die "$repo/files/clone-army is missing: run make build (make bench does)"
  command -v jq >/dev/null || die "jq is missing (make deps)"
  command -v ruby >/dev/null || die "ruby is missing (make deps): bench/bench.rb computes the figures"
  trap cleanup EXIT
  trap 'exit 130' INT TERM HUP
  : >"$WORK/figures"
  : >"$WORK/meta"
  meta bench "\"$BENCH\""
  meta clones "$CLONES"
  meta runinterval "$RUNINTERVAL"
  meta ramp_up "$RAMP_UP"
  meta k "$K"
  meta cpu_reps "$CPU_REPS"
  meta noop_reps "$NOOP_REPS"
  meta server_addr "\"$SERVER_ADDR\""
  meta host "$(jq -n --arg k "$(uname -r)" --argjson c "$(nproc)" --argjson m "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)" \
    '{kernel: $k, cpus: $c, mem_total_kib: $m}')"

  sandbox down "$PLAIN" # leftovers of a killed run
  sandbox down "$NAME"
  sandbox up "$NAME"
  sandbox server "$NAME"

  # --- the base and the helper, through the class (no clones yet)
  local secs
  : >"$WORK/helper.err"
  blog "puppet apply: the base and the helper (num_clones => 0)"
  apply_class 0
  fig base_apply "first apply: base built, helper installed" "$APPLY_SECS" s "–" null "debootstrap of the base included"
  BASE=$(inside clone-army base list | jq -er '.result.bases[0].name')
  if [ "$BENCH" = growth ]; then
    grow_in_batches
    finished=1
    write_results complete
    return
  fi

  # --- the fleet grown in steps
  local mem0 t0 t2 step1 step2 step3
  fleet_steps
  step1=${FLEET_STEPS[0]} step2=${FLEET_STEPS[1]} step3=${FLEET_STEPS[2]}
  meta steps "[$step1, $step2, $step3, $CLONES]"
  mem0=$(mem_used_kib)
  grow_and_time_noop "$step1"
  ((step2 > step1)) && grow_and_time_noop "$step2"

  # 40 new clones on the existing base, beside the running ones.
  if ((step3 > step2)); then
    add_and_boot $((step2 + 1)) "$step3" "$RUNINTERVAL"
    fig per_clone_create_boot "seconds per clone created and booted ($ADD_NEW new clones, $step2 running)" "$ADD_SECS" s \
      "≤ $CREATE_BOOT_TARGET" "$ADD_MET" "$ADD_NOTE"
  fi

  # The rest in one apply, started in waves over RAMP_UP.
  blog "puppet apply: the fleet grows to $CLONES clones with ramp_up => $RAMP_UP"
  t0=$(now)
  APPLY_T0=$t0
  start_runs_watcher
  apply_class "$CLONES" "$RAMP_UP"
  wait_running "$CLONES"
  t2=$(now)
  # The helper's warnings (one per call), once each.
  sort "$WORK/helper.err" | uniq -c | sort -rn | awk 'NR <= 10' >&2
  fig fleet_running "large fleet: time to all $CLONES running (last step: one apply, ramp_up $RAMP_UP s)" \
    "$(calc 'b - a' -v a="$t0" -v b="$t2")" s "all running" \
    "$([ "$N_RUN" -ge "$CLONES" ] && echo true || echo false)" "$N_RUN of $CLONES running; apply $APPLY_SECS s"
  FLEET_T0=$t2
  CHECKIN_END=$(calc 'a + t + 60' -v a="$FLEET_T0" -v t="$RUNINTERVAL")
  # The times the check-in and phasing figures are counted from, kept with the raw data.
  printf '%s %s %s\n' "$APPLY_T0" "$FLEET_T0" "$CHECKIN_END" >"$WORK/times"
  printf '0 0\n' >"$WORK/checkin"
  local fleet_t0=$t2
  # The recorder's CPU is read over the check-in window, the whole fleet running.
  recorder_cpu >"$WORK/recorder-start"

  # --- extra clones: one manual (CPU ratio), K in daemon mode (memory)
  local d dclones=()
  for ((d = 1; d <= K; d++)); do dclones+=("benchd$d"); done
  blog "creating benchcpu (manual) and ${dclones[*]} (daemon)"
  inside clone-army clone create benchcpu --base "$BASE" --server "$SERVER_NAME" --certname "benchcpu.$DOMAIN" \
    --run-mode manual --start >/dev/null 2>>"$WORK/helper.err"
  for d in "${dclones[@]}"; do
    inside clone-army clone create "$d" --base "$BASE" --server "$SERVER_NAME" --certname "$d.$DOMAIN" \
      --run-mode daemon --runinterval 3600 --start >/dev/null 2>>"$WORK/helper.err"
  done

  # --- CPU per agent run: in a clone (its unit's cgroup) vs on a plain sandbox host
  # (PLAIN: the same agent and plugins from the same server, no fleet; a transient
  # systemd-run unit), and on the load host itself, whose clone_army fact lists the
  # whole fleet at every run (so it is not the comparison, only shown)
  blog "booting the plain sandbox host $PLAIN (no fleet) for the CPU comparison"
  sandbox up "$PLAIN"
  blog "CPU per agent run: warm-up (certificates), then $CPU_REPS runs each, alternating"
  plain bash "$INSIDE" host-run >/dev/null || true
  inside bash "$INSIDE" host-run >/dev/null || true
  inside clone-army exec --clone benchcpu --timeout 300 -- puppet agent -t --color=false >/dev/null
  local i u0 u1 clone_cpu=() plain_cpu=() host_cpu=() c p h
  for ((i = 0; i < CPU_REPS; i++)); do
    u0=$(inside bash "$INSIDE" cpu-usec benchcpu)
    inside clone-army exec --clone benchcpu --timeout 300 -- puppet agent -t --color=false >"$WORK/exec.json"
    u1=$(inside bash "$INSIDE" cpu-usec benchcpu)
    jq -e '.result.clones[0].error == null' "$WORK/exec.json" >/dev/null || die "agent run in benchcpu did not run"
    c=$(calc '(b - a) / 1e6' -v a="$u0" -v b="$u1")
    p=$(plain bash "$INSIDE" host-run)
    h=$(inside bash "$INSIDE" host-run)
    clone_cpu+=("$c") plain_cpu+=("$p") host_cpu+=("$h")
    blog "run $((i + 1)): clone $c CPU-s, plain host $p CPU-s, load host $h CPU-s"
  done
  sandbox down "$PLAIN"
  c=$(printf '%s\n' "${clone_cpu[@]}" | median)
  p=$(printf '%s\n' "${plain_cpu[@]}" | median)
  h=$(printf '%s\n' "${host_cpu[@]}" | median)
  fig cpu_clone "CPU per agent run in a clone (median of $CPU_REPS)" "$c" CPU-s "–" null "$(bench_rb quote "${clone_cpu[@]}")"
  fig cpu_plain "CPU per agent run on a plain sandbox host, no fleet (median of $CPU_REPS)" "$p" CPU-s "–" null \
    "$(bench_rb quote "${plain_cpu[@]}")"
  fig cpu_host "CPU per agent run on the load host, its fact listing the fleet (median of $CPU_REPS)" "$h" CPU-s "–" null \
    "$(bench_rb quote "${host_cpu[@]}")"
  local ratio_note
  read -r secs ratio_note < <(bench_rb ratio "$c" "$p" clone plain)
  fig cpu_ratio "CPU per run, clone / plain host" "$secs" "" "≤ 1.05" "$(met_le "$secs" 1.05)" "medians: $ratio_note CPU-s"

  # --- idle memory, daemon mode: after the agent's first run
  blog "waiting (≤ 300 s) for the daemon-mode clones' first runs"
  local deadline=$((SECONDS + 300))
  while (($(inside bash "$INSIDE" summaries "${dclones[@]}" | wc -l) < K)); do
    ((SECONDS < deadline)) || die "daemon-mode clones did not finish a first run within 300 s"
    sleep 5
  done
  sleep 15
  inside bash "$INSIDE" pss "${dclones[@]}" >"$WORK/pss-daemon"
  secs=$(avg_pss_mib <"$WORK/pss-daemon")
  fig pss_daemon "idle memory per clone, daemon mode (PSS, avg of $K)" "$secs" MiB "≤ 75" "$(met_le "$secs" 75)" \
    "$(bench_rb pss-note <"$WORK/pss-daemon")"

  fleet_memory_figures "$mem0" "$CLONES"

  # --- check-ins: every clone within one interval of all running (bounded), and the
  # recorder's CPU over the same window
  local until_t ok
  poll_checkins
  recorder_figure "the check-in window"
  catalog_figures
  write_results partial >/dev/null

  # --- phasing: when the fleet's runs in the interval after the check-in window
  # started (end minus total time: the timers fire at the phases, and run times vary),
  # as the watcher saw them in the clones' summaries (the server keeps no reports on
  # every version). Waited for in short sleeps (bounded), one poll past its end.
  until_t=$(calc 'a + 2 * t + 20' -v a="$fleet_t0" -v t="$RUNINTERVAL")
  blog "waiting until $(date -d "@${until_t%.*}" +%T) for the phasing figure"
  while awk -v n="$(now)" -v u="$until_t" 'BEGIN { exit !(n < u) }'; do sleep 15; done
  stop_runs_watcher
  bench_rb starts <"$WORK/runs" >"$WORK/reports"
  # Phasing over the second interval (the first holds certificate requests); the rule
  # (busiest 12 s against twice the even share, on the counts) is bench.rb's.
  local share best total met twice_even twice_even_runs
  read -r share best total met twice_even twice_even_runs < <(bench_rb phasing "$(calc 'a + t' -v a="$fleet_t0" -v t="$RUNINTERVAL")" \
    "$RUNINTERVAL" <"$WORK/reports")
  fig phasing "phasing: share of an interval's runs in its busiest 12 s" "$share" "" \
    "≤ 2 × even ideal ($twice_even)" "$met" \
    "$best of $total runs started in the second interval; twice even is $twice_even_runs"

  finished=1
  write_results complete
}

main "$@"
