//! `clone remove`: stop, unmount, reset a `failed` state, then remove the symlink, the mount unit and the dirs.
//! Missing pieces are fine; anything still mounted is never removed.

use std::path::PathBuf;

use super::lifecycle::{reset_failed, stop_unit, wait_stopped};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::faults;
use crate::fsutil::{read_optional, remove_dir_all, remove_file};
use crate::mounts::MountTable;
use crate::names::validate_name;
use crate::output::ClonesRemoved;
use crate::units::is_ours;

pub fn remove(ctx: &Context, clones: &[String]) -> Result<ClonesRemoved> {
    for clone in clones {
        validate_name("clone", "name", clone)?;
    }
    let _lock = ctx.lock()?;
    let mut removed = Vec::new();
    let mut units_changed = crate::reload::begin(&ctx.layout)?;
    let mut result = Ok(());
    for clone in clones {
        match remove_one(ctx, clone) {
            Ok((any, units)) => {
                units_changed |= units;
                if any {
                    removed.push(clone.clone());
                }
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    // Reload for what was removed even when a later clone failed.
    if units_changed {
        ctx.systemd.daemon_reload()?;
    }
    crate::reload::done(&ctx.layout)?;
    faults::after("clone-remove:daemon-reloaded");
    result?;
    Ok(ClonesRemoved {
        changed: !removed.is_empty(),
        removed,
    })
}

/// Returns (anything removed, any unit file or symlink removed).
fn remove_one(ctx: &Context, clone: &str) -> Result<(bool, bool)> {
    let layout = &ctx.layout;
    let mount_unit = layout.mount_unit_name(clone);
    let mount_unit_path = layout.fs(layout.unit_path(&mount_unit));
    if let Some(text) = read_optional(&mount_unit_path)? {
        if !is_ours(&text) {
            return Err(Error::AlreadyExists {
                what: "mount unit",
                name: mount_unit_path.display().to_string(),
                detail: "it was not written by clone-army; not removing it".to_owned(),
            });
        }
    }

    crate::reload::sweep_clone_dirs(layout, clone)?;
    let service = layout.service_unit_name(clone);
    stop_unit(ctx, &service)?;
    wait_stopped(ctx, &service)?;
    stop_unit(ctx, &mount_unit)?;
    wait_stopped(ctx, &mount_unit)?;
    // A clone that crashed stays `failed` after its stop; reset it, or systemd keeps
    // listing the removed clone's units as failed until the next reboot.
    reset_failed(ctx, &service)?;
    reset_failed(ctx, &mount_unit)?;
    faults::after("clone-remove:stopped");

    let machine_dir = layout.machine_dir(clone);
    let dirs: [PathBuf; 3] = [layout.upper_dir(clone), layout.work_dir(clone), machine_dir];
    let table = MountTable::read(layout)?;
    for dir in &dirs {
        if let Some(point) = table.mounted_at_or_below(dir) {
            return Err(Error::StillMounted {
                what: "clone",
                name: clone.to_owned(),
                path: point.to_owned(),
            });
        }
    }

    let mut units = remove_file(&layout.fs(layout.clone_enable_link(clone)))?;
    faults::after("clone-remove:enable-link-removed");
    units |= remove_file(&mount_unit_path)?;
    faults::after("clone-remove:mount-unit-removed");
    units |= super::limits::remove(layout, clone)?;
    faults::after("clone-remove:limits-removed");
    let mut any = units;
    let steps = [
        "clone-remove:upper-dir-removed",
        "clone-remove:work-dir-removed",
        "clone-remove:machine-dir-removed",
    ];
    for (dir, step) in dirs.iter().zip(steps) {
        any |= remove_dir_all(&layout.fs(dir))?;
        faults::after(step);
    }
    Ok((any, units))
}
