//! The load shape: run modes, limits and facts, at create and configure.

use super::*;

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
    assert_eq!(shape.phasing, Some(Phasing::PrefixEven));

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
    // Phase 1 is the second of the sequence: half an interval in.
    assert!(timer.contains("\nOnActiveSec=300\n"), "{timer}");
    assert!(
        timer.contains("\nX-CloneArmyPhasing=prefix-even\n"),
        "{timer}"
    );
    assert!(fs::read_to_string(f.in_units(AGENT_SERVICE))
        .unwrap()
        .contains("ExecStart=/usr/bin/puppet agent --onetime --no-daemonize --verbose\n"));
    // The daemon's phase timer is masked, in case the clone's root left one in its
    // own /etc/systemd/system.
    assert_eq!(
        f.link_in_units(PHASE_TIMER).as_deref(),
        Some(Path::new("/dev/null"))
    );
    // Nothing of the daemon's in puppet.conf, and nothing written into the base.
    assert_eq!(
        f.read(&format!("{CONFIG_C1}/puppet.conf")),
        "[main]\nserver = puppet.example.com\ncertname = c1.load.example.com\nusecacheonfailure = false\n"
    );
    assert!(!f
        .path("/var/lib/puppet-clone-army/debian-12/etc/systemd")
        .exists());

    // The same request again changes nothing.
    assert!(!f.create_shaped("c1", timer_shape()).changed);
    let listed = list(&f.ctx()).unwrap();
    assert_eq!(listed.clones[0].shape, created.clone.shape);
}

