//! `clone remove`: stops, unmounts and removes everything, and refuses when it cannot.

use super::*;

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
