//! How a base's root file system is built, per OS family: the exact sequence of commands
//! (a pure function of the [`BuildSpec`], snapshot-tested) and the finishing steps.
//!
//! - Debian and Ubuntu: `debootstrap` (README, "Tested here", says which builders are run for real).
//! - RHEL, Rocky, AlmaLinux, CentOS Stream 8/9: `dnf --installroot` (untested here).
//! - SLES and openSUSE Leap 15: `zypper --root` (untested here).
//!
//! The agent then comes from the distribution (`distro`), from Puppet's or OpenVox's
//! repositories (`puppet`, `openvox`: the vendor's release package first, then the agent
//! from the repository it adds), or from a PE primary server (`pe`: its `install.bash`,
//! fetched with the server's CA verified and run inside the staging root).
//!
//! Commands that run inside the staging root use `systemd-nspawn --register=no
//! --keep-unit` (no machined, no system bus and no systemd as PID 1 needed on the host;
//! /proc, /dev and resolv.conf set up; /tmp is a fresh tmpfs there, so downloads go to
//! /root).
//! Downloads run on the host with `curl --proto =https`, TLS always verified: never `-k`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::lean_boot::lean_boot;
use super::{Family, Os, PuppetSource};
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{ensure_symlink, read_optional, remove_dir_all, write_atomic};
use crate::systemd::units::header;

/// Everything a builder needs, resolved and validated before any command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSpec {
    pub os: Os,
    /// Debian family: a codename (`bookworm`); RHEL family: `8` or `9`; SUSE: `15.6`.
    pub release: String,
    /// Debian family and SUSE: the distribution repository. RHEL family: empty (the
    /// host's dnf repositories are used, see [`DnfBuilder`]).
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

pub fn builder_for(os: Os) -> Box<dyn RootfsBuilder> {
    match os.family() {
        Family::Debian => Box::new(DebootstrapBuilder),
        Family::Rhel => Box::new(DnfBuilder),
        Family::Suse => Box::new(ZypperBuilder),
    }
}

fn argv(parts: &[&str]) -> Argv {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

/// `<staging>/<relative>` as a host path, for commands that run on the host.
fn inside(staging: &Path, relative: &str) -> String {
    path_arg(&staging.join(relative.trim_start_matches('/')))
}

/// A command run inside the staging root (not booted). `--register=no --keep-unit`: no
/// machined and no transient scope, so no system bus is needed (tried on this project's
/// machines, where systemd is not PID 1: without `--keep-unit` nspawn fails with
/// "Failed to open system bus").
fn in_root(staging: &Path, command: &[&str]) -> Argv {
    let mut out = argv(&[
        "systemd-nspawn",
        "--quiet",
        "--register=no",
        "--keep-unit",
        "--resolv-conf=copy-host",
        "--setenv=DEBIAN_FRONTEND=noninteractive",
    ]);
    out.push(format!("--directory={}", path_arg(staging)));
    out.push("--".to_owned());
    out.extend(command.iter().map(|s| (*s).to_owned()));
    out
}

/// A download on the host: TLS verified (with `cacert` when given, else the host's CA
/// store), https only, also across redirects; fails on HTTP errors.
fn fetch(url: &str, dest: &str, cacert: Option<&Path>) -> Argv {
    let mut out = argv(&[
        "curl",
        "--fail",
        "--silent",
        "--show-error",
        "--location",
        "--proto",
        "=https",
        "--proto-redir",
        "=https",
        "--tlsv1.2",
    ]);
    if let Some(cacert) = cacert {
        out.push("--cacert".to_owned());
        out.push(path_arg(cacert));
    }
    out.extend(["--output".to_owned(), dest.to_owned(), url.to_owned()]);
    out
}

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

/// Where a download lands inside the staging root: root's home, which commands run
/// inside it with systemd-nspawn see as the host left it (not /tmp, where nspawn mounts
/// a fresh tmpfs). Removed again before the base is finished.
fn download_path(url: &str) -> String {
    format!("/root/{}", url.rsplit('/').next().unwrap_or("download"))
}

const PE_INSTALLER: &str = "/root/clone-army-pe-install.bash";
/// Where AIO agents (PE's included) look for the CA certificate; `install.bash` finds the
/// CA here and the clones' agents verify the server with it from their first run.
pub const AIO_LOCAL_CA: &str = "/etc/puppetlabs/puppet/ssl/certs/ca.pem";

/// PE: fetch `install.bash` from the primary server verifying its CA, put the CA where
/// the agent expects it, run the script inside the staging root with the agent service
/// stopped and not enabled (finish_rootfs enables it, so it starts in each clone, never
/// in the build), then remove the script.
///
/// Ran here on Debian against a stand-in primary (a local TLS server with its own CA and
/// a fake `install.bash`); a real PE `install.bash` is **untested here** (PE cannot be
/// installed on this project's machines). It is assumed to use the CA at
/// [`AIO_LOCAL_CA`] for its own downloads from the primary.
fn pe_commands(pe: &PeSpec, staging: &Path) -> Vec<Argv> {
    let url = format!("https://{}:8140/packages/current/install.bash", pe.server);
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
        argv(&["rm", "-f", "--"])
            .into_iter()
            .chain([inside(staging, PE_INSTALLER)])
            .collect(),
    ]
}

