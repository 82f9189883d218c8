//! `clone configure`: the agent's `server`/`serverport`/`certname`, the clone's hostname
//! and its load shape, in what the clone is given (its config dir, see [`super::config`]).
//!
//! Every configure also holds the agent to `usecacheonfailure = false`
//! ([`puppet_conf::USE_CACHE_ON_FAILURE`]), so a clone made before the helper wrote it gets
//! it here. puppet.conf and the facts reach a running clone at its agent's next run; the hostname,
//! the run units and the apply source at the clone's next start.

use super::config::{CloneConfig, HOSTNAME, PUPPET_CONF};
use super::nspawn_settings;
use super::run_mode::{self, RunMode};
use super::shape::{apply_source_refused, Current, ShapeChange, ShapeRequest};
use super::twin;
use super::{confdir_of, describe_one, find};
use crate::clone::puppet_conf;
use crate::context::Context;
use crate::inventory::bases::read_metadata;
use crate::protocol::answers::CloneChanged;
use crate::protocol::error::{Error, Result};
use crate::sys::names::{validate_hostname, validate_name};

/// `clone configure`: everything the verb takes; what is `None` (or an unset shape flag)
/// is left as it is.
#[derive(Debug, Clone, Default)]
pub struct ConfigureRequest {
    pub name: String,
    pub server: Option<String>,
    pub server_port: Option<u16>,
    pub certname: Option<String>,
    /// `--twin-file`: one real node's record; the clone becomes its twin (see
    /// [`super::twin`]).
    pub twin_file: Option<std::path::PathBuf>,
    pub shape: ShapeRequest,
}

/// `clone configure`: only the parts whose flags are given change (see
/// [`super::shape`]). The clone's systemd reads its new run units at its next start; facts
/// are read at the next agent run; limits are reloaded on the host by the daemon-reload
/// this does, and hold at the latest from the clone's next start.
pub fn configure(ctx: &Context, request: &ConfigureRequest) -> Result<CloneChanged> {
    let clone = request.name.as_str();
    let server = request.server.as_deref();
    let certname = request.certname.as_deref();
    let shape = &request.shape;
    validate_name("clone", "name", clone)?;
    if let Some(server) = server {
        validate_hostname("server", server)?;
    }
    if let Some(certname) = certname {
        validate_hostname("certname", certname)?;
    }
    let layout = &ctx.layout;
    let change = shape.validate(layout)?;
    refuse_source_outside_apply_mode(layout, clone, &change)?;
    let twin = request
        .twin_file
        .as_deref()
        .map(|path| crate::twin::read::read_one(twin::FIELD, path))
        .transpose()?;
    let _lock = ctx.lock()?;
    let mount = find(layout, clone)?;
    let confdir = confdir_of(layout, &mount.base())?;
    if let Some(identity) = &twin {
        let config = CloneConfig::of(layout, clone);
        let own = config
            .read(PUPPET_CONF)?
            .and_then(|conf| puppet_conf::parse(&conf).certname)
            .unwrap_or_default();
        // The certname the clone will have: the one asked for, else its own.
        let named = certname.map_or_else(|| own.clone(), str::to_owned);
        twin::check_new_node(twin::read_back(&config)?.as_ref(), identity, &own, &named)?;
        let base = read_metadata(layout, &mount.base())?.ok_or_else(|| {
            Error::Internal(format!(
                "base {:?} of clone {clone:?} vanished",
                mount.base()
            ))
        })?;
        twin::check(identity, &named, twin::base_family(&base)?)?;
    }
    // A fleet of sharpie-clone_army 0.2.1 holds the shared units' names: it goes first.
    super::migrate::old_fleet::replace(ctx)?;
    let reload_due = crate::sys::reload::begin(layout)? | super::shared::write_units(layout)?;
    let config = CloneConfig::of(layout, clone);

    let current_conf = config.read(PUPPET_CONF)?;
    let current = Current::read(layout, clone, &config)?;
    let plan = change.plan(current, false)?;

    let mut changed = false;
    let server_port = request.server_port;
    let asked = server.is_some()
        || server_port.is_some()
        || certname.is_some()
        || plan.run.is_some()
        || plan.agent_noop.is_some()
        || twin.is_some();
    let current = current_conf.as_deref().unwrap_or_default();
    let mut conf = plan.puppet_conf(puppet_conf::update(current, server, server_port, certname));
    if let Some(identity) = &twin {
        conf = twin::puppet_conf_with(&conf, identity);
    }
    // A clone made before the helper set `usecacheonfailure` gets it now, whatever else
    // is asked: a file that is there and says otherwise is brought up to date.
    if asked || (current_conf.is_some() && conf != current) {
        changed |= config.write_bound(PUPPET_CONF, &conf, 0o644)?;
    }
    if let Some(certname) = certname {
        changed |= config.write_bound(HOSTNAME, &format!("{certname}\n"), 0o644)?;
    }
    changed |= plan.apply_to_config(&config, &confdir)?;
    if let Some(identity) = &twin {
        changed |= twin::apply(&config, identity)?;
        changed |= super::secrets::rewrite_extensions(&config, &identity.extensions)?;
    }
    changed |= super::stale_locks::apply(&config)?;
    let mut settings = plan.nspawn_settings(nspawn_settings::read(layout, &config, &confdir)?);
    // A new certname has its own SSL directory; a clone that keeps its own in its upper
    // layer (no bind: made before they were kept) is left as it is. Either way the
    // helper records the certname as the clone's (see `super::ssl`).
    if let Some(certname) = certname {
        changed |= super::ssl::record(&config, certname)?;
        if settings.ssl.is_some() {
            settings.ssl = super::ssl::bind_for(layout, clone, certname, &confdir, true)?;
        }
    }
    changed |= nspawn_settings::write(&config, &settings)?;
    let mut units_changed = plan.apply_on_host(layout, clone)?;
    // The source the settings bind is checked again before every start.
    units_changed |=
        super::apply_source::write_check(layout, clone, settings.apply_source.as_deref())?;
    if reload_due || units_changed {
        ctx.systemd.daemon_reload()?;
    }
    crate::sys::reload::done(layout)?;
    changed |= units_changed;
    Ok(CloneChanged {
        clone: describe_one(ctx, clone)?,
        changed,
    })
}

/// `--apply-source` without `--run-mode` on a clone that is not in apply mode, refused
/// before the lock is taken, so that nothing (not even the lock file) is written. The
/// plan checks it again under the lock.
fn refuse_source_outside_apply_mode(
    layout: &crate::sys::paths::Layout,
    clone: &str,
    change: &ShapeChange,
) -> Result<()> {
    let (Some(source), None) = (&change.apply_source, change.run.mode) else {
        return Ok(());
    };
    find(layout, clone)?;
    let mode = run_mode::read_back(&CloneConfig::of(layout, clone))?.run_mode;
    if mode == Some(RunMode::Apply) {
        return Ok(());
    }
    Err(apply_source_refused(source, mode))
}
