//! The command line, as PROTOCOL.md documents it ([`Cli`]), its dispatch to the verbs
//! ([`dispatch`]), and the man page and shell completions made from it ([`docs`]).

pub mod create_many;
pub mod dispatch;
pub mod docs;

use clap::{Args, Parser, Subcommand};

use std::path::PathBuf;

use crate::base::{Os, PuppetSource};
use crate::report::render::Format;
use crate::report::DEFAULT_INTERVAL;

#[derive(Debug, Parser)]
#[command(
    name = "clone-army",
    version,
    about = "Runs a fleet of puppet-agent clones as systemd-nspawn containers over OverlayFS.",
    long_about = "Runs a fleet of puppet-agent clones as systemd-nspawn containers over OverlayFS.\n\
                  Answers with one JSON document on stdout (see PROTOCOL.md); progress goes to stderr."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size of the largest variant (clone create with its shape
// flags) costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Base images the clones' overlays sit on.
    Base {
        #[command(subcommand)]
        verb: BaseVerb,
    },
    /// Clones: overlay, mount unit, service.
    Clone {
        #[command(subcommand)]
        verb: CloneVerb,
    },
    /// Run a command in running clones, N at a time (a burst), and report each exit.
    Exec(ExecArgs),
    /// The host: kernel limits a large fleet needs, and its capacity for clones.
    Host {
        #[command(subcommand)]
        verb: HostVerb,
    },
    /// The clones' SSL directories, kept per certname outside the clones.
    Ssl {
        #[command(subcommand)]
        verb: SslVerb,
    },
    /// Every clone's last run, the fleet's figures and, with --server and --puppetdb, the
    /// server's and PuppetDB's views (PuppetDB's with every load host's clones).
    Report(ReportArgs),
    /// Sample the fleet, the server's and PuppetDB's views and the host every few seconds
    /// into a timeline of JSON lines, until a duration, a count or SIGTERM.
    Record(RecordArgs),
    /// A stepped load: start stopped clones a step at a time until the runs cross a bound,
    /// and keep every step's figures in a baseline file; or report such a file.
    Ramp {
        #[command(subcommand)]
        verb: RampVerb,
    },
    /// The rules the helper applies (names, ranges, defaults, capacity, kinds); needs no root.
    Schema,
    /// Print the shell completion script (not JSON); needs no root.
    Completions {
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// Print the man page, roff, section 8 (not JSON); needs no root.
    Man,
}

/// The shells `completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

/// How a listing answers: `json`, the envelope the Puppet providers read, or `table` for
/// people. Errors always come as the JSON envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ListFormat {
    /// The JSON envelope, like every verb.
    #[default]
    Json,
    /// An aligned table for people; text from clones is escaped.
    Table,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// json: the JSON envelope; table: for people. Errors always come as the JSON envelope.
    #[arg(long, value_enum, default_value_t = ListFormat::Json)]
    pub format: ListFormat,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub views: ViewArgs,
    /// Report a recorded run instead (a timeline `record` wrote, with its rotated files):
    /// its summary (json, table) or one self-contained page with its charts (html).
    #[arg(long, value_name = "TIMELINE", conflicts_with_all = ["server", "puppetdb"])]
    pub from: Option<PathBuf>,
    /// json: the JSON envelope; table: for people; prometheus: node_exporter textfile;
    /// html: the page of a recorded run (with --from). Errors always come as the JSON
    /// envelope.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// With --format html: write the page to this file and answer the JSON envelope with its
    /// path, instead of printing the page. Its directory must exist; only a missing file or
    /// an earlier page is replaced (whole), never a symlink or any other file.
    #[arg(long, value_name = "PAGE", requires = "from")]
    pub output: Option<PathBuf>,
}

