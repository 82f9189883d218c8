//! Clones: an OverlayFS upper layer over a base, mounted by a mount unit, booted by
//! `puppet-clone-army@<clone>.service`.

pub mod apply_source;
mod configure;
mod create;
pub mod facts;
mod lifecycle;
pub mod limits;
mod list;
pub mod problems;
mod remove;
pub mod run_mode;
mod secrets;
pub mod shape;
mod start;
#[cfg(test)]
mod tests;

// The narrower forms serve the tests and any caller that leaves the load shape or the
// secrets alone; the CLI runs `create_full`.
#[cfg_attr(not(test), allow(unused_imports))]
pub use configure::{configure, configure_with};
#[cfg_attr(not(test), allow(unused_imports))]
pub use create::{create, create_full, create_with, create_with_secrets, CloneRequest};
pub use lifecycle::stop;
pub use list::{describe_named, describe_without_systemd_failing, list};
pub use remove::remove;
pub use secrets::SecretFiles;
#[cfg_attr(not(test), allow(unused_imports))]
pub use start::{start, ClonesStarted};

use std::path::{Path, PathBuf};

use crate::base::{read_metadata, DISTRO_PUPPET_CONFDIR};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::fsutil::{
    create_dir_all, create_dir_like, ensure_symlink, read_optional, remove_file, write_atomic,
};
use crate::mounts::MountTable;
use crate::paths::{Layout, UNIT_DIR};
use crate::units::{parse_clone_mount, CloneMount};

/// Every clone: each mount unit of ours for a directory in `/var/lib/machines`, by name.
pub fn discover(layout: &Layout) -> Result<Vec<CloneMount>> {
    let dir = layout.fs(UNIT_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", dir, e)),
    };
    let mut clones = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", &dir, e))?;
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("mount") {
            continue;
        }
        let Some(text) = read_optional(&path)? else {
            continue;
        };
        if let Some(mount) = parse_clone_mount(&text) {
            // A file named otherwise is not one of ours, whatever it says inside.
            if entry.file_name().to_string_lossy() == layout.mount_unit_name(&mount.clone) {
                clones.push(mount);
            }
        }
    }
    clones.sort_by(|a, b| a.clone.cmp(&b.clone));
    Ok(clones)
}

/// The clone's mount unit as read back, or `not-found`.
pub fn find(layout: &Layout, clone: &str) -> Result<CloneMount> {
    let path = layout.fs(layout.unit_path(&layout.mount_unit_name(clone)));
    read_optional(&path)?
        .and_then(|text| parse_clone_mount(&text))
        .filter(|m| m.clone == clone)
        .ok_or_else(|| Error::NotFound {
            what: "clone",
            name: clone.to_owned(),
        })
}

/// One clone as `clone list` reports it.
pub fn describe_one(ctx: &Context, clone: &str) -> Result<crate::output::CloneInfo> {
    describe_named(ctx, &[clone.to_owned()])?
        .pop()
        .ok_or_else(|| Error::Internal(format!("clone {clone:?} vanished")))
}

/// Where the base keeps puppet.conf (base.json says; Debian's package by default).
pub fn confdir_of(layout: &Layout, base: &str) -> Result<String> {
    Ok(read_metadata(layout, base)?
        .map(|m| m.puppet_confdir)
        .unwrap_or_else(|| DISTRO_PUPPET_CONFDIR.to_owned()))
}

/// Where the helper writes a file of the clone's view, and how it reads the view.
///
/// While the overlay is mounted, writes go through the mount, so the kernel does the
/// copy-up and nothing is written behind a live overlay's back (into its upper dir, or
/// worse, the shared base). While it is not, writes go into the upper dir, creating the
/// directories there with the base's modes and owners so the clone's view is unchanged.
pub struct CloneView {
    base_root: PathBuf,
    upper_root: PathBuf,
    mounted_root: Option<PathBuf>,
}

