//! `record`: the load run as a timeline, one JSON line every `every` seconds.
//!
//! Each sample is the report the `report` verb makes (read from the clones' upper layers,
//! only the agents' files that changed since the last sample read again, and the
//! server's and PuppetDB's views when asked), reduced to what moves over time
//! ([`sample`]), and the host's load, memory and CPU ([`host`]). Lines go to a file that
//! rotates by size ([`timeline`]). The recorder runs until its duration or sample count
//! is reached, or until SIGTERM or SIGINT, after which it finishes the line it is writing.
//!
//! A sample that fails (the clones cannot be listed) ends the recording with the error:
//! the same failure would repeat every period. What only makes a view incomplete (a server
//! that does not answer) is in the line, as in the report.

pub mod access_log;
pub mod chart;
pub mod groups;
pub mod host;
pub mod html;
pub mod read;
pub mod sample;
pub mod server_window;
pub mod shape;
pub mod time_axis;
pub mod timeline;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::context::Context;
use crate::protocol::error::{Error, Result};
use crate::protocol::record::{Recorded, Sample};
use crate::report::deadline::Deadline;
use crate::report::run_cache::RunCache;
use crate::report::{self, https, puppetdb, ReportRequest};
use crate::sys::clock::Clock;
use crate::sys::time::rfc3339_utc;

/// Seconds between samples unless told.
pub const DEFAULT_EVERY: u64 = 10;
/// A timeline file rotates when the next line would take it past this size.
pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Rotated files kept beside the current one.
pub const DEFAULT_KEEP: u32 = 4;

/// By how long after a sample's start all its requests (the server's status, PuppetDB's
/// status and metrics) end: its period, so that the next sample is not held back, but at
/// least one request's limit, and never more than a report's.
pub fn sample_deadline(every: u64) -> Duration {
    Duration::from_secs(every).clamp(https::HTTP_TIMEOUT, report::REPORT_DEADLINE)
}

#[derive(Debug, Clone)]
pub struct RecordRequest {
    pub output: PathBuf,
    pub every: u64,
    /// Stop after this many seconds, or this many samples (whichever comes first); neither:
    /// until stopped.
    pub duration: Option<u64>,
    pub samples: Option<u64>,
    pub max_bytes: u64,
    pub keep: u32,
    /// What each sample asks, as the report verb (`interval` for the silent clones).
    pub report: ReportRequest,
    /// Puppet Server's access log, read as it grows (see [`access_log`]).
    pub access_log: Option<PathBuf>,
    /// Each sample's runs also by this group key ([`groups`]), as
    /// [`report::groups::key`] gives it.
    pub group_by: Option<String>,
}

/// Set by SIGTERM and SIGINT.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: nix::libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Makes SIGTERM and SIGINT set [`STOP`] instead of ending the process mid-line.
pub fn stop_on_signals() -> Result<()> {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::Handler(on_stop_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { sigaction(signal, &action) }
            .map_err(|e| Error::Internal(format!("cannot handle {signal}: {e}")))?;
    }
    Ok(())
}

/// Checks the request before anything is written.
pub fn validate(request: &RecordRequest) -> Result<()> {
    let invalid = |field: &'static str, value: u64, reason: &str| Error::InvalidArgument {
        field,
        value: value.to_string(),
        reason: reason.to_owned(),
    };
    if request.every == 0 {
        return Err(invalid(
            "every",
            0,
            "samples must be at least one second apart",
        ));
    }
    if request.samples == Some(0) {
        return Err(invalid(
            "samples",
            0,
            "at least one sample, or leave it out",
        ));
    }
    if request.max_bytes < 4096 {
        return Err(invalid(
            "max-bytes",
            request.max_bytes,
            "a timeline file must hold at least 4096 bytes (a sample is a few KiB)",
        ));
    }
    if request.report.interval == 0 {
        return Err(invalid(
            "interval",
            0,
            "the run interval must be at least one second",
        ));
    }
    Ok(())
}

