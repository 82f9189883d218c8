#!/usr/bin/env bash
# The sandbox host's root filesystem: a Debian rootfs (SANDBOX_SUITE) with
# systemd, machined, puppet-agent, puppetserver (and PuppetDB with PostgreSQL
# where lib.sh says so), cached under
# /var/cache/clone-army-sandbox/rootfs-<key> where <key> hashes the suite,
# mirror and package list (lib.sh), so a change rebuilds it.
#
#   rootfs.sh build   build unless cached; prints the rootfs path on stdout
#   rootfs.sh path    prints the path the current key maps to (may not exist)
#   rootfs.sh remove  removes every cached rootfs not in use by a sandbox
#
# It is built in a staging directory and renamed into place only when
# complete, so a half-built rootfs is never used. The root directory is 0755:
# with mktemp's 0700, dbus inside the container fails with EACCES and boot hangs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sandbox/lib.sh
source "$here/lib.sh"

staging=

cleanup_staging() {
  [ -n "$staging" ] && [ -d "$staging" ] || return 0
  local m
  # debootstrap leaves /proc, /sys and friends mounted when it fails midway.
  while read -r m; do
    [ -z "$m" ] || umount -l "$m" 2>/dev/null || true
  done < <(mounts_below "$staging")
  rm -rf --one-file-system "$staging"
}

build() {
  require_root
  local target key mirror started
  target=$(rootfs_path)
  if [ -d "$target" ]; then
    printf '%s\n' "$target"
    return
  fi
  mkdir -p "$SANDBOX_CACHE"
  chmod 0755 "$SANDBOX_CACHE"
  # One builder at a time (acceptance and lab may start together); the
  # second waits and then finds the rootfs in place.
  exec 9>"$SANDBOX_CACHE/.rootfs.lock"
  flock -w 1800 9 || die "timed out waiting for another rootfs build"
  if [ -d "$target" ]; then
    printf '%s\n' "$target"
    return
  fi
  command -v debootstrap >/dev/null || die "debootstrap is not installed (make deps)"

  key=$(rootfs_key)
  mirror=$(host_mirror)
  staging="$SANDBOX_CACHE/.staging-$key-$$"
  trap cleanup_staging EXIT
  trap 'exit 130' INT TERM HUP
  mkdir "$staging"
  chmod 0755 "$staging"

  started=$SECONDS
  log "building the sandbox rootfs ($SANDBOX_SUITE from $mirror) in $staging"
  local include
  include=$(IFS=,; printf '%s' "${SANDBOX_PACKAGES[*]}")
  if ! debootstrap --variant=minbase --include="$include" \
    "$SANDBOX_SUITE" "$staging" "$mirror" >"$staging.log" 2>&1; then
    tail -n 30 "$staging.log" >&2
    [ -f "$staging/debootstrap/debootstrap.log" ] && tail -n 30 "$staging/debootstrap/debootstrap.log" >&2
    rm -f "$staging.log"
    die "debootstrap failed"
  fi
  rm -f "$staging.log"
  log "debootstrap done in $((SECONDS - started)) s"

  configure_rootfs "$staging"

  chmod 0755 "$staging"
  mv -T "$staging" "$target"
  staging=
  log "sandbox rootfs ready in $((SECONDS - started)) s: $target"
  printf '%s\n' "$target"
}

# What the sandbox host needs beyond the packages. Anything that depends on
# the run (server settings, /etc/hosts) is written per sandbox by sandbox.sh,
# never here, so changing it needs no rebuild.
configure_rootfs() {
  local root=$1
  printf 'sandbox\n' >"$root/etc/hostname"
  # Empty: systemd gives every booted sandbox its own transient machine id.
  : >"$root/etc/machine-id"
  # Nothing starts by itself: the harness starts puppetserver (and PostgreSQL
  # and PuppetDB) once they are configured for the sandbox's address, and the
  # sandbox's own agent must not talk to the server.
  # One at a time: systemctl disables none of them when one is not installed.
  local unit
  for unit in puppet puppetserver postgresql puppetdb; do
    systemctl --root="$root" disable "$unit.service" >/dev/null 2>&1 || true
  done
  # Background jobs that only cost CPU beside a fleet.
  systemctl --root="$root" mask apt-daily.timer apt-daily-upgrade.timer \
    man-db.timer fstrim.timer e2scrub_all.timer >/dev/null 2>&1 || true
  rm -f "$root"/var/cache/apt/archives/*.deb
  {
    printf 'key=%s\nsuite=%s\nmirror=%s\nbuilt=%s\n' "$(rootfs_key)" "$SANDBOX_SUITE" \
      "$(host_mirror)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf 'packages=%s\n' "${SANDBOX_PACKAGES[*]}"
  } >"$root/etc/clone-army-sandbox.info"
}

remove() {
  require_root
  local d building=1
  [ -d "$SANDBOX_CACHE" ] || return 0
  exec 9>"$SANDBOX_CACHE/.rootfs.lock"
  if flock -n 9; then building=0; fi
  for d in "$SANDBOX_CACHE"/rootfs-* "$SANDBOX_CACHE"/.staging-*; do
    [ -e "$d" ] || continue
    if ((building)) && [[ $d == */.staging-* ]]; then
      log "keeping $d: a build is running"
      continue
    fi
    # A live sandbox's overlay names its rootfs in lowerdir= of its mount options.
    if grep -qF -- "$d" /proc/self/mountinfo; then
      log "keeping $d: a sandbox uses it"
      continue
    fi
    log "removing $d"
    rm -rf --one-file-system "$d"
  done
  # The lock file too, unless a build holds it right now.
  if ((!building)); then rm -f "$SANDBOX_CACHE/.rootfs.lock"; fi
  exec 9>&-
}

case "${1:-}" in
  build) build ;;
  path) rootfs_path ;;
  remove) remove ;;
  *)
    echo "usage: $0 build|path|remove" >&2
    exit 2
    ;;
esac
