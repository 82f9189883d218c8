#!/usr/bin/env bash
# `make lint`: THIRD-PARTY-NOTICES.md (or NOTICES_FILE) names exactly the crates, by name
# and version, that the release helper links; when it does not, names the crates either
# side lacks and says to run `make notices`. Needs cargo only, not cargo-about, which
# writes the file.
#
# The crates the helper links, as cargo itself resolves them for the release build:
# `cargo tree -e normal` for the one target the Makefile builds (`--target`), from
# Cargo.lock. `-e normal` leaves out build scripts' dependencies and dev-dependencies, and
# resolves features as a build without the tests does (a feature only a dev-dependency
# asks for brings nothing in). These are the rules helper/about.toml gives cargo-about:
# proc-macro crates (and syn, quote, proc-macro2 beneath them) stay, as cargo-about keeps
# them (about.toml says why), and the helper itself, clone-army, is the project's own code
# (LICENSE), which cargo-about's `private` leaves out. `make notices` runs this check
# right after cargo-about, so a disagreement between the two shows there.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

notices=${NOTICES_FILE:-THIRD-PARTY-NOTICES.md}
# The target of the release build, where the Makefile says it.
target=$(sed -n 's/^TARGET *:= *//p' Makefile)
[ -n "$target" ] || { echo "check-notices: found no TARGET in the Makefile" >&2; exit 1; }

[ -f "$notices" ] || { echo "check-notices: $notices is missing: run make notices" >&2; exit 1; }

tree=$(cargo tree --locked -e normal --target "$target" -p clone-army --prefix none --format '{p}')
# `{p}` is "name vX.Y.Z", then " (proc-macro)", " (/path)" for a local crate, " (*)" for
# one already shown; the local crate (clone-army) is the only one with a path.
linked=$(awk '$3 !~ /^\(\// { sub(/^v/, "", $2); print $1, $2 }' <<<"$tree" | sort -u)
[ -n "$linked" ] || { echo "check-notices: cargo tree listed no crates" >&2; exit 1; }

# The rows of the table under "## Crates": "| name | version | licence |".
named=$(awk -F '|' '
  /^## / { in_crates = ($0 == "## Crates"); next }
  in_crates && /^\| / {
    name = $2; version = $3
    gsub(/ /, "", name); gsub(/ /, "", version)
    if (name != "crate" && name !~ /^-+$/) print name, version
  }' "$notices" | sort -u)

unlisted=$(comm -23 <(printf '%s\n' "$linked") <(printf '%s\n' "$named"))
unlinked=$(comm -13 <(printf '%s\n' "$linked") <(printf '%s\n' "$named"))
if [ -n "$unlisted" ] || [ -n "$unlinked" ]; then
  {
    echo "check-notices: $notices does not name the crates the helper links:"
    [ -z "$unlisted" ] || awk '{ print "  linked, not in the notices: " $0 }' <<<"$unlisted"
    [ -z "$unlinked" ] || awk '{ print "  in the notices, not linked: " $0 }' <<<"$unlinked"
    echo "run make notices and commit $notices"
  } >&2
  exit 1
fi
echo "check-notices: $notices names the $(wc -l <<<"$linked") crates the helper links"
