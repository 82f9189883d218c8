//! Where the agent comes from: the distribution's package, the vendor's repository (its
//! release package first), or a PE primary server's `install.bash`.

use std::path::Path;

use super::command::{fetch, in_root, inside, path_arg, remove_inside};
use super::finish::AIO_LOCAL_CA;
use super::spec::{Argv, BuildSpec, PeSpec};
use crate::base::{Family, Os, PuppetSource};
use crate::protocol::error::{Error, Result};
use crate::sys::names::DEFAULT_SERVER_PORT;

/// The vendor's agent package for `puppet` / `openvox`; `None` for the other sources.
pub fn vendor_agent_package(source: PuppetSource) -> Option<&'static str> {
    match source {
        PuppetSource::Puppet => Some("puppet-agent"),
        PuppetSource::Openvox => Some("openvox-agent"),
        PuppetSource::Distro | PuppetSource::Pe => None,
    }
}

/// The URL of the vendor's release package (which adds the repository and its signing
/// key) for `puppet` / `openvox` on this OS and release; `None` for the other sources.
/// Names as the vendors publish them; **untested here** (apt.puppet.com,
/// apt.voxpupuli.org and the yum hosts are not reachable from this project's machines).
/// An error for a release the vendor publishes no release package for (by this table).
pub fn release_package_url(spec: &BuildSpec) -> Result<Option<String>> {
    let (apt, yum, prefix) = match spec.puppet_source {
        PuppetSource::Puppet => (
            "https://apt.puppet.com",
            "https://yum.puppet.com",
            "puppet8",
        ),
        PuppetSource::Openvox => (
            "https://apt.voxpupuli.org",
            "https://yum.voxpupuli.org",
            "openvox8",
        ),
        PuppetSource::Distro | PuppetSource::Pe => return Ok(None),
    };
    let major = spec.release.split('.').next().unwrap_or_default();
    let url = match spec.os.family() {
        // Puppet names its .deb by codename, OpenVox by distribution and version.
        Family::Debian if spec.puppet_source == PuppetSource::Puppet => {
            format!("{apt}/{prefix}-release-{}.deb", spec.release)
        }
        Family::Debian => {
            let Some(version) = debian_version_of(spec.os, &spec.release) else {
                return Err(Error::InvalidArgument {
                    field: "release",
                    value: spec.release.clone(),
                    reason: format!(
                        "no known {prefix}-release package for {} {}; known: bullseye, bookworm, trixie, focal, jammy, noble",
                        spec.os.as_str(),
                        spec.release
                    ),
                });
            };
            format!("{apt}/{prefix}-release-{}{version}.deb", spec.os.as_str())
        }
        Family::Rhel => format!("{yum}/{prefix}-release-el-{major}.noarch.rpm"),
        // openSUSE Leap 15.x uses the SLES 15 packages.
        Family::Suse => format!("{yum}/{prefix}-release-sles-{major}.noarch.rpm"),
    };
    Ok(Some(url))
}

/// `12` for bookworm, `24.04` for noble: how OpenVox names its Debian-family release packages.
fn debian_version_of(os: Os, codename: &str) -> Option<&'static str> {
    match (os, codename) {
        (Os::Debian, "bullseye") => Some("11"),
        (Os::Debian, "bookworm") => Some("12"),
        (Os::Debian, "trixie") => Some("13"),
        (Os::Ubuntu, "focal") => Some("20.04"),
        (Os::Ubuntu, "jammy") => Some("22.04"),
        (Os::Ubuntu, "noble") => Some("24.04"),
        _ => None,
    }
}

/// The distribution's own agent package: `puppet-agent` since Debian 12 and Ubuntu 24.04,
/// `puppet` before.
pub fn distro_agent_package(os: Os, release: &str) -> &'static str {
    match (os, release) {
        (Os::Debian, "buster" | "bullseye") | (Os::Ubuntu, "bionic" | "focal" | "jammy") => {
            "puppet"
        }
        _ => "puppet-agent",
    }
}

const PE_INSTALLER: &str = "/root/clone-army-pe-install.bash";

/// PE: fetch `install.bash` from the primary server verifying its CA, put the CA where
/// the agent expects it, run the script inside the staging root with the agent service
/// stopped and not enabled (finish_rootfs enables it, so it starts in each clone, never
/// in the build), then remove the script.
///
/// Ran here on Debian against a stand-in primary (a local TLS server with its own CA and
/// a fake `install.bash`); a real PE `install.bash` is **untested here** (PE cannot be
/// installed on this project's machines). It is assumed to use the CA at
/// [`AIO_LOCAL_CA`] for its own downloads from the primary.
pub(super) fn pe_commands(pe: &PeSpec, staging: &Path) -> Vec<Argv> {
    let url = format!(
        "https://{}:{DEFAULT_SERVER_PORT}/packages/current/install.bash",
        pe.server
    );
    vec![
        fetch(&url, &inside(staging, PE_INSTALLER), Some(&pe.ca_cert)),
        vec![
            "install".to_owned(),
            "-D".to_owned(),
            "-m".to_owned(),
            "0644".to_owned(),
            "--".to_owned(),
            path_arg(&pe.ca_cert),
            inside(staging, AIO_LOCAL_CA),
        ],
        in_root(
            staging,
            &[
                "/bin/bash",
                PE_INSTALLER,
                "--puppet-service-ensure",
                "stopped",
                "--puppet-service-enable",
                "false",
            ],
        ),
        remove_inside(staging, PE_INSTALLER),
    ]
}

pub(super) fn pe_spec(spec: &BuildSpec) -> Result<&PeSpec> {
    spec.pe.as_ref().ok_or_else(|| {
        Error::Internal("puppet source pe without a primary server and CA".to_owned())
    })
}

pub(super) fn distro_source_refused(spec: &BuildSpec) -> Error {
    Error::InvalidArgument {
        field: "puppet-source",
        value: spec.puppet_source.as_str().to_owned(),
        reason: format!(
            "{} has no agent package of its own; use puppet, openvox or pe",
            spec.os.as_str()
        ),
    }
}
