//! `clone create`: upper and work dirs, what the clone is given (puppet.conf, hostname,
//! run units, facts, secrets) in its config dir with its `.nspawn` settings, the mount
//! unit, daemon-reload, and with `--start` a started clone; `clone create-many`: as many
//! clones as asked, with one daemon-reload.

use super::config::{CloneConfig, HOSTNAME, PUPPET_CONF};
use super::nspawn_settings;
use super::secrets::{self, SecretFiles};
use super::twin;
use super::{confdir_of, describe_one};
use crate::clone::puppet_conf;
use crate::context::Context;
use crate::inventory::bases::read_metadata;
use crate::protocol::answers::{CloneChanged, CloneCreated, ClonesCreated};
use crate::protocol::error::{Error, Result};
use crate::sys::faults;
use crate::sys::fsutil::{create_dir_all, ensure_symlink, read_optional, write_atomic};
use crate::sys::names::{validate_base_name, validate_hostname, validate_name};
use crate::sys::paths::SERVICE_TEMPLATE;
use crate::sys::progress::{Progress, Quiet};
use crate::systemd::units::{self, parse_clone_mount};
use crate::systemd::wait_for_state;

/// `clone create`: everything the verb takes.
#[derive(Debug, Clone, Default)]
pub struct CloneRequest {
    pub name: String,
    pub base: String,
    /// `None` only in apply mode, where no server is asked.
    pub server: Option<String>,
    /// The server's port (`serverport`); `None` leaves Puppet's default. Only with a server.
    pub server_port: Option<u16>,
    pub certname: String,
    pub start: bool,
    /// The load shape (run mode, limits, facts): the whole shape, unset flags at their
    /// defaults (see [`super::shape`]). `None` leaves the base's own.
    pub shape: Option<super::shape::ShapeRequest>,
    /// `--root-password-hash-file` / `--challenge-password-file`: the secrets are read and
    /// validated before anything is touched, written only into the clone's config, and
    /// the answer says whether the clone has each, never what it is.
    pub secret_files: SecretFiles,
    /// `--twin-file`: one real node's record; the clone becomes its twin (see
    /// [`super::twin`]).
    pub twin_file: Option<std::path::PathBuf>,
    /// `--extension NAME=VALUE`: extension requests of a clone that is no twin (see
    /// [`crate::twin::extensions::requested`]).
    pub extensions: Vec<String>,
}

/// `clone create`.
pub fn create(ctx: &Context, request: &CloneRequest) -> Result<CloneCreated> {
    let checked = check(ctx, request)?;
    let mut created = make(ctx, &[checked], &Quiet)?
        .pop()
        .ok_or_else(|| Error::Internal(format!("clone {:?} vanished", request.name)))?;
    if request.start {
        created.changed |= start(ctx, &request.name)?;
        created.clone = describe_one(ctx, &request.name)?;
    }
    Ok(created)
}

