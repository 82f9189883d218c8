//! `ssl`: the clones' SSL directories, kept per certname outside the clones.

use clap::Subcommand;

use super::answer::{json, on_host, Answer};
use crate::protocol::error::Result;

/// Runs an `ssl` verb.
pub fn run(verb: SslVerb) -> Result<Answer> {
    on_host(|ctx| match verb {
        SslVerb::List => json(crate::clone::ssl::list(ctx)),
        SslVerb::Forget { certnames } => json(crate::clone::ssl::forget(ctx, &certnames)),
    })
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
