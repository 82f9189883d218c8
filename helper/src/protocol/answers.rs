//! The JSON envelope every invocation writes to stdout, and the result types of each verb.
//!
//! All types derive `Deserialize` as well as `Serialize`, so tests (and any Rust caller)
//! decode the answer back into these structs instead of matching strings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use serde_json::Value;

use crate::protocol::error::{Error, ErrorKind};
use crate::protocol::kinds::wire_kinds;

/// Bumped when a change to the envelope or a result is not backwards compatible.
pub const PROTOCOL_VERSION: u32 = 2;

/// The one document written to stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub protocol: u32,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// What the helper warned about on the way (also said on stderr), for callers that
    /// do not show stderr.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl<T> Envelope<T> {
    pub fn success(result: T) -> Self {
        Envelope {
            protocol: PROTOCOL_VERSION,
            ok: true,
            result: Some(result),
            error: None,
            warnings: Vec::new(),
        }
    }

    /// The answer with the invocation's warnings ([`super::warnings::take`]).
    pub fn with_warnings(self, warnings: Vec<String>) -> Self {
        Envelope { warnings, ..self }
    }
}

impl Envelope<serde_json::Value> {
    pub fn failure(error: &Error) -> Self {
        Envelope {
            protocol: PROTOCOL_VERSION,
            ok: false,
            result: None,
            error: Some(ErrorBody::from(error)),
            warnings: Vec::new(),
        }
    }
}

/// The `error` object of a failed invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default)]
    pub causes: Vec<String>,
}

impl From<&Error> for ErrorBody {
    fn from(error: &Error) -> Self {
        ErrorBody {
            kind: error.kind(),
            message: error.to_string(),
            field: error.field().map(str::to_owned),
            causes: error.causes(),
        }
    }
}

/// `base create`: the base as `base list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseCreated {
    pub base: BaseInfo,
    pub changed: bool,
}

/// `base list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseList {
    pub bases: Vec<BaseInfo>,
    /// Stale state around the bases: overlay mounts no unit owns (they keep a base busy),
    /// clones whose base is gone.
    #[serde(default)]
    pub problems: Vec<Problem>,
}

/// One base as `base list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseInfo {
    pub name: String,
    pub path: String,
    pub os: String,
    pub release: String,
    pub puppet_source: String,
    pub puppet_confdir: String,
    /// Where the clones' agents write their run summaries (`last_run_summary.yaml`).
    #[serde(default)]
    pub puppet_publicdir: String,
    pub created_at: String,
    pub clones: Vec<String>,
}

/// `base remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseRemoved {
    pub name: String,
    pub changed: bool,
}

/// `clone create` and `clone configure`: the clone as `clone list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneChanged {
    pub clone: CloneInfo,
    pub changed: bool,
}

/// `clone create`: the clone, and whether it has a root password and a CSR challenge
/// password (never their values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneCreated {
    pub clone: CloneInfo,
    pub changed: bool,
    /// root has a password hash in the clone's /etc/shadow (for `machinectl login`).
    #[serde(default)]
    pub root_password: bool,
    /// the clone's csr_attributes.yaml carries a challengePassword (policy autosigning).
    #[serde(default)]
    pub challenge_password: bool,
    /// The kernel limits for a large fleet, as `clone-army host limits` reports them.
    #[serde(default)]
    pub host_limits: Vec<LimitStatus>,
    /// The system bus's connection limits (`null` from a helper before they existed).
    #[serde(default)]
    pub bus_limits: Option<BusLimits>,
}

/// `clone create-many`: each clone as `clone create` answers it, in the order asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClonesCreated {
    pub clones: Vec<CloneCreated>,
}

/// `clone list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneList {
    pub clones: Vec<CloneInfo>,
    /// Stale state that belongs to no listed clone (an overlay mount no unit owns).
    #[serde(default)]
    pub problems: Vec<Problem>,
}

/// Whether a clone's service is up, as the protocol reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CloneState {
    Running,
    Stopped,
}

impl CloneState {
    /// `running` for the ActiveStates in which the service is (or is becoming) up.
    pub fn from_active_state(active_state: &str) -> Self {
        match active_state {
            "active" | "activating" | "reloading" => CloneState::Running,
            _ => CloneState::Stopped,
        }
    }
}

