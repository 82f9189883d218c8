//! What every clone shares on the host: the service template and the fleet target,
//! enabled at boot, and the layout the template expects of every clone (a config dir
//! and `.nspawn` settings, see [`super::config`]).

use std::path::Path;

use crate::context::Context;
use crate::protocol::error::Result;
use crate::sys::fsutil::{ensure_symlink, write_atomic};
use crate::sys::paths::{Layout, SERVICE_TEMPLATE, TARGET};
use crate::systemd::units;

/// Replaces a fleet of sharpie-clone_army 0.2.1 ([`super::old_fleet`]), then writes the
/// template and the target. Returns whether a unit file changed (a daemon-reload is due).
/// Called under the lock.
pub fn ensure(ctx: &Context) -> Result<bool> {
    super::old_fleet::replace(ctx)?;
    write_units(&ctx.layout)
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
