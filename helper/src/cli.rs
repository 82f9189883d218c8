//! The command line, as PROTOCOL.md documents it.

use clap::{Args, Parser, Subcommand};

use crate::base::{Os, PuppetSource};

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
}

#[derive(Debug, Subcommand)]
pub enum BaseVerb {
    /// Build a base with debootstrap (idempotent).
    Create(BaseCreateArgs),
    /// List the complete bases and their clones.
    List,
    /// Remove a base no clone uses.
    Remove { name: String },
}

#[derive(Debug, Args)]
pub struct BaseCreateArgs {
    pub name: String,
    /// OS family; default: the host's.
    #[arg(long, value_enum)]
    pub os: Option<Os>,
    /// Release codename; default: the host's VERSION_CODENAME.
    #[arg(long)]
    pub release: Option<String>,
    /// Mirror URL; default: from the host's apt sources.
    #[arg(long)]
    pub mirror: Option<String>,
    /// Where the agent comes from.
    #[arg(long, value_enum, default_value_t = PuppetSource::Distro)]
    pub puppet_source: PuppetSource,
}

#[derive(Debug, Subcommand)]
pub enum CloneVerb {
    /// Create a clone (and with --start, start it).
    Create(CloneCreateArgs),
    /// List every clone, with one bulk systemd call.
    List,
    /// Start clones and wait until they are active.
    Start {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Stop clones and wait until they are inactive.
    Stop {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Stop and remove clones.
    Remove {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Change a clone's master and/or certname (puppet.conf, /etc/hostname).
    Configure(CloneConfigureArgs),
}

#[derive(Debug, Args)]
pub struct CloneCreateArgs {
    pub name: String,
    #[arg(long)]
    pub base: String,
    #[arg(long)]
    pub master: String,
    #[arg(long)]
    pub certname: String,
    #[arg(long)]
    pub start: bool,
}

#[derive(Debug, Args)]
pub struct CloneConfigureArgs {
    pub name: String,
    #[arg(long)]
    pub master: Option<String>,
    #[arg(long)]
    pub certname: Option<String>,
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
    /// The command and its arguments, after `--` (run as is, no shell).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
