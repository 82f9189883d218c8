//! Where everything lives. The truth is on disk, at these paths.
//!
//! Two views of every path: the *system* path (what systemd and the clones see, and what
//! goes into unit files) and the *file-system* path the helper itself opens, which is the
//! system path under `CLONE_ARMY_ROOT` when tests set it.

use std::path::{Path, PathBuf};

use crate::sys::escape::escape_path;

pub const ROOT_ENV: &str = "CLONE_ARMY_ROOT";

/// The test root `CLONE_ARMY_ROOT` names, when it is set and not empty. The test hooks
/// (the fake systemd, the fault steps) act only under one, so a production host, where it
/// is never set, cannot be made to fake a start or die on purpose.
pub fn test_root() -> Option<std::ffi::OsString> {
    std::env::var_os(ROOT_ENV).filter(|root| !root.is_empty())
}

pub const STATE_DIR: &str = "/var/lib/puppet-clone-army";
/// Where class `clone_army` installs the helper, and the only one its tasks run (a task
/// runs as root: its caller must not choose what runs). The Puppet side reads it from the
/// schema.
pub const HELPER_PATH: &str = "/usr/local/sbin/clone-army";
pub const MACHINES_DIR: &str = "/var/lib/machines";
pub const UNIT_DIR: &str = "/etc/systemd/system";
/// Where `systemd-nspawn` finds a machine's trusted settings file, `<clone>.nspawn`.
pub const NSPAWN_DIR: &str = "/etc/systemd/nspawn";
pub const SERVICE_TEMPLATE: &str = "puppet-clone-army@.service";
pub const TARGET: &str = "puppet-clone-army.target";
pub const MULTI_USER_TARGET: &str = "multi-user.target";
/// What follows a clone's name in the names of its directories in [`STATE_DIR`]: its
/// upper layer, its work dir and what it is given. Bases live there too, so no base
/// name may end in one of these (see `names::validate_base_name`): a clone's upper
/// layer, which the clone writes, can never pass for a base.
pub const UPPER_SUFFIX: &str = "-overlay";
pub const WORK_SUFFIX: &str = "-workdir";
pub const CONFIG_SUFFIX: &str = "-config";
pub const CLONE_DIR_SUFFIXES: [&str; 3] = [UPPER_SUFFIX, WORK_SUFFIX, CONFIG_SUFFIX];
/// The helper's logs: what a base build's commands printed.
pub const LOG_DIR: &str = "/var/log/clone-army";
/// In [`STATE_DIR`]: the clones' SSL directories, one per certname (see `clone::ssl`).
/// It starts with a dot, so it is never a base's name and no clone's certname can make
/// anything in it pass for a base.
pub const SSL_DIR: &str = ".ssl";
/// In [`STATE_DIR`]: the real nodes' records twins are made from, one file a node (see
/// `twin::import`); a dot name, so it is never a base's.
pub const TWINS_DIR: &str = ".twins";
/// Inside a base, relative to its root.
pub const BASE_METADATA: &str = "etc/clone-army/base.json";

