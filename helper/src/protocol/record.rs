//! The recorder's timeline: one [`Sample`] a line, and its parts: the fleet, its runs,
//! the host, what the server, PuppetDB and the access log did between two samples
//! ([`ServerWindow`], [`PuppetdbWindow`], [`AccessWindow`]), and those windows added up
//! over a ramp's step ([`ServerFigures`]). The recorder (`record/`) takes the samples and
//! writes the lines; `ramp/` and the page read them back. [`RunSummary`] and
//! [`PageWritten`] are what `report --from` answers of a recording, [`Recorded`] what
//! `record` answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::answers::{
    Distribution, FailureKind, JrubyMetrics, PuppetdbView, RunStatus, ServerView,
};
use crate::protocol::latency::Latencies;

/// The timeline's format version, the first field of every line.
pub const TIMELINE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub timeline: u32,
    /// Seconds since the epoch, and the same as RFC 3339.
    pub t: u64,
    pub at: String,
    /// Seconds this sample covers (since the previous one, or the recorder's period).
    pub period: u64,
    pub fleet: FleetSample,
    pub runs: RunsSample,
    pub server: Option<ServerView>,
    pub puppetdb: Option<PuppetdbView>,
    pub host: HostSample,
    /// The versions this sample saw (agent versions of the clones' last runs, server,
    /// PuppetDB).
    #[serde(default)]
    pub versions: Option<Versions>,
    /// How the clones run; taken when the clones change and at least every five minutes
    /// (`null` in the samples between).
    #[serde(default)]
    pub shape: Option<FleetShape>,
    /// The step of a stepped load (`ramp run`) this sample was taken in; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepMark>,
    /// What the server did since the last sample that had its answer: its counts'
    /// differences (`record/server_window.rs`); absent without two answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_window: Option<ServerWindow>,
    /// What PuppetDB did since the last sample that had its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub puppetdb_window: Option<PuppetdbWindow>,
    /// The server's access log since the sample before (`--access-log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_log: Option<AccessWindow>,
    /// This sample's runs by their clones' group (`record --group-by`); absent in a
    /// recording without groups and in timelines of an older helper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<GroupsSample>,
}

impl Sample {
    /// The server's JRuby pool as this sample saw it, when the server was asked and said.
    pub fn jruby(&self) -> Option<&JrubyMetrics> {
        self.server.as_ref()?.jruby.as_ref()
    }
}

/// Which step of a ramp a sample belongs to, and the clones that step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepMark {
    pub step: u32,
    pub clones: usize,
}

/// The fleet as it stands: clones by unit state, by their last run's status, silent ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetSample {
    pub clones: usize,
    pub running: usize,
    pub stopped: usize,
    /// Clones whose state systemd could not be asked.
    pub unknown: usize,
    pub silent: usize,
    pub by_status: BTreeMap<RunStatus, usize>,
}

/// The runs that finished since the previous sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunsSample {
    pub count: usize,
    pub by_status: BTreeMap<RunStatus, usize>,
    pub total_time: Distribution,
    pub config_retrieval_time: Distribution,
    /// The failed runs by why they failed; a run with two kinds (a cached catalog after a
    /// 503) counts under each. Empty in timelines of an older helper.
    #[serde(default)]
    pub failed_by_kind: BTreeMap<FailureKind, usize>,
}

/// A sample's runs by the group of their clones: the value of `by` in each clone's twin
/// record (`-` for a clone without one), as `report --group-by` groups them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupsSample {
    /// The key, as the twin records hold it (`pp_role`, `node`, `environment`, ...).
    pub by: String,
    /// Only the groups that had runs in this sample.
    pub groups: BTreeMap<String, GroupRuns>,
}

/// One group's runs that finished in a sample.
///
/// The times are there twice: as the sample's own figures ([`Distribution`], for a
/// reader of one line), and as histograms in milliseconds ([`Latencies`]) that add up
/// exactly over any number of samples, so that a whole recording's p50 and p95 per
/// group are percentiles of its runs, not of the samples' figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupRuns {
    pub runs: usize,
    /// Runs whose status is `failed`.
    pub failed: usize,
    pub total_time: Distribution,
    pub config_retrieval_time: Distribution,
    pub total_time_ms: Latencies,
    pub config_retrieval_ms: Latencies,
    /// The runs whose report gave their catalog's size, by that size in resources.
    pub resources: BTreeMap<u64, u64>,
    /// The resources the group's noop runs would have changed, in all.
    pub would_change: u64,
}

