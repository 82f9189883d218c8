//! `clone list`: the mount units on disk, each clone's settings from its config dir, and
//! the services' states from one ListUnitsByPatterns call.

use std::collections::BTreeMap;

use super::{confdir_of, discover, find, settings_of};
use crate::clone::puppet_conf;
use crate::context::Context;
use crate::inventory::problems;
use crate::protocol::answers::{CloneInfo, CloneList, CloneState};
use crate::protocol::error::Result;
use crate::sys::mounts::MountTable;
use crate::systemd::units::CloneMount;
use crate::systemd::SystemdError;

pub const SERVICE_PATTERN: &str = "puppet-clone-army@*.service";

pub fn list(ctx: &Context) -> Result<CloneList> {
    let clones = describe(ctx, discover(&ctx.layout)?)?;
    let owned = clones.iter().map(|c| c.name.clone()).collect();
    let problems = problems::orphan_mounts(&ctx.layout, &owned)?;
    Ok(CloneList { clones, problems })
}

/// The named clones as `clone list` reports them, in the order given (one systemd call).
pub fn describe_named(ctx: &Context, names: &[String]) -> Result<Vec<CloneInfo>> {
    let mounts = names
        .iter()
        .map(|name| find(&ctx.layout, name))
        .collect::<Result<Vec<_>>>()?;
    describe(ctx, mounts)
}

fn describe(ctx: &Context, mounts: Vec<CloneMount>) -> Result<Vec<CloneInfo>> {
    if mounts.is_empty() {
        return Ok(Vec::new());
    }
    let states = ctx.systemd.unit_states(&[SERVICE_PATTERN.to_owned()])?;
    describe_with_states(ctx, mounts, &states)
}

/// Like `clone list`, but a systemd that cannot be asked is no error: the clones are
/// described from disk alone and the systemd error is returned beside them (their
/// `state` then means nothing). For read-only readers such as `report`, which must work
/// where there is no system bus.
pub fn describe_without_systemd_failing(
    ctx: &Context,
    mounts: Vec<CloneMount>,
) -> Result<(Vec<CloneInfo>, Option<SystemdError>)> {
    if mounts.is_empty() {
        return Ok((Vec::new(), None));
    }
    match ctx.systemd.unit_states(&[SERVICE_PATTERN.to_owned()]) {
        Ok(states) => Ok((describe_with_states(ctx, mounts, &states)?, None)),
        Err(e) => Ok((
            describe_with_states(ctx, mounts, &BTreeMap::new())?,
            Some(e),
        )),
    }
}

fn describe_with_states(
    ctx: &Context,
    mounts: Vec<CloneMount>,
    states: &BTreeMap<String, String>,
) -> Result<Vec<CloneInfo>> {
    let layout = &ctx.layout;
    let table = MountTable::read(layout)?;
    let mut confdirs: BTreeMap<String, String> = BTreeMap::new();
    let mut clones = Vec::with_capacity(mounts.len());
    for mount in mounts {
        let base = mount.base();
        let confdir = match confdirs.get(&base) {
            Some(c) => c.clone(),
            None => {
                let c = confdir_of(layout, &base)?;
                confdirs.insert(base.clone(), c.clone());
                c
            }
        };
        let source = settings_of(layout, &mount, &confdir)?;
        let settings = source
            .puppet_conf()?
            .as_deref()
            .map(puppet_conf::parse)
            .unwrap_or_default();
        let shape = super::shape::describe(layout, &mount.clone, source.as_ref())?;
        drop(source);
        let unit = layout.service_unit_name(&mount.clone);
        let state = states
            .get(&unit)
            .map(|s| CloneState::from_active_state(s))
            .unwrap_or(CloneState::Stopped);
        let problems = problems::of_clone(
            layout,
            &mount,
            settings.server.as_deref(),
            settings.certname.as_deref(),
        );
        clones.push(CloneInfo {
            problems,
            mounted: table.is_mounted(&layout.machine_dir(&mount.clone)),
            name: mount.clone,
            base,
            master: settings.server,
            certname: settings.certname,
            state,
            unit,
            shape,
        });
    }
    Ok(clones)
}
