//! SLES 15 and openSUSE Leap 15: `zypper --root`.

use std::path::Path;

use super::agent::{
    distro_source_refused, pe_commands, pe_spec, release_package_url, vendor_agent_package,
};
use super::command::{download_path, fetch, inside, path_arg, remove_inside};
use super::spec::{Argv, BuildSpec, RootfsBuilder};
use crate::base::{Os, PuppetSource};
use crate::protocol::error::Result;

/// SLES 15 and openSUSE Leap 15: `zypper --root`. **Untested here** (this project's
/// machines are Debian); the commands are snapshot-tested.
///
/// The empty root gets one repository, the distribution's (`--mirror`; openSUSE Leap's
/// default is download.opensuse.org, SLES has no public one: its repositories need a
/// registration, so give an RMT/SMT or installation-media URL). The vendor's release
/// package is downloaded on the host over verified TLS and installed with `rpm --root`,
/// as the vendors document (`rpm -Uvh <url>`). No key is ever imported automatically:
/// the empty root's rpm database first gets the distribution keys of the host (a SUSE
/// host keeps them in [`SUSE_HOST_KEYS`]), and the vendor's key comes from the release
/// package fetched over verified TLS; zypper then checks every package against them.
pub struct ZypperBuilder;

/// Where a SUSE host keeps its distribution's package signing keys.
pub const SUSE_HOST_KEYS: &str = "/usr/lib/rpm/gnupg/keys";

/// Imports every key file matching `pattern` (a fixed glob, the root given as `$1`, never
/// put into the script) into the rpm database of the root.
fn rpm_import_keys(staging: &Path, pattern: &str) -> Argv {
    vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!(
            "set -e; found=; for key in {pattern}; do [ -f \"$key\" ] || continue; \
             rpm --root \"$1\" --import \"$key\"; found=1; done; \
             [ -n \"$found\" ] || {{ echo \"clone-army: no package signing keys to import\" >&2; exit 1; }}"
        ),
        "sh".to_owned(),
        path_arg(staging),
    ]
}

/// Packages every SUSE base gets (its OS release package aside); `procps` for the agent's
/// `ps` (see [`DEBIAN_PACKAGES`](super::debootstrap::DEBIAN_PACKAGES)).
pub const SUSE_PACKAGES: &[&str] = &["systemd", "dbus-1", "ca-certificates", "shadow", "procps"];

impl RootfsBuilder for ZypperBuilder {
    fn name(&self) -> &'static str {
        "zypper"
    }

    fn commands(&self, spec: &BuildSpec, staging: &Path) -> Result<Vec<Argv>> {
        if spec.puppet_source == PuppetSource::Distro {
            return Err(distro_source_refused(spec));
        }
        let zypper = |rest: &[&str]| -> Argv {
            let mut out = vec![
                "zypper".to_owned(),
                "--root".to_owned(),
                path_arg(staging),
                "--non-interactive".to_owned(),
            ];
            out.extend(rest.iter().map(|s| (*s).to_owned()));
            out
        };
        let release_package = match spec.os {
            Os::Sles => "sles-release",
            _ => "openSUSE-release",
        };
        let mut install: Vec<&str> = vec!["install", "--no-recommends", release_package];
        install.extend(SUSE_PACKAGES);
        if spec.puppet_source == PuppetSource::Pe {
            install.push("curl");
        }
        let mut commands = vec![
            rpm_import_keys(staging, &format!("{SUSE_HOST_KEYS}/gpg-pubkey-*.asc")),
            zypper(&["addrepo", "--refresh", &spec.mirror, "clone-army-os"]),
            zypper(&["refresh"]),
            zypper(&install),
        ];
        if let (Some(url), Some(agent)) = (
            release_package_url(spec)?,
            vendor_agent_package(spec.puppet_source),
        ) {
            let file = download_path(&url);
            commands.push(fetch(&url, &inside(staging, &file), None));
            commands.push(vec![
                "rpm".to_owned(),
                "--root".to_owned(),
                path_arg(staging),
                "--upgrade".to_owned(),
                "--".to_owned(),
                inside(staging, &file),
            ]);
            commands.push(rpm_import_keys(staging, "\"$1\"/etc/pki/rpm-gpg/*"));
            commands.push(zypper(&["refresh"]));
            commands.push(zypper(&["install", "--no-recommends", agent]));
            commands.push(remove_inside(staging, &file));
        }
        if spec.puppet_source == PuppetSource::Pe {
            commands.extend(pe_commands(pe_spec(spec)?, staging));
        }
        commands.push(zypper(&["clean", "--all"]));
        Ok(commands)
    }
}
