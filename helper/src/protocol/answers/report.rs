//! Answered by `report`: every clone's last run, the fleet's figures and their
//! distributions, and with `--server`/`--puppetdb` the server's and PuppetDB's views (and
//! what the load hosts' clones claimed there that is not trusted).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::kinds::wire_kinds;

/// `report`: every clone's last run, the fleet's figures and, with `--server`, the server's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// When the report was made, seconds since the epoch, and the same as RFC 3339.
    pub now: u64,
    pub generated_at: String,
    /// The agents' run interval the report judges silence by (`--interval`), seconds.
    pub interval: u64,
    /// Whether the clones' `state` comes from systemd; when systemd could not be asked,
    /// `false`, every `state` is `unknown` and `systemd_error` says why.
    pub states_known: bool,
    pub systemd_error: Option<String>,
    pub clones: Vec<CloneReport>,
    pub fleet: FleetReport,
    /// `null` without `--server`.
    pub server: Option<ServerView>,
    /// `null` without `--puppetdb`.
    pub puppetdb: Option<PuppetdbView>,
    /// The clones' runs grouped by what their twins stand in for (`--group-by`); left
    /// out without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<ReportGroups>,
}

/// What `report --format prometheus --output FILE` answers: the textfile it put in place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextfileWritten {
    /// The textfile, as given.
    pub textfile: String,
    pub bytes: usize,
}

/// The clones' runs by one value of their twins (`pp_role`, an extension, `node` or
/// `environment`): which kind of node costs the server most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportGroups {
    /// What they are grouped by.
    pub by: String,
    /// One group a value, by value; clones that are no twins, or whose twin has no such
    /// value, are the group `-`.
    pub groups: Vec<ReportGroup>,
}

/// One group's runs: the fleet's figures of its clones alone, and their catalogs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportGroup {
    pub value: String,
    #[serde(flatten)]
    pub fleet: FleetReport,
    /// The catalogs' sizes (`resources` of the last runs that have one).
    pub resources: Distribution,
    /// The resources their last runs would have changed (noop), in all.
    pub would_change: u64,
}

/// A clone's state as the report gives it: `clone list`'s, or `unknown` without systemd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReportState {
    Running,
    Stopped,
    Unknown,
}

impl ReportState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportState::Running => "running",
            ReportState::Stopped => "stopped",
            ReportState::Unknown => "unknown",
        }
    }
}

/// A clone's last run, as the report shows it whether read from the clone's own agent
/// (`CloneReport`) or from PuppetDB (`PuppetdbCloneRun`); its fields sit in theirs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// `never` when there is no run to read.
    pub status: RunStatus,
    /// `status` is a check-in: a run that did not fail (`changed`, `would-change`,
    /// `unchanged`; [`RunStatus::is_success`]), so that scripts need not list them.
    /// Absent in timelines of an older helper: taken as false there.
    #[serde(default)]
    pub succeeded: bool,
    /// When the run ended, seconds since the epoch (the summary's `time.last_run`, the
    /// report's `end_time`).
    pub last_run: Option<u64>,
    /// Seconds from `last_run` to `now` (0 when the clock says the run is in the future).
    pub age: Option<u64>,
    /// The run's `time` figures `total` and `config_retrieval`, seconds.
    pub total_time: Option<f64>,
    pub config_retrieval_time: Option<f64>,
    /// The `resources` figure `failed`.
    pub failed_resources: Option<u64>,
    /// The `resources` figure `total`: the catalog's size, in resources.
    pub resources: Option<u64>,
    pub puppet_version: Option<String>,
    pub config_version: Option<String>,
    /// Its last run is more than `silent_after` seconds old (see `fleet.silent`).
    pub silent: bool,
    /// In a noop run: the resources out of sync, which a real run would change (`null`
    /// when the run was no noop run with changes pending).
    pub would_change: Option<u64>,
}

