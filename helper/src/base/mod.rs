//! Base images: read-only root file systems the clones' overlays sit on.

mod builder;
mod create;
mod disk_space;
mod list;
mod remove;

pub use builder::builder_for;
pub use create::{create, BaseRequest};
pub use disk_space::MIN_FREE_BYTES;
pub use list::{info, list};
pub use remove::remove;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fsutil::read_optional;
use crate::paths::{Layout, BASE_METADATA};

/// The operating systems a base can be built for. Each belongs to one [`Family`], which
/// decides the builder: debootstrap, `dnf --installroot` or `zypper --root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Os {
    Debian,
    Ubuntu,
    /// Red Hat Enterprise Linux 8 or 9.
    Rhel,
    /// Rocky Linux 8 or 9.
    Rocky,
    /// AlmaLinux 8 or 9.
    Almalinux,
    /// CentOS Stream 8 or 9.
    Centos,
    /// SUSE Linux Enterprise Server 15.
    Sles,
    /// openSUSE Leap 15.
    Opensuse,
}

/// How a family's root file systems are built and where its packages come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Debian,
    Rhel,
    Suse,
}

impl Os {
    pub fn as_str(self) -> &'static str {
        match self {
            Os::Debian => "debian",
            Os::Ubuntu => "ubuntu",
            Os::Rhel => "rhel",
            Os::Rocky => "rocky",
            Os::Almalinux => "almalinux",
            Os::Centos => "centos",
            Os::Sles => "sles",
            Os::Opensuse => "opensuse",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Os::Debian | Os::Ubuntu => Family::Debian,
            Os::Rhel | Os::Rocky | Os::Almalinux | Os::Centos => Family::Rhel,
            Os::Sles | Os::Opensuse => Family::Suse,
        }
    }

    /// An os-release `ID` (or base.json's `os`) that names one of these exactly.
    pub fn from_id(id: &str) -> Option<Self> {
        match id {
            "debian" => Some(Os::Debian),
            "ubuntu" => Some(Os::Ubuntu),
            "rhel" => Some(Os::Rhel),
            "rocky" => Some(Os::Rocky),
            "almalinux" => Some(Os::Almalinux),
            "centos" => Some(Os::Centos),
            "sles" => Some(Os::Sles),
            "opensuse" | "opensuse-leap" => Some(Os::Opensuse),
            _ => None,
        }
    }

    /// The host's OS from os-release: `ID` when it names one of ours, else the first
    /// `ID_LIKE` entry that does (a derivative builds bases of its parent's family).
    pub fn of_host(id: Option<&str>, id_like: &[String]) -> Option<Self> {
        id.and_then(Os::from_id).or_else(|| {
            id_like.iter().find_map(|like| match like.as_str() {
                "fedora" => Some(Os::Rhel),
                "suse" => Some(Os::Opensuse),
                other => Os::from_id(other),
            })
        })
    }
}

/// Where the base's Puppet agent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PuppetSource {
    /// The distribution's own package (Debian and Ubuntu only).
    Distro,
    /// Puppet's repositories: the `puppet8-release` package, then `puppet-agent`.
    Puppet,
    /// OpenVox's repositories: the `openvox8-release` package, then `openvox-agent`.
    Openvox,
    /// Puppet Enterprise: `install.bash` from the primary server, its CA verified.
    Pe,
}

impl PuppetSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PuppetSource::Distro => "distro",
            PuppetSource::Puppet => "puppet",
            PuppetSource::Openvox => "openvox",
            PuppetSource::Pe => "pe",
        }
    }

    /// Where the agent keeps puppet.conf and csr_attributes.yaml.
    pub fn confdir(self) -> &'static str {
        match self {
            PuppetSource::Distro => DISTRO_PUPPET_CONFDIR,
            _ => AIO_PUPPET_CONFDIR,
        }
    }

    /// Where the agent writes `last_run_summary.yaml` and `last_run_report.yaml`.
    pub fn publicdir(self) -> &'static str {
        match self {
            PuppetSource::Distro => DISTRO_PUPPET_PUBLICDIR,
            _ => AIO_PUPPET_PUBLICDIR,
        }
    }
}

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

fn default_puppet_source() -> String {
    PuppetSource::Distro.as_str().to_owned()
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

    #[test]
    fn older_base_json_still_reads() {
        // As the first release wrote it: no puppet_publicdir.
        let old = r#"{"name":"b","os":"debian","release":"bookworm","mirror":"http://deb.debian.org/debian",
            "puppet_source":"distro","puppet_confdir":"/etc/puppet","created_at":"2026-11-22T03:30:00Z",
            "builder":"debootstrap"}"#;
        let metadata: BaseMetadata = serde_json::from_str(old).unwrap();
        assert_eq!(metadata.publicdir(), "/var/cache/puppet/public");
        // Older still: not even the source and confdir.
        let older = r#"{"name":"b","os":"debian","release":"bookworm","mirror":"m",
            "created_at":"2026-11-22T03:30:00Z","builder":"debootstrap"}"#;
        let metadata: BaseMetadata = serde_json::from_str(older).unwrap();
        assert_eq!(metadata.puppet_source, "distro");
        assert_eq!(metadata.puppet_confdir, "/etc/puppet");
        assert_eq!(metadata.publicdir(), "/var/cache/puppet/public");
    }

    #[test]
    fn host_os_from_id_and_id_like() {
        let like = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Os::of_host(Some("rocky"), &like(&["rhel", "centos", "fedora"])),
            Some(Os::Rocky)
        );
        assert_eq!(Os::of_host(Some("ol"), &like(&["fedora"])), Some(Os::Rhel));
        assert_eq!(
            Os::of_host(Some("opensuse-leap"), &like(&["suse", "opensuse"])),
            Some(Os::Opensuse)
        );
        assert_eq!(
            Os::of_host(Some("linuxmint"), &like(&["ubuntu", "debian"])),
            Some(Os::Ubuntu)
        );
        assert_eq!(Os::of_host(Some("arch"), &[]), None);
        assert_eq!(PuppetSource::Openvox.confdir(), "/etc/puppetlabs/puppet");
        assert_eq!(PuppetSource::Distro.publicdir(), "/var/cache/puppet/public");
    }
}