#[test]
fn apply_mode_runs_puppet_apply_on_a_bound_source_without_a_master() {
    use super::run_mode::*;
    let f = Fixture::new();
    f.apply_source("/srv/apply");
    let created = create_with(
        &f.ctx(),
        &CloneRequest {
            name: "c1".into(),
            base: "debian-12".into(),
            server: None,
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
    assert_eq!(created.clone.server, None);
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
    // The bind is nspawn's business at the clone's next start; the check of the source
    // before each start goes with it, which is a drop-in: one reload for its removal.
    let reloads = f.actions().iter().filter(|a| *a == "daemon_reload").count();
    assert_eq!(reloads, 2, "{:?}", f.actions());
}

const SOURCE_CHECK: &str =
    "/etc/systemd/system/puppet-clone-army@c1.service.d/45-apply-source-check.conf";

/// An apply source judged once could be opened to others, or swapped for a symlink, by
/// the time the clone starts again (at boot, by `systemctl start`, by the fleet target):
/// every start of an apply-mode clone runs the helper's check of what its settings bind
/// first, and fails when the check does.
#[test]
fn every_start_of_an_apply_mode_clone_checks_its_source_again_first() {
    let f = Fixture::new();
    f.apply_source("/srv/apply");
    create_with(
        &f.ctx(),
        &CloneRequest {
            server: None,
            ..request("c1")
        },
        &apply_shape(Some("/srv/apply")),
    )
    .unwrap();
    let dropin = f.read(SOURCE_CHECK);
    let helper = std::env::current_exe().unwrap();
    assert!(dropin.starts_with("# Managed by clone-army "), "{dropin}");
    assert!(
        dropin.ends_with(&format!(
            "\n[Service]\nExecStartPre={} clone check-apply-source -- c1\n",
            helper.display()
        )),
        "{dropin}"
    );
    assert_eq!(mode(&f.path(SOURCE_CHECK)), 0o644);
    // Another source: the same check. Out of apply mode: none; removed: none.
    f.apply_source("/srv/other");
    f.configure_shape(
        "c1",
        ShapeRequest {
            apply_source: Some("/srv/other".into()),
            ..ShapeRequest::default()
        },
    );
    assert_eq!(f.read(SOURCE_CHECK), dropin);
    f.configure_shape("c1", timer_shape());
    assert!(!f.path(SOURCE_CHECK).exists());
    f.configure_shape("c1", apply_shape(Some("/srv/apply")));
    assert!(f.path(SOURCE_CHECK).exists());
    remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert!(!f.path(SOURCE_CHECK).exists());
}

#[test]
fn apply_source_and_a_missing_master_are_refused_outside_apply_mode() {
    let f = Fixture::new();
    f.apply_source("/srv/apply");
    fs::create_dir_all(f.path("/srv/empty")).unwrap();
    let request = |server: Option<&str>| CloneRequest {
        name: "c1".into(),
        base: "debian-12".into(),
        server: server.map(str::to_owned),
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
        "server"
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
    // In apply mode, another source alone is fine; the server stays as it was.
    f.apply_source("/srv/other");
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
    assert_eq!(other.clone.server.as_deref(), Some("puppet.example.com"));
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
            server: Some("m.example.com".into()),
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

#[test]
fn agent_noop_is_set_in_puppet_conf_kept_across_modes_read_back_and_unset() {
    let f = Fixture::new();
    let conf = || f.read(&format!("{CONFIG_C1}/puppet.conf"));
    let created = f.create_shaped(
        "c1",
        ShapeRequest {
            agent_noop: Some(true),
            ..ShapeRequest::default()
        },
    );
    assert!(created.clone.shape.agent_noop);
    assert!(
        conf().contains("[agent]\nruninterval = 1800\nnoop = true\n"),
        "{}",
        conf()
    );
    assert!(conf().ends_with("[user]\nnoop = true\n"), "{}", conf());

    // Another run mode keeps it; the daemon's [agent] keys go, noop stays.
    let timer = f.configure_shape(
        "c1",
        ShapeRequest {
            run_mode: Some(RunMode::Timer),
            ..ShapeRequest::default()
        },
    );
    assert!(timer.clone.shape.agent_noop);
    assert!(conf().contains("[agent]\nnoop = true\n"), "{}", conf());
    assert!(!conf().contains("runinterval"), "{}", conf());

    let off = f.configure_shape(
        "c1",
        ShapeRequest {
            agent_noop: Some(false),
            ..ShapeRequest::default()
        },
    );
    assert!(!off.clone.shape.agent_noop);
    assert!(off.changed);
    assert!(!conf().contains("noop"), "{}", conf());
    assert_eq!(
        crate::clone::puppet_conf::parse(&conf())
            .certname
            .as_deref(),
        Some("c1.load.example.com")
    );
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

#[test]
fn the_phasing_rule_alone_moves_the_offset_and_is_kept_by_other_changes() {
    use super::run_mode::*;
    let f = Fixture::new();
    f.create_shaped("c1", timer_shape());
    let fleet_even = f.configure_shape(
        "c1",
        ShapeRequest {
            phasing: Some(Phasing::FleetEven),
            ..ShapeRequest::default()
        },
    );
    assert!(fleet_even.changed);
    let shape = &fleet_even.clone.shape;
    assert_eq!(
        (shape.phase_index, shape.phase_count, shape.phasing),
        (Some(1), Some(4), Some(Phasing::FleetEven))
    );
    let timer = || fs::read_to_string(f.in_units(AGENT_TIMER)).unwrap();
    assert!(timer().contains("\nOnActiveSec=150\n"), "{}", timer());

    // A new interval keeps the rule; the offset follows the interval.
    let longer = f.configure_shape(
        "c1",
        ShapeRequest {
            runinterval: Some(900),
            ..ShapeRequest::default()
        },
    );
    assert_eq!(longer.clone.shape.phasing, Some(Phasing::FleetEven));
    assert!(timer().contains("\nOnActiveSec=225\n"), "{}", timer());

    // So does a daemon: its phase timer names the rule too.
    let daemon = f.configure_shape(
        "c1",
        ShapeRequest {
            run_mode: Some(RunMode::Daemon),
            phasing: Some(Phasing::PrefixEven),
            ..ShapeRequest::default()
        },
    );
    assert_eq!(daemon.clone.shape.phasing, Some(Phasing::PrefixEven));
    let phase_timer = fs::read_to_string(f.in_units(PHASE_TIMER)).unwrap();
    assert!(phase_timer.contains("\nOnActiveSec=450\n"), "{phase_timer}");
}

/// The clone can rewrite the units it is given: a rule name clone-army never wrote is
/// read as no rule, never passed on as it stands.
#[test]
fn a_timer_naming_an_unknown_phasing_rule_reads_as_none() {
    use super::run_mode::*;
    let f = Fixture::new();
    f.create_shaped("c1", timer_shape());
    let path = f.in_units(AGENT_TIMER);
    let planted = fs::read_to_string(&path).unwrap().replace(
        "X-CloneArmyPhasing=prefix-even",
        "X-CloneArmyPhasing=\u{1b}[2Jherd",
    );
    fs::write(&path, planted).unwrap();
    let listed = list(&f.ctx()).unwrap();
    let shape = &listed.clones[0].shape;
    assert_eq!(shape.phasing, None);
    assert_eq!((shape.phase_index, shape.runinterval), (Some(1), Some(600)));
    // The next configure writes the rule again, as on create.
    let again = f.configure_shape(
        "c1",
        ShapeRequest {
            splay: Some(0),
            ..ShapeRequest::default()
        },
    );
    assert_eq!(again.clone.shape.phasing, Some(DEFAULT_PHASING));
}
