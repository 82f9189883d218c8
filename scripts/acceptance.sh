#!/usr/bin/env bash
# `make acceptance`: the acceptance suite (spec/acceptance) on every Debian suite of the
# sandbox host (sandbox/lib.sh's SANDBOX_SUITES) side by side, or on the one SANDBOX_SUITE
# (make's SUITE) names.
#
# Each suite gets a sandbox host of its own, acceptance-<suite>, and a loopback address
# of its own for its Puppet Server, so the two never share a port, a name or a file. Most
# of a suite's time is spent waiting for the clones' agent runs, not computing, which is
# why two suites fit side by side on two cores in about the time of one.
#
# Every line of a suite's output is printed with its suite in front, as it comes; the
# whole output of each is also kept in target/acceptance/<suite>.log. Exits non-zero when
# any suite failed. An interrupt or TERM is passed on to each suite's rspec by its PID,
# whose own teardown takes its sandbox down.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

asked=${SANDBOX_SUITE:-}
# shellcheck source=sandbox/lib.sh
. sandbox/lib.sh
if [ -n "$asked" ]; then
  suites=("$asked")
else
  suites=("${SANDBOX_SUITES[@]}")
fi

say() { printf '%s [acceptance] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

logs=target/acceptance
mkdir -p "$logs"

# The addresses given to the suites so far: the next suite's server gets another one,
# since theirs may not listen yet.
taken=()

declare -A rspec_pid follower_pid
stop_suites() {
  local suite
  for suite in "${!rspec_pid[@]}"; do
    kill -TERM "${rspec_pid[$suite]}" 2>/dev/null || true
  done
  for suite in "${!rspec_pid[@]}"; do
    wait "${rspec_pid[$suite]}" 2>/dev/null || true
  done
  exit 130
}
trap stop_suites INT TERM

for suite in "${suites[@]}"; do
  addr=$(free_server_addr "${taken[@]}") || exit
  taken+=("$addr")
  log="$logs/$suite.log"
  say "acceptance on $suite: sandbox acceptance-$suite, Puppet Server on $addr, log $log"
  SANDBOX_SUITE=$suite SANDBOX_NAME=acceptance-$suite SERVER_ADDR=$addr \
    rspec -O spec/acceptance/.rspec --no-color spec/acceptance >"$log" 2>&1 </dev/null &
  rspec_pid[$suite]=$!
  tail -n +1 -F --pid="${rspec_pid[$suite]}" "$log" 2>/dev/null | sed -u "s/^/[$suite] /" &
  follower_pid[$suite]=$!
done

failed=()
summary=()
for suite in "${suites[@]}"; do
  rc=0
  wait "${rspec_pid[$suite]}" || rc=$?
  wait "${follower_pid[$suite]}" || true
  if ((rc == 0)); then
    summary+=("acceptance on $suite: passed")
  else
    summary+=("acceptance on $suite: FAILED (rspec exited $rc; its whole output: $logs/$suite.log)")
    failed+=("$suite")
  fi
done
trap - INT TERM
for line in "${summary[@]}"; do say "$line"; done
((${#failed[@]} == 0))
