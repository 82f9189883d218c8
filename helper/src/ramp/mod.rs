//! `ramp run`: a stepped load that finds where the server stack stops coping.
//!
//! The clones already running are the floor. Each step starts `step` more of the stopped
//! clones (in name order, `clone2` before `clone10`), lets them settle (their first runs
//! request certificates and sync plugins, which no later run repeats), then holds a
//! window while the recorder's samples count the runs that finish, and judges the step's
//! figures ([`step`]) against the user's bounds: p95 run time, the share of failed runs,
//! the server's JRuby wait, the share of the runs due that finished. A window holds long
//! enough for a p95 of its runs ([`schedule`]), and `--repeat` holds several one after
//! another, whose spread the step gives ([`spread`]).
//!
//! The coarse steps end at the first step that crosses a bound, when no stopped clone is
//! left, or on SIGTERM or SIGINT. After a crossing, bisection ([`bisect`]) tries the
//! level midway between the last step within bounds and the first past them (stopping
//! the clones above it, or starting them again) until the bracket is within the
//! resolution; the verdict ([`baseline`]) states the knee with its uncertainty, whose
//! limit it was ([`limit`], from the load host's own CPUs when they are named:
//! [`host_cpus`]), and a scalability model fitted to the steps ([`usl`]). The
//! clones of the last level tried are left running. Every step goes to the baseline file
//! as it ends, and every sample, marked with its step, to the timeline when one is given,
//! so `report --from` draws the ramp like any recorded run. Load hosts that step together
//! (`--start-at`) merge their baselines into one verdict ([`merge`]).
//!
//! The steps start whole run intervals apart ([`step_period`]), so that the runs stay
//! spread at every step: a clone's phase offset counts from its start, and name order is
//! phase order for the class's `clone1` .. `cloneN` (phase `i - 1`), so with the
//! `prefix-even` phasing every step's fleet is a prefix the rule spreads evenly. That
//! holds for every level the ramp tries: a step whose window holds longer for a p95 is
//! followed a whole number of intervals later, and bisection stops the clones last
//! started and starts again the first stopped, so the clones running are always the
//! floor and the first of the others in name order, each started on the rhythm. Clones
//! that were running before the ramp keep whatever start they had: start the ramp from
//! a stopped fleet for even arrivals at every step.

pub mod baseline;
pub mod bisect;
pub mod host_cpus;
pub mod limit;
pub mod longest;
pub mod merge;
pub mod run_times;
pub mod schedule;
pub mod spread;
pub mod step;
pub mod usl;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::context::Context;
use crate::protocol::answers::CloneState;
use crate::protocol::error::{Error, Result};
use crate::protocol::ramp::{
    Baseline, Bounds, Phase, RampReport, Ramped, StepResult, Verdict, BASELINE_VERSION,
};
use crate::protocol::record::{Sample, StepMark};
use crate::record::sample::NewRun;
use crate::record::{timeline, wait_until, Sampling};
use crate::report::ReportRequest;
use crate::sys::clock::Clock;
use crate::sys::time::rfc3339_utc;
use step::StepWindow;

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
    /// Windows each step holds one after another, judged together (`--repeat`).
    pub repeat: usize,
    /// The longest a window holds to reach a p95 of its runs ([`schedule`]).
    pub max_hold: u64,
    /// How narrow bisection makes the bracket around the knee.
    pub resolution: bisect::Resolution,
    /// Steps keyed to this wall-clock time (epoch s), the same on every load host.
    pub start_at: Option<u64>,
    /// The load host's own CPUs, whose busy share is its CPU; `None`: every CPU.
    pub load_host_cpus: Option<host_cpus::CpuList>,
    pub bounds: Bounds,
    /// The run interval (`interval`) and the server to ask for the JRuby wait.
    pub report: ReportRequest,
}

/// The fleet a ramp drives: the host's clones, or the tests' model of them.
pub trait Fleet {
    /// Every clone's name and whether it runs.
    fn clones(&mut self) -> Result<Vec<(String, bool)>>;
    /// Starts `names` over `spread` seconds; the names that did not start.
    fn start(&mut self, names: &[String], spread: u64) -> Result<Vec<String>>;
    /// Stops `names` (bisection trying a level below the clones running).
    fn stop(&mut self, names: &[String]) -> Result<()>;
    /// The load host's CPUs by number, as its samples count them.
    fn cpus(&mut self) -> Result<Vec<u32>>;
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

