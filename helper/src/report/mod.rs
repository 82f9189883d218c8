//! `report`: what the fleet is doing to the server.
//!
//! Every clone's last run is read from the agent's `last_run_summary.yaml` in the clone's
//! upper layer, without entering the container, and from `last_run_report.yaml` beside it
//! what the summary hides: why a run failed, and whether the server failed a run the
//! summary calls good (a cached catalog applied, a 5xx, a timeout: see [`failure`]); the
//! fleet's figures are computed from those; with `--server`, Puppet Server's own view comes from its status API, and with
//! `--puppetdb`, PuppetDB's command queue from its status and metrics, and the runs of
//! every load host's clones from its queries.
//!
//! The report is a read-only reader, so it must work where systemd cannot be asked (no
//! system bus): the clones' states are then `unknown` and the reason is in the result.
//! Neither an unreadable summary nor a server that does not answer fails the report; each
//! is reported where it belongs (the clone's `error`, the server's `error`).

pub mod deadline;
pub mod endpoints;
pub mod failure;
pub mod fleet_trust;
pub mod groups;
pub mod https;
pub mod judge;
pub mod kept;
pub mod last_report;
pub mod puppetdb;
pub mod puppetdb_fleet;
pub mod render;
pub mod run_cache;
pub mod server;
pub mod stats;
pub mod summary;
#[cfg(test)]
pub(crate) mod test_tls;
pub mod textfile;
pub mod yaml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use crate::clone;
use crate::context::Context;
use crate::protocol::answers::{CloneReport, CloneState, Report, ReportState, RunReport};
use crate::protocol::error::{Error, Result};
use crate::sys::confined::CloneTree;
use crate::sys::time::rfc3339_utc;
use crate::systemd::units::CloneMount;

use self::deadline::Deadline;
use self::last_report::{statedirs_for, REPORT_FILE};
use self::run_cache::{ReportReading, RunCache};
use self::stats::is_silent;
use self::summary::{parse, summary_dirs_for, LastRun, RunStatus, SUMMARY_FILE};

/// The most read of a clone's run summary (Puppet's is about 1 KiB).
pub const MAX_SUMMARY_BYTES: u64 = 1024 * 1024;
/// The most read of a clone's last run report (one entry per resource: catalogs of a
/// few thousand resources stay well below).
pub const MAX_REPORT_BYTES: u64 = 32 * 1024 * 1024;

/// Puppet's default `runinterval`, and the module's.
pub const DEFAULT_INTERVAL: u64 = 1800;

/// By how long after a report's start all its requests (the server's status, PuppetDB's
/// status, metrics and queries) end: a few requests' limits ([`https::HTTP_TIMEOUT`]),
/// whatever the services and the facts they hold do.
pub const REPORT_DEADLINE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct ReportRequest {
    pub interval: u64,
    pub server: Option<String>,
    pub ca_cert: Option<PathBuf>,
    pub puppetdb: Option<String>,
    /// PuppetDB's client certificate; `None`: the host agent's own.
    pub client: Option<https::ClientIdentity>,
}

/// The report as of `now` (seconds since the epoch), its requests done by
/// [`REPORT_DEADLINE`] from now.
pub fn report(ctx: &Context, request: &ReportRequest, now: u64) -> Result<Report> {
    let deadline = Deadline::after(REPORT_DEADLINE);
    report_with(
        ctx,
        request,
        now,
        &mut RunCache::for_one_report(),
        &deadline,
    )
}

/// As [`report`], reading again only the agents' files that changed since `runs` saw them
/// (one report after another, as the recorder takes them), and no more of them than its
/// budget for a sample (see [`run_cache`]), every request done by `deadline`.
pub fn report_with(
    ctx: &Context,
    request: &ReportRequest,
    now: u64,
    runs: &mut RunCache,
    deadline: &Deadline,
) -> Result<Report> {
    if request.interval == 0 {
        return Err(Error::InvalidArgument {
            field: "interval",
            value: "0".to_owned(),
            reason: "the run interval must be at least one second".to_owned(),
        });
    }
    let layout = &ctx.layout;
    let mounts = clone::discover(layout)?;
    let (statuses, systemd_error) = clone::statuses_without_systemd_failing(ctx, &mounts)?;
    let mut confdirs: BTreeMap<String, String> = BTreeMap::new();
    runs.begin_sample();
    let names: Vec<&str> = mounts.iter().map(|m| m.clone.as_str()).collect();
    let mut statuses: Vec<Option<_>> = statuses.into_iter().map(Some).collect();
    let mut reports: Vec<Option<CloneReport>> = vec![None; mounts.len()];
    for i in runs.reading_order(&names) {
        let (mount, Some(status)) = (&mounts[i], statuses[i].take()) else {
            continue;
        };
        let confdir = match confdirs.get(&status.base) {
            Some(c) => c.clone(),
            None => {
                let c = clone::confdir_of(layout, &status.base)?;
                confdirs.insert(status.base.clone(), c.clone());
                c
            }
        };
        let state = match (&systemd_error, status.state) {
            (Some(_), _) => ReportState::Unknown,
            (None, CloneState::Running) => ReportState::Running,
            (None, CloneState::Stopped) => ReportState::Stopped,
        };
        let (summary, run) = read_last_run(ctx, mount, &confdir, runs);
        let run_report = match &run {
            Some(Ok(_)) => Some(read_run_report(ctx, mount, &confdir, runs)),
            _ => None,
        };
        let existed_for = mount_unit_age(ctx, &status.name, now);
        reports[i] = Some(clone_report(
            status.name,
            status.base,
            state,
            status.mounted,
            summary,
            run,
            run_report,
            existed_for,
            now,
            request.interval,
        ));
    }
    let clones: Vec<CloneReport> = reports.into_iter().flatten().collect();
    runs.keep_only(&clones.iter().map(|c| c.name.as_str()).collect::<Vec<_>>());
    let fleet = stats::fleet(
        clones.iter().map(|c| (c.name.as_str(), &c.run)),
        request.interval,
    );
    let server = request.server.as_deref().map(|url| {
        server::fetch(url, request.ca_cert.as_deref(), deadline, |p: &Path| {
            layout.fs(p)
        })
    });
    let puppetdb = request.puppetdb.as_deref().map(|url| {
        let credentials = puppetdb::Credentials {
            ca_cert: request.ca_cert.as_deref(),
            client: request.client.clone(),
        };
        let clock = puppetdb::FleetClock {
            now,
            interval: request.interval,
        };
        puppetdb::fetch(url, credentials, Some(clock), deadline, |p: &Path| {
            layout.fs(p)
        })
    });
    Ok(Report {
        now,
        generated_at: rfc3339_utc(now),
        interval: request.interval,
        states_known: systemd_error.is_none(),
        systemd_error: systemd_error.map(|e| e.to_string()),
        clones,
        fleet,
        server,
        puppetdb,
        groups: None,
    })
}

