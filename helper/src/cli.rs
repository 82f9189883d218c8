//! The command line, as PROTOCOL.md documents it.

use clap::{Args, Parser, Subcommand};

use std::path::PathBuf;

use crate::base::{Os, PuppetSource};
use crate::report::render::Format;
use crate::report::DEFAULT_INTERVAL;

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
    /// Every clone's last run, the fleet's figures and, with --server, the server's view.
    Report(ReportArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The agents' run interval in seconds; clones silent for more than twice this are listed.
    #[arg(long, default_value_t = DEFAULT_INTERVAL)]
    pub interval: u64,
    /// Puppet Server to ask for its view (https URL, or host[:port] for https://host:8140).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// CA certificate to verify the server with; default: the host agent's
    /// (/etc/puppet/ssl/certs/ca.pem, else /etc/puppetlabs/puppet/ssl/certs/ca.pem).
    #[arg(long, value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,
    /// json: the JSON envelope; table: for people; prometheus: node_exporter textfile.
    /// Errors always come as the JSON envelope.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
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
