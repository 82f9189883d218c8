//! What clone-army gives one clone, kept on the host in the clone's config dir,
//! `/var/lib/puppet-clone-army/<clone>-config/` (0700, in the 0700 state directory), and
//! bound read-only into the clone by its `.nspawn` settings (see [`super::nspawn_settings`]):
//!
//! | in the config dir | in the clone |
//! | --- | --- |
//! | `puppet.conf` | `<confdir>/puppet.conf` |
//! | `hostname` | `/etc/hostname` |
//! | `csr_attributes.yaml` (0600; with a challenge password) | `<confdir>/csr_attributes.yaml` |
//! | `facts.d/` | [`CLONE_FACTS_DIR`] |
//! | `systemd/` (the run mode's units) | [`CLONE_UNITS_DIR`] |
//! | `root-password-hash` (0600; with a root password) | the credential [`ROOT_PASSWORD_CREDENTIAL`] |
//!
//! Why on the host: a clone runs the agent as root and applies whatever the server under
//! test sends, so its own tree is the clone's to change, symlinks included. The helper,
//! as root on the host, therefore writes nothing into a clone; and what `clone list`
//! reads back is these files, which the clone cannot touch, not the clone's.
//!
//! The files bound one by one (puppet.conf, hostname, csr_attributes.yaml) are rewritten
//! in place: a bind mount holds the inode it was made with, so a file replaced by a
//! rename would never reach a running clone. Files in the bound directories are replaced
//! by a rename, which the clone sees at once.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsutil::{create_dir_all, ensure_symlink, remove_file, write_atomic};
use crate::paths::Layout;

pub const PUPPET_CONF: &str = "puppet.conf";
pub const HOSTNAME: &str = "hostname";
pub const CSR_ATTRIBUTES: &str = "csr_attributes.yaml";
pub const ROOT_PASSWORD_HASH: &str = "root-password-hash";
pub const FACTS_DIR: &str = "facts.d";
pub const UNITS_DIR: &str = "systemd";

/// Where the clone sees its facts: the external facts directory Puppet's and the
/// distributions' facter read, and where clone-army has always put them.
pub const CLONE_FACTS_DIR: &str = "/etc/facter/facts.d";
/// Where the clone's systemd finds its run units: a unit directory that comes before
/// `/etc/systemd/system`, so what the host gives takes precedence over anything in the
/// clone's own tree (its root's, or what an older clone-army wrote there).
pub const CLONE_UNITS_DIR: &str = "/run/systemd/system.control";
/// The systemd credential that carries the root password hash into the clone.
pub const ROOT_PASSWORD_CREDENTIAL: &str = "clone-army.root-password-hash";

/// The config dir itself, and what may read it: root only.
const DIR_MODE: u32 = 0o700;
/// The bound directories: the clone's non-root users read facts and units too.
const BOUND_DIR_MODE: u32 = 0o755;

/// One clone's config dir, and its `.nspawn` settings file that binds it.
pub struct CloneConfig {
    pub clone: String,
    /// Where the helper opens it (under `CLONE_ARMY_ROOT` in tests).
    dir: PathBuf,
    /// The system path, for the `.nspawn` settings and messages.
    system_dir: PathBuf,
    /// Where the helper opens the `.nspawn` settings file.
    pub settings_file: PathBuf,
}

impl CloneConfig {
    pub fn of(layout: &Layout, clone: &str) -> Self {
        let system_dir = layout.config_dir(clone);
        CloneConfig {
            clone: clone.to_owned(),
            dir: layout.fs(&system_dir),
            system_dir,
            settings_file: layout.fs(layout.nspawn_settings(clone)),
        }
    }

    /// The system path of a file in the config dir (what the `.nspawn` settings bind).
    pub fn system_path(&self, name: &str) -> PathBuf {
        self.system_dir.join(name)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Creates the dir (0700) and its bound directories. Returns whether it created any.
    pub fn create(&self) -> Result<bool> {
        let mut created = create_dir_all(&self.dir, DIR_MODE)?;
        for sub in [FACTS_DIR, UNITS_DIR] {
            created |= create_dir_all(&self.path(sub), BOUND_DIR_MODE)?;
        }
        Ok(created)
    }

    /// The text of a regular file (never through a symlink); `None` when it is missing
    /// or not a regular file.
    pub fn read(&self, name: &str) -> Result<Option<String>> {
        let path = self.path(name);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_file() => {}
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("inspect", path, e)),
        }
        fs::read_to_string(&path)
            .map(Some)
            .map_err(|e| Error::io("read", path, e))
    }

    pub fn exists(&self, name: &str) -> bool {
        fs::symlink_metadata(self.path(name)).is_ok()
    }

    /// Where the symlink `name` points; `None` when it is no symlink.
    pub fn read_link(&self, name: &str) -> Result<Option<PathBuf>> {
        let path = self.path(name);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => fs::read_link(&path)
                .map(Some)
                .map_err(|e| Error::io("read the link", path, e)),
            _ => Ok(None),
        }
    }

    /// A file in a bound directory, replaced by a rename. Returns whether it wrote.
    pub fn write(&self, name: &str, content: &str, mode: u32) -> Result<bool> {
        if fs::symlink_metadata(self.path(name)).is_ok_and(|m| m.file_type().is_symlink()) {
            remove_file(&self.path(name))?;
        }
        write_atomic(&self.path(name), content.as_bytes(), mode)
    }

    /// A file bound into the clone on its own, rewritten in place (see the module's
    /// doc). Returns whether it wrote.
    pub fn write_bound(&self, name: &str, content: &str, mode: u32) -> Result<bool> {
        let path = self.path(name);
        let unchanged = self.read(name)?.as_deref() == Some(content)
            && fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o7777 == mode);
        if unchanged {
            return Ok(false);
        }
        create_dir_all(&self.dir, DIR_MODE)?;
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(mode)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        file.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io("set the mode of", &path, e))?;
        // The new text first, then the length: a reader sees the old text, or the new
        // one with at most the old one's tail for an instant.
        file.write_all(content.as_bytes())
            .and_then(|()| file.set_len(content.len() as u64))
            .and_then(|()| file.sync_all())
            .map_err(|e| Error::io("write", &path, e))?;
        Ok(true)
    }

    /// Points the symlink `name` at `target` (a path as the clone sees it).
    pub fn link(&self, name: &str, target: &str) -> Result<bool> {
        ensure_symlink(&self.path(name), Path::new(target))
    }

    /// Removes a file or symlink. Returns whether it was there.
    pub fn remove_file(&self, name: &str) -> Result<bool> {
        remove_file(&self.path(name))
    }
}

