//! `clone-army schema`: the rules the Puppet side must agree with, as the helper applies
//! them: name patterns, ranges and defaults, the values of every enumerated flag, the
//! capacity figures, and the error and problem kinds.
//!
//! Each figure here is read from the constant the helper's own check uses; nothing is
//! restated. The module ships the answer as `lib/puppet_x/clone_army/schema.json`, from
//! which the Ruby side takes its ranges and defaults, and against which its specs check
//! the type aliases in `types/` (its test `the_shipped_schema_is_current` keeps the file
//! in step).

use std::collections::BTreeMap;

use clap::ValueEnum;

use crate::base::{self, fact_cache, Family, Os, PuppetSource};
use crate::clone::puppet_conf::SERVER_PORTS;
use crate::clone::run_mode::{
    Phasing, RunMode, DEFAULT_PHASING, DEFAULT_RUNINTERVAL, MAX_PHASE_COUNT, MAX_RUNINTERVAL,
    MIN_RUNINTERVAL,
};
use crate::clone::{apply_source, facts, limits, secrets, MAX_RAMP_UP_SECONDS};
use crate::exec;
use crate::host::limits as host_limits;
use crate::inventory::problems::ProblemKind;
use crate::protocol::error::ErrorKind;
use crate::protocol::schema::{
    Capacity, Choice, FactCache, FactRules, LimitRules, NameRule, NameRules, PathRule, PatternRule,
    RampRules, Range, ReportFormats, Schema, Waits,
};
use crate::report::render::Format;
use crate::sys::{lock, names, paths};
use crate::systemd;
use crate::twin;

/// Well above the longest the helper waits in one ordinary verb (the lock, a
/// daemon-reload, then a unit's start or stop), so only a helper that hangs meets it.
pub const CALL_LIMIT_SECONDS: u64 = 900;
/// A base build runs debootstrap or an installer; a batch of a thousand clones is a
/// thousand creates and one daemon-reload: an hour for either.
pub const LONG_CALL_LIMIT_SECONDS: u64 = 3600;
pub const LONG_CALLS: &[&str] = &["base create", "clone create-many"];
pub const RAMPED_CALL: &str = "clone start";

fn waits() -> Waits {
    Waits {
        lock_seconds: lock::LOCK_TIMEOUT.as_secs(),
        dbus_method_seconds: systemd::METHOD_TIMEOUT.as_secs(),
        dbus_operation_seconds: systemd::OPERATION_TIMEOUT.as_secs(),
        daemon_reload_seconds: systemd::RELOAD_TIMEOUT.as_secs(),
        unit_state_seconds: systemd::STATE_WAIT_TIMEOUT.as_secs(),
        call_seconds: CALL_LIMIT_SECONDS,
        long_call_seconds: LONG_CALLS
            .iter()
            .map(|verb| (*verb, LONG_CALL_LIMIT_SECONDS))
            .collect(),
        ramped_call: RAMPED_CALL,
    }
}

const NAME_EXAMPLES_VALID: &[&str] = &["clone1", "debian-12", "0a", "a"];
const NAME_EXAMPLES_INVALID: &[&str] = &["", "-clone", "Clone1", "clone_1", "a.b", "a/b", "ä"];
const BASE_EXAMPLES_INVALID: &[&str] = &["clone1-overlay", "clone1-workdir", "clone1-config"];
const APPLY_SOURCE_EXAMPLES_VALID: &[&str] = &[
    "/srv/clone-army-apply",
    "/srv/apply/",
    "/opt/load_1/v2.0+x@y-z",
    "/srv/..apply/a..b",
];
const APPLY_SOURCE_EXAMPLES_INVALID: &[&str] = &[
    "",
    "srv/apply",
    "/srv/a b",
    "/srv/a:b",
    "/srv/%i",
    "/srv/apply\nExecStart=/bin/sh",
    "/srv/../etc",
    "/srv/..",
    "/srv/ä",
];
const MIRROR_EXAMPLES_VALID: &[&str] = &[
    "http://deb.debian.org/debian",
    "https://m.example/ubuntu/",
    "file:/srv/mirror",
    "file:///srv/mirror",
];
const MIRROR_EXAMPLES_INVALID: &[&str] = &[
    "",
    "--foreign",
    "/srv/mirror",
    "ftp://m.example/debian",
    "http://m.example/a b",
    "http://m.example/a\u{1}b",
    "http://m.example/\nx",
];

