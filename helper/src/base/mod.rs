//! Base images: read-only root file systems the clones' overlays sit on.

mod builder;
mod create;
mod list;
mod remove;

pub use builder::builder_for;
pub use create::{create, BaseRequest};
pub use list::{info, list};
pub use remove::remove;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fsutil::read_optional;
use crate::paths::{Layout, BASE_METADATA};

/// The OS families a base can be built for (more builders come later: RHEL, SUSE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Os {
    Debian,
    Ubuntu,
}

impl Os {
    pub fn as_str(self) -> &'static str {
        match self {
            Os::Debian => "debian",
            Os::Ubuntu => "ubuntu",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        match id {
            "debian" => Some(Os::Debian),
            "ubuntu" => Some(Os::Ubuntu),
            _ => None,
        }
    }
}

/// Where the base's Puppet agent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PuppetSource {
    /// The distribution's own `puppet-agent` package.
    Distro,
}

impl PuppetSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PuppetSource::Distro => "distro",
        }
    }
}

/// `etc/clone-army/base.json` inside every complete base; written last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseMetadata {
    pub name: String,
    pub os: String,
    pub release: String,
    pub mirror: String,
    pub puppet_source: String,
    pub puppet_confdir: String,
    pub created_at: String,
    pub builder: String,
}

/// Debian's and Ubuntu's `puppet-agent` package keep the agent's config here.
pub const DISTRO_PUPPET_CONFDIR: &str = "/etc/puppet";

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

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch (no date crate for one timestamp).
pub fn rfc3339_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_145_400), "2026-11-20T03:30:00Z");
    }
}
