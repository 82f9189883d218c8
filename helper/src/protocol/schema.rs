//! The answer of `clone-army schema`, shipped as `lib/puppet_x/clone_army/schema.json`:
//! the rules the Puppet side must agree with. `schema.rs` fills it from the constants
//! the helper's own checks use.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::protocol::answers::ProblemKind;
use crate::protocol::error::ErrorKind;

#[derive(Debug, Serialize)]
pub struct Schema {
    pub names: NameRules,
    pub apply_source: PathRule,
    pub run_modes: Choice,
    /// The rules that turn a clone's phase index into the offset of its runs.
    pub phasings: Choice,
    pub os: Vec<&'static str>,
    /// What `base create` takes as `--mirror` and, by OS, as `--release`.
    pub base_mirror: PatternRule,
    pub base_releases: BTreeMap<&'static str, PatternRule>,
    pub puppet_sources: Choice,
    /// Inclusive ranges of the integer flags, by the class's and type's attribute name.
    pub ranges: BTreeMap<&'static str, Range>,
    pub limits: LimitRules,
    pub facts: FactRules,
    pub challenge_password_max_bytes: usize,
    /// A clone's root password hash (`root_password_hash`).
    pub crypt_hash: PatternRule,
    /// `report --format`'s values, live and of a recorded run.
    pub report_formats: ReportFormats,
    /// What `report --group-by` and `record --group-by` take (`record_group_by`).
    pub group_key: PatternRule,
    /// Where the class installs the helper and the tasks run it.
    pub helper_path: &'static str,
    /// Where `twin import` keeps the real nodes' records, one `<node>.json` each: what
    /// `clone create --twin-file` is given for a clone of the class's fleet of twins.
    pub twins_dir: String,
    pub capacity: Capacity,
    pub fact_cache: FactCache,
    pub waits: Waits,
    pub ramp: RampRules,
    pub error_kinds: &'static [ErrorKind],
    pub problem_kinds: &'static [ProblemKind],
}

#[derive(Debug, Serialize)]
pub struct NameRules {
    pub clone: NameRule,
    pub base: NameRule,
    pub hostname: NameRule,
    /// A real node's certname, as a twin's node is named (`twin import` refuses others).
    pub twin_node: NameRule,
}

/// A name's rule: an anchored regular expression in the syntax Ruby and most engines
/// share, what a refusal says is allowed, and examples that the helper's check accepts
/// and refuses (its tests hold the check to them; the Ruby specs hold Ruby's too).
#[derive(Debug, Serialize)]
pub struct NameRule {
    pub pattern: String,
    pub max_length: usize,
    /// Endings a name may not have (a clone's own directories beside the bases).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reserved_suffixes: Vec<&'static str>,
    /// The longest label between dots, for names made of labels (a hostname).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_max_length: Option<usize>,
    pub rule: &'static str,
    pub valid: Vec<&'static str>,
    pub invalid: Vec<&'static str>,
}

/// A host path's rule as far as it can be checked without the host (the helper checks
/// the rest where the path is: that it exists, whose it is): an anchored pattern, what it
/// allows in words, and examples the helper's check accepts and refuses.
#[derive(Debug, Serialize)]
pub struct PathRule {
    pub pattern: &'static str,
    pub rule: &'static str,
    pub valid: Vec<&'static str>,
    pub invalid: Vec<&'static str>,
}

/// A text's rule: an anchored pattern (built from the helper's own rule), what a refusal
/// says, and examples the helper's check accepts and refuses.
#[derive(Debug, Serialize)]
pub struct PatternRule {
    pub pattern: String,
    pub rule: String,
    pub valid: Vec<&'static str>,
    pub invalid: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
pub struct ReportFormats {
    pub live: Vec<&'static str>,
    pub recorded: Vec<&'static str>,
    /// Live formats answered as plain text, not in the JSON envelope.
    pub text: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
pub struct Choice {
    pub values: Vec<&'static str>,
    pub default: &'static str,
}

#[derive(Debug, Serialize)]
pub struct Range {
    pub min: u64,
    pub max: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct LimitRules {
    /// What each limit takes for "no limit" (and its default).
    pub none: &'static str,
    pub memory_max_digits: usize,
    pub memory_suffixes: Vec<&'static str>,
    pub cpu_quota_percent: Range,
    pub tasks_max: Range,
}

#[derive(Debug, Serialize)]
pub struct FactRules {
    pub name_pattern: String,
    pub max_name_length: usize,
    pub max_string_length: usize,
}

/// What `ramp run` takes that the ramp task checks before it runs the helper: the windows
/// a step may repeat (`--repeat`). The longest a ramp can take is the helper's to say
/// (`ramp longest`).
#[derive(Debug, Serialize)]
pub struct RampRules {
    pub repeat: Range,
}

/// The memory bound, `max(0, floor((total memory - reserve) / cost of the run mode))`,
/// and the figures of the CPU bound, `floor(share × cores × runinterval / CPU-s per
/// run)`, which the Puppet side (`PuppetX::CloneArmy::Capacity`) combines.
#[derive(Debug, Serialize)]
pub struct Capacity {
    pub reserve_bytes: u64,
    pub cost_bytes: BTreeMap<&'static str, u64>,
    pub cpu_seconds_per_run: f64,
}

/// Facter's fact cache as every base has it: where Facter reads its config and keeps
/// the cache (distribution and AIO agents), and the fact groups cached (the package
/// groups on bases with dpkg only). The bench sets the config aside to measure an agent
/// run without the cache, and checks the groups' files after a run with it.
#[derive(Debug, Serialize)]
pub struct FactCache {
    pub config_files: Vec<String>,
    pub cache_dirs: Vec<&'static str>,
    pub host_groups: Vec<&'static str>,
    pub package_groups: Vec<&'static str>,
}

/// How long the helper waits, at most, on what it waits for, and from that how long a
/// caller lets one call run before it takes the helper for hung and stops it. The
/// caller's limits are here, beside the waits they must outlast, so that the two cannot
/// drift apart: a limit shorter than a legitimate wait kills a helper that was working.
#[derive(Debug, Serialize)]
pub struct Waits {
    /// The helper's lock, held by another call.
    pub lock_seconds: u64,
    /// One D-Bus method call, and one whole operation with its connection.
    pub dbus_method_seconds: u64,
    pub dbus_operation_seconds: u64,
    pub daemon_reload_seconds: u64,
    /// One unit reaching the state asked for (a wave of clones waits once, together).
    pub unit_state_seconds: u64,
    /// A call's limit for its caller, unless `long_call_seconds` names its verb.
    pub call_seconds: u64,
    /// Verbs that may legitimately run longer, by noun and verb (`"base create"`).
    pub long_call_seconds: BTreeMap<&'static str, u64>,
    /// The verb that sleeps through its `--ramp-up`: its limit is its call limit plus
    /// the ramp's seconds.
    pub ramped_call: &'static str,
}
