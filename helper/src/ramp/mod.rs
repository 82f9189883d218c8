//! `ramp run`: a stepped load that finds where the server stack stops coping.
//!
//! The clones already running are the floor. Each step starts `step` more of the stopped
//! clones (in name order, `clone2` before `clone10`), lets them settle (their first runs
//! request certificates and sync plugins, which no later run repeats), then holds a
//! window of `hold` seconds while the recorder's samples count the runs that finish, and
//! judges the step's figures ([`step`]) against the user's bounds: p95 run time, the
//! share of failed runs, the server's JRuby wait, the share of the runs due that
//! finished. The ramp ends at the first step that crosses a bound, when no
//! stopped clone is left, or on SIGTERM or SIGINT; it leaves the clones it started
//! running. Every step goes to the baseline file ([`baseline`]) as it ends, and every
//! sample, marked with its step, to the timeline when one is given, so `report --from`
//! draws the ramp like any recorded run.
//!
//! The steps start whole run intervals apart ([`step_period`]), so that the runs stay
//! spread at every step: a clone's phase offset counts from its start, and name order is
//! phase order for the class's `clone1` .. `cloneN` (phase `i - 1`), so with the
//! `prefix-even` phasing every step's fleet is a prefix the rule spreads evenly. Clones
//! that were running before the ramp keep whatever start they had: start the ramp from
//! a stopped fleet for even arrivals at every step.

pub mod baseline;
pub mod step;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::context::Context;
use crate::protocol::answers::CloneState;
use crate::protocol::error::{Error, Result};
use crate::record::sample::{NewRun, Sample, StepMark};
use crate::record::{timeline, wait_until, Clock, Sampling};
use crate::report::ReportRequest;
use crate::sys::time::rfc3339_utc;
use baseline::{Baseline, Verdict, BASELINE_VERSION};
use step::{Bounds, StepWindow};

#[derive(Debug, Clone)]
pub struct RampRequest {
    /// The baseline file, replaced whole after every step.
    pub output: PathBuf,
    /// The timeline the samples are appended to, if any.
    pub timeline: Option<PathBuf>,
    pub label: Option<String>,
    /// Clones started a step.
    pub step: usize,
    /// Seconds after a step's clones are started before its window opens (their first
    /// runs, with the certificate request and the first plugin sync, fall in it).
    pub settle: u64,
    /// Seconds a step's window stays open: the runs that finish in it are the step's.
    pub hold: u64,
    /// Seconds between samples.
    pub every: u64,
    /// The most clones to run; default: every clone there is.
    pub max_clones: Option<usize>,
    /// Seconds over which a step's clones are started, in waves (as `clone start --ramp-up`).
    pub spread: u64,
    pub bounds: Bounds,
    /// The run interval (`interval`) and the server to ask for the JRuby wait.
    pub report: ReportRequest,
}

/// What the ramp answers: the baseline, and where it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ramped {
    pub output: String,
    #[serde(flatten)]
    pub baseline: Baseline,
}

/// The fleet a ramp drives: the host's clones, or the tests' model of them.
pub trait Fleet {
    /// Every clone's name and whether it runs.
    fn clones(&mut self) -> Result<Vec<(String, bool)>>;
    /// Starts `names` over `spread` seconds; the names that did not start.
    fn start(&mut self, names: &[String], spread: u64) -> Result<Vec<String>>;
    /// A sample at `now`, and the runs it counted (finished since the one before).
    fn sample(&mut self, now: u64) -> Result<(Sample, Vec<NewRun>)>;
}

/// The clones on this host, sampled as the recorder samples them.
pub struct HostFleet<'a> {
    ctx: &'a Context<'a>,
    report: ReportRequest,
    every: u64,
    sampling: Sampling,
}

impl<'a> HostFleet<'a> {
    pub fn new(ctx: &'a Context<'a>, request: &RampRequest) -> Self {
        HostFleet {
            ctx,
            report: request.report.clone(),
            every: request.every,
            sampling: Sampling::default(),
        }
    }
}

impl Fleet for HostFleet<'_> {
    fn clones(&mut self) -> Result<Vec<(String, bool)>> {
        Ok(crate::clone::list(self.ctx)?
            .clones
            .into_iter()
            .map(|c| (c.name, c.state == CloneState::Running))
            .collect())
    }

    fn start(&mut self, names: &[String], spread: u64) -> Result<Vec<String>> {
        match crate::clone::start(self.ctx, names, spread) {
            Ok(_) => Ok(Vec::new()),
            // The step goes on with the clones that started; the baseline names the others.
            Err(Error::ClonesFailed { failed, .. }) => Ok(failed),
            Err(e) => Err(e),
        }
    }

    fn sample(&mut self, now: u64) -> Result<(Sample, Vec<NewRun>)> {
        let sample = self
            .sampling
            .take(self.ctx, &self.report, self.every, now)?;
        Ok((sample, self.sampling.sampler.latest_runs().to_vec()))
    }
}

