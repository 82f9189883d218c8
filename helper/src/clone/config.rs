//! What clone-army gives one clone, kept on the host in the clone's config dir,
//! `/var/lib/puppet-clone-army/<clone>-config/` (0700, in the 0700 state directory), and
//! bound read-only into the clone by its `.nspawn` settings (`nspawn_settings.rs`, which
//! reads this module, as the clone's SSL directory in `ssl.rs` does):
//!
//! | in the config dir | in the clone |
//! | --- | --- |
//! | `puppet.conf` | `<confdir>/puppet.conf` |
//! | `hostname` | `/etc/hostname` |
//! | `csr_attributes.yaml` (0600; with a challenge password) | `<confdir>/csr_attributes.yaml` |
//! | `facts.d/` | [`CLONE_FACTS_DIR`] |
//! | `systemd/` (the run mode's units) | [`CLONE_UNITS_DIR`] |
//! | `root-password-hash` (0600; with a root password) | the credential [`ROOT_PASSWORD_CREDENTIAL`] |
//! | (the apply source, a host directory) | [`APPLY_DIR`] |
//! | `certname` (0600) | nothing: the helper's record of the clone's certname ([`CERTNAME_RECORD`]) |
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

use std::path::PathBuf;

use crate::protocol::error::{Error, Result};
use crate::sys::confined::CloneTree;
use crate::sys::fsutil::create_dir_all;
use crate::sys::paths::Layout;

pub const PUPPET_CONF: &str = "puppet.conf";
pub const HOSTNAME: &str = "hostname";
pub const CSR_ATTRIBUTES: &str = "csr_attributes.yaml";
pub const ROOT_PASSWORD_HASH: &str = "root-password-hash";
pub const FACTS_DIR: &str = "facts.d";
pub const UNITS_DIR: &str = "systemd";
/// Beside what is bound into the clone but never bound itself: the certname the helper
/// gave the clone last, which says where the SSL directory of a clone without a bind is
/// kept when the clone is removed (`ssl.rs`).
pub const CERTNAME_RECORD: &str = "certname";

/// Where the clone sees its facts: the external facts directory Puppet's and the
/// distributions' facter read, and where clone-army has always put them.
pub const CLONE_FACTS_DIR: &str = "/etc/facter/facts.d";
/// Where the clone's systemd finds its run units: a unit directory that comes before
/// `/etc/systemd/system`, so what the host gives takes precedence over anything in the
/// clone's own tree (what its root wrote there).
pub const CLONE_UNITS_DIR: &str = "/run/systemd/system.control";
/// Where an apply-mode clone sees its apply source, bound read-only from the host (not
/// from the config dir: see `apply_source.rs`).
pub const APPLY_DIR: &str = "/srv/clone-army-apply";
/// The systemd credential that carries the root password hash into the clone.
pub const ROOT_PASSWORD_CREDENTIAL: &str = "clone-army.root-password-hash";

/// The config dir itself, and what may read it: root only.
const DIR_MODE: u32 = 0o700;
/// The bound directories: the clone's non-root users read facts and units too.
const BOUND_DIR_MODE: u32 = 0o755;

/// The most read of any file of a config dir (a facts file holds at most 1 MiB of facts).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One clone's config dir, and its `.nspawn` settings file that binds it.
///
/// The dir itself is the host's, but what is bound into the clone (the bound files'
/// text, the bound directories' entries) a clone's root can change: it can remount a
/// read-only bind read-write in its own mount namespace (README, "Security model"). So
/// every read and write in it goes through [`crate::sys::confined`], and a file that is not
/// what the helper wrote (a symlink, a FIFO, a huge file) reads as missing, with a
/// warning, and is replaced on the next write.
pub struct CloneConfig {
    pub clone: String,
    /// Where the helper opens it (under `CLONE_ARMY_ROOT` in tests).
    dir: PathBuf,
    /// The system path, for the `.nspawn` settings and messages.
    system_dir: PathBuf,
    tree: CloneTree,
    /// Where the helper opens the `.nspawn` settings file.
    pub settings_file: PathBuf,
}

impl CloneConfig {
    pub fn of(layout: &Layout, clone: &str) -> Self {
        let system_dir = layout.config_dir(clone);
        let dir = layout.fs(&system_dir);
        CloneConfig {
            clone: clone.to_owned(),
            tree: CloneTree::new(clone, dir.clone(), system_dir.clone()),
            dir,
            system_dir,
            settings_file: layout.fs(layout.nspawn_settings(clone)),
        }
    }

    /// The system path of a file in the config dir (what the `.nspawn` settings bind).
    pub fn system_path(&self, name: &str) -> PathBuf {
        self.system_dir.join(name)
    }

    /// Creates the dir (0700) and its bound directories. Returns whether it created any.
    pub fn create(&self) -> Result<bool> {
        // The dir and the entries of its bound directories are the host's: no clone can
        // reach them, only what is below the bound directories.
        let mut created = create_dir_all(&self.dir, DIR_MODE)?;
        for sub in [FACTS_DIR, UNITS_DIR] {
            created |= create_dir_all(&self.dir.join(sub), BOUND_DIR_MODE)?;
        }
        Ok(created)
    }

    /// The text of a regular file; `None` when it is missing, a symlink (the helper's own
    /// masks and links are symlinks, and their targets are never read), or anything else
    /// the helper does not write there (said on stderr).
    pub fn read(&self, name: &str) -> Result<Option<String>> {
        if self.tree.read_link(name).ok().flatten().is_some() {
            return Ok(None);
        }
        match self.tree.read_to_string(name, MAX_FILE_BYTES) {
            Err(e @ Error::UnsafePath { .. }) => {
                crate::protocol::warnings::warn(crate::sys::escape::visible(&e.to_string()));
                Ok(None)
            }
            other => other,
        }
    }

