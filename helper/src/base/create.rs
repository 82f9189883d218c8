//! `base create`: run the builder's commands into a staging directory, finish it, rename
//! it into place.

use std::fs;
use std::path::{Path, PathBuf};

use super::build_log::BuildLog;
use super::builder::command::step_name;
use super::builder::{release_package_url, BuildSpec, PeSpec};
use super::{builder_for, disk_space, info, BaseMetadata, Family, Os, PuppetSource};
use crate::context::Context;
use crate::host::os as host;
use crate::protocol::answers::BaseCreated;
use crate::protocol::error::{Error, Result};
use crate::sys::clock::{Clock, SystemClock};
use crate::sys::faults;
use crate::sys::fsutil::{create_dir_all, remove_dir_all, write_atomic};
use crate::sys::names::{validate_base_name, validate_hostname};
use crate::sys::paths::{Layout, BASE_METADATA, STATE_DIR};
use crate::sys::progress::Progress;
use crate::sys::time::rfc3339_utc;

/// What the caller asked for; `None` means "like the host".
#[derive(Debug, Clone)]
pub struct BaseRequest {
    pub name: String,
    pub os: Option<Os>,
    pub release: Option<String>,
    pub mirror: Option<String>,
    /// `None`: the distribution's package where there is one (Debian, Ubuntu).
    pub puppet_source: Option<PuppetSource>,
    /// PE primary server (`--server`); required for, and only for, `pe`.
    pub server: Option<String>,
    /// The PE primary server's CA certificate (`--pe-ca-cert`); required for `pe`.
    pub pe_ca_cert: Option<PathBuf>,
}

/// A base is built only from packages the build can verify: its trust anchors (an
/// archive keyring, say) must be on the host before anything is touched.
fn refuse_unverifiable(
    layout: &crate::sys::paths::Layout,
    builder: &dyn super::builder::RootfsBuilder,
    spec: &super::builder::BuildSpec,
) -> Result<()> {
    for (file, package) in builder.trust_anchors(spec) {
        if !layout.fs(file).is_file() {
            return Err(Error::Unsupported {
                what: format!("building a verified {} base", spec.os.as_str()),
                detail: format!(
                    "{file} is missing on this host: install the package {package} (a base is \
                     never built from packages that cannot be verified)"
                ),
            });
        }
    }
    Ok(())
}

/// `base create`, reporting each of the builder's commands as a step and finishing the
/// root file system as the last.
pub fn create(
    ctx: &Context,
    request: &BaseRequest,
    progress: &dyn Progress,
) -> Result<BaseCreated> {
    validate_base_name("name", &request.name)?;
    let layout = &ctx.layout;
    let (metadata, spec) = resolve(layout, request)?;
    let builder = builder_for(spec.os);
    refuse_unverifiable(layout, &*builder, &spec)?;
    let _lock = ctx.lock()?;

    let final_dir = layout.fs(layout.base_dir(&request.name));
    if let Some(base) = info(layout, &request.name)? {
        return Ok(BaseCreated {
            base,
            changed: false,
        });
    }
    if final_dir.exists() {
        return Err(Error::AlreadyExists {
            what: "base",
            name: request.name.clone(),
            detail: format!(
                "{} exists but has no {BASE_METADATA} (not made by clone-army, or damaged); remove it first",
                final_dir.display()
            ),
        });
    }

    let staging = layout.fs(layout.staging_dir(&request.name));
    remove_dir_all(&staging)?;
    let state_dir = layout.fs(STATE_DIR);
    disk_space::check_before_build(&request.name, &state_dir)?;
    let mut log = BuildLog::start(layout, &request.name)?;
    let built = (|| {
        create_dir_all(&staging, 0o755)?;
        faults::after("base-create:staging-created");
        let commands = builder.commands(&spec, &staging)?;
        let steps = commands.len() + 1;
        for (index, argv) in commands.iter().enumerate() {
            progress.step(&step_name(argv), index + 1, steps);
            log.run(argv)?;
        }
        faults::after("base-create:builder-ran");
        progress.step("finishing the root file system", steps, steps);
        builder.post_steps(&staging)?;
        faults::after("base-create:rootfs-finished");
        let json =
            serde_json::to_string_pretty(&metadata).map_err(|e| Error::Internal(e.to_string()))?;
        write_atomic(
            &staging.join(BASE_METADATA),
            (json + "\n").as_bytes(),
            0o644,
        )?;
        faults::after("base-create:metadata-written");
        fs::rename(&staging, &final_dir)
            .map_err(|e| Error::io("rename into place", &final_dir, e))?;
        faults::after("base-create:renamed");
        Ok(())
    })();
    if let Err(error) = built {
        // Measured before the staging directory goes: what filled the disk is still there.
        let free = disk_space::free_bytes(&state_dir);
        log.keep_tool_logs(&staging);
        let _ = remove_dir_all(&staging);
        return Err(disk_space::build_failure(
            &request.name,
            &state_dir,
            free,
            error,
        ));
    }
    let base = info(layout, &request.name)?.ok_or_else(|| {
        Error::Internal(format!(
            "base {:?} vanished right after it was built",
            request.name
        ))
    })?;
    Ok(BaseCreated {
        base,
        changed: true,
    })
}