    /// Its samples also read the server's access log as it grows.
    pub fn reading(mut self, access_log: Option<crate::record::access_log::AccessLog>) -> Self {
        self.sampling = Sampling::with_access_log(access_log);
        self
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
        // The ramp says each step's outcome itself; a step's starts are not shown apart.
        match crate::clone::start(self.ctx, names, spread, &crate::sys::progress::Quiet) {
            Ok(_) => Ok(Vec::new()),
            // The step goes on with the clones that started; the baseline names the others.
            Err(Error::ClonesFailed { failed, .. }) => Ok(failed),
            Err(e) => Err(e),
        }
    }

    fn stop(&mut self, names: &[String]) -> Result<()> {
        crate::clone::stop(self.ctx, names).map(|_| ())
    }

    fn cpus(&mut self) -> Result<Vec<u32>> {
        let reading = crate::record::host::read(|p| self.ctx.layout.fs(p));
        Ok(reading.cpus.iter().map(|(cpu, _)| *cpu).collect())
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
    if request.repeat == 0 || request.repeat > MAX_REPEAT {
        return Err(invalid(
            "repeat",
            request.repeat.to_string(),
            format!("1 to {MAX_REPEAT} windows a step"),
        ));
    }
    if request.max_hold < request.hold {
        return Err(invalid(
            "max-hold",
            request.max_hold.to_string(),
            format!("at least the hold ({} s)", request.hold),
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
            "give at least one of --max-p95, --max-error-rate, --max-jruby-wait, --min-throughput, \
             --max-borrow-timeouts, --max-queue-limit-hits, --max-puppetdb-queue"
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
    for (field, value) in [
        ("max-borrow-timeouts", b.max_borrow_timeouts),
        ("max-queue-limit-hits", b.max_queue_limit_hits),
    ] {
        if let (Some(value), None) = (value, &request.report.server) {
            return Err(invalid(
                field,
                value.to_string(),
                "it is counted by the server's status: give --server too".into(),
            ));
        }
    }
    if let Some(depth) = b.max_puppetdb_queue {
        if !depth.is_finite() || depth < 0.0 {
            return Err(invalid(
                "max-puppetdb-queue",
                depth.to_string(),
                "commands waiting, 0 or more".into(),
            ));
        }
        if request.report.puppetdb.is_none() {
            return Err(invalid(
                "max-puppetdb-queue",
                depth.to_string(),
                "the queue is PuppetDB's figure: give --puppetdb too".into(),
            ));
        }
    }
    Ok(())
}

/// The most windows a step repeats: the spread of a figure is read from a handful of
/// draws, and each costs a hold.
pub const MAX_REPEAT: usize = 10;
/// Windows a step holds when `--repeat` is not given.
pub const DEFAULT_REPEAT: usize = 1;

/// Seconds from one step's start to the next: its settle and windows, rounded up to whole
/// run intervals. Clones started a whole number of intervals apart keep, against each
/// other, the offsets their phasing gave them; started at any other distance, a step's
/// clones would be shifted against the earlier steps' by it, and a step's lateness would
/// add up over the ramp. Where settle and windows are not whole intervals, the ramp
/// waits, without sampling, from the last window's end to the next step.
pub fn step_period(settle: u64, windows: u64, interval: u64) -> u64 {
    // Saturating: a baseline file read back may hold any figures.
    let interval = interval.max(1);
    settle
        .saturating_add(windows)
        .div_ceil(interval)
        .saturating_mul(interval)
}

/// The order clones are added in: by name, a trailing number compared as a number.
fn name_order(name: &str) -> (&str, u64, &str) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number) = name.split_at(name.len() - digits);
    (stem, number.parse().unwrap_or(0), name)
}

/// Runs the ramp to its end (a bound crossed and the knee refined, no clone left, or
/// `stop`).
pub fn ramp(
    fleet: &mut impl Fleet,
    request: &RampRequest,
    clock: &impl Clock,
    stop: &AtomicBool,
) -> Result<Ramped> {
    validate(request)?;
    if let Some(start_at) = request.start_at {
        schedule::check_start_at(start_at, clock.now())?;
    }
    if let Some(cpus) = &request.load_host_cpus {
        host_cpus::check_on_host(cpus, &fleet.cpus()?)?;
    }
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
    let timeline = request
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
    let baseline = Baseline {
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
        repeat: request.repeat,
        max_hold: request.max_hold,
        resolution: refines(request).then(|| request.resolution.to_string()),
        start_at: request.start_at.map(rfc3339_utc),
        load_host_cpus: request.load_host_cpus.as_ref().map(|c| c.to_string()),
        load_hosts: Vec::new(),
        steps: Vec::new(),
        verdict: Verdict::of(&[], interval, "running", None),
    };
    baseline::write(&baseline, &request.output)?;
    let mut run = Run {
        fleet,
        request,
        clock,
        stop,
        timeline,
        baseline,
        running_before,
        started: Vec::new(),
        pool: queue,
        awaiting_first: HashSet::new(),
        next_due: request.start_at.unwrap_or_else(|| clock.now()),
    };
    let ended_by = run.steps()?;
    let mut baseline = run.baseline;
    baseline.ended_at = Some(rfc3339_utc(clock.now()));
    baseline.verdict = Verdict::of(
        &baseline.steps,
        interval,
        ended_by,
        baseline.load_host_cpus.as_deref(),
    );
    baseline::write(&baseline, &request.output)?;
    Ok(Ramped {
        output: request.output.display().to_string(),
        baseline,
    })
}

/// Whether the ramp refines its knee by bisection: not when its steps are keyed to a
/// start time shared with other load hosts ([`schedule`]).
fn refines(request: &RampRequest) -> bool {
    request.start_at.is_none()
}

/// A ramp under way.
struct Run<'r, F: Fleet, C: Clock> {
    fleet: &'r mut F,
    request: &'r RampRequest,
    clock: &'r C,
    stop: &'r AtomicBool,
    timeline: Option<timeline::Timeline>,
    baseline: Baseline,
    running_before: usize,
    /// The clones the ramp started and runs now, in the order it started them.
    started: Vec<String>,
    /// The stopped clones it may start, in the order it adds them (those bisection
    /// stopped first).
    pool: Vec<String>,
    /// The clones the ramp started whose first run has not been seen yet.
    awaiting_first: HashSet<String>,
    /// When the next step is due: the first when the ramp begins (or at `--start-at`),
    /// each next one its step period ([`step_period`]) after the one before was due, so
    /// that a step that comes late (its last sample took time) is late alone.
    next_due: u64,
}

impl<F: Fleet, C: Clock> Run<'_, F, C> {
    /// The coarse steps, then the bisection; how the ramp ended.
    fn steps(&mut self) -> Result<&'static str> {
        let step = self.request.step;
        loop {
            if self.pool.is_empty() {
                return Ok("clones");
            }
            let Some(result) = self.step(self.started.len() + step, Phase::Coarse)? else {
                return Ok("signal");
            };
            if !result.within_bounds {
                break;
            }
        }
        if !refines(self.request) {
            return Ok("degraded");
        }
        loop {
            let (good, bad) = bisect::bracket(&self.baseline.steps);
            let good = good.map_or(self.running_before, |g| g.clones);
            let Some(bad) = bad.map(|b| b.clones) else {
                return Ok("degraded");
            };
            let Some(level) = bisect::next_level(good, bad, self.request.resolution) else {
                return Ok("degraded");
            };
            // The floor is not the ramp's to stop: a level below it (clones that
            // stopped on their own) is tried with none of its own.
            let target = level.saturating_sub(self.running_before);
            let Some(result) = self.step(target, Phase::Refine)? else {
                return Ok("signal");
            };
            // Clones that would not start, or stopped on their own, leave the level
            // outside the bracket: another try would not narrow it.
            if result.clones <= good || result.clones >= bad {
                return Ok("degraded");
            }
        }
    }

    /// Brings the clones the ramp started to `target` (starting the next of the pool or
    /// stopping the last started); the clones it tried to start and those that did not.
    fn set_level(&mut self, target: usize) -> Result<(usize, Vec<String>)> {
        if target < self.started.len() {
            let stopping = self.started.split_off(target);
            self.fleet.stop(&stopping)?;
            for name in &stopping {
                self.awaiting_first.remove(name);
            }
            self.pool.splice(0..0, stopping);
            return Ok((0, Vec::new()));
        }
        let take = (target - self.started.len()).min(self.pool.len());
        let names: Vec<String> = self.pool.drain(..take).collect();
        if names.is_empty() {
            return Ok((0, Vec::new()));
        }
        let failed = self.fleet.start(&names, self.request.spread)?;
        for name in &names {
            if !failed.contains(name) {
                self.started.push(name.clone());
                self.awaiting_first.insert(name.clone());
            }
        }
        Ok((names.len(), failed))
    }

    /// One step at `target` started clones: its clones started or stopped, its settling,
    /// its windows; judged and written to the baseline. `None` when a signal cut it short
    /// (a step cut short is not judged: its figures cover less than its hold).
    fn step(&mut self, target: usize, phase: Phase) -> Result<Option<StepResult>> {
        let request = self.request;
        let number = self.baseline.steps.len() as u32 + 1;
        let interval = request.report.interval;
        let past_bounds = self.baseline.steps.last().is_some_and(|s| !s.within_bounds);
        let settle = settle_after(past_bounds, request.settle, interval);
        let rule = schedule::HoldRule {
            settle,
            hold: request.hold,
            max_hold: request.max_hold,
            every: request.every,
            interval,
            repeats: request.repeat,
            extend: request.start_at.is_none(),
        };
        let due = self.next_due;
        if !wait_until(self.clock, due, self.stop) {
            return Ok(None);
        }
        // The settle counts from here, the boots in it: the clones' phases count from
        // their start, which this is on the rhythm, not from when the start returns.
        let started = self.clock.now();
        let (added, failed) = self.set_level(target)?;
        let window_from = started + settle;
        let clones = self.running_before + self.started.len();
        let hold = rule.hold_for(clones);
        let windows = hold.seconds * request.repeat as u64;
        let window_to = window_from + windows;
        self.next_due = due.saturating_add(step_period(settle, windows, interval));
        let mut window = StepWindow::new(number, added, failed, started, window_from)
            .held(phase, hold.seconds, hold.note)
            .counting(request.load_host_cpus.clone());
        let mark = StepMark {
            step: number,
            clones,
        };
        // The runs of this first sample finished before the step's clones ran, and those
        // until `window_from` while the new clones made their first runs: none are the
        // step's.
        let (first, runs) = self.fleet.sample(self.clock.now())?;
        split_first_runs(runs, &mut self.awaiting_first);
        append(&mut self.timeline, first, mark)?;
        let mut opened = 0u64;
        // Samples fall due every `every` seconds from the step's start; those that fell
        // due while its clones were starting (or stopping) are skipped, not taken in a
        // burst.
        let mut taken = self.clock.now().saturating_sub(started) / request.every;
        loop {
            taken += 1;
            let due = started + taken * request.every;
            if due > window_to {
                break;
            }
            if !wait_until(self.clock, due, self.stop) {
                return Ok(None);
            }
            let (sample, runs) = self.fleet.sample(self.clock.now())?;
            let (steady, first_runs) = split_first_runs(runs, &mut self.awaiting_first);
            if due > window_from {
                // The window this sample ends in: a sample on a window's last second
                // is that window's.
                let index = (due - window_from - 1) / hold.seconds;
                while opened < index {
                    opened += 1;
                    window.repeat(window_from + opened * hold.seconds);
                }
                window.add(&sample, steady, first_runs);
            }
            if let Some(version) = sample.server.as_ref().and_then(|s| s.version.clone()) {
                self.baseline.server_version = Some(version);
            }
            append(&mut self.timeline, sample, mark)?;
        }
        let result = window.judge(&request.bounds, interval);
        eprintln!("clone-army: ramp {}", step::progress(&result));
        self.baseline.steps.push(result.clone());
        self.baseline.verdict = Verdict::of(
            &self.baseline.steps,
            interval,
            "running",
            self.baseline.load_host_cpus.as_deref(),
        );
        baseline::write(&self.baseline, &request.output)?;
        Ok(Some(result))
    }
}

