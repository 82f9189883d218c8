//! `clone`: creating, listing, starting, stopping, removing and configuring clones; the
//! arguments of create and configure ([`args`]), and a batch of creates ([`create_many`]).

pub mod args;
pub mod create_many;

use clap::Subcommand;

use std::path::PathBuf;

pub use args::{CloneConfigureArgs, CloneCreateArgs, ShapeArgs};

use crate::cli::answer::{json, listing, on_host, Answer};
use crate::cli::args::ListArgs;
use crate::cli::examples;
use crate::cli::progress::showing;
use crate::clone;
use crate::protocol::error::Result;

/// Runs a `clone` verb.
pub fn run(verb: CloneVerb) -> Result<Answer> {
    on_host(|ctx| match verb {
        CloneVerb::Create(args) => json(clone::create(ctx, &args.into_request())),
        CloneVerb::CreateMany { file } => json(create_many::requests(&file).and_then(|requests| {
            showing("creating clones", |progress| {
                clone::create_many(ctx, &requests, progress)
            })
        })),
        CloneVerb::List(args) => listing(clone::list(ctx), args.format, clone::list_table),
        CloneVerb::Start { ramp_up, names } => json(showing("starting clones", |progress| {
            clone::start(ctx, &names, ramp_up, progress)
        })),
        CloneVerb::Stop { names } => json(clone::stop(ctx, &names)),
        CloneVerb::Remove { names, forget_ssl } => {
            json(clone::remove_with(ctx, &names, forget_ssl))
        }
        CloneVerb::CheckApplySource { name } => {
            json(clone::apply_source::check(&ctx.layout, &name))
        }
        CloneVerb::Configure(args) => json(clone::configure(
            ctx,
            &clone::ConfigureRequest {
                name: args.name,
                server: args.server,
                server_port: args.server_port,
                certname: args.certname,
                twin_file: args.twin_file,
                shape: args.shape.into_request(),
            },
        )),
    })
}

#[derive(Debug, Subcommand)]
pub enum CloneVerb {
    Create(CloneCreateArgs),
    /// Create the clones FILE lists with one daemon-reload: per line, one `clone create`'s
    /// arguments as a JSON array of strings (no --start). All are checked before any is made.
    #[command(after_help = examples::CLONE_CREATE_MANY)]
    CreateMany {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// List every clone, with one bulk systemd call.
    #[command(after_help = examples::CLONE_LIST)]
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
    CheckApplySource {
        name: String,
    },
}
