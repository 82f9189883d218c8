//! What a builder is given (a [`BuildSpec`], resolved and validated before any command
//! runs) and what it does ([`RootfsBuilder`]).

use std::path::{Path, PathBuf};

use super::finish::finish_rootfs;
use crate::base::{Os, PuppetSource};
use crate::protocol::error::Result;

/// Everything a builder needs, resolved and validated before any command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSpec {
    pub os: Os,
    /// Debian family: a codename (`bookworm`); RHEL family: `8` or `9`; SUSE: `15.6`.
    pub release: String,
    /// Debian family and SUSE: the distribution repository. RHEL family: empty (the
    /// host's dnf repositories are used, see `DnfBuilder` in `dnf.rs`).
    pub mirror: String,
    pub puppet_source: PuppetSource,
    /// Only for `pe`.
    pub pe: Option<PeSpec>,
}

/// Where a PE agent comes from: the primary server and its CA certificate (a host path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeSpec {
    pub server: String,
    pub ca_cert: PathBuf,
}

/// One command line; the first element is the program.
pub type Argv = Vec<String>;

pub trait RootfsBuilder {
    /// Name recorded in base.json.
    fn name(&self) -> &'static str;
    /// Every command, in order, that turns the empty directory `staging` into a root file
    /// system with systemd, D-Bus and the agent. Pure: nothing runs here.
    fn commands(&self, spec: &BuildSpec, staging: &Path) -> Result<Vec<Argv>>;
    /// Steps after the commands, before base.json is written.
    fn post_steps(&self, rootfs: &Path) -> Result<()> {
        finish_rootfs(rootfs)
    }
    /// Host files the build verifies packages with, each with the package that brings
    /// it: a base is only built from what can be verified, so a missing one stops the
    /// build before it starts.
    fn trust_anchors(&self, _spec: &BuildSpec) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }
}
