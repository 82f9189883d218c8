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
        if self.puppet_confdir == AIO_PUPPET_CONFDIR {
            AIO_PUPPET_PUBLICDIR.to_owned()
        } else {
            DISTRO_PUPPET_PUBLICDIR.to_owned()
        }
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

/// Debian's and Ubuntu's `puppet-agent` package keep the agent's config here.
pub const DISTRO_PUPPET_CONFDIR: &str = "/etc/puppet";
/// ... and its run summaries here.
pub const DISTRO_PUPPET_PUBLICDIR: &str = "/var/cache/puppet/public";
/// The all-in-one packages (Puppet's, OpenVox's, PE's) keep the agent's config here.
pub const AIO_PUPPET_CONFDIR: &str = "/etc/puppetlabs/puppet";
/// ... and its run summaries here.
pub const AIO_PUPPET_PUBLICDIR: &str = "/opt/puppetlabs/puppet/public";
/// Debian's and Ubuntu's `puppet-agent` keep the agent's key and certificates here (`ssldir`).
pub const DISTRO_PUPPET_SSLDIR: &str = "/var/lib/puppet/ssl";
/// ... and the all-in-one packages (Puppet's, OpenVox's, PE's) here.
pub const AIO_PUPPET_SSLDIR: &str = "/etc/puppetlabs/puppet/ssl";

/// The agent's `ssldir` for a base with this confdir (what base.json records tells the
/// agent apart: the all-in-one packages' confdir, else the distribution's package).
pub fn ssldir_for(confdir: &str) -> &'static str {
    if confdir.trim_end_matches('/') == AIO_PUPPET_CONFDIR {
        AIO_PUPPET_SSLDIR
    } else {
        DISTRO_PUPPET_SSLDIR
    }
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