/// What `report` and `record` ask: the run interval, and the server and PuppetDB to ask.
#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// The agents' run interval in seconds; clones silent for more than twice this are listed.
    #[arg(long, default_value_t = DEFAULT_INTERVAL)]
    pub interval: u64,
    /// Puppet Server to ask for its view (https URL, or a host or host:port for https://host:8140).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// PuppetDB to ask for its command queue and, in a report, for the last runs of every
    /// load host's clones (https URL, or a host or host:port for https://host:8081); it
    /// takes a client certificate signed by the Puppet CA.
    #[arg(long, value_name = "URL")]
    pub puppetdb: Option<String>,
    /// CA certificate to verify the server and PuppetDB with; default: the host agent's
    /// (/var/lib/puppet/ssl/certs/ca.pem, else /etc/puppetlabs/puppet/ssl/certs/ca.pem).
    #[arg(long, value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,
    /// Client certificate for PuppetDB (PEM); default: the host agent's own, the one key
    /// in its ssldir's private_keys/ and the certificate of that name.
    #[arg(long, value_name = "PATH", requires = "client_key")]
    pub client_cert: Option<PathBuf>,
    /// The private key of --client-cert (PEM).
    #[arg(long, value_name = "PATH", requires = "client_cert")]
    pub client_key: Option<PathBuf>,
}

impl ViewArgs {
    pub fn into_request(self) -> crate::report::ReportRequest {
        crate::report::ReportRequest {
            interval: self.interval,
            server: self.server,
            ca_cert: self.ca_cert,
            puppetdb: self.puppetdb,
            client: self
                .client_cert
                .zip(self.client_key)
                .map(|(cert, key)| crate::report::https::ClientIdentity { cert, key }),
        }
    }
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The timeline file, appended to (JSON lines; rotated by size to FILE.1, FILE.2, ...).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Seconds between samples.
    #[arg(long, value_name = "S", default_value_t = crate::record::DEFAULT_EVERY)]
    pub every: u64,
    /// Stop after this many seconds (default: until SIGTERM or SIGINT).
    #[arg(long, value_name = "S")]
    pub duration: Option<u64>,
    /// Stop after this many samples.
    #[arg(long, value_name = "N")]
    pub samples: Option<u64>,
    /// Rotate the timeline when the next line would take it past this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::record::DEFAULT_MAX_BYTES)]
    pub max_bytes: u64,
    /// Rotated files kept beside the current one (the oldest beyond goes).
    #[arg(long, value_name = "N", default_value_t = crate::record::DEFAULT_KEEP)]
    pub keep: u32,
    /// Puppet Server's access log (its default logback pattern), read as it grows: each
    /// sample's requests per endpoint, their 5xx, p50 and p95. Its directory must exist; a
    /// symlink or any other file than a regular one is refused.
    #[arg(long, value_name = "PATH")]
    pub access_log: Option<PathBuf>,
    #[command(flatten)]
    pub views: ViewArgs,
}

// Parsed once per process, like `Command`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum RampVerb {
    /// Start `--step` more of the stopped clones a step (in name order, the running ones as
    /// the floor), each step holding long enough for a p95 of its runs and starting a
    /// whole number of intervals after the one before, until a step crosses a bound, no
    /// stopped clone is left, or SIGTERM or SIGINT; then bisect to the knee; answer with
    /// the baseline (each step's figures and the verdict).
    Run(RampArgs),
    /// A baseline `ramp run` wrote, as the curve and its verdict; several, of load hosts
    /// that stepped together (--start-at), merged into one; with --against, side by side
    /// with another (two server versions, two tunings).
    Report(RampReportArgs),
}