const GROUP_KEY_EXAMPLES_VALID: &[&str] = &[
    "pp_role",
    "node",
    "environment",
    "pp_environment",
    "1.3.6.1.4.1.34380.1.1.13",
    "1.3.6.1.4.1.34380.1.2.1",
    "1.3.6.1.4.1.34380.1.2.1.20",
    "facts.os.family",
    "facts.role_fact",
    "facts.networking.interfaces.eth-0.mtu",
];
const GROUP_KEY_EXAMPLES_INVALID: &[&str] = &[
    "",
    "role",
    "Node",
    "pp_preshared_key",
    "1.3.6.1.4.1.34380.1.1.4",
    "pp_authorization",
    "1.3.6.1.4.1.34380.1.3.1",
    "1.3.6.1.4.1.34380.1.2",
    "1.3.6.1.4.1.34380.1.2.x",
    "1.3.6.1.4.1.34380.1.2.1..2",
    "pp_role\nExecStartPre=/bin/sh",
    "facts.",
    "facts",
    "facts.os..family",
    "facts.os family",
    "facts.a.b.c.d.e.f.g.h.i",
    "Facts.os",
];

/// Examples of each family's releases, valid and invalid.
fn release_examples(family: Family) -> (&'static [&'static str], &'static [&'static str]) {
    match family {
        Family::Debian => (
            &["bookworm", "trixie", "noble", "sid"],
            &["", "9", "8bookworm", "Bookworm", "--x", "book worm"],
        ),
        Family::Rhel => (&["8", "9"], &["", "7", "10", "9.4", "bookworm"]),
        Family::Suse => (&["15", "15.6"], &["", "16", "1.5", "15.", "15.6.1", "leap"]),
    }
}

fn base_releases() -> BTreeMap<&'static str, PatternRule> {
    Os::value_variants()
        .iter()
        .map(|os| {
            let (pattern, rule) = base::release_rule(os.family());
            let (valid, invalid) = release_examples(os.family());
            let rule = PatternRule {
                pattern: pattern.to_owned(),
                rule: rule.to_owned(),
                valid: valid.to_vec(),
                invalid: invalid.to_vec(),
            };
            (os.as_str(), rule)
        })
        .collect()
}

const HOSTNAME_EXAMPLES_VALID: &[&str] = &["puppet", "puppet.example.com", "Agent-1.lab", "a1"];
const HOSTNAME_EXAMPLES_INVALID: &[&str] =
    &["", "-a", "a-", "a..b", ".a", "a_b", "a b", "a/b", "a:8140"];

const TWIN_NODE_EXAMPLES_VALID: &[&str] = &["web01.example.com", "db-2", "_a", "a.b_c-d"];
const TWIN_NODE_EXAMPLES_INVALID: &[&str] =
    &["", ".a", "-a", "Web01", "a b", "a/b", "a:b", "\u{e4}"];

fn name_pattern() -> String {
    format!("^[a-z0-9][a-z0-9-]{{0,{}}}$", names::MAX_NAME_LEN - 1)
}

