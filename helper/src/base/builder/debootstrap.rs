//! Debian and Ubuntu: `debootstrap --variant=minbase`.

use std::path::Path;

use super::agent::{
    distro_agent_package, pe_commands, pe_spec, release_package_url, vendor_agent_package,
};
use super::command::{download_path, fetch, in_root, inside, path_arg, remove_inside};
use super::spec::{Argv, BuildSpec, RootfsBuilder};
use crate::base::{Os, PuppetSource};
use crate::protocol::error::Result;

/// The distribution's archive keyring debootstrap checks the Release file with, and the
/// package that installs it on a Debian or Ubuntu host.
pub fn archive_keyring(os: Os) -> (&'static str, &'static str) {
    match os {
        Os::Ubuntu => (
            "/usr/share/keyrings/ubuntu-archive-keyring.gpg",
            "ubuntu-keyring",
        ),
        _ => (
            "/usr/share/keyrings/debian-archive-keyring.gpg",
            "debian-archive-keyring",
        ),
    }
}

/// Debian and Ubuntu: `debootstrap --variant=minbase`.
pub struct DebootstrapBuilder;

/// Packages every Debian-family base gets on top of `minbase` (the agent aside).
///
/// `procps` because the agent's run lock calls `ps` to tell a live lock from a stale one:
/// without it `puppet agent -t` beside a scheduled run fails with "ps: No such file".
pub const DEBIAN_PACKAGES: &[&str] = &[
    "systemd",
    "systemd-sysv",
    "dbus",
    "ca-certificates",
    "procps",
];

impl RootfsBuilder for DebootstrapBuilder {
    fn name(&self) -> &'static str {
        "debootstrap"
    }

    fn trust_anchors(&self, spec: &BuildSpec) -> Vec<(&'static str, &'static str)> {
        vec![archive_keyring(spec.os)]
    }

    fn commands(&self, spec: &BuildSpec, staging: &Path) -> Result<Vec<Argv>> {
        // Ubuntu keeps puppet-agent in universe.
        let components = match spec.os {
            Os::Ubuntu => "main,universe",
            _ => "main",
        };
        let mut include: Vec<&str> = DEBIAN_PACKAGES.to_vec();
        match spec.puppet_source {
            PuppetSource::Distro => include.push(distro_agent_package(spec.os, &spec.release)),
            // install.bash needs curl inside the root, and gnupg for the apt key of the
            // PE package repository it adds.
            PuppetSource::Pe => include.extend(["curl", "gnupg"]),
            PuppetSource::Puppet | PuppetSource::Openvox => {}
        }
        // Without a keyring debootstrap only warns and goes on unverified: name it, and
        // make a missing signature fatal.
        let mut commands = vec![vec![
            "debootstrap".to_owned(),
            "--variant=minbase".to_owned(),
            format!("--include={}", include.join(",")),
            format!("--components={components}"),
            format!("--keyring={}", archive_keyring(spec.os).0),
            "--force-check-gpg".to_owned(),
            spec.release.clone(),
            path_arg(staging),
            spec.mirror.clone(),
        ]];
        if let (Some(url), Some(agent)) = (
            release_package_url(spec)?,
            vendor_agent_package(spec.puppet_source),
        ) {
            let file = download_path(&url);
            commands.push(fetch(&url, &inside(staging, &file), None));
            commands.push(in_root(staging, &["dpkg", "--install", &file]));
            commands.push(in_root(staging, &["apt-get", "update"]));
            commands.push(in_root(
                staging,
                &["apt-get", "install", "-y", "--no-install-recommends", agent],
            ));
            commands.push(in_root(staging, &["apt-get", "clean"]));
            commands.push(remove_inside(staging, &file));
        }
        if spec.puppet_source == PuppetSource::Pe {
            commands.extend(pe_commands(pe_spec(spec)?, staging));
        }
        Ok(commands)
    }
}
