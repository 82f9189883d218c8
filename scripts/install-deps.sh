#!/usr/bin/env bash
# Installs the Debian packages `make test`, `make lab` and `make bench` use, on a
# fresh Debian 12 machine. Only what is missing is installed, so a warm machine
# pays nothing.
set -euo pipefail

packages=(
  # sandbox host and the fleet
  debootstrap systemd-container
  # Ruby side: Puppet itself, rspec-puppet and its helpers, linters
  puppet-agent ruby-rspec-puppet ruby-puppetlabs-spec-helper ruby-rspec-puppet-facts
  puppet-lint rubocop metadata-json-lint
  # REFERENCE.md is generated with it (make reference; make lint checks it)
  puppet-strings
  # the selboolean type clone_army::selinux declares (a vendored module of Puppet's
  # agent packages, a package of its own on Debian 12), for rspec-puppet
  puppet-module-puppetlabs-selinux-core
  # shell lint, binary checks, JSON on the command line
  shellcheck file jq
  # ss: which loopback addresses already have a port 8140 (sandbox/lib.sh)
  iproute2
  # the acceptance suite's loopback HTTP server (helper_source over http)
  python3
  # the acceptance suite opens the recorded run's page as a person would
  chromium
)

missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = 'install ok installed' ] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d keeps package scripts from starting services on this machine:
  # the tests run Puppet Server inside the sandbox host, never here.
  # An existing policy-rc.d is the machine owner's and is left as it is.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if ! command -v cargo >/dev/null; then
  echo "install-deps: cargo not found; install a Rust toolchain (rustup) first" >&2
  exit 1
fi