pub fn schema() -> Schema {
    let label = format!(
        "[A-Za-z0-9]([A-Za-z0-9-]{{0,{}}}[A-Za-z0-9])?",
        names::MAX_LABEL_LEN - 2
    );
    Schema {
        names: NameRules {
            clone: NameRule {
                pattern: name_pattern(),
                max_length: names::MAX_NAME_LEN,
                reserved_suffixes: Vec::new(),
                label_max_length: None,
                rule: names::NAME_RULE,
                valid: NAME_EXAMPLES_VALID.to_vec(),
                invalid: NAME_EXAMPLES_INVALID.to_vec(),
            },
            base: NameRule {
                pattern: name_pattern(),
                max_length: names::MAX_NAME_LEN,
                reserved_suffixes: paths::CLONE_DIR_SUFFIXES.to_vec(),
                label_max_length: None,
                rule: names::NAME_RULE,
                valid: NAME_EXAMPLES_VALID.to_vec(),
                invalid: [NAME_EXAMPLES_INVALID, BASE_EXAMPLES_INVALID].concat(),
            },
            hostname: NameRule {
                pattern: format!("^{label}(\\.{label})*$"),
                max_length: names::MAX_HOSTNAME_LEN,
                reserved_suffixes: Vec::new(),
                label_max_length: Some(names::MAX_LABEL_LEN),
                rule: names::HOSTNAME_RULE,
                valid: HOSTNAME_EXAMPLES_VALID.to_vec(),
                invalid: HOSTNAME_EXAMPLES_INVALID.to_vec(),
            },
            twin_node: NameRule {
                pattern: format!("^[a-z0-9_][a-z0-9._-]{{0,{}}}$", twin::MAX_NODE_NAME - 1),
                max_length: twin::MAX_NODE_NAME,
                reserved_suffixes: Vec::new(),
                label_max_length: None,
                rule: twin::NODE_RULE,
                valid: TWIN_NODE_EXAMPLES_VALID.to_vec(),
                invalid: TWIN_NODE_EXAMPLES_INVALID.to_vec(),
            },
        },
        apply_source: PathRule {
            pattern: apply_source::PATTERN,
            rule: apply_source::PATH_RULE,
            valid: APPLY_SOURCE_EXAMPLES_VALID.to_vec(),
            invalid: APPLY_SOURCE_EXAMPLES_INVALID.to_vec(),
        },
        run_modes: Choice {
            values: RunMode::value_variants().iter().map(|m| m.name()).collect(),
            default: RunMode::Daemon.name(),
        },
        phasings: Choice {
            values: Phasing::value_variants().iter().map(|p| p.name()).collect(),
            default: DEFAULT_PHASING.name(),
        },
        os: Os::value_variants().iter().map(|os| os.as_str()).collect(),
        base_mirror: PatternRule {
            pattern: base::MIRROR_PATTERN.to_owned(),
            rule: base::MIRROR_RULE.to_owned(),
            valid: MIRROR_EXAMPLES_VALID.to_vec(),
            invalid: MIRROR_EXAMPLES_INVALID.to_vec(),
        },
        base_releases: base_releases(),
        puppet_sources: Choice {
            values: PuppetSource::value_variants()
                .iter()
                .map(|source| source.as_str())
                .collect(),
            default: PuppetSource::Distro.as_str(),
        },
        ranges: ranges(),
        limits: LimitRules {
            none: limits::NO_LIMIT,
            memory_max_digits: limits::MAX_MEMORY_DIGITS,
            memory_suffixes: limits::MEMORY_SUFFIXES.to_vec(),
            cpu_quota_percent: Range {
                min: 1,
                max: limits::MAX_CPU_QUOTA_PERCENT,
                default: None,
            },
            tasks_max: Range {
                min: 1,
                max: limits::MAX_TASKS,
                default: None,
            },
        },
        facts: FactRules {
            name_pattern: format!("^[a-z0-9_]{{1,{}}}$", facts::MAX_FACT_NAME),
            max_name_length: facts::MAX_FACT_NAME,
            max_string_length: facts::MAX_FACT_STRING,
        },
        challenge_password_max_bytes: secrets::MAX_CHALLENGE_PASSWORD_BYTES,
        crypt_hash: PatternRule {
            pattern: secrets::crypt_hash_pattern(),
            rule: format!(
                "a crypt(3) password hash such as '$6$<salt>$<hash>' or \
                 '$y$<params>$<salt>$<hash>' (scheme one of {})",
                secrets::CRYPT_SCHEMES.join(", ")
            ),
            valid: CRYPT_HASH_EXAMPLES_VALID.to_vec(),
            invalid: CRYPT_HASH_EXAMPLES_INVALID.to_vec(),
        },
        report_formats: ReportFormats {
            live: format_names(Format::LIVE),
            recorded: format_names(Format::RECORDED),
            text: format_names(Format::TEXT),
        },
        group_key: PatternRule {
            pattern: crate::report::groups::key_pattern(),
            rule: crate::report::groups::KEY_RULE.to_owned(),
            valid: GROUP_KEY_EXAMPLES_VALID.to_vec(),
            invalid: GROUP_KEY_EXAMPLES_INVALID.to_vec(),
        },
        helper_path: paths::HELPER_PATH,
        twins_dir: format!("{}/{}", paths::STATE_DIR, paths::TWINS_DIR),
        capacity: Capacity {
            reserve_bytes: host_limits::RESERVE_BYTES,
            cost_bytes: BTreeMap::from([
                (RunMode::Daemon.name(), host_limits::DAEMON_COST_BYTES),
                (RunMode::Timer.name(), host_limits::TIMER_COST_BYTES),
            ]),
            cpu_seconds_per_run: host_limits::CPU_SECONDS_PER_RUN,
        },
        fact_cache: FactCache {
            config_files: fact_cache::FACTER_CONFS
                .iter()
                .map(|path| format!("/{path}"))
                .collect(),
            cache_dirs: fact_cache::CACHE_DIRS.to_vec(),
            host_groups: fact_cache::HOST_GROUPS.to_vec(),
            package_groups: fact_cache::PACKAGE_GROUPS.to_vec(),
        },
        waits: waits(),
        ramp: RampRules {
            repeat: Range {
                min: 1,
                max: crate::ramp::MAX_REPEAT as u64,
                default: Some(crate::ramp::DEFAULT_REPEAT as u64),
            },
        },
        error_kinds: ErrorKind::ALL,
        problem_kinds: ProblemKind::ALL,
    }
}