/// Records until the duration or sample count is reached, or `stop` is set.
pub fn record(
    ctx: &Context,
    request: &RecordRequest,
    clock: &impl Clock,
    stop: &AtomicBool,
) -> Result<Recorded> {
    validate(request)?;
    let access_log = request
        .access_log
        .as_deref()
        .map(access_log::AccessLog::open)
        .transpose()?;
    let mut timeline = timeline::Timeline::open(&request.output, request.max_bytes, request.keep)?;
    let mut sampling = Sampling::with_access_log(access_log);
    sampling.group_by = request.group_by.clone();
    let started = clock.now();
    let mut taken = 0u64;
    let ended_by = loop {
        let now = clock.now();
        let sample = sampling.take(ctx, &request.report, request.every, now)?;
        timeline.append(&sample::line(&sample)?)?;
        taken += 1;
        if request.samples.is_some_and(|n| taken >= n) {
            break "samples";
        }
        // The next sample is due `every` seconds after the start of this one's period,
        // so a slow sample does not push every later one back.
        let due = started + taken * request.every;
        if request.duration.is_some_and(|d| due > started + d) {
            break "duration";
        }
        if !wait_until(clock, due, stop) {
            break "signal";
        }
    };
    Ok(Recorded {
        output: request.output.display().to_string(),
        samples: taken,
        started_at: rfc3339_utc(started),
        ended_at: rfc3339_utc(clock.now()),
        rotations: timeline.rotations,
        ended_by: ended_by.to_owned(),
    })
}

/// Sleeps until `due` in short steps; false when `stop` was set meanwhile.
pub fn wait_until(clock: &impl Clock, due: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        if clock.now() >= due {
            return true;
        }
        clock.sleep(Duration::from_millis(200));
    }
}

/// What one recording keeps from sample to sample: the runs seen, the parsed summaries,
/// when the fleet's shape is due, and where the access log was read to.
#[derive(Default)]
pub struct Sampling {
    pub sampler: sample::Sampler,
    runs: RunCache,
    shapes: shape::ShapeSchedule,
    access_log: Option<access_log::AccessLog>,
    /// The group key of `record --group-by`.
    pub group_by: Option<String>,
}

impl Sampling {
    /// Samples that also read `access_log` as it grows.
    pub fn with_access_log(access_log: Option<access_log::AccessLog>) -> Self {
        Sampling {
            access_log,
            ..Sampling::default()
        }
    }

    /// The sample at `now` of what `report` asks; `every` is the period a first sample covers.
    pub fn take(
        &mut self,
        ctx: &Context,
        report: &ReportRequest,
        every: u64,
        now: u64,
    ) -> Result<Sample> {
        // One deadline for the server and PuppetDB together.
        let deadline = Deadline::after(sample_deadline(every));
        // PuppetDB's queue, without the fleet's queries: those are a report's, not a sample's.
        let without_puppetdb = ReportRequest {
            puppetdb: None,
            ..report.clone()
        };
        let mut fleet =
            report::report_with(ctx, &without_puppetdb, now, &mut self.runs, &deadline)?;
        let layout = &ctx.layout;
        fleet.puppetdb = report.puppetdb.as_deref().map(|url| {
            puppetdb::fetch(
                url,
                puppetdb::Credentials {
                    ca_cert: report.ca_cert.as_deref(),
                    client: report.client.clone(),
                },
                None,
                &deadline,
                |p: &Path| layout.fs(p),
            )
        });
        let reading = host::read(|p| layout.fs(p));
        let mut sample = self.sampler.sample(&fleet, reading, every);
        sample.access_log = self
            .access_log
            .as_mut()
            .and_then(access_log::AccessLog::read);
        if let Some(key) = &self.group_by {
            // A twin record that cannot be read (an I/O error, not a missing or malformed
            // one, which is the group `-`) fails the sample, as it fails the report.
            sample.groups = Some(groups::of_sample(
                key,
                self.sampler.latest_runs(),
                |clone| report::groups::group_of(ctx, clone, key),
            )?);
        }
        let names = fleet.clones.iter().map(|c| c.name.clone()).collect();
        if self.shapes.take_if_due(now, names) {
            // A listing that fails (no system bus) leaves the shape out; the sample, which
            // needs no bus, is still worth its line.
            sample.shape = crate::clone::list(ctx)
                .ok()
                .map(|list| shape::of_clones(&list.clones));
        }
        Ok(sample)
    }
}

#[cfg(test)]
mod tests;
