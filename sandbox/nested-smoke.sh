#!/usr/bin/env bash
# Proves, without the helper or the module, that a sandbox host can run
# booted clones the way the module does: an OverlayFS mount under
# /var/lib/machines/<clone> (upper and work dirs on the real directory bound
# at /var/lib/puppet-clone-army) and a systemd unit running
# `systemd-nspawn --keep-unit --boot` started with systemctl, visible in
# `machinectl list`.
#
#   nested-smoke.sh [NAME]   (default NAME: smoke)
#
# Uses sandbox NAME if it is up; otherwise brings it up and takes it down
# again at exit, on failure too. The lower layer is the cached sandbox rootfs,
# bound read-only inside by sandbox.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sandbox/lib.sh
source "$here/lib.sh"

name=${1:-smoke}
valid_sandbox_name "$name"
require_root
CLONE_TIMEOUT=${CLONE_TIMEOUT:-90}

own=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  EXEC_TIMEOUT=60 bash "$here/sandbox.sh" exec "$name" bash -c "$inner_cleanup" >/dev/null 2>&1 || true
  if ((own)); then bash "$here/sandbox.sh" down "$name" || rc=1; fi
  exit "$rc"
}

inner_cleanup='
systemctl stop smoke-clone.service 2>/dev/null
umount /var/lib/machines/smoke 2>/dev/null
rm -f /etc/systemd/system/smoke-clone.service
systemctl daemon-reload
rm -rf /var/lib/puppet-clone-army/smoke-overlay /var/lib/puppet-clone-army/smoke-workdir
rmdir /var/lib/machines/smoke 2>/dev/null
true'

if ! bash "$here/sandbox.sh" status "$name" >/dev/null 2>&1; then
  own=1
fi
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
if ((own)); then bash "$here/sandbox.sh" up "$name"; fi

# The inner script gets its inputs as arguments: no string splicing.
EXEC_TIMEOUT=$((CLONE_TIMEOUT + 60)) bash "$here/sandbox.sh" exec "$name" bash -s -- "$CLONE_TIMEOUT" <<'EOF'
set -euo pipefail
timeout=$1
lower=/var/lib/clone-army-sandbox/rootfs
[ -d "$lower/etc/systemd" ] || { echo "no lower rootfs at $lower" >&2; exit 1; }
mkdir -p /var/lib/puppet-clone-army/smoke-overlay /var/lib/puppet-clone-army/smoke-workdir /var/lib/machines/smoke
chmod 0755 /var/lib/puppet-clone-army/smoke-overlay
mount -t overlay overlay \
  -o lowerdir=$lower,upperdir=/var/lib/puppet-clone-army/smoke-overlay,workdir=/var/lib/puppet-clone-army/smoke-workdir \
  /var/lib/machines/smoke
cat >/etc/systemd/system/smoke-clone.service <<'UNIT'
[Unit]
Description=clone-army sandbox smoke test clone
[Service]
ExecStart=/usr/bin/systemd-nspawn --quiet --keep-unit --boot --link-journal=no --machine=smoke --directory=/var/lib/machines/smoke --bind-ro=/etc/hosts
KillMode=mixed
Type=notify
Delegate=yes
Slice=machine.slice
UNIT
systemctl daemon-reload
start=$(date +%s.%N)
systemctl start smoke-clone.service
deadline=$((SECONDS + timeout))
state=
until [ "$state" = running ] || [ "$state" = degraded ]; do
  if ((SECONDS >= deadline)); then
    echo "nested clone did not boot within ${timeout}s (state: ${state:-none})" >&2
    journalctl -u smoke-clone.service --no-pager -n 30 >&2
    exit 1
  fi
  sleep 0.5
  state=$(systemctl -M smoke is-system-running 2>/dev/null || true)
done
end=$(date +%s.%N)
machines=$(machinectl list --no-legend)
printf '%s\n' "$machines"
grep -q '^smoke ' <<<"$machines" || { echo "smoke is not in machinectl list" >&2; exit 1; }
printf 'nested clone booted (systemd %s) in %.1f s after systemctl start\n' "$state" "$(awk -v a="$end" -v b="$start" 'BEGIN { print a - b }')"
systemctl stop smoke-clone.service
EOF
log "nested clone smoke test passed in sandbox $name"
