//! `base`: building, listing and removing the bases the clones' overlays sit on.

use clap::{Args, Subcommand};

use super::answer::{json, listing, on_host, Answer};
use super::args::ListArgs;
use super::examples;
use super::progress::showing;
use crate::base::{self, Os, PuppetSource};
use crate::protocol::error::Result;

/// Runs a `base` verb.
pub fn run(verb: BaseVerb) -> Result<Answer> {
    on_host(|ctx| match verb {
        BaseVerb::Create(args) => json(showing(&format!("base {}", args.name), |progress| {
            base::create(
                ctx,
                &base::BaseRequest {
                    name: args.name,
                    os: args.os,
                    release: args.release,
                    mirror: args.mirror,
                    puppet_source: args.puppet_source,
                    server: args.server,
                    pe_ca_cert: args.pe_ca_cert,
                },
                progress,
            )
        })),
        BaseVerb::List(args) => listing(base::list(ctx), args.format, base::list_table),
        BaseVerb::Remove { name } => json(base::remove(ctx, &name)),
    })
}

#[derive(Debug, Subcommand)]
pub enum BaseVerb {
    /// Build a base: debootstrap, dnf --installroot or zypper --root (idempotent).
    #[command(after_help = examples::BASE_CREATE)]
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
