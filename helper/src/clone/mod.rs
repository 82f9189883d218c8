//! Clones: an OverlayFS upper layer over a base, mounted by a mount unit, booted by
//! `puppet-clone-army@<clone>.service` with what the host gives it bound in read-only
//! (its config dir and `.nspawn` settings, see [`config`]).

pub mod apply_source;
pub mod config;
mod configure;
mod create;
pub mod facts;
mod legacy;
mod lifecycle;
pub mod limits;
mod list;
pub mod nspawn_settings;
pub mod problems;
mod remove;
pub mod run_mode;
pub mod secrets;
pub mod shape;
mod shared;
pub mod stale_locks;
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

use crate::base::{read_metadata, DISTRO_PUPPET_CONFDIR};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::fsutil::read_optional;
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

/// Where a clone's settings are read back from: its config dir, or, for a clone an older
/// clone-army made, its upper layer (see [`legacy`]).
pub fn settings_of(
    layout: &Layout,
    mount: &CloneMount,
    confdir: &str,
) -> Result<Box<dyn config::SettingsSource>> {
    let config = config::CloneConfig::of(layout, &mount.clone);
    if nspawn_settings::exists(&config)? {
        return Ok(Box::new(config));
    }
    Ok(Box::new(legacy::LegacySettings::open(
        layout,
        &mount.clone,
        confdir,
    )?))
}