impl RunReport {
    /// No run to read: status `never`, no figures, not silent.
    pub fn never() -> RunReport {
        RunReport {
            status: RunStatus::Never,
            succeeded: false,
            last_run: None,
            age: None,
            total_time: None,
            config_retrieval_time: None,
            failed_resources: None,
            resources: None,
            puppet_version: None,
            config_version: None,
            silent: false,
            would_change: None,
        }
    }
}

/// One clone in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloneReport {
    pub name: String,
    pub base: String,
    pub state: ReportState,
    pub mounted: bool,
    #[serde(flatten)]
    pub run: RunReport,
    /// The summary's path as the host sees it (`null` when there is none).
    pub summary: Option<String>,
    /// Why the summary could not be read (status `unreadable`).
    pub error: Option<String>,
    /// Why the last run failed (status `failed`): the first error messages of the agent's
    /// `last_run_report.yaml`, one per line (e.g. "... (Connection refused ...)"); `null`
    /// when the run did not fail or the report logged no error.
    pub failure: Option<String>,
    /// Why the last run counts as failed, by kind, in this order (empty when it did not
    /// fail). A run the summary calls good is failed when its report shows the server
    /// failing it: `cached-catalog`, `server-error`, `timeout`, `connection`.
    #[serde(default)]
    pub failure_kinds: Vec<FailureKind>,
    /// What became of the agent's `last_run_report.yaml` for that run (`null` without a
    /// readable summary).
    #[serde(default)]
    pub run_report: Option<RunReportFile>,
}

wire_kinds! {
    /// Why a run counts as failed.
    pub enum FailureKind {
        /// The agent applied its cached catalog because it could not get a new one
        /// (`cached_catalog_status: on_failure`): Puppet calls the run a success.
        CachedCatalog => "cached-catalog",
        /// The server answered a request with a 5xx (503: out of JRubies, a full queue; 500:
        /// a catalog that does not compile).
        ServerError => "server-error",
        /// A request or the run ran out of time.
        Timeout => "timeout",
        /// The server could not be reached (refused, reset, not resolved, TLS).
        Connection => "connection",
        /// Resources failed to apply: the catalog's doing, not the server's.
        Resources => "resources",
        /// Failed for none of the reasons above that the agent's files tell.
        Other => "other",
    }
}

/// What became of a clone's `last_run_report.yaml` for its last run. The agent writes it
/// after the summary, once it has sent it to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunReportFile {
    /// The report of the run the summary is of was read.
    Read,
    /// The report there is an earlier run's: the agent has not written this run's yet
    /// (it is sending it to the server, or could not).
    EarlierRun,
    /// There is none (an agent with `report = false` writes none).
    Missing,
    /// It is there but cannot be read, or is no report Puppet wrote (`failure` says why
    /// when the run failed).
    Unreadable,
    /// It changed, and its turn to be read comes in a later sample.
    NotReadYet,
}

/// The fleet's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    pub clones: usize,
    /// Every status, with 0 for those no clone has.
    pub by_status: BTreeMap<RunStatus, usize>,
    pub total_time: Distribution,
    pub config_retrieval_time: Distribution,
    /// Clones whose last run is more than `silent_after` seconds old, or that have no run
    /// although their mount unit is older than that; by name.
    pub silent: Vec<String>,
    /// `2 × interval`.
    pub silent_after: u64,
}

/// The fewest values a p95 is taken over. A nearest-rank p95 of fewer than 20 values is
/// their maximum, so below this a distribution gives no p95 and its [`Tail`] says "max of
/// n" instead of passing the maximum off as a percentile.
pub const P95_MIN_VALUES: usize = 20;

/// p50, p95 and max of one figure over the values that have it (the clones' last runs,
/// the runs of a sample or of a ramp's step).
///
/// Read back from a file, the p95 rule is applied again: a p95 over fewer than
/// [`P95_MIN_VALUES`] values written by an older helper is read as none, and the tail is
/// taken from the figures, not from what the file says it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "DistributionFields")]
pub struct Distribution {
    /// How many values the figures are taken over.
    pub count: usize,
    pub p50: Option<f64>,
    /// `null` with fewer than [`P95_MIN_VALUES`] values.
    pub p95: Option<f64>,
    pub max: Option<f64>,
    /// The slow end: the p95 where there is one, else the max of the values; `null`
    /// without values.
    pub tail: Option<Tail>,
}

