//! `clone-army host limits` through the binary: read-only, under CLONE_ARMY_ROOT.

mod common;

use std::path::Path;
use std::process::Output;

use clone_army::protocol::answers::{Capacity, Envelope, ErrorBody, HostReport};

use common::run_in as run;

fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn host_limits_reports_limits_and_capacity_and_changes_nothing() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let inotify = root.path().join("proc/sys/fs/inotify");
    std::fs::create_dir_all(&inotify).unwrap();
    std::fs::write(inotify.join("max_user_instances"), "128\n").unwrap();
    std::fs::write(inotify.join("max_user_watches"), "2000000\n").unwrap();
    std::fs::write(
        root.path().join("proc/meminfo"),
        "MemTotal:       25165824 kB\nMemFree:         1000 kB\n",
    )
    .unwrap();
    let before = tree(root.path());

    let output = run(root.path(), &["host", "limits"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let envelope: Envelope<HostReport> = serde_json::from_slice(&output.stdout).unwrap();
    assert!(envelope.ok);
    let report = envelope.result.unwrap();
    assert_eq!(report.memory_total_bytes, Some(24 * 1024 * 1024 * 1024));
    assert_eq!(
        report.capacity,
        Some(Capacity {
            daemon: 225,
            timer: 1126
        })
    );
    assert_eq!(report.memory_error, None);
    assert!(!report.sysctl_file_present);
    let instances = &report.limits[0];
    assert_eq!(instances.name, "fs.inotify.max_user_instances");
    assert_eq!(
        (instances.current, instances.wanted, instances.applied),
        (Some(128), 8192, false)
    );
    assert_eq!(instances.caps_clones, Some(21));
    assert!(report.limits[1].applied);
    let keys = report
        .limits
        .iter()
        .find(|l| l.name == "kernel.keys.maxkeys")
        .unwrap();
    assert_eq!(keys.current, None);
    assert!(keys
        .error
        .as_deref()
        .unwrap()
        .contains("proc/sys/kernel/keys/maxkeys"));
    // Read-only: the value and the tree are as they were.
    assert_eq!(
        std::fs::read_to_string(inotify.join("max_user_instances")).unwrap(),
        "128\n"
    );
    assert_eq!(tree(root.path()), before);
}

fn failure(output: &Output) -> ErrorBody {
    let envelope: Envelope<serde_json::Value> = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not a failure envelope ({e}): {output:?}"));
    assert!(!envelope.ok);
    envelope.error.expect("an error body")
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn host_selinux_check_bad_input_and_no_selinux_change_nothing() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let before = tree(root.path());

    // --check with no drop-in: not-in-place, exit 1.
    let output = run(root.path(), &["host", "selinux", "--check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let error = failure(&output);
    assert_eq!(error.kind, "not-in-place");
    assert!(
        error
            .message
            .contains("puppet-clone-army@.service.d/60-selinux.conf"),
        "{error:?}"
    );

    // A context that would add an argument: invalid-argument naming the field, exit 2.
    let output = run(
        root.path(),
        &[
            "host",
            "selinux",
            "--context",
            "system_u:system_r:container_t:s0 --bind=/",
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = failure(&output);
    assert_eq!(error.kind, "invalid-argument");
    assert_eq!(error.field.as_deref(), Some("context"));

    // No /sys/fs/selinux under the root: refused, exit 1.
    let output = run(root.path(), &["host", "selinux"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(failure(&output).kind, "unsupported");

    assert_eq!(tree(root.path()), before);
}
