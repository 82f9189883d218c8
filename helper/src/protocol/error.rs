//! The helper's errors, and how each maps onto the protocol's `kind` and exit code.
//!
//! Every variant carries the context a person needs (which clone, which path, which
//! command); the underlying error, when there is one, is kept as `source` so the
//! envelope can list the whole `causes` chain.

use std::path::PathBuf;

/// Exit code for an operation that failed (systemd, disk, a command).
pub const EXIT_FAILED: i32 = 1;
/// Exit code for bad input or usage.
pub const EXIT_USAGE: i32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),

    #[error("{what} name {name:?} is invalid: {reason}")]
    InvalidName {
        what: &'static str,
        field: &'static str,
        name: String,
        reason: String,
    },

    #[error("{field} {value:?} is invalid: {reason}")]
    InvalidArgument {
        field: &'static str,
        value: String,
        reason: String,
    },

    #[error("clone-army must run as root (effective uid is {euid}); run it with sudo or as root")]
    NotRoot { euid: u32 },

    #[error("{what} {name:?} does not exist")]
    NotFound { what: &'static str, name: String },

    /// An input that must name something existing, and does not: says what would do.
    #[error("{what} {name:?} does not exist; allowed for {field}: {}", existing_or_none(.existing))]
    NotFoundAmong {
        what: &'static str,
        field: &'static str,
        name: String,
        existing: Vec<String>,
    },

    #[error("{what} {name:?} already exists: {detail}")]
    AlreadyExists {
        what: &'static str,
        name: String,
        detail: String,
    },

    #[error("base {base:?} is in use by clone(s) {}", clones.join(", "))]
    BaseInUse { base: String, clones: Vec<String> },

    #[error("building base {base:?} failed; its staging directory was removed")]
    BaseBuildFailed {
        base: String,
        #[source]
        source: Box<Error>,
    },

    /// A base build on a full (or nearly full) file system; `source` is how the build
    /// failed, `None` when it was refused before it started.
    #[error("no space left to build base {base:?} on the file system of {}: {} free, at least {} MiB needed; free some space there and apply again (no staging directory was left behind, other bases are untouched)", path.display(), free_text(.free_mib), .needed_mib)]
    NoSpace {
        base: String,
        path: PathBuf,
        free_mib: Option<u64>,
        /// What a build needs free at least (the base builder's floor).
        needed_mib: u64,
        #[source]
        source: Option<Box<Error>>,
    },

    #[error("command {program:?} failed: {detail}")]
    CommandFailed {
        program: String,
        detail: String,
        /// The last lines it printed, where they were kept.
        #[source]
        output: Option<OutputTail>,
    },

    #[error("cannot {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{} is still mounted; refusing to remove {what} {name:?}", path.display())]
    StillMounted {
        what: &'static str,
        name: String,
        path: PathBuf,
    },

    #[error(transparent)]
    Systemd(#[from] SystemdError),

    /// Some of the clones a verb tried failed (the others went ahead); `errors` holds
    /// one line per failed clone, `<clone>: <why>`, and becomes `causes`.
    #[error("{} of {tried} clone(s) did not {verb}: {}", failed.len(), failed.join(", "))]
    ClonesFailed {
        verb: &'static str,
        tried: usize,
        failed: Vec<String>,
        errors: Vec<String>,
    },

    /// `--check` of a verb that makes sure something is in place: it is not.
    #[error("{what} is not in place: {detail}")]
    NotInPlace { what: String, detail: String },

    /// The host lacks what the verb needs (e.g. SELinux for `host selinux`).
    #[error("{what} is not supported here: {detail}")]
    Unsupported { what: String, detail: String },

    #[error("could not take the lock {} within {seconds} s: another clone-army is running", path.display())]
    LockTimeout { path: PathBuf, seconds: u64 },

    /// A path inside a clone that the helper will not read: a symlink (anywhere on the
    /// way), not a regular file, or larger than what is read from a clone.
    #[error("clone {clone:?}: refusing to read {}: {reason} (a clone's files are never followed out of it, and read only when regular and small)", path.display())]
    UnsafePath {
        clone: String,
        path: PathBuf,
        reason: String,
    },

    #[error("internal error: {0}")]
    Internal(String),
}

fn free_text(free_mib: &Option<u64>) -> String {
    match free_mib {
        Some(mib) => format!("{mib} MiB"),
        None => "unknown".to_owned(),
    }
}

fn existing_or_none(existing: &[String]) -> String {
    if existing.is_empty() {
        "none exists yet".to_owned()
    } else {
        existing.join(", ")
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The protocol's machine-readable kind, kebab-case.
    /// Every kind [`Error::kind`] answers with (PROTOCOL.md, "Errors").
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Usage(_) => "usage",
            Error::InvalidName { .. } => "invalid-name",
            Error::InvalidArgument { .. } => "invalid-argument",
            Error::NotRoot { .. } => "not-root",
            Error::NotFound { .. } => "not-found",
            Error::NotFoundAmong { .. } => "not-found",
            Error::AlreadyExists { .. } => "already-exists",
            Error::BaseInUse { .. } => "base-in-use",
            Error::BaseBuildFailed { .. } => "base-build-failed",
            Error::NoSpace { .. } => "no-space",
            Error::CommandFailed { .. } => "command-failed",
            Error::Io { .. } => "io",
            Error::StillMounted { .. } => "still-mounted",
            Error::Systemd(_) => "systemd",
            Error::ClonesFailed { .. } => "systemd",
            Error::NotInPlace { .. } => "not-in-place",
            Error::Unsupported { .. } => "unsupported",
            Error::LockTimeout { .. } => "lock-timeout",
            Error::UnsafePath { .. } => "unsafe-path",
            Error::Internal(_) => "internal",
        }
    }

    /// The documented exit code: 2 for bad input or usage, 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::InvalidName { .. } | Error::InvalidArgument { .. } => {
                EXIT_USAGE
            }
            _ => EXIT_FAILED,
        }
    }

    /// The argument that was wrong, when one input was.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Error::InvalidName { field, .. } | Error::InvalidArgument { field, .. } => Some(field),
            Error::NotFoundAmong { field, .. } => Some(field),
            _ => None,
        }
    }

    /// The chain of underlying errors, outermost first (this error itself excluded).
    pub fn causes(&self) -> Vec<String> {
        if let Error::ClonesFailed { errors, .. } = self {
            return errors.clone();
        }
        let mut causes = Vec::new();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            causes.push(cause.to_string());
            next = cause.source();
        }
        causes
    }

    /// Shorthand for an I/O error with the path it happened on.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

