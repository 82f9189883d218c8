//! Answered by the `host` verbs: `host limits` (the kernel limits, the system bus's, and the
//! capacity for clones), `host docs` (the man page and completions) and `host selinux`
//! (nspawn's SELinux drop-in).

use serde::{Deserialize, Serialize};

/// One limit as the result reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitStatus {
    pub name: String,
    /// The running kernel's value before anything was done; `null` when unreadable.
    pub current: Option<u64>,
    pub wanted: u64,
    /// The running kernel holds at least `wanted` now (it already did, or was raised).
    pub applied: bool,
    /// About how many booted clones the current value holds, when it is below `wanted`.
    pub caps_clones: Option<u64>,
    /// Why it could not be read or raised.
    pub error: Option<String>,
}

/// The clones the host's memory holds, per run mode: the memory bound alone. The Puppet
/// side also bounds a fleet by CPU (run interval, cores, CPU-s a run), which needs the
/// class's interval and the host's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capacity {
    pub daemon: u64,
    pub timer: u64,
}

/// `clone-army host limits`: the limits and the capacity, read-only.
#[derive(Debug, Serialize, Deserialize)]
pub struct HostReport {
    pub limits: Vec<LimitStatus>,
    pub sysctl_file: String,
    /// Whether the sysctl.d file exists and was written by clone-army.
    pub sysctl_file_present: bool,
    /// The system bus's drop-in with its connection limits (written by the host layer's `bus` module).
    pub dbus_file: String,
    /// Whether it exists and was written by clone-army.
    pub dbus_file_present: bool,
    pub memory_total_bytes: Option<u64>,
    /// `null` when MemTotal could not be read.
    pub capacity: Option<Capacity>,
    pub memory_error: Option<String>,
}

/// What `clone create` and `clone start` did about the bus limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusLimits {
    pub file: String,
    /// The drop-in holds clone-army's values now.
    pub applied: bool,
    /// It was written in this call.
    pub changed: bool,
    /// The bus was asked to reload its configuration in this call.
    pub reloaded: bool,
    /// Why the drop-in was not written or the bus not reloaded.
    pub error: Option<String>,
}

/// A document `host docs` installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DocKind {
    /// The roff man page, section 8.
    Man,
    BashCompletion,
    ZshCompletion,
    FishCompletion,
}

impl DocKind {
    pub const ALL: [DocKind; 4] = [
        DocKind::Man,
        DocKind::BashCompletion,
        DocKind::ZshCompletion,
        DocKind::FishCompletion,
    ];
}

/// What `host docs` answers: each file, and whether this call wrote any.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DocsInstalled {
    pub prefix: String,
    pub files: Vec<DocFile>,
    /// Whether this call wrote anything (always false with --check).
    pub changed: bool,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DocFile {
    pub kind: DocKind,
    pub path: String,
    /// Whether this call wrote it (always false with --check).
    pub changed: bool,
}

/// What `host selinux` answers.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SelinuxDropin {
    pub dropin: String,
    pub context: String,
    pub apifs_context: String,
    /// Whether this call wrote the drop-in (always false with --check).
    pub changed: bool,
}