fn pe_spec(spec: &BuildSpec) -> Result<&PeSpec> {
    spec.pe.as_ref().ok_or_else(|| {
        Error::Internal("puppet source pe without a primary server and CA".to_owned())
    })
}

fn distro_source_refused(spec: &BuildSpec) -> Error {
    Error::InvalidArgument {
        field: "puppet-source",
        value: spec.puppet_source.as_str().to_owned(),
        reason: format!(
            "{} has no agent package of its own; use puppet, openvox or pe",
            spec.os.as_str()
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
            commands.push(vec![
                "rm".to_owned(),
                "-f".to_owned(),
                "--".to_owned(),
                inside(staging, &file),
            ]);
        }
        if spec.puppet_source == PuppetSource::Pe {
            commands.extend(pe_commands(pe_spec(spec)?, staging));
        }
        Ok(commands)
    }
}

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
/// agent's `ps` (see [`DEBIAN_PACKAGES`]).
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
/// `ps` (see [`DEBIAN_PACKAGES`]).
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
            commands.push(vec![
                "rm".to_owned(),
                "-f".to_owned(),
                "--".to_owned(),
                inside(staging, &file),
            ]);
        }
        if spec.puppet_source == PuppetSource::Pe {
            commands.extend(pe_commands(pe_spec(spec)?, staging));
        }
        commands.push(zypper(&["clean", "--all"]));
        Ok(commands)
    }
}

/// What every base needs, whatever built it:
/// - root directory 0755 (a 0700 root makes dbus inside the clone fail with EACCES),
/// - an empty `/etc/machine-id`, so each clone gets its own at boot,
/// - no root password,
/// - no agent SSL state (each clone gets its own key and certificate); only a CA
///   certificate the build put at the AIO agent's `localcacert` on purpose (PE) is kept,
/// - the agent service enabled, so each clone runs the agent daemon,
/// - journald bounded (see [`JOURNALD_DROPIN`]),
/// - no boot work a clone never needs: `/etc` and `/var` stamped current with `/usr`,
///   generators for disks, firmware and boot loaders masked (see [`lean_boot`]).
pub fn finish_rootfs(rootfs: &Path) -> Result<()> {
    fs::set_permissions(rootfs, fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io("set the mode of", rootfs, e))?;
    write_atomic(&rootfs.join("etc/machine-id"), b"", 0o444)?;
    lock_root_password(&rootfs.join("etc/shadow"))?;
    remove_dir_all(&rootfs.join("var/lib/puppet/ssl"))?;
    let aio_ca = rootfs.join(AIO_LOCAL_CA.trim_start_matches('/'));
    let kept_ca = read_optional(&aio_ca)?;
    remove_dir_all(&rootfs.join("etc/puppetlabs/puppet/ssl"))?;
    if let Some(ca) = kept_ca {
        write_atomic(&aio_ca, ca.as_bytes(), 0o644)?;
    }
    enable_agent_service(rootfs)?;
    write_atomic(
        &rootfs.join(JOURNALD_DROPIN),
        journald_dropin().as_bytes(),
        0o644,
    )?;
    lean_boot(rootfs)
}

/// Every clone runs its own journald, which keeps a persistent journal in the clone's
/// upper layer. Its default cap is 10 % of the file system, up to 4 GiB, for each
/// clone: a fleet of hundreds left running for days would fill the disk with logs no
/// one reads (and each journal starts at 8 MiB). A drop-in beside the distribution's
/// `journald.conf` (left untouched) caps each clone at 8 MiB on disk, in files of 2 MiB
/// (the oldest go first), and at 4 MiB in `/run` (memory) before the journal moves to
/// disk at boot.
pub const JOURNALD_DROPIN: &str = "etc/systemd/journald.conf.d/50-clone-army.conf";

