//! `base create`: debootstrap into a staging directory, finish it, rename it into place.

use std::fs;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{builder_for, info, rfc3339_utc, BaseMetadata, Os, PuppetSource};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::fsutil::{create_dir_all, remove_dir_all, write_atomic};
use crate::host;
use crate::names::validate_name;
use crate::output::BaseCreated;
use crate::paths::{Layout, BASE_METADATA};

/// What the caller asked for; `None` means "like the host".
#[derive(Debug, Clone)]
pub struct BaseRequest {
    pub name: String,
    pub os: Option<Os>,
    pub release: Option<String>,
    pub mirror: Option<String>,
    pub puppet_source: PuppetSource,
}

pub fn create(ctx: &Context, request: &BaseRequest) -> Result<BaseCreated> {
    validate_name("base", "name", &request.name)?;
    let layout = &ctx.layout;
    let metadata = resolve(layout, request)?;
    let builder = builder_for(Os::from_id(&metadata.os).unwrap_or(Os::Debian));
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
    let built = (|| {
        create_dir_all(&staging, 0o755)?;
        let argv = builder.argv(&metadata, &staging);
        run(&argv)?;
        builder.post_steps(&staging)?;
        let json =
            serde_json::to_string_pretty(&metadata).map_err(|e| Error::Internal(e.to_string()))?;
        write_atomic(
            &staging.join(BASE_METADATA),
            (json + "\n").as_bytes(),
            0o644,
        )?;
        fs::rename(&staging, &final_dir).map_err(|e| Error::io("rename into place", &final_dir, e))
    })();
    if let Err(error) = built {
        let _ = remove_dir_all(&staging);
        return Err(Error::BaseBuildFailed {
            base: request.name.clone(),
            source: Box::new(error),
        });
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

/// Fills in the host's defaults and checks every value that reaches the command line.
fn resolve(layout: &Layout, request: &BaseRequest) -> Result<BaseMetadata> {
    let host_os = host::read_os_release(layout)?;
    let host_family = host_os.id.as_deref().and_then(Os::from_id);
    let os = match (request.os, host_family) {
        (Some(os), _) | (None, Some(os)) => os,
        (None, None) => {
            return Err(Error::InvalidArgument {
                field: "os",
                value: host_os.id.unwrap_or_default(),
                reason: "the host is not Debian or Ubuntu; give --os".to_owned(),
            })
        }
    };
    let like_host = host_family == Some(os);
    let release = match (&request.release, like_host) {
        (Some(release), _) => release.clone(),
        (None, true) => host_os.version_codename.clone().unwrap_or_default(),
        (None, false) => String::new(),
    };
    validate_release(&release)?;
    let mirror = match &request.mirror {
        Some(mirror) => mirror.clone(),
        None => {
            let from_host = if like_host {
                host::pick_mirror(&host::read_apt_sources(layout)?, &release)
            } else {
                None
            };
            from_host.unwrap_or_else(|| default_mirror(os).to_owned())
        }
    };
    validate_mirror(&mirror)?;
    let builder = builder_for(os);
    let created_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Ok(BaseMetadata {
        name: request.name.clone(),
        os: os.as_str().to_owned(),
        release,
        mirror,
        puppet_source: request.puppet_source.as_str().to_owned(),
        puppet_confdir: builder.puppet_confdir().to_owned(),
        created_at: rfc3339_utc(created_at),
        builder: builder.name().to_owned(),
    })
}

pub fn default_mirror(os: Os) -> &'static str {
    match os {
        Os::Debian => "http://deb.debian.org/debian",
        Os::Ubuntu => "http://archive.ubuntu.com/ubuntu",
    }
}

fn validate_release(release: &str) -> Result<()> {
    let ok = release
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase())
        && release
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            field: "release",
            value: release.to_owned(),
            reason: "expected a release codename such as bookworm (give --release)".to_owned(),
        })
    }
}

fn validate_mirror(mirror: &str) -> Result<()> {
    let scheme_ok = ["http://", "https://", "file:/"]
        .iter()
        .any(|s| mirror.starts_with(s));
    let chars_ok = !mirror.chars().any(|c| c.is_whitespace() || c.is_control());
    if scheme_ok && chars_ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            field: "mirror",
            value: mirror.to_owned(),
            reason: "expected an http://, https:// or file:/ URL".to_owned(),
        })
    }
}

/// Runs a command with its stdout sent to our stderr: our stdout carries only the
/// protocol's JSON document.
pub fn run(argv: &[String]) -> Result<()> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| Error::Internal("empty command".to_owned()))?;
    let stdout_to_stderr = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| Error::io("duplicate", Path::new("/dev/stderr"), e))?;
    eprintln!("clone-army: running {}", argv.join(" "));
    let status = Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout_to_stderr))
        .status()
        .map_err(|e| Error::CommandFailed {
            program: program.clone(),
            detail: if e.kind() == std::io::ErrorKind::NotFound {
                format!("{program} is not installed")
            } else {
                e.to_string()
            },
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::CommandFailed {
            program: program.clone(),
            detail: format!("it exited with {status}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            puppet_source: PuppetSource::Distro,
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
        let metadata = resolve(&layout, &request(None)).unwrap();
        assert_eq!(metadata.os, "debian");
        assert_eq!(metadata.release, "bookworm");
        assert_eq!(metadata.mirror, "http://mirror.example/debian");
        assert_eq!(metadata.puppet_confdir, "/etc/puppet");

        // Another family than the host's: its own default mirror, and a release is needed.
        let error = resolve(&layout, &request(Some(Os::Ubuntu))).unwrap_err();
        assert_eq!(error.field(), Some("release"));
        let mut ubuntu = request(Some(Os::Ubuntu));
        ubuntu.release = Some("noble".into());
        let metadata = resolve(&layout, &ubuntu).unwrap();
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
            resolve(&layout, &request(None)).unwrap().mirror,
            "http://deb.debian.org/debian"
        );
    }

    #[test]
    fn failed_build_removes_staging() {
        let dir = tempfile::tempdir().unwrap();
        let layout = host(dir.path(), "ID=debian\nVERSION_CODENAME=bookworm\n", "");
        let systemd = crate::systemd::RecordingSystemd::default();
        let ctx = Context::new(layout.clone(), &systemd);
        let mut req = request(None);
        // A mirror debootstrap cannot use, so the build fails quickly (or debootstrap is absent).
        req.mirror = Some("file:/nonexistent-mirror".into());
        let error = create(&ctx, &req).unwrap_err();
        assert_eq!(error.kind(), "base-build-failed");
        assert!(!layout.fs(layout.staging_dir("b1")).exists());
        assert!(!layout.fs(layout.base_dir("b1")).exists());
        assert!(systemd.calls().is_empty());
    }
}
