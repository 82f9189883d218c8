//! A ramp's result (`ramp run`, `ramp report`): the baseline file, with its request, every
//! step's figures (the curve) and the verdict, and two baselines compared. `ramp/` runs
//! the steps, judges them and draws the tables; the shapes it writes and reads back are
//! here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::answers::{Distribution, FailureKind};
use crate::protocol::record::ServerFigures;

/// The baseline's format version, its first field. Version 2 added the run times a step
/// keeps (so baselines merge), repeats, refinement, the knee, whose limit it was and the
/// scalability fit; version 1 files are still read (without them, they do not merge).
pub const BASELINE_VERSION: u32 = 2;

/// The oldest baseline format this helper reads.
pub const OLDEST_BASELINE_VERSION: u32 = 1;

/// What a ramp found, written after every step (so a ramp that is stopped keeps its
/// steps) and at its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub ramp: u32,
    /// The user's name for this run (`--label`), to tell two baselines apart.
    pub label: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The agents' run interval the ramp was told, seconds.
    pub interval: u64,
    /// Clones added a step, seconds a step settles before its window, and seconds the
    /// window holds.
    pub step: usize,
    pub settle: u64,
    pub hold: u64,
    pub bounds: Bounds,
    /// Clones already running when the ramp began.
    pub running_before: usize,
    /// The server's version, as its status service gave it.
    pub server_version: Option<String>,
    /// Windows each step held one after another (`--repeat`).
    #[serde(default = "one")]
    pub repeat: usize,
    /// The longest a window held to reach a p95 (`--max-hold`); 0 in a version 1 file.
    #[serde(default)]
    pub max_hold: u64,
    /// The bracket bisection narrowed the knee to (`--resolution`: clones, or `10%` of
    /// the level); `null` for a coarse-only ramp (steps keyed to `--start-at`).
    #[serde(default)]
    pub resolution: Option<String>,
    /// The wall-clock time the steps were keyed to (`--start-at`), RFC 3339.
    #[serde(default)]
    pub start_at: Option<String>,
    /// The CPUs whose busy share was the load host's CPU (`--load-host-cpus`, a CPU list
    /// such as `2-3`); `null`: every CPU. Merged: the CPUs every host counted, `null`
    /// when they counted different ones (each host's are in `load_hosts`).
    #[serde(default)]
    pub load_host_cpus: Option<String>,
    /// The load hosts whose baselines this one merges; empty for one host's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_hosts: Vec<LoadHost>,
    pub steps: Vec<StepResult>,
    pub verdict: Verdict,
}

/// A load host's baseline in a merged one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadHost {
    /// The file it was read from, and its label.
    pub file: String,
    pub label: Option<String>,
    pub steps: usize,
    pub ended_by: String,
    pub summary: String,
    /// The CPUs it counted as its own (`--load-host-cpus`); `null`: every CPU.
    #[serde(default)]
    pub load_host_cpus: Option<String>,
}

/// Where the load held and where it gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `running` while steps are still to come; then `degraded` (a step crossed a bound),
    /// `clones` (every clone it could add ran within bounds: no knee up to there) or
    /// `signal` (stopped by SIGTERM or SIGINT).
    pub ended_by: String,
    /// The last step within bounds; `null` when the first step already crossed one.
    pub sustained: Option<Level>,
    /// The first step that crossed a bound; `null` when none did.
    pub first_degraded: Option<Level>,
    /// Where the knee lies: between the level sustained and the first past the bounds.
    #[serde(default)]
    pub knee: Option<Knee>,
    /// Whether the load host or the server gave first, at the first step past the bounds.
    #[serde(default)]
    pub limit: Option<Limit>,
    /// The Universal Scalability Law fitted to the steps' runs a minute against clones
    /// (at least three levels).
    #[serde(default)]
    pub scalability: Option<UslFit>,
    /// The verdict in one sentence.
    pub summary: String,
}

/// The knee with its uncertainty: sustained at `low` clones, past the bounds at `high`,
/// so it lies at `estimate` ± `plus_minus` (half the bracket).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    pub low: usize,
    pub high: usize,
    pub estimate: f64,
    pub plus_minus: f64,
}

/// A step's load: clones, at the run interval, and the runs a minute they made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub step: u32,
    pub clones: usize,
    pub interval: u64,
    pub runs_per_minute: f64,
    /// The bounds it crossed, described ("p95 run time 41.2 s > 30 s").
    pub crossed: Vec<String>,
    /// The server's own p95 per endpoint of an agent's run at this step, ms, from its
    /// access log (endpoints with too few requests for a p95 are left out).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_p95_ms: BTreeMap<String, u64>,
}

/// What `ramp report` answers: the baseline, and its comparison with another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampReport {
    pub baseline: Baseline,
    pub comparison: Option<Comparison>,
}

