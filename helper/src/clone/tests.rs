//! Clone verbs against a temporary root and the recording systemd fake.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::base;
use crate::protocol::answers::CloneState;
use crate::systemd::RecordingSystemd;

/// `create` with a load shape, as the CLI passes one.
fn create_with(
    ctx: &Context,
    request: &CloneRequest,
    shape: &super::shape::ShapeRequest,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneCreated> {
    create(
        ctx,
        &CloneRequest {
            shape: Some(shape.clone()),
            ..request.clone()
        },
    )
}

/// `create` with secret files.
fn create_with_secrets(
    ctx: &Context,
    request: &CloneRequest,
    secret_files: &SecretFiles,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneCreated> {
    create(
        ctx,
        &CloneRequest {
            secret_files: secret_files.clone(),
            ..request.clone()
        },
    )
}

/// `configure` of the server and certname only.
fn configure(
    ctx: &Context,
    clone: &str,
    master: Option<&str>,
    certname: Option<&str>,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneChanged> {
    configure_with(ctx, clone, master, certname, &Default::default())
}

/// `configure` with a load shape.
fn configure_with(
    ctx: &Context,
    clone: &str,
    master: Option<&str>,
    certname: Option<&str>,
    shape: &super::shape::ShapeRequest,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneChanged> {
    super::configure(
        ctx,
        &ConfigureRequest {
            name: clone.to_owned(),
            master: master.map(str::to_owned),
            certname: certname.map(str::to_owned),
            shape: shape.clone(),
        },
    )
}

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    layout: Layout,
    pub(crate) systemd: RecordingSystemd,
}

impl Fixture {
    /// A root with one complete base, `debian-12`, whose /etc/puppet is 0750.
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let base = root.join("var/lib/puppet-clone-army/debian-12");
        fs::create_dir_all(base.join("etc/clone-army")).unwrap();
        fs::create_dir_all(base.join("etc/puppet")).unwrap();
        fs::set_permissions(
            base.join("etc/puppet"),
            std::os::unix::fs::PermissionsExt::from_mode(0o750),
        )
        .unwrap();
        fs::write(
            base.join("etc/puppet/puppet.conf"),
            "[main]\nssldir = /var/lib/puppet/ssl\n",
        )
        .unwrap();
        fs::write(base.join("etc/hostname"), "base\n").unwrap();
        let metadata = base::BaseMetadata {
            name: "debian-12".into(),
            os: "debian".into(),
            release: "bookworm".into(),
            mirror: "http://deb.debian.org/debian".into(),
            puppet_source: "distro".into(),
            puppet_confdir: "/etc/puppet".into(),
            puppet_publicdir: "/var/cache/puppet/public".into(),
            created_at: "2026-11-22T03:30:00Z".into(),
            builder: "debootstrap".into(),
        };
        fs::write(
            base.join("etc/clone-army/base.json"),
            serde_json::to_string(&metadata).unwrap(),
        )
        .unwrap();
        Fixture {
            layout: Layout::under(&root),
            root,
            _dir: dir,
            systemd: RecordingSystemd::default(),
        }
    }

    pub(crate) fn ctx(&self) -> Context<'_> {
        let mut ctx = Context::new(self.layout.clone(), &self.systemd);
        ctx.wait_timeout = Duration::from_secs(1);
        ctx.lock_timeout = Duration::from_secs(1);
        ctx
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, system_path: &str) -> PathBuf {
        self.layout.fs(system_path)
    }

    pub(crate) fn create(&self, name: &str, start: bool) -> crate::protocol::answers::CloneChanged {
        create(
            &self.ctx(),
            &CloneRequest {
                name: name.into(),
                base: "debian-12".into(),
                master: Some("puppet.example.com".into()),
                certname: format!("{name}.load.example.com"),
                start,
                ..Default::default()
            },
        )
        .unwrap()
        .into()
    }

    /// Makes the fake mount table list `/var/lib/machines/<clone>` as mounted.
    pub(crate) fn mount(&self, clones: &[&str]) {
        let mut text = String::from("22 1 8:1 / / rw - ext4 /dev/vda rw\n");
        for (i, clone) in clones.iter().enumerate() {
            text.push_str(&format!(
                "{} 22 0:5{i} / /var/lib/machines/{clone} rw - overlay overlay rw\n",
                60 + i
            ));
        }
        fs::create_dir_all(self.root.join("proc/self")).unwrap();
        fs::write(self.root.join("proc/self/mountinfo"), text).unwrap();
    }

    /// The calls that change something (reads of unit states left out).
    fn actions(&self) -> Vec<String> {
        self.systemd
            .calls()
            .into_iter()
            .filter(|c| !c.starts_with("unit_states "))
            .collect()
    }

    fn read(&self, system_path: &str) -> String {
        fs::read_to_string(self.path(system_path)).unwrap()
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn create_writes_everything_and_reloads_once() {
    let f = Fixture::new();
    let result = f.create("clone-1", false);
    assert!(result.changed);
    assert_eq!(result.clone.name, "clone-1");
    assert_eq!(result.clone.base, "debian-12");
    assert_eq!(result.clone.master.as_deref(), Some("puppet.example.com"));
    assert_eq!(result.clone.state, CloneState::Stopped);

    // What the clone is given is on the host, in its config dir (root's alone) ...
    let config = "/var/lib/puppet-clone-army/clone-1-config";
    assert_eq!(
        f.read(&format!("{config}/puppet.conf")),
        "[main]\nserver = puppet.example.com\ncertname = clone-1.load.example.com\n"
    );
    assert_eq!(
        f.read(&format!("{config}/hostname")),
        "clone-1.load.example.com\n"
    );
    assert_eq!(mode(&f.path(config)), 0o700);
    assert_eq!(mode(&f.path("/var/lib/puppet-clone-army")), 0o700);
    // Every boot starts without the agent locks the previous boot left.
    assert!(f
        .read(&format!("{config}/systemd/clone-army-stale-locks.service"))
        .contains("ExecStart=/bin/rm -f -- /var/lib/puppet/ssl/ssl.lock "));
    assert_eq!(
        fs::read_link(f.path(&format!(
            "{config}/systemd/sysinit.target.wants/clone-army-stale-locks.service"
        )))
        .unwrap(),
        Path::new("/run/systemd/system.control/clone-army-stale-locks.service")
    );
    // ... bound into the clone by its .nspawn settings, with the host's /etc/hosts.
    let settings = f.read("/etc/systemd/nspawn/clone-1.nspawn");
    assert!(
        settings.starts_with("# Managed by clone-army "),
        "{settings}"
    );
    for bind in [
        "BindReadOnly=/etc/hosts\n",
        "BindReadOnly=/var/lib/puppet-clone-army/clone-1-config/puppet.conf:/etc/puppet/puppet.conf\n",
        "BindReadOnly=/var/lib/puppet-clone-army/clone-1-config/hostname:/etc/hostname\n",
        "BindReadOnly=/var/lib/puppet-clone-army/clone-1-config/facts.d:/etc/facter/facts.d\n",
        "BindReadOnly=/var/lib/puppet-clone-army/clone-1-config/systemd:/run/systemd/system.control\n",
    ] {
        assert!(settings.contains(bind), "{bind} in {settings}");
    }
    // Nothing is written into the clone's own tree, nor into the shared base.
    let upper = "/var/lib/puppet-clone-army/clone-1-overlay";
    assert_eq!(fs::read_dir(f.path(upper)).unwrap().count(), 0);
    for dir in [
        upper,
        "/var/lib/puppet-clone-army/clone-1-workdir",
        "/var/lib/machines/clone-1",
    ] {
        assert_eq!(mode(&f.path(dir)), 0o755, "{dir}");
    }
    assert_eq!(
        f.read("/var/lib/puppet-clone-army/debian-12/etc/hostname"),
        "base\n"
    );

    let mount_unit = f.read("/etc/systemd/system/var-lib-machines-clone\\x2d1.mount");
    assert!(mount_unit.starts_with("# Managed by clone-army "));
    assert!(mount_unit.contains(
        "Options=lowerdir=/var/lib/puppet-clone-army/debian-12,upperdir=/var/lib/puppet-clone-army/clone-1-overlay,workdir=/var/lib/puppet-clone-army/clone-1-workdir\n"
    ));
    for unit in [
        "/etc/systemd/system/var-lib-machines-clone\\x2d1.mount",
        "/etc/systemd/system/puppet-clone-army@.service",
        "/etc/systemd/system/puppet-clone-army.target",
    ] {
        assert_eq!(mode(&f.path(unit)), 0o644, "{unit}");
    }
    assert_eq!(
        fs::read_link(f.path(
            "/etc/systemd/system/puppet-clone-army.target.wants/puppet-clone-army@clone-1.service"
        ))
        .unwrap(),
        Path::new("/etc/systemd/system/puppet-clone-army@.service")
    );
    assert_eq!(
        fs::read_link(
            f.path("/etc/systemd/system/multi-user.target.wants/puppet-clone-army.target")
        )
        .unwrap(),
        Path::new("/etc/systemd/system/puppet-clone-army.target")
    );
    // The system bus re-reads its configuration for the new connection limits.
    assert_eq!(
        f.actions(),
        vec!["reload_unit dbus.service", "daemon_reload"]
    );
    assert!(f
        .path("/etc/dbus-1/system.d/puppet-clone-army.conf")
        .exists());

    // Again: nothing to do, no reload.
    assert!(!f.create("clone-1", false).changed);
    assert_eq!(
        f.actions(),
        vec!["reload_unit dbus.service", "daemon_reload"]
    );
}

#[test]
fn create_with_start_starts_and_waits() {
    let f = Fixture::new();
    assert!(f.create("c1", true).changed);
    assert_eq!(
        f.actions(),
        vec![
            "reload_unit dbus.service",
            "daemon_reload",
            "reset_failed_unit puppet-clone-army@c1.service",
            "start_unit puppet-clone-army@c1.service"
        ]
    );
    // Already running: no second start.
    let again = f.create("c1", true);
    assert!(!again.changed);
    assert_eq!(again.clone.state, CloneState::Running);
    assert_eq!(f.actions().len(), 4);
}

#[test]
fn a_failing_start_is_a_systemd_error_naming_the_unit() {
    let f = Fixture::new();
    f.systemd
        .failing
        .borrow_mut()
        .push("puppet-clone-army@c1.service".into());
    let error = create(
        &f.ctx(),
        &CloneRequest {
            name: "c1".into(),
            base: "debian-12".into(),
            master: Some("m".into()),
            certname: "c".into(),
            start: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(error.kind(), "systemd");
    assert!(
        error.to_string().contains("puppet-clone-army@c1.service"),
        "{error}"
    );
    // The unit's last journal lines travel as the cause, for the provider to show.
    let causes = error.causes();
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert!(causes[0].contains("Failed with result"), "{causes:?}");
}

#[test]
fn create_refuses_a_missing_base_and_touches_nothing() {
    let f = Fixture::new();
    let error = create(
        &f.ctx(),
        &CloneRequest {
            name: "c1".into(),
            base: "nope".into(),
            master: Some("m".into()),
            certname: "c".into(),
            start: false,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(error.kind(), "not-found");
    assert_eq!(error.field(), Some("base"));
    assert_eq!(
        error.to_string(),
        "base \"nope\" does not exist; allowed for base: debian-12"
    );
    assert!(!f.path("/var/lib/puppet-clone-army/c1-overlay").exists());
    assert!(!f.path("/var/lib/puppet-clone-army/.lock").exists());
    assert!(!f.path("/etc/systemd/system").exists());
    assert!(f.systemd.calls().is_empty());
}

#[test]
fn create_refuses_bad_input_before_touching_disk() {
    let f = Fixture::new();
    for (name, master, field) in [("../x", "m", "name"), ("c1", "bad host", "master")] {
        let error = create(
            &f.ctx(),
            &CloneRequest {
                name: name.into(),
                base: "debian-12".into(),
                master: Some(master.into()),
                certname: "c".into(),
                start: false,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(error.field(), Some(field));
        assert_eq!(error.exit_code(), 2);
    }
    assert!(!f.path("/etc/systemd/system").exists());
    assert!(!f.path("/var/lib/puppet-clone-army/.lock").exists());
}

#[test]
fn list_reads_disk_and_states_in_one_call() {
    let f = Fixture::new();
    f.create("b", false);
    f.create("a", true);
    f.mount(&["a"]);
    // A foreign mount unit is not a clone.
    fs::write(
        f.path("/etc/systemd/system/var-lib-machines-other.mount"),
        "[Mount]\nWhere=/var/lib/machines/other\nOptions=lowerdir=/x\n",
    )
    .unwrap();
    let calls_before = f.systemd.calls().len();

    let list = list(&f.ctx()).unwrap();
    let names: Vec<&str> = list.clones.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let a = &list.clones[0];
    assert_eq!(a.base, "debian-12");
    assert_eq!(a.master.as_deref(), Some("puppet.example.com"));
    assert_eq!(a.certname.as_deref(), Some("a.load.example.com"));
    assert_eq!(a.state, CloneState::Running);
    assert_eq!(a.unit, "puppet-clone-army@a.service");
    assert!(a.mounted);
    assert_eq!(list.clones[1].state, CloneState::Stopped);
    assert!(!list.clones[1].mounted);
    assert_eq!(
        f.systemd.calls()[calls_before..],
        ["unit_states puppet-clone-army@*.service"]
    );

    let bases = base::list(&f.ctx()).unwrap();
    assert_eq!(bases.bases.len(), 1);
    assert_eq!(bases.bases[0].clones, ["a", "b"]);
}

#[test]
fn configure_writes_what_the_clone_is_given() {
    let f = Fixture::new();
    f.create("c1", false);
    let changed = configure(&f.ctx(), "c1", Some("new.example.com"), None).unwrap();
    assert!(changed.changed);
    assert_eq!(
        f.read("/var/lib/puppet-clone-army/c1-config/puppet.conf"),
        "[main]\nserver = new.example.com\ncertname = c1.load.example.com\n"
    );
    assert!(
        !configure(&f.ctx(), "c1", Some("new.example.com"), None)
            .unwrap()
            .changed
    );
    let changed = configure(&f.ctx(), "c1", None, Some("renamed.example.com")).unwrap();
    assert!(changed.changed);
    assert_eq!(
        f.read("/var/lib/puppet-clone-army/c1-config/hostname"),
        "renamed.example.com\n"
    );
    let listed = list(&f.ctx()).unwrap();
    assert_eq!(
        listed.clones[0].certname.as_deref(),
        Some("renamed.example.com")
    );
    assert_eq!(listed.clones[0].master.as_deref(), Some("new.example.com"));

    let error = configure(&f.ctx(), "nope", Some("m"), None).unwrap_err();
    assert_eq!(error.kind(), "not-found");
}

/// A running clone holds its puppet.conf and hostname by their inodes (single-file
/// bind mounts): they are rewritten in place, never replaced, and nothing is written
/// through the clone's mount.
#[test]
fn configure_a_running_clone_keeps_the_bound_files_inodes() {
    use std::os::unix::fs::MetadataExt;
    let f = Fixture::new();
    f.create("c1", true);
    f.mount(&["c1"]);
    let conf = f.path("/var/lib/puppet-clone-army/c1-config/puppet.conf");
    let hostname = f.path("/var/lib/puppet-clone-army/c1-config/hostname");
    let inodes = (
        fs::metadata(&conf).unwrap().ino(),
        fs::metadata(&hostname).unwrap().ino(),
    );
    let changed = configure(
        &f.ctx(),
        "c1",
        Some("new.example.com"),
        Some("x.example.com"),
    )
    .unwrap();
    assert!(changed.changed);
    assert_eq!(
        puppet_conf_settings(&fs::read_to_string(&conf).unwrap()),
        (Some("new.example.com".into()), Some("x.example.com".into()))
    );
    assert_eq!(fs::read_to_string(&hostname).unwrap(), "x.example.com\n");
    assert_eq!(
        (
            fs::metadata(&conf).unwrap().ino(),
            fs::metadata(&hostname).unwrap().ino()
        ),
        inodes
    );
    assert!(!f.path("/var/lib/machines/c1/etc").exists());
}

fn puppet_conf_settings(text: &str) -> (Option<String>, Option<String>) {
    let s = crate::clone::puppet_conf::parse(text);
    (s.server, s.certname)
}

#[test]
fn remove_stops_unmounts_and_removes_everything() {
    let f = Fixture::new();
    f.create("c1", true);
    f.create("c2", false);
    // A clone whose container crashed: its service is `failed`.
    f.systemd
        .set_state("puppet-clone-army@c1.service", "failed");
    let before = f.systemd.calls().len();
    let removed = remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert_eq!(removed.removed, ["c1"]);
    assert!(removed.changed);
    assert_eq!(
        f.systemd.calls()[before..],
        [
            "stop_unit puppet-clone-army@c1.service",
            "unit_states puppet-clone-army@c1.service",
            "stop_unit var-lib-machines-c1.mount",
            "unit_states var-lib-machines-c1.mount",
            "reset_failed_unit puppet-clone-army@c1.service",
            "reset_failed_unit var-lib-machines-c1.mount",
            "daemon_reload"
        ]
    );

    for gone in [
        "/var/lib/puppet-clone-army/c1-overlay",
        "/var/lib/puppet-clone-army/c1-workdir",
        "/var/lib/puppet-clone-army/c1-config",
        "/etc/systemd/nspawn/c1.nspawn",
        "/var/lib/machines/c1",
        "/etc/systemd/system/var-lib-machines-c1.mount",
        "/etc/systemd/system/puppet-clone-army.target.wants/puppet-clone-army@c1.service",
    ] {
        assert!(!f.path(gone).exists(), "{gone}");
    }
    // The other clone, the shared units and the base stay.
    assert!(f
        .path("/etc/systemd/system/var-lib-machines-c2.mount")
        .exists());
    assert!(f
        .path("/etc/systemd/system/puppet-clone-army@.service")
        .exists());
    assert!(f
        .path("/var/lib/puppet-clone-army/debian-12/etc/clone-army/base.json")
        .exists());

    // Removing again is fine, and changes nothing.
    let again = remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert!(!again.changed);
    assert!(again.removed.is_empty());
    assert_ne!(f.systemd.calls().last().unwrap(), "daemon_reload");
}

#[test]
fn remove_of_many_clones_stops_them_together_and_reloads_once() {
    let f = Fixture::new();
    for clone in ["c1", "c-2", "c3"] {
        f.create(clone, true);
    }
    let before = f.systemd.calls().len();
    let names = ["c1", "c-2", "c3", "c1"].map(str::to_owned);
    let removed = remove(&f.ctx(), &names).unwrap();
    assert_eq!(removed.removed, ["c1", "c-2", "c3"]);
    // Every stop job queued before one wait for all of them (one ListUnitsByPatterns
    // call per poll; the fake's units stop at once), services before mounts, and one
    // daemon-reload for the batch.
    assert_eq!(
        f.systemd.calls()[before..],
        [
            "stop_unit puppet-clone-army@c1.service",
            "stop_unit puppet-clone-army@c-2.service",
            "stop_unit puppet-clone-army@c3.service",
            "unit_states puppet-clone-army@c1.service puppet-clone-army@c-2.service puppet-clone-army@c3.service",
            "stop_unit var-lib-machines-c1.mount",
            "stop_unit var-lib-machines-c\\x2d2.mount",
            "stop_unit var-lib-machines-c3.mount",
            "unit_states var-lib-machines-c1.mount var-lib-machines-c\\\\x2d2.mount var-lib-machines-c3.mount",
            "reset_failed_unit puppet-clone-army@c1.service",
            "reset_failed_unit puppet-clone-army@c-2.service",
            "reset_failed_unit puppet-clone-army@c3.service",
            "reset_failed_unit var-lib-machines-c1.mount",
            "reset_failed_unit var-lib-machines-c\\x2d2.mount",
            "reset_failed_unit var-lib-machines-c3.mount",
            "daemon_reload"
        ]
    );
    for clone in ["c1", "c-2", "c3"] {
        assert!(!f
            .path(&format!("/var/lib/puppet-clone-army/{clone}-overlay"))
            .exists());
    }
}

#[test]
fn remove_waits_for_every_unit_to_stop_under_one_deadline() {
    let f = Fixture::new();
    f.create("c1", true);
    f.create("c2", true);
    // c2's service does not stop: its stop job is queued, its state stays `deactivating`.
    struct Stuck<'a>(&'a RecordingSystemd);
    impl crate::systemd::Systemd for Stuck<'_> {
        fn start_unit(&self, unit: &str) -> std::result::Result<(), crate::systemd::SystemdError> {
            self.0.start_unit(unit)
        }
        fn reset_failed_unit(
            &self,
            unit: &str,
        ) -> std::result::Result<(), crate::systemd::SystemdError> {
            self.0.reset_failed_unit(unit)
        }
        fn stop_unit(&self, unit: &str) -> std::result::Result<(), crate::systemd::SystemdError> {
            self.0.stop_unit(unit)?;
            if unit == "puppet-clone-army@c2.service" {
                self.0.set_state(unit, "deactivating");
            }
            Ok(())
        }
        fn daemon_reload(&self) -> std::result::Result<(), crate::systemd::SystemdError> {
            self.0.daemon_reload()
        }
        fn reload_unit(&self, unit: &str) -> std::result::Result<(), crate::systemd::SystemdError> {
            self.0.reload_unit(unit)
        }
        fn unit_states(
            &self,
            patterns: &[String],
        ) -> std::result::Result<
            std::collections::BTreeMap<String, String>,
            crate::systemd::SystemdError,
        > {
            self.0.unit_states(patterns)
        }
        fn active_state(
            &self,
            unit: &str,
        ) -> std::result::Result<String, crate::systemd::SystemdError> {
            self.0.active_state(unit)
        }
        fn recent_log(&self, unit: &str) -> Vec<String> {
            self.0.recent_log(unit)
        }
    }
    let stuck = Stuck(&f.systemd);
    let mut ctx = f.ctx();
    ctx.systemd = &stuck;
    let error = remove(&ctx, &["c1".to_owned(), "c2".to_owned()]).unwrap_err();
    assert_eq!(error.kind(), "systemd");
    assert!(
        error
            .to_string()
            .contains("puppet-clone-army@c2.service did not become inactive within 1 s"),
        "{error}"
    );
    // Nothing was removed: the files go only after every clone stopped.
    assert!(f.path("/var/lib/puppet-clone-army/c1-overlay").exists());
    assert!(!f
        .systemd
        .calls()
        .iter()
        .any(|c| c.contains(".mount") && c.starts_with("stop_unit")));
}

#[test]
fn remove_refuses_while_mounted() {
    let f = Fixture::new();
    f.create("c1", true);
    f.mount(&["c1"]);
    let error = remove(&f.ctx(), &["c1".to_owned()]).unwrap_err();
    assert_eq!(error.kind(), "still-mounted");
    assert!(
        error.to_string().contains("/var/lib/machines/c1"),
        "{error}"
    );
    assert!(f.path("/var/lib/puppet-clone-army/c1-overlay").exists());
    assert!(f
        .path("/etc/systemd/system/var-lib-machines-c1.mount")
        .exists());
}

#[test]
fn base_remove_refuses_a_base_in_use() {
    let f = Fixture::new();
    f.create("c1", false);
    f.create("c2", false);
    let error = base::remove(&f.ctx(), "debian-12").unwrap_err();
    assert_eq!(error.kind(), "base-in-use");
    assert!(error.to_string().contains("c1, c2"), "{error}");
    remove(&f.ctx(), &["c1".to_owned(), "c2".to_owned()]).unwrap();
    let removed = base::remove(&f.ctx(), "debian-12").unwrap();
    assert!(removed.changed);
    assert!(!f.path("/var/lib/puppet-clone-army/debian-12").exists());
    assert!(!base::remove(&f.ctx(), "debian-12").unwrap().changed);
}

#[test]
fn start_and_stop() {
    let f = Fixture::new();
    f.create("c1", false);
    f.create("c2", false);
    let names = vec!["c1".to_owned(), "c2".to_owned()];
    let started = start(&f.ctx(), &names, 0).unwrap().clones;
    assert_eq!(
        started.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["c1", "c2"]
    );
    assert!(started.iter().all(|c| c.state == CloneState::Running));
    assert_eq!(
        f.systemd.active_state_of("puppet-clone-army@c2.service"),
        "active"
    );
    let stopped = stop(&f.ctx(), &names).unwrap().clones;
    assert!(stopped.iter().all(|c| c.state == CloneState::Stopped));
    assert_eq!(
        f.systemd.active_state_of("puppet-clone-army@c1.service"),
        "inactive"
    );
    let error = start(&f.ctx(), &["c1".to_owned(), "c3".to_owned()], 0).unwrap_err();
    assert_eq!(error.kind(), "not-found");
    let error = stop(&f.ctx(), &["C1".to_owned()]).unwrap_err();
    assert_eq!(error.kind(), "invalid-name");
}

#[test]
fn start_recovers_a_clone_systemd_gave_up_on() {
    let f = Fixture::new();
    f.create("c1", false);
    f.create("c2", false);
    let unit = "puppet-clone-army@c1.service";
    // c1 crashed until it hit its start limit: without a reset, systemd fails every start.
    f.systemd.set_state(unit, "failed");
    f.systemd.start_limited.borrow_mut().push(unit.into());
    let before = f.actions().len();

    let started = start(&f.ctx(), &["c1".to_owned(), "c2".to_owned()], 0)
        .unwrap()
        .clones;
    assert!(started.iter().all(|c| c.state == CloneState::Running));
    assert_eq!(f.systemd.active_state_of(unit), "active");
    // The reset comes before the start, for each clone; a unit systemd has not loaded
    // (c2, never started) has nothing to reset and is no error.
    assert_eq!(
        f.actions()[before..],
        [
            "reset_failed_unit puppet-clone-army@c1.service",
            "start_unit puppet-clone-army@c1.service",
            "reset_failed_unit puppet-clone-army@c2.service",
            "start_unit puppet-clone-army@c2.service",
        ]
    );
}

#[test]
fn list_reports_stale_state_with_the_command_that_fixes_it() {
    let f = Fixture::new();
    for clone in ["c1", "c2", "c3", "c4"] {
        f.create(clone, false);
    }
    // A create killed after the mount unit, before the link into the fleet target.
    fs::remove_file(
        f.path("/etc/systemd/system/puppet-clone-army.target.wants/puppet-clone-army@c4.service"),
    )
    .unwrap();
    fs::remove_dir_all(f.path("/var/lib/puppet-clone-army/c1-overlay")).unwrap();
    fs::remove_dir_all(f.path("/var/lib/puppet-clone-army/c2-workdir")).unwrap();
    // A clone whose base was removed by hand.
    fs::write(
        f.layout
            .fs(f.layout.unit_path(&f.layout.mount_unit_name("c9"))),
        crate::systemd::units::clone_mount(&f.layout, "c9", "gone"),
    )
    .unwrap();
    // c3's own mount, an overlay of ours no unit owns, and another tool's machine.
    fs::create_dir_all(f.root.join("proc/self")).unwrap();
    fs::write(
        f.root.join("proc/self/mountinfo"),
        "22 1 8:1 / / rw - ext4 /dev/vda rw\n\
         60 22 0:50 / /var/lib/machines/c3 rw - overlay overlay rw,lowerdir=/var/lib/puppet-clone-army/debian-12,upperdir=/var/lib/puppet-clone-army/c3-overlay,workdir=/var/lib/puppet-clone-army/c3-workdir\n\
         61 22 0:51 / /var/lib/machines/old rw - overlay overlay rw,lowerdir=/var/lib/puppet-clone-army/debian-12,upperdir=/var/lib/puppet-clone-army/old-overlay,workdir=/var/lib/puppet-clone-army/old-workdir\n\
         62 22 0:52 / /var/lib/machines/other rw - overlay overlay rw,lowerdir=/srv/image,upperdir=/srv/upper,workdir=/srv/work\n",
    )
    .unwrap();

    let listed = list(&f.ctx()).unwrap();
    let problems: Vec<(&str, Vec<(&str, &str)>)> = listed
        .clones
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.problems
                    .iter()
                    .map(|p| (p.kind.as_str(), p.fix.as_str()))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        problems,
        vec![
            (
                "c1",
                vec![("upper-dir-missing", "clone-army clone remove -- c1")]
            ),
            (
                "c2",
                vec![(
                    "work-dir-missing",
                    "clone-army clone create c2 --base debian-12 --master puppet.example.com --certname c2.load.example.com"
                )]
            ),
            ("c3", vec![]),
            (
                "c4",
                vec![(
                    "incomplete",
                    "clone-army clone create c4 --base debian-12 --master puppet.example.com --certname c4.load.example.com --start"
                )]
            ),
            (
                "c9",
                vec![
                    ("base-missing", "clone-army clone remove -- c9"),
                    ("upper-dir-missing", "clone-army clone remove -- c9"),
                    ("incomplete", "clone-army clone remove -- c9")
                ]
            ),
        ]
    );
    assert!(listed.clones[3].problems[0]
        .message
        .contains("killed half-way"));
    assert!(listed.clones[0].problems[0]
        .message
        .contains("/var/lib/puppet-clone-army/c1-overlay"));
    let orphan = |problems: &[crate::protocol::answers::Problem]| {
        problems
            .iter()
            .map(|p| (p.kind.clone(), p.fix.clone()))
            .collect::<Vec<_>>()
    };
    let orphan_fix = (
        "orphan-mount".to_owned(),
        "umount -- /var/lib/machines/old && clone-army clone remove -- old".to_owned(),
    );
    assert_eq!(orphan(&listed.problems), vec![orphan_fix.clone()]);

    let bases = base::list(&f.ctx()).unwrap();
    assert_eq!(
        orphan(&bases.problems),
        vec![
            orphan_fix,
            (
                "base-missing".to_owned(),
                "clone-army clone remove -- c9".to_owned()
            )
        ]
    );

    // The fix given for the missing work dir does fix it, keeping the upper layer.
    f.create("c2", false);
    let c2 = describe_one(&f.ctx(), "c2").unwrap();
    assert!(c2.problems.is_empty(), "{:?}", c2.problems);
    assert_eq!(c2.master.as_deref(), Some("puppet.example.com"));
}

// --- load shape: run modes, limits, facts ------------------------------------------------

use super::run_mode::RunMode;
use super::shape::ShapeRequest;

const UPPER_C1: &str = "/var/lib/puppet-clone-army/c1-overlay";
const CONFIG_C1: &str = "/var/lib/puppet-clone-army/c1-config";

impl Fixture {
    fn create_shaped(
        &self,
        name: &str,
        shape: ShapeRequest,
    ) -> crate::protocol::answers::CloneChanged {
        create_with(
            &self.ctx(),
            &CloneRequest {
                name: name.into(),
                base: "debian-12".into(),
                master: Some("puppet.example.com".into()),
                certname: format!("{name}.load.example.com"),
                start: false,
                ..Default::default()
            },
            &shape,
        )
        .unwrap()
        .into()
    }

    fn configure_shape(
        &self,
        name: &str,
        shape: ShapeRequest,
    ) -> crate::protocol::answers::CloneChanged {
        configure_with(&self.ctx(), name, None, None, &shape).unwrap()
    }

    /// A file among c1's run units (in its config dir).
    fn in_units(&self, name: &str) -> PathBuf {
        self.path(&format!("{CONFIG_C1}/systemd/{name}"))
    }

    fn link_in_units(&self, name: &str) -> Option<PathBuf> {
        fs::read_link(self.in_units(name)).ok()
    }
}

fn timer_shape() -> ShapeRequest {
    ShapeRequest {
        run_mode: Some(RunMode::Timer),
        runinterval: Some(600),
        splay: Some(20),
        phase_index: Some(1),
        phase_count: Some(4),
        ..ShapeRequest::default()
    }
}

#[test]
fn timer_mode_masks_the_daemon_and_enables_a_phased_timer() {
    use super::run_mode::*;
    let f = Fixture::new();
    let created = f.create_shaped("c1", timer_shape());
    assert!(created.changed);
    let shape = &created.clone.shape;
    assert_eq!(shape.run_mode, Some(RunMode::Timer));
    assert_eq!(shape.runinterval, Some(600));
    assert_eq!(shape.splay, Some(20));
    assert_eq!((shape.phase_index, shape.phase_count), (Some(1), Some(4)));

    assert_eq!(
        f.link_in_units(PUPPET_SERVICE).as_deref(),
        Some(Path::new("/dev/null"))
    );
    assert_eq!(
        f.link_in_units(AGENT_TIMER_LINK).as_deref(),
        Some(Path::new(
            "/run/systemd/system.control/clone-army-agent.timer"
        ))
    );
    let timer = fs::read_to_string(f.in_units(AGENT_TIMER)).unwrap();
    assert!(timer.contains("\nOnActiveSec=150\n"), "{timer}");
    assert!(fs::read_to_string(f.in_units(AGENT_SERVICE))
        .unwrap()
        .contains("ExecStart=/usr/bin/puppet agent --onetime --no-daemonize --verbose\n"));
    // The daemon's phase timer is masked, in case an older clone-army left one in the
    // clone's own /etc/systemd/system.
    assert_eq!(
        f.link_in_units(PHASE_TIMER).as_deref(),
        Some(Path::new("/dev/null"))
    );
    // Nothing of the daemon's in puppet.conf, and nothing written into the base.
    assert_eq!(
        f.read(&format!("{CONFIG_C1}/puppet.conf")),
        "[main]\nserver = puppet.example.com\ncertname = c1.load.example.com\n"
    );
    assert!(!f
        .path("/var/lib/puppet-clone-army/debian-12/etc/systemd")
        .exists());

    // The same request again changes nothing.
    assert!(!f.create_shaped("c1", timer_shape()).changed);
    let listed = list(&f.ctx()).unwrap();
    assert_eq!(listed.clones[0].shape, created.clone.shape);
}

fn apply_shape(source: Option<&str>) -> ShapeRequest {
    ShapeRequest {
        run_mode: Some(RunMode::Apply),
        runinterval: Some(600),
        phase_index: Some(1),
        phase_count: Some(4),
        apply_source: source.map(PathBuf::from),
        ..ShapeRequest::default()
    }
}

fn invalid_field<T: std::fmt::Debug>(result: crate::protocol::error::Result<T>) -> &'static str {
    match result {
        Err(crate::protocol::error::Error::InvalidArgument { field, .. }) => field,
        other => panic!("{other:?}"),
    }
}

#[test]
fn apply_mode_runs_puppet_apply_on_a_bound_source_without_a_master() {
    use super::run_mode::*;
    let f = Fixture::new();
    fs::create_dir_all(f.path("/srv/apply/manifests")).unwrap();
    let created = create_with(
        &f.ctx(),
        &CloneRequest {
            name: "c1".into(),
            base: "debian-12".into(),
            master: None,
            certname: "c1.load.example.com".into(),
            start: false,
            ..Default::default()
        },
        &apply_shape(Some("/srv/apply")),
    )
    .unwrap();
    let shape = &created.clone.shape;
    assert_eq!(shape.run_mode, Some(RunMode::Apply));
    assert_eq!(shape.runinterval, Some(600));
    assert_eq!(shape.apply_source.as_deref(), Some("/srv/apply"));
    assert_eq!(created.clone.master, None);
    assert_eq!(
        f.read(&format!("{CONFIG_C1}/puppet.conf")),
        "[main]\ncertname = c1.load.example.com\n"
    );
    assert_eq!(
        f.link_in_units(PUPPET_SERVICE).as_deref(),
        Some(Path::new("/dev/null"))
    );
    assert!(fs::read_to_string(f.in_units(AGENT_TIMER))
        .unwrap()
        .contains("\nX-CloneArmyRunMode=apply\n"));
    assert!(fs::read_to_string(f.in_units(AGENT_SERVICE))
        .unwrap()
        .contains(
            "ExecStart=/usr/bin/puppet apply --reports=none \
         --modulepath=/srv/clone-army-apply/modules /srv/clone-army-apply/manifests\n"
        ));
    let settings = "/etc/systemd/nspawn/c1.nspawn";
    assert!(f
        .read(settings)
        .contains("\nBindReadOnly=/srv/apply:/srv/clone-army-apply\n"));

    // Back to timer mode: the bind goes, the agent service runs the agent again.
    let timer = f.configure_shape(
        "c1",
        ShapeRequest {
            run_mode: Some(RunMode::Timer),
            ..ShapeRequest::default()
        },
    );
    assert!(timer.changed);
    assert_eq!(timer.clone.shape.run_mode, Some(RunMode::Timer));
    assert_eq!(timer.clone.shape.apply_source, None);
    assert!(!f.read(settings).contains("/srv/clone-army-apply"));
    assert!(fs::read_to_string(f.in_units(AGENT_SERVICE))
        .unwrap()
        .contains(" agent --onetime "));
    // The bind is nspawn's business at the clone's next start: no reload for it.
    let reloads = f.actions().iter().filter(|a| *a == "daemon_reload").count();
    assert_eq!(reloads, 1, "{:?}", f.actions());
}

#[test]
fn apply_source_and_a_missing_master_are_refused_outside_apply_mode() {
    let f = Fixture::new();
    fs::create_dir_all(f.path("/srv/apply/manifests")).unwrap();
    fs::create_dir_all(f.path("/srv/empty")).unwrap();
    let request = |master: Option<&str>| CloneRequest {
        name: "c1".into(),
        base: "debian-12".into(),
        master: master.map(str::to_owned),
        certname: "c1.load.example.com".into(),
        start: false,
        ..Default::default()
    };
    let with_source = ShapeRequest {
        apply_source: Some("/srv/apply".into()),
        ..timer_shape()
    };
    assert_eq!(
        invalid_field(create_with(&f.ctx(), &request(Some("m")), &with_source)),
        "apply-source"
    );
    assert_eq!(
        invalid_field(create_with(&f.ctx(), &request(None), &timer_shape())),
        "master"
    );
    assert_eq!(
        invalid_field(create_with(
            &f.ctx(),
            &request(None),
            &apply_shape(Some("/srv/empty"))
        )),
        "apply-source"
    );
    assert_eq!(
        invalid_field(create_with(
            &f.ctx(),
            &request(None),
            &apply_shape(Some("srv/apply"))
        )),
        "apply-source"
    );
    // Nothing was written by the refused requests.
    assert!(!f.path(UPPER_C1).exists());

    // On an existing timer clone, the source alone is refused; with the mode it is taken.
    f.create_shaped("c1", timer_shape());
    let source_only = ShapeRequest {
        apply_source: Some("/srv/apply".into()),
        ..ShapeRequest::default()
    };
    assert_eq!(
        invalid_field(configure_with(&f.ctx(), "c1", None, None, &source_only)),
        "apply-source"
    );
    let switched = f.configure_shape("c1", apply_shape(Some("/srv/apply")));
    assert_eq!(switched.clone.shape.run_mode, Some(RunMode::Apply));
    assert_eq!(
        switched.clone.shape.apply_source.as_deref(),
        Some("/srv/apply")
    );
    // In apply mode, another source alone is fine; the master stays as it was.
    fs::create_dir_all(f.path("/srv/other/manifests")).unwrap();
    let other = f.configure_shape(
        "c1",
        ShapeRequest {
            apply_source: Some("/srv/other".into()),
            ..ShapeRequest::default()
        },
    );
    assert_eq!(
        other.clone.shape.apply_source.as_deref(),
        Some("/srv/other")
    );
    assert_eq!(other.clone.master.as_deref(), Some("puppet.example.com"));
}

#[test]
fn switching_modes_removes_the_other_modes_files() {
    use super::run_mode::*;
    let f = Fixture::new();
    f.create_shaped("c1", timer_shape());

    let daemon = f.configure_shape(
        "c1",
        ShapeRequest {
            run_mode: Some(RunMode::Daemon),
            ..ShapeRequest::default()
        },
    );
    assert!(daemon.changed);
    // Interval, splay and phase are kept from the timer mode.
    let shape = &daemon.clone.shape;
    assert_eq!(shape.run_mode, Some(RunMode::Daemon));
    assert_eq!(
        (
            shape.runinterval,
            shape.splay,
            shape.phase_index,
            shape.phase_count
        ),
        (Some(600), Some(20), Some(1), Some(4))
    );
    for gone in [AGENT_SERVICE, AGENT_TIMER_LINK] {
        assert!(
            fs::symlink_metadata(f.in_units(gone)).is_err(),
            "{gone} should be gone"
        );
    }
    assert_eq!(
        f.link_in_units(AGENT_TIMER).as_deref(),
        Some(Path::new("/dev/null"))
    );
    for there in [PHASE_TIMER, PHASE_SERVICE, PHASE_DROPIN, PHASE_TIMER_LINK] {
        assert!(
            fs::symlink_metadata(f.in_units(there)).is_ok(),
            "{there} missing"
        );
    }
    // puppet.service is named (past any mask in the clone's own tree) and enabled.
    for link in [PUPPET_SERVICE, PUPPET_SERVICE_WANTS] {
        assert_eq!(
            f.link_in_units(link).as_deref(),
            Some(Path::new(PUPPET_UNIT_FILE))
        );
    }
    let conf = f.read(&format!("{CONFIG_C1}/puppet.conf"));
    assert!(
        conf.ends_with("[agent]\nruninterval = 600\nsplay = true\nsplaylimit = 20\n"),
        "{conf}"
    );
    assert_eq!(
        crate::clone::puppet_conf::parse(&conf).server.as_deref(),
        Some("puppet.example.com")
    );

    let manual = f.configure_shape(
        "c1",
        ShapeRequest {
            run_mode: Some(RunMode::Manual),
            ..ShapeRequest::default()
        },
    );
    let shape = &manual.clone.shape;
    assert_eq!(shape.run_mode, Some(RunMode::Manual));
    assert_eq!(
        (shape.runinterval, shape.splay, shape.phase_index),
        (None, None, None)
    );
    assert_eq!(
        f.link_in_units(PUPPET_SERVICE).as_deref(),
        Some(Path::new("/dev/null"))
    );
    for gone in [PHASE_SERVICE, PHASE_DROPIN, PHASE_TIMER_LINK, AGENT_SERVICE] {
        assert!(fs::symlink_metadata(f.in_units(gone)).is_err(), "{gone}");
    }
    for masked in [PHASE_TIMER, AGENT_TIMER] {
        assert_eq!(
            f.link_in_units(masked).as_deref(),
            Some(Path::new("/dev/null"))
        );
    }
    assert!(!f
        .read(&format!("{CONFIG_C1}/puppet.conf"))
        .contains("[agent]"));
    // A clone made without shape flags has no run files: its mode reads as null.
    f.create("c2", false);
    let c2 = describe_one(&f.ctx(), "c2").unwrap();
    assert_eq!(c2.shape.run_mode, None);
}

#[test]
fn create_defaults_to_a_daemon_at_phase_zero() {
    let f = Fixture::new();
    let shape = f.create_shaped("c1", ShapeRequest::default()).clone.shape;
    assert_eq!(shape.run_mode, Some(RunMode::Daemon));
    assert_eq!(
        (
            shape.runinterval,
            shape.splay,
            shape.phase_index,
            shape.phase_count
        ),
        (Some(1800), Some(0), Some(0), Some(1))
    );
    assert_eq!(
        (shape.memory_max, shape.cpu_quota, shape.tasks_max),
        (None, None, None)
    );
    assert!(shape.facts.is_empty());
    assert_eq!((shape.generated_facts, shape.churn_percent), (0, None));
    // Converging with create again to timer mode works from there.
    assert!(f.create_shaped("c1", timer_shape()).changed);
}

#[test]
fn limits_are_a_host_drop_in_reloaded_read_back_and_removed() {
    let f = Fixture::new();
    let dropin = "/etc/systemd/system/puppet-clone-army@c1.service.d/50-limits.conf";
    let created = f.create_shaped(
        "c1",
        ShapeRequest {
            memory_max: Some("512M".into()),
            cpu_quota: Some("50%".into()),
            ..ShapeRequest::default()
        },
    );
    assert_eq!(created.clone.shape.memory_max.as_deref(), Some("512M"));
    assert_eq!(created.clone.shape.cpu_quota.as_deref(), Some("50%"));
    assert!(f.read(dropin).contains("\nMemoryMax=512M\nCPUQuota=50%\n"));

    // configure changes only the limits it names.
    let before = f.actions().len();
    let configured = f.configure_shape(
        "c1",
        ShapeRequest {
            tasks_max: Some("256".into()),
            memory_max: Some("none".into()),
            ..ShapeRequest::default()
        },
    );
    assert!(configured.changed);
    let shape = &configured.clone.shape;
    assert_eq!(
        (
            shape.memory_max.as_deref(),
            shape.cpu_quota.as_deref(),
            shape.tasks_max
        ),
        (None, Some("50%"), Some(256))
    );
    assert_eq!(f.actions()[before..], ["daemon_reload".to_owned()]);
    // Unchanged limits: no reload.
    let before = f.actions().len();
    let again = f.configure_shape(
        "c1",
        ShapeRequest {
            tasks_max: Some("256".into()),
            ..ShapeRequest::default()
        },
    );
    assert!(!again.changed);
    assert_eq!(f.actions().len(), before);

    f.configure_shape(
        "c1",
        ShapeRequest {
            cpu_quota: Some("none".into()),
            tasks_max: Some("none".into()),
            ..ShapeRequest::default()
        },
    );
    assert!(!f.path(dropin).exists());

    f.configure_shape(
        "c1",
        ShapeRequest {
            tasks_max: Some("64".into()),
            ..ShapeRequest::default()
        },
    );
    assert!(f.path(dropin).exists());
    remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert!(!f.path(dropin).exists());
    assert!(!f.path(dropin).parent().unwrap().exists());
}

#[test]
fn bad_shape_values_are_refused_before_anything_is_written() {
    let f = Fixture::new();
    let facts = f.root.join("facts.json");
    fs::write(&facts, r#"{"Bad-Name": 1}"#).unwrap();
    for (shape, field) in [
        (
            ShapeRequest {
                runinterval: Some(59),
                ..ShapeRequest::default()
            },
            "runinterval",
        ),
        (
            ShapeRequest {
                phase_index: Some(2),
                phase_count: Some(2),
                ..ShapeRequest::default()
            },
            "phase-index",
        ),
        (
            ShapeRequest {
                memory_max: Some("1G\nExecStartPre=/bin/false".into()),
                ..ShapeRequest::default()
            },
            "memory-max",
        ),
        (
            ShapeRequest {
                facts_file: Some(facts.clone()),
                ..ShapeRequest::default()
            },
            "facts-file",
        ),
        (
            ShapeRequest {
                churn_percent: Some(101),
                ..ShapeRequest::default()
            },
            "churn-percent",
        ),
    ] {
        let request = CloneRequest {
            name: "c1".into(),
            base: "debian-12".into(),
            master: Some("m.example.com".into()),
            certname: "c1.example.com".into(),
            start: false,
            ..Default::default()
        };
        match create_with(&f.ctx(), &request, &shape) {
            Err(crate::protocol::error::Error::InvalidArgument { field: got, .. }) => {
                assert_eq!(got, field)
            }
            other => panic!("{field}: {other:?}"),
        }
    }
    assert!(!f.path("/var/lib/puppet-clone-army/.lock").exists());
    assert!(!f.path(UPPER_C1).exists());
}

#[test]
fn facts_are_given_to_the_clone_read_back_and_removed() {
    use super::facts::{FACTS_JSON, GENERATED_SCRIPT};
    let f = Fixture::new();
    let in_facts = |name: &str| f.path(&format!("{CONFIG_C1}/facts.d/{name}"));
    let facts = f.root.join("facts.json");
    fs::write(&facts, r#"{"role": "web", "tier": 3, "canary": false}"#).unwrap();
    let created = f.create_shaped(
        "c1",
        ShapeRequest {
            facts_file: Some(facts.clone()),
            generated_facts: Some(500),
            churn_percent: Some(15),
            ..ShapeRequest::default()
        },
    );
    let shape = &created.clone.shape;
    assert_eq!(
        serde_json::Value::Object(shape.facts.clone()),
        serde_json::json!({"role": "web", "tier": 3, "canary": false})
    );
    assert_eq!(
        (shape.generated_facts, shape.churn_percent),
        (500, Some(15))
    );
    assert_eq!(mode(&in_facts(GENERATED_SCRIPT)), 0o755);
    assert_eq!(mode(&in_facts(FACTS_JSON)), 0o644);

    // Only the churn changes; the count is kept.
    let shape = f
        .configure_shape(
            "c1",
            ShapeRequest {
                churn_percent: Some(50),
                ..ShapeRequest::default()
            },
        )
        .clone
        .shape;
    assert_eq!(
        (shape.generated_facts, shape.churn_percent),
        (500, Some(50))
    );
    assert!(fs::read_to_string(in_facts(GENERATED_SCRIPT))
        .unwrap()
        .contains("\nchurn=250\n"));

    fs::write(&facts, "{}").unwrap();
    let shape = f
        .configure_shape(
            "c1",
            ShapeRequest {
                facts_file: Some(facts),
                generated_facts: Some(0),
                ..ShapeRequest::default()
            },
        )
        .clone
        .shape;
    assert!(shape.facts.is_empty());
    assert_eq!((shape.generated_facts, shape.churn_percent), (0, None));
    assert!(!in_facts(FACTS_JSON).exists());
    assert!(!in_facts(GENERATED_SCRIPT).exists());
}

/// A running clone is written nothing: its run units change on the host, for its next
/// start.
#[test]
fn run_mode_of_a_running_clone_changes_on_the_host_only() {
    let f = Fixture::new();
    f.create("c1", true);
    f.mount(&["c1"]);
    f.configure_shape("c1", timer_shape());
    assert!(f.in_units(super::run_mode::AGENT_TIMER).exists());
    assert!(!f.path("/var/lib/machines/c1/etc").exists());
    assert_eq!(fs::read_dir(f.path(UPPER_C1)).unwrap().count(), 0);
}

mod secrets {
    use super::*;
    use crate::clone::SecretFiles;
    use crate::protocol::answers::Envelope;

    const HASH: &str = "$6$c2FsdA$SECRETHASHc2VjcmV0aGFzaA";
    const PASSWORD: &str = "SECRET-challenge \"pw\"";

    fn request(name: &str) -> CloneRequest {
        CloneRequest {
            name: name.into(),
            base: "debian-12".into(),
            master: Some("puppet.example.com".into()),
            certname: format!("{name}.load.example.com"),
            start: false,
            ..Default::default()
        }
    }

    /// The base's shadow as Debian has it: root locked, 0640 root:shadow (gid 42).
    fn base_shadow(f: &Fixture) -> PathBuf {
        let shadow = f.path("/var/lib/puppet-clone-army/debian-12/etc/shadow");
        fs::write(
            &shadow,
            "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
        )
        .unwrap();
        fs::set_permissions(&shadow, fs::Permissions::from_mode(0o640)).unwrap();
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&shadow, Some(0), Some(42)).unwrap();
        }
        shadow
    }

    fn secret_files(dir: &Path, hash: &str, password: &str) -> SecretFiles {
        fs::write(dir.join("hash"), format!("{hash}\n")).unwrap();
        fs::write(dir.join("password"), format!("{password}\n")).unwrap();
        SecretFiles {
            root_password_hash_file: Some(dir.join("hash")),
            challenge_password_file: Some(dir.join("password")),
        }
    }

    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn secrets_stay_on_the_host_and_never_reach_the_answer() {
        let f = Fixture::new();
        let shadow = base_shadow(&f);
        let base_before = fs::read_to_string(&shadow).unwrap();
        let secrets_dir = tempfile::tempdir().unwrap();
        let files = secret_files(secrets_dir.path(), HASH, PASSWORD);

        let result = create_with_secrets(&f.ctx(), &request("c1"), &files).unwrap();
        assert!(result.changed);
        assert!(result.root_password);
        assert!(result.challenge_password);
        let answer = serde_json::to_string(&Envelope::success(&result)).unwrap();
        assert!(answer.contains(r#""root_password":true"#), "{answer}");
        assert!(answer.contains(r#""challenge_password":true"#), "{answer}");
        assert!(!answer.contains("SECRET"), "{answer}");

        // Both in the config dir, root's alone; the hash reaches the clone as a
        // credential, the CSR attributes by a read-only bind.
        let config = "/var/lib/puppet-clone-army/c1-config";
        let hash = f.path(&format!("{config}/root-password-hash"));
        assert_eq!(fs::read_to_string(&hash).unwrap(), HASH);
        assert_eq!(mode(&hash), 0o600);
        let csr = f.path(&format!("{config}/csr_attributes.yaml"));
        assert_eq!(mode(&csr), 0o600);
        assert!(fs::read_to_string(&csr)
            .unwrap()
            .contains("  1.2.840.113549.1.9.7: \"SECRET-challenge \\\"pw\\\"\"\n"));
        let settings = f.read("/etc/systemd/nspawn/c1.nspawn");
        assert!(f
            .read("/etc/systemd/system/puppet-clone-army@c1.service.d/40-credentials.conf")
            .contains(&format!(
                "--load-credential=clone-army.root-password-hash:{config}/root-password-hash\n"
            )));
        assert!(settings.contains(&format!(
            "\nBindReadOnly={config}/csr_attributes.yaml:/etc/puppet/csr_attributes.yaml\n"
        )));
        assert!(!settings.contains("SECRET"));
        assert!(f
            .path(&format!(
                "{config}/systemd/multi-user.target.wants/clone-army-root-password.service"
            ))
            .is_symlink());

        // Neither the clone's tree nor the base is touched.
        assert_eq!(
            fs::read_dir(f.path("/var/lib/puppet-clone-army/c1-overlay"))
                .unwrap()
                .count(),
            0
        );
        assert_eq!(fs::read_to_string(&shadow).unwrap(), base_before);
        assert!(!f
            .path("/var/lib/puppet-clone-army/debian-12/etc/puppet/csr_attributes.yaml")
            .exists());

        // Again: nothing to do. Without the files: left as they are, still reported.
        let again = create_with_secrets(&f.ctx(), &request("c1"), &files).unwrap();
        assert!(!again.changed);
        let plain = create_with_secrets(&f.ctx(), &request("c1"), &SecretFiles::default()).unwrap();
        assert!(!plain.changed);
        assert!(plain.root_password && plain.challenge_password);

        // A clone without secrets says so, and its settings pass none.
        let other = create_with_secrets(&f.ctx(), &request("c2"), &SecretFiles::default()).unwrap();
        assert!(!other.root_password && !other.challenge_password);
        let settings = f.read("/etc/systemd/nspawn/c2.nspawn");
        assert!(!settings.contains("csr_attributes"));
        assert!(!f
            .path("/etc/systemd/system/puppet-clone-army@c2.service.d/40-credentials.conf")
            .exists());
    }

    #[test]
    fn bad_secrets_are_refused_unseen_before_anything_is_touched() {
        let f = Fixture::new();
        base_shadow(&f);
        let secrets_dir = tempfile::tempdir().unwrap();
        for (hash, password, field) in [
            ("$6$SECRET:x", "SECRET-ok", "root-password-hash-file"),
            ("SECRET-plain-text", "SECRET-ok", "root-password-hash-file"),
            (HASH, "SECRET\nline two", "challenge-password-file"),
        ] {
            let files = secret_files(secrets_dir.path(), hash, password);
            let error = create_with_secrets(&f.ctx(), &request("c1"), &files).unwrap_err();
            assert_eq!(error.field(), Some(field));
            let answer = serde_json::to_string(&Envelope::failure(&error)).unwrap();
            assert!(!answer.contains("SECRET"), "{answer}");
            assert!(!f.path("/var/lib/puppet-clone-army/c1-overlay").exists());
            assert!(f.systemd.calls().is_empty());
        }
    }
}

// --- clones an older clone-army made --------------------------------------------------

mod legacy {
    use super::*;
    use crate::clone::run_mode::{agent_service, agent_timer, RunMode, RunSettings};

    /// The files of a tree, with their kinds and contents (or link targets).
    fn tree(root: &Path) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut stack = vec![root.to_owned()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let meta = fs::symlink_metadata(&path).unwrap();
                let key = path.strip_prefix(root).unwrap().display().to_string();
                if meta.is_symlink() {
                    out.insert(
                        key,
                        format!("-> {}", fs::read_link(&path).unwrap().display()),
                    );
                } else if meta.is_dir() {
                    stack.push(path);
                } else {
                    out.insert(key, fs::read_to_string(&path).unwrap_or_default());
                }
            }
        }
        out
    }

    use std::collections::BTreeMap;

    /// A timer-mode clone as clone-army 0.3 left it: settings in its upper layer.
    fn legacy_clone(f: &Fixture, name: &str) -> PathBuf {
        let layout = &f.layout;
        let unit = layout.fs(layout.unit_path(&layout.mount_unit_name(name)));
        fs::create_dir_all(unit.parent().unwrap()).unwrap();
        fs::write(
            &unit,
            crate::systemd::units::clone_mount(layout, name, "debian-12"),
        )
        .unwrap();
        let upper = layout.fs(layout.upper_dir(name));
        let settings = RunSettings {
            mode: RunMode::Timer,
            runinterval: 600,
            splay: 5,
            phase_index: 2,
            phase_count: 3,
        };
        for (path, text) in [
            (
                "etc/puppet/puppet.conf",
                format!(
                    "[main]\nserver = old.example.com\ncertname = {name}.old\nlog_level = info\n"
                ),
            ),
            ("etc/hostname", format!("{name}.old\n")),
            (
                "etc/systemd/system/clone-army-agent.timer",
                agent_timer(&settings),
            ),
            (
                "etc/systemd/system/clone-army-agent.service",
                agent_service("/usr/bin/puppet", &settings),
            ),
            (
                "etc/facter/facts.d/clone_army.json",
                "{\"role\": \"old\"}\n".to_owned(),
            ),
        ] {
            let path = upper.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        std::os::unix::fs::symlink("/dev/null", upper.join("etc/systemd/system/puppet.service"))
            .unwrap();
        fs::create_dir_all(f.path("/var/lib/machines").join(name)).unwrap();
        upper
    }

    #[test]
    fn a_legacy_clone_is_listed_from_its_upper_layer_and_moved_over_untouched() {
        let f = Fixture::new();
        let upper = legacy_clone(&f, "old1");
        let before = tree(&upper);

        let listed = describe_one(&f.ctx(), "old1").unwrap();
        assert_eq!(listed.master.as_deref(), Some("old.example.com"));
        assert_eq!(listed.shape.run_mode, Some(RunMode::Timer));
        assert_eq!(
            (
                listed.shape.runinterval,
                listed.shape.splay,
                listed.shape.phase_index
            ),
            (Some(600), Some(5), Some(2))
        );
        assert_eq!(listed.shape.facts["role"], "old");

        // Any mutating call moves every legacy clone over before the template changes.
        f.create("new1", false);
        let config = "/var/lib/puppet-clone-army/old1-config";
        assert_eq!(
            f.read(&format!("{config}/puppet.conf")),
            "[main]\nserver = old.example.com\ncertname = old1.old\nlog_level = info\n"
        );
        assert_eq!(f.read(&format!("{config}/hostname")), "old1.old\n");
        assert!(f
            .read("/etc/systemd/nspawn/old1.nspawn")
            .contains("BindReadOnly=/etc/hosts\n"));
        let after = describe_one(&f.ctx(), "old1").unwrap();
        assert_eq!(after.shape, listed.shape);
        assert_eq!(after.master, listed.master);
        // Nothing in the clone's own tree was changed or removed.
        assert_eq!(tree(&upper), before);
    }

    #[test]
    fn a_legacy_clones_planted_files_read_as_missing_and_are_never_followed() {
        let f = Fixture::new();
        let upper = legacy_clone(&f, "old1");
        let host_secret = f.root.join("host-puppet.conf");
        fs::write(&host_secret, "[main]\nserver = host-secret.example.com\n").unwrap();
        fs::remove_file(upper.join("etc/puppet/puppet.conf")).unwrap();
        std::os::unix::fs::symlink(&host_secret, upper.join("etc/puppet/puppet.conf")).unwrap();
        let facts = upper.join("etc/facter/facts.d");
        fs::remove_dir_all(&facts).unwrap();
        std::os::unix::fs::symlink(&f.root, &facts).unwrap();

        let listed = describe_one(&f.ctx(), "old1").unwrap();
        assert_eq!(listed.master, None);
        assert!(listed.shape.facts.is_empty());
        f.create("new1", false);
        let moved = f.read("/var/lib/puppet-clone-army/old1-config/puppet.conf");
        assert!(!moved.contains("host-secret"), "{moved}");
        assert_eq!(fs::read_link(&facts).unwrap(), f.root);
    }
}

/// A clone's upper layer is the clone's to write: a base.json planted there never makes
/// it a base (to list, or to remove with the clone's layer), nor can a base be named so.
#[test]
fn a_clones_directories_never_pass_for_a_base() {
    let f = Fixture::new();
    f.create("c1", false);
    let planted = f.path("/var/lib/puppet-clone-army/c1-overlay/etc/clone-army");
    fs::create_dir_all(&planted).unwrap();
    fs::copy(
        f.path("/var/lib/puppet-clone-army/debian-12/etc/clone-army/base.json"),
        planted.join("base.json"),
    )
    .unwrap();
    let bases = base::list(&f.ctx()).unwrap();
    let names: Vec<&str> = bases.bases.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["debian-12"]);
    let error = base::remove(&f.ctx(), "c1-overlay").unwrap_err();
    assert_eq!(error.kind(), "invalid-name");
    assert!(f.path("/var/lib/puppet-clone-army/c1-overlay/etc").exists());
}

/// Start and stop act beside each other, never beside a change: while a change holds
/// the lock they wait (and give up after the lock timeout); two of them go together.
#[test]
fn start_and_stop_never_run_beside_a_change() {
    let f = Fixture::new();
    f.create("c1", false);
    let ctx = f.ctx();
    {
        let _change = ctx.lock().unwrap();
        let names = ["c1".to_owned()];
        assert_eq!(start(&ctx, &names, 0).err().unwrap().kind(), "lock-timeout");
        assert_eq!(stop(&ctx, &names).err().unwrap().kind(), "lock-timeout");
    }
    let _other_start = ctx.lock_shared().unwrap();
    assert!(start(&ctx, &["c1".to_owned()], 0).is_ok());
}