/// Fills in the host's defaults and checks every value that reaches a command line.
fn resolve(layout: &Layout, request: &BaseRequest) -> Result<(BaseMetadata, BuildSpec)> {
    let host_os = host::read_os_release(layout)?;
    let host_family = Os::of_host(host_os.id.as_deref(), &host_os.id_like);
    let os = match (request.os, host_family) {
        (Some(os), _) | (None, Some(os)) => os,
        (None, None) => {
            return Err(Error::InvalidArgument {
                field: "os",
                value: host_os.id.unwrap_or_default(),
                reason: "the host is not of a family clone-army builds bases for; give --os"
                    .to_owned(),
            })
        }
    };
    let family = os.family();
    // Debian and Ubuntu differ in releases and mirrors; within the RHEL and SUSE families
    // the host's major release is a fair default (a Rocky 9 host builds AlmaLinux 9).
    let like_host = host_family == Some(os)
        || (family != Family::Debian && host_family.map(Os::family) == Some(family));
    let release = match (&request.release, like_host) {
        (Some(release), _) => release.clone(),
        (None, true) => match family {
            Family::Debian => host_os.version_codename.clone().unwrap_or_default(),
            // `9.4` → `9`: dnf's $releasever for the major release.
            Family::Rhel => host_os
                .version_id
                .as_deref()
                .and_then(|v| v.split('.').next())
                .unwrap_or_default()
                .to_owned(),
            Family::Suse => host_os.version_id.clone().unwrap_or_default(),
        },
        (None, false) => String::new(),
    };
    validate_release(family, &release)?;
    let mirror = match (&request.mirror, family) {
        (Some(_), Family::Rhel) => {
            return Err(Error::InvalidArgument {
                field: "mirror",
                value: request.mirror.clone().unwrap_or_default(),
                reason: "RHEL-family bases are built from the host's dnf repositories; configure a mirror there".to_owned(),
            })
        }
        (None, Family::Rhel) => String::new(),
        (Some(mirror), _) => mirror.clone(),
        (None, _) => {
            let from_host = if like_host && family == Family::Debian {
                host::pick_mirror(&host::read_apt_sources(layout)?, &release)
            } else {
                None
            };
            match from_host.or_else(|| default_mirror(os, &release)) {
                Some(mirror) => mirror,
                None => {
                    return Err(Error::InvalidArgument {
                        field: "mirror",
                        value: String::new(),
                        reason: format!(
                            "{} has no public repository; give --mirror (an RMT/SMT or installation-media URL)",
                            os.as_str()
                        ),
                    })
                }
            }
        }
    };
    if family != Family::Rhel {
        validate_mirror(&mirror)?;
    }
    let puppet_source = match (request.puppet_source, family) {
        (Some(source), _) => source,
        (None, Family::Debian) => PuppetSource::Distro,
        (None, _) => {
            return Err(Error::InvalidArgument {
                field: "puppet-source",
                value: String::new(),
                reason: format!(
                "{} has no agent package of its own; give --puppet-source puppet, openvox or pe",
                os.as_str()
            ),
            })
        }
    };
    let pe = resolve_pe(request, puppet_source)?;
    let spec = BuildSpec {
        os,
        release: release.clone(),
        mirror: mirror.clone(),
        puppet_source,
        pe,
    };
    // Refuses a source/OS/release without a known release package or agent package now,
    // before anything is touched on disk.
    release_package_url(&spec)?;
    builder_for(os).commands(&spec, Path::new("/"))?;
    let builder = builder_for(os);
    let created_at = SystemClock::new().now();
    let metadata = BaseMetadata {
        name: request.name.clone(),
        os: os.as_str().to_owned(),
        release,
        mirror,
        puppet_source: puppet_source.as_str().to_owned(),
        puppet_confdir: puppet_source.confdir().to_owned(),
        puppet_publicdir: puppet_source.publicdir().to_owned(),
        created_at: rfc3339_utc(created_at),
        builder: builder.name().to_owned(),
    };
    Ok((metadata, spec))
}

