//! `clone create`: what it writes, what it refuses before touching anything.

use super::*;

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
