//! `twin`: real nodes' records, read into what the twins that stand in for them take, and
//! imported into the state directory for a fleet of twins.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::answer::{json, on_host, Answer};
use crate::protocol::error::Result;

/// Runs a `twin` verb. `twin list --facts-dir` reads only the directory it is given, with
/// the caller's own rights, and changes nothing: it needs no root. The imported set is
/// root's.
pub fn run(verb: TwinVerb) -> Result<Answer> {
    match verb {
        TwinVerb::List(TwinListArgs {
            facts_dir: Some(dir),
        }) => json(crate::twin::list::list(&dir)),
        TwinVerb::List(TwinListArgs { facts_dir: None }) => {
            on_host(|ctx| json(crate::twin::import::imported(ctx).map(crate::twin::list::answer)))
        }
        TwinVerb::Import(args) => {
            on_host(|ctx| json(crate::twin::import::import(ctx, &args.facts_dir)))
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum TwinVerb {
    /// List nodes as their twins would take them: OS, environment, extensions, facts, and
    /// what is left out and why; the imported ones, or a directory's. Changes nothing.
    List(TwinListArgs),
    /// Take a directory's nodes into the state directory, replacing the imported set:
    /// what clone create --twin-file is given for a fleet of twins.
    Import(TwinImportArgs),
}

#[derive(Debug, Args)]
pub struct TwinListArgs {
    /// A directory of *.json records (one node each, or an array of PuppetDB records)
    /// [default: the imported nodes].
    #[arg(long, value_name = "DIR")]
    pub facts_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TwinImportArgs {
    /// The directory of *.json records to import.
    #[arg(long, value_name = "DIR")]
    pub facts_dir: PathBuf,
}
