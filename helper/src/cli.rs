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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
