//! `clone stop`, and the start and stop of one unit: jobs for all the clones first, then
//! one bounded wait per clone, so a fleet stops in parallel. (`clone start` is in `start.rs`.)

use super::{describe_named, find};
use crate::context::Context;
use crate::error::Result;
use crate::names::validate_name;
use crate::output::CloneNames;
use crate::systemd::{wait_for_state, SystemdError};

pub fn stop(ctx: &Context, clones: &[String]) -> Result<CloneNames> {
    check(ctx, clones)?;
    let units: Vec<String> = clones
        .iter()
        .map(|c| ctx.layout.service_unit_name(c))
        .collect();
    for unit in &units {
        stop_unit(ctx, unit)?;
    }
    for unit in &units {
        wait_stopped(ctx, unit)?;
    }
    Ok(CloneNames {
        clones: describe_named(ctx, clones)?,
    })
}

/// Queues a start, after clearing a `failed` state: once a clone's service has failed
/// often enough to hit its start limit, systemd refuses to start it again until the
/// failure is reset, and `clone start` is how a person (or Puppet) recovers it.
/// A unit systemd has not loaded has nothing to reset.
pub fn start_unit(ctx: &Context, unit: &str) -> Result<()> {
    reset_failed(ctx, unit)?;
    Ok(ctx.systemd.start_unit(unit)?)
}

/// Clears a unit's `failed` state; a unit systemd has not loaded has nothing to reset.
/// Also what `clone remove` does last to a stopped clone's units, so a removed clone
/// leaves no `failed` (or `not-found failed`) unit behind in `systemctl --failed`.
pub fn reset_failed(ctx: &Context, unit: &str) -> Result<()> {
    match ctx.systemd.reset_failed_unit(unit) {
        Ok(()) | Err(SystemdError::NoSuchUnit { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Queues a stop; a unit systemd has not loaded is already stopped.
pub fn stop_unit(ctx: &Context, unit: &str) -> Result<()> {
    match ctx.systemd.stop_unit(unit) {
        Ok(()) | Err(SystemdError::NoSuchUnit { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

pub fn wait_stopped(ctx: &Context, unit: &str) -> Result<()> {
    Ok(wait_for_state(
        ctx.systemd,
        unit,
        "inactive",
        |s| s == "inactive" || s == "failed",
        false,
        ctx.wait_timeout,
    )?)
}

/// Every name valid and every clone existing, before anything is done to any of them.
fn check(ctx: &Context, clones: &[String]) -> Result<()> {
    for clone in clones {
        validate_name("clone", "name", clone)?;
    }
    for clone in clones {
        find(&ctx.layout, clone)?;
    }
    Ok(())
}