/// Seconds a step settles before its window: the settle asked, and one run interval
/// more after a step past the bounds (`past_bounds`). The level tried next inherits that
/// step's backlog (runs stretched to their interval's end, where the timer stops them,
/// and the queues behind them); a run lasts at most one interval, so one more lets the
/// backlog end before the window opens, and the step period stays whole intervals.
pub fn settle_after(past_bounds: bool, settle: u64, interval: u64) -> u64 {
    if past_bounds {
        settle.saturating_add(interval)
    } else {
        settle
    }
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

/// `ramp report`: the baseline at `paths` (several: the baselines of load hosts that
/// stepped together, merged), and its comparison with the one at `against`.
pub fn report(paths: &[PathBuf], against: Option<&std::path::Path>) -> Result<RampReport> {
    let baseline = match paths {
        [one] => baseline::read_judged(one, "baseline")?,
        _ => {
            if paths.len() > merge::MAX_LOAD_HOSTS {
                return Err(Error::InvalidArgument {
                    field: "baseline",
                    value: paths.len().to_string(),
                    reason: format!("at most {} baselines merge into one", merge::MAX_LOAD_HOSTS),
                });
            }
            let read_all = paths
                .iter()
                .map(|p| Ok((p.display().to_string(), baseline::read(p, "baseline")?)))
                .collect::<Result<Vec<_>>>()?;
            merge::merge(read_all)?
        }
    };
    let comparison = against
        .map(|old| baseline::read_judged(old, "against"))
        .transpose()?
        .map(|old| baseline::compare(&baseline, old));
    Ok(RampReport {
        baseline,
        comparison,
    })
}

#[cfg(test)]
mod tests;
