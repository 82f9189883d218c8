//! RHEL, Rocky, AlmaLinux, CentOS Stream 8/9: `dnf --installroot`.

use std::path::Path;

use super::agent::{
    distro_source_refused, pe_commands, pe_spec, release_package_url, vendor_agent_package,
};
use super::command::{inside, path_arg};
use super::spec::{Argv, BuildSpec, RootfsBuilder};
use crate::base::{Os, PuppetSource};
use crate::protocol::error::Result;

/// RHEL, Rocky, AlmaLinux, CentOS Stream 8/9: `dnf --installroot`. **Untested here**
/// (this project's machines are Debian); the commands are snapshot-tested.
///
/// How repositories reach an empty installroot: dnf reads its configuration and
/// `reposdir` from the installroot when they exist there and from the host otherwise, so
/// the first `dnf install` uses **the host's repositories** with `$releasever` set to the
/// base's release. This assumes a RHEL-family host whose repositories serve that release
/// and whose GPG keys sign it: simplest, a host of the base's own OS and major release
/// (another major needs that release's keys under the host's /etc/pki/rpm-gpg; a RHEL
/// host needs its subscription's repositories). That is why the release package of the base's own OS
/// is installed first: it brings the OS's repository files and keys (not on RHEL, whose
/// repositories come from subscription-manager). The second `dnf install`, of the agent,
/// names both repository directories explicitly (command-line paths are host paths):
/// the host's, for the OS's packages, and the installroot's, for the vendor's repository.
pub struct DnfBuilder;

/// Packages every RHEL-family base gets (its OS release package aside); `procps-ng` for the
/// agent's `ps` (see [`DEBIAN_PACKAGES`](super::debootstrap::DEBIAN_PACKAGES)).
pub const RHEL_PACKAGES: &[&str] = &["systemd", "dbus", "ca-certificates", "passwd", "procps-ng"];

fn rhel_release_package(os: Os) -> &'static str {
    match os {
        Os::Rocky => "rocky-release",
        Os::Almalinux => "almalinux-release",
        Os::Centos => "centos-stream-release",
        _ => "redhat-release",
    }
}

impl RootfsBuilder for DnfBuilder {
    fn name(&self) -> &'static str {
        "dnf"
    }

    fn commands(&self, spec: &BuildSpec, staging: &Path) -> Result<Vec<Argv>> {
        if spec.puppet_source == PuppetSource::Distro {
            return Err(distro_source_refused(spec));
        }
        let dnf = |reposdir: String, rest: &[&str]| -> Argv {
            let mut out = vec![
                "dnf".to_owned(),
                format!("--installroot={}", path_arg(staging)),
                format!("--releasever={}", spec.release),
                "--setopt=install_weak_deps=False".to_owned(),
                "--setopt=tsflags=nodocs".to_owned(),
                format!("--setopt=reposdir={reposdir}"),
                "-y".to_owned(),
            ];
            out.extend(rest.iter().map(|s| (*s).to_owned()));
            out
        };
        let release_url = release_package_url(spec)?;
        let mut first: Vec<&str> = vec!["install", rhel_release_package(spec.os)];
        first.extend(RHEL_PACKAGES);
        if spec.puppet_source == PuppetSource::Pe {
            first.push("curl");
        }
        if let Some(url) = &release_url {
            first.push(url);
        }
        let mut commands = vec![dnf("/etc/yum.repos.d".to_owned(), &first)];
        if let Some(agent) = vendor_agent_package(spec.puppet_source) {
            commands.push(dnf(
                format!("/etc/yum.repos.d,{}", inside(staging, "/etc/yum.repos.d")),
                &["install", agent],
            ));
        }
        if spec.puppet_source == PuppetSource::Pe {
            commands.extend(pe_commands(pe_spec(spec)?, staging));
        }
        commands.push(vec![
            "dnf".to_owned(),
            format!("--installroot={}", path_arg(staging)),
            "clean".to_owned(),
            "all".to_owned(),
        ]);
        Ok(commands)
    }
}
