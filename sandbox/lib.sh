# shellcheck shell=bash
# Shared by the sandbox scripts: paths, logging and small helpers.
# Sourced, never run. Callers set -euo pipefail themselves.
#
# Everything the sandbox scripts create lives under SANDBOX_CACHE (outside
# the checkout), so `make lab-down` can remove all of it:
#   $SANDBOX_CACHE/rootfs-<hash>/        a cached Debian rootfs per suite (read-only lower layer)
#   $SANDBOX_CACHE/.staging-<hash>-<pid>/ a rootfs being built (renamed into place when complete)
#   $SANDBOX_CACHE/sandboxes/<name>/     one sandbox host's state (upper/work/root/data, pid, log)

SANDBOX_CACHE=${SANDBOX_CACHE:-/var/cache/clone-army-sandbox}
# The suites the sandbox is made for (their Puppet packages are Debian's own),
# the first the default: trixie (Debian 13: Puppet 8, Puppet Server 8,
# PuppetDB 8) and bookworm (Debian 12: Puppet 7, Puppet Server 7).
SANDBOX_SUITES=(trixie bookworm)
SANDBOX_SUITE=${SANDBOX_SUITE:-${SANDBOX_SUITES[0]}}
if [[ " ${SANDBOX_SUITES[*]} " != *" $SANDBOX_SUITE "* ]]; then
  printf 'SUITE (SANDBOX_SUITE) must be one of: %s; not %s\n' "${SANDBOX_SUITES[*]}" "'$SANDBOX_SUITE'" >&2
  exit 2
fi
# shellcheck disable=SC2034 # used by the scripts that source this file
SANDBOX_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Packages of the sandbox host. A change here changes the cache key, so the
# next run rebuilds the rootfs.
SANDBOX_PACKAGES=(
  # a booting systemd host with machined, as the module's nodes are
  systemd systemd-sysv dbus systemd-container libpam-systemd
  # the agent that runs `puppet apply` of the module, and the server the clones talk to
  puppet-agent puppetserver
  # what the helper needs to build a clone base inside the sandbox
  debootstrap debian-archive-keyring ca-certificates
  # tools the harness and people use inside
  iproute2 procps curl jq less
  # the code deployer a Puppet Server host runs, for the module deployed from git
  r10k git
)
# Whether the sandbox's Puppet Server stores facts, catalogs and reports in
# PuppetDB (sandbox.sh server sets it up): on the Puppet 8 suite, as the
# Puppet 8 stacks people load-test are; Debian 12's stays the plain Puppet 7 one.
case $SANDBOX_SUITE in
  trixie) SANDBOX_PUPPETDB=yes ;;
  *) SANDBOX_PUPPETDB=no ;;
esac
if [ "$SANDBOX_PUPPETDB" = yes ]; then
  SANDBOX_PACKAGES+=(puppetdb puppet-terminus-puppetdb postgresql)
fi
# PuppetDB's ports, on the server's address: plain HTTP for its status, TLS for
# the server and for clone-army report --puppetdb.
# shellcheck disable=SC2034 # used by the scripts that source this file
PUPPETDB_PORT=8080
# shellcheck disable=SC2034
PUPPETDB_TLS_PORT=8081
# Where class clone_army's recorder (record => true) writes its timeline (the
# class's default record_file), and the page made from it inside the sandbox
# (the name the report task gives it by default).
# shellcheck disable=SC2034
RECORD_TIMELINE=/var/log/puppet-clone-army/timeline.jsonl
# shellcheck disable=SC2034
RECORD_PAGE=/var/log/puppet-clone-army/timeline.html
# The CA certificate of the sandbox's Puppet Server (Debian's puppetserver
# package keeps its CA there), for clone-army report --server.
# shellcheck disable=SC2034
SERVER_CA_CERT=/etc/puppet/puppetserver/ca/ca_crt.pem
# The sandbox Puppet Server's environment (Debian's codedir): its manifests/site.pp
# classifies the agents, its modules/ comes before the base modulepath.
# shellcheck disable=SC2034
SERVER_ENVIRONMENT=/etc/puppet/code/environments/production
# Bump when the rootfs recipe (not the package list) changes.
SANDBOX_RECIPE=1