/// One clone as `clone list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneInfo {
    pub name: String,
    pub base: String,
    /// `null` when the clone's puppet.conf has no `server` (or cannot be read).
    pub server: Option<String>,
    /// The clone's `serverport`: `null` when its puppet.conf sets none (Puppet's default,
    /// 8140, holds) or sets one that is no port.
    #[serde(default)]
    pub server_port: Option<u16>,
    /// `null` when the clone's puppet.conf has no `certname` (or cannot be read).
    pub certname: Option<String>,
    pub state: CloneState,
    pub unit: String,
    pub mounted: bool,
    /// Stale state found on disk, each with the command that fixes it; empty when none.
    #[serde(default)]
    pub problems: Vec<Problem>,
    /// Run mode, limits and facts, read back from the files that set them.
    #[serde(flatten)]
    pub shape: CloneShape,
}

/// How a clone loads the server, as read back from the files that set it (the clone's
/// upper layer and its limits drop-in on the host).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneShape {
    /// `daemon`, `timer`, `manual` or `apply`; `null` when the clone has none of clone-army's run
    /// files (then runinterval, splay and the phase are `null` too; so they are in `manual`).
    pub run_mode: Option<RunMode>,
    pub runinterval: Option<u64>,
    pub splay: Option<u64>,
    pub phase_index: Option<u32>,
    pub phase_count: Option<u32>,
    /// How the phase index becomes the runs' offset in the interval; `null` as above, or
    /// when the timer names a rule this helper does not know.
    #[serde(default)]
    pub phasing: Option<Phasing>,
    /// `MemoryMax=` of the limits drop-in, as given (`512M`); `null` when unset.
    pub memory_max: Option<String>,
    /// `CPUQuota=`, e.g. `50%`; `null` when unset.
    pub cpu_quota: Option<String>,
    /// `TasksMax=`; `null` when unset (the template's 16384 applies).
    pub tasks_max: Option<u64>,
    /// Per-clone external facts; `{}` when none.
    #[serde(default)]
    pub facts: serde_json::Map<String, serde_json::Value>,
    /// Number of generated facts; 0 when none.
    #[serde(default)]
    pub generated_facts: u32,
    /// Share of generated facts that change each run; `null` when there are none.
    pub churn_percent: Option<u32>,
    /// The host directory bound at /srv/clone-army-apply (apply mode); `null` when none.
    #[serde(default)]
    pub apply_source: Option<String>,
    /// The agent runs in noop (`noop = true` in puppet.conf): catalogs are evaluated, the
    /// clone is not changed.
    #[serde(default)]
    pub agent_noop: bool,
}

/// Stale state (a crash's leftovers, a hand-removed directory), or a setting a clone is
/// given that is not one clone-army writes, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub kind: ProblemKind,
    pub message: String,
    /// The exact command line that fixes it, to run as root.
    pub fix: String,
}

wire_kinds! {
    /// What is stale or refused, as a [`Problem`]'s `kind` names it (PROTOCOL.md, "Problems"),
    /// in the order `clone-army schema` lists them.
    pub enum ProblemKind {
        /// The base directory the clone's mount unit names is gone.
        BaseMissing => "base-missing",
        /// The clone's upper dir is gone.
        UpperDirMissing => "upper-dir-missing",
        /// The upper dir is there, the work dir is not.
        WorkDirMissing => "work-dir-missing",
        /// A mount unit without its link into the fleet target: a create or remove killed half-way.
        Incomplete => "incomplete",
        /// A clone-army overlay that no mount unit owns.
        OrphanMount => "orphan-mount",
        /// A setting a clone is given that is not one clone-army writes.
        ConfigInvalid => "config-invalid",
    }
}

/// `clone start` and `clone stop`: the clones as `clone list` reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneNames {
    pub clones: Vec<CloneInfo>,
}

/// `clone remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClonesRemoved {
    pub removed: Vec<String>,
    pub changed: bool,
}

/// `clone check-apply-source`: the source the clone's settings bind, checked; `null`
/// when they bind none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplySourceChecked {
    pub clone: String,
    pub apply_source: Option<String>,
}

/// `ssl list`: the kept SSL directories (see README, "Certificates").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SslDirs {
    pub ssl_dirs: Vec<SslDir>,
}