/// `--server` and `--pe-ca-cert`: both required for `pe`, refused otherwise. The CA file
/// must hold a PEM certificate; it is what curl verifies the primary server with.
fn resolve_pe(request: &BaseRequest, source: PuppetSource) -> Result<Option<PeSpec>> {
    if source != PuppetSource::Pe {
        for (field, given) in [
            ("server", request.server.is_some()),
            ("pe-ca-cert", request.pe_ca_cert.is_some()),
        ] {
            if given {
                return Err(Error::InvalidArgument {
                    field,
                    value: String::new(),
                    reason: "only used with --puppet-source pe".to_owned(),
                });
            }
        }
        return Ok(None);
    }
    let Some(server) = &request.server else {
        return Err(Error::InvalidArgument {
            field: "server",
            value: String::new(),
            reason: "--puppet-source pe needs --server, the PE primary server".to_owned(),
        });
    };
    validate_hostname("server", server)?;
    let Some(ca_cert) = &request.pe_ca_cert else {
        return Err(Error::InvalidArgument {
            field: "pe-ca-cert",
            value: String::new(),
            reason: "--puppet-source pe needs --pe-ca-cert, the primary server's CA certificate (PEM), to verify it; TLS is never skipped".to_owned(),
        });
    };
    let bad = |reason: String| Error::InvalidArgument {
        field: "pe-ca-cert",
        value: ca_cert.display().to_string(),
        reason,
    };
    let ca_cert = std::path::absolute(ca_cert).map_err(|e| bad(e.to_string()))?;
    let text = fs::read_to_string(&ca_cert).map_err(|e| bad(format!("cannot read it: {e}")))?;
    if !text.contains("-----BEGIN CERTIFICATE-----") {
        return Err(bad("it holds no PEM certificate".to_owned()));
    }
    Ok(Some(PeSpec {
        server: server.clone(),
        ca_cert,
    }))
}

/// The distribution's repository when it has a public one.
pub fn default_mirror(os: Os, release: &str) -> Option<String> {
    match os {
        Os::Debian => Some("http://deb.debian.org/debian".to_owned()),
        Os::Ubuntu => Some("http://archive.ubuntu.com/ubuntu".to_owned()),
        Os::Opensuse => Some(format!(
            "http://download.opensuse.org/distribution/leap/{release}/repo/oss/"
        )),
        _ => None,
    }
}

/// The release a family's bases are built from, as a pattern for the Puppet side
/// (`clone-army schema`) and in words: what [`is_release`] takes.
pub fn release_rule(family: Family) -> (&'static str, &'static str) {
    match family {
        Family::Debian => ("^[a-z][a-z0-9.-]*$", "a release codename such as bookworm"),
        Family::Rhel => ("^(8|9)$", "8 or 9"),
        Family::Suse => ("^15[0-9]*(\\.[0-9]+)?$", "a SUSE 15 release such as 15.6"),
    }
}

/// Whether `release` names a release of `family` ([`release_rule`]).
pub fn is_release(family: Family, release: &str) -> bool {
    match family {
        Family::Debian => {
            release
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase())
                && release
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        }
        Family::Rhel => matches!(release, "8" | "9"),
        Family::Suse => {
            release.split('.').count() <= 2
                && release
                    .split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
                && release.starts_with("15")
        }
    }
}

fn validate_release(family: Family, release: &str) -> Result<()> {
    if is_release(family, release) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            field: "release",
            value: release.to_owned(),
            reason: format!("expected {} (give --release)", release_rule(family).1),
        })
    }
}

