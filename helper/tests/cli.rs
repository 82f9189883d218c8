//! Runs the built binary the way the providers do, and decodes its stdout back into
//! typed structs (the protocol's, mirrored here: the helper is a binary crate).

use std::path::Path;
use std::process::{Command, Output};

use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Envelope<T> {
    protocol: u32,
    ok: bool,
    result: Option<T>,
    error: Option<ErrorBody>,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    kind: String,
    message: String,
    field: Option<String>,
    causes: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct CloneList {
    clones: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct BaseList {
    bases: Vec<serde_json::Value>,
}

fn run(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clone-army"))
        .args(args)
        .env("CLONE_ARMY_ROOT", root)
        // Never reach a real bus from a test.
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            "unix:path=/nonexistent/clone-army-test",
        )
        .output()
        .expect("run clone-army")
}

/// Exactly one JSON document, one line, on stdout.
fn envelope<T: for<'de> Deserialize<'de>>(output: &Output) -> Envelope<T> {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(stdout.ends_with('\n'), "{stdout:?}");
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    let envelope: Envelope<T> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(envelope.protocol, 1);
    envelope
}

fn failure(output: &Output) -> ErrorBody {
    let envelope: Envelope<serde_json::Value> = envelope(output);
    assert!(!envelope.ok);
    assert!(envelope.result.is_none());
    let error = envelope.error.expect("error body");
    assert!(!error.message.is_empty());
    error
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn usage_errors_are_json_with_exit_2() {
    let root = tempfile::tempdir().unwrap();
    for args in [
        &["frobnicate"][..],
        &["clone", "explode", "c1"],
        &["clone", "create", "c1"],
        &[
            "clone",
            "create",
            "c1",
            "--base",
            "b",
            "--master",
            "m",
            "--certname",
            "c",
            "--bogus",
        ],
        &["clone", "start"],
        &["base", "create", "b1", "--os", "plan9"],
        &[],
    ] {
        let output = run(root.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = failure(&output);
        assert_eq!(error.kind, "usage", "{args:?}");
        assert!(error.causes.is_empty());
    }
    assert!(entries(root.path()).is_empty());
}

#[test]
fn help_and_version_print_normally() {
    let root = tempfile::tempdir().unwrap();
    let output = run(root.path(), &["--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("clone"));
    let output = run(root.path(), &["--version"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("clone-army "));
}

#[test]
fn bad_names_exit_2_and_create_nothing() {
    if !is_root() {
        eprintln!("skipped: needs root (the helper refuses to run otherwise)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    for (args, kind, field) in [
        (
            &[
                "clone",
                "create",
                "../x",
                "--base",
                "b",
                "--master",
                "m",
                "--certname",
                "c",
            ][..],
            "invalid-name",
            "name",
        ),
        (
            &[
                "clone",
                "create",
                "c1",
                "--base",
                "B",
                "--master",
                "m",
                "--certname",
                "c",
            ],
            "invalid-name",
            "base",
        ),
        (
            &[
                "clone",
                "create",
                "c1",
                "--base",
                "b",
                "--master",
                "m x",
                "--certname",
                "c",
            ],
            "invalid-argument",
            "master",
        ),
        // The providers put `--` before names.
        (
            &[
                "clone",
                "create",
                "--base",
                "b",
                "--master",
                "m",
                "--certname",
                "c",
                "--",
                "-x",
            ],
            "invalid-name",
            "name",
        ),
        (
            &["clone", "remove", "--", "ok", "x/y"],
            "invalid-name",
            "name",
        ),
        (&["clone", "start", "Upper"], "invalid-name", "name"),
        (
            &["clone", "configure", "a\nb", "--master", "m"],
            "invalid-name",
            "name",
        ),
        (&["base", "create", ""], "invalid-name", "name"),
        (&["base", "remove", "../etc"], "invalid-name", "name"),
    ] {
        let output = run(root.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = failure(&output);
        assert_eq!(error.kind, kind, "{args:?}");
        assert_eq!(error.field.as_deref(), Some(field), "{args:?}");
    }
    assert!(
        entries(root.path()).is_empty(),
        "{:?}",
        entries(root.path())
    );
}

#[test]
fn empty_root_lists_nothing_and_unknown_clones_are_not_found() {
    if !is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let output = run(root.path(), &["clone", "list"]);
    assert_eq!(output.status.code(), Some(0));
    let list: Envelope<CloneList> = envelope(&output);
    assert!(list.ok);
    assert!(list.result.unwrap().clones.is_empty());

    let output = run(root.path(), &["base", "list"]);
    assert_eq!(output.status.code(), Some(0));
    let list: Envelope<BaseList> = envelope(&output);
    assert!(list.result.unwrap().bases.is_empty());

    let output = run(root.path(), &["clone", "start", "nope"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(failure(&output).kind, "not-found");
}

#[test]
fn unreachable_systemd_is_a_systemd_error_naming_the_bus() {
    if !is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let unit_dir = root.path().join("etc/systemd/system");
    std::fs::create_dir_all(&unit_dir).unwrap();
    std::fs::write(
        unit_dir.join("var-lib-machines-c1.mount"),
        "# Managed by clone-army 0.0.0. Changes will be overwritten.\n[Mount]\nWhere=/var/lib/machines/c1\nOptions=lowerdir=/var/lib/puppet-clone-army/b,upperdir=/u,workdir=/w\n",
    )
    .unwrap();
    let output = run(root.path(), &["clone", "stop", "c1"]);
    assert_eq!(output.status.code(), Some(1));
    let error = failure(&output);
    assert_eq!(error.kind, "systemd");
    assert!(
        error.message.contains("/nonexistent/clone-army-test"),
        "{}",
        error.message
    );
}

#[test]
fn non_root_is_refused_for_every_verb() {
    // Drop to nobody with setpriv (util-linux) when we are root and have it.
    if !is_root() || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: needs root and setpriv");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    for args in [
        &["clone", "list"][..],
        &["base", "list"],
        &[
            "clone",
            "create",
            "c1",
            "--base",
            "b",
            "--master",
            "m",
            "--certname",
            "c",
        ],
        &["clone", "remove", "c1"],
        &["base", "create", "b1"],
    ] {
        let output = Command::new("/usr/bin/setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_clone-army"))
            .args(args)
            .env("CLONE_ARMY_ROOT", root.path())
            .output()
            .unwrap();
        if output.status.code() == Some(127) || output.status.code() == Some(126) {
            eprintln!("skipped: nobody cannot execute the test binary here");
            return;
        }
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let error = failure(&output);
        assert_eq!(error.kind, "not-root", "{args:?}");
        assert!(error.message.contains("root"));
    }
    assert!(entries(root.path()).is_empty());
}

#[test]
fn secrets_never_show_in_the_answer_or_on_stderr() {
    if !is_root() {
        eprintln!("skipped: needs root (the helper refuses to run otherwise)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let secrets = tempfile::tempdir().unwrap();
    let hash = secrets.path().join("hash");
    let password = secrets.path().join("password");
    std::fs::write(&hash, "$6$salt$SECRET-HASH:oops\n").unwrap();
    std::fs::write(&password, "SECRET-PASSWORD\n").unwrap();
    let output = run(
        root.path(),
        &[
            "clone",
            "create",
            "c1",
            "--base",
            "b",
            "--master",
            "puppet.example.com",
            "--certname",
            "c1.example.com",
            "--root-password-hash-file",
            hash.to_str().unwrap(),
            "--challenge-password-file",
            password.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stdout.contains("SECRET"), "{stdout}");
    assert!(!stderr.contains("SECRET"), "{stderr}");
    let error = failure(&output);
    assert_eq!(error.kind, "invalid-argument");
    assert_eq!(error.field.as_deref(), Some("root-password-hash-file"));
    assert!(error.message.contains(hash.to_str().unwrap()));
    assert!(entries(root.path()).is_empty());
}

#[test]
fn base_create_refuses_unbuildable_combinations_before_touching_disk() {
    if !is_root() {
        eprintln!("skipped: needs root (the helper refuses to run otherwise)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("etc")).unwrap();
    std::fs::write(
        root.path().join("etc/os-release"),
        "ID=debian\nVERSION_CODENAME=bookworm\n",
    )
    .unwrap();
    let before = entries(root.path());
    for (args, field) in [
        // No agent package in the distribution.
        (
            &["base", "create", "b1", "--os", "rocky", "--release", "9"][..],
            "puppet-source",
        ),
        (
            &[
                "base",
                "create",
                "b1",
                "--os",
                "rocky",
                "--release",
                "7",
                "--puppet-source",
                "openvox",
            ],
            "release",
        ),
        (
            &[
                "base",
                "create",
                "b1",
                "--os",
                "sles",
                "--release",
                "15.6",
                "--puppet-source",
                "puppet",
            ],
            "mirror",
        ),
        // PE without its primary server's CA: never an unverified download.
        (
            &[
                "base",
                "create",
                "b1",
                "--puppet-source",
                "pe",
                "--master",
                "pe.example.com",
            ],
            "pe-ca-cert",
        ),
        (
            &["base", "create", "b1", "--master", "pe.example.com"],
            "master",
        ),
    ] {
        let output = run(root.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = failure(&output);
        assert_eq!(error.kind, "invalid-argument", "{args:?}");
        assert_eq!(error.field.as_deref(), Some(field), "{args:?}");
    }
    assert_eq!(entries(root.path()), before);
}
