//! What every clone shares on the host: the service template and the fleet target,
//! enabled at boot, and the layout the template expects of every clone (a config dir
//! and `.nspawn` settings, see [`super::config`]).

use std::path::Path;

use crate::protocol::error::Result;
use crate::sys::fsutil::{ensure_symlink, write_atomic};
use crate::sys::paths::{Layout, SERVICE_TEMPLATE, TARGET};
use crate::systemd::units;

/// The service template and the fleet target, enabled at boot. Returns whether any changed
/// (a daemon-reload is due). Called under the lock, after an earlier fleet was replaced
/// (`super::migrate`), whose units have these names.
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