#[derive(Debug, Clone)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The real layout, or the one under `CLONE_ARMY_ROOT` when that is set.
    pub fn from_env() -> Self {
        Layout::under(test_root().unwrap_or_else(|| "/".into()))
    }

    pub fn under(root: impl Into<PathBuf>) -> Self {
        Layout { root: root.into() }
    }

    /// The file-system path of a system path.
    pub fn fs(&self, system_path: impl AsRef<Path>) -> PathBuf {
        let relative = system_path
            .as_ref()
            .strip_prefix("/")
            .unwrap_or(system_path.as_ref());
        self.root.join(relative)
    }

    // --- system paths -------------------------------------------------------------------

    pub fn base_dir(&self, base: &str) -> PathBuf {
        Path::new(STATE_DIR).join(base)
    }

    pub fn staging_dir(&self, base: &str) -> PathBuf {
        Path::new(STATE_DIR).join(format!(".staging-{base}"))
    }

    /// The log of the latest build of `base`, kept after the build.
    pub fn build_log(&self, base: &str) -> PathBuf {
        Path::new(LOG_DIR).join(format!("base-{base}.log"))
    }

    pub fn upper_dir(&self, clone: &str) -> PathBuf {
        Path::new(STATE_DIR).join(format!("{clone}{UPPER_SUFFIX}"))
    }

    pub fn work_dir(&self, clone: &str) -> PathBuf {
        Path::new(STATE_DIR).join(format!("{clone}{WORK_SUFFIX}"))
    }

    /// What clone-army gives the clone (its puppet.conf, facts, run units, secrets): host
    /// files the clone sees read-only, bound in by its `.nspawn` settings.
    pub fn config_dir(&self, clone: &str) -> PathBuf {
        Path::new(STATE_DIR).join(format!("{clone}{CONFIG_SUFFIX}"))
    }

    /// Where every kept SSL directory lives: host-only, 0700.
    pub fn ssl_root(&self) -> PathBuf {
        Path::new(STATE_DIR).join(SSL_DIR)
    }

    /// The agent's SSL directory for `certname` (a validated hostname), bound read-write
    /// into the clone that uses that certname; it outlives the clone.
    pub fn ssl_dir(&self, certname: &str) -> PathBuf {
        self.ssl_root().join(certname)
    }

    /// The imported nodes' records, one `<certname>.json` each: host-only, 0700.
    pub fn twins_dir(&self) -> PathBuf {
        Path::new(STATE_DIR).join(TWINS_DIR)
    }

    /// The clone's settings for `systemd-nspawn`: what it binds into the clone.
    pub fn nspawn_settings(&self, clone: &str) -> PathBuf {
        Path::new(NSPAWN_DIR).join(format!("{clone}.nspawn"))
    }

    pub fn machine_dir(&self, clone: &str) -> PathBuf {
        Path::new(MACHINES_DIR).join(clone)
    }

    pub fn lock_file(&self) -> PathBuf {
        Path::new(STATE_DIR).join(".lock")
    }

    pub fn mount_unit_name(&self, clone: &str) -> String {
        format!(
            "{}.mount",
            escape_path(&self.machine_dir(clone).to_string_lossy())
        )
    }

    pub fn service_unit_name(&self, clone: &str) -> String {
        format!("puppet-clone-army@{clone}.service")
    }

    pub fn unit_path(&self, unit: &str) -> PathBuf {
        Path::new(UNIT_DIR).join(unit)
    }

    /// The directory of the clone's own drop-ins for its service.
    pub fn service_dropin_dir(&self, clone: &str) -> PathBuf {
        self.unit_path(&format!("{}.d", self.service_unit_name(clone)))
    }

    pub fn wants_dir(&self, target: &str) -> PathBuf {
        Path::new(UNIT_DIR).join(format!("{target}.wants"))
    }

    /// The symlink that enables a clone in the fleet target.
    pub fn clone_enable_link(&self, clone: &str) -> PathBuf {
        self.wants_dir(TARGET).join(self.service_unit_name(clone))
    }

    /// The symlink that brings the fleet target up at boot.
    pub fn target_enable_link(&self) -> PathBuf {
        self.wants_dir(MULTI_USER_TARGET).join(TARGET)
    }

    pub fn mountinfo(&self) -> PathBuf {
        PathBuf::from("/proc/self/mountinfo")
    }

    pub fn os_release(&self) -> PathBuf {
        PathBuf::from("/etc/os-release")
    }

    pub fn apt_sources_list(&self) -> PathBuf {
        PathBuf::from("/etc/apt/sources.list")
    }

    pub fn apt_sources_dir(&self) -> PathBuf {
        PathBuf::from("/etc/apt/sources.list.d")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_and_fs_paths() {
        let layout = Layout::under("/tmp/t");
        assert_eq!(
            layout.upper_dir("clone1"),
            Path::new("/var/lib/puppet-clone-army/clone1-overlay")
        );
        assert_eq!(
            layout.fs(layout.upper_dir("clone1")),
            Path::new("/tmp/t/var/lib/puppet-clone-army/clone1-overlay")
        );
        assert_eq!(
            layout.mount_unit_name("clone-1"),
            "var-lib-machines-clone\\x2d1.mount"
        );
        assert_eq!(
            layout.clone_enable_link("c1"),
            Path::new(
                "/etc/systemd/system/puppet-clone-army.target.wants/puppet-clone-army@c1.service"
            )
        );
        assert_eq!(
            layout.ssl_dir("c1.example.com"),
            Path::new("/var/lib/puppet-clone-army/.ssl/c1.example.com")
        );
        assert_eq!(
            Layout::under("/").fs("/etc/os-release"),
            Path::new("/etc/os-release")
        );
    }
}