/// Two baselines step by step, matched by the clones each step ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub against: Baseline,
    pub rows: Vec<ComparedStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedStep {
    pub clones: usize,
    /// p95 run time, seconds, in the old run (`against`) and the new one.
    pub p95_old: Option<f64>,
    pub p95_new: Option<f64>,
    /// new / old; below 1 is faster.
    pub p95_ratio: Option<f64>,
    /// The run times each p95 was taken over: below
    /// [`P95_MIN_VALUES`](super::answers::P95_MIN_VALUES) a step has none, and the table
    /// says `max(n)`.
    #[serde(default)]
    pub runs_old: Option<usize>,
    #[serde(default)]
    pub runs_new: Option<usize>,
    pub error_percent_old: Option<f64>,
    pub error_percent_new: Option<f64>,
    pub runs_per_minute_old: Option<f64>,
    pub runs_per_minute_new: Option<f64>,
}

fn one() -> usize {
    1
}

/// What the ramp answers: the baseline, and where it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ramped {
    pub output: String,
    #[serde(flatten)]
    pub baseline: Baseline,
}

/// What `ramp longest` answers: the most steps a `ramp run` with the same arguments
/// takes and the longest it can take, seconds; both `None` when its steps are not
/// bounded (no `--max-clones`, or steps keyed to `--start-at`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RampLongest {
    pub steps: Option<u64>,
    pub seconds: Option<u64>,
}

/// The limits a step is held to; a bound left out is not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// The 95th percentile of the step's run times (`total` of each run's summary), seconds.
    pub p95_seconds: Option<f64>,
    /// Failed runs as a share of the step's runs, percent.
    pub error_percent: Option<f64>,
    /// The server's average JRuby wait (`average-wait-time`) at the step's end, ms.
    pub jruby_wait_ms: Option<f64>,
    /// The least share of the runs due that must finish in the window, percent (see
    /// `ramp::step::throughput_percent`): a server that slows agents without failing them, or a
    /// load host that cannot start them, shows here before anywhere else.
    pub min_throughput_percent: Option<f64>,
    /// The most JRuby borrow timeouts in the window (requests that waited longer than the
    /// server's `borrow-timeout` for an instance and got a 503); 0 for none at all.
    #[serde(default)]
    pub max_borrow_timeouts: Option<u64>,
    /// The most requests refused in the window because `max-queued-requests` were already
    /// waiting (a 503 at once); 0 for none at all.
    #[serde(default)]
    pub max_queue_limit_hits: Option<u64>,
    /// The deepest PuppetDB command queue any of the window's samples may see.
    #[serde(default)]
    pub max_puppetdb_queue: Option<f64>,
}

/// A bound a step crossed, with the step's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossing {
    /// `p95`, `error-rate`, `jruby-wait`, `borrow-timeouts`, `queue-limit-hits`,
    /// `puppetdb-queue` (above their bound), `throughput` (below it), or `no-runs` (no run
    /// finished while the step held, which no bound can call coping).
    pub bound: String,
    pub limit: Option<f64>,
    pub value: Option<f64>,
    /// What `value` is when it is not the figure the bound names: `max of 12` for a `p95`
    /// bound held against a step with too few runs for a p95 (their maximum, which is at
    /// least their p95 would be).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<String>,
    /// What the figure is made of, for people: the failed runs by kind
    /// ("cached-catalog 12, server-error 12").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// How a step's level was chosen: `coarse` (the floor plus `--step` clones at a time) or
/// `refine` (bisection between the last coarse level within bounds and the first past
/// them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    #[default]
    Coarse,
    Refine,
}