/// Checks the request before anything is started or written.
pub fn validate(request: &RampRequest) -> Result<()> {
    let invalid = |field: &'static str, value: String, reason: String| Error::InvalidArgument {
        field,
        value,
        reason,
    };
    let interval = request.report.interval;
    if interval == 0 {
        return Err(invalid(
            "interval",
            "0".into(),
            "the run interval must be at least one second".into(),
        ));
    }
    if request.step == 0 {
        return Err(invalid(
            "step",
            "0".into(),
            "a step adds at least one clone".into(),
        ));
    }
    if request.hold < interval {
        return Err(invalid(
            "hold",
            request.hold.to_string(),
            format!("a step holds at least the run interval ({interval} s), so each of its clones runs in it"),
        ));
    }
    if request.every == 0 || request.every > request.hold {
        return Err(invalid(
            "every",
            request.every.to_string(),
            format!("samples are 1 to {} (the hold) seconds apart", request.hold),
        ));
    }
    if request.spread >= request.hold {
        return Err(invalid(
            "spread",
            request.spread.to_string(),
            format!("a step's clones start within its hold ({} s)", request.hold),
        ));
    }
    if request.max_clones == Some(0) {
        return Err(invalid(
            "max-clones",
            "0".into(),
            "at least one clone, or leave it out".into(),
        ));
    }
    let b = &request.bounds;
    if *b == Bounds::default() {
        return Err(invalid(
            "bounds",
            "none".into(),
            "give at least one of --max-p95, --max-error-rate, --max-jruby-wait, --min-throughput"
                .into(),
        ));
    }
    for (field, value, range_ok, allowed) in [
        (
            "max-p95",
            b.p95_seconds,
            b.p95_seconds.is_none_or(|v| v.is_finite() && v > 0.0),
            "seconds above 0",
        ),
        (
            "max-error-rate",
            b.error_percent,
            b.error_percent
                .is_none_or(|v| v.is_finite() && (0.0..100.0).contains(&v)),
            "a percentage from 0 up to (not including) 100",
        ),
        (
            "max-jruby-wait",
            b.jruby_wait_ms,
            b.jruby_wait_ms.is_none_or(|v| v.is_finite() && v >= 0.0),
            "milliseconds, 0 or more",
        ),
        (
            "min-throughput",
            b.min_throughput_percent,
            b.min_throughput_percent
                .is_none_or(|v| v.is_finite() && v > 0.0 && v <= 100.0),
            "a percentage above 0, up to 100",
        ),
    ] {
        if !range_ok {
            return Err(invalid(
                field,
                value.map(|v| v.to_string()).unwrap_or_default(),
                allowed.into(),
            ));
        }
    }
    if b.jruby_wait_ms.is_some() && request.report.server.is_none() {
        return Err(invalid(
            "max-jruby-wait",
            b.jruby_wait_ms.map(|v| v.to_string()).unwrap_or_default(),
            "the JRuby wait is the server's figure: give --server too".into(),
        ));
    }
    Ok(())
}

/// Seconds from one step's start to the next: its settle and hold, rounded up to whole run
/// intervals. Clones started a whole number of intervals apart keep, against each
/// other, the offsets their phasing gave them; started at any other distance, a step's
/// clones would be shifted against the earlier steps' by it, and a step's lateness would
/// add up over the ramp. Where settle and hold are not whole intervals, the ramp waits,
/// without sampling, from the window's end to the next step.
pub fn step_period(settle: u64, hold: u64, interval: u64) -> u64 {
    // Saturating: a baseline file read back may hold any figures.
    let interval = interval.max(1);
    settle
        .saturating_add(hold)
        .div_ceil(interval)
        .saturating_mul(interval)
}

/// The order clones are added in: by name, a trailing number compared as a number.
fn name_order(name: &str) -> (&str, u64, &str) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number) = name.split_at(name.len() - digits);
    (stem, number.parse().unwrap_or(0), name)
}