fn format_names(formats: &[Format]) -> Vec<&'static str> {
    formats.iter().map(|format| format.name()).collect()
}

/// Hashes as `openssl passwd` and `mkpasswd` make them, one of each scheme family.
const CRYPT_HASH_EXAMPLES_VALID: &[&str] = &[
    "$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/",
    "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7",
    "$5$rounds=5000$usesomesillystri$KqJWpanXZHKq2BOB43TSaYhEWsQ1Lr5QNyPCDH/Tp.6",
    "$1$saltsalt$2vnaRpHa6Jxjz5n83ok8Z0",
    "$2b$12$GhvMmNVjRW29ulnudl.LbuAnUtN/LRfe1JsBm1Xu6LE3059z5Tr8m",
    "$gy$j9T$salt$hash",
];

/// Locked passwords, unknown schemes, missing parts, and what would break `/etc/shadow`.
const CRYPT_HASH_EXAMPLES_INVALID: &[&str] = &[
    "",
    "!",
    "*",
    "plain-password",
    "$6$",
    "$6$saltsalt$",
    "$6$$hash",
    "$abc$salt$hash",
    "$3$salt$hash",
    "$6$salt:x$hash",
    "$6$salt x$hash",
    "$6$salt$ha sh",
    "$6$salt$hash\n",
    "$6$s\u{e4}lt$hash",
    "$6$salt$h:sh",
];