/// What a step did, as the baseline keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// 1 for the first step.
    pub step: u32,
    /// Clones running at the step's end (its last sample).
    pub clones: usize,
    /// Clones this step started, and those of them that did not start.
    pub added: usize,
    pub start_failed: Vec<String>,
    /// When the start of the step's clones began (RFC 3339 and epoch s), on the ramp's
    /// rhythm of whole intervals; its window opened the baseline's `settle` seconds later.
    pub started_at: String,
    pub t: u64,
    /// Seconds the windows covered, from each one's opening to its last sample.
    pub seconds: u64,
    pub samples: usize,
    /// Runs that finished in the windows, and how many of them failed.
    pub runs: usize,
    pub failed_runs: usize,
    /// `failed_runs / runs` in percent; `null` without runs.
    pub error_percent: Option<f64>,
    pub runs_per_minute: f64,
    /// The runs, first runs included, as a share of those due in the windows
    /// (`ramp::step::throughput_percent`); `null` in a baseline written before it was measured.
    pub throughput_percent: Option<f64>,
    /// The run times (seconds) of the windows' runs.
    pub total_time: Distribution,
    /// The first runs of the clones the ramp started, which finished in the window: not
    /// in the figures above, since a clone's first run also requests its certificate and
    /// syncs every plugin, which no later run repeats.
    pub first_runs: FirstRuns,
    /// The server's average JRuby wait at the window's last sample that had it (ms).
    pub jruby_wait_ms: Option<f64>,
    /// The mean share of the load host's cores busy over the window (0 to 1): of the CPUs
    /// the ramp was told are its own (`--load-host-cpus`), else of all. A knee where this
    /// nears 1 is the load host's, not the server's.
    pub host_cpu_busy: Option<f64>,
    /// How the step's level was chosen.
    #[serde(default)]
    pub phase: Phase,
    /// Seconds from the step's start to its window: the baseline's `settle`, one interval
    /// more after a step past the bounds (`ramp::settle_after`); 0 in a baseline
    /// written before (the baseline's `settle` then).
    #[serde(default)]
    pub settle: u64,
    /// Seconds each of the step's windows held: the hold asked, or longer so that its
    /// runs reach a p95 (see `ramp::schedule`); 0 in a baseline written before.
    #[serde(default)]
    pub hold: u64,
    /// The windows the step held one after another (`--repeat`).
    #[serde(default = "one")]
    pub repeats: usize,
    /// Why the windows could not hold long enough for a p95 of the step's runs.
    #[serde(default)]
    pub hold_note: Option<String>,
    /// The catalog retrieval times of the runs, and each run's time outside its retrieval
    /// (`ramp::run_times::agent_time`), seconds: a load host that starves its agents
    /// slows the second, a server the first.
    #[serde(default)]
    pub config_retrieval_time: Distribution,
    #[serde(default)]
    pub agent_time: Distribution,
    /// The figures' spread over the repeated windows; `null` with one window.
    #[serde(default)]
    pub spread: Option<RepeatSpread>,
    /// The times behind the distributions, so that baselines merge exactly.
    #[serde(default)]
    pub run_times: RunTimes,
    pub within_bounds: bool,
    pub crossed: Vec<Crossing>,
    /// The window's failed runs by why they failed (a run of two kinds counts under
    /// each); empty in a baseline written before it was measured.
    #[serde(default)]
    pub failed_by_kind: BTreeMap<FailureKind, usize>,
    /// What the server and PuppetDB did over the window (their counts' differences and
    /// the access log's request times); `null` without a server asked.
    #[serde(default)]
    pub server: Option<ServerFigures>,
}

/// First runs, counted apart from a step's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstRuns {
    pub runs: usize,
    pub failed_runs: usize,
    pub total_time: Distribution,
}

/// Which side gave first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GaveFirst {
    LoadHost,
    Server,
    /// The step had neither the load host's CPU nor run times to tell by.
    Unknown,
}

/// Who gave first, and the figures that say so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub gave_first: GaveFirst,
    /// The load host's CPU busy at the step (0 to 1).
    pub host_cpu_busy: Option<f64>,
    /// The CPUs that figure counted (`--load-host-cpus`); `null`: every CPU.
    #[serde(default)]
    pub host_cpus: Option<String>,
    /// The median of the runs' own time and of catalog retrieval at the step, as a
    /// multiple of the lightest step within bounds.
    pub agent_time_growth: Option<f64>,
    pub retrieval_growth: Option<f64>,
    /// For people: why.
    pub reason: String,
}

/// The least, the middle (nearest-rank median) and the greatest of a figure over the
/// repeats that had it; all `null` when none had it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: Option<f64>,
    pub median: Option<f64>,
    pub max: Option<f64>,
}

/// The spread of a level's figures over its repeated windows, each window judged on its
/// own runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatSpread {
    /// The windows the level held.
    pub repeats: usize,
    pub runs_per_minute: Spread,
    pub throughput_percent: Spread,
    pub error_percent: Spread,
    /// The p50 of each window's run times, seconds.
    pub p50: Spread,
    /// The slow end of each window's run times: its p95 where it had enough runs, else
    /// its max (a window has fewer runs than the level).
    pub tail: Spread,
    pub jruby_wait_ms: Spread,
    pub host_cpu_busy: Spread,
}

/// The law's parameters, fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Runs a minute of one clone alone.
    pub lambda: f64,
    /// Contention (0 to 1).
    pub sigma: f64,
    /// Crosstalk (0 or more).
    pub kappa: f64,
    /// The clones at which throughput peaks, `√((1 − σ)/κ)`; `null` when κ is 0 or σ
    /// at least 1 (no peak: throughput levels off or never stops rising).
    pub peak_clones: Option<f64>,
    /// The throughput the law gives at the peak, runs a minute.
    pub peak_runs_per_minute: Option<f64>,
    /// Each step's point, the law's value there and the residual (measured − fitted).
    pub points: Vec<UslPoint>,
    /// The root mean square of the residuals, runs a minute.
    pub rms_residual: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslPoint {
    pub clones: usize,
    pub runs_per_minute: f64,
    pub fitted: f64,
    pub residual: f64,
}

/// The run times of a step's runs and first runs, seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunTimes {
    /// Every time of the step is here (else an even sample of at most
    /// `ramp::run_times::MAX_RUN_TIMES`).
    pub complete: bool,
    /// Each run as `[total, catalog retrieval]` (the retrieval `null` when the run's
    /// summary had none).
    pub runs: Vec<(f64, Option<f64>)>,
    pub first_runs: Vec<f64>,
}

impl Default for RunTimes {
    /// None kept, as in a baseline written before they were; such a step cannot merge.
    fn default() -> Self {
        RunTimes {
            complete: false,
            runs: Vec::new(),
            first_runs: Vec::new(),
        }
    }
}
