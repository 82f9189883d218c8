#!/usr/bin/env bash
# `make bench`: the benchmark of issue 4. Boots a sandbox host "bench" (sandbox/)
# with Debian's Puppet Server on SERVER_ADDR (127.0.0.5, so it runs beside the
# acceptance suites' servers), applies the class clone_army, measures, and writes
# bench/results/<UTC date-time>.json and .md (the table is printed too).
# Everything it started is torn down on exit, also on failure.
#
# Environment (the scale used is recorded in the JSON):
#   CLONES        the large fleet: timer-mode clones (default 500; e.g. 40 for a quick run)
#   RUNINTERVAL   the fleet's interval in seconds (default max(120, 4 * CLONES))
#   NOOP_SCALES   clone counts at which a no-op `puppet apply` is timed (default "100 50"); one below
#                 CLONES first shrinks the fleet, removing clones one at a time (slow)
#   K             clones averaged for idle memory, per mode (default 3)
#   CPU_REPS      agent runs per side for the CPU ratio (default 3)
#   START_TIMEOUT seconds allowed for the fleet to be running (default 120 + CLONES)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=sandbox/lib.sh
source "$repo/sandbox/lib.sh"

NAME=bench
export SERVER_ADDR=${SERVER_ADDR:-127.0.0.5}
export SERVER_NAME=${SERVER_NAME:-puppet}
export MODULE_DIR=$repo
CLONES=${CLONES:-500}
RUNINTERVAL=${RUNINTERVAL:-$((4 * CLONES > 120 ? 4 * CLONES : 120))}
NOOP_SCALES=${NOOP_SCALES:-100 50}
K=${K:-3}
CPU_REPS=${CPU_REPS:-3}
START_TIMEOUT=${START_TIMEOUT:-$((120 + CLONES))}
APPLY_TIMEOUT=${APPLY_TIMEOUT:-1800}
DOMAIN=$NAME.sandbox.test
INSIDE=/etc/puppet/code/modules/clone_army/bench/inside.sh
RESULTS=$here/results
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
JSON=$RESULTS/$STAMP.json
MD=$RESULTS/$STAMP.md
WORK=$(mktemp -d)

for v in CLONES RUNINTERVAL K CPU_REPS START_TIMEOUT; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive number, not '${!v}'"
done
((RUNINTERVAL >= 60)) || die "RUNINTERVAL must be at least 60 (clone-army's minimum)"

