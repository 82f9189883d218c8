#!/usr/bin/env bash
# `make lab`: a sandbox host "lab" (sandbox.sh) with Debian's Puppet Server (and
# PuppetDB behind it where the suite has it, sandbox/lib.sh) on
# 127.0.0.1:8140 (or, when that is taken, the first free 127.0.0.x, or
# SERVER_ADDR when given) and a fleet of CLONES clones made by `puppet apply` of
# the class clone_army with the real module and helper. Waits (bounded) until
# every clone has checked in (a signed certificate, and a successful run by its
# own agent), prints the fleet, and leaves it all running. The class's recorder
# (record => true) samples the run from the first apply on; the page of the run
# so far is written at the end, and again by `lab.sh page`.
#
#   lab.sh up     CLONES (default 4) clones; fails, and tears down, if they do not check in
#   lab.sh down   removes containers, server, mounts and state, and the rootfs
#                 cache too unless KEEP_CACHE=1
#   lab.sh table  prints the fleet table again
#   lab.sh page   writes the page of the run recorded so far and prints its path
#   lab.sh ramp   finds the knee of the lab's server (cmd_ramp says how)
#
# LAB_ROLE=web classifies the clones with sandbox/roles/web.pp (Debian's
# puppetlabs-apache, -apt and aboe-chrony packages, installed on the lab's
# server) and runs them with agent_noop => true: real catalogs, compiled and
# evaluated, nothing changed in the clones.
#
# LAB_TWINS=1 makes the lab an estate and its fleet twins of it (Debian 13, whose
# lab has PuppetDB): the server classifies by the role in each certificate
# (sandbox/roles/estate.pp: web, lb and cache, from Debian's puppetlabs-apache,
# puppetlabs-haproxy and saz-memcached packages, in sandbox/roles/lab_roles);
# ESTATE_NODES "production" nodes (clones of their own, each asking for its
# pp_role in its certificate request) check in first, and the class then imports
# them from PuppetDB and makes its CLONES clones their twins in the estate's mix,
# in noop. The report, the recording and its page group the runs by role.
#
# On a machine of two or more CPUs the lab's Puppet Server, PuppetDB and
# PostgreSQL run on the first half of them and the clones on the rest
# (sandbox.sh's SERVER_CPUS and CLONE_CPUS; LAB_SPLIT_CPUS=no runs everything
# on every CPU): the knee `lab.sh ramp` finds is then the server's, not the
# clones' share of one CPU pool, and each CPU's busy share in the samples says
# which side was busy. SERVER_CPU_QUOTA (sandbox.sh: a percentage of one CPU,
# such as 10) makes the server smaller than its load host, as a real load host
# is beside a real server: then the server gives out first.
#
# Look around: bash sandbox/sandbox.sh exec lab machinectl list
#              bash sandbox/sandbox.sh exec lab bash
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sandbox/lib.sh
source "$here/lib.sh"

NAME=lab
# The module checkout bound into the sandbox (sandbox.sh reads it too).
export MODULE_DIR=${MODULE_DIR:-$SANDBOX_REPO}
CLONES=${CLONES:-4}
LAB_RUNINTERVAL=${LAB_RUNINTERVAL:-120}
SERVER_NAME=${SERVER_NAME:-puppet}
APPLY_TIMEOUT=${APPLY_TIMEOUT:-1800}
LAB_ROLE=${LAB_ROLE:-}
LAB_TWINS=${LAB_TWINS:-0}
case $LAB_TWINS in
  0 | 1) ;;
  *) die "LAB_TWINS must be 0 or 1, not '$LAB_TWINS'" ;;
esac
# The estate's nodes, name=role, each certname <name>.$ESTATE_DOMAIN.
ESTATE_NODES=${ESTATE_NODES:-web01=web web02=web lb01=lb cache01=cache}
ESTATE_DOMAIN=prod.lab
# The site of the lab's server: a role's, the estate's, or none.
if [ "$LAB_TWINS" = 1 ]; then LAB_SITE=estate; else LAB_SITE=$LAB_ROLE; fi
# A role's catalogs take the lab's one-JRuby server tens of seconds each to compile
# on a 2-core machine, one at a time: the wait allows for it.
if [ -n "$LAB_SITE" ]; then per_clone=60; else per_clone=10; fi
CHECKIN_TIMEOUT=${CHECKIN_TIMEOUT:-$((300 + per_clone * CLONES))}
SIGNED_DIR=/etc/puppet/puppetserver/ca/signed
LAB_RECORD_EVERY=${LAB_RECORD_EVERY:-5}
LAB_SPLIT_CPUS=${LAB_SPLIT_CPUS:-yes}
case $LAB_SPLIT_CPUS in
  yes | no) ;;
  *) die "LAB_SPLIT_CPUS must be yes or no, not '$LAB_SPLIT_CPUS'" ;;
