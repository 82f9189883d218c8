//! Answered by `clone create`, `create-many`, `list`, `start`, `stop`, `remove`, `configure` and
//! `check-apply-source`: the clones, their shape and their problems.

use serde::{Deserialize, Serialize};

use super::host::{BusLimits, LimitStatus};
use crate::protocol::kinds::wire_kinds;

/// `clone create` and `clone configure`: the clone as `clone list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneChanged {
    pub clone: CloneInfo,
    pub changed: bool,
}

/// `clone create`: the clone, and whether it has a root password and a CSR challenge
/// password (never their values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneCreated {
    pub clone: CloneInfo,
    pub changed: bool,
    /// root has a password hash in the clone's /etc/shadow (for `machinectl login`).
    #[serde(default)]
    pub root_password: bool,
    /// the clone's csr_attributes.yaml carries a challengePassword (policy autosigning).
    #[serde(default)]
    pub challenge_password: bool,
    /// The kernel limits for a large fleet, as `clone-army host limits` reports them.
    #[serde(default)]
    pub host_limits: Vec<LimitStatus>,
    /// The system bus's connection limits (`null` from a helper before they existed).
    #[serde(default)]
    pub bus_limits: Option<BusLimits>,
}

/// `clone create-many`: each clone as `clone create` answers it, in the order asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClonesCreated {
    pub clones: Vec<CloneCreated>,
}

/// `clone list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneList {
    pub clones: Vec<CloneInfo>,
    /// Stale state that belongs to no listed clone (an overlay mount no unit owns).
    #[serde(default)]
    pub problems: Vec<Problem>,
}

/// Whether a clone's service is up, as the protocol reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CloneState {
    Running,
    Stopped,
}

impl CloneState {
    /// `running` for the ActiveStates in which the service is (or is becoming) up.
    pub fn from_active_state(active_state: &str) -> Self {
        match active_state {
            "active" | "activating" | "reloading" => CloneState::Running,
            _ => CloneState::Stopped,
        }
    }
}

/// One clone as `clone list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneInfo {
    pub name: String,
    pub base: String,
    /// `null` when the clone's puppet.conf has no `server` (or cannot be read).
    pub server: Option<String>,
    /// The clone's `serverport`: `null` when its puppet.conf sets none (Puppet's default,
    /// 8140, holds) or sets one that is no port.
    #[serde(default)]
    pub server_port: Option<u16>,
    /// `null` when the clone's puppet.conf has no `certname` (or cannot be read).
    pub certname: Option<String>,
    pub state: CloneState,
    pub unit: String,
    pub mounted: bool,
    /// Stale state found on disk, each with the command that fixes it; empty when none.
    #[serde(default)]
    pub problems: Vec<Problem>,
    /// Run mode, limits and facts, read back from the files that set them.
    #[serde(flatten)]
    pub shape: CloneShape,
}

/// How a clone loads the server, as read back from the files that set it (the clone's
/// upper layer and its limits drop-in on the host).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneShape {
    /// `daemon`, `timer`, `manual` or `apply`; `null` when the clone has none of clone-army's run
    /// files (then runinterval, splay and the phase are `null` too; so they are in `manual`).
    pub run_mode: Option<RunMode>,
    pub runinterval: Option<u64>,
    pub splay: Option<u64>,
    pub phase_index: Option<u32>,
    pub phase_count: Option<u32>,
    /// How the phase index becomes the runs' offset in the interval; `null` as above, or
    /// when the timer names a rule this helper does not know.
    #[serde(default)]
    pub phasing: Option<Phasing>,
    /// `MemoryMax=` of the limits drop-in, as given (`512M`); `null` when unset.
    pub memory_max: Option<String>,
    /// `CPUQuota=`, e.g. `50%`; `null` when unset.
    pub cpu_quota: Option<String>,
    /// `TasksMax=`; `null` when unset (the template's 16384 applies).
    pub tasks_max: Option<u64>,
    /// Per-clone external facts; `{}` when none.
    #[serde(default)]
    pub facts: serde_json::Map<String, serde_json::Value>,
    /// Number of generated facts; 0 when none.
    #[serde(default)]
    pub generated_facts: u32,
    /// Share of generated facts that change each run; `null` when there are none.
    pub churn_percent: Option<u32>,
    /// The host directory bound at /srv/clone-army-apply (apply mode); `null` when none.
    #[serde(default)]
    pub apply_source: Option<String>,
    /// The agent runs in noop (`noop = true` in puppet.conf): catalogs are evaluated, the
    /// clone is not changed.
    #[serde(default)]
    pub agent_noop: bool,
    /// The certname of the real node the clone is a twin of (`clone create --twin-file`);
    /// left out for a clone that is no twin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin_of: Option<String>,
}

/// Stale state (a crash's leftovers, a hand-removed directory), or a setting a clone is
/// given that is not one clone-army writes, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub kind: ProblemKind,
    pub message: String,
    /// The exact command line that fixes it, to run as root.
    pub fix: String,
}

wire_kinds! {
    /// What is stale or refused, as a [`Problem`]'s `kind` names it (docs/PROTOCOL.md, "Problems"),
    /// in the order `clone-army schema` lists them.
    pub enum ProblemKind {
        /// The base directory the clone's mount unit names is gone.
        BaseMissing => "base-missing",
        /// The clone's upper dir is gone.
        UpperDirMissing => "upper-dir-missing",
        /// The upper dir is there, the work dir is not.
        WorkDirMissing => "work-dir-missing",
        /// A mount unit without its link into the fleet target: a create or remove killed half-way.
        Incomplete => "incomplete",
        /// A clone-army overlay that no mount unit owns.
        OrphanMount => "orphan-mount",
        /// A setting a clone is given that is not one clone-army writes.
        ConfigInvalid => "config-invalid",
    }
}

/// `clone start` and `clone stop`: the clones as `clone list` reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneNames {
    pub clones: Vec<CloneInfo>,
}

/// `clone remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClonesRemoved {
    pub removed: Vec<String>,
    pub changed: bool,
}

/// `clone check-apply-source`: the source the clone's settings bind, checked; `null`
/// when they bind none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplySourceChecked {
    pub clone: String,
    pub apply_source: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RunMode {
    Daemon,
    Timer,
    Manual,
    Apply,
}

/// How a clone's phase index `I` (of `N`) becomes the offset of its runs in each
/// interval `T` (the arithmetic is `Phasing::offset` in clone/run_mode.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Phasing {
    /// `floor(T·vdc(I))`, vdc the base-2 van der Corput sequence (0, 1/2, 1/4, 3/4,
    /// 1/8, ...): whenever clones 0 to n-1 run, for any n, their runs are spread evenly.
    PrefixEven,
    /// `floor(I·T/N)`: perfectly even when all N clones run, bunched in the first n/N of
    /// the interval when only the first n do.
    FleetEven,
}

/// `clone start`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClonesStarted {
    /// In the order given, with their states after the wait.
    pub clones: Vec<CloneInfo>,
    /// The clones of each wave, in order (one wave without `--ramp-up`).
    pub waves: Vec<Vec<String>>,
    pub ramp_up_seconds: u64,
    pub host_limits: Vec<LimitStatus>,
    /// The system bus's connection limits (`null` from a helper before they existed).
    #[serde(default)]
    pub bus_limits: Option<BusLimits>,
}