blog() { printf '%s [bench] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
sandbox() { bash "$repo/sandbox/sandbox.sh" "$@"; }
# A command inside the sandbox host, bounded (EXEC_TIMEOUT, default 600 s).
inside() { EXEC_TIMEOUT=${EXEC_TIMEOUT:-600} sandbox exec "$NAME" "$@"; }
now() { date +%s.%N; }
# awk arithmetic on decimals: calc '<expr>' [var=value...]
calc() {
  local expr=$1
  shift
  awk "$@" "BEGIN { printf \"%.3f\", $expr }"
}

# --- results ---------------------------------------------------------------
# Figures accumulate as JSON lines in $WORK/figures; scale and notes in $WORK/meta.

# fig KEY LABEL VALUE UNIT TARGET MET [NOTE]   (VALUE a number or null; MET true|false|null)
fig() {
  jq -cn --arg key "$1" --arg lbl "$2" --argjson value "${3:-null}" --arg unit "$4" \
    --arg target "$5" --argjson met "$6" --arg note "${7:-}" \
    '{key: $key, label: $lbl, value: $value, unit: $unit, target: $target, met: $met, note: $note}' \
    >>"$WORK/figures"
  blog "$2: ${3:-null} $4 (target: $5; met: $6)"
}
meta() { jq -cn --arg k "$1" --argjson v "$2" '{($k): $v}' >>"$WORK/meta"; }
met_le() { awk -v v="$1" -v t="$2" 'BEGIN { print (v != "" && v <= t) ? "true" : "false" }'; }

write_results() {
  local status=$1
  mkdir -p "$RESULTS"
  touch "$WORK/figures" "$WORK/meta"
  jq -s --arg status "$status" --arg started "$STAMP" --arg finished "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --slurpfile meta "$WORK/meta" \
    '{started: $started, finished: $finished, status: $status,
      scale: ($meta | add // {}), figures: .}' "$WORK/figures" >"$JSON"
  {
    printf '# clone_army benchmark, %s (%s)\n\n' "$STAMP" "$status"
    jq -r '.scale | "Scale: " + (to_entries | map("\(.key)=\(.value)") | join(", "))' "$JSON"
    printf '\n| figure | value | target | met |\n| --- | --- | --- | --- |\n'
    jq -r '.figures[] | "| \(.label)\(if .note != "" then " (" + .note + ")" else "" end) | \(if .value == null then "–" else "\(.value) \(.unit)" end) | \(.target) | \(if .met == true then "yes" elif .met == false then "**no**" else "–" end) |"' "$JSON"
  } >"$MD"
  # The raw measurements, to check a figure later.
  mkdir -p "$RESULTS/$STAMP.raw"
  cp "$WORK"/pss-* "$WORK"/reports "$WORK"/puts "$WORK"/start.json "$RESULTS/$STAMP.raw/" 2>/dev/null || true
  cat "$MD"
  blog "wrote $JSON and $MD"
}

finished=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if ((!finished)); then
    blog "failed (exit $rc); writing what was measured"
    write_results "failed (exit $rc)" || true
  fi
  blog "tearing down sandbox $NAME"
  sandbox down "$NAME" || rc=1
  rm -rf "$WORK"
  if awk -v p="$(sandbox_dir "$NAME")" 'index($5, p) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
    blog "warning: mounts of sandbox $NAME are left"
    rc=1
  fi
  exit "$rc"
}

# --- steps -------------------------------------------------------------------

# apply_class NUM_CLONES: sets APPLY_SECS (wall seconds) and APPLY_RC (0 no change, 2 changes).
APPLY_SECS='' APPLY_RC=''
apply_class() {
  local n=$1 t0 manifest
  manifest="class { 'clone_army': master => '$SERVER_NAME', num_clones => $n, run_mode => 'timer', runinterval => $RUNINTERVAL }"
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

running_count() {
  inside clone-army clone list | jq -r --arg re '^clone[0-9]+$' \
    '[.result.clones[] | select((.name | test($re)) and .state == "running")] | length'
}

# Average PSS (MiB) over lines "<clone> <kib> <procs> <agents>" on stdin.
avg_pss_mib() { awk '{ s += $2; n++ } END { if (n) printf "%.1f", s / n / 1024; else print "null" }'; }

main() {
  require_root
  [ -x "$repo/files/clone-army" ] || die "$repo/files/clone-army is missing: run make build (make bench does)"
  command -v jq >/dev/null || die "jq is missing (make deps)"
  trap cleanup EXIT
  trap 'exit 130' INT TERM HUP
  : >"$WORK/figures"
  : >"$WORK/meta"
  meta clones "$CLONES"
  meta runinterval "$RUNINTERVAL"
  meta noop_scales "$(printf '%s\n' "$NOOP_SCALES" | jq -R 'split(" ") | map(select(. != "") | tonumber)')"
  meta k "$K"
  meta cpu_reps "$CPU_REPS"
  meta server_addr "\"$SERVER_ADDR\""
  meta host "$(jq -n --arg k "$(uname -r)" --argjson c "$(nproc)" --argjson m "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)" \
    '{kernel: $k, cpus: $c, mem_total_kib: $m}')"

  sandbox down "$NAME" # leftovers of a killed run
  sandbox up "$NAME"
  sandbox server "$NAME"

  # --- the base and the helper, through the class (no clones yet)
  local secs base
  : >"$WORK/helper.err"
  blog "puppet apply: the base and the helper (num_clones => 0)"
  apply_class 0
  fig base_apply "first apply: base built, helper installed" "$APPLY_SECS" s "–" null "debootstrap of the base included"
  base=$(inside clone-army base list | jq -er '.result.bases[0].name')

  # --- N new clones on the existing base: created, then one start of all
  local mem0 t0 t1 t2 create_s start_s n_run
  mem0=$(mem_used_kib)
  blog "creating $CLONES timer-mode clones on base $base (runinterval $RUNINTERVAL)"
  t0=$(now)
  EXEC_TIMEOUT=$((60 + 5 * CLONES)) inside bash "$INSIDE" create-fleet "$base" "$SERVER_NAME" "$DOMAIN" "$CLONES" "$RUNINTERVAL" \
    2>>"$WORK/helper.err"
  t1=$(now)
  blog "starting all $CLONES clones with one clone start"
  # shellcheck disable=SC2046 # the names are clone1..cloneN
  if ! EXEC_TIMEOUT=$START_TIMEOUT inside clone-army clone start $(seq -f 'clone%g' 1 "$CLONES") >"$WORK/start.json" 2>>"$WORK/helper.err"; then
    blog "clone start did not report every clone active; polling up to ${START_TIMEOUT}s"
    jq -r '.error.message // empty' "$WORK/start.json" >&2 || true
  fi
  local deadline=$((SECONDS + START_TIMEOUT))
  while n_run=$(running_count) && ((n_run < CLONES && SECONDS < deadline)); do sleep 2; done
  [[ $n_run =~ ^[0-9]+$ ]] || die "could not list the clones"
  t2=$(now)
  create_s=$(calc 'b - a' -v a="$t0" -v b="$t1")
  start_s=$(calc 'b - a' -v a="$t1" -v b="$t2")
  secs=$(calc '(b - a) / n' -v a="$t0" -v b="$t2" -v n="$CLONES")
  # The helper's warnings (one per call), once each.
  sort "$WORK/helper.err" | uniq -c | sort -rn | head -n 10 >&2
  fig per_clone_create_boot "seconds per clone created and booted ($CLONES new clones)" "$secs" s "≤ 0.5" "$(met_le "$secs" 0.5)" \
    "create ${create_s} s + start ${start_s} s"
  fig fleet_running "large fleet: time to all $CLONES running" "$(calc 'b - a' -v a="$t0" -v b="$t2")" s "all running" \
    "$([ "$n_run" -ge "$CLONES" ] && echo true || echo false)" "$n_run of $CLONES running"
  local fleet_t0=$t1

  # --- extra clones: one manual (CPU ratio), K in daemon mode (memory)
  local d dclones=()
  for ((d = 1; d <= K; d++)); do dclones+=("benchd$d"); done
  blog "creating benchcpu (manual) and ${dclones[*]} (daemon)"
  inside clone-army clone create benchcpu --base "$base" --master "$SERVER_NAME" --certname "benchcpu.$DOMAIN" \
    --run-mode manual --start >/dev/null 2>>"$WORK/helper.err"
  for d in "${dclones[@]}"; do
    inside clone-army clone create "$d" --base "$base" --master "$SERVER_NAME" --certname "$d.$DOMAIN" \
      --run-mode daemon --runinterval 3600 --start >/dev/null 2>>"$WORK/helper.err"
  done

  # --- CPU per agent run: in a clone (its unit's cgroup) vs on the host (systemd-run)
  blog "CPU per agent run: warm-up (certificates), then $CPU_REPS runs each, alternating"
  inside bash "$INSIDE" host-run >/dev/null || true
  inside clone-army exec --clone benchcpu --timeout 300 -- puppet agent -t --color=false >/dev/null
  local i u0 u1 clone_cpu=() host_cpu=() c h
  for ((i = 0; i < CPU_REPS; i++)); do
    u0=$(inside bash "$INSIDE" cpu-usec benchcpu)
    inside clone-army exec --clone benchcpu --timeout 300 -- puppet agent -t --color=false >"$WORK/exec.json"
    u1=$(inside bash "$INSIDE" cpu-usec benchcpu)
    jq -e '.result.clones[0].error == null' "$WORK/exec.json" >/dev/null || die "agent run in benchcpu did not run"
    c=$(calc '(b - a) / 1e6' -v a="$u0" -v b="$u1")
    h=$(inside bash "$INSIDE" host-run)
    clone_cpu+=("$c") host_cpu+=("$h")
    blog "run $((i + 1)): clone $c CPU-s, host $h CPU-s"
  done
  c=$(printf '%s\n' "${clone_cpu[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  h=$(printf '%s\n' "${host_cpu[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  fig cpu_clone "CPU per agent run in a clone (median)" "$c" CPU-s "–" null "runs: ${clone_cpu[*]}"
  fig cpu_host "CPU per agent run on the host (median)" "$h" CPU-s "–" null "runs: ${host_cpu[*]}"
  secs=$(calc 'c / h' -v c="$c" -v h="$h")
  fig cpu_ratio "CPU per run, clone / host" "$secs" "" "≤ 1.05" "$(met_le "$secs" 1.05)"

  # --- idle memory, daemon mode: after the agent's first run
  blog "waiting (≤ 300 s) for the daemon-mode clones' first runs"
  deadline=$((SECONDS + 300))
  while (($(inside bash "$INSIDE" summaries "${dclones[@]}" | wc -l) < K)); do
    ((SECONDS < deadline)) || die "daemon-mode clones did not finish a first run within 300 s"
    sleep 5
  done
  sleep 15
  inside bash "$INSIDE" pss "${dclones[@]}" >"$WORK/pss-daemon"
  secs=$(avg_pss_mib <"$WORK/pss-daemon")
  fig pss_daemon "idle memory per clone, daemon mode (PSS, avg of $K)" "$secs" MiB "≤ 75" "$(met_le "$secs" 75)" \
    "$(awk '{ printf "%s%s %.1f MiB/%s procs", (NR > 1 ? ", " : ""), $1, $2 / 1024, $3 }' "$WORK/pss-daemon")"

  # --- idle memory, timer mode: fleet clones with no agent run at the moment
  inside bash "$INSIDE" pss $(seq -f 'clone%g' 1 "$CLONES") >"$WORK/pss-timer"
  awk '$4 == 0' "$WORK/pss-timer" | head -n "$K" >"$WORK/pss-timer-idle"
  secs=$(avg_pss_mib <"$WORK/pss-timer-idle")
  fig pss_timer "idle memory per clone, timer mode (PSS, avg of $K)" "$secs" MiB "≤ 15" "$(met_le "$secs" 15)" \
    "$(awk '{ printf "%s%s %.1f MiB/%s procs", (NR > 1 ? ", " : ""), $1, $2 / 1024, $3 }' "$WORK/pss-timer-idle")"
  secs=$(awk '{ s += $2 } END { printf "%.0f", s / 1024 }' "$WORK/pss-timer")
  fig fleet_pss "large fleet: PSS of all $CLONES clones" "$secs" MiB "–" null \
    "$(calc 's / n' -v s="$secs" -v n="$CLONES") MiB per clone, runs in progress included"
  secs=$(awk -v a="$mem0" -v b="$(mem_used_kib)" 'BEGIN { printf "%.0f", (b - a) / 1024 }')
  fig fleet_mem "large fleet: machine memory used, growth since before the fleet" "$secs" MiB "–" null \
    "MemTotal − MemAvailable; the machine is shared, so other work is in it"

  # --- check-ins and phasing: wait for two intervals after the fleet's start
  local until_t wait_s
  until_t=$(calc 'a + 2 * t + 45' -v a="$fleet_t0" -v t="$RUNINTERVAL")
  wait_s=$(calc 'u - n' -v u="$until_t" -v n="$(now)")
  if awk -v w="$wait_s" 'BEGIN { exit !(w > 0) }'; then
    blog "waiting ${wait_s}s for two intervals of the fleet's runs"
    sleep "${wait_s%.*}"
  fi
  inside bash "$INSIDE" reports "$DOMAIN" | grep -E '^clone[0-9]+\.' >"$WORK/reports" || true
  # Check-ins from the server's access log (report PUTs): the report store keeps
  # one file per node and minute, so a slow first run's report can be overwritten
  # by the next run's, and the store alone undercounts.
  inside bash "$INSIDE" report-puts "$DOMAIN" | grep -E '^clone[0-9]+\.' >"$WORK/puts" || true
  local ok
  ok=$(awk -v e="$until_t" '$2 <= e { seen[$1] = 1 } END { print length(seen) }' "$WORK/puts")
  fig fleet_checkin "large fleet: clones that reported by the end of two intervals" "$ok" "of $CLONES" "all $CLONES" \
    "$([ "$ok" -ge "$CLONES" ] && echo true || echo false)" \
    "first reports $(awk -v a="$fleet_t0" '!($1 in f) { f[$1] = $2 - a } END { for (c in f) { if (min == "" || f[c] < min) min = f[c]; if (f[c] > max) max = f[c] } printf "%.0f–%.0f", min, max }' "$WORK/puts") s after start"
  ok=$(awk -v e="$until_t" '$2 <= e { n[$1]++ } END { k = 0; for (c in n) if (n[c] >= 2) k++; print k }' "$WORK/puts")
  fig fleet_checkin2 "large fleet: clones that reported in each of the two intervals" "$ok" "of $CLONES" "all $CLONES" \
    "$([ "$ok" -ge "$CLONES" ] && echo true || echo false)" "≥ 2 report PUTs by start + 2 intervals + 45 s"
  # Phasing over the second interval (the first holds certificate requests).
  local share ideal
  read -r share ok < <(awk -v a="$fleet_t0" -v t="$RUNINTERVAL" '$2 >= a + t && $2 < a + 2 * t { print $2 }' "$WORK/reports" |
    sort -n | awk '{ v[NR] = $1 } END {
      best = 0; j = 1
      for (i = 1; i <= NR; i++) { while (v[i] - v[j] >= 12) j++; if (i - j + 1 > best) best = i - j + 1 }
      if (NR) printf "%.3f %d\n", best / NR, NR; else print "null 0" }')
  ideal=$(calc '12 / t' -v t="$RUNINTERVAL")
  fig phasing "phasing: share of an interval's reports in its busiest 12 s" "$share" "" \
    "≤ 2 × even ideal ($ideal)" "$(met_le "$share" "$(calc '2 * i' -v i="$ideal")")" "$ok reports in the second interval"

  # --- no-op puppet apply at each scale (largest first: shrinking removes clones)
  local s rc
  for s in $(tr -s ' ' '\n' <<<"$NOOP_SCALES" | sort -rn); do
    blog "puppet apply at num_clones => $s: converge, then the timed no-op"
    apply_class "$s"
    apply_class "$s"
    secs=$APPLY_SECS rc=$APPLY_RC
    local target="–" m=null
    if ((s >= 100)); then
      target="≤ 5"
      m=$(met_le "$secs" 5)
    fi
    [ "$rc" = 0 ] || m=false
    fig "noop_apply_$s" "no-op puppet apply at $s clones" "$secs" s "$target" "$m" "exit $rc$([ "$rc" = 0 ] || echo ': not a no-op')"
  done

  finished=1
  write_results complete
}

main "$@"
