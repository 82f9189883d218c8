//! Base images: read-only root file systems the clones' overlays sit on.

mod build_log;
mod builder;
mod create;
mod disk_space;
pub mod fact_cache;
mod lean_boot;
mod list;
mod remove;

pub use builder::builder_for;
pub use create::{
    create, is_mirror, is_release, release_rule, BaseRequest, MIRROR_PATTERN, MIRROR_RULE,
};
pub use disk_space::MIN_FREE_BYTES;
pub use list::{info, list, table as list_table};
pub use remove::remove;

pub use crate::inventory::os::{Family, Os};

/// Where the base's Puppet agent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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

pub use crate::inventory::bases::{
    read_metadata, read_metadata_in, BaseMetadata, AIO_PUPPET_CONFDIR, AIO_PUPPET_PUBLICDIR,
    DISTRO_PUPPET_CONFDIR, DISTRO_PUPPET_PUBLICDIR,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_without_a_recorded_source_have_the_distros_package() {
        assert_eq!(
            crate::inventory::bases::DEFAULT_PUPPET_SOURCE,
            PuppetSource::Distro.as_str()
        );
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
