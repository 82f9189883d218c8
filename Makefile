# clone_army: the two commands are `make lab` and `make test`.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

TARGET   := x86_64-unknown-linux-gnu
# A static build runs on every supported host, RHEL 8's older glibc included.
RUSTFLAGS_STATIC := -C target-feature=+crt-static
HELPER   := target/$(TARGET)/release/clone-army
CLONES   ?= 4
# SUITE=trixie|bookworm: the Debian suite of the sandbox host (make lab, make bench; make
# acceptance runs every suite unless SUITE names one); sandbox/lib.sh holds the list and
# the default (trixie).
ifdef SUITE
export SANDBOX_SUITE := $(SUITE)
endif

# REFERENCE.md is generated, never written by hand: Debian's puppet-strings reads the doc
# comments of the classes, types, functions, type aliases and tasks, from the repository's
# root with its default search paths (its cache goes to .yardoc/). The one place the
# command is written: `make reference` writes REFERENCE.md with it, `make lint` checks the
# committed one against a fresh run. RUBYOPT=-W0 silences Ruby's deprecation warnings
# about puppet-strings' own code, not puppet-strings' warnings about ours.
REFERENCE_GENERATE := RUBYOPT=-W0 puppet strings generate --format markdown --out

.PHONY: all deps build static-check lint reference notices unit acceptance dist test lab lab-down bench bench-checkin bench-derive bench-across bench-pages clean

all: build

deps:
	bash scripts/install-deps.sh

build:
	RUSTFLAGS="$(RUSTFLAGS_STATIC)" cargo build --release --locked --target $(TARGET) -p clone-army
	install -m 0755 $(HELPER) files/clone-army

lint: deps
	cargo fmt --all -- --check
	cargo clippy --locked --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps -p clone-army
	puppet-lint --fail-on-warnings manifests types plans sandbox/roles
	metadata-json-lint --strict-dependencies --strict-license metadata.json
	rubocop lib spec tasks bench sandbox Rakefile Gemfile
	shellcheck scripts/*.sh sandbox/*.sh bench/*.sh .ci/run
	bash scripts/check-notices.sh
	mkdir -p target
	$(REFERENCE_GENERATE) target/REFERENCE.md >/dev/null
	@diff -u REFERENCE.md target/REFERENCE.md || { echo "REFERENCE.md is not what the doc comments generate: run make reference and commit it" >&2; exit 1; }

# REFERENCE.md anew from the doc comments (see REFERENCE_GENERATE).
reference:
	$(REFERENCE_GENERATE) REFERENCE.md

# THIRD-PARTY-NOTICES.md anew: the crates the helper links, their licences and the texts,
# by cargo-about (helper/about.toml, helper/about.hbs) at the version written here, which
# it installs when another or none is there. `make lint` holds the committed file to the
# crates (scripts/check-notices.sh, which needs cargo only). Since 0.9 the crate builds its
# command only with the feature `cli`; without it `cargo install` installs nothing.
CARGO_ABOUT_VERSION := 0.9.3
notices:
	cargo about --version 2>/dev/null | grep -qx 'cargo-about $(CARGO_ABOUT_VERSION)' || \
	  cargo install --locked cargo-about --version $(CARGO_ABOUT_VERSION) --features cli
	cargo about generate --locked --fail --target $(TARGET) --manifest-path helper/Cargo.toml \
	  --output-file THIRD-PARTY-NOTICES.md helper/about.hbs
	bash scripts/check-notices.sh

# As root (CI is): the tests that need root are ignored by a plain `cargo test`, with
# the reason, and run here.
unit: deps
	cargo test --locked -- --include-ignored
	rake spec

# The helper must run on every supported host, RHEL 8's older glibc included.
static-check: build
	file -L files/clone-army | grep -Eq 'static(-pie)? linked'
	ldd files/clone-army 2>&1 | grep -Eq 'statically linked|not a dynamic executable'

# On every suite side by side (each its own sandbox host and server address), or on
# the one SUITE names.
acceptance: deps build static-check
	bash scripts/acceptance.sh

# The release files (the module tarball with the helper, the helper alone, checksums)
# into target/dist/, checked and installed once with puppet module install.
dist: deps build static-check
	bash scripts/dist.sh

test: deps lint unit acceptance dist

lab: deps build
	CLONES=$(CLONES) bash sandbox/lab.sh up

lab-down:
	bash sandbox/lab.sh down

# Not a test: measures the fleet's performance targets into bench/results/ (CLONES, default 500;
# the settings are bench/lib/clone_army_bench/settings.rb's; BENCH_DRY_RUN=1 prints the plan).
bench: deps build
	ruby bench/bench.rb run

# 1,000 clones checking in through two intervals (over two hours at the defaults), run in the
# background: prints where its PID, log and raw data are, and how to read and stop it.
bench-checkin: deps build
	BENCH=checkin ruby bench/bench.rb start

# A committed result's JSON and table derived again from its raw data (RESULTS=bench/results/<stamp>):
# prints the table, names each figure that no longer comes out as committed (exit 1);
# WRITE=1 rewrites the result with the derived figures.
bench-derive:
	@[ -n "$(RESULTS)" ] || { echo "RESULTS=bench/results/<stamp> is required" >&2; exit 2; }
	ruby bench/bench.rb derive "$(RESULTS)" $(if $(WRITE),--write)

# Runs of one bench side by side (RESULTS="bench/results/<stamp> ...", at least
# three): every figure in each run, their median, and the median judged.
bench-across:
	@[ -n "$(RESULTS)" ] || { echo "RESULTS=\"bench/results/<stamp> ...\" (at least three) is required" >&2; exit 2; }
	ruby bench/bench.rb across $(RESULTS) $(if $(JSON),--json)

# The pages of the recorded runs (not committed) from the timelines the results keep.
bench-pages: build
	ruby bench/bench.rb pages bench/results files/clone-army

clean:
	cargo clean
	rm -f files/clone-army
