//! `exec`: a burst of one command in many running clones, at most N at a time.
//!
//! Each command runs inside its clone as a transient unit (`systemd-run --machine`,
//! see `command.rs`). std threads take jobs from a bounded queue; no async runtime is
//! needed for a few dozen blocking children. The burst's own outcome is success as
//! long as it ran: each command's exit code is data in the result, not our exit code.

mod command;
mod runner;
mod stats;
mod table;

use std::collections::BTreeSet;
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

pub use command::{stop_transient_argv, systemd_run_argv, transient_unit};
use runner::run_bounded;
pub use table::table;

use crate::clone::{describe_named, list};
use crate::context::Context;
use crate::protocol::answers::{
    CloneInfo, CloneState, ExecEntry, ExecProblem, ExecProblemKind, ExecResult, ExecSummary,
};
use crate::protocol::error::{Error, Result};
use crate::sys::names::validate_name;

pub const DEFAULT_CONCURRENCY: usize = 10;
pub const MAX_CONCURRENCY: usize = 1000;
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 600;
pub const MAX_TIMEOUT_SECONDS: u64 = 86_400;
/// How long stopping a timed-out command's transient unit may take.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// What `exec` was asked to do, as the command line gave it.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// Clones named with `--clone`, in order (duplicates run once).
    pub clones: Vec<String>,
    /// `--all`: every clone, sorted by name.
    pub all: bool,
    pub concurrency: usize,
    pub timeout_seconds: u64,
    pub command: Vec<String>,
}

/// How the command is run in one clone, and how a timed-out one is stopped.
pub trait Launcher: Sync {
    fn run_argv(&self, clone: &str) -> Vec<String>;
    fn stop_argv(&self, clone: &str) -> Vec<String>;
}

/// The real thing: `systemd-run --machine=<clone> ... -- COMMAND...`.
pub struct SystemdRun<'a> {
    unit: String,
    command: &'a [String],
}

impl<'a> SystemdRun<'a> {
    pub fn new(command: &'a [String]) -> Self {
        SystemdRun {
            unit: transient_unit(std::process::id()),
            command,
        }
    }
}

impl Launcher for SystemdRun<'_> {
    fn run_argv(&self, clone: &str) -> Vec<String> {
        systemd_run_argv(clone, &self.unit, self.command)
    }

    fn stop_argv(&self, clone: &str) -> Vec<String> {
        stop_transient_argv(clone, &self.unit)
    }
}

pub fn exec(ctx: &Context, request: &ExecRequest) -> Result<ExecResult> {
    exec_with(ctx, request, &SystemdRun::new(&request.command))
}

/// `exec` with the way commands are launched injected (tests run `sh` instead).
pub fn exec_with(
    ctx: &Context,
    request: &ExecRequest,
    launcher: &dyn Launcher,
) -> Result<ExecResult> {
    validate(request)?;
    // An unknown clone is refused before anything (even the lock file) is made.
    for name in &request.clones {
        crate::clone::find(&ctx.layout, name)?;
    }
    // Beside starts, stops and other bursts, never beside a change: a clone is not
    // removed (or created) under a running burst. A change waits for the burst.
    let _lock = ctx.lock_shared()?;
    let clones = select(ctx, request)?;
    let timeout = Duration::from_secs(request.timeout_seconds);

    let mut entries: Vec<Option<ExecEntry>> = vec![None; clones.len()];
    let mut jobs = Vec::new();
    for (index, clone) in clones.iter().enumerate() {
        if clone.state == CloneState::Running {
            jobs.push((index, clone.name.as_str()));
        } else {
            entries[index] = Some(not_run(
                &clone.name,
                ExecProblemKind::NotRunning,
                format!(
                    "clone {:?} is not running; start it with `clone-army clone start {}`",
                    clone.name, clone.name
                ),
            ));
        }
    }

    let started = Instant::now();
    for (index, entry) in burst(launcher, &jobs, request.concurrency, timeout) {
        entries[index] = Some(entry);
    }
    let wall = started.elapsed();

    let clones: Vec<ExecEntry> = entries
        .into_iter()
        .map(|e| e.ok_or_else(|| Error::Internal("a clone of the burst has no result".into())))
        .collect::<Result<_>>()?;
    let summary = summarize(&clones, wall, request);
    Ok(ExecResult {
        command: request.command.clone(),
        clones,
        summary,
    })
}

fn validate(request: &ExecRequest) -> Result<()> {
    if !(1..=MAX_CONCURRENCY).contains(&request.concurrency) {
        return Err(Error::InvalidArgument {
            field: "concurrency",
            value: request.concurrency.to_string(),
            reason: format!("allowed: a whole number from 1 to {MAX_CONCURRENCY}"),
        });
    }
    if !(1..=MAX_TIMEOUT_SECONDS).contains(&request.timeout_seconds) {
        return Err(Error::InvalidArgument {
            field: "timeout",
            value: request.timeout_seconds.to_string(),
            reason: format!("allowed: whole seconds from 1 to {MAX_TIMEOUT_SECONDS}"),
        });
    }
    if request.command.first().is_none_or(String::is_empty) {
        return Err(Error::InvalidArgument {
            field: "command",
            value: request.command.join(" "),
            reason: "allowed: a program and its arguments after `--`".into(),
        });
    }
    let named = !request.clones.is_empty();
    if request.all == named {
        return Err(Error::Usage(
            "give either --all or one or more --clone NAME".into(),
        ));
    }
    for clone in &request.clones {
        validate_name("clone", "clone", clone)?;
    }
    Ok(())
}