/// One kept SSL directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SslDir {
    pub certname: String,
    pub path: String,
    /// The clone whose settings bind it; `null`: its clone was removed.
    pub clone: Option<String>,
}

/// `ssl forget`: the certnames whose kept SSL directory was removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SslForgotten {
    pub forgotten: Vec<String>,
    pub changed: bool,
}

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

/// Why a clone has no exit code: `not-running`, `spawn-failed`, `timeout` or `killed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecProblem {
    pub kind: String,
    pub message: String,
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
    /// fewer than [`P95_MIN_VALUES`] clones (the max is the slow end then).
    pub p50_seconds: Option<f64>,
    pub p95_seconds: Option<f64>,
    pub max_seconds: Option<f64>,
    /// From the start of the burst to the end of its last command.
    pub wall_seconds: f64,
    pub concurrency: usize,
    pub timeout_seconds: u64,
}

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

/// Why a run counts as failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The agent applied its cached catalog because it could not get a new one
    /// (`cached_catalog_status: on_failure`): Puppet calls the run a success.
    CachedCatalog,
    /// The server answered a request with a 5xx (503: out of JRubies, a full queue; 500:
    /// a catalog that does not compile).
    ServerError,
    /// A request or the run ran out of time.
    Timeout,
    /// The server could not be reached (refused, reset, not resolved, TLS).
    Connection,
    /// Resources failed to apply: the catalog's doing, not the server's.
    Resources,
    /// Failed for none of the reasons above that the agent's files tell.
    Other,
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

/// Writes the envelope, one line, to stdout.
pub fn print<T: Serialize>(envelope: &Envelope<T>) {
    use std::io::Write;
    let text = serde_json::to_string(envelope).unwrap_or_else(|e| {
        // Serializing our own plain structs cannot fail; if it ever does, still answer in JSON.
        format!(
            r#"{{"protocol":{PROTOCOL_VERSION},"ok":false,"error":{{"kind":"{}","message":{},"causes":[]}}}}"#,
            ErrorKind::Internal,
            serde_json::Value::String(e.to_string())
        )
    });
    let mut stdout = std::io::stdout().lock();
    // Nothing sensible is left to do when stdout itself is gone.
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

// --- answered by report (report/server.rs) --------------------

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

// --- answered by report (report/puppetdb.rs) --------------------

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

// --- answered by report (report/stats.rs) --------------------

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

// --- answered by report (report/summary.rs) --------------------

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

// --- answered by host (host/limits.rs) --------------------

/// One limit as the result reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitStatus {
    pub name: String,
    /// The running kernel's value before anything was done; `null` when unreadable.
    pub current: Option<u64>,
    pub wanted: u64,
    /// The running kernel holds at least `wanted` now (it already did, or was raised).
    pub applied: bool,
    /// About how many booted clones the current value holds, when it is below `wanted`.
    pub caps_clones: Option<u64>,
    /// Why it could not be read or raised.
    pub error: Option<String>,
}

/// The clones the host's memory holds, per run mode: the memory bound alone. The Puppet
/// side also bounds a fleet by CPU (run interval, cores, CPU-s a run), which needs the
/// class's interval and the host's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capacity {
    pub daemon: u64,
    pub timer: u64,
}

/// `clone-army host limits`: the limits and the capacity, read-only.
#[derive(Debug, Serialize, Deserialize)]
pub struct HostReport {
    pub limits: Vec<LimitStatus>,
    pub sysctl_file: String,
    /// Whether the sysctl.d file exists and was written by clone-army.
    pub sysctl_file_present: bool,
    /// The system bus's drop-in with its connection limits (written by the host layer's `bus` module).
    pub dbus_file: String,
    /// Whether it exists and was written by clone-army.
    pub dbus_file_present: bool,
    pub memory_total_bytes: Option<u64>,
    /// `null` when MemTotal could not be read.
    pub capacity: Option<Capacity>,
    pub memory_error: Option<String>,
}

// --- answered by host (host/bus.rs) --------------------

/// What `clone create` and `clone start` did about the bus limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusLimits {
    pub file: String,
    /// The drop-in holds clone-army's values now.
    pub applied: bool,
    /// It was written in this call.
    pub changed: bool,
    /// The bus was asked to reload its configuration in this call.
    pub reloaded: bool,
    /// Why the drop-in was not written or the bus not reloaded.
    pub error: Option<String>,
}