/// Runs the ramp to its end (a bound crossed, no clone left, or `stop`).
pub fn ramp(
    fleet: &mut impl Fleet,
    request: &RampRequest,
    clock: &impl Clock,
    stop: &AtomicBool,
) -> Result<Ramped> {
    validate(request)?;
    let clones = fleet.clones()?;
    let running_before = clones.iter().filter(|(_, running)| *running).count();
    let mut queue: Vec<String> = clones
        .into_iter()
        .filter(|(_, running)| !running)
        .map(|(name, _)| name)
        .collect();
    queue.sort_by(|a, b| name_order(a).cmp(&name_order(b)));
    let room = request
        .max_clones
        .map_or(usize::MAX, |max| max.saturating_sub(running_before));
    queue.truncate(room);
    if queue.is_empty() {
        return Err(Error::InvalidArgument {
            field: "max-clones",
            value: request
                .max_clones
                .map_or_else(|| "all".to_owned(), |m| m.to_string()),
            reason: format!(
                "no stopped clone to add ({running_before} running): a ramp starts stopped clones step by step"
            ),
        });
    }
    let mut timeline = request
        .timeline
        .as_deref()
        .map(|path| {
            timeline::Timeline::open(
                path,
                crate::record::DEFAULT_MAX_BYTES,
                crate::record::DEFAULT_KEEP,
            )
        })
        .transpose()?;
    let interval = request.report.interval;
    let mut baseline = Baseline {
        ramp: BASELINE_VERSION,
        label: request.label.clone(),
        started_at: rfc3339_utc(clock.now()),
        ended_at: None,
        interval,
        step: request.step,
        settle: request.settle,
        hold: request.hold,
        bounds: request.bounds,
        running_before,
        server_version: None,
        steps: Vec::new(),
        verdict: Verdict::of(&[], interval, "running"),
    };
    baseline::write(&baseline, &request.output)?;
    let mut ended_by = "clones";
    // The clones the ramp started whose first run has not been seen yet.
    let mut awaiting_first: HashSet<String> = HashSet::new();
    let period = step_period(request.settle, request.hold, interval);
    let first_step = clock.now();
    for (index, chunk) in queue.chunks(request.step).enumerate() {
        let number = index as u32 + 1;
        // Due on the first step's rhythm: a step that comes late (its last sample took
        // time) is late alone, and the next one is due on time again.
        let due = first_step.saturating_add((index as u64).saturating_mul(period));
        if !wait_until(clock, due, stop) {
            ended_by = "signal";
            break;
        }
        // The settle counts from here, the boots in it: the clones' phases count from
        // their start, which this is on the rhythm, not from when the start returns.
        let started = clock.now();
        let failed = fleet.start(chunk, request.spread)?;
        awaiting_first.extend(chunk.iter().filter(|c| !failed.contains(c)).cloned());
        let window_from = started + request.settle;
        let mut window = StepWindow::new(number, chunk.len(), failed, started, window_from);
        let mark = StepMark {
            step: number,
            clones: running_before + (index * request.step) + chunk.len(),
        };
        // The runs of this first sample finished before the step's clones ran, and those
        // until `window_from` while the new clones made their first runs: none are the
        // step's.
        let (first, runs) = fleet.sample(clock.now())?;
        split_first_runs(runs, &mut awaiting_first);
        append(&mut timeline, first, mark)?;
        // Samples fall due every `every` seconds from the step's start; those that fell
        // due while its clones were starting are skipped, not taken in a burst.
        let mut taken = clock.now().saturating_sub(started) / request.every;
        let signalled = loop {
            taken += 1;
            let due = started + taken * request.every;
            if due > window_from + request.hold {
                break false;
            }
            if !wait_until(clock, due, stop) {
                break true;
            }
            let (sample, runs) = fleet.sample(clock.now())?;
            let (steady, first_runs) = split_first_runs(runs, &mut awaiting_first);
            if due > window_from {
                window.add(&sample, steady, first_runs);
            }
            if let Some(version) = sample.server.as_ref().and_then(|s| s.version.clone()) {
                baseline.server_version = Some(version);
            }
            append(&mut timeline, sample, mark)?;
        };
        if signalled {
            // A step cut short is not judged: its figures cover less than its hold.
            ended_by = "signal";
            break;
        }
        let result = window.judge(&request.bounds, interval);
        eprintln!("clone-army: ramp {}", step::progress(&result));
        let degraded = !result.within_bounds;
        baseline.steps.push(result);
        baseline.verdict = Verdict::of(&baseline.steps, interval, "running");
        baseline::write(&baseline, &request.output)?;
        if degraded {
            ended_by = "degraded";
            break;
        }
    }
    baseline.ended_at = Some(rfc3339_utc(clock.now()));
    baseline.verdict = Verdict::of(&baseline.steps, interval, ended_by);
    baseline::write(&baseline, &request.output)?;
    Ok(Ramped {
        output: request.output.display().to_string(),
        baseline,
    })
}

/// The runs that are not a started clone's first, and those that are (each clone's first
/// is taken off `awaiting_first`).
fn split_first_runs(
    runs: Vec<NewRun>,
    awaiting_first: &mut HashSet<String>,
) -> (Vec<NewRun>, Vec<NewRun>) {
    runs.into_iter()
        .partition(|run| !awaiting_first.remove(&run.clone))
}

fn append(
    timeline: &mut Option<timeline::Timeline>,
    mut sample: Sample,
    mark: StepMark,
) -> Result<()> {
    if let Some(timeline) = timeline {
        sample.step = Some(mark);
        timeline.append(&crate::record::sample::line(&sample)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