/// The slow end of a distribution, and which figure it is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tail {
    pub of: TailOf,
    pub value: f64,
}

/// Which figure a [`Tail`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TailOf {
    /// The 95th percentile (at least [`P95_MIN_VALUES`] values).
    P95,
    /// The maximum, of fewer values than a p95 needs.
    Max,
}

impl Distribution {
    /// The figures as given, with the p95 rule applied: no p95 below [`P95_MIN_VALUES`]
    /// values, and the tail that follows.
    pub fn from_figures(
        count: usize,
        p50: Option<f64>,
        p95: Option<f64>,
        max: Option<f64>,
    ) -> Self {
        let p95 = p95.filter(|_| count >= P95_MIN_VALUES);
        let tail = match (p95, max) {
            (Some(value), _) => Some(Tail {
                of: TailOf::P95,
                value,
            }),
            (None, Some(value)) => Some(Tail {
                of: TailOf::Max,
                value,
            }),
            (None, None) => None,
        };
        Distribution {
            count,
            p50,
            p95,
            max,
            tail,
        }
    }

    /// The tail's value.
    pub fn tail_value(&self) -> Option<f64> {
        self.tail.map(|t| t.value)
    }

    /// What the tail is, for people: `p95`, or `max of 12` when there are too few values.
    pub fn tail_name(&self) -> String {
        match self.tail.map(|t| t.of) {
            Some(TailOf::Max) => format!("max of {}", self.count),
            _ => "p95".to_owned(),
        }
    }

    /// The p95 as a table cell: the value as `format` writes it, `max(12)` when there are
    /// too few values for one (the max is beside it), `-` without values.
    pub fn p95_cell(&self, format: impl Fn(f64) -> String) -> String {
        match (self.p95, self.count) {
            (Some(v), _) => format(v),
            (None, 0) => "-".to_owned(),
            (None, n) => format!("max({n})"),
        }
    }
}

impl Default for Distribution {
    /// The distribution of no values.
    fn default() -> Self {
        Distribution::from_figures(0, None, None, None)
    }
}

/// A distribution as a file holds it, before the p95 rule is applied again.
#[derive(Deserialize)]
struct DistributionFields {
    count: usize,
    p50: Option<f64>,
    p95: Option<f64>,
    max: Option<f64>,
}

impl From<DistributionFields> for Distribution {
    fn from(f: DistributionFields) -> Self {
        Distribution::from_figures(f.count, f.p50, f.p95, f.max)
    }
}

/// How a clone's last run went, as the report classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Resources or events failed, or the run never applied a catalog (no server, no
    /// catalog, a catalog that did not convert).
    Failed,
    /// The catalog was applied and changed something.
    Changed,
    /// A noop run (`noop = true`, `--noop`): the catalog was evaluated and resources are
    /// out of sync that a real run would change (`would_change` says how many). Puppet
    /// itself calls such a run `unchanged`.
    WouldChange,
    /// The catalog was applied and nothing needed changing.
    Unchanged,
    /// No summary: the agent has not finished a run in this clone.
    Never,
    /// A summary is there but cannot be read or parsed (the clone's `error` says why).
    Unreadable,
}