/// `clone create-many`: the clones of `requests`, each as `clone create` makes it, with
/// one lock and one daemon-reload for them all (a reload costs more the more units
/// systemd has, so a clone at a time grows a fleet in O(N²)). Every request is checked,
/// and every name against the clones there are, before anything is written; none may
/// `--start` (`clone start` the clones after, in waves). The answers are in the order
/// asked.
pub fn create_many(
    ctx: &Context,
    requests: &[CloneRequest],
    progress: &dyn Progress,
) -> Result<ClonesCreated> {
    if let Some(i) = requests.iter().position(|r| r.start) {
        return Err(Error::InvalidArgument {
            field: "start",
            value: requests[i].name.clone(),
            reason:
                "clone create-many starts nothing: start the clones with one `clone start` after"
                    .to_owned(),
        });
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(twice) = requests.iter().find(|r| !seen.insert(r.name.as_str())) {
        return Err(Error::InvalidArgument {
            field: "name",
            value: twice.name.clone(),
            reason: "each clone once in a batch".to_owned(),
        });
    }
    let checked = requests
        .iter()
        .map(|request| check(ctx, request))
        .collect::<Result<Vec<_>>>()?;
    if checked.is_empty() {
        return Ok(ClonesCreated { clones: Vec::new() });
    }
    make(ctx, &checked, progress).map(|clones| ClonesCreated { clones })
}

/// The checked clones made under one lock, with one daemon-reload; their answers in
/// order. `progress` counts the clones whose files are written (the reload follows the
/// last).
fn make(ctx: &Context, checked: &[Checked], progress: &dyn Progress) -> Result<Vec<CloneCreated>> {
    let _lock = ctx.lock()?;
    // A fleet of sharpie-clone_army 0.2.1 holds these clones' units and dirs: it goes first.
    super::migrate::old_fleet::replace(ctx)?;
    // Before any mount point is made in it: root's alone, at every create.
    super::machines_dir::ensure(&ctx.layout)?;
    let bases = checked
        .iter()
        .map(|c| under_lock(ctx, c))
        .collect::<Result<Vec<_>>>()?;
    let host_limits = crate::host::limits::ensure(&ctx.layout);
    let bus_limits = crate::host::bus::ensure(&ctx.layout, ctx.systemd);
    let mut written = Vec::with_capacity(checked.len());
    progress.count(0, checked.len());
    for (one, base) in checked.iter().zip(&bases) {
        written.push(write_clone(ctx, one, base)?);
        progress.count(written.len(), checked.len());
    }
    let units_changed =
        write_units_and_reload(ctx, &checked.iter().zip(&written).collect::<Vec<_>>())?;
    let names: Vec<String> = checked.iter().map(|c| c.request.name.clone()).collect();
    let infos = super::describe_named(ctx, &names)?;
    Ok(infos
        .into_iter()
        .zip(written)
        .map(|(clone, written)| CloneCreated {
            clone,
            changed: written.changed || units_changed,
            root_password: written.root_password,
            challenge_password: written.challenge_password,
            host_limits: host_limits.clone(),
            bus_limits: Some(bus_limits.clone()),
        })
        .collect())
}

/// A request checked before the lock: its fields, its shape's plan, its secrets read.
struct Checked<'r> {
    request: &'r CloneRequest,
    plan: Option<super::shape::Plan>,
    secrets: secrets::CloneSecrets,
    twin: Option<crate::twin::Identity>,
    /// What its certificate request asks for: its twin's node's extensions, or its own.
    extensions: std::collections::BTreeMap<String, String>,
}

/// Everything that can be refused without the lock; nothing is written.
fn check<'r>(ctx: &Context, request: &'r CloneRequest) -> Result<Checked<'r>> {
    validate_name("clone", "name", &request.name)?;
    validate_base_name("base", &request.base)?;
    if let Some(server) = &request.server {
        validate_hostname("server", server)?;
    }
    if let (None, Some(port)) = (&request.server, request.server_port) {
        return Err(Error::InvalidArgument {
            field: "server_port",
            value: port.to_string(),
            reason: "is the port of --server, and no --server is given".to_owned(),
        });
    }
    validate_hostname("certname", &request.certname)?;
    let plan = request
        .shape
        .as_ref()
        .map(|s| s.validate(&ctx.layout))
        .transpose()?
        .map(|change| change.plan(super::shape::Current::defaults(), true))
        .transpose()?;
    let apply_mode = plan
        .as_ref()
        .and_then(|p| p.run)
        .is_some_and(|run| run.mode == super::run_mode::RunMode::Apply);
    if request.server.is_none() && !apply_mode {
        return Err(Error::InvalidArgument {
            field: "server",
            value: String::new(),
            reason: "required unless --run-mode apply (masterless clones ask no server)".to_owned(),
        });
    }
    let secrets = request.secret_files.read()?;
    // Checked before taking the lock too, so an unknown base is refused before anything
    // (even the lock file) is created; and again under the lock, against a concurrent
    // `base remove`.
    let Some(base) = read_metadata(&ctx.layout, &request.base)? else {
        return Err(unknown_base(ctx, &request.base));
    };
    let twin = match &request.twin_file {
        Some(path) => {
            let identity = crate::twin::read::read_one(twin::FIELD, path)?;
            twin::check(&identity, &request.certname, twin::base_family(&base)?)?;
            Some(identity)
        }
        None => None,
    };
    let own = crate::twin::extensions::requested(&request.extensions)?;
    let extensions = match &twin {
        Some(_) if !own.is_empty() => return Err(Error::InvalidArgument {
            field: crate::twin::extensions::FIELD,
            value: request.extensions.join(" "),
            reason:
                "a twin asks for its node's extensions: give --twin-file or --extension, not both"
                    .to_owned(),
        }),
        Some(identity) => identity.extensions.clone(),
        None => own,
    };
    Ok(Checked {
        request,
        plan,
        secrets,
        twin,
        extensions,
    })
}

