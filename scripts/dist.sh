#!/usr/bin/env bash
# `make dist`: the release files, into target/dist/ (or DIST_DIR):
#   <metadata name>-<version>.tar.gz    the module as `puppet module install` and the
#                                       Forge take it, files/clone-army (the static
#                                       helper) included; what .pdkignore names is left out
#   clone-army-<version>-<arch>-linux.tar.gz   the helper alone (with LICENSE and
#                                       THIRD-PARTY-NOTICES.md, the licences of the crates
#                                       it carries)
#   clone-army-<version>-<arch>-linux   the bare helper, what class clone_army's helper_source
#                                       points at for a module deployed from git (its sha256
#                                       is helper_checksum)
#   *.sha256                            their checksums (sha256sum format)
# Then checks the module tarball: one top directory, metadata at its version, the helper
# executable and static beside the notices of the crates it carries, nothing .pdkignore
# leaves out; that the helper tarball holds the helper, LICENSE and the notices; and
# installs the module tarball with
# `puppet module install` into a temporary directory, whose helper must run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

meta() { ruby -rjson -e "print JSON.parse(File.read('metadata.json')).fetch('$1')"; }
name=$(meta name)
version=$(meta version)
arch=$(uname -m)
helper=files/clone-army
[ -x "$helper" ] || { echo "dist: $helper is missing; run make build first" >&2; exit 1; }
helper_version=$("$helper" --version | awk '{print $2}')
[ "$helper_version" = "$version" ] || {
  echo "dist: $helper says $helper_version, metadata.json $version; run make build" >&2
  exit 1
}

out=${DIST_DIR:-target/dist}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$name-$version
mkdir -p "$out" "$stage/$top"

# .pdkignore's patterns, as anchored path prefixes.
mapfile -t ignored < <(grep -v -e '^#' -e '^$' .pdkignore | sed 's#^/##')
excluded() {
  local path=$1 pattern
  for pattern in "${ignored[@]}"; do
    case $pattern in
      */) [[ $path == "$pattern"* ]] && return 0 ;;
      *) [[ $path == "$pattern" ]] && return 0 ;;
    esac
  done
  return 1
}

# What git tracks (not what happens to lie around), plus the built helper.
while IFS= read -r path; do
  excluded "$path" && continue
  mkdir -p "$stage/$top/$(dirname "$path")"
  cp -p "$path" "$stage/$top/$path"
done < <(git ls-files; echo "$helper")

# Reproducible: fixed owner, order and time (the last commit's).
mtime=@$(git log -1 --format=%ct)
pack() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" -C "$1" -czf "$2" "$3"; }
module_tarball=$out/$top.tar.gz
pack "$stage" "$module_tarball" "$top"

helper_dir=clone-army-$version-$arch-linux
mkdir -p "$stage/$helper_dir"
# The helper's licence and the notices of the crates it links travel with it.
helper_files=("$helper" LICENSE THIRD-PARTY-NOTICES.md)
cp -p "${helper_files[@]}" "$stage/$helper_dir/"
helper_tarball=$out/$helper_dir.tar.gz
pack "$stage" "$helper_tarball" "$helper_dir"

bare_helper=$out/$helper_dir
install -m 0755 "$helper" "$bare_helper"

(cd "$out" && for f in "$top.tar.gz" "$helper_dir.tar.gz" "$helper_dir"; do sha256sum "$f" >"$f.sha256"; done)

# The checks. grep reads here-strings, not pipes: under pipefail a `grep -q` that
# stops at its first match can kill the writer with SIGPIPE when the text spans
# more than one write, and fail a check that holds.
listing=$(tar -tzf "$module_tarball")
fail() { echo "dist: $module_tarball: $*" >&2; exit 1; }
[ "$(printf '%s\n' "$listing" | cut -d/ -f1 | sort -u)" = "$top" ] || fail "not one top directory $top"
for required in metadata.json README.md REFERENCE.md CHANGELOG.md LICENSE THIRD-PARTY-NOTICES.md manifests/init.pp \
  lib/puppet_x/clone_army/schema.json templates/record.service.epp plans/load_test.pp files/clone-army; do
  grep -qx "$top/$required" <<<"$listing" || fail "lacks $required"
done
for pattern in "${ignored[@]}"; do
  ! grep -q "^$top/$pattern" <<<"$listing" || fail "carries $pattern, which .pdkignore leaves out"
done
# What the README links to, and the pages of docs/ the man page names, are read where
# the module is installed (the Forge's page, the modulepath): each must be in it.
# shellcheck disable=SC2016 # Ruby's code, in single quotes so that the shell leaves it be
mapfile -t linked < <(ruby -e '
  text = File.read("README.md").gsub(/^```.*?^```/m, "")
  puts text.scan(/\]\(([^)\s]+)\)/).flatten.grep_v(/\A([a-z]+:|#)/).map { |l| l.split("#").first }.uniq
')
mapfile -t -O "${#linked[@]}" linked < <("$helper" man | grep -o 'docs/[A-Za-z_]*\.md' | sort -u)
[ "${#linked[@]}" -gt 5 ] || fail "found ${#linked[@]} links in README.md and the man page, expected more"
for path in "${linked[@]}"; do
  grep -qx -e "$top/$path" -e "$top/$path/" <<<"$listing" ||
    fail "lacks $path, which README.md or the man page points to"
done
check=$(mktemp -d)
tar -xzf "$module_tarball" -C "$check" "$top/files/clone-army" "$top/metadata.json"
[ -x "$check/$top/files/clone-army" ] || fail "files/clone-army is not executable"
grep -Eq 'static(-pie)? linked' <<<"$(file -L "$check/$top/files/clone-army")" || fail "files/clone-army is not static"
[ "$(ruby -rjson -e "print JSON.parse(File.read('$check/$top/metadata.json'))['version']")" = "$version" ] ||
  fail "metadata.json is not at $version"
rm -rf "$check"
helper_listing=$(tar -tzf "$helper_tarball" | sort)
helper_names=("${helper_files[@]##*/}")
[ "$helper_listing" = "$(printf '%s\n' "$helper_dir/" "${helper_names[@]/#/$helper_dir/}" | sort)" ] || {
  echo "dist: $helper_tarball: holds $(tr '\n' ' ' <<<"$helper_listing")but should hold $helper_dir/ with ${helper_names[*]}" >&2
  exit 1
}
(cd "$out" && sha256sum -c --quiet "$top.tar.gz.sha256" "$helper_dir.tar.gz.sha256" "$helper_dir.sha256")
cmp -s "$bare_helper" "$helper" || fail "$bare_helper is not $helper"

# And as users install it: `puppet module install` of the tarball (no Forge needed).
installed=$(mktemp -d)
trap 'rm -rf "$stage" "$installed"' EXIT
puppet module install --target-dir "$installed" --ignore-dependencies "$module_tarball" >/dev/null
[ -x "$installed/clone_army/files/clone-army" ] || fail "puppet module install left no executable files/clone-army"
"$installed/clone_army/files/clone-army" schema >/dev/null || fail "the installed helper does not run"

echo "dist: $module_tarball ($(printf '%s\n' "$listing" | grep -vc '/$') files)"
echo "dist: $helper_tarball"
echo "dist: $bare_helper (helper_source; helper_checksum $(cut -d' ' -f1 "$bare_helper.sha256"))"
