//! A test hook, compiled in always: `CLONE_ARMY_FAULT_AFTER=<step>` makes the helper
//! SIGKILL itself right after that step of `base create`, `clone create` or `clone
//! remove`, so `tests/faults.rs` can prove that the next call converges whatever step
//! a crash (or `kill -9`, or a host losing power) interrupted. It is not for use in
//! production; an unset variable, or a step name not in [`STEPS`], does nothing.
//!
//! SIGKILL rather than `exit`: nothing runs after it (no destructors, no cleanup
//! closures), exactly like a real kill.

/// Every step the hook can stop after, in the order each verb runs them.
pub const STEPS: &[&str] = &[
    // base create
    "base-create:staging-created",
    "base-create:builder-ran",
    "base-create:rootfs-finished",
    "base-create:metadata-written",
    "base-create:renamed",
    // clone create
    "clone-create:dirs-created",
    "clone-create:clone-files-written",
    "clone-create:shared-units-written",
    "clone-create:mount-unit-written",
    "clone-create:enable-link-created",
    "clone-create:host-units-written",
    "clone-create:daemon-reloaded",
    // replacing a fleet of sharpie-clone_army 0.2.1 (in clone create and configure)
    "old-fleet:stopped",
    "old-fleet:certificates-kept",
    "old-fleet:first-dir-moved",
    "old-fleet:dirs-moved",
    "old-fleet:first-mount-unit-removed",
    "old-fleet:mount-units-removed",
    "old-fleet:shared-units-written",
    "old-fleet:daemon-reloaded",
    // clone remove
    "clone-remove:stopped",
    "clone-remove:enable-link-removed",
    "clone-remove:mount-unit-removed",
    "clone-remove:limits-removed",
    "clone-remove:nspawn-settings-removed",
    "clone-remove:upper-dir-removed",
    "clone-remove:work-dir-removed",
    "clone-remove:config-dir-removed",
    "clone-remove:machine-dir-removed",
    "clone-remove:daemon-reloaded",
];

/// The steps of one operation (`base-create`, `clone-create`, `old-fleet`, `clone-remove`:
/// the part of each step's name before its `:`), in the order it runs them; the fault
/// suites read them from here, so a new step is tested by the suite of its operation.
pub fn steps_of(operation: &str) -> Vec<&'static str> {
    STEPS
        .iter()
        .copied()
        .filter(|step| step.split_once(':').is_some_and(|(op, _)| op == operation))
        .collect()
}

pub const FAULT_ENV: &str = "CLONE_ARMY_FAULT_AFTER";

/// Marks the end of `step`; kills the process here when the test hook asks for it.
pub fn after(step: &'static str) {
    debug_assert!(STEPS.contains(&step), "unknown fault step {step}");
    if std::env::var(FAULT_ENV).is_ok_and(|wanted| wanted == step) {
        eprintln!("clone-army: {FAULT_ENV}={step}: killing myself (test hook)");
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}
