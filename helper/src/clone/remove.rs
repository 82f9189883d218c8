//! `clone remove`: stop, unmount, reset a `failed` state, then remove the symlink, the
//! mount unit, the drop-ins, the `.nspawn` settings and the dirs.
//! Missing pieces are fine; anything still mounted is never removed.
//!
//! The clone's SSL directory is kept (see [`super::ssl`]): a clone made again under its
//! certname has its key and certificate again. With `--forget-ssl` it goes too.
//!
//! Many clones are removed in one batch: every service's stop job is queued and all are
//! waited for together, then every mount unit's the same way, then each clone's files go,
//! and one daemon-reload ends the call. Removing one clone after the other (a stop, a wait
//! and a reload each) took 201 s for 29 clones; the batch 19.7 s.

use std::path::PathBuf;

use super::lifecycle::{reset_failed, stop_all};
use crate::context::Context;
use crate::protocol::answers::ClonesRemoved;
use crate::protocol::error::{Error, Result};
use crate::sys::faults;
use crate::sys::fsutil::{read_optional, remove_dir_all, remove_file};
use crate::sys::mounts::MountTable;
use crate::sys::names::validate_name;
use crate::systemd::units::is_ours;

pub fn remove(ctx: &Context, clones: &[String]) -> Result<ClonesRemoved> {
    remove_with(ctx, clones, false)
}

/// `clone remove`, with `--forget-ssl` or without.
pub fn remove_with(ctx: &Context, clones: &[String], forget_ssl: bool) -> Result<ClonesRemoved> {
    for clone in clones {
        validate_name("clone", "name", clone)?;
    }
    // Duplicates are removed once.
    let mut unique: Vec<&String> = Vec::new();
    for clone in clones {
        if !unique.contains(&clone) {
            unique.push(clone);
        }
    }
    let _lock = ctx.lock()?;
    // A mount unit clone-army did not write stops the whole batch before anything is done.
    for clone in &unique {
        check_ours(ctx, clone)?;
    }
    let mut removed = Vec::new();
    let mut units_changed = crate::sys::reload::begin(&ctx.layout)?;
    let mut result = stop_clones(ctx, &unique);
    if result.is_ok() {
        for clone in &unique {
            match remove_files(ctx, clone, forget_ssl) {
                Ok((any, units)) => {
                    units_changed |= units;
                    if any {
                        removed.push((*clone).clone());
                    }
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
    }
    // Reload for what was removed even when a later clone failed: once for the batch.
    if units_changed {
        ctx.systemd.daemon_reload()?;
    }
    crate::sys::reload::done(&ctx.layout)?;
    faults::after("clone-remove:daemon-reloaded");
    result?;
    Ok(ClonesRemoved {
        changed: !removed.is_empty(),
        removed,
    })
}

fn check_ours(ctx: &Context, clone: &str) -> Result<()> {
    let layout = &ctx.layout;
    let mount_unit_path = layout.fs(layout.unit_path(&layout.mount_unit_name(clone)));
    match read_optional(&mount_unit_path)? {
        Some(text) if !is_ours(&text) => Err(Error::AlreadyExists {
            what: "mount unit",
            name: mount_unit_path.display().to_string(),
            detail: "it was not written by clone-army; not removing it".to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Every clone's service stopped (all jobs queued, then one wait), then every mount unit.
fn stop_clones(ctx: &Context, clones: &[&String]) -> Result<()> {
    let layout = &ctx.layout;
    for clone in clones {
        crate::sys::reload::sweep_clone_dirs(layout, clone)?;
    }
    let services: Vec<String> = clones.iter().map(|c| layout.service_unit_name(c)).collect();
    stop_all(ctx, &services)?;
    let mounts: Vec<String> = clones.iter().map(|c| layout.mount_unit_name(c)).collect();
    stop_all(ctx, &mounts)?;
    // A clone that crashed stays `failed` after its stop; reset it, or systemd keeps
    // listing the removed clone's units as failed until the next reboot.
    for unit in services.iter().chain(&mounts) {
        reset_failed(ctx, unit)?;
    }
    faults::after("clone-remove:stopped");
    Ok(())
}

/// Removes one stopped clone's files. Returns (anything removed, any unit file or symlink
/// removed).
fn remove_files(ctx: &Context, clone: &str, forget_ssl: bool) -> Result<(bool, bool)> {
    let layout = &ctx.layout;
    let mount_unit_path = layout.fs(layout.unit_path(&layout.mount_unit_name(clone)));
    let machine_dir = layout.machine_dir(clone);
    let dirs: [PathBuf; 4] = [
        layout.upper_dir(clone),
        layout.work_dir(clone),
        layout.config_dir(clone),
        machine_dir,
    ];
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

    // Before the settings and the upper layer go: they say which directory is the clone's.
    let confdir = match crate::inventory::find(layout, clone) {
        Ok(mount) => crate::inventory::confdir_of(layout, &mount.base())?,
        Err(_) => crate::inventory::bases::DISTRO_PUPPET_CONFDIR.to_owned(),
    };
    let ssl_changed = super::ssl::on_remove(layout, clone, &confdir, forget_ssl)?;

    let mut units = remove_file(&layout.fs(layout.clone_enable_link(clone)))?;
    faults::after("clone-remove:enable-link-removed");
    units |= remove_file(&mount_unit_path)?;
    faults::after("clone-remove:mount-unit-removed");
    units |= super::limits::remove(layout, clone)?;
    units |= super::apply_source::remove_check(layout, clone)?;
    faults::after("clone-remove:limits-removed");
    let mut any = units | ssl_changed;
    any |= super::nspawn_settings::remove(layout, &super::config::CloneConfig::of(layout, clone))?;
    faults::after("clone-remove:nspawn-settings-removed");
    let steps = [
        "clone-remove:upper-dir-removed",
        "clone-remove:work-dir-removed",
        "clone-remove:config-dir-removed",
        "clone-remove:machine-dir-removed",
    ];
    for (dir, step) in dirs.iter().zip(steps) {
        any |= remove_dir_all(&layout.fs(dir))?;
        faults::after(step);
    }
    Ok((any, units))
}