fn journald_dropin() -> String {
    format!(
        "{}[Journal]\nSystemMaxUse=8M\nSystemMaxFileSize=2M\nRuntimeMaxUse=4M\n",
        header()
    )
}

/// Makes sure root's password field is locked (`*` or starting with `!`).
fn lock_root_password(shadow: &Path) -> Result<()> {
    let Some(text) = read_optional(shadow)? else {
        return Ok(());
    };
    let mut changed = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut fields: Vec<&str> = line.split(':').collect();
            if fields.first() == Some(&"root") && fields.len() > 1 {
                let password = fields[1];
                if password != "*" && !password.starts_with('!') {
                    fields[1] = "*";
                    changed = true;
                }
            }
            fields.join(":")
        })
        .collect();
    if changed {
        // Keep the distribution's mode and owner: 0640 root:shadow on Debian, 0000 on RHEL.
        let meta = fs::metadata(shadow).map_err(|e| Error::io("inspect", shadow, e))?;
        write_atomic(
            shadow,
            (lines.join("\n") + "\n").as_bytes(),
            meta.mode() & 0o7777,
        )?;
        std::os::unix::fs::chown(shadow, Some(meta.uid()), Some(meta.gid()))
            .map_err(|e| Error::io("set the owner of", shadow, e))?;
    }
    Ok(())
}