/// What is checked under the lock, still before anything of the clone is written: its
/// base is there, and its name is no other base's clone and no unit of someone else's.
fn under_lock(ctx: &Context, checked: &Checked) -> Result<crate::inventory::bases::BaseMetadata> {
    let layout = &ctx.layout;
    let request = checked.request;
    let Some(base) = read_metadata(layout, &request.base)? else {
        return Err(unknown_base(ctx, &request.base));
    };
    let clone = request.name.as_str();
    let mount_unit_path = layout.fs(layout.unit_path(&layout.mount_unit_name(clone)));
    if let Some(text) = read_optional(&mount_unit_path)? {
        match parse_clone_mount(&text) {
            Some(existing) if existing.base() == request.base => {}
            Some(existing) => {
                return Err(Error::AlreadyExists {
                    what: "clone",
                    name: clone.to_owned(),
                    detail: format!("it uses base {:?}, not {:?}", existing.base(), request.base),
                })
            }
            None => {
                return Err(Error::AlreadyExists {
                    what: "mount unit",
                    name: mount_unit_path.display().to_string(),
                    detail: "it was not written by clone-army; not touching it".to_owned(),
                })
            }
        }
    }
    Ok(base)
}

/// What writing a clone's own files did.
struct Written {
    changed: bool,
    root_password: bool,
    challenge_password: bool,
}

/// The clone's dirs and what it is given in its config dir, with its `.nspawn` settings.
fn write_clone(
    ctx: &Context,
    checked: &Checked,
    base: &crate::inventory::bases::BaseMetadata,
) -> Result<Written> {
    let layout = &ctx.layout;
    let request = checked.request;
    let clone = request.name.as_str();
    let mut changed = false;
    for dir in [
        layout.upper_dir(clone),
        layout.work_dir(clone),
        layout.machine_dir(clone),
    ] {
        changed |= create_dir_all(&layout.fs(dir), 0o755)?;
    }
    let config = CloneConfig::of(layout, clone);
    changed |= config.create()?;
    faults::after("clone-create:dirs-created");

    let confdir = confdir_of(layout, &base.name)?;
    let mut conf = puppet_conf::render(
        request.server.as_deref(),
        request.server_port,
        &request.certname,
    );
    if let Some(plan) = &checked.plan {
        conf = plan.puppet_conf(conf);
    }
    if let Some(identity) = &checked.twin {
        conf = twin::puppet_conf_with(&conf, identity);
    }
    changed |= config.write_bound(PUPPET_CONF, &conf, 0o644)?;
    changed |= config.write_bound(HOSTNAME, &format!("{}\n", request.certname), 0o644)?;
    if let Some(plan) = &checked.plan {
        changed |= plan.apply_to_config(&config, &confdir)?;
    }
    changed |= super::stale_locks::apply(&config)?;
    changed |= match &checked.twin {
        Some(identity) => twin::apply(&config, identity)?,
        None => twin::clear(&config)?,
    };
    changed |= secrets::apply(&config, &checked.secrets, &checked.extensions)?;
    let (root_password, challenge_password) = secrets::report(&config)?;
    let current = nspawn_settings::read(layout, &config, &confdir)?;
    let mut settings = match &checked.plan {
        Some(plan) => plan.nspawn_settings(current),
        None => current,
    };
    // Its certname's kept SSL directory, so that a clone made again (same certname) has
    // its key and certificate again (see `super::ssl`), and the record that it is the
    // clone's.
    changed |= super::ssl::record(&config, &request.certname)?;
    settings.ssl = super::ssl::bind_for(
        layout,
        clone,
        &request.certname,
        &confdir,
        settings.ssl.is_some(),
    )?;
    changed |= nspawn_settings::write(&config, &settings)?;
    faults::after("clone-create:clone-files-written");
    Ok(Written {
        changed,
        root_password,
        challenge_password,
    })
}

