//! `record`: the fleet, the server's and PuppetDB's views and the host sampled into a
//! timeline of JSON lines.

use clap::Args;

use std::path::PathBuf;

use super::answer::{json, on_host, Answer};
use super::args::ViewArgs;
use crate::protocol::error::Result;
use crate::record;
use crate::report;
use crate::sys::clock::SystemClock;

/// Runs `record`, until its duration, its count of samples, SIGTERM or SIGINT.
pub fn run(args: RecordArgs) -> Result<Answer> {
    // Checked before the host is asked anything, as `report --group-by` checks it.
    let group_by = args
        .group_by
        .as_deref()
        .map(report::groups::key)
        .transpose()?;
    on_host(|ctx| {
        record::stop_on_signals()?;
        json(record::record(
            ctx,
            &record::RecordRequest {
                output: args.output,
                every: args.every,
                duration: args.duration,
                samples: args.samples,
                max_bytes: args.max_bytes,
                keep: args.keep,
                report: args.views.into_request(),
                access_log: args.access_log,
                group_by,
            },
            &SystemClock::new(),
            &record::STOP,
        ))
    })
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
    /// Also count each sample's runs by what the clones' twins stand in for, as `report
    /// --group-by` groups them: a trusted extension (pp_role, ...), node or environment;
    /// clones that are no twins are the group -.
    #[arg(long, value_name = "KEY")]
    pub group_by: Option<String>,
    #[command(flatten)]
    pub views: ViewArgs,
}