/// The server section of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerView {
    /// The URL that was asked.
    pub url: String,
    /// Whether an answer came and parsed as JSON (an HTTP 503 with a JSON body counts:
    /// it is how the server says a service is not running).
    pub ok: bool,
    /// Why not, when `ok` is false.
    pub error: Option<String>,
    /// The CA certificate the server was verified against.
    pub ca_cert: Option<String>,
    pub http_status: Option<u16>,
    /// The server's version: `service_version` of its `master` service.
    #[serde(default)]
    pub version: Option<String>,
    /// The services' `state` values, by service name.
    pub states: std::collections::BTreeMap<String, String>,
    pub jruby: Option<JrubyMetrics>,
    /// The catalog compile, from the profiler (`catalog-metrics`, metric `compile`).
    pub compile: Option<Timing>,
    /// Catalog requests as the HTTP layer saw them (route `puppet-v3-catalog-/*/`).
    pub catalog_requests: Option<Timing>,
    /// All requests (route `total`).
    pub all_requests: Option<Timing>,
    /// Requests per endpoint (`catalog`, `node`, `file_metadatas`, `file_content`,
    /// `report`, ...; see `report/endpoints.rs`) since the server started, with its recent
    /// mean time; only endpoints with requests. `null` in timelines of an older helper.
    #[serde(default)]
    pub endpoints: Option<std::collections::BTreeMap<String, Timing>>,
    /// The server's JVM, from `status-service`.
    #[serde(default)]
    pub jvm: Option<JvmMetrics>,
    /// The answer as the server gave it.
    pub raw: Option<Value>,
}

/// A figure as the server gave it (an integer stays an integer).
pub type Figure = serde_json::Number;

/// The JRuby pool, from `jruby-metrics`. Times in milliseconds, as the server gives them.
/// The counts are since the server started; the averages are the means of the server's
/// own decaying samples (Dropwizard's default reservoir, weighted to about the last five
/// minutes), neither since its start nor of any one window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JrubyMetrics {
    pub num_jrubies: Option<Figure>,
    pub num_free_jrubies: Option<Figure>,
    pub borrow_count: Option<Figure>,
    pub borrow_timeout_count: Option<Figure>,
    pub average_borrow_time_ms: Option<Figure>,
    pub average_wait_time_ms: Option<Figure>,
    pub average_free_jrubies: Option<Figure>,
    pub average_requested_jrubies: Option<Figure>,
    /// Requests for an instance, and instances returned.
    #[serde(default)]
    pub requested_count: Option<Figure>,
    #[serde(default)]
    pub return_count: Option<Figure>,
    #[serde(default)]
    pub borrow_retry_count: Option<Figure>,
    /// Requests refused with a 503 because `max-queued-requests` were already waiting.
    #[serde(default)]
    pub queue_limit_hit_count: Option<Figure>,
    /// Requests waiting for an instance as the server answered (its `requested-instances`).
    #[serde(default)]
    pub queued: Option<Figure>,
}

/// A count and mean time (milliseconds) of one kind of request: the count since the
/// server started, the mean of its decaying sample (about the last five minutes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub count: Option<Figure>,
    pub mean_ms: Option<Figure>,
}

/// The server's JVM, from `status-service`'s `jvm-metrics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JvmMetrics {
    pub heap_used_bytes: Option<Figure>,
    pub heap_committed_bytes: Option<Figure>,
    pub heap_max_bytes: Option<Figure>,
    /// Collections and the milliseconds they took since the JVM started, every collector
    /// together.
    pub gc_count: Option<Figure>,
    pub gc_time_ms: Option<Figure>,
    /// The JVM's CPU use, and its collectors', over the status service's own last few
    /// seconds (5 by default), percent of the host's CPUs.
    pub cpu_percent: Option<Figure>,
    pub gc_cpu_percent: Option<Figure>,
    /// When the JVM started (ms since the epoch), and for how long it has run: a start time
    /// that moves says the server restarted.
    pub start_time_ms: Option<Figure>,
    pub up_time_ms: Option<Figure>,
    pub threads: Option<Figure>,
}