/// Each clone's units on the host (mount unit, enable link, run-mode and limits
/// drop-ins, credentials), then one daemon-reload if any changed; whether any did.
fn write_units_and_reload(ctx: &Context, clones: &[(&Checked, &Written)]) -> Result<bool> {
    let layout = &ctx.layout;
    for (checked, _) in clones {
        crate::sys::reload::sweep_clone_dirs(layout, &checked.request.name)?;
    }
    let mut units_changed = crate::sys::reload::begin(layout)?;
    units_changed |= super::shared::write_units(layout)?;
    faults::after("clone-create:shared-units-written");
    for (checked, written) in clones {
        let request = checked.request;
        let clone = request.name.as_str();
        units_changed |= write_atomic(
            &layout.fs(layout.unit_path(&layout.mount_unit_name(clone))),
            units::clone_mount(layout, clone, &request.base).as_bytes(),
            0o644,
        )?;
        faults::after("clone-create:mount-unit-written");
        units_changed |= ensure_symlink(
            &layout.fs(layout.clone_enable_link(clone)),
            &layout.unit_path(SERVICE_TEMPLATE),
        )?;
        faults::after("clone-create:enable-link-created");
        if let Some(plan) = &checked.plan {
            units_changed |= plan.apply_on_host(layout, clone)?;
        }
        let config = CloneConfig::of(layout, clone);
        units_changed |=
            nspawn_settings::write_credentials(layout, &config, written.root_password)?;
        // The source the settings bind is checked again before every start.
        let source = nspawn_settings::read_apply_source(&config)?;
        units_changed |= super::apply_source::write_check(layout, clone, source.as_deref())?;
        faults::after("clone-create:host-units-written");
    }
    if units_changed {
        ctx.systemd.daemon_reload()?;
    }
    crate::sys::reload::done(layout)?;
    faults::after("clone-create:daemon-reloaded");
    Ok(units_changed)
}

/// Starts the clone's service unless it is active, and waits until it is; whether it
/// started it.
fn start(ctx: &Context, clone: &str) -> Result<bool> {
    let service = ctx.layout.service_unit_name(clone);
    if ctx.systemd.active_state(&service)? == "active" {
        return Ok(false);
    }
    super::lifecycle::start_unit(ctx, &service)?;
    wait_for_state(
        ctx.systemd,
        &service,
        "active",
        |s| s == "active",
        true,
        ctx.wait_timeout,
    )?;
    Ok(true)
}

/// `not-found` for `--base`, naming the bases that do exist.
fn unknown_base(ctx: &Context, base: &str) -> Error {
    let existing = crate::inventory::bases::complete_bases(&ctx.layout)
        .map(|bases| bases.into_iter().map(|(name, _)| name).collect())
        .unwrap_or_default();
    Error::NotFoundAmong {
        what: "base",
        field: "base",
        name: base.to_owned(),
        existing,
    }
}

impl From<CloneCreated> for CloneChanged {
    fn from(created: CloneCreated) -> Self {
        CloneChanged {
            clone: created.clone,
            changed: created.changed,
        }
    }
}
