//! The helper's errors, and how each maps onto the protocol's `kind` and exit code.
//!
//! Every variant carries the context a person needs (which clone, which path, which
//! command); the underlying error, when there is one, is kept as `source` so the
//! envelope can list the whole `causes` chain.

use std::path::PathBuf;

use super::kinds::wire_kinds;

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

    /// A service the verb asks (PuppetDB for `twin import --puppetdb`) did not answer as
    /// asked: the exchange failed, or its answer was an error or not what was asked for.
    #[error("{what} did not answer as asked: {detail}")]
    Unreachable { what: String, detail: String },

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
    /// The protocol's machine-readable kind (docs/PROTOCOL.md, "Errors").
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Usage(_) => ErrorKind::Usage,
            Error::InvalidName { .. } => ErrorKind::InvalidName,
            Error::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Error::NotRoot { .. } => ErrorKind::NotRoot,
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::NotFoundAmong { .. } => ErrorKind::NotFound,
            Error::AlreadyExists { .. } => ErrorKind::AlreadyExists,
            Error::BaseInUse { .. } => ErrorKind::BaseInUse,
            Error::BaseBuildFailed { .. } => ErrorKind::BaseBuildFailed,
            Error::NoSpace { .. } => ErrorKind::NoSpace,
            Error::CommandFailed { .. } => ErrorKind::CommandFailed,
            Error::Io { .. } => ErrorKind::Io,
            Error::StillMounted { .. } => ErrorKind::StillMounted,
            Error::Systemd(_) => ErrorKind::Systemd,
            Error::ClonesFailed { .. } => ErrorKind::Systemd,
            Error::NotInPlace { .. } => ErrorKind::NotInPlace,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::Unreachable { .. } => ErrorKind::Unreachable,
            Error::LockTimeout { .. } => ErrorKind::LockTimeout,
            Error::UnsafePath { .. } => ErrorKind::UnsafePath,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The documented exit code: 2 for bad input or usage, 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        self.kind().exit_code()
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

wire_kinds! {
    /// What went wrong, as the protocol's `kind` names it (docs/PROTOCOL.md, "Errors"), in
    /// the order `clone-army schema` lists them.
    pub enum ErrorKind {
        Usage => "usage",
        InvalidName => "invalid-name",
        InvalidArgument => "invalid-argument",
        NotRoot => "not-root",
        NotFound => "not-found",
        AlreadyExists => "already-exists",
        BaseInUse => "base-in-use",
        BaseBuildFailed => "base-build-failed",
        NoSpace => "no-space",
        CommandFailed => "command-failed",
        Io => "io",
        StillMounted => "still-mounted",
        Systemd => "systemd",
        NotInPlace => "not-in-place",
        Unsupported => "unsupported",
        Unreachable => "unreachable",
        LockTimeout => "lock-timeout",
        UnsafePath => "unsafe-path",
        Internal => "internal",
    }
}

impl ErrorKind {
    /// The documented exit code: 2 for bad input or usage, 1 for everything else.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Usage | ErrorKind::InvalidName | ErrorKind::InvalidArgument => EXIT_USAGE,
            _ => EXIT_FAILED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/PROTOCOL.md's table of error kinds: each row's kind and exit code.
    fn documented_kinds() -> Vec<(String, i32)> {
        let protocol = include_str!("../../../docs/PROTOCOL.md");
        let table = protocol
            .split("Error kinds in use, with their exit codes:")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").nth(1))
            .unwrap();
        table
            .lines()
            .skip(2)
            .map(|row| {
                let cells: Vec<&str> = row.split(" | ").collect();
                let kind = cells[0].trim_start_matches("| ").trim_matches('`');
                (kind.to_owned(), cells[1].parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn protocol_md_documents_every_error_kind_with_its_exit_code() {
        let mut documented = documented_kinds();
        documented.sort();
        let mut kinds: Vec<(String, i32)> = ErrorKind::ALL
            .iter()
            .map(|kind| (kind.as_str().to_owned(), kind.exit_code()))
            .collect();
        kinds.sort();
        assert_eq!(documented, kinds);
    }

    #[test]
    fn kinds_are_written_as_protocol_md_names_them() {
        assert_eq!(
            serde_json::to_string(&ErrorKind::ALL[..3]).unwrap(),
            r#"["usage","invalid-name","invalid-argument"]"#
        );
        assert_eq!(Error::Internal("x".into()).kind(), ErrorKind::Internal);
        assert_eq!(
            Error::NotFoundAmong {
                what: "base",
                field: "base",
                name: "b".into(),
                existing: Vec::new(),
            }
            .kind(),
            "not-found"
        );
    }
}