/// The clone's upper layer, read through [`crate::sys::confined`]: the clone's root writes
/// there.
fn upper_tree(ctx: &Context, mount: &CloneMount) -> CloneTree {
    CloneTree::new(
        &mount.clone,
        ctx.layout.fs(&mount.upperdir),
        PathBuf::from(&mount.upperdir),
    )
}

/// The summary's host path and what it says: `None` when there is none; `Err` with the
/// reason when it is there but unreadable (or refused: a symlink, a FIFO, too large).
fn read_last_run(
    ctx: &Context,
    mount: &CloneMount,
    confdir: &str,
    runs: &mut RunCache,
) -> (Option<String>, Option<Result<LastRun, String>>) {
    let candidates = summary_dirs_for(confdir).map(|dir| in_dir(dir, SUMMARY_FILE));
    let tree = upper_tree(ctx, mount);
    let Some((relative, read)) =
        runs.summary(&tree, &mount.clone, candidates, MAX_SUMMARY_BYTES, parse)
    else {
        return (None, None);
    };
    let shown = Path::new(&mount.upperdir)
        .join(relative.trim_start_matches('/'))
        .display()
        .to_string();
    (
        Some(shown),
        Some(read.unwrap_or_else(|e| Err(with_cause(&e)))),
    )
}

/// The agent's full report beside the summary, as [`judge::judge`] takes it: `None`
/// when there is none, `Err` with the reason when it cannot be read.
fn read_run_report(
    ctx: &Context,
    mount: &CloneMount,
    confdir: &str,
    runs: &mut RunCache,
) -> Option<Result<ReportReading, String>> {
    let candidates = statedirs_for(confdir).map(|dir| in_dir(dir, REPORT_FILE));
    let explain = |text: &str| match last_report::findings(text) {
        Ok(found) => ReportReading::Found(found),
        Err(e) => ReportReading::Garbage(e),
    };
    let tree = upper_tree(ctx, mount);
    let (_, read) = runs.run_report(&tree, &mount.clone, candidates, MAX_REPORT_BYTES, explain)?;
    Some(read.map_err(|e| with_cause(&e)))
}

fn in_dir(dir: &str, file: &str) -> String {
    Path::new(dir).join(file).to_string_lossy().into_owned()
}

fn with_cause(e: &Error) -> String {
    std::error::Error::source(e)
        .map(|c| format!("{e}: {c}"))
        .unwrap_or_else(|| e.to_string())
}

/// How long the clone has existed, by its mount unit's mtime (clone-army rewrites that
/// file only when its content changes, so this is about when the clone was created).
fn mount_unit_age(ctx: &Context, clone: &str, now: u64) -> Option<u64> {
    let layout = &ctx.layout;
    let path = layout.fs(layout.unit_path(&layout.mount_unit_name(clone)));
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let secs = modified.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(now.saturating_sub(secs))
}

#[allow(clippy::too_many_arguments)]
fn clone_report(
    name: String,
    base: String,
    state: ReportState,
    mounted: bool,
    summary: Option<String>,
    run: Option<Result<LastRun, String>>,
    run_report: Option<Option<Result<ReportReading, String>>>,
    existed_for: Option<u64>,
    now: u64,
    interval: u64,
) -> CloneReport {
    let mut report = CloneReport {
        name,
        base,
        state,
        mounted,
        run: RunReport::never(),
        summary,
        error: None,
        failure: None,
        failure_kinds: Vec::new(),
        run_report: None,
    };
    match run {
        None => {}
        Some(Err(reason)) => {
            report.run.status = RunStatus::Unreadable;
            report.error = Some(reason);
        }
        Some(Ok(run)) => {
            let judged = judge::judge(&run, run_report.flatten());
            report.failure = judged.failure;
            report.failure_kinds = judged.kinds;
            report.run_report = Some(judged.file);
            report.run = RunReport {
                status: judged.status,
                succeeded: judged.status.is_success(),
                last_run: run.last_run,
                age: run.last_run.map(|t| now.saturating_sub(t)),
                total_time: run.total_time,
                config_retrieval_time: run.config_retrieval_time,
                failed_resources: run.failed_resources,
                resources: run.resources,
                puppet_version: run.puppet_version,
                config_version: run.config_version,
                silent: false,
                would_change: run.would_change,
            };
        }
    }
    report.run.silent = is_silent(report.run.age, existed_for, interval);
    report
}

#[cfg(test)]
mod service_tests;
#[cfg(test)]
pub(crate) mod tests;