// --- systemd's errors, as the systemd layer reports them ------------------------------

#[derive(Debug, thiserror::Error)]
pub enum SystemdError {
    #[error("cannot reach systemd over D-Bus: the system bus ({bus}) did not answer: {detail}")]
    Unavailable { bus: String, detail: String },

    #[error("systemd {method}{} failed over D-Bus (system bus {bus}): {detail}", unit_suffix(.unit))]
    Call {
        method: &'static str,
        unit: Option<String>,
        bus: String,
        detail: String,
    },

    #[error("systemd {method}{} did not answer over D-Bus within {} s (system bus {bus})", unit_suffix(.unit), .seconds)]
    Timeout {
        method: &'static str,
        unit: Option<String>,
        bus: String,
        seconds: u64,
    },

    #[error("unit {unit} is not loaded")]
    NoSuchUnit { unit: String },

    #[error("unit {unit} failed (ActiveState=failed); see `journalctl -u {unit}`")]
    UnitFailed {
        unit: String,
        /// The unit's last journal lines, when they could be read.
        #[source]
        journal: Option<JournalTail>,
    },

    #[error("unit {unit} did not become {wanted} within {seconds} s (ActiveState={last})")]
    WaitTimeout {
        unit: String,
        wanted: &'static str,
        last: String,
        seconds: u64,
    },
}

/// The last lines a failed unit logged, carried as the cause of its failure.
#[derive(Debug, thiserror::Error)]
#[error("last journal lines of {unit}:\n{}", lines.join("\n"))]
pub struct JournalTail {
    pub unit: String,
    pub lines: Vec<String>,
}

/// The last lines a failed command printed, and the log that keeps all of them.
#[derive(Debug, thiserror::Error)]
#[error("its last lines (the whole log is kept at {}):\n{}", log.display(), lines.join("\n"))]
pub struct OutputTail {
    pub log: PathBuf,
    pub lines: Vec<String>,
}

fn unit_suffix(unit: &Option<String>) -> String {
    unit.as_ref()
        .map(|u| format!(" of {u}"))
        .unwrap_or_default()
}

/// Every error kind, as [`Error::kind`] names them; `clone-army schema` lists them.
pub const KINDS: &[&str] = &[
    "usage",
    "invalid-name",
    "invalid-argument",
    "not-root",
    "not-found",
    "already-exists",
    "base-in-use",
    "base-build-failed",
    "no-space",
    "command-failed",
    "io",
    "still-mounted",
    "systemd",
    "not-in-place",
    "unsupported",
    "lock-timeout",
    "unsafe-path",
    "internal",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The list holds exactly the kinds [`Error::kind`] can answer with.
    #[test]
    fn kinds_lists_every_kind() {
        let source = include_str!("error.rs");
        let body = source
            .split("pub fn kind(&self)")
            .nth(1)
            .and_then(|rest| rest.split("\n    }\n").next())
            .unwrap();
        let mut named: Vec<&str> = body
            .lines()
            .filter_map(|line| line.split("=> \"").nth(1))
            .map(|rest| rest.trim_end_matches("\","))
            .collect();
        named.sort_unstable();
        named.dedup();
        let mut listed = KINDS.to_vec();
        listed.sort_unstable();
        assert_eq!(named, listed);
    }
}