esac
# The server's CPUs and the clones' (CPU lists, as sandbox.sh takes them), given or
# split here: 0 .. n/2-1 for the server, the rest for the clones.
lab_cpus() {
  local n
  n=$(nproc)
  # nproc counts the CPUs this process may use: run under a narrower affinity, the
  # lab would split (or count) fewer CPUs than the machine has, and say nothing.
  (("$(nproc --all)" == n)) ||
    log "lab: this process may use $n of the machine's $(nproc --all) CPUs; the CPU split and the ramp's load-host CPUs follow those $n"
  if [ "$LAB_SPLIT_CPUS" = yes ] && ((n >= 2)); then
    export SERVER_CPUS=${SERVER_CPUS:-$(cpu_range 0 $((n / 2 - 1)))}
    export CLONE_CPUS=${CLONE_CPUS:-$(cpu_range $((n / 2)) $((n - 1)))}
  fi
}
cpu_range() { if (($1 == $2)); then echo "$1"; else echo "$1-$2"; fi; }
lab_cpus
# The Debian packages of the modules each role uses (their dependencies come along).
declare -A ROLE_PACKAGES=(
  [web]="puppet-module-puppetlabs-apache puppet-module-puppetlabs-apt puppet-module-aboe-chrony"
  [estate]="puppet-module-puppetlabs-apache puppet-module-puppetlabs-apt puppet-module-aboe-chrony puppet-module-puppetlabs-haproxy puppet-module-saz-memcached"
)
# The role classes every site includes, a module of the server's environment.
ROLES_MODULE=lab_roles
SITE_PP=$SERVER_ENVIRONMENT/manifests/site.pp
# Inside the sandbox (its /tmp is the sandbox's own tmpfs).
RAMP_CLONE_LIST=/var/tmp/lab-ramp-clones.jsonl
RAMP_BASELINE=/var/tmp/lab-ramp.json
RAMP_TIMELINE=/var/tmp/lab-ramp.jsonl
RAMP_PAGE=/var/tmp/lab-ramp.html
ESTATE_LIST=/var/tmp/lab-estate.jsonl
# Debian's Puppet Server logs every request here (its request-logging.xml).
SERVER_ACCESS_LOG=/var/log/puppetserver/puppetserver-access.log

sandbox() { bash "$here/sandbox.sh" "$@"; }
inside() { sandbox exec "$NAME" "$@"; }

