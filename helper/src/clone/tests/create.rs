//! `clone create`: what it writes, what it refuses before touching anything.

use super::*;
use crate::sys::progress::{Quiet, Recorded};

#[test]
fn create_writes_everything_and_reloads_once() {
    let f = Fixture::new();
    let result = f.create("clone-1", false);
    assert!(result.changed);
    assert_eq!(result.clone.name, "clone-1");
    assert_eq!(result.clone.base, "debian-12");
    assert_eq!(result.clone.server.as_deref(), Some("puppet.example.com"));
    assert_eq!(result.clone.state, CloneState::Stopped);

    // What the clone is given is on the host, in its config dir (root's alone) ...
    let config = "/var/lib/puppet-clone-army/clone-1-config";
    assert_eq!(
        f.read(&format!("{config}/puppet.conf")),
        "[main]\nserver = puppet.example.com\ncertname = clone-1.load.example.com\nusecacheonfailure = false\n"
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
fn create_refuses_a_missing_base_and_touches_nothing() {
    let f = Fixture::new();
    let error = create(
        &f.ctx(),
        &CloneRequest {
            name: "c1".into(),
            base: "nope".into(),
            server: Some("m".into()),
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
    for (name, server, field) in [("../x", "m", "name"), ("c1", "bad host", "server")] {
        let error = create(
            &f.ctx(),
            &CloneRequest {
                name: name.into(),
                base: "debian-12".into(),
                server: Some(server.into()),
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
fn create_writes_the_server_port_and_refuses_one_without_a_server() {
    let f = Fixture::new();
    create(
        &f.ctx(),
        &CloneRequest {
            server_port: Some(8141),
            ..request("c1")
        },
    )
    .unwrap();
    assert_eq!(
        f.read("/var/lib/puppet-clone-army/c1-config/puppet.conf"),
        "[main]\nserver = puppet.example.com\nserverport = 8141\ncertname = c1.load.example.com\nusecacheonfailure = false\n"
    );
    assert_eq!(list(&f.ctx()).unwrap().clones[0].server_port, Some(8141));

    let error = create(
        &f.ctx(),
        &CloneRequest {
            server: None,
            server_port: Some(8141),
            ..request("c2")
        },
    )
    .unwrap_err();
    assert_eq!(error.field(), Some("server_port"));
    assert_eq!(error.exit_code(), 2);
    assert!(!f.path("/var/lib/puppet-clone-army/c2-config").exists());
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

/// A timer-mode clone, as the class makes them.
fn shaped(name: &str) -> CloneRequest {
    CloneRequest {
        shape: Some(super::super::shape::ShapeRequest {
            run_mode: Some(RunMode::Timer),
            runinterval: Some(600),
            ..Default::default()
        }),
        ..request(name)
    }
}

/// Every file and link under the root, with its content or target and its mode.
fn everything(root: &Path) -> Vec<(PathBuf, String, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String, u32)>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let meta = fs::symlink_metadata(&path).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("-> {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(root, &path, out);
                "dir".to_owned()
            } else {
                fs::read_to_string(&path).unwrap_or_default()
            };
            let relative = path.strip_prefix(root).unwrap().to_owned();
            out.push((relative, what, meta.mode() & 0o7777));
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn create_many_makes_each_clone_as_create_does_with_one_reload() {
    let one_by_one = Fixture::new();
    for name in ["clone1", "clone2", "clone3"] {
        create(&one_by_one.ctx(), &shaped(name)).unwrap();
    }
    let batch = Fixture::new();
    let requests: Vec<_> = ["clone1", "clone2", "clone3"].map(shaped).into();
    let progress = Recorded::default();
    let created = create_many(&batch.ctx(), &requests, &progress).unwrap();
    assert_eq!(
        progress.reports(),
        ["count 0/3", "count 1/3", "count 2/3", "count 3/3"]
    );

    let names: Vec<_> = created
        .clones
        .iter()
        .map(|c| c.clone.name.as_str())
        .collect();
    assert_eq!(names, ["clone1", "clone2", "clone3"]);
    assert!(created.clones.iter().all(|c| c.changed));
    assert_eq!(created.clones[1].clone.shape.runinterval, Some(600));
    assert_eq!(batch.reloads(), 1);
    assert_eq!(one_by_one.reloads(), 3);
    assert_eq!(everything(batch.root()), everything(one_by_one.root()));

    // The same batch again changes nothing, and reloads nothing.
    let again = create_many(&batch.ctx(), &requests, &Quiet).unwrap();
    assert!(again.clones.iter().all(|c| !c.changed));
    assert_eq!(batch.reloads(), 1);
}

#[test]
fn create_many_refuses_a_bad_batch_before_writing_anything() {
    let f = Fixture::new();
    let before = everything(f.root());
    let bad_certname = CloneRequest {
        certname: "not a hostname".into(),
        ..shaped("clone3")
    };
    let unknown_base = CloneRequest {
        base: "debian-99".into(),
        ..shaped("clone3")
    };
    let started = CloneRequest {
        start: true,
        ..shaped("clone3")
    };
    for (third, field) in [
        (bad_certname, "certname"),
        (unknown_base, "base"),
        (started, "start"),
        (shaped("clone1"), "name"),
    ] {
        let batch = [shaped("clone1"), shaped("clone2"), third];
        let progress = Recorded::default();
        let e = create_many(&f.ctx(), &batch, &progress).unwrap_err();
        assert_eq!(e.field(), Some(field), "{e}");
        assert_eq!(everything(f.root()), before, "{e}");
        assert!(f.actions().is_empty(), "{e}");
        assert!(progress.reports().is_empty(), "{e}");
    }
}

#[test]
fn create_many_refuses_a_name_another_base_has_before_writing_anything() {
    let f = Fixture::new();
    f.create("clone2", false);
    let on_disk = f.read("/etc/systemd/system/var-lib-machines-clone2.mount");
    fs::write(
        f.path("/etc/systemd/system/var-lib-machines-clone2.mount"),
        on_disk.replace("debian-12", "debian-11"),
    )
    .unwrap();
    let before = everything(f.root());
    let e = create_many(&f.ctx(), &[shaped("clone1"), shaped("clone2")], &Quiet).unwrap_err();
    assert!(e.to_string().contains("debian-11"), "{e}");
    assert_eq!(everything(f.root()), before);
}

/// The merged root of a running clone holds whatever its root made, setuid binaries
/// included: `/var/lib/machines` is root's alone (0700, as systemd's own tmpfiles.d
/// makes it), so no local user reaches them through the clone's mount point.
#[test]
fn a_missing_machines_dir_is_made_0700_so_no_local_user_reaches_a_clones_setuid_files() {
    let f = Fixture::new();
    assert!(!f.path("/var/lib/machines").exists());
    f.create("c1", false);
    assert_eq!(mode(&f.path("/var/lib/machines")), 0o700);
    assert_eq!(mode(&f.path("/var/lib")), 0o755);
}

/// A machines directory opened to local users (by hand, or made 0755 by an older
/// clone-army) is closed again by the next create, even of a clone that exists.
#[test]
fn a_machines_dir_opened_to_local_users_is_closed_again_at_every_create() {
    let f = Fixture::new();
    f.create("c1", false);
    let machines = f.path("/var/lib/machines");
    for opened in [0o755, 0o711, 0o777, 0o4755] {
        fs::set_permissions(
            &machines,
            std::os::unix::fs::PermissionsExt::from_mode(opened),
        )
        .unwrap();
        f.create("c1", false);
        assert_eq!(mode(&machines), 0o700, "{opened:o}");
    }
}

/// A symlink in place of the machines directory would put the clones' mount points
/// wherever it points: refused, nothing followed or created there.
#[test]
fn a_symlink_in_place_of_the_machines_dir_is_refused() {
    let f = Fixture::new();
    let elsewhere = f.root().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::set_permissions(
        &elsewhere,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    fs::create_dir_all(f.path("/var/lib")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, f.path("/var/lib/machines")).unwrap();
    let error = create(&f.ctx(), &request("c1")).unwrap_err();
    assert!(error.to_string().contains("/var/lib/machines"), "{error}");
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert_eq!(mode(&elsewhere), 0o755);
    assert!(!f.path("/var/lib/puppet-clone-army/c1-overlay").exists());
}