#[derive(Debug, Args)]
pub struct RampArgs {
    /// The baseline file: each step's figures and the verdict, replaced whole after every step.
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Also append every sample, marked with its step, to this timeline (as `record`
    /// writes; `report --from` draws it).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// A name for this run in comparisons (e.g. "puppetserver 8.7, 4 JRubies").
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Clones started a step.
    #[arg(long, value_name = "N")]
    pub step: usize,
    /// Seconds after a step's start began before its window opens, so that its clones have
    /// booted and their first runs (certificate request, first plugin sync) are over
    /// (default: --interval).
    #[arg(long, value_name = "S")]
    pub settle: Option<u64>,
    /// Seconds each step's window stays open: its runs are judged (at least --interval;
    /// default: --interval).
    #[arg(long, value_name = "S")]
    pub hold: Option<u64>,
    /// Seconds between samples (the recorder's default).
    #[arg(long, value_name = "S", default_value_t = crate::record::DEFAULT_EVERY)]
    pub every: u64,
    /// The most clones to run, those running before included (default: every clone).
    #[arg(long, value_name = "N")]
    pub max_clones: Option<usize>,
    /// Seconds over which a step's clones are started, in waves (as `clone start --ramp-up`);
    /// each wave's runs are shifted by its delay, so the runs are spread less evenly.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub spread: u64,
    /// Windows each step holds one after another, judged together; the table and the
    /// baseline give each figure's spread (min/median/max) over them (1 to 10).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: usize,
    /// The longest a window holds so that its runs reach a p95 (20 runs), seconds
    /// (default: 4 run intervals, or --hold if longer); a step that needs more says so.
    #[arg(long, value_name = "S")]
    pub max_hold: Option<u64>,
    /// After the first step past a bound, bisect between it and the last step within
    /// until the bracket is this narrow: clones (5) or a share of the level (10%, the
    /// default).
    #[arg(long, value_name = "N|P%")]
    pub resolution: Option<String>,
    /// Key the steps to this wall-clock time (RFC 3339 or seconds since the epoch): step
    /// k begins at it + (k-1) x (settle + hold x repeat, rounded up to whole intervals), so
    /// load hosts started together step together and `ramp report A B ...` merges them.
    /// Coarse steps only, each holding --hold.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// The load host's own CPUs, a CPU list (1, 2-3,5): its CPU busy share, and whether it
    /// gave first, are of these only, e.g. the CPUs the clones are pinned to where the
    /// server runs on others of the same machine (default: every CPU).
    #[arg(long, value_name = "LIST")]
    pub load_host_cpus: Option<String>,
    /// Bound: the p95 of a step's run times, seconds.
    #[arg(long, value_name = "S")]
    pub max_p95: Option<f64>,
    /// Bound: failed runs as a share of a step's runs, percent (0 for none at all).
    #[arg(long, value_name = "PERCENT")]
    pub max_error_rate: Option<f64>,
    /// Bound: the server's average JRuby wait at a step's end, ms (needs --server).
    #[arg(long, value_name = "MS")]
    pub max_jruby_wait: Option<f64>,
    /// Bound: the runs that finished in a step's window as a share of those due (each
    /// clone one per interval), percent.
    #[arg(long, value_name = "PERCENT")]
    pub min_throughput: Option<f64>,
    /// Bound: the server's JRuby borrow timeouts in a step's window (0 for none at all;
    /// needs --server).
    #[arg(long, value_name = "N")]
    pub max_borrow_timeouts: Option<u64>,
    /// Bound: requests the server refused in a step's window because its
    /// max-queued-requests were waiting, each a 503 (0 for none at all; needs --server).
    #[arg(long, value_name = "N")]
    pub max_queue_limit_hits: Option<u64>,
    /// Bound: PuppetDB's command queue depth at any sample of a step's window (needs
    /// --puppetdb).
    #[arg(long, value_name = "N")]
    pub max_puppetdb_queue: Option<f64>,
    /// Puppet Server's access log, read as it grows (as `record --access-log`): each
    /// step's p50 and p95 per endpoint and its 5xx.
    #[arg(long, value_name = "PATH")]
    pub access_log: Option<PathBuf>,
    #[command(flatten)]
    pub views: ViewArgs,
}

#[derive(Debug, Args)]
pub struct RampReportArgs {
    /// The baseline to report; several: the baselines of load hosts that stepped
    /// together (`ramp run --start-at`), merged into one verdict.
    #[arg(required = true, num_args = 1..)]
    pub baseline: Vec<PathBuf>,
    /// An earlier baseline to lay it beside, step by step.
    #[arg(long, value_name = "BASELINE")]
    pub against: Option<PathBuf>,
    /// json: the JSON envelope; table: for people. Errors always come as the JSON envelope.
    #[arg(long, value_enum, default_value_t = ListFormat::Json)]
    pub format: ListFormat,
}

impl RampArgs {
    /// The request, its defaults filled in; a `--resolution`, `--start-at` or
    /// `--load-host-cpus` that does not parse is `invalid-argument` naming it.
    pub fn into_request(self) -> crate::protocol::error::Result<crate::ramp::RampRequest> {
        use crate::ramp::{bisect, schedule};
        let report = self.views.into_request();
        let hold = self.hold.unwrap_or(report.interval);
        let resolution = match self.resolution {
            None => bisect::DEFAULT_RESOLUTION,
            Some(text) => {
                text.parse()
                    .map_err(|reason| crate::protocol::error::Error::InvalidArgument {
                        field: "resolution",
                        value: text.clone(),
                        reason,
                    })?
            }
        };
        let load_host_cpus = self
            .load_host_cpus
            .map(|text| {
                text.parse()
                    .map_err(|reason| crate::protocol::error::Error::InvalidArgument {
                        field: "load-host-cpus",
                        value: text.clone(),
                        reason,
                    })
            })
            .transpose()?;
        let start_at = self
            .start_at
            .as_deref()
            .map(schedule::parse_start_at)
            .transpose()?;
        Ok(crate::ramp::RampRequest {
            output: self.output,
            timeline: self.timeline,
            label: self.label,
            step: self.step,
            settle: self.settle.unwrap_or(report.interval),
            hold,
            every: self.every,
            max_clones: self.max_clones,
            spread: self.spread,
            repeat: self.repeat,
            max_hold: self
                .max_hold
                .unwrap_or_else(|| schedule::default_max_hold(hold, report.interval)),
            resolution,
            start_at,
            load_host_cpus,
            bounds: crate::ramp::step::Bounds {
                p95_seconds: self.max_p95,
                error_percent: self.max_error_rate,
                jruby_wait_ms: self.max_jruby_wait,
                min_throughput_percent: self.min_throughput,
                max_borrow_timeouts: self.max_borrow_timeouts,
                max_queue_limit_hits: self.max_queue_limit_hits,
                max_puppetdb_queue: self.max_puppetdb_queue,
            },
            report,
        })
    }
}

#[derive(Debug, Subcommand)]
pub enum SslVerb {
    /// List the kept SSL directories and the clone that uses each (none: removed).
    List,
    /// Remove the kept SSL directories of certnames no clone uses.
    Forget {
        #[arg(required = true)]
        certnames: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum HostVerb {
    /// Report the kernel limits and the memory bound of the capacity for clones (read-only).
    Limits,
    /// Run every clone's systemd-nspawn with SELinux labels (hosts with SELinux enforcing):
    /// a drop-in for the clone template; with --check, only say whether it is in place.
    Selinux(HostSelinuxArgs),
    /// Install the man page and the bash and zsh completions under a prefix; with --check,
    /// only say whether they are there and current.
    Docs(HostDocsArgs),
}

#[derive(Debug, Args)]
pub struct HostDocsArgs {
    /// Where share/man/man8, share/bash-completion/completions and share/zsh/site-functions are.
    #[arg(long, value_name = "DIR", default_value = crate::host::docs::DEFAULT_PREFIX)]
    pub prefix: PathBuf,
    /// Change nothing; fail with kind not-in-place unless every file is there and current.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Args)]
pub struct HostSelinuxArgs {
    /// The clones' processes' context (systemd-nspawn --selinux-context).
    #[arg(long, value_name = "CTX", default_value = crate::host::selinux::DEFAULT_CONTEXT)]
    pub context: String,
    /// The context of the API file systems nspawn mounts (--selinux-apifs-context).
    #[arg(long, value_name = "CTX", default_value = crate::host::selinux::DEFAULT_APIFS_CONTEXT)]
    pub apifs_context: String,
    /// Change nothing; fail with kind not-in-place unless the drop-in is exactly this.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Subcommand)]
pub enum BaseVerb {
    /// Build a base: debootstrap, dnf --installroot or zypper --root (idempotent).
    Create(BaseCreateArgs),
    /// List the complete bases and their clones.
    List(ListArgs),
    /// Remove a base no clone uses.
    Remove { name: String },
}

#[derive(Debug, Args)]
pub struct BaseCreateArgs {
    pub name: String,
    /// OS; default: the host's (os-release ID, else ID_LIKE).
    #[arg(long, value_enum)]
    pub os: Option<Os>,
    /// Release: a codename (Debian, Ubuntu), 8|9 (RHEL family), 15.x (SUSE);
    /// default: the host's.
    #[arg(long)]
    pub release: Option<String>,
    /// Distribution repository URL; default: the host's apt sources (Debian family),
    /// download.opensuse.org (openSUSE). Refused for the RHEL family (host's dnf repos).
    #[arg(long)]
    pub mirror: Option<String>,
    /// Where the agent comes from; default: distro on Debian and Ubuntu, required elsewhere.
    #[arg(long, value_enum)]
    pub puppet_source: Option<PuppetSource>,
    /// PE primary server to fetch install.bash from (with --puppet-source pe).
    /// `--master`, the older word, is taken too.
    #[arg(long, alias = "master")]
    pub server: Option<String>,
    /// The PE primary server's CA certificate, PEM (required with --puppet-source pe).
    #[arg(long, value_name = "PATH")]
    pub pe_ca_cert: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum CloneVerb {
    /// Create a clone (and with --start, start it).
    Create(CloneCreateArgs),
    /// Create the clones FILE lists with one daemon-reload: per line, one `clone create`'s
    /// arguments as a JSON array of strings (no --start). All are checked before any is made.
    CreateMany {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// List every clone, with one bulk systemd call.
    List(ListArgs),
    /// Start clones (in waves over --ramp-up) and wait until they are active.
    Start {
        /// Spread the starts over this many seconds, in waves about 5 s apart.
        #[arg(long, value_name = "SECONDS", default_value_t = 0)]
        ramp_up: u64,
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Stop clones and wait until they are inactive.
    Stop {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Stop and remove clones. Their SSL directories are kept (a clone made again under
    /// the same certname has its certificate again) unless --forget-ssl.
    Remove {
        /// Remove the clones' SSL directories too (once the CA has cleaned their certificates).
        #[arg(long)]
        forget_ssl: bool,
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Change a clone's server, certname, run mode, limits or facts.
    Configure(CloneConfigureArgs),
    /// Check the apply source a clone binds as --apply-source is checked (root's, writable
    /// by no one else all the way up, reached through no symlink); an apply-mode clone's
    /// service runs this before every start, and does not start when it fails.
    CheckApplySource { name: String },
}

#[derive(Debug, Args)]
pub struct CloneCreateArgs {
    pub name: String,
    #[arg(long)]
    pub base: String,
    /// The Puppet Server the agent runs against; required except with --run-mode apply.
    /// `--master`, the older word, is taken too.
    #[arg(long, alias = "master")]
    pub server: Option<String>,
    /// The port of --server [default: Puppet's, 8140].
    #[arg(long, value_name = "PORT", value_parser = server_port_parser())]
    pub server_port: Option<u16>,
    #[arg(long)]
    pub certname: String,
    #[arg(long)]
    pub start: bool,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// File holding root's crypt(3) password hash ($id$...), for `machinectl login`.
    #[arg(long, value_name = "PATH")]
    pub root_password_hash_file: Option<std::path::PathBuf>,
    /// File holding the CSR challenge password for policy-based autosigning.
    #[arg(long, value_name = "PATH")]
    pub challenge_password_file: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct CloneConfigureArgs {
    pub name: String,
    /// The Puppet Server the agent runs against (`--master` is taken too).
    #[arg(long, alias = "master")]
    pub server: Option<String>,
    /// The port of the server the agent runs against.
    #[arg(long, value_name = "PORT", value_parser = server_port_parser())]
    pub server_port: Option<u16>,
    #[arg(long)]
    pub certname: Option<String>,
    #[command(flatten)]
    pub shape: ShapeArgs,
}

/// Run mode, limits and facts (PROTOCOL.md, "Load shape"). On `create` an absent flag
/// means its default; on `configure` it leaves that setting as it is.
#[derive(Debug, Args)]
pub struct ShapeArgs {
    /// When the agent runs: the puppet.service daemon, a systemd timer of one-shot runs, never by itself, or a timer of masterless `puppet apply` runs [default on create: daemon].
    #[arg(long, value_enum, value_name = "MODE")]
    pub run_mode: Option<crate::clone::run_mode::RunMode>,
    /// Seconds between agent runs, 60 to 604800 [default on create: 1800].
    #[arg(long, value_name = "SECONDS")]
    pub runinterval: Option<u64>,
    /// Random delay of up to this many seconds before each run [default on create: 0].
    #[arg(long, value_name = "SECONDS")]
    pub splay: Option<u64>,
    /// This clone's phase, 0 to N-1: its place in the fleet, which --phasing turns into the offset of its runs in each interval (with --phase-count).
    #[arg(long, value_name = "I", requires = "phase_count")]
    pub phase_index: Option<u32>,
    /// The number of phases (clones) in the fleet (with --phase-index).
    #[arg(long, value_name = "N", requires = "phase_index")]
    pub phase_count: Option<u32>,
    /// How the phase becomes the offset in each interval T: prefix-even T·vdc(I) (the van der Corput sequence 0, 1/2, 1/4, 3/4, ...: clones 0 to n-1 run evenly spread for every n) or fleet-even I·T/N (even only when all N run) [default on create: prefix-even].
    #[arg(long, value_enum, value_name = "RULE")]
    pub phasing: Option<crate::clone::run_mode::Phasing>,
    /// MemoryMax of the clone's service: bytes or a K/M/G/T size, e.g. 512M; none to unset.
    #[arg(long, value_name = "SIZE")]
    pub memory_max: Option<String>,
    /// CPUQuota of the clone's service in percent of one CPU, e.g. 50%; none to unset.
    #[arg(long, value_name = "PERCENT")]
    pub cpu_quota: Option<String>,
    /// TasksMax of the clone's service; none to unset.
    #[arg(long, value_name = "N")]
    pub tasks_max: Option<String>,
    /// A JSON object of per-clone external facts ({} for none).
    #[arg(long, value_name = "PATH")]
    pub facts_file: Option<std::path::PathBuf>,
    /// How many generated facts (clone_army_fact_0001...) the clone reports; 0 for none.
    #[arg(long, value_name = "COUNT")]
    pub generated_facts: Option<u32>,
    /// Percent of the generated facts whose values change on every run.
    #[arg(long, value_name = "P")]
    pub churn_percent: Option<u32>,
    /// Apply mode: a host directory with manifests/ (and modules/) bound read-only into the clone at /srv/clone-army-apply; only with run mode apply.
    #[arg(long, value_name = "DIR")]
    pub apply_source: Option<std::path::PathBuf>,
    /// Run the agent in noop (true): full catalogs compiled and evaluated, nothing changed in the clone [default on create: false].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub agent_noop: Option<bool>,
}

impl CloneCreateArgs {
    pub fn into_request(self) -> crate::clone::CloneRequest {
        crate::clone::CloneRequest {
            name: self.name,
            base: self.base,
            server: self.server,
            server_port: self.server_port,
            certname: self.certname,
            start: self.start,
            shape: Some(self.shape.into_request()),
            secret_files: crate::clone::SecretFiles {
                root_password_hash_file: self.root_password_hash_file,
                challenge_password_file: self.challenge_password_file,
            },
        }
    }
}

impl ShapeArgs {
    pub fn into_request(self) -> crate::clone::shape::ShapeRequest {
        crate::clone::shape::ShapeRequest {
            run_mode: self.run_mode,
            runinterval: self.runinterval,
            splay: self.splay,
            phase_index: self.phase_index,
            phase_count: self.phase_count,
            phasing: self.phasing,
            memory_max: self.memory_max,
            cpu_quota: self.cpu_quota,
            tasks_max: self.tasks_max,
            facts_file: self.facts_file,
            generated_facts: self.generated_facts,
            churn_percent: self.churn_percent,
            apply_source: self.apply_source,
            agent_noop: self.agent_noop,
        }
    }
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["clones", "all"])))]
pub struct ExecArgs {
    /// A clone to run the command in (repeatable).
    #[arg(long = "clone", value_name = "NAME")]
    pub clones: Vec<String>,
    /// Every clone (those not running are reported, not run).
    #[arg(long, conflicts_with = "clones")]
    pub all: bool,
    /// At most this many commands at a time.
    #[arg(long, value_name = "N", default_value_t = crate::exec::DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    /// Kill a command after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::exec::DEFAULT_TIMEOUT_SECONDS)]
    pub timeout: u64,
    /// json: the JSON envelope; table: for people (one line per clone, output's first line).
    /// Errors always come as the JSON envelope.
    #[arg(long, value_enum, default_value_t = ListFormat::Json)]
    pub format: ListFormat,
    /// The command and its arguments, after `--` (run as is, no shell).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `--server-port`: a port of [`crate::clone::puppet_conf::SERVER_PORTS`].
fn server_port_parser() -> clap::builder::RangedI64ValueParser<u16> {
    let ports = crate::clone::puppet_conf::SERVER_PORTS;
    clap::value_parser!(u16).range(i64::from(*ports.start())..=i64::from(*ports.end()))
}

/// clap's rendered error as one line for the envelope's `message`: the error itself
/// with what is allowed (clap puts possible values, missing arguments and the usage on
/// lines of their own), without the tips and the pointer to `--help`.
pub fn usage_message(rendered: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for raw in rendered.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with("tip:") || line.starts_with("For more information") {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        match parts.last_mut() {
            // An indented line belongs to the line before it.
            Some(last) if raw.starts_with(' ') => {
                let separator = if last.ends_with(':') {
                    " "
                } else if last.ends_with('>') || last.ends_with(']') {
                    ", "
                } else {
                    " "
                };
                last.push_str(separator);
                last.push_str(line);
            }
            _ => parts.push(line.to_owned()),
        }
    }
    if parts.is_empty() {
        "invalid usage".to_owned()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn usage_of(args: &[&str]) -> String {
        let error = Cli::try_parse_from(args).unwrap_err();
        usage_message(&error.render().to_string())
    }

    #[test]
    fn usage_messages_name_the_argument_and_what_is_allowed() {
        assert_eq!(
            usage_of(&["clone-army", "base", "create", "b", "--os", "windows"]),
            "invalid value 'windows' for '--os <OS>' [possible values: debian, ubuntu, rhel, rocky, almalinux, centos, sles, opensuse]"
        );
        let unknown = usage_of(&["clone-army", "clone", "list", "--bogus"]);
        assert!(
            unknown
                .starts_with("unexpected argument '--bogus' found; Usage: clone-army clone list"),
            "{unknown}"
        );
        let missing = usage_of(&["clone-army", "clone", "create", "c1", "--base", "b"]);
        assert!(
            missing.starts_with(
                "the following required arguments were not provided: --certname <CERTNAME>; Usage: "
            ),
            "{missing}"
        );
    }

    #[test]
    fn server_port_is_a_port_on_create_and_configure() {
        let create = |port: &str| {
            let args = [
                "clone-army",
                "clone",
                "create",
                "c1",
                "--base",
                "b",
                "--server",
                "m",
                "--server-port",
                port,
                "--certname",
                "c",
            ];
            Cli::try_parse_from(args).map(|cli| match cli.command {
                Command::Clone {
                    verb: CloneVerb::Create(a),
                } => a.server_port,
                other => panic!("{other:?}"),
            })
        };
        assert_eq!(create("8141").unwrap(), Some(8141));
        assert_eq!(create("65535").unwrap(), Some(65535));
        for bad in ["0", "65536", "http"] {
            let error = usage_message(&create(bad).unwrap_err().render().to_string());
            assert!(
                error.starts_with(&format!("invalid value '{bad}' for '--server-port <PORT>'")),
                "{error}"
            );
        }
        let configure = Cli::try_parse_from([
            "clone-army",
            "clone",
            "configure",
            "c1",
            "--server-port",
            "8142",
        ])
        .unwrap();
        match configure.command {
            Command::Clone {
                verb: CloneVerb::Configure(a),
            } => assert_eq!(a.server_port, Some(8142)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shape_flags_parse_on_create_and_configure() {
        let cli = Cli::try_parse_from([
            "clone-army",
            "clone",
            "create",
            "c1",
            "--base",
            "b",
            "--server",
            "m",
            "--certname",
            "c",
            "--run-mode",
            "timer",
            "--runinterval",
            "900",
            "--splay",
            "5",
            "--phase-index",
            "2",
            "--phase-count",
            "8",
            "--memory-max",
            "512M",
            "--cpu-quota",
            "50%",
            "--tasks-max",
            "256",
            "--facts-file",
            "/f.json",
            "--generated-facts",
            "500",
            "--churn-percent",
            "15",
        ])
        .unwrap();
        let Command::Clone {
            verb: CloneVerb::Create(args),
        } = cli.command
        else {
            panic!("not a clone create");
        };
        let request = args.shape.into_request();
        assert_eq!(
            request.run_mode,
            Some(crate::clone::run_mode::RunMode::Timer)
        );
        assert_eq!(
            (request.phase_index, request.phase_count),
            (Some(2), Some(8))
        );
        assert_eq!(request.cpu_quota.as_deref(), Some("50%"));
        assert_eq!(request.churn_percent, Some(15));

        let configure =
            Cli::try_parse_from(["clone-army", "clone", "configure", "c1", "--splay", "0"]);
        assert!(configure.is_ok());
        assert_eq!(
            usage_of(&[
                "clone-army",
                "clone",
                "configure",
                "c1",
                "--run-mode",
                "cron"
            ]),
            "invalid value 'cron' for '--run-mode <MODE>' [possible values: daemon, timer, manual, apply]"
        );
        let lonely = usage_of(&[
            "clone-army",
            "clone",
            "configure",
            "c1",
            "--phase-index",
            "1",
        ]);
        assert!(
            lonely.starts_with(
                "the following required arguments were not provided: --phase-count <N>"
            ),
            "{lonely}"
        );
    }

    #[test]
    fn master_is_taken_for_server_where_a_server_is_given() {
        let server_of = |args: &[&str]| match Cli::try_parse_from(args).unwrap().command {
            Command::Clone {
                verb: CloneVerb::Create(a),
            } => a.server,
            Command::Clone {
                verb: CloneVerb::Configure(a),
            } => a.server,
            Command::Base {
                verb: BaseVerb::Create(a),
            } => a.server,
            other => panic!("{other:?}"),
        };
        let create = ["clone-army", "clone", "create", "c1", "--base", "b"];
        let old = [
            &create[..],
            &["--master", "m.example.com", "--certname", "c"],
        ]
        .concat();
        assert_eq!(server_of(&old).as_deref(), Some("m.example.com"));
        let configure = ["clone-army", "clone", "configure", "c1", "--master", "m"];
        assert_eq!(server_of(&configure).as_deref(), Some("m"));
        let base = [
            "clone-army",
            "base",
            "create",
            "b",
            "--master",
            "pe.example.com",
        ];
        assert_eq!(server_of(&base).as_deref(), Some("pe.example.com"));
        let mut cli = Cli::command();
        let create = cli.find_subcommand_mut("clone").unwrap();
        let help = create
            .find_subcommand_mut("create")
            .unwrap()
            .render_long_help();
        let help = help.to_string();
        assert!(help.contains("--server"), "{help}");
        assert!(
            !help.contains("--master <"),
            "the old word stays out of --help: {help}"
        );
    }

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}

/// Whatever the command line, parsing ends in a value or an error that becomes one line
/// of `message` (never a panic, never an empty or multi-line message).
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn words() -> impl Strategy<Value = Vec<String>> {
        let word = prop_oneof![
            Just("clone".to_owned()),
            Just("base".to_owned()),
            Just("exec".to_owned()),
            Just("create".to_owned()),
            Just("--".to_owned()),
            Just("--all".to_owned()),
            Just("--clone".to_owned()),
            Just("--concurrency".to_owned()),
            Just("--os".to_owned()),
            Just("--base".to_owned()),
            "-{0,2}[a-z0-9=]{0,8}",
            any::<String>(),
        ];
        proptest::collection::vec(word, 0..8)
    }

    proptest! {
        #[test]
        fn any_command_line_parses_or_explains_itself(args in words()) {
            let argv = std::iter::once("clone-army".to_owned()).chain(args);
            if let Err(error) = Cli::try_parse_from(argv) {
                let message = usage_message(&error.render().to_string());
                prop_assert!(!message.trim().is_empty());
                // One line in the envelope, even when a value had newlines in it.
                prop_assert!(!message.contains('\n'), "{:?}", message);
            }
        }
    }
}
