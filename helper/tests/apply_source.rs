//! The check an apply-mode clone's service runs before every start, end to end: the
//! command its drop-in names, run as systemd would run it, against a source that was
//! fine when the clone was made and is not any more.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::Scene;

const DROPIN: &str = "etc/systemd/system/puppet-clone-army@c1.service.d/45-apply-source-check.conf";

/// `/srv/<name>/manifests`, every directory 0755 whatever the umask.
fn source(scene: &Scene, name: &str) {
    let mut path = scene.root.path().to_owned();
    for component in ["srv", name, "manifests"] {
        path.push(component);
        std::fs::create_dir_all(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The command of the drop-in's `ExecStartPre=`, split as systemd splits it (the helper
/// writes only plain words there).
fn check_command(scene: &Scene) -> Vec<String> {
    let text = std::fs::read_to_string(scene.root.path().join(DROPIN)).unwrap();
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("ExecStartPre="))
        .unwrap_or_else(|| panic!("no ExecStartPre= in {text}"));
    line.split_whitespace().map(str::to_owned).collect()
}

/// Runs the check as the clone's service would; its exit code and answer.
fn run_check(scene: &Scene, command: &[String]) -> (Option<i32>, serde_json::Value) {
    let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    let output = scene.command(&args).output().unwrap();
    let answer = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code(), answer)
}

fn refusal(answer: &serde_json::Value) -> String {
    assert_eq!(answer["error"]["kind"], "invalid-argument", "{answer}");
    assert_eq!(answer["error"]["field"], "apply-source", "{answer}");
    answer["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn a_source_opened_to_others_after_it_was_checked_keeps_the_clone_from_starting() {
    common::require_root();
    let scene = Scene::new();
    scene.run(&scene.base_create());
    source(&scene, "apply");
    source(&scene, "other");
    scene.run(&[
        "clone",
        "create",
        "c1",
        "--base",
        "b1",
        "--certname",
        "c1.example.com",
        "--run-mode",
        "apply",
        "--apply-source",
        "/srv/apply",
    ]);
    let command = check_command(&scene);
    assert_eq!(
        Path::new(&command[0]),
        Path::new(env!("CARGO_BIN_EXE_clone-army"))
    );
    let (code, answer) = run_check(&scene, &command);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["result"]["apply_source"], "/srv/apply", "{answer}");

    // Opened to every local user since.
    let apply = scene.root.path().join("srv/apply");
    std::fs::set_permissions(&apply, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, answer) = run_check(&scene, &command);
    assert_eq!(code, Some(2), "{answer}");
    let message = refusal(&answer);
    assert!(
        message.contains("/srv/apply is writable by its group and by others (mode 777)"),
        "{message}"
    );

    // Swapped for a symlink to another directory, which nspawn would bind instead.
    std::fs::remove_dir_all(&apply).unwrap();
    std::os::unix::fs::symlink("other", &apply).unwrap();
    let (code, answer) = run_check(&scene, &command);
    assert_eq!(code, Some(2), "{answer}");
    let message = refusal(&answer);
    assert!(
        message.contains("it resolves to /srv/other through a symlink"),
        "{message}"
    );
}
