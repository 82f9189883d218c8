#!/usr/bin/env bash
# Builds a Debian base with `--puppet-source pe` against a stand-in PE primary server:
# a local TLS server on 127.0.0.2:8140 with its own CA, serving a fake install.bash that
# checks what clone-army hands it. Then the same with another CA, which must fail.
#
# PE itself cannot be installed on this project's machines, so this shows the helper's
# side of the pe path (CA-verified fetch, CA in place, script run inside the staging
# root with the service flags, build key removed, CA kept, service enabled), not PE's
# own install.bash. Needs root, debootstrap, openssl, python3 and a Debian mirror; takes
# two debootstraps (a few minutes). Everything happens under a temporary
# CLONE_ARMY_ROOT; 127.0.0.2 keeps clear of a Puppet Server on 127.0.0.1:8140.
#
# Usage: scripts/try-pe-base.sh [path/to/clone-army]
set -euo pipefail

helper=$(realpath "${1:-target/debug/clone-army}")
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 \
  -subj "/CN=Stand-in PE CA" 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other-ca.pem -days 1 \
  -subj "/CN=Some other CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
  -subj "/CN=127.0.0.2" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.2\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
  -out server.pem -days 1 -extfile server.ext 2>/dev/null

mkdir -p www/packages/current
cat >www/packages/current/install.bash <<'EOF'
#!/bin/bash
# Stand-in for PE's install.bash: checks its arguments and the CA, installs a fake agent.
set -e
[ "$*" = "--puppet-service-ensure stopped --puppet-service-enable false" ] || { echo "bad arguments: $*" >&2; exit 3; }
grep -q "BEGIN CERTIFICATE" /etc/puppetlabs/puppet/ssl/certs/ca.pem || { echo "no CA" >&2; exit 4; }
mkdir -p /lib/systemd/system /etc/puppetlabs/puppet/ssl/private_keys
printf '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' >/lib/systemd/system/puppet.service
echo KEY >/etc/puppetlabs/puppet/ssl/private_keys/build.pem
EOF

cat >serve.py <<'EOF'
import functools, http.server, ssl, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.2", 8140), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
EOF
python3 serve.py "$work/www" server.pem server.key 2>server.log &
server_pid=$!
sleep 1

root="$work/root"
mkdir -p "$root/etc/apt"
cp /etc/os-release "$root/etc/"
cp -r /etc/apt/sources.list.d "$root/etc/apt/" 2>/dev/null || true
cp /etc/apt/sources.list "$root/etc/apt/" 2>/dev/null || true

create() {
  CLONE_ARMY_ROOT="$root" "$helper" base create "$1" --puppet-source pe \
    --server 127.0.0.2 --pe-ca-cert "$2" 2>>build.log
}

fail() { echo "FAIL: $*" >&2; exit 1; }

create pe1 "$work/ca.pem" >pe1.json || fail "pe1: $(cat pe1.json)"
base="$root/var/lib/puppet-clone-army/pe1"
grep -q '"puppet_confdir":"/etc/puppetlabs/puppet"' pe1.json || fail "pe1 confdir: $(cat pe1.json)"
cmp -s "$base/etc/puppetlabs/puppet/ssl/certs/ca.pem" ca.pem || fail "CA not kept"
[[ ! -e "$base/etc/puppetlabs/puppet/ssl/private_keys" ]] || fail "build key kept"
[[ ! -e "$base/root/clone-army-pe-install.bash" ]] || fail "install.bash left behind"
[[ -L "$base/etc/systemd/system/multi-user.target.wants/puppet.service" ]] || fail "service not enabled"
echo "ok: pe base built against the stand-in primary, CA verified"

if create pe2 "$work/other-ca.pem" >pe2.json; then fail "pe2 built with the wrong CA"; fi
grep -q '"kind":"base-build-failed"' pe2.json || fail "pe2: $(cat pe2.json)"
grep -q 'curl' pe2.json || fail "pe2 not refused by curl: $(cat pe2.json)"
[[ ! -e "$root/var/lib/puppet-clone-army/.staging-pe2" ]] || fail "staging left behind"
echo "ok: another CA refused by curl, staging removed"
