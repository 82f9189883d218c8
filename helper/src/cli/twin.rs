//! `twin`: real nodes' records, read into what the twins that stand in for them take.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::answer::{json, Answer};
use crate::protocol::error::Result;

/// Runs a `twin` verb. `twin list` reads only the directory it is given, with the
/// caller's own rights, and changes nothing: it needs no root.
pub fn run(verb: TwinVerb) -> Result<Answer> {
    match verb {
        TwinVerb::List(args) => json(crate::twin::list::list(&args.facts_dir)),
    }
}

#[derive(Debug, Subcommand)]
pub enum TwinVerb {
    /// Read a directory of nodes' records (PuppetDB inventory or factsets, puppet facts)
    /// and list each node as its twin would take it: OS, environment, extensions, facts,
    /// and what is left out and why. Changes nothing.
    List(TwinListArgs),
}

#[derive(Debug, Args)]
pub struct TwinListArgs {
    /// The directory of *.json records, one node each or an array of PuppetDB records.
    #[arg(long, value_name = "DIR")]
    pub facts_dir: PathBuf,
}
