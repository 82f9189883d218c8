//! `twin`: real nodes' records, read into what the twins that stand in for them take, and
//! imported into the state directory for a fleet of twins.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::answer::{json, on_host, Answer};
use super::args::TlsArgs;
use super::examples;
use crate::protocol::error::{Error, Result};

/// Runs a `twin` verb. `twin list --facts-dir` reads only the directory it is given, with
/// the caller's own rights, and changes nothing: it needs no root. The imported set is
/// root's.
pub fn run(verb: TwinVerb) -> Result<Answer> {
    match verb {
        TwinVerb::List(TwinListArgs {
            facts_dir: Some(dir),
        }) => json(crate::twin::list::list(&dir)),
        TwinVerb::List(TwinListArgs { facts_dir: None }) => {
            on_host(|ctx| json(crate::twin::import::imported(ctx)))
        }
        TwinVerb::Import(args) => match (&args.facts_dir, &args.puppetdb, &args.query) {
            (Some(dir), None, None) if !args.tls.any() => {
                on_host(|ctx| json(crate::twin::import::import(ctx, dir)))
            }
            (None, Some(puppetdb), Some(query)) => on_host(|ctx| {
                let answer = ask_puppetdb(ctx, &args, puppetdb, query)?;
                json(crate::twin::import::import_answer(
                    ctx, &answer, puppetdb, query,
                ))
            }),
            _ => Err(Error::Usage(
                "twin import takes --facts-dir alone, or --puppetdb with --query (and --ca-cert, \
                 --client-cert, --client-key)"
                    .to_owned(),
            )),
        },
    }
}

#[derive(Debug, Subcommand)]
pub enum TwinVerb {
    /// List nodes as their twins would take them: OS, environment, extensions, facts, and
    /// what is left out and why; the imported ones, or a directory's. Changes nothing.
    List(TwinListArgs),
    /// Take a directory's nodes, or a PuppetDB query's, into the state directory,
    /// replacing the imported set: what clone create --twin-file is given for a fleet of
    /// twins.
    #[command(after_help = examples::TWIN_IMPORT)]
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
#[command(group(clap::ArgGroup::new("source").required(true).args(["facts_dir", "puppetdb"])))]
pub struct TwinImportArgs {
    /// The directory of *.json records to import.
    #[arg(long, value_name = "DIR")]
    pub facts_dir: Option<PathBuf>,
    /// The PuppetDB to take the nodes from (https://host:8081; a bare host means that).
    #[arg(long, value_name = "URL", requires = "query")]
    pub puppetdb: Option<String>,
    /// The PQL query whose records are the nodes, e.g.
    /// 'inventory[certname, environment, facts, trusted] { facts.os.family = "Debian" }'.
    #[arg(long, value_name = "PQL", requires = "puppetdb")]
    pub query: Option<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// The answer of PuppetDB to the import's query, read up to a record file's limit.
fn ask_puppetdb(
    ctx: &crate::context::Context,
    args: &TwinImportArgs,
    puppetdb: &str,
    query: &str,
) -> Result<serde_json::Value> {
    use crate::report::puppetdb::{Client, Credentials};
    let credentials = Credentials {
        ca_cert: args.tls.ca_cert.as_deref(),
        client: args.tls.client(),
    };
    let client = Client::new(puppetdb, credentials, |p| ctx.layout.fs(p)).map_err(|e| {
        Error::InvalidArgument {
            field: "puppetdb",
            value: puppetdb.to_owned(),
            reason: e.to_string(),
        }
    })?;
    let deadline = crate::report::deadline::Deadline::after(crate::twin::import::QUERY_DEADLINE);
    client
        .query(query, crate::twin::read::MAX_FILE_BYTES, &deadline)
        .map_err(|detail| Error::Unreachable {
            what: format!("PuppetDB at {}", client.base),
            detail,
        })
}
