//! How a base's root file system is built, per OS family: the command line and the
//! finishing steps. Debian and Ubuntu use debootstrap; RHEL (`dnf --installroot`) and SUSE
//! (`zypper --root`) builders are meant to slot in behind the same trait.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{BaseMetadata, Os, DISTRO_PUPPET_CONFDIR};
use crate::error::{Error, Result};
use crate::fsutil::{ensure_symlink, read_optional, remove_dir_all, write_atomic};

/// Packages every Debian-family base gets on top of `minbase`.
pub const DEBIAN_PACKAGES: &[&str] = &[
    "systemd",
    "systemd-sysv",
    "dbus",
    "puppet-agent",
    "ca-certificates",
];

pub trait RootfsBuilder {
    /// Name recorded in base.json.
    fn name(&self) -> &'static str;
    /// The command that builds the root file system into `target`.
    fn argv(&self, base: &BaseMetadata, target: &Path) -> Vec<String>;
    /// Where the agent's puppet.conf lives in this family's package.
    fn puppet_confdir(&self) -> &'static str {
        DISTRO_PUPPET_CONFDIR
    }
    /// Steps after the command, before base.json is written.
    fn post_steps(&self, rootfs: &Path) -> Result<()> {
        finish_rootfs(rootfs)
    }
}

pub struct DebootstrapBuilder {
    pub os: Os,
}

impl RootfsBuilder for DebootstrapBuilder {
    fn name(&self) -> &'static str {
        "debootstrap"
    }

    fn argv(&self, base: &BaseMetadata, target: &Path) -> Vec<String> {
        // Ubuntu keeps puppet-agent in universe.
        let components = match self.os {
            Os::Debian => "main",
            Os::Ubuntu => "main,universe",
        };
        vec![
            "debootstrap".to_owned(),
            "--variant=minbase".to_owned(),
            format!("--include={}", DEBIAN_PACKAGES.join(",")),
            format!("--components={components}"),
            base.release.clone(),
            target.display().to_string(),
            base.mirror.clone(),
        ]
    }
}

pub fn builder_for(os: Os) -> Box<dyn RootfsBuilder> {
    match os {
        Os::Debian | Os::Ubuntu => Box::new(DebootstrapBuilder { os }),
    }
}

/// What every base needs, whatever built it:
/// - root directory 0755 (a 0700 root makes dbus inside the clone fail with EACCES),
/// - an empty `/etc/machine-id`, so each clone gets its own at boot,
/// - no root password,
/// - no agent SSL state (each clone gets its own certificate),
/// - the agent service enabled, so each clone runs the agent daemon.
pub fn finish_rootfs(rootfs: &Path) -> Result<()> {
    fs::set_permissions(rootfs, fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io("set the mode of", rootfs, e))?;
    write_atomic(&rootfs.join("etc/machine-id"), b"", 0o444)?;
    lock_root_password(&rootfs.join("etc/shadow"))?;
    remove_dir_all(&rootfs.join("var/lib/puppet/ssl"))?;
    enable_agent_service(rootfs)?;
    Ok(())
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
        write_atomic(shadow, (lines.join("\n") + "\n").as_bytes(), 0o640)?;
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
            program: "debootstrap".to_owned(),
            detail: "the base has no puppet.service: is the puppet-agent package installed?"
                .to_owned(),
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

    fn metadata(os: &str, release: &str, mirror: &str) -> BaseMetadata {
        BaseMetadata {
            name: "debian-12".into(),
            os: os.into(),
            release: release.into(),
            mirror: mirror.into(),
            puppet_source: "distro".into(),
            puppet_confdir: "/etc/puppet".into(),
            created_at: "2026-11-22T03:30:00Z".into(),
            builder: "debootstrap".into(),
        }
    }

    #[test]
    fn debootstrap_argv_debian() {
        let argv = builder_for(Os::Debian).argv(
            &metadata("debian", "bookworm", "http://deb.debian.org/debian"),
            Path::new("/var/lib/puppet-clone-army/.staging-debian-12"),
        );
        insta::assert_debug_snapshot!(argv);
    }

    #[test]
    fn debootstrap_argv_ubuntu() {
        let argv = builder_for(Os::Ubuntu).argv(
            &metadata("ubuntu", "noble", "http://archive.ubuntu.com/ubuntu"),
            Path::new("/var/lib/puppet-clone-army/.staging-ubuntu-24"),
        );
        insta::assert_debug_snapshot!(argv);
    }

    #[test]
    fn finishing_a_rootfs() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("rootfs");
        fs::create_dir(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o700)).unwrap();
        fs::create_dir_all(root.join("etc")).unwrap();
        fs::write(root.join("etc/machine-id"), "0123456789abcdef\n").unwrap();
        fs::write(
            root.join("etc/shadow"),
            "root:$6$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
        )
        .unwrap();
        fs::create_dir_all(root.join("var/lib/puppet/ssl/certs")).unwrap();
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
            fs::read_link(root.join("etc/systemd/system/multi-user.target.wants/puppet.service"))
                .unwrap(),
            Path::new("/lib/systemd/system/puppet.service")
        );
    }

    #[test]
    fn a_rootfs_without_the_agent_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let error = finish_rootfs(dir.path()).unwrap_err();
        assert!(error.to_string().contains("puppet.service"), "{error}");
    }
}