fn ranges() -> BTreeMap<&'static str, Range> {
    let range = |min: u64, max: u64, default: Option<u64>| Range { min, max, default };
    BTreeMap::from([
        (
            "runinterval",
            range(MIN_RUNINTERVAL, MAX_RUNINTERVAL, Some(DEFAULT_RUNINTERVAL)),
        ),
        ("splay", range(0, MAX_RUNINTERVAL, Some(0))),
        (
            "server_port",
            range(
                u64::from(*SERVER_PORTS.start()),
                u64::from(*SERVER_PORTS.end()),
                Some(u64::from(crate::sys::names::DEFAULT_SERVER_PORT)),
            ),
        ),
        (
            "cpu_share_percent",
            range(1, 100, Some(host_limits::DEFAULT_CPU_SHARE_PERCENT)),
        ),
        (
            "phase_index",
            range(0, u64::from(MAX_PHASE_COUNT) - 1, Some(0)),
        ),
        ("phase_count", range(1, u64::from(MAX_PHASE_COUNT), Some(1))),
        ("ramp_up", range(0, MAX_RAMP_UP_SECONDS, Some(0))),
        ("tasks_max", range(1, limits::MAX_TASKS, None)),
        (
            "generated_facts",
            range(0, u64::from(facts::MAX_GENERATED_FACTS), Some(0)),
        ),
        (
            "churn_percent",
            range(0, u64::from(facts::MAX_CHURN_PERCENT), Some(0)),
        ),
        (
            "exec_concurrency",
            range(
                1,
                exec::MAX_CONCURRENCY as u64,
                Some(exec::DEFAULT_CONCURRENCY as u64),
            ),
        ),
        (
            "exec_timeout",
            range(
                1,
                exec::MAX_TIMEOUT_SECONDS,
                Some(exec::DEFAULT_TIMEOUT_SECONDS),
            ),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file the module ships, relative to the crate.
    const SHIPPED: &str = "../lib/puppet_x/clone_army/schema.json";

    /// Rewrites the shipped file with `CLONE_ARMY_WRITE_SCHEMA=1 cargo test schema`.
    #[test]
    fn the_shipped_schema_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SHIPPED);
        let want = serde_json::to_string_pretty(&schema()).unwrap() + "\n";
        if std::env::var_os("CLONE_ARMY_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is not what `clone-army schema` says; rewrite it with \
             CLONE_ARMY_WRITE_SCHEMA=1 cargo test schema",
            path.display()
        );
    }

    #[test]
    fn the_name_checks_agree_with_their_examples() {
        let rules = schema().names;
        for name in &rules.clone.valid {
            assert!(
                names::validate_name("clone", "name", name).is_ok(),
                "{name}"
            );
        }
        for name in &rules.clone.invalid {
            assert!(
                names::validate_name("clone", "name", name).is_err(),
                "{name}"
            );
        }
        let long = "a".repeat(rules.clone.max_length);
        assert!(names::validate_name("clone", "name", &long).is_ok());
        assert!(names::validate_name("clone", "name", &(long + "a")).is_err());
        for name in &rules.base.valid {
            assert!(names::validate_base_name("name", name).is_ok(), "{name}");
        }
        for name in &rules.base.invalid {
            assert!(names::validate_base_name("name", name).is_err(), "{name}");
        }
        for name in &rules.hostname.valid {
            assert!(names::validate_hostname("server", name).is_ok(), "{name}");
        }
        for name in &rules.hostname.invalid {
            assert!(names::validate_hostname("server", name).is_err(), "{name}");
        }
        let label = "a".repeat(rules.hostname.label_max_length.unwrap());
        assert!(names::validate_hostname("server", &format!("{label}.example")).is_ok());
        assert!(names::validate_hostname("server", &format!("{label}a.example")).is_err());
        for name in &rules.twin_node.valid {
            assert!(twin::is_node_name(name), "{name}");
        }
        for name in &rules.twin_node.invalid {
            assert!(!twin::is_node_name(name), "{name}");
        }
        let long = "a".repeat(rules.twin_node.max_length);
        assert!(twin::is_node_name(&long));
        assert!(!twin::is_node_name(&(long + "a")));
    }

    #[test]
    fn the_crypt_hash_check_agrees_with_its_examples() {
        let rule = schema().crypt_hash;
        for hash in &rule.valid {
            assert!(secrets::is_crypt_hash(hash), "{hash:?}");
        }
        for hash in &rule.invalid {
            assert!(!secrets::is_crypt_hash(hash), "{hash:?}");
        }
    }

    #[test]
    fn the_group_key_check_agrees_with_its_examples() {
        let rule = schema().group_key;
        for key in &rule.valid {
            assert!(crate::report::groups::key(key).is_ok(), "{key:?}");
        }
        for key in &rule.invalid {
            assert!(crate::report::groups::key(key).is_err(), "{key:?}");
        }
    }

    #[test]
    fn the_base_checks_agree_with_their_examples() {
        let schema = schema();
        for mirror in &schema.base_mirror.valid {
            assert!(base::is_mirror(mirror), "{mirror:?}");
        }
        for mirror in &schema.base_mirror.invalid {
            assert!(!base::is_mirror(mirror), "{mirror:?}");
        }
        for os in Os::value_variants() {
            let rule = &schema.base_releases[os.as_str()];
            for release in &rule.valid {
                assert!(base::is_release(os.family(), release), "{os:?} {release:?}");
            }
            for release in &rule.invalid {
                assert!(
                    !base::is_release(os.family(), release),
                    "{os:?} {release:?}"
                );
            }
        }
    }

    #[test]
    fn the_apply_source_check_agrees_with_its_examples() {
        let rule = schema().apply_source;
        for path in &rule.valid {
            assert!(apply_source::is_plain_path(path), "{path:?}");
        }
        for path in &rule.invalid {
            assert!(!apply_source::is_plain_path(path), "{path:?}");
        }
    }

    /// The longest an ordinary verb waits on its own: the lock, a daemon-reload, and one
    /// unit's start or stop (each of its D-Bus operations bounded too). A caller's limit
    /// below that would stop a helper that was still working.
    #[test]
    fn a_callers_limit_outlasts_the_helpers_own_waits() {
        let waits = waits();
        let own = waits.lock_seconds
            + waits.daemon_reload_seconds
            + waits.unit_state_seconds
            + 2 * waits.dbus_operation_seconds;
        assert!(waits.call_seconds > own, "{} <= {own}", waits.call_seconds);
        for (verb, seconds) in &waits.long_call_seconds {
            assert!(*seconds >= waits.call_seconds, "{verb}");
        }
        assert!(!waits.long_call_seconds.contains_key(waits.ramped_call));
    }

    #[test]
    fn every_run_mode_has_a_capacity_cost_or_runs_no_agent_daemon() {
        let schema = schema();
        assert!(schema.run_modes.values.contains(&schema.run_modes.default));
        for mode in schema.capacity.cost_bytes.keys() {
            assert!(schema.run_modes.values.contains(mode), "{mode}");
        }
        assert!(schema
            .puppet_sources
            .values
            .contains(&schema.puppet_sources.default));
    }
}
