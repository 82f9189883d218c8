//! `clone start` end to end through the binary with the file-backed fake systemd:
//! waves, the result, and a failed clone that does not stop the others.

mod common;

use common::Scene;

fn with_clones(names: &[&str]) -> Scene {
    let scene = Scene::new();
    scene.run(&scene.base_create());
    for name in names {
        let certname = format!("{name}.example.com");
        scene.run(&[
            "clone",
            "create",
            name,
            "--base",
            "b1",
            "--server",
            "puppet.example.com",
            "--certname",
            &certname,
        ]);
    }
    scene
}

fn fake_state(scene: &Scene) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(scene.systemd_file()).unwrap()).unwrap()
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn start_queues_a_waves_starts_before_waiting_and_reports_host_limits() {
    common::require_root();
    let scene = with_clones(&["c1", "c2", "c3"]);
    let output = scene.run(&["clone", "start", "c1", "c2", "c3"]);
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let result = &answer["result"];
    assert_eq!(result["waves"], serde_json::json!([["c1", "c2", "c3"]]));
    assert_eq!(result["ramp_up_seconds"], 0);
    assert!(result["clones"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["state"] == "running"));
    // No /proc/sys under the test root: every limit reported as not applied, and warned.
    let limits = result["host_limits"].as_array().unwrap();
    assert!(limits
        .iter()
        .any(|l| l["name"] == "fs.inotify.max_user_instances" && l["applied"] == false));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: kernel limit fs.inotify.max_user_instances"),
        "{stderr}"
    );
    assert!(scene
        .root
        .path()
        .join("etc/sysctl.d/60-puppet-clone-army.conf")
        .exists());
    let state = fake_state(&scene);
    let starts: Vec<&str> = state["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .filter(|c| c.starts_with("start_unit"))
        .collect();
    assert_eq!(
        starts,
        [
            "start_unit puppet-clone-army@c1.service",
            "start_unit puppet-clone-army@c2.service",
            "start_unit puppet-clone-army@c3.service"
        ]
    );
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn a_clone_that_fails_is_named_after_the_others_were_started() {
    common::require_root();
    let scene = with_clones(&["c1", "c2", "c3"]);
    let mut state = fake_state(&scene);
    state["failing"] = serde_json::json!(["puppet-clone-army@c2.service"]);
    std::fs::write(scene.systemd_file(), state.to_string()).unwrap();

    let output = scene
        .command(&["clone", "start", "--ramp-up", "0", "c1", "c2", "c3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let error = &answer["error"];
    assert_eq!(error["kind"], "systemd");
    assert_eq!(error["message"], "1 of 3 clone(s) did not start: c2");
    let causes = error["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1);
    assert!(causes[0]
        .as_str()
        .unwrap()
        .starts_with("c2: unit puppet-clone-army@c2.service failed"));
    let state = fake_state(&scene);
    assert_eq!(state["states"]["puppet-clone-army@c3.service"], "active");
}
