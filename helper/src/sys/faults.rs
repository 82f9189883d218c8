//! A test hook, compiled in always: `CLONE_ARMY_FAULT_AFTER=<step>` makes the helper
//! SIGKILL itself right after that step of `base create`, `clone create` or `clone
//! remove`, so `tests/faults.rs` can prove that the next call converges whatever step
//! a crash (or `kill -9`, or a host losing power) interrupted. It acts only beside the
//! test root guard, [`paths::test_root`] set (as the systemd fakes ask too; the acceptance
//! tests set it to `/`): compiled in always, since the acceptance tests kill the
//! release build, it must not act on a host where a stray variable reached a helper
//! that is not under test. An unset variable, or a step name not in [`STEPS`], does
//! nothing either.
//!
//! SIGKILL rather than `exit`: nothing runs after it (no destructors, no cleanup
//! closures), exactly like a real kill.

use crate::sys::paths;

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
    let under_test = paths::test_root().is_some();
    if under_test && std::env::var(FAULT_ENV).is_ok_and(|wanted| wanted == step) {
        eprintln!("clone-army: {FAULT_ENV}={step}: killing myself (test hook)");
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::paths::ROOT_ENV;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Output};

    const CHILD: &str = "sys::faults::tests::a_child_passes_every_step";

    /// What the tests below run in a child process, with the environment they give it.
    #[test]
    #[ignore = "run in a child process by the fault hook's tests"]
    fn a_child_passes_every_step() {
        for step in STEPS {
            after(step);
        }
    }

    /// This test binary, running [`CHILD`] alone, asked to die after the first step.
    fn child(root: Option<&std::path::Path>) -> Output {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", CHILD, "--include-ignored", "--test-threads=1"])
            .env(FAULT_ENV, STEPS[0])
            .env_remove(ROOT_ENV);
        if let Some(root) = root {
            command.env(ROOT_ENV, root);
        }
        command.output().unwrap()
    }

    #[test]
    fn a_fault_step_in_the_environment_kills_no_helper_outside_a_test_root() {
        let output = child(None);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{:?}\n{stdout}",
            output.status
        );
        // The same child under a test root dies at the step.
        let root = tempfile::tempdir().unwrap();
        assert_eq!(child(Some(root.path())).status.signal(), Some(9));
    }
}