    pub fn exists(&self, name: &str) -> bool {
        std::fs::symlink_metadata(self.dir.join(name)).is_ok()
    }

    /// Where the symlink `name` points; `None` when it is no symlink.
    pub fn read_link(&self, name: &str) -> Result<Option<PathBuf>> {
        Ok(self.tree.read_link(name).unwrap_or(None))
    }

    /// A file in a bound directory, replaced by a rename. Returns whether it wrote.
    pub fn write(&self, name: &str, content: &str, mode: u32) -> Result<bool> {
        self.tree.write(name, content.as_bytes(), mode)
    }

    /// A file bound into the clone on its own, rewritten in place (see the module's
    /// doc). Returns whether it wrote.
    pub fn write_bound(&self, name: &str, content: &str, mode: u32) -> Result<bool> {
        create_dir_all(&self.dir, DIR_MODE)?;
        self.tree.write_in_place(name, content.as_bytes(), mode)
    }

    /// Points the symlink `name` at `target` (a path as the clone sees it).
    pub fn link(&self, name: &str, target: &str) -> Result<bool> {
        self.tree.link(name, target)
    }

    /// Removes a file or symlink. Returns whether it was there.
    pub fn remove_file(&self, name: &str) -> Result<bool> {
        self.tree.remove(name)
    }
}

/// A setting read back from what a clone is given that is not one `clone create` or
/// `clone configure` would write: a clone's root can rewrite what is bound into it (see
/// [`CloneConfig`]), and a person can edit it. It is left out of what is read back, so it
/// never reaches Puppet's change messages, the `clone_army` fact or a report, and the
/// clone has a problem naming it ([`crate::inventory::problems::config_invalid`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The file, as named in the config dir (`puppet.conf`, `facts.d/clone_army.json`).
    pub file: String,
    /// The setting in it (`certname`), or what the file holds (`facts`).
    pub setting: &'static str,
    /// Why, in the words of the rule it was written with; never the value itself, which
    /// may be megabytes of anything.
    pub reason: String,
}

impl Refused {
    /// A refusal by one of the checks `create` and `configure` make: its reason, without
    /// the value it quotes.
    pub fn by(file: &str, setting: &'static str, error: Error) -> Self {
        let reason = match error {
            Error::InvalidArgument { reason, .. } | Error::InvalidName { reason, .. } => reason,
            other => other.kind().to_string(),
        };
        Refused {
            file: file.to_owned(),
            setting,
            reason,
        }
    }
}

/// What a clone is given, read back by what it is (`clone list` and `clone configure`
/// ask these, never the clone).
impl CloneConfig {
    /// The text of the clone's puppet.conf.
    pub fn puppet_conf(&self) -> Result<Option<String>> {
        self.read(PUPPET_CONF)
    }

    /// The text of a regular unit file among the clone's run units.
    pub fn unit(&self, name: &str) -> Result<Option<String>> {
        self.read(&format!("{UNITS_DIR}/{name}"))
    }

    /// Where a run unit that is a symlink points (`/dev/null`: masked).
    pub fn unit_link(&self, name: &str) -> Result<Option<PathBuf>> {
        self.read_link(&format!("{UNITS_DIR}/{name}"))
    }

    /// The text of a regular file among the clone's facts.
    pub fn facts_file(&self, name: &str) -> Result<Option<String>> {
        self.read(&format!("{FACTS_DIR}/{name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
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

    /// A clone that remounted its binds read-write plants symlinks (to host files and
    /// directories) and FIFOs in its config dir's bound parts: the helper reads them as
    /// missing, never hangs, and its writes replace them without following them.
    #[test]
    fn what_a_clone_planted_in_its_bound_dirs_is_never_followed() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::under(root.path());
        let config = CloneConfig::of(&layout, "c1");
        config.create().unwrap();
        let dir = layout.fs(layout.config_dir("c1"));
        let host = root.path().join("host");
        fs::create_dir_all(&host).unwrap();
        fs::write(host.join("secret"), "HOST").unwrap();
        let units = dir.join(UNITS_DIR);
        std::os::unix::fs::symlink(host.join("secret"), units.join("clone-army-agent.timer"))
            .unwrap();
        std::os::unix::fs::symlink(&host, units.join("timers.target.wants")).unwrap();
        nix::unistd::mkfifo(
            &dir.join(FACTS_DIR).join("clone_army.json"),
            nix::sys::stat::Mode::from_bits_truncate(0o644),
        )
        .unwrap();

        assert_eq!(config.unit("clone-army-agent.timer").unwrap(), None);
        assert_eq!(config.facts_file("clone_army.json").unwrap(), None);
        let timer = format!("{UNITS_DIR}/clone-army-agent.timer");
        assert!(config.write(&timer, "[Timer]\n", 0o644).unwrap());
        assert_eq!(fs::read_to_string(host.join("secret")).unwrap(), "HOST");
        assert_eq!(
            config.unit("clone-army-agent.timer").unwrap().unwrap(),
            "[Timer]\n"
        );
        // A directory on the way that is a symlink out is replaced, never followed.
        let link = format!("{UNITS_DIR}/timers.target.wants/clone-army-agent.timer");
        assert!(config.link(&link, "/run/x").unwrap());
        assert_eq!(fs::read_dir(&host).unwrap().count(), 1);
        assert!(units.join("timers.target.wants").is_dir());
        assert_eq!(
            config.read_link(&link).unwrap(),
            Some(PathBuf::from("/run/x"))
        );
        let facts = format!("{FACTS_DIR}/clone_army.json");
        assert!(config.write(&facts, "{}\n", 0o644).unwrap());
        assert_eq!(
            config.facts_file("clone_army.json").unwrap().unwrap(),
            "{}\n"
        );
    }
}