log() { printf '%s [sandbox] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

require_root() {
  [ "$(id -u)" = 0 ] || die "must run as root (debootstrap, mounts and systemd-nspawn need it)"
}

# The apt mirror for SANDBOX_SUITE from the host's own apt sources (deb822
# .sources files or one-line sources.list), unless MIRROR is set.
host_mirror() {
  if [ -n "${MIRROR:-}" ]; then
    printf '%s\n' "$MIRROR"
    return
  fi
  local found=
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    found=$(awk -v suite="$SANDBOX_SUITE" '
      function flush() {
        if (!done && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uri != "") { print uri; done = 1; exit }
        types = ""; suites = ""; uri = ""
      }
      /^[[:space:]]*$/ { flush(); next }
      /^Types:/  { sub(/^Types:[[:space:]]*/, ""); types = $0 }
      /^Suites:/ { sub(/^Suites:[[:space:]]*/, ""); suites = $0 }
      /^URIs:/   { uri = $2 }
      END { flush() }' "$f")
    [ -n "$found" ] && break
  done
  if [ -z "$found" ]; then
    found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk -v suite="$SANDBOX_SUITE" '$1 == "deb" {
        i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
        if (!done && $(i + 1) == suite) { print $i; done = 1 } }')
  fi
  printf '%s\n' "${found:-http://deb.debian.org/debian}"
}

# The cache key: suite, mirror, package list and recipe version.
rootfs_key() {
  {
    printf 'suite=%s\nmirror=%s\nrecipe=%s\n' "$SANDBOX_SUITE" "$(host_mirror)" "$SANDBOX_RECIPE"
    printf '%s\n' "${SANDBOX_PACKAGES[@]}" | sort
  } | sha256sum | cut -c1-16
}

rootfs_path() { printf '%s/rootfs-%s\n' "$SANDBOX_CACHE" "$(rootfs_key)"; }

sandbox_dir() { printf '%s/sandboxes/%s\n' "$SANDBOX_CACHE" "$1"; }

valid_sandbox_name() {
  [[ $1 =~ ^[a-z0-9][a-z0-9-]{0,30}$ ]] || die "invalid sandbox name '$1' (want [a-z0-9][a-z0-9-]*)"
}

# Is PATH (absolute) a mount point right now? Reads /proc/self/mountinfo,
# which is the truth (field 5 is the mount point, octal escapes for spaces).
is_mounted() {
  awk -v p="$1" '$5 == p { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# Every mount point at or below PATH, deepest first (for unmounting).
mounts_below() {
  awk -v p="$1" '$5 == p || index($5, p "/") == 1 { print length($5) " " $5 }' /proc/self/mountinfo |
    sort -rn | cut -d' ' -f2- | uniq
}

# Poll CMD... every INTERVAL seconds until it succeeds or TIMEOUT seconds pass.
wait_until() {
  local timeout=$1 interval=$2
  shift 2
  local deadline=$((SECONDS + timeout))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep "$interval"
  done
}

# Whether something on this machine listens where a sandbox's Puppet Server
# would bind ADDR:8140: that address, or a wildcard. Java shows an IPv4 bind as
# [::ffff:ADDR]:8140. Other loopback addresses do not conflict.
port_8140_taken() {
  ss -Htln 'sport = :8140' 2>/dev/null | awk -v a="$1" '
    $4 == a ":8140" || $4 == "[::ffff:" a "]:8140" || $4 ~ /^(0\.0\.0\.0|\*|\[::\]):8140$/ { f = 1 }
    END { exit !f }'
}

# The first address of 127.0.0.1 ... 127.0.0.254 whose port 8140 is free and that is
# not one of the ADDRs given (addresses handed to servers that may not listen yet).
free_server_addr() {
  local i addr
  for i in $(seq 1 254); do
    addr=127.0.0.$i
    [[ " $* " == *" $addr "* ]] && continue
    port_8140_taken "$addr" || { printf '%s\n' "$addr"; return 0; }
  done
  die "port 8140 is taken on every loopback address (or on a wildcard): stop what listens there (ss -tlnp 'sport = :8140')"
}
