//! `ramp`: a stepped load run to its knee, and the report of the baselines it wrote.

use clap::{Args, Subcommand};

use std::path::PathBuf;

use super::answer::{json, listing, on_host, Answer};
use super::args::{ListFormat, ViewArgs};
use super::examples;
use super::format::{self, Chosen};
use crate::protocol::error::Result;
use crate::schema::CALL_LIMIT_SECONDS;
use crate::sys::clock::SystemClock;
use crate::{ramp, record};

/// Runs a `ramp` verb; `ramp report` reads only the baselines it is given and `ramp
/// longest` only its arguments, so they need no root.
pub fn run(verb: RampVerb) -> Result<Answer> {
    match verb {
        RampVerb::Longest(args) => json(
            args.into_request()
                .and_then(|request| ramp::longest::longest(&request, CALL_LIMIT_SECONDS)),
        ),
        RampVerb::Report(args) => listing(
            ramp::report(&args.baseline, args.against.as_deref()),
            args.format,
            ramp::baseline::table,
        ),
        RampVerb::Run(args) => on_host(|ctx| {
            record::stop_on_signals()?;
            // Refused before anything is started, like the request's own fields.
            let access_log = args
                .access_log
                .as_deref()
                .map(record::access_log::AccessLog::open)
                .transpose()?;
            let request = args.into_request()?;
            let mut fleet = ramp::HostFleet::new(ctx, &request).reading(access_log);
            json(ramp::ramp(
                &mut fleet,
                &request,
                &SystemClock::new(),
                &record::STOP,
            ))
        }),
    }
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
    #[command(after_help = examples::RAMP_RUN)]
    Run(RampArgs),
    /// The most steps and the longest, in seconds, a `ramp run` with the same arguments
    /// can take (each step at its longest hold, every level bisection may try, each step
    /// late by one ordinary call's limit), as its callers' time limit; null without
    /// --max-clones or with --start-at. Starts nothing and reads nothing on the host.
    #[command(after_help = examples::RAMP_LONGEST)]
    Longest(RampArgs),
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
    #[arg(long, value_name = "N", default_value_t = crate::ramp::DEFAULT_REPEAT)]
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
    /// auto: a table on a terminal, json otherwise; json: the JSON envelope; table: for
    /// people. Errors always come as the JSON envelope.
    #[arg(long, value_parser = format::parser::<ListFormat>(), default_value = format::AUTO)]
    pub format: Chosen<ListFormat>,
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
            bounds: crate::protocol::ramp::Bounds {
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
