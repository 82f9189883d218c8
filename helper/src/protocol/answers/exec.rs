//! Answered by `exec`: each clone's exit, output and the burst's summary.

use serde::{Deserialize, Serialize};

use crate::protocol::kinds::wire_kinds;

/// `exec`: one entry per chosen clone, in the order chosen, and the burst's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecResult {
    /// The command as it was run in each clone (an argv array, no shell).
    pub command: Vec<String>,
    pub clones: Vec<ExecEntry>,
    pub summary: ExecSummary,
}

/// What the command did in one clone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecEntry {
    pub name: String,
    /// The raw exit code (`puppet agent -t` exits 2 when it applied changes); `null` when
    /// the command did not run or was ended by a signal.
    pub exit_code: Option<i32>,
    /// The signal that ended `systemd-run`, if one did (9 after a timeout).
    pub signal: Option<i32>,
    /// Wall-clock seconds, milliseconds precision; 0 when it did not run.
    pub seconds: f64,
    pub timed_out: bool,
    /// The last 4 KiB of stdout and of stderr (lossy UTF-8).
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// Why there is no exit code; `null` when the command ran to its end.
    pub error: Option<ExecProblem>,
}

/// Why a clone has no exit code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecProblem {
    pub kind: ExecProblemKind,
    pub message: String,
}

wire_kinds! {
    /// An [`ExecProblem`]'s `kind` (docs/PROTOCOL.md, `exec`).
    pub enum ExecProblemKind {
        /// The clone was not running, so nothing was started in it.
        NotRunning => "not-running",
        /// `systemd-run` could not be started.
        SpawnFailed => "spawn-failed",
        /// Killed at the burst's time limit.
        Timeout => "timeout",
        /// `systemd-run` was ended by a signal the helper did not send.
        Killed => "killed",
    }
}

/// The burst as a whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecSummary {
    pub count: usize,
    /// Exit code 0.
    pub succeeded: usize,
    /// Everything else: non-zero exit, timeout, signal, or not run (`count - succeeded`).
    pub failed: usize,
    /// Of `failed`, those whose command never started (clone not running, spawn failure).
    pub not_run: usize,
    /// Of `failed`, those killed after `timeout_seconds`.
    pub timed_out: usize,
    /// Nearest-rank percentiles and maximum of `seconds` over the clones where the command
    /// started; `null` when it started nowhere, and the p95 `null` too where it started in
    /// fewer than [`P95_MIN_VALUES`](super::report::P95_MIN_VALUES) clones (the max is the slow end then).
    pub p50_seconds: Option<f64>,
    pub p95_seconds: Option<f64>,
    pub max_seconds: Option<f64>,
    /// From the start of the burst to the end of its last command.
    pub wall_seconds: f64,
    pub concurrency: usize,
    pub timeout_seconds: u64,
}
