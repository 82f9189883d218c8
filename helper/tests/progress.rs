//! The long verbs' progress end to end through the binary: none at all when stderr is no
//! terminal (what the providers and the tasks see), and on a terminal (a pseudo-terminal
//! from util-linux's `script`) a status line drawn in place and cleared before the answer.

mod common;

use std::process::Command;

use common::Scene;

/// Back to the line's start, and clear to its end: how the status line is drawn and
/// cleared.
const CLEAR: &str = "\r\x1b[K";

fn batch(scene: &Scene, names: &[&str]) -> String {
    let lines: Vec<String> = names
        .iter()
        .map(|name| {
            serde_json::json!([
                name,
                "--base",
                "b1",
                "--server",
                "puppet.example.com",
                "--certname",
                format!("{name}.example.com")
            ])
            .to_string()
        })
        .collect();
    let file = scene.aside.path().join("batch.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    file.display().to_string()
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn without_a_terminal_the_long_verbs_say_nothing_of_their_progress() {
    common::require_root();
    let scene = Scene::new();
    let file = batch(&scene, &["c1", "c2", "c3"]);
    for args in [
        scene.base_create(),
        vec!["clone", "create-many", &file],
        vec!["clone", "start", "--ramp-up", "5", "c1", "c2", "c3"],
    ] {
        let output = scene.run(&args);
        let stderr = String::from_utf8(output.stderr).unwrap();
        // Only the warnings of a root that is no real host (its kernel limits): no
        // command the build ran, no wave, no status line.
        assert!(
            stderr
                .lines()
                .all(|line| line.starts_with("clone-army: warning: ")),
            "{args:?}: {stderr:?}"
        );
        assert!(
            !stderr.contains('\r') && !stderr.contains('\x1b'),
            "{args:?}: {stderr:?}"
        );
    }
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn on_a_terminal_a_build_shows_its_step_and_clears_it_before_the_answer() {
    common::require_root();
    let scene = Scene::new();
    let mut helper = scene.command(&scene.base_create());
    // Long enough for the status line to be drawn while debootstrap runs.
    helper.env("STAND_IN_DEBOOTSTRAP_SLEEP", "1");
    let output = on_a_terminal(&helper);
    let first = format!("{CLEAR}base b1: [0s] debootstrap (step 1 of 2)");
    assert!(output.contains(&first), "{output:?}");
    // The answer starts where the status line was, cleared: nothing of it is left.
    let answer = &output[output.rfind(CLEAR).unwrap() + CLEAR.len()..];
    assert!(
        answer.starts_with(r#"{"protocol":2,"ok":true,"#),
        "{output:?}"
    );
    assert!(!answer.contains('\x1b'), "{output:?}");
}

/// Runs `helper` with stdout and stderr on a pseudo-terminal (`script`, which is in every
/// Debian: bsdutils is essential) and returns what the terminal was sent.
fn on_a_terminal(helper: &Command) -> String {
    let quoted = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let line: Vec<String> = std::iter::once(helper.get_program())
        .chain(helper.get_args())
        .map(|word| quoted(word.to_str().unwrap()))
        .collect();
    let mut script = Command::new("script");
    script
        .args([
            "--quiet",
            "--return",
            "--command",
            &line.join(" "),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null());
    for (name, value) in helper.get_envs() {
        match value {
            Some(value) => script.env(name, value),
            None => script.env_remove(name),
        };
    }
    let output = script.output().expect("run script (util-linux)");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}
