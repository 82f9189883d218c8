//! `clone start` and `clone stop`: waiting, failing units, systemd giving up, the lock.

use super::*;
use crate::sys::progress::Quiet;

#[test]
fn a_failing_start_is_a_systemd_error_naming_the_unit() {
    let f = Fixture::new();
    f.systemd.fail_starts_of("puppet-clone-army@c1.service");
    let error = create(
        &f.ctx(),
        &CloneRequest {
            name: "c1".into(),
            base: "debian-12".into(),
            server: Some("m".into()),
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
fn start_and_stop() {
    let f = Fixture::new();
    f.create("c1", false);
    f.create("c2", false);
    let names = vec!["c1".to_owned(), "c2".to_owned()];
    let started = start(&f.ctx(), &names, 0, &Quiet).unwrap().clones;
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
    let error = start(&f.ctx(), &["c1".to_owned(), "c3".to_owned()], 0, &Quiet).unwrap_err();
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
    f.systemd.limit_starts_of(unit);
    let before = f.actions().len();

    let started = start(&f.ctx(), &["c1".to_owned(), "c2".to_owned()], 0, &Quiet)
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
        assert_eq!(
            start(&ctx, &names, 0, &Quiet).err().unwrap().kind(),
            "lock-timeout"
        );
        assert_eq!(stop(&ctx, &names).err().unwrap().kind(), "lock-timeout");
    }
    let _other_start = ctx.lock_shared().unwrap();
    assert!(start(&ctx, &["c1".to_owned()], 0, &Quiet).is_ok());
}
