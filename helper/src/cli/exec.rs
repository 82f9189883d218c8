//! `exec`: a command run in running clones, N at a time (a burst), each exit reported.

use clap::Args;

use super::answer::{listing, on_host, Answer};
use super::args::ListFormat;
use super::format::{self, Chosen};
use crate::exec;
use crate::protocol::error::Result;

/// Runs `exec`.
pub fn run(args: ExecArgs) -> Result<Answer> {
    on_host(|ctx| {
        listing(
            exec::exec(
                ctx,
                &exec::ExecRequest {
                    clones: args.clones,
                    all: args.all,
                    concurrency: args.concurrency,
                    timeout_seconds: args.timeout,
                    command: args.command,
                },
            ),
            args.format,
            exec::table,
        )
    })
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
    /// auto: a table on a terminal, json otherwise; json: the JSON envelope; table: for
    /// people (one line per clone, output's first line). Errors always come as the JSON
    /// envelope.
    #[arg(long, value_parser = format::parser::<ListFormat>(), default_value = format::AUTO)]
    pub format: Chosen<ListFormat>,
    /// The command and its arguments, after `--` (run as is, no shell).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
