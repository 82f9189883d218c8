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
    /// Build a base: debootstrap, dnf --installroot or zypper --root (idempotent).
    Create(BaseCreateArgs),
    /// List the complete bases and their clones.
    List,
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
    #[arg(long)]
    pub master: Option<String>,
    /// The PE primary server's CA certificate, PEM (required with --puppet-source pe).
    #[arg(long, value_name = "PATH")]
    pub pe_ca_cert: Option<std::path::PathBuf>,
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
    /// File holding root's crypt(3) password hash ($id$...), for `machinectl login`.
    #[arg(long, value_name = "PATH")]
    pub root_password_hash_file: Option<std::path::PathBuf>,
    /// File holding the CSR challenge password for policy-based autosigning.
    #[arg(long, value_name = "PATH")]
    pub challenge_password_file: Option<std::path::PathBuf>,
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