impl CloneView {
    pub fn open(ctx: &Context, clone: &str, base: &str) -> Result<Self> {
        let layout = &ctx.layout;
        let machine_dir = layout.machine_dir(clone);
        let mounted = MountTable::read(layout)?.is_mounted(&machine_dir);
        Ok(CloneView {
            base_root: layout.fs(layout.base_dir(base)),
            upper_root: layout.fs(layout.upper_dir(clone)),
            mounted_root: mounted.then(|| layout.fs(&machine_dir)),
        })
    }

    /// The file as the clone sees it.
    pub fn read(&self, path: &str) -> Result<Option<String>> {
        let relative = path.trim_start_matches('/');
        if let Some(root) = &self.mounted_root {
            return read_optional(&root.join(relative));
        }
        match read_optional(&self.upper_root.join(relative))? {
            Some(text) => Ok(Some(text)),
            None => read_optional(&self.base_root.join(relative)),
        }
    }

    /// Writes the file into the clone's view unless it already reads so. Returns whether it wrote.
    pub fn write(&self, path: &str, content: &str) -> Result<bool> {
        if self.read(path)?.as_deref() == Some(content) {
            return Ok(false);
        }
        write_atomic(&self.target_of(path)?, content.as_bytes(), 0o644)
    }

    /// Writes a file that only clone-army puts into the clone (never one from the base),
    /// with `mode`, unless it already has that content and mode. Returns whether it wrote.
    pub fn write_own(&self, path: &str, content: &str, mode: u32) -> Result<bool> {
        write_atomic(&self.target_of(path)?, content.as_bytes(), mode)
    }

    /// Points the symlink `path` in the clone at `target` (a path inside the clone).
    pub fn symlink(&self, path: &str, target: &str) -> Result<bool> {
        ensure_symlink(&self.target_of(path)?, Path::new(target))
    }

    /// Removes a file or symlink that only clone-army puts into the clone. Files of the
    /// base are never removed this way (that would need a whiteout). Returns whether it removed.
    pub fn remove_own(&self, path: &str) -> Result<bool> {
        let relative = path.trim_start_matches('/');
        let root = self.mounted_root.as_ref().unwrap_or(&self.upper_root);
        remove_file(&root.join(relative))
    }

    /// Where the symlink `path` of the clone's view points, `None` when it is no symlink.
    pub fn read_link(&self, path: &str) -> Result<Option<PathBuf>> {
        let relative = path.trim_start_matches('/');
        let roots: Vec<&PathBuf> = match &self.mounted_root {
            Some(root) => vec![root],
            None => vec![&self.upper_root, &self.base_root],
        };
        for root in roots {
            let full = root.join(relative);
            match std::fs::symlink_metadata(&full) {
                Ok(m) if m.file_type().is_symlink() => {
                    return std::fs::read_link(&full)
                        .map(Some)
                        .map_err(|e| Error::io("read the link", full, e))
                }
                Ok(_) => return Ok(None),
                Err(_) => continue,
            }
        }
        Ok(None)
    }

    /// Whether the clone sees anything at `path` (a dangling symlink counts).
    pub fn exists(&self, path: &str) -> bool {
        let relative = path.trim_start_matches('/');
        let roots: Vec<&PathBuf> = match &self.mounted_root {
            Some(root) => vec![root],
            None => vec![&self.upper_root, &self.base_root],
        };
        roots
            .iter()
            .any(|root| std::fs::symlink_metadata(root.join(relative)).is_ok())
    }

    /// Where writing `path` of the clone's view goes, with its directories made.
    fn target_of(&self, path: &str) -> Result<PathBuf> {
        let relative = Path::new(path.trim_start_matches('/'));
        let target = match &self.mounted_root {
            Some(root) => {
                if let Some(parent) = relative.parent() {
                    create_dir_all(&root.join(parent), 0o755)?;
                }
                root.join(relative)
            }
            None => {
                let mut dir = self.upper_root.clone();
                let mut like = self.base_root.clone();
                for component in relative.parent().into_iter().flat_map(Path::components) {
                    dir.push(component);
                    like.push(component);
                    create_dir_like(&dir, &like)?;
                }
                self.upper_root.join(relative)
            }
        };
        Ok(target)
    }
}
