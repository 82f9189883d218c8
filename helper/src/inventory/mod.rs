//! What is on the host, read without changing it: the clones (their mount units), the
//! bases (their `base.json`) and the stale state a crash leaves ([`problems`]). Below
//! `base` and `clone`, which both need to know what the other has made.

pub mod bases;
pub mod os;
pub mod problems;

use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::read_optional;
use crate::sys::paths::{Layout, UNIT_DIR};
use crate::systemd::units::{parse_clone_mount, CloneMount};

use self::bases::{read_metadata, DISTRO_PUPPET_CONFDIR};

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

/// Where the base keeps puppet.conf (base.json says; Debian's package by default).
pub fn confdir_of(layout: &Layout, base: &str) -> Result<String> {
    Ok(read_metadata(layout, base)?
        .map(|m| m.puppet_confdir)
        .unwrap_or_else(|| DISTRO_PUPPET_CONFDIR.to_owned()))
}
