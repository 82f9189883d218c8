//! What a base is, as the rest of the helper reads it: its `base.json`, and where its
//! agent keeps its config and run summaries. Building and removing bases is `base`'s.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::read_optional;
use crate::sys::paths::{Layout, BASE_METADATA, STATE_DIR};

/// `etc/clone-army/base.json` inside every complete base; written last.
///
/// Fields added after the first release carry serde defaults, so bases built by an older
/// helper still read (as the Debian package's agent, which was all it could build).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseMetadata {
    pub name: String,
    pub os: String,
    pub release: String,
    pub mirror: String,
    #[serde(default = "default_puppet_source")]
    pub puppet_source: String,
    #[serde(default = "default_confdir")]
    pub puppet_confdir: String,
    /// Empty when read from an older base.json; see [`BaseMetadata::publicdir`].
    #[serde(default)]
    pub puppet_publicdir: String,
    pub created_at: String,
    pub builder: String,
}

impl BaseMetadata {
    /// The agent's publicdir: as recorded, else what the recorded confdir implies.
    pub fn publicdir(&self) -> String {
        if !self.puppet_publicdir.is_empty() {
            return self.puppet_publicdir.clone();
        }
        agent_dirs_for(&self.puppet_confdir)[0].publicdir.to_owned()
    }
}

/// What bases built before the field was recorded have: the distribution's package
/// (`PuppetSource::Distro` in `base`, whose tests hold the two equal).
pub const DEFAULT_PUPPET_SOURCE: &str = "distro";

fn default_puppet_source() -> String {
    DEFAULT_PUPPET_SOURCE.to_owned()
}

fn default_confdir() -> String {
    DISTRO_PUPPET_CONFDIR.to_owned()
}

/// Where one kind of agent package keeps what the helper binds into a clone or reads
/// from its upper layer. The one table of these directories: the report, the clones'
/// SSL binds and stale locks, and the bases all read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentDirs {
    /// puppet.conf and csr_attributes.yaml (`confdir`).
    pub confdir: &'static str,
    /// `last_run_summary.yaml` (`publicdir`).
    pub publicdir: &'static str,
    /// `last_run_report.yaml`, the run's lock, and the summary of agents before Puppet 7
    /// (`statedir`, `$vardir/state`).
    pub statedir: &'static str,
    /// The agent's key and certificates (`ssldir`).
    pub ssldir: &'static str,
}

/// Debian's and Ubuntu's `puppet-agent` package.
pub const DISTRO_AGENT: AgentDirs = AgentDirs {
    confdir: "/etc/puppet",
    publicdir: "/var/cache/puppet/public",
    statedir: "/var/cache/puppet/state",
    ssldir: "/var/lib/puppet/ssl",
};
/// The all-in-one packages (Puppet's, OpenVox's, PE's).
pub const AIO_AGENT: AgentDirs = AgentDirs {
    confdir: "/etc/puppetlabs/puppet",
    publicdir: "/opt/puppetlabs/puppet/public",
    statedir: "/opt/puppetlabs/puppet/cache/state",
    ssldir: "/etc/puppetlabs/puppet/ssl",
};

pub const DISTRO_PUPPET_CONFDIR: &str = DISTRO_AGENT.confdir;
pub const DISTRO_PUPPET_PUBLICDIR: &str = DISTRO_AGENT.publicdir;
pub const AIO_PUPPET_CONFDIR: &str = AIO_AGENT.confdir;
pub const AIO_PUPPET_PUBLICDIR: &str = AIO_AGENT.publicdir;
pub const DISTRO_PUPPET_SSLDIR: &str = DISTRO_AGENT.ssldir;
pub const AIO_PUPPET_SSLDIR: &str = AIO_AGENT.ssldir;

/// Both agents' directories for a base with this confdir, its own first: what base.json
/// records tells the agent apart (the all-in-one packages' confdir, else the
/// distribution's package); the other is where to look next in a clone whose agent is
/// not what its base says.
pub fn agent_dirs_for(confdir: &str) -> [AgentDirs; 2] {
    if confdir.trim_end_matches('/') == AIO_AGENT.confdir {
        [AIO_AGENT, DISTRO_AGENT]
    } else {
        [DISTRO_AGENT, AIO_AGENT]
    }
}

/// The agent's `ssldir` for a base with this confdir.
pub fn ssldir_for(confdir: &str) -> &'static str {
    agent_dirs_for(confdir)[0].ssldir
}

/// The metadata of base `name`, `None` when there is no complete base of that name.
pub fn read_metadata(layout: &Layout, name: &str) -> Result<Option<BaseMetadata>> {
    read_metadata_in(&layout.fs(layout.base_dir(name)))
}

pub fn read_metadata_in(base_fs_dir: &Path) -> Result<Option<BaseMetadata>> {
    let path = base_fs_dir.join(BASE_METADATA);
    let Some(text) = read_optional(&path)? else {
        return Ok(None);
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::io(
            "parse",
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })
}

/// Every complete base, by directory name (sorted), with its metadata. Staging dirs and
/// the lock file start with a dot; a clone's directories end in `-overlay`, `-workdir` or
/// `-config`, and its upper layer, which the clone writes, may well hold a base.json:
/// none of them is ever a base.
pub fn complete_bases(layout: &Layout) -> Result<Vec<(String, BaseMetadata)>> {
    let state_dir = layout.fs(STATE_DIR);
    let entries = match std::fs::read_dir(&state_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", state_dir, e)),
    };
    let mut bases = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", &state_dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !crate::sys::names::is_base_name(&name) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if let Some(metadata) = read_metadata_in(&entry.path())? {
            bases.push((name, metadata));
        }
    }
    bases.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(bases)
}