/// What `--mirror` may be, as a pattern for the Puppet side (`clone-army schema`): what
/// [`is_mirror`] takes.
pub const MIRROR_PATTERN: &str = "^(https?://|file:/)[^[:space:][:cntrl:]]*$";

/// What `--mirror` may be, in words.
pub const MIRROR_RULE: &str = "an http://, https:// or file:/ URL";

/// Whether `mirror` is a URL the builders can take as one argument ([`MIRROR_PATTERN`]).
pub fn is_mirror(mirror: &str) -> bool {
    ["http://", "https://", "file:/"]
        .iter()
        .any(|s| mirror.starts_with(s))
        && !mirror.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn validate_mirror(mirror: &str) -> Result<()> {
    if is_mirror(mirror) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            field: "mirror",
            value: mirror.to_owned(),
            reason: format!("expected {MIRROR_RULE}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::progress::Recorded;

    fn host(dir: &Path, os_release: &str, sources: &str) -> Layout {
        fs::create_dir_all(dir.join("etc/apt/sources.list.d")).unwrap();
        fs::write(dir.join("etc/os-release"), os_release).unwrap();
        fs::write(dir.join("etc/apt/sources.list.d/debian.sources"), sources).unwrap();
        Layout::under(dir)
    }

    fn request(os: Option<Os>) -> BaseRequest {
        BaseRequest {
            name: "b1".into(),
            os,
            release: None,
            mirror: None,
            puppet_source: None,
            server: None,
            pe_ca_cert: None,
        }
    }

    #[test]
    fn defaults_come_from_the_host() {
        let dir = tempfile::tempdir().unwrap();
        let layout = host(
            dir.path(),
            "ID=debian\nVERSION_CODENAME=bookworm\n",
            "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n",
        );
        let (metadata, _) = resolve(&layout, &request(None)).unwrap();
        assert_eq!(metadata.os, "debian");
        assert_eq!(metadata.release, "bookworm");
        assert_eq!(metadata.mirror, "http://mirror.example/debian");
        assert_eq!(metadata.puppet_confdir, "/etc/puppet");

        // Another family than the host's: its own default mirror, and a release is needed.
        let error = resolve(&layout, &request(Some(Os::Ubuntu))).unwrap_err();
        assert_eq!(error.field(), Some("release"));
        let mut ubuntu = request(Some(Os::Ubuntu));
        ubuntu.release = Some("noble".into());
        let (metadata, _) = resolve(&layout, &ubuntu).unwrap();
        assert_eq!(metadata.mirror, "http://archive.ubuntu.com/ubuntu");
    }

    #[test]
    fn bad_values_never_reach_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let layout = host(dir.path(), "ID=debian\nVERSION_CODENAME=bookworm\n", "");
        let mut bad = request(None);
        bad.mirror = Some("--foreign".into());
        assert_eq!(resolve(&layout, &bad).unwrap_err().field(), Some("mirror"));
        let mut bad = request(None);
        bad.release = Some("--x".into());
        assert_eq!(resolve(&layout, &bad).unwrap_err().field(), Some("release"));
        assert_eq!(
            resolve(&layout, &request(None)).unwrap().0.mirror,
            "http://deb.debian.org/debian"
        );
    }

    #[test]
    fn rhel_and_suse_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let layout = host(
            dir.path(),
            "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\n",
            "",
        );
        // No agent package in the distribution: the source must be given.
        let error = resolve(&layout, &request(None)).unwrap_err();
        assert_eq!(error.field(), Some("puppet-source"));
        let mut req = request(None);
        req.puppet_source = Some(PuppetSource::Openvox);
        let (metadata, spec) = resolve(&layout, &req).unwrap();
        assert_eq!(
            (metadata.os.as_str(), metadata.release.as_str()),
            ("rocky", "9")
        );
        assert_eq!(metadata.mirror, "");
        assert_eq!(metadata.builder, "dnf");
        assert_eq!(metadata.puppet_confdir, "/etc/puppetlabs/puppet");
        assert_eq!(metadata.puppet_publicdir, "/opt/puppetlabs/puppet/public");
        assert_eq!(spec.os, Os::Rocky);
        // AlmaLinux on a Rocky host: the host's major release.
        req.os = Some(Os::Almalinux);
        assert_eq!(resolve(&layout, &req).unwrap().0.release, "9");
        req.release = Some("10".into());
        assert_eq!(resolve(&layout, &req).unwrap_err().field(), Some("release"));
        req.release = None;
        req.mirror = Some("http://m.example/".into());
        assert_eq!(resolve(&layout, &req).unwrap_err().field(), Some("mirror"));

        // openSUSE Leap from a Debian host: release needed, public default mirror.
        let layout = host(dir.path(), "ID=debian\nVERSION_CODENAME=bookworm\n", "");
        let mut leap = request(Some(Os::Opensuse));
        leap.puppet_source = Some(PuppetSource::Puppet);
        assert_eq!(
            resolve(&layout, &leap).unwrap_err().field(),
            Some("release")
        );
        leap.release = Some("15.6".into());
        assert_eq!(
            resolve(&layout, &leap).unwrap().0.mirror,
            "http://download.opensuse.org/distribution/leap/15.6/repo/oss/"
        );
        // SLES has no public repository.
        let mut sles = leap.clone();
        sles.os = Some(Os::Sles);
        assert_eq!(resolve(&layout, &sles).unwrap_err().field(), Some("mirror"));
    }

    #[test]
    fn pe_needs_the_master_and_a_ca_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let layout = host(dir.path(), "ID=debian\nVERSION_CODENAME=bookworm\n", "");
        let mut req = request(None);
        req.puppet_source = Some(PuppetSource::Pe);
        assert_eq!(resolve(&layout, &req).unwrap_err().field(), Some("server"));
        req.server = Some("pe.example.com".into());
        assert_eq!(
            resolve(&layout, &req).unwrap_err().field(),
            Some("pe-ca-cert")
        );
        let ca = dir.path().join("ca.pem");
        fs::write(&ca, "not a certificate\n").unwrap();
        req.pe_ca_cert = Some(ca.clone());
        assert_eq!(
            resolve(&layout, &req).unwrap_err().field(),
            Some("pe-ca-cert")
        );
        fs::write(
            &ca,
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let (metadata, spec) = resolve(&layout, &req).unwrap();
        assert_eq!(metadata.puppet_source, "pe");
        assert_eq!(metadata.puppet_confdir, "/etc/puppetlabs/puppet");
        assert_eq!(spec.pe.unwrap().ca_cert, ca);
        // And neither is taken without pe.
        let mut distro = request(None);
        distro.server = Some("pe.example.com".into());
        assert_eq!(
            resolve(&layout, &distro).unwrap_err().field(),
            Some("server")
        );
    }

    #[test]
    fn failed_build_removes_staging() {
        let dir = tempfile::tempdir().unwrap();
        let layout = host(dir.path(), "ID=debian\nVERSION_CODENAME=bookworm\n", "");
        let systemd = crate::systemd::RecordingSystemd::default();
        let ctx = Context::new(layout.clone(), &systemd);
        let mut req = request(None);
        let progress = Recorded::default();
        // Without the archive keyring nothing is built, nor even started.
        let error = create(&ctx, &req, &progress).unwrap_err();
        assert_eq!(error.kind(), "unsupported");
        assert!(
            error
                .to_string()
                .contains("install the package debian-archive-keyring"),
            "{error}"
        );
        assert!(!layout.fs("/var/lib/puppet-clone-army/.lock").exists());
        assert!(progress.reports().is_empty());
        let keyrings = layout.fs("/usr/share/keyrings");
        fs::create_dir_all(&keyrings).unwrap();
        fs::write(keyrings.join("debian-archive-keyring.gpg"), "").unwrap();
        // A mirror debootstrap cannot use, so the build fails quickly (or debootstrap is absent).
        req.mirror = Some("file:/nonexistent-mirror".into());
        let error = create(&ctx, &req, &progress).unwrap_err();
        assert_eq!(error.kind(), "base-build-failed");
        // One debootstrap, then the finishing step it never got to.
        assert_eq!(progress.reports(), ["step 1/2 debootstrap"]);
        assert!(!layout.fs(layout.staging_dir("b1")).exists());
        assert!(!layout.fs(layout.base_dir("b1")).exists());
        assert!(systemd.calls().is_empty());
    }
}