/// `puppet.service` enabled the way `systemctl enable` would: a symlink in the
/// `.wants` directory of its `WantedBy=` target.
fn enable_agent_service(rootfs: &Path) -> Result<()> {
    let candidates = [
        "/lib/systemd/system/puppet.service",
        "/usr/lib/systemd/system/puppet.service",
    ];
    let Some(unit) = candidates
        .iter()
        .find(|c| rootfs.join(c.trim_start_matches('/')).is_file())
    else {
        return Err(Error::CommandFailed {
            program: "base build".to_owned(),
            detail: "the base has no puppet.service: was the agent package installed?".to_owned(),
            output: None,
        });
    };
    let text = read_optional(&rootfs.join(unit.trim_start_matches('/')))?.unwrap_or_default();
    let wanted_by = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("WantedBy="))
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or("multi-user.target")
        .to_owned();
    let link = rootfs
        .join("etc/systemd/system")
        .join(format!("{wanted_by}.wants"))
        .join("puppet.service");
    ensure_symlink(&link, Path::new(unit))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAGING: &str = "/var/lib/puppet-clone-army/.staging-b1";

    fn spec(os: Os, release: &str, mirror: &str, source: PuppetSource) -> BuildSpec {
        BuildSpec {
            os,
            release: release.into(),
            mirror: mirror.into(),
            puppet_source: source,
            pe: (source == PuppetSource::Pe).then(|| PeSpec {
                server: "pe-primary.example.com".into(),
                ca_cert: "/root/pe-ca.pem".into(),
            }),
        }
    }

    fn commands(spec: &BuildSpec) -> Vec<Argv> {
        builder_for(spec.os)
            .commands(spec, Path::new(STAGING))
            .unwrap()
    }

    /// The exact command sequence of every builder × puppet source that makes sense,
    /// one snapshot each. Only Debian + distro runs for real on this project's machines.
    #[test]
    fn command_sequences() {
        use PuppetSource::*;
        let debian = "http://deb.debian.org/debian";
        let ubuntu = "http://archive.ubuntu.com/ubuntu";
        let leap = "http://download.opensuse.org/distribution/leap/15.6/repo/oss/";
        let sles =
            "https://rmt.example.com/repo/SUSE/Products/SLE-Product-SLES/15-SP6/x86_64/product/";
        let cases = [
            (
                "debian_bookworm_distro",
                spec(Os::Debian, "bookworm", debian, Distro),
            ),
            (
                "debian_bookworm_puppet",
                spec(Os::Debian, "bookworm", debian, Puppet),
            ),
            (
                "debian_bookworm_openvox",
                spec(Os::Debian, "bookworm", debian, Openvox),
            ),
            (
                "debian_bookworm_pe",
                spec(Os::Debian, "bookworm", debian, Pe),
            ),
            (
                "ubuntu_noble_distro",
                spec(Os::Ubuntu, "noble", ubuntu, Distro),
            ),
            (
                "ubuntu_jammy_distro",
                spec(Os::Ubuntu, "jammy", ubuntu, Distro),
            ),
            (
                "ubuntu_noble_puppet",
                spec(Os::Ubuntu, "noble", ubuntu, Puppet),
            ),
            (
                "ubuntu_noble_openvox",
                spec(Os::Ubuntu, "noble", ubuntu, Openvox),
            ),
            ("ubuntu_noble_pe", spec(Os::Ubuntu, "noble", ubuntu, Pe)),
            ("rocky_9_puppet", spec(Os::Rocky, "9", "", Puppet)),
            ("rocky_9_openvox", spec(Os::Rocky, "9", "", Openvox)),
            ("almalinux_8_openvox", spec(Os::Almalinux, "8", "", Openvox)),
            ("rhel_9_puppet", spec(Os::Rhel, "9", "", Puppet)),
            ("centos_9_openvox", spec(Os::Centos, "9", "", Openvox)),
            ("rhel_9_pe", spec(Os::Rhel, "9", "", Pe)),
            (
                "opensuse_15_6_puppet",
                spec(Os::Opensuse, "15.6", leap, Puppet),
            ),
            (
                "opensuse_15_6_openvox",
                spec(Os::Opensuse, "15.6", leap, Openvox),
            ),
            ("sles_15_6_openvox", spec(Os::Sles, "15.6", sles, Openvox)),
            ("sles_15_6_pe", spec(Os::Sles, "15.6", sles, Pe)),
        ];
        for (name, spec) in cases {
            let rendered: Vec<String> = commands(&spec).iter().map(|a| a.join(" ")).collect();
            insta::assert_debug_snapshot!(name, rendered);
        }
    }

    #[test]
    fn debian_distro_is_one_debootstrap_call() {
        let all = commands(&spec(
            Os::Debian,
            "bookworm",
            "http://deb.debian.org/debian",
            PuppetSource::Distro,
        ));
        assert_eq!(all.len(), 1);
        assert_eq!(
            all[0],
            [
                "debootstrap",
                "--variant=minbase",
                "--include=systemd,systemd-sysv,dbus,ca-certificates,procps,puppet-agent",
                "--components=main",
                "--keyring=/usr/share/keyrings/debian-archive-keyring.gpg",
                "--force-check-gpg",
                "bookworm",
                STAGING,
                "http://deb.debian.org/debian",
            ]
        );
    }

    /// Every package of every base is verified: debootstrap fails without a signature,
    /// and no key is ever taken on trust from a repository.
    #[test]
    fn no_build_takes_packages_or_keys_on_trust() {
        for (os, release) in [
            (Os::Debian, "bookworm"),
            (Os::Ubuntu, "noble"),
            (Os::Rocky, "9"),
            (Os::Sles, "15.6"),
            (Os::Opensuse, "15.6"),
        ] {
            for source in [
                PuppetSource::Puppet,
                PuppetSource::Openvox,
                PuppetSource::Pe,
            ] {
                for argv in commands(&spec(os, release, "https://m.example/", source)) {
                    assert!(
                        !argv.iter().any(|a| a.contains("auto-import")
                            || a == "--allow-unauthenticated"
                            || a == "--no-check-gpg"
                            || a == "--nogpgcheck"),
                        "{argv:?}"
                    );
                    if argv[0] == "debootstrap" {
                        assert!(argv.contains(&"--force-check-gpg".to_owned()), "{argv:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn ubuntu_gets_universe_for_the_agent() {
        let all = commands(&spec(
            Os::Ubuntu,
            "noble",
            "http://archive.ubuntu.com/ubuntu",
            PuppetSource::Distro,
        ));
        assert!(all[0].contains(&"--components=main,universe".to_owned()));
        assert!(
            all[0].contains(&"--keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg".to_owned())
        );
        assert!(all[0].contains(&"--force-check-gpg".to_owned()));
        assert!(all[0][2].ends_with(",puppet-agent"));
    }

    #[test]
    fn pe_verifies_the_servers_ca_and_never_skips_tls() {
        for os in [Os::Debian, Os::Rocky, Os::Sles] {
            let all = commands(&spec(os, "9", "http://m.example/", PuppetSource::Pe));
            let fetch = all
                .iter()
                .find(|a| a[0] == "curl")
                .expect("a download of install.bash");
            assert!(fetch
                .windows(2)
                .any(|w| w[0] == "--cacert" && w[1] == "/root/pe-ca.pem"));
            assert_eq!(
                fetch.last().unwrap(),
                "https://pe-primary.example.com:8140/packages/current/install.bash"
            );
            for argv in &all {
                assert!(
                    !argv.iter().any(|a| a == "-k" || a == "--insecure"),
                    "{argv:?}"
                );
            }
            let run = all.iter().find(|a| a[0] == "systemd-nspawn").unwrap();
            assert!(run.ends_with(&[
                "--puppet-service-ensure".to_owned(),
                "stopped".to_owned(),
                "--puppet-service-enable".to_owned(),
                "false".to_owned()
            ]));
        }
    }

    #[test]
    fn distro_is_refused_where_there_is_no_agent_package() {
        for os in [Os::Rocky, Os::Opensuse] {
            let error = builder_for(os)
                .commands(
                    &spec(os, "9", "http://m.example/", PuppetSource::Distro),
                    Path::new(STAGING),
                )
                .unwrap_err();
            assert_eq!(error.field(), Some("puppet-source"));
        }
        let error = release_package_url(&spec(
            Os::Debian,
            "sid",
            "http://m.example/",
            PuppetSource::Openvox,
        ))
        .unwrap_err();
        assert_eq!(error.field(), Some("release"));
    }

    #[test]
    fn finishing_a_rootfs() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("rootfs");
        fs::create_dir(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o700)).unwrap();
        for dir in ["etc", "usr", "var"] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        fs::write(root.join("etc/machine-id"), "0123456789abcdef\n").unwrap();
        fs::write(
            root.join("etc/shadow"),
            "root:$6$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
        )
        .unwrap();
        fs::set_permissions(root.join("etc/shadow"), fs::Permissions::from_mode(0o640)).unwrap();
        fs::create_dir_all(root.join("var/lib/puppet/ssl/certs")).unwrap();
        // An AIO agent's SSL dir: only the CA the PE build put there stays.
        let aio_ssl = root.join("etc/puppetlabs/puppet/ssl");
        fs::create_dir_all(aio_ssl.join("certs")).unwrap();
        fs::create_dir_all(aio_ssl.join("private_keys")).unwrap();
        fs::write(aio_ssl.join("certs/ca.pem"), "CA\n").unwrap();
        fs::write(aio_ssl.join("private_keys/base.pem"), "KEY\n").unwrap();
        fs::create_dir_all(root.join("lib/systemd/system")).unwrap();
        fs::write(
            root.join("lib/systemd/system/puppet.service"),
            "[Service]\nExecStart=/usr/bin/puppet agent\n[Install]\nWantedBy=multi-user.target\n",
        )
        .unwrap();

        finish_rootfs(&root).unwrap();

        assert_eq!(fs::metadata(&root).unwrap().mode() & 0o7777, 0o755);
        assert_eq!(fs::read(root.join("etc/machine-id")).unwrap(), b"");
        let shadow = fs::read_to_string(root.join("etc/shadow")).unwrap();
        assert!(shadow.starts_with("root:*:19000:"), "{shadow}");
        assert!(shadow.contains("daemon:*:"));
        assert!(!root.join("var/lib/puppet/ssl").exists());
        assert_eq!(
            fs::read_to_string(aio_ssl.join("certs/ca.pem")).unwrap(),
            "CA\n"
        );
        assert!(!aio_ssl.join("private_keys").exists());
        assert_eq!(
            fs::metadata(root.join("etc/shadow")).unwrap().mode() & 0o7777,
            0o640
        );
        assert_eq!(
            fs::read_link(root.join("etc/systemd/system/multi-user.target.wants/puppet.service"))
                .unwrap(),
            Path::new("/lib/systemd/system/puppet.service")
        );
        let journald = fs::read_to_string(root.join(JOURNALD_DROPIN)).unwrap();
        assert!(crate::systemd::units::is_ours(&journald), "{journald}");
        assert!(
            journald
                .ends_with("[Journal]\nSystemMaxUse=8M\nSystemMaxFileSize=2M\nRuntimeMaxUse=4M\n"),
            "{journald}"
        );
        assert_eq!(
            fs::metadata(root.join(JOURNALD_DROPIN)).unwrap().mode() & 0o7777,
            0o644
        );
        let usr_time = fs::metadata(root.join("usr")).unwrap().modified().unwrap();
        for stamp in ["etc/.updated", "var/.updated"] {
            let time = fs::metadata(root.join(stamp)).unwrap().modified().unwrap();
            assert_eq!(time, usr_time, "{stamp}");
        }
    }

    #[test]
    fn a_rootfs_without_the_agent_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let error = finish_rootfs(dir.path()).unwrap_err();
        assert!(error.to_string().contains("puppet.service"), "{error}");
    }
}