// --- answered by clone (clone/run_mode.rs) --------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RunMode {
    Daemon,
    Timer,
    Manual,
    Apply,
}

/// How a clone's phase index `I` (of `N`) becomes the offset of its runs in each
/// interval `T` (the arithmetic is `Phasing::offset` in clone/run_mode.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Phasing {
    /// `floor(T·vdc(I))`, vdc the base-2 van der Corput sequence (0, 1/2, 1/4, 3/4,
    /// 1/8, ...): whenever clones 0 to n-1 run, for any n, their runs are spread evenly.
    PrefixEven,
    /// `floor(I·T/N)`: perfectly even when all N clones run, bunched in the first n/N of
    /// the interval when only the first n do.
    FleetEven,
}

// --- answered by clone (clone/start.rs) --------------------

/// `clone start`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClonesStarted {
    /// In the order given, with their states after the wait.
    pub clones: Vec<CloneInfo>,
    /// The clones of each wave, in order (one wave without `--ramp-up`).
    pub waves: Vec<Vec<String>>,
    pub ramp_up_seconds: u64,
    pub host_limits: Vec<LimitStatus>,
    /// The system bus's connection limits (`null` from a helper before they existed).
    #[serde(default)]
    pub bus_limits: Option<BusLimits>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use std::fmt::Debug;

    fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug + Clone>(value: T) {
        let envelope = Envelope::success(value.clone());
        let text = serde_json::to_string(&envelope).unwrap();
        let back: Envelope<T> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, envelope);
        assert_eq!(back.protocol, PROTOCOL_VERSION);
        assert!(back.ok);
        assert_eq!(back.result, Some(value));
    }

    #[test]
    fn every_result_type_round_trips() {
        let base = BaseInfo {
            name: "debian-12".into(),
            path: "/var/lib/puppet-clone-army/debian-12".into(),
            os: "debian".into(),
            release: "bookworm".into(),
            puppet_source: "distro".into(),
            puppet_confdir: "/etc/puppet".into(),
            puppet_publicdir: "/var/cache/puppet/public".into(),
            created_at: "2026-11-22T03:30:00Z".into(),
            clones: vec!["clone1".into()],
        };
        round_trip(BaseCreated {
            base: base.clone(),
            changed: true,
        });
        round_trip(BaseList {
            bases: vec![base],
            problems: Vec::new(),
        });
        round_trip(BaseRemoved {
            name: "debian-12".into(),
            changed: false,
        });
        let running = CloneInfo {
            name: "clone1".into(),
            base: "debian-12".into(),
            server: Some("puppet.example.com".into()),
            server_port: Some(8141),
            certname: Some("clone1.example.com".into()),
            state: CloneState::Running,
            unit: "puppet-clone-army@clone1.service".into(),
            mounted: true,
            problems: Vec::new(),
            shape: CloneShape {
                run_mode: Some(RunMode::Timer),
                runinterval: Some(1800),
                splay: Some(0),
                phase_index: Some(3),
                phase_count: Some(10),
                phasing: Some(Phasing::PrefixEven),
                memory_max: Some("512M".into()),
                cpu_quota: Some("50%".into()),
                tasks_max: Some(4096),
                facts: serde_json::json!({"role": "web", "tier": 3})
                    .as_object()
                    .cloned()
                    .unwrap(),
                generated_facts: 500,
                churn_percent: Some(15),
                apply_source: None,
                agent_noop: true,
            },
        };
        let stopped = CloneInfo {
            name: "clone2".into(),
            base: "debian-12".into(),
            server: None,
            server_port: None,
            certname: None,
            state: CloneState::Stopped,
            unit: "puppet-clone-army@clone2.service".into(),
            mounted: false,
            problems: vec![Problem {
                kind: ProblemKind::UpperDirMissing,
                message: "its upper dir is missing".into(),
                fix: "clone-army clone remove -- clone2".into(),
            }],
            shape: CloneShape::default(),
        };
        round_trip(CloneChanged {
            clone: running.clone(),
            changed: true,
        });
        round_trip(CloneCreated {
            clone: running.clone(),
            changed: true,
            root_password: true,
            challenge_password: false,
            host_limits: vec![LimitStatus {
                name: "fs.inotify.max_user_instances".into(),
                current: Some(128),
                wanted: 8192,
                applied: false,
                caps_clones: Some(21),
                error: Some("cannot write /proc/sys/fs/inotify/max_user_instances: Read-only file system (os error 30)".into()),
            }],
            bus_limits: Some(BusLimits {
                file: "/etc/dbus-1/system.d/clone-army.conf".into(),
                applied: true,
                changed: true,
                reloaded: true,
                error: None,
            }),
        });
        round_trip(ClonesStarted {
            clones: vec![running.clone()],
            waves: vec![vec!["clone1".into()]],
            ramp_up_seconds: 0,
            host_limits: Vec::new(),
            bus_limits: None,
        });
        round_trip(CloneList {
            clones: vec![running.clone(), stopped.clone()],
            problems: vec![Problem {
                kind: ProblemKind::OrphanMount,
                message: "no unit owns it".into(),
                fix: "umount -- /var/lib/machines/old".into(),
            }],
        });
        round_trip(CloneNames {
            clones: vec![running, stopped],
        });
        round_trip(ClonesRemoved {
            removed: vec!["clone1".into()],
            changed: true,
        });
        round_trip(ExecResult {
            command: vec!["puppet".into(), "agent".into(), "-t".into()],
            clones: vec![
                ExecEntry {
                    name: "clone1".into(),
                    exit_code: Some(2),
                    signal: None,
                    seconds: 3.217,
                    timed_out: false,
                    stdout_tail: "Notice: Applied catalog in 0.02 seconds\n".into(),
                    stderr_tail: String::new(),
                    error: None,
                },
                ExecEntry {
                    name: "clone2".into(),
                    exit_code: None,
                    signal: None,
                    seconds: 0.0,
                    timed_out: false,
                    stdout_tail: String::new(),
                    stderr_tail: String::new(),
                    error: Some(ExecProblem {
                        kind: "not-running".into(),
                        message: "clone \"clone2\" is not running".into(),
                    }),
                },
            ],
            summary: ExecSummary {
                count: 2,
                succeeded: 0,
                failed: 2,
                not_run: 1,
                timed_out: 0,
                p50_seconds: Some(3.217),
                p95_seconds: Some(3.217),
                max_seconds: Some(3.217),
                wall_seconds: 3.3,
                concurrency: 10,
                timeout_seconds: 600,
            },
        });
    }

    #[test]
    fn clone_state_serializes_as_protocol_words() {
        assert_eq!(
            serde_json::to_value(CloneState::Running).unwrap(),
            serde_json::json!("running")
        );
        assert_eq!(
            CloneState::from_active_state("activating"),
            CloneState::Running
        );
        assert_eq!(CloneState::from_active_state("failed"), CloneState::Stopped);
        assert_eq!(
            CloneState::from_active_state("deactivating"),
            CloneState::Stopped
        );
    }

    #[test]
    fn error_envelope_round_trips_with_field_and_causes() {
        let error = Error::BaseBuildFailed {
            base: "debian-12".into(),
            source: Box::new(Error::io(
                "create",
                "/var/lib/puppet-clone-army/.staging-debian-12",
                std::io::Error::from_raw_os_error(28),
            )),
        };
        let text = serde_json::to_string(&Envelope::failure(&error)).unwrap();
        let back: Envelope<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert!(!back.ok);
        assert!(back.result.is_none());
        let body = back.error.unwrap();
        assert_eq!(body.kind, "base-build-failed");
        assert_eq!(body.field, None);
        assert_eq!(body.causes.len(), 2, "{:?}", body.causes);
        assert!(body.causes[0].contains(".staging-debian-12"));

        let invalid = Error::InvalidName {
            what: "clone",
            field: "name",
            name: "Bad".into(),
            reason: "upper case".into(),
        };
        let text = serde_json::to_string(&Envelope::failure(&invalid)).unwrap();
        let back: Envelope<serde_json::Value> = serde_json::from_str(&text).unwrap();
        let body = back.error.unwrap();
        assert_eq!(body.kind, "invalid-name");
        assert_eq!(body.field.as_deref(), Some("name"));
        assert!(body.causes.is_empty());
        assert_eq!(invalid.exit_code(), 2);
    }
}