/// Where a clone's settings are read back from: its config dir, or, for a clone an
/// older clone-army made (settings in its upper layer), that layer, read through
/// [`crate::confined`]. `clone list` and `clone configure` ask this, never the clone.
pub trait SettingsSource {
    /// The text of the clone's puppet.conf.
    fn puppet_conf(&self) -> Result<Option<String>>;
    /// The text of a regular unit file among the clone's run units.
    fn unit(&self, name: &str) -> Result<Option<String>>;
    /// Where a run unit that is a symlink points (`/dev/null`: masked).
    fn unit_link(&self, name: &str) -> Result<Option<PathBuf>>;
    /// The text of a regular file among the clone's facts.
    fn facts_file(&self, name: &str) -> Result<Option<String>>;
    /// The host directory bound as the apply source.
    fn apply_source(&self) -> Result<Option<PathBuf>>;
}

impl SettingsSource for CloneConfig {
    fn puppet_conf(&self) -> Result<Option<String>> {
        self.read(PUPPET_CONF)
    }

    fn unit(&self, name: &str) -> Result<Option<String>> {
        self.read(&format!("{UNITS_DIR}/{name}"))
    }

    fn unit_link(&self, name: &str) -> Result<Option<PathBuf>> {
        self.read_link(&format!("{UNITS_DIR}/{name}"))
    }

    fn facts_file(&self, name: &str) -> Result<Option<String>> {
        self.read(&format!("{FACTS_DIR}/{name}"))
    }

    fn apply_source(&self) -> Result<Option<PathBuf>> {
        super::nspawn_settings::read_apply_source(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn the_dir_is_roots_and_bound_files_keep_their_inode() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::under(root.path());
        let config = CloneConfig::of(&layout, "c1");
        assert!(config.create().unwrap());
        assert!(!config.create().unwrap());
        let dir = layout.fs(layout.config_dir("c1"));
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o7777, 0o700);
        assert_eq!(
            fs::metadata(dir.join(UNITS_DIR)).unwrap().mode() & 0o7777,
            0o755
        );

        assert!(config
            .write_bound(PUPPET_CONF, "[main]\nserver = a.long.name\n", 0o644)
            .unwrap());
        let inode = fs::metadata(dir.join(PUPPET_CONF)).unwrap().ino();
        assert!(!config
            .write_bound(PUPPET_CONF, "[main]\nserver = a.long.name\n", 0o644)
            .unwrap());
        assert!(config
            .write_bound(PUPPET_CONF, "[main]\nserver = b\n", 0o644)
            .unwrap());
        assert_eq!(fs::metadata(dir.join(PUPPET_CONF)).unwrap().ino(), inode);
        assert_eq!(
            config.read(PUPPET_CONF).unwrap().unwrap(),
            "[main]\nserver = b\n"
        );
        assert!(config.write_bound(CSR_ATTRIBUTES, "x", 0o600).unwrap());
        assert_eq!(
            fs::metadata(dir.join(CSR_ATTRIBUTES)).unwrap().mode() & 0o7777,
            0o600
        );
    }

    #[test]
    fn links_and_files_in_the_bound_dirs() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::under(root.path());
        let config = CloneConfig::of(&layout, "c1");
        config.create().unwrap();
        let name = format!("{UNITS_DIR}/puppet.service");
        assert!(config.link(&name, "/dev/null").unwrap());
        assert_eq!(
            config.unit_link("puppet.service").unwrap(),
            Some(PathBuf::from("/dev/null"))
        );
        // A symlink is never read through, nor written through.
        assert_eq!(config.unit("puppet.service").unwrap(), None);
        assert!(config.write(&name, "[Unit]\n", 0o644).unwrap());
        assert_eq!(config.unit("puppet.service").unwrap().unwrap(), "[Unit]\n");
        assert_eq!(config.unit_link("puppet.service").unwrap(), None);
        assert!(config.remove_file(&name).unwrap());
    }
}
