//! `clone configure`: the agent's `server`/`certname` and the clone's hostname.
//!
//! A running (mounted) clone is written through its mount, a stopped one in its upper
//! layer; see [`CloneView`]. The hostname takes effect at the clone's next boot.

use super::run_mode::{self, RunMode};
use super::shape::{apply_source_refused, Current, ShapeChange, ShapeRequest};
use super::{confdir_of, describe_one, find, CloneView};
use crate::context::Context;
use crate::error::Result;
use crate::names::{validate_hostname, validate_name};
use crate::output::CloneChanged;
use crate::puppet_conf;

#[cfg_attr(not(test), allow(dead_code))]
pub fn configure(
    ctx: &Context,
    clone: &str,
    master: Option<&str>,
    certname: Option<&str>,
) -> Result<CloneChanged> {
    configure_with(ctx, clone, master, certname, &ShapeRequest::default())
}

/// `configure` with load-shape flags: only the parts whose flags are given change (see
/// [`super::shape`]). The clone's systemd reads its new run units at its next start; facts
/// are read at the next agent run; limits are reloaded on the host by the daemon-reload
/// this does, and hold at the latest from the clone's next start.
pub fn configure_with(
    ctx: &Context,
    clone: &str,
    master: Option<&str>,
    certname: Option<&str>,
    shape: &ShapeRequest,
) -> Result<CloneChanged> {
    validate_name("clone", "name", clone)?;
    if let Some(master) = master {
        validate_hostname("master", master)?;
    }
    if let Some(certname) = certname {
        validate_hostname("certname", certname)?;
    }
    let layout = &ctx.layout;
    let change = shape.validate(layout)?;
    refuse_source_outside_apply_mode(layout, clone, &change)?;
    let _lock = ctx.lock()?;
    let mount = find(layout, clone)?;
    let base = mount.base();
    let view = CloneView::open(ctx, clone, &base)?;
    let confdir = confdir_of(layout, &base)?;
    let conf_path = format!("{}/puppet.conf", confdir.trim_end_matches('/'));

    let upper = layout.fs(&mount.upperdir);
    let current_conf = view.read(&conf_path)?;
    let current = Current::read(layout, clone, &upper, current_conf.as_deref())?;
    let plan = change.plan(current, false)?;

    let mut changed = false;
    if master.is_some() || certname.is_some() || plan.run.is_some() {
        let current = current_conf.unwrap_or_default();
        let conf = plan.puppet_conf(puppet_conf::update(&current, master, certname));
        changed |= view.write(&conf_path, &conf)?;
    }
    if let Some(certname) = certname {
        changed |= view.write("/etc/hostname", &format!("{certname}\n"))?;
    }
    changed |= plan.apply_in_clone(&view, &confdir)?;
    if plan.apply_on_host(layout, clone)? {
        ctx.systemd.daemon_reload()?;
        changed = true;
    }
    Ok(CloneChanged {
        clone: describe_one(ctx, clone)?,
        changed,
    })
}

/// `--apply-source` without `--run-mode` on a clone that is not in apply mode, refused
/// before the lock is taken, so that nothing (not even the lock file) is written. The
/// plan checks it again under the lock.
fn refuse_source_outside_apply_mode(
    layout: &crate::paths::Layout,
    clone: &str,
    change: &ShapeChange,
) -> Result<()> {
    let (Some(source), None) = (&change.apply_source, change.run.mode) else {
        return Ok(());
    };
    let upper = layout.fs(&find(layout, clone)?.upperdir);
    let mode = run_mode::read_back(&upper, None)?.run_mode;
    if mode == Some(RunMode::Apply) {
        return Ok(());
    }
    Err(apply_source_refused(source, mode))
}