/// The host's figures in a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    /// The 1-minute load average.
    pub load1: Option<f64>,
    pub mem_total_bytes: Option<u64>,
    pub mem_available_bytes: Option<u64>,
    /// The share of all cores busy since the previous sample (0 to 1); `null` in the first.
    pub cpu_busy: Option<f64>,
    /// Each CPU's busy share since the previous sample, by its number (absent in the
    /// first sample and in timelines written before it was kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus_busy: Vec<(u32, f64)>,
}

/// The clones' load shape, counted: how many clones have each value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetShape {
    pub clones: usize,
    /// Clones by run mode (`daemon`, `timer`, `manual`, `apply`; `none` for a clone
    /// without clone-army's run files).
    pub run_modes: BTreeMap<String, usize>,
    /// Clones by run interval, seconds (clones without a schedule are left out).
    pub runintervals: BTreeMap<u64, usize>,
    /// Clones whose runs are phased (`phase_count` above 1).
    pub phased: usize,
    /// Clones whose agent runs in noop.
    pub agent_noop: usize,
}

/// The versions a sample saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Versions {
    /// Clones by the Puppet version of their last run.
    pub agent: BTreeMap<String, usize>,
    pub server: Option<String>,
    pub puppetdb: Option<String>,
}

/// The server between two answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerWindow {
    /// Seconds between the two answers' samples.
    pub seconds: u64,
    /// The server restarted in between: the counts are since its restart.
    pub restarted: bool,
    /// Requests in the window, all of them and per endpoint (only those with requests),
    /// with the endpoint's recent mean (the server's decaying sample) at the window's end.
    pub requests: Option<u64>,
    pub endpoints: BTreeMap<String, EndpointWindow>,
    pub compiles: Option<u64>,
    pub jruby: Option<JrubyWindow>,
    pub jvm: Option<JvmWindow>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointWindow {
    pub requests: u64,
    pub recent_mean_ms: Option<f64>,
}

/// The JRuby pool in the window: counts, then where it stood at the window's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JrubyWindow {
    pub borrows: Option<u64>,
    /// Requests that waited longer than `borrow-timeout` for an instance (a 503).
    pub borrow_timeouts: Option<u64>,
    pub borrow_retries: Option<u64>,
    /// Requests refused at once with a 503: `max-queued-requests` were already waiting.
    pub queue_limit_hits: Option<u64>,
    pub instances: Option<f64>,
    pub free: Option<f64>,
    /// Requests waiting for an instance.
    pub queued: Option<f64>,
    pub recent_borrow_ms: Option<f64>,
    pub recent_wait_ms: Option<f64>,
}

/// The server's JVM in the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JvmWindow {
    /// Milliseconds spent collecting garbage in the window, and its share of the window.
    pub gc_ms: Option<u64>,
    pub gc_share: Option<f64>,
    pub heap_used_bytes: Option<u64>,
    pub heap_max_bytes: Option<u64>,
    /// The JVM's share of the host's CPUs over its own last few seconds, percent.
    pub cpu_percent: Option<f64>,
}

/// PuppetDB between two answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PuppetdbWindow {
    pub seconds: u64,
    /// Its processed count went back: PuppetDB restarted.
    pub restarted: bool,
    /// Commands processed in the window.
    pub processed: Option<u64>,
    /// Commands waiting at the window's end.
    pub queue_depth: Option<f64>,
    /// Its recent mean command processing time (a decaying sample), ms.
    pub recent_processing_ms: Option<f64>,
}

/// What the server did over a ramp's step: what the step's verdict is held to beside its
/// runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerFigures {
    /// Seconds the server's windows covered.
    pub seconds: u64,
    /// The server restarted during the step.
    pub restarted: bool,
    /// Per endpoint: requests (from the status API), and from the access log when it was
    /// read, their 5xx and times.
    pub endpoints: BTreeMap<String, EndpointFigures>,
    pub borrow_timeouts: Option<u64>,
    pub queue_limit_hits: Option<u64>,
    /// The most requests seen waiting for a JRuby at a sample.
    pub jruby_queued_max: Option<f64>,
    /// Garbage collection's share of the step's time.
    pub gc_share: Option<f64>,
    pub heap_used_max_bytes: Option<u64>,
    /// The mean of the JVM's CPU share the samples saw, percent of the host's CPUs.
    pub cpu_percent: Option<f64>,
    /// PuppetDB's deepest command queue at a sample, and the commands it processed.
    pub puppetdb_queue_max: Option<f64>,
    pub puppetdb_processed: Option<u64>,
    /// Requests the access log gave, and its lines skipped (of another shape).
    pub access_log_requests: u64,
    pub access_log_skipped: u64,
}

