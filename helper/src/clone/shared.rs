//! What every clone shares on the host: the service template and the fleet target,
//! enabled at boot, and the layout the template expects of every clone (a config dir
//! and `.nspawn` settings, see [`super::config`]).
//!
//! The template binds nothing on its command line and relies on each clone's `.nspawn`
//! settings, so before it is written every clone an older clone-army made is moved over
//! ([`super::legacy::move_over`]). A clone moved over but started with the older
//! template still boots as it did: nothing in its own tree was removed.

use std::path::Path;

use crate::context::Context;
use crate::protocol::error::Result;
use crate::sys::fsutil::{ensure_symlink, write_atomic};
use crate::sys::paths::{Layout, SERVICE_TEMPLATE, TARGET};
use crate::systemd::units;

/// Replaces a fleet of sharpie-clone_army 0.2.1 ([`super::old_fleet`]), moves every
/// legacy clone over, then writes the template and the target. Returns whether a unit
/// file changed (a daemon-reload is due). Called under the lock.
pub fn ensure(ctx: &Context) -> Result<bool> {
    let layout = &ctx.layout;
    super::old_fleet::replace(ctx)?;
    for mount in super::discover(layout)? {
        let confdir = super::confdir_of(layout, &mount.base())?;
        if super::legacy::move_over(layout, &mount.clone, &confdir)? {
            crate::protocol::warnings::warn(format!(
                "clone {} now gets its settings from {} (made by an older clone-army)",
                mount.clone,
                layout.config_dir(&mount.clone).display()
            ));
        }
    }
    write_units(layout)
}

/// The service template and the fleet target, enabled at boot. Returns whether any changed.
pub(super) fn write_units(layout: &Layout) -> Result<bool> {
    let mut changed = write_atomic(
        &layout.fs(layout.unit_path(SERVICE_TEMPLATE)),
        units::service_template().as_bytes(),
        0o644,
    )?;
    changed |= write_atomic(
        &layout.fs(layout.unit_path(TARGET)),
        units::fleet_target().as_bytes(),
        0o644,
    )?;
    changed |= ensure_symlink(
        &layout.fs(layout.target_enable_link()),
        Path::new(&layout.unit_path(TARGET)),
    )?;
    Ok(changed)
}