/// The chosen clones with their states (one systemd call); unknown ones are `not-found`.
fn select(ctx: &Context, request: &ExecRequest) -> Result<Vec<CloneInfo>> {
    if request.all {
        return Ok(list(ctx)?.clones);
    }
    let mut seen = BTreeSet::new();
    let names: Vec<String> = request
        .clones
        .iter()
        .filter(|name| seen.insert(name.as_str()))
        .cloned()
        .collect();
    describe_named(ctx, &names)
}

/// Runs the jobs on at most `concurrency` worker threads fed through a bounded queue.
/// Returns `(index, entry)` pairs in the order they finished.
fn burst(
    launcher: &dyn Launcher,
    jobs: &[(usize, &str)],
    concurrency: usize,
    timeout: Duration,
) -> Vec<(usize, ExecEntry)> {
    let total = jobs.len();
    let (job_tx, job_rx) = mpsc::sync_channel::<(usize, &str)>(concurrency);
    let job_rx = Mutex::new(job_rx);
    let (result_tx, result_rx) = mpsc::channel();
    thread::scope(|scope| {
        for _ in 0..concurrency.min(total) {
            let job_rx = &job_rx;
            let result_tx = result_tx.clone();
            scope.spawn(move || loop {
                // The lock is held only while taking the next job off the queue.
                let job = job_rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok((index, clone)) = job else {
                    break;
                };
                let entry = run_one(launcher, clone, timeout);
                if result_tx.send((index, entry)).is_err() {
                    break;
                }
            });
        }
        drop(result_tx);
        for job in jobs {
            // Blocks while the queue is full: never more than `concurrency` waiting.
            if job_tx.send(*job).is_err() {
                break;
            }
        }
        drop(job_tx);
        let mut finished = Vec::with_capacity(total);
        for (index, entry) in result_rx.iter() {
            eprintln!(
                "clone-army: exec: {} {} in {:.1} s ({}/{total})",
                entry.name,
                match (&entry.error, entry.exit_code) {
                    (Some(problem), _) => problem.kind.to_string(),
                    (None, Some(code)) => format!("exit {code}"),
                    (None, None) => "no exit code".to_owned(),
                },
                entry.seconds,
                finished.len() + 1,
            );
            finished.push((index, entry));
        }
        finished
    })
}

fn run_one(launcher: &dyn Launcher, clone: &str, timeout: Duration) -> ExecEntry {
    let argv = launcher.run_argv(clone);
    let outcome = match run_bounded(&argv, timeout) {
        Ok(outcome) => outcome,
        Err(e) => {
            return not_run(
                clone,
                ExecProblemKind::SpawnFailed,
                format!(
                    "cannot run {:?}: {e}",
                    argv.first().cloned().unwrap_or_default()
                ),
            )
        }
    };
    let error = if outcome.timed_out {
        // Killing systemd-run does not end the command inside the clone; its unit does.
        let stop = launcher.stop_argv(clone);
        let stopped = match run_bounded(&stop, STOP_TIMEOUT) {
            Ok(o) if o.exit_code == Some(0) => "and its transient unit was stopped".to_owned(),
            Ok(o) => format!(
                "and stopping its transient unit failed ({}): {}",
                o.exit_code
                    .map_or_else(|| "killed".to_owned(), |c| format!("exit {c}")),
                o.stderr_tail.trim()
            ),
            Err(e) => format!("and stopping its transient unit failed: {e}"),
        };
        Some(ExecProblem {
            kind: ExecProblemKind::Timeout,
            message: format!(
                "killed after {} s {stopped} (`{}`)",
                timeout.as_secs(),
                stop.join(" ")
            ),
        })
    } else {
        outcome.signal.map(|signal| ExecProblem {
            kind: ExecProblemKind::Killed,
            message: format!("{} was ended by signal {signal}", argv[0]),
        })
    };
    ExecEntry {
        name: clone.to_owned(),
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        seconds: stats::seconds(outcome.elapsed),
        timed_out: outcome.timed_out,
        stdout_tail: outcome.stdout_tail,
        stderr_tail: outcome.stderr_tail,
        error,
    }
}

fn not_run(clone: &str, kind: ExecProblemKind, message: String) -> ExecEntry {
    ExecEntry {
        name: clone.to_owned(),
        exit_code: None,
        signal: None,
        seconds: 0.0,
        timed_out: false,
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        error: Some(ExecProblem { kind, message }),
    }
}

fn summarize(entries: &[ExecEntry], wall: Duration, request: &ExecRequest) -> ExecSummary {
    let never_ran = |e: &&ExecEntry| {
        e.error
            .as_ref()
            .is_some_and(|p| p.kind == "not-running" || p.kind == "spawn-failed")
    };
    let ran: Vec<f64> = entries
        .iter()
        .filter(|e| !never_ran(e))
        .map(|e| e.seconds)
        .collect();
    let succeeded = entries.iter().filter(|e| e.exit_code == Some(0)).count();
    ExecSummary {
        count: entries.len(),
        succeeded,
        failed: entries.len() - succeeded,
        not_run: entries.iter().filter(never_ran).count(),
        timed_out: entries.iter().filter(|e| e.timed_out).count(),
        p50_seconds: stats::percentile(&ran, 50.0),
        p95_seconds: stats::p95(&ran),
        max_seconds: stats::percentile(&ran, 100.0),
        wall_seconds: stats::seconds(wall),
        concurrency: request.concurrency,
        timeout_seconds: request.timeout_seconds,
    }
}

#[cfg(test)]
mod tests;