/// The PuppetDB section of the report: its command queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PuppetdbView {
    /// PuppetDB's base URL, as asked.
    pub url: String,
    /// Whether its status answered with JSON.
    pub ok: bool,
    /// Why not, when `ok` is false.
    pub error: Option<String>,
    /// The CA certificate PuppetDB was verified against.
    pub ca_cert: Option<String>,
    /// The client certificate presented (PuppetDB's TLS port wants one the CA signed).
    pub client_cert: Option<String>,
    /// PuppetDB's version and its service state (`running`, `starting`, ...).
    pub version: Option<String>,
    pub state: Option<String>,
    /// Commands (fact sets, catalogs, reports) received and not yet processed.
    pub queue_depth: Option<Figure>,
    pub commands: Option<CommandMetrics>,
    /// Why `commands` is missing when the status answered.
    pub metrics_error: Option<String>,
    /// Every load host's clones and their last runs, as PuppetDB holds them.
    pub fleet: Option<PuppetdbFleet>,
    /// Why `fleet` is missing when the status answered.
    pub fleet_error: Option<String>,
}

/// The fleet across load hosts: each host that reports a `clone_army` fact listing clones,
/// with the last run PuppetDB holds of each of those clones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PuppetdbFleet {
    /// Every host's clones together; `silent` names certnames (clone names repeat across
    /// hosts).
    pub fleet: FleetReport,
    pub hosts: Vec<LoadHostRuns>,
    /// What nodes' facts claim that is not trusted, so not asked for: a clone that
    /// publishes a fleet, a certname claimed twice, a malformed entry.
    #[serde(default)]
    pub untrusted: Vec<UntrustedClaim>,
}

/// A claim of a node's `clone_army` fact that the report does not trust.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntrustedClaim {
    /// The node whose fact makes the claim.
    pub node: String,
    /// The clone it names; `null` when the whole fact is refused, or the name is malformed.
    pub clone: Option<String>,
    /// The certname it gives that clone, when that is a host name.
    pub certname: Option<String>,
    pub problem: UntrustedProblem,
    pub message: String,
}

/// Why a claim is not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UntrustedProblem {
    /// The node is itself a clone (`<clone>.<host certname>` of a load host, or a
    /// certname a load host declares): none of the clones its fact lists is trusted.
    CloneAsLoadHost,
    /// Another load host's fact claims the same certname, and it is not this host's
    /// `<clone>.<host certname>`.
    CertnameClaimedTwice,
    /// The entry cannot be a clone: a name or a certname none a clone can have, the host's
    /// own certname, or a second fact of one node in PuppetDB's answer.
    Malformed,
}

impl UntrustedProblem {
    pub const ALL: [UntrustedProblem; 3] = [
        UntrustedProblem::CloneAsLoadHost,
        UntrustedProblem::CertnameClaimedTwice,
        UntrustedProblem::Malformed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UntrustedProblem::CloneAsLoadHost => "clone-as-load-host",
            UntrustedProblem::CertnameClaimedTwice => "certname-claimed-twice",
            UntrustedProblem::Malformed => "malformed",
        }
    }
}

/// One load host's clones in PuppetDB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadHostRuns {
    /// The load host's certname.
    pub host: String,
    pub fleet: FleetReport,
    pub clones: Vec<PuppetdbCloneRun>,
    /// Why some or all of its clones' runs are missing (its fact lists no certnames, the
    /// reports query failed or was not made by the deadline; what is not trusted is in
    /// [`PuppetdbFleet::untrusted`]).
    pub error: Option<String>,
}

/// A clone's last run as PuppetDB holds it (`latest_report? = true`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PuppetdbCloneRun {
    pub name: String,
    pub certname: String,
    /// Status `never` when PuppetDB holds no report of it; `unreadable` when its report's
    /// status is none Puppet writes (`error` says which).
    #[serde(flatten)]
    pub run: RunReport,
    /// Whether the run was a `--noop` run.
    pub noop: Option<bool>,
    pub error: Option<String>,
}

/// Command processing since PuppetDB started. Times in milliseconds, as PuppetDB gives them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandMetrics {
    pub processed: Option<Figure>,
    /// Commands processed per second, averaged over the last minute.
    pub processed_per_second: Option<Figure>,
    pub processing_mean_ms: Option<Figure>,
    pub processing_p95_ms: Option<Figure>,
    pub processing_max_ms: Option<Figure>,
}
