//! Clones: an OverlayFS upper layer over a base, mounted by a mount unit, booted by
//! `puppet-clone-army@<clone>.service`.

mod configure;
mod create;
mod lifecycle;
mod list;
mod remove;
mod secrets;
#[cfg(test)]
mod tests;

pub use configure::configure;
// `create` (without secrets) stays for callers that have none; the CLI uses the other.
#[allow(unused_imports)]
pub use create::create;
pub use create::{create_with_secrets, CloneRequest};
pub use lifecycle::{start, stop};
pub use list::{describe_named, list};
pub use remove::remove;
pub use secrets::SecretFiles;

use std::path::{Path, PathBuf};

use crate::base::{read_metadata, DISTRO_PUPPET_CONFDIR};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::fsutil::{create_dir_all, create_dir_like, read_optional, write_atomic};
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
        write_atomic(&target, content.as_bytes(), 0o644)
    }
}
