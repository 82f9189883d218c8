//! What the binary tests that run the helper end to end share: a fresh root, the
//! file-backed fake systemd and a stand-in `debootstrap` on PATH (see tests/faults.rs).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Fails the test when not run as root. The tests that call it are `#[ignore]`d with the
/// reason, so a plain `cargo test` lists them as ignored rather than passing them empty;
/// `make test` runs them as root with `--include-ignored`.
pub fn require_root() {
    assert!(
        is_root(),
        "this test needs root: run it as root with `cargo test -- --include-ignored`"
    );
}

const STAND_IN_DEBOOTSTRAP: &str = r#"#!/bin/sh
# Stand-in for debootstrap: `debootstrap --variant=minbase --include=.. --components=..
# --keyring=.. --force-check-gpg RELEASE TARGET MIRROR`; makes the few files the
# finishing step and the clones need.
set -eu
case " $* " in *" --force-check-gpg "*) ;; *) echo "stand-in debootstrap: unverified build: $*" >&2; exit 2 ;; esac
target=$7
case "$target" in /*) ;; *) echo "stand-in debootstrap: no target in $*" >&2; exit 2 ;; esac
sleep "${STAND_IN_DEBOOTSTRAP_SLEEP:-0}"
mkdir -p "$target/etc/puppet" "$target/lib/systemd/system" "$target/etc/systemd/system" \
         "$target/var/lib/puppet/ssl/certs" "$target/usr/bin" "$target/var/cache/puppet/public"
printf 'root:$6$salt$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n' > "$target/etc/shadow"
chmod 0640 "$target/etc/shadow"
printf '[main]\nssldir = /var/lib/puppet/ssl\n' > "$target/etc/puppet/puppet.conf"
printf 'base\n' > "$target/etc/hostname"
printf 'secret\n' > "$target/var/lib/puppet/ssl/certs/build.pem"
printf '[Unit]\nDescription=Puppet agent\n[Service]\nExecStart=/usr/bin/puppet agent --no-daemonize\n[Install]\nWantedBy=multi-user.target\n' \
  > "$target/lib/systemd/system/puppet.service"
printf '#!/bin/sh\n' > "$target/usr/bin/puppet"
chmod 0755 "$target/usr/bin/puppet"
"#;

/// The helper with `root` as its root (`CLONE_ARMY_ROOT`), never reaching a real bus and
/// never killed by a fault hook it inherited.
pub fn helper_in(root: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_clone-army"));
    command
        .env("CLONE_ARMY_ROOT", root)
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            "unix:path=/nonexistent/clone-army-test",
        )
        .env_remove("CLONE_ARMY_FAULT_AFTER");
    command
}

/// Runs the helper with `args` in `root`, whatever its exit.
pub fn run_in(root: &Path, args: &[&str]) -> Output {
    helper_in(root).args(args).output().expect("run clone-army")
}

/// A command line the parser refused: exit 2, nothing on stdout, and exactly one line on
/// stderr (clap's error and the `--help` to read), which is returned.
pub fn refused_by_parser(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.ends_with('\n'), "{stderr:?}");
    assert!(stderr.starts_with("clone-army: "), "{stderr:?}");
    assert!(stderr.contains(" --help'"), "{stderr:?}");
    stderr.trim_end().to_owned()
}

/// A fresh root, a fake systemd and a PATH with the stand-in debootstrap.
pub struct Scene {
    pub root: tempfile::TempDir,
    pub aside: tempfile::TempDir,
}

impl Scene {
    pub fn new() -> Self {
        let aside = tempfile::tempdir().unwrap();
        let bin = aside.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let script = bin.join("debootstrap");
        std::fs::write(&script, STAND_IN_DEBOOTSTRAP).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let root = tempfile::tempdir().unwrap();
        // The archive keyring a Debian base is verified with, as debian-archive-keyring
        // installs it.
        let keyrings = root.path().join("usr/share/keyrings");
        std::fs::create_dir_all(&keyrings).unwrap();
        std::fs::write(keyrings.join("debian-archive-keyring.gpg"), "keys").unwrap();
        Scene { root, aside }
    }

    pub fn systemd_file(&self) -> PathBuf {
        self.aside.path().join("systemd.json")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let path = format!(
            "{}:{}",
            self.aside.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = helper_in(self.root.path());
        command
            .args(args)
            .env(
                "CLONE_ARMY_SYSTEMD",
                format!("fake:{}", self.systemd_file().display()),
            )
            .env("PATH", path);
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        let output = self.command(args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Runs with the fault hook and checks the helper died by SIGKILL at that step.
    pub fn run_killed_after(&self, step: &str, args: &[&str]) {
        let output = self
            .command(args)
            .env("CLONE_ARMY_FAULT_AFTER", step)
            .output()
            .unwrap();
        assert_eq!(
            output.status.signal(),
            Some(9),
            "{step}: not killed there: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        // Killed before it answered: nothing on stdout.
        assert!(output.stdout.is_empty(), "{step}");
    }

    pub fn base_create(&self) -> Vec<&'static str> {
        vec![
            "base",
            "create",
            "b1",
            "--os",
            "debian",
            "--release",
            "bookworm",
            "--mirror",
            "http://deb.example.org/debian",
        ]
    }

    pub fn clone_create(&self) -> Vec<&'static str> {
        vec![
            "clone",
            "create",
            "c1",
            "--base",
            "b1",
            "--server",
            "puppet.example.com",
            "--certname",
            "c1.example.com",
            "--memory-max",
            "512M",
            "--start",
        ]
    }

    pub fn tree(&self) -> BTreeMap<String, String> {
        snapshot(self.root.path())
    }

    pub fn base_names(&self) -> Vec<String> {
        let output = self.run(&["base", "list"]);
        let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        answer["result"]["bases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// Every entry under `root`: kind, mode and content (files), target (links). The base's
/// `created_at` and its update stamps' `TIMESTAMP_NSEC` (the time its `/usr` was made)
/// differ between two clean runs, and so does a build log's text (it names the scratch
/// root and what the commands printed): of a log, only its place and mode count.
pub fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let description = if meta.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("dir {mode:o}")
            } else if relative.starts_with("var/log/clone-army/") {
                format!("log {mode:o}")
            } else {
                let mut content =
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                let varies: Option<fn(&str) -> bool> = if relative.ends_with("base.json") {
                    Some(|l| l.contains("\"created_at\""))
                } else if relative.ends_with("/.updated") {
                    Some(|l| l.starts_with("TIMESTAMP_NSEC="))
                } else {
                    None
                };
                if let Some(varies) = varies {
                    content = content
                        .lines()
                        .filter(|l| !varies(l))
                        .collect::<Vec<_>>()
                        .join("\n");
                }
                format!("file {mode:o} {content:?}")
            };
            out.insert(relative, description);
        }
    }
    out
}
