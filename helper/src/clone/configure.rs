//! `clone configure`: the agent's `server`/`certname` and the clone's hostname.
//!
//! A running (mounted) clone is written through its mount, a stopped one in its upper
//! layer; see [`CloneView`]. The hostname takes effect at the clone's next boot.

use super::{confdir_of, describe_one, find, CloneView};
use crate::context::Context;
use crate::error::Result;
use crate::names::{validate_hostname, validate_name};
use crate::output::CloneChanged;
use crate::puppet_conf;

pub fn configure(
    ctx: &Context,
    clone: &str,
    master: Option<&str>,
    certname: Option<&str>,
) -> Result<CloneChanged> {
    validate_name("clone", "name", clone)?;
    if let Some(master) = master {
        validate_hostname("master", master)?;
    }
    if let Some(certname) = certname {
        validate_hostname("certname", certname)?;
    }
    let layout = &ctx.layout;
    let _lock = ctx.lock()?;
    let mount = find(layout, clone)?;
    let base = mount.base();
    let view = CloneView::open(ctx, clone, &base)?;
    let confdir = confdir_of(layout, &base)?;
    let conf_path = format!("{}/puppet.conf", confdir.trim_end_matches('/'));

    let mut changed = false;
    if master.is_some() || certname.is_some() {
        let current = view.read(&conf_path)?.unwrap_or_default();
        changed |= view.write(&conf_path, &puppet_conf::update(&current, master, certname))?;
    }
    if let Some(certname) = certname {
        changed |= view.write("/etc/hostname", &format!("{certname}\n"))?;
    }
    Ok(CloneChanged {
        clone: describe_one(ctx, clone)?,
        changed,
    })
}