/// One endpoint over a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointFigures {
    /// Requests the status API counted.
    pub requests: Option<u64>,
    /// The server's recent mean at the step's end, ms.
    pub recent_mean_ms: Option<f64>,
    /// From the access log: its requests, their 5xx, and their times (ms).
    pub logged: Option<u64>,
    pub server_errors: Option<u64>,
    pub mean_ms: Option<f64>,
    pub p50_ms: Option<u64>,
    /// `None` with fewer than [`P95_MIN_VALUES`](super::answers::P95_MIN_VALUES) requests
    /// logged: their `max_ms` is the tail.
    pub p95_ms: Option<u64>,
    pub max_ms: Option<u64>,
}

/// What the access log said of one sample's period.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AccessWindow {
    /// Requests read (lines of the pattern).
    pub requests: u64,
    /// Lines skipped: not of the pattern, or too long.
    pub skipped: u64,
    /// Per endpoint.
    pub endpoints: BTreeMap<String, RequestTimes>,
    /// Bytes written to the log that this sample left for the next (over its read limit).
    #[serde(default)]
    pub behind_bytes: u64,
    /// The log was rotated away or truncated since the sample before.
    #[serde(default)]
    pub rotated: bool,
    /// Why the log could not be read (the figures above are then what was read before).
    #[serde(default)]
    pub error: Option<String>,
}

/// One endpoint's requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestTimes {
    pub requests: u64,
    /// Answered with a 5xx (503: refused for lack of a JRuby or a full queue).
    pub server_errors: u64,
    /// Their times, ms ([`Latencies`]).
    pub times: Latencies,
}

/// The run at a glance: the same figures head the page and make `--format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub samples: usize,
    /// Lines of the timeline that were not samples (skipped).
    pub skipped_lines: usize,
    pub first: Option<String>,
    pub last: Option<String>,
    /// Seconds from the first sample to the last.
    pub seconds: u64,
    /// Runs that finished while recording, by status.
    pub runs: BTreeMap<RunStatus, usize>,
    /// The highest runs per minute in one sample.
    pub peak_runs_per_minute: Option<f64>,
    /// The longest run and catalog retrieval seen, seconds.
    pub max_run_time: Option<f64>,
    pub max_config_retrieval_time: Option<f64>,
    /// The fleet at the last sample.
    pub clones: Option<usize>,
    pub running: Option<usize>,
    pub silent: Option<usize>,
    /// The most clones seen at once.
    pub peak_clones: Option<usize>,
    pub peak_puppetdb_queue_depth: Option<f64>,
    pub peak_cpu_busy: Option<f64>,
    /// How the fleet ran, as last seen (`null` when no sample has it).
    #[serde(default)]
    pub shape: Option<FleetShape>,
    /// The versions the last sample saw.
    #[serde(default)]
    pub versions: Option<Versions>,
    /// A stepped load's steps, in the order they began (none in other recordings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepMark>,
    /// The failed runs by why they failed (a run of two kinds counts under each).
    #[serde(default)]
    pub failed_by_kind: BTreeMap<FailureKind, usize>,
    /// What the server and PuppetDB did over the whole recording: their counts'
    /// differences and the access log's request times per endpoint; `null` when no two
    /// samples had the server's answer and no access log was read.
    #[serde(default)]
    pub server: Option<ServerFigures>,
}

/// What `report --from --format html --output PAGE` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageWritten {
    /// The page, as given.
    pub page: String,
    pub bytes: usize,
    pub samples: usize,
    pub skipped_lines: usize,
}

/// What `record` answers when it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub output: String,
    pub samples: u64,
    pub started_at: String,
    pub ended_at: String,
    pub rotations: u32,
    /// Why it ended: `duration`, `samples` or `signal`.
    pub ended_by: String,
}
