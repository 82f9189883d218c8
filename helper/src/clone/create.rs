//! `clone create`: upper and work dirs, what the clone is given (puppet.conf, hostname,
//! run units, facts, secrets) in its config dir with its `.nspawn` settings, the mount
//! unit, daemon-reload, and with `--start` a started clone.

use super::config::{CloneConfig, HOSTNAME, PUPPET_CONF};
use super::nspawn_settings;
use super::secrets::{self, SecretFiles};
use super::{confdir_of, describe_one};
use crate::clone::puppet_conf;
use crate::context::Context;
use crate::inventory::bases::read_metadata;
use crate::protocol::answers::{CloneChanged, CloneCreated};
use crate::protocol::error::{Error, Result};
use crate::sys::faults;
use crate::sys::fsutil::{create_dir_all, ensure_symlink, read_optional, write_atomic};
use crate::sys::names::{validate_base_name, validate_hostname, validate_name};
use crate::sys::paths::SERVICE_TEMPLATE;
use crate::systemd::units::{self, parse_clone_mount};
use crate::systemd::wait_for_state;

/// `clone create`: everything the verb takes.
#[derive(Debug, Clone, Default)]
pub struct CloneRequest {
    pub name: String,
    pub base: String,
    /// `None` only in apply mode, where no server is asked.
    pub server: Option<String>,
    pub certname: String,
    pub start: bool,
    /// The load shape (run mode, limits, facts): the whole shape, unset flags at their
    /// defaults (see [`super::shape`]). `None` leaves the base's own.
    pub shape: Option<super::shape::ShapeRequest>,
    /// `--root-password-hash-file` / `--challenge-password-file`: the secrets are read and
    /// validated before anything is touched, written only into the clone's config, and
    /// the answer says whether the clone has each, never what it is.
    pub secret_files: SecretFiles,
}

/// `clone create`.
pub fn create(ctx: &Context, request: &CloneRequest) -> Result<CloneCreated> {
    create_clone(ctx, request, request.shape.as_ref(), &request.secret_files)
}

fn create_clone(
    ctx: &Context,
    request: &CloneRequest,
    shape: Option<&super::shape::ShapeRequest>,
    secret_files: &SecretFiles,
) -> Result<CloneCreated> {
    validate_name("clone", "name", &request.name)?;
    validate_base_name("base", &request.base)?;
    if let Some(server) = &request.server {
        validate_hostname("server", server)?;
    }
    validate_hostname("certname", &request.certname)?;
    let plan = shape
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
    let secrets = secret_files.read()?;
    let layout = &ctx.layout;
    let clone = request.name.as_str();
    // Checked before taking the lock too, so an unknown base is refused before anything
    // (even the lock file) is created; and again under the lock, against a concurrent
    // `base remove`.
    if read_metadata(layout, &request.base)?.is_none() {
        return Err(unknown_base(ctx, &request.base));
    }
    let _lock = ctx.lock()?;
    // A fleet of sharpie-clone_army 0.2.1 holds this clone's unit and dirs: it goes first.
    super::old_fleet::replace(ctx)?;

    let Some(base) = read_metadata(layout, &request.base)? else {
        return Err(unknown_base(ctx, &request.base));
    };
    // Before anything can start: a clone beyond the host's kernel limits dies at boot.
    let host_limits = crate::host::limits::ensure(layout);
    let bus_limits = crate::host::bus::ensure(layout, ctx.systemd);
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
    let mut conf = puppet_conf::render(request.server.as_deref(), &request.certname);
    if let Some(plan) = &plan {
        conf = plan.puppet_conf(conf);
    }
    changed |= config.write_bound(PUPPET_CONF, &conf, 0o644)?;
    changed |= config.write_bound(HOSTNAME, &format!("{}\n", request.certname), 0o644)?;
    if let Some(plan) = &plan {
        changed |= plan.apply_to_config(&config, &confdir)?;
    }
    changed |= super::stale_locks::apply(&config)?;
    changed |= secrets::apply(&config, &secrets)?;
    let (root_password, challenge_password) = secrets::report(&config);
    let current = nspawn_settings::read(layout, &config, &confdir)?;
    let mut settings = match &plan {
        Some(plan) => plan.nspawn_settings(current),
        None => current,
    };
    // Its certname's kept SSL directory, so that a clone made again (same certname) has
    // its key and certificate again (see `super::ssl`).
    settings.ssl = super::ssl::bind_for(layout, clone, &request.certname, &confdir)?;
    changed |= nspawn_settings::write(&config, &settings)?;
    faults::after("clone-create:clone-files-written");

    crate::sys::reload::sweep_clone_dirs(layout, clone)?;
    let mut units_changed = crate::sys::reload::begin(layout)?;
    units_changed |= super::shared::ensure(ctx)?;
    faults::after("clone-create:shared-units-written");
    units_changed |= write_atomic(
        &mount_unit_path,
        units::clone_mount(layout, clone, &request.base).as_bytes(),
        0o644,
    )?;
    faults::after("clone-create:mount-unit-written");
    units_changed |= ensure_symlink(
        &layout.fs(layout.clone_enable_link(clone)),
        &layout.unit_path(SERVICE_TEMPLATE),
    )?;
    faults::after("clone-create:enable-link-created");
    if let Some(plan) = &plan {
        units_changed |= plan.apply_on_host(layout, clone)?;
    }
    units_changed |= nspawn_settings::write_credentials(layout, &config, root_password)?;
    faults::after("clone-create:host-units-written");
    if units_changed {
        ctx.systemd.daemon_reload()?;
    }
    crate::sys::reload::done(layout)?;
    faults::after("clone-create:daemon-reloaded");
    changed |= units_changed;

    if request.start {
        let service = layout.service_unit_name(clone);
        let state = ctx.systemd.active_state(&service)?;
        if state != "active" {
            super::lifecycle::start_unit(ctx, &service)?;
            wait_for_state(
                ctx.systemd,
                &service,
                "active",
                |s| s == "active",
                true,
                ctx.wait_timeout,
            )?;
            changed = true;
        }
    }
    Ok(CloneCreated {
        clone: describe_one(ctx, clone)?,
        changed,
        root_password,
        challenge_password,
        host_limits,
        bus_limits: Some(bus_limits),
    })
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