# Prints one line per clone: name state certname signed last-run-time last-run-status.
# Runs inside the sandbox; the helper's listing is the fleet's truth and each
# clone's last run is its own agent's (clone-army report), which holds whatever
# the server does with reports (Debian 13's stores none).
fleet_rows() {
  EXEC_TIMEOUT=120 inside bash -s -- "$SIGNED_DIR" <<'EOF'
set -euo pipefail
signed=$1
list=$(clone-army clone list --format json)
report=$(clone-army report --format json)
jq -e -n -r --argjson list "$list" --argjson report "$report" '
  ($report.result.clones | map({key: .name, value: .}) | from_entries) as $runs
  | $list.result.clones[]
  | [.name, .state, .certname,
     ($runs[.name].last_run // null | if . then todate else "-" end),
     ($runs[.name].status // "never"),
     (if $runs[.name].succeeded then "yes" else "no" end)]
  | @tsv' |
  while IFS=$'\t' read -r name state certname time status succeeded; do
    cert=no
    [ -f "$signed/$certname.pem" ] && cert=yes
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$state" "$certname" "$cert" "$time" "$status" "$succeeded"
  done
EOF
}

print_table() {
  local rows
  if ! rows=$(fleet_rows); then
    log "could not read the fleet (clone-army clone list failed)"
    return 1
  fi
  {
    printf 'CLONE\tSTATE\tCERTNAME\tSIGNED\tLAST RUN\tSTATUS\tCHECKED IN\n'
    printf '%s\n' "$rows"
  } | align_columns
}

# `--puppetdb URL`, one word a line, where the suite has PuppetDB; nothing else.
puppetdb_flag() {
  [ "$SANDBOX_PUPPETDB" != yes ] || printf '%s\n' --puppetdb "https://$SERVER_NAME:$PUPPETDB_TLS_PORT"
}

# The fleet report: every clone's last run, the fleet's p50/p95, the server's
# own view and PuppetDB's command queue where the suite has PuppetDB, verified
# against the lab server's CA; the estate's grouped by role. The sandbox host's
# agent certificate, which the helper presents to PuppetDB, is the server's own
# (they share an ssldir).
print_report() {
  local puppetdb groups=()
  mapfile -t puppetdb < <(puppetdb_flag)
  [ "$LAB_TWINS" != 1 ] || groups=(--group-by pp_role)
  echo
  inside clone-army report --interval "$LAB_RUNINTERVAL" \
    --server "https://$SERVER_NAME:8140" "${puppetdb[@]}" --ca-cert "$SERVER_CA_CERT" \
    "${groups[@]}" --format table
}

# LAB_SITE's modules (Debian's packages, on the server's modulepath), the role
# classes and its site.pp, which classifies the clones; nothing without a site.
check_role() {
  if [ "$LAB_TWINS" = 1 ]; then
    [ -z "$LAB_ROLE" ] || die "LAB_ROLE and LAB_TWINS=1 are two sites of the lab's server: give one"
    [ "$SANDBOX_PUPPETDB" = yes ] ||
      die "LAB_TWINS=1 imports the estate's nodes from PuppetDB, which the lab has on Debian 13 (SUITE=trixie), not on $SANDBOX_SUITE"
    return 0
  fi
  [ -n "$LAB_ROLE" ] || return 0
  if [ "$LAB_ROLE" = estate ] || [ -z "${ROLE_PACKAGES[$LAB_ROLE]:-}" ] || [ ! -f "$here/roles/$LAB_ROLE.pp" ]; then
    die "LAB_ROLE must be web (or empty), not '$LAB_ROLE'"
  fi
}

install_role() {
  [ -n "$LAB_SITE" ] || return 0
  log "site $LAB_SITE: installing ${ROLE_PACKAGES[$LAB_SITE]} on the lab's server"
  # shellcheck disable=SC2086 # the list is words
  EXEC_TIMEOUT=600 inside env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    ${ROLE_PACKAGES[$LAB_SITE]} >&2
  inside mkdir -p "$(dirname "$SITE_PP")" "$SERVER_ENVIRONMENT/modules"
  # shellcheck disable=SC2016 # $1 is the inner shell's
  tar -C "$here/roles" -cf - "$ROLES_MODULE" | inside sh -c 'rm -rf "$1/$2" && tar -C "$1" -xf -' sh "$SERVER_ENVIRONMENT/modules" "$ROLES_MODULE"
  # shellcheck disable=SC2016 # $1 is the inner shell's
  inside sh -c 'cat > "$1"' sh "$SITE_PP" <"$here/roles/$LAB_SITE.pp"
}

# The class applied on the sandbox host with the lab's settings and EXTRA ones.
apply_class() {
  local extra=$1 manifest rc=0
  # Each clone first runs at its phase offset within the interval T (the class's
  # phasing), so the lab's interval (LAB_RUNINTERVAL) bounds the wait for every
  # check-in.
  local record="record => true, record_every => $LAB_RECORD_EVERY, record_access_log => '$SERVER_ACCESS_LOG'"
  [ "$SANDBOX_PUPPETDB" != yes ] || record+=", record_puppetdb => 'https://$SERVER_NAME:$PUPPETDB_TLS_PORT'"
  [ "$LAB_TWINS" != 1 ] || record+=", record_group_by => 'pp_role'"
  manifest="class { 'clone_army': server => '$SERVER_NAME', runinterval => $LAB_RUNINTERVAL, $record, $extra }"
  log "puppet apply -e \"$manifest\" (up to ${APPLY_TIMEOUT}s)"
  EXEC_TIMEOUT=$APPLY_TIMEOUT inside puppet apply --detailed-exitcodes --color=false -e "$manifest" || rc=$?
  # --detailed-exitcodes: 0 no change, 2 changes; 4 and 6 are failures.
  [ "$rc" = 0 ] || [ "$rc" = 2 ] || die "puppet apply failed (exit $rc)"
}

# The estate's "production" nodes: clones outside the fleet's clone<N> names, in
# noop, each asking for its role in its certificate request, started and waited
# for until each has checked in and PuppetDB holds its facts and extensions.
make_estate() {
  local listed base entry node role lines='' names=()
  listed=$(EXEC_TIMEOUT=120 inside clone-army base list --format json)
  base=$(jq -er '.result.bases[0].name' <<<"$listed") || die "the class built no base"
  for entry in $ESTATE_NODES; do
    node=${entry%%=*} role=${entry#*=}
    [[ $node =~ ^[a-z][a-z0-9-]{0,30}$ && $role =~ ^[a-z][a-z0-9_]{0,30}$ ]] ||
      die "ESTATE_NODES takes name=role words (lowercase names), not '$entry'"
    names+=("$node")
    lines+=$(jq -cn --arg n "$node" --arg base "$base" --arg server "$SERVER_NAME" \
      --arg c "$node.$ESTATE_DOMAIN" --arg interval "$LAB_RUNINTERVAL" --arg role "pp_role=$role" \
      '[$n, "--base", $base, "--server", $server, "--certname", $c, "--run-mode", "timer",
        "--runinterval", $interval, "--agent-noop", "true", "--extension", $role]')$'\n'
  done
  log "estate: ${names[*]} (roles $ESTATE_NODES) check in as $ESTATE_DOMAIN's production nodes"
  # shellcheck disable=SC2016 # $1 is the inner shell's
  inside sh -c 'cat > "$1"' sh "$ESTATE_LIST" <<<"$lines"
  EXEC_TIMEOUT=600 inside clone-army clone create-many "$ESTATE_LIST" >/dev/null || die "the estate's nodes could not be made"
  EXEC_TIMEOUT=600 inside clone-army clone start "${names[@]}" >/dev/null || die "the estate's nodes did not start"
  estate_count=${#names[@]}
  wait_until "$CHECKIN_TIMEOUT" 5 estate_checked_in || die "the estate's nodes did not check in within ${CHECKIN_TIMEOUT}s"
  wait_until 300 5 estate_in_puppetdb || die "PuppetDB did not list the estate's $estate_count nodes within 300s"
}

# The PQL query that finds the estate's nodes, which the twins are made of.
estate_query() {
  printf 'inventory[certname, environment, facts, trusted] { certname ~ "[.]%s$" and trusted.extensions.pp_role ~ "." }' \
    "${ESTATE_DOMAIN//./[.]}"
}

estate_checked_in() {
  local rows ready
  rows=$(fleet_rows 2>/dev/null) || return 1
  ready=$(printf '%s\n' "$rows" | awk -F'\t' -v d=".$ESTATE_DOMAIN" \
    'substr($3, length($3) - length(d) + 1) == d && $2 == "running" && $4 == "yes" && $7 == "yes"' | wc -l)
  log "estate: $ready of $estate_count checked in"
  ((ready >= estate_count))
}

# Asked on PuppetDB's port on the sandbox's loopback (plain HTTP there).
estate_in_puppetdb() {
  local found
  found=$(EXEC_TIMEOUT=30 inside curl -fsG --max-time 20 "http://$SERVER_ADDR:$PUPPETDB_PORT/pdb/query/v4" \
    --data-urlencode "query=$(estate_query)" 2>/dev/null | jq 'length') || return 1
  ((found >= estate_count))
}

# The page of the run recorded so far, made inside the sandbox; prints where it
# is on this machine (the sandbox's root is visible here while the lab runs).
write_page() {
  local written pages
  written=$(EXEC_TIMEOUT=120 inside clone-army report --from "$RECORD_TIMELINE" --format html --output "$RECORD_PAGE") ||
    { printf '%s\n' "$written" >&2; return 1; }
  pages=$(jq -r '"\(.result.samples) samples, \(.result.bytes) bytes"' <<<"$written")
  log "the lab's load-run page ($pages):"
  printf '%s/root%s\n' "$(sandbox_dir "$NAME")" "$RECORD_PAGE"
}

# The sandbox host's facts, its clone_army fact with the clones' certnames among
# them, sent to the server and so to PuppetDB, whose fleet view lists a load host
# by that fact. Sent under the server's certname: the lab's load host is also
# its server, and its agent's ssldir holds the server's certificate, which the
# report presents to PuppetDB (one key there, so it finds it by itself).
upload_host_facts() {
  [ "$SANDBOX_PUPPETDB" = yes ] || return 0
  EXEC_TIMEOUT=120 inside puppet facts upload --color=false --certname "$SERVER_NAME" >/dev/null
}

# Tab-separated lines as aligned columns (column(1) is not on every minimal Debian).
align_columns() {
  awk -F'\t' '
    { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
      if (NF > nf) nf = NF }
    END { for (r = 1; r <= NR; r++) { line = ""
            for (i = 1; i <= nf; i++) line = line sprintf(i < nf ? "%-" w[i] "s  " : "%s", cell[r, i])
            print line } }'
}

# Every one of the fleet's CLONES clones (clone<N>; the estate's nodes are not
# the fleet) listed, running, signed, and its last run a successful one (the
# report's `succeeded`; a failed run is no check-in).
all_checked_in() {
  local rows ready
  rows=$(fleet_rows 2>/dev/null) || return 1
  ready=$(printf '%s\n' "$rows" | awk -F'\t' '$1 ~ /^clone[0-9]+$/ && $2 == "running" && $4 == "yes" && $7 == "yes"' | wc -l)
  log "checked in: $ready of $CLONES"
  ((ready >= CLONES))
}

lab_failed() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if sandbox status "$NAME" >/dev/null 2>&1; then
    log "lab up failed; what the fleet looked like:"
    # Subshells: nothing in the diagnostics may exit before the teardown below.
    (print_table) >&2 || true
    (EXEC_TIMEOUT=60 inside journalctl --no-pager -n 40 -u 'puppet-clone-army@*') >&2 || true
  fi
  log "tearing the lab down (the rootfs cache stays)"
  sandbox down "$NAME" || true
  exit "$rc"
}

cmd_up() {
  local started
  require_root
  [[ $CLONES =~ ^[0-9]+$ ]] || die "CLONES must be a number, not '$CLONES'"
  check_role
  [ -x "$MODULE_DIR/files/clone-army" ] || die "$MODULE_DIR/files/clone-army is missing: run make build (make lab does)"
  started=$SECONDS
  trap lab_failed EXIT
  trap 'exit 130' INT TERM HUP

  sandbox down "$NAME" # leftovers of an earlier lab
  if [ -z "${SERVER_ADDR:-}" ]; then
    # shellcheck disable=SC2119 # no address is handed out yet
    SERVER_ADDR=$(free_server_addr) || exit
    [ "$SERVER_ADDR" = 127.0.0.1 ] || log "127.0.0.1:8140 is taken on this machine; the lab's Puppet Server uses $SERVER_ADDR:8140"
  fi
  export SERVER_ADDR
  sandbox up "$NAME"
  sandbox server "$NAME"
  install_role

  if [ "$LAB_TWINS" = 1 ]; then
    # The base first, then the estate from it, then the twins: the class imports
    # the estate at one apply and makes its clones twins at the next, once its
    # fact lists what was imported.
    apply_class "num_clones => 0, agent_noop => true"
    make_estate
    local ssl=/var/lib/puppet/ssl twins
    twins="{ 'puppetdb' => 'https://$SERVER_NAME:$PUPPETDB_TLS_PORT', 'query' => '$(estate_query)',"
    twins+=" 'client_cert' => '$ssl/certs/$SERVER_NAME.pem', 'client_key' => '$ssl/private_keys/$SERVER_NAME.pem',"
    twins+=" 'assign' => 'mix', 'exports' => 'shared' }"
    apply_class "num_clones => $CLONES, agent_noop => true, twins => $twins"
    apply_class "num_clones => $CLONES, agent_noop => true, twins => $twins"
  elif [ -n "$LAB_ROLE" ]; then
    apply_class "num_clones => $CLONES, agent_noop => true"
  else
    apply_class "num_clones => $CLONES"
  fi

  log "waiting up to ${CHECKIN_TIMEOUT}s for $CLONES clones to check in"
  wait_until "$CHECKIN_TIMEOUT" 5 all_checked_in ||
    die "not every clone checked in within ${CHECKIN_TIMEOUT}s"
  trap - EXIT INT TERM HUP

  print_table
  log "lab up: $CLONES clones checked in, $((SECONDS - started)) s after start"
  upload_host_facts || log "the sandbox host's facts did not reach PuppetDB; its report lists no load host"
  print_report || true
  echo
  write_page || log "the page of the recorded run could not be made"
  cat >&2 <<EOF

The lab keeps running. Puppet Server: https://$SERVER_ADDR:8140 (as '$SERVER_NAME' inside).
  bash sandbox/sandbox.sh exec $NAME machinectl list
  bash sandbox/sandbox.sh exec $NAME clone-army clone list
  bash sandbox/sandbox.sh exec $NAME bash          # a shell on the sandbox host
  bash sandbox/lab.sh table                         # this table again
  bash sandbox/lab.sh page                          # the page of the run so far, again
  make lab-down                                     # remove all of it
EOF
}

cmd_down() {
  require_root
  sandbox down "$NAME"
  if [ "${KEEP_CACHE:-0}" = 1 ]; then
    log "KEEP_CACHE=1: keeping the rootfs cache in $SANDBOX_CACHE"
    return
  fi
  bash "$here/rootfs.sh" remove
  # The cache directory itself, once nothing (another sandbox) is left in it.
  rmdir "$SANDBOX_CACHE/sandboxes" 2>/dev/null || true
  rmdir "$SANDBOX_CACHE" 2>/dev/null || true
}

# The knee of the lab's server: clones up to RAMP_CLONES (default 40) beside the
# lab's own are made stopped, shaped as the lab's (run interval, agent_noop),
# timer mode phased prefix-even (clone i at T*vdc(i-1), so that clone1 .. cloneN
# run evenly spread for every N), the lab's own clones are stopped, and
# `clone-army ramp run` starts all of them in name order, RAMP_STEP (default 10)
# a step, the steps whole intervals apart (a clone's phase counts from its start:
# clones started on that rhythm keep the running ones evenly spread at every
# step, which clones started by `lab.sh up` would not), each step settling one
# run interval and holding one, or longer for its clones to make the 20 runs a
# p95 needs, up to RAMP_MAX_HOLD s (default two intervals: the 10 clones of a
# first step make 20 runs in two), until a step's p95 run time passes
# RAMP_MAX_P95 s (default 30), its failed runs RAMP_MAX_ERROR_RATE % (default 1)
# or the JRuby wait RAMP_MAX_JRUBY_WAIT ms (default 1000), or its runs fall below
# RAMP_MIN_THROUGHPUT % of those due (default 80: a one-interval window counts a
# run a clone or two off); then it bisects between that step and the last within
# until the knee is within RAMP_RESOLUTION (clones, or a share of the level:
# default 10%). A step whose server refused a request (a JRuby borrow timeout, a
# full queue: each a 503) is past the bounds too. Where the lab pins the clones to
# CLONE_CPUS, those are the load host's CPU in the verdict (--load-host-cpus): the
# server's CPUs are the server's. The server's access log gives each step's
# per-endpoint p95. Prints the curve; the baseline, the timeline and its page stay
# in the sandbox (their paths are printed).
cmd_ramp() {
  require_root
  local total=${RAMP_CLONES:-40} step=${RAMP_STEP:-10} max_hold=${RAMP_MAX_HOLD:-$((2 * LAB_RUNINTERVAL))}
  local resolution=${RAMP_RESOLUTION:-10%} listed base domain noop have i lines='' running var
  local -A counts=([RAMP_CLONES]=$total [RAMP_STEP]=$step [RAMP_MAX_HOLD]=$max_hold)
  for var in "${!counts[@]}"; do
    [[ ${counts[$var]} =~ ^[1-9][0-9]{0,5}$ ]] || die "$var must be a whole number from 1 to 999999, not '${counts[$var]}'"
  done
  # The clones' CPUs are the load host's own when the lab pins them.
  local cpus=()
  [ -z "${CLONE_CPUS:-}" ] || cpus=(--load-host-cpus "$CLONE_CPUS")
  # PuppetDB's queue is recorded with each step (the server's view), not a bound.
  local puppetdb
  mapfile -t puppetdb < <(puppetdb_flag)
  listed=$(EXEC_TIMEOUT=120 inside clone-army clone list --format json)
  base=$(jq -er '.result.clones[0].base' <<<"$listed") || die "the lab has no clone: run lab.sh up first"
  domain=$(jq -er '.result.clones[0].certname | sub("^[^.]*[.]"; "")' <<<"$listed")
  noop=$(jq -r '.result.clones[0].agent_noop // false' <<<"$listed")
  for ((i = 1; i <= total; i++)); do
    have=$(jq --arg n "clone$i" '[.result.clones[] | select(.name == $n)] | length' <<<"$listed")
    ((have == 0)) || continue
    lines+=$(jq -cn --arg n "clone$i" --arg base "$base" --arg server "$SERVER_NAME" --arg c "clone$i.$domain" \
      --arg interval "$LAB_RUNINTERVAL" --arg index $((i - 1)) --arg count "$total" --arg noop "$noop" \
      '[$n, "--base", $base, "--server", $server, "--certname", $c, "--run-mode", "timer",
        "--runinterval", $interval, "--phase-index", $index, "--phase-count", $count,
        "--phasing", "prefix-even", "--agent-noop", $noop]')$'\n'
  done
  if [ -n "$lines" ]; then
    # shellcheck disable=SC2016 # $1 is the inner shell's
    inside sh -c 'cat > "$1"' sh "$RAMP_CLONE_LIST" <<<"$lines"
    EXEC_TIMEOUT=600 inside clone-army clone create-many "$RAMP_CLONE_LIST" >/dev/null ||
      die "clone create-many of the ramp's clones failed"
  fi
  running=$(jq -r '[.result.clones[] | select(.state == "running") | .name] | join(" ")' <<<"$listed")
  if [ -n "$running" ]; then
    log "ramp: stopping the running clones ($running), so that the ramp starts every clone on its rhythm"
    # shellcheck disable=SC2086 # clone names, one word each
    EXEC_TIMEOUT=600 inside clone-army clone stop $running >/dev/null || die "clone stop of the running clones failed"
  fi
  local ramp=(
    --output "$RAMP_BASELINE" --timeline "$RAMP_TIMELINE" --label "lab ${LAB_ROLE:-default}"
    --step "$step" --max-clones "$total" --interval "$LAB_RUNINTERVAL"
    --max-hold "$max_hold" --resolution "$resolution" "${cpus[@]}"
    --max-p95 "${RAMP_MAX_P95:-30}" --max-error-rate "${RAMP_MAX_ERROR_RATE:-1}"
    --max-jruby-wait "${RAMP_MAX_JRUBY_WAIT:-1000}" --min-throughput "${RAMP_MIN_THROUGHPUT:-80}"
    --max-borrow-timeouts 0 --max-queue-limit-hits 0 --access-log "$SERVER_ACCESS_LOG"
    --server "https://$SERVER_NAME:8140" "${puppetdb[@]}" --ca-cert "$SERVER_CA_CERT"
  )
  # The longest this ramp may take, as the helper reckons it from the same flags
  # (every step at its longest hold, every level bisection may try), is its time limit.
  local longest timeout
  longest=$(EXEC_TIMEOUT=60 inside clone-army ramp longest "${ramp[@]}") || die "ramp longest refused the ramp's flags"
  timeout=$(jq -er '.result.seconds' <<<"$longest") || die "ramp longest gave no length: $longest"
  log "ramp: +$step clones a step up to $total, a hold of up to $max_hold s a step for a p95, then bisecting to $resolution; at most $(jq -r '.result.steps' <<<"$longest") steps in $((timeout / 60)) min${CLONE_CPUS:+; load host CPUs: $CLONE_CPUS}"
  EXEC_TIMEOUT=$timeout inside clone-army ramp run "${ramp[@]}" >/dev/null || die "ramp run failed"
  EXEC_TIMEOUT=60 inside clone-army ramp report "$RAMP_BASELINE" --format table
  EXEC_TIMEOUT=120 inside clone-army report --from "$RAMP_TIMELINE" --format html --output "$RAMP_PAGE" >/dev/null ||
    die "the ramp's page could not be written"
  log "baseline, timeline and page: $(sandbox_dir "$NAME")/root{$RAMP_BASELINE,$RAMP_TIMELINE,$RAMP_PAGE}"
}

case "${1:-}" in
  up) cmd_up ;;
  ramp) cmd_ramp ;;
  down) cmd_down ;;
  table)
    require_root
    print_table || exit 1
    print_report || exit 1
    ;;
  page)
    require_root
    write_page || exit 1
    ;;
  *)
    echo "usage: $0 up|down|table|page|ramp" >&2
    exit 2
    ;;
esac
