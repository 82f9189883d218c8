//! Bad input: every refused input leaves the host exactly as it was.
//!
//! For each input in the table, the whole `CLONE_ARMY_ROOT` tree (paths, file types,
//! modes, content hashes, symlink targets) is snapshot before and after running the
//! binary; the test asserts it is unchanged, the exit code is non-zero, and the one JSON
//! document names the kind, the field and what is allowed (or, for a command line the
//! parser refuses, the one line on stderr does).

mod common;

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use clone_army::protocol::answers::Envelope;

/// One entry of the tree: what it is, its mode, and its content (hashed) or target.
#[derive(Debug, PartialEq, Eq)]
enum Node {
    Dir { mode: u32 },
    File { mode: u32, len: u64, hash: u64 },
    Symlink { target: PathBuf },
    Other { mode: u32 },
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Node> {
    let mut tree = BTreeMap::new();
    walk(root, root, &mut tree);
    tree
}

fn walk(root: &Path, path: &Path, tree: &mut BTreeMap<PathBuf, Node>) {
    let meta = fs::symlink_metadata(path).unwrap();
    let mode = meta.mode() & 0o7777;
    let relative = path.strip_prefix(root).unwrap().to_owned();
    let node = if meta.file_type().is_symlink() {
        Node::Symlink {
            target: fs::read_link(path).unwrap(),
        }
    } else if meta.is_dir() {
        let mut children: Vec<PathBuf> = fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        children.sort();
        for child in children {
            walk(root, &child, tree);
        }
        Node::Dir { mode }
    } else if meta.is_file() {
        let mut hasher = DefaultHasher::new();
        fs::read(path).unwrap().hash(&mut hasher);
        Node::File {
            mode,
            len: meta.len(),
            hash: hasher.finish(),
        }
    } else {
        Node::Other { mode }
    };
    tree.insert(relative, node);
}

fn write(root: &Path, path: &str, content: &str, mode: u32) {
    let path = root.join(path.trim_start_matches('/'));
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, content).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A host with one base (`debian-12`) and one clone (`c1`) on it, as the helper leaves them.
fn populated_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::set_permissions(root, fs::Permissions::from_mode(0o755)).unwrap();
    write(
        root,
        "/var/lib/puppet-clone-army/debian-12/etc/clone-army/base.json",
        r#"{"name":"debian-12","os":"debian","release":"bookworm","mirror":"http://deb.debian.org/debian","puppet_source":"distro","puppet_confdir":"/etc/puppet","created_at":"2026-11-22T03:30:00Z","builder":"debootstrap"}"#,
        0o644,
    );
    write(
        root,
        "/var/lib/puppet-clone-army/debian-12/etc/puppet/puppet.conf",
        "[main]\n",
        0o644,
    );
    write(
        root,
        "/var/lib/puppet-clone-army/c1-overlay/etc/puppet/puppet.conf",
        "[main]\nserver = puppet.example.com\ncertname = c1.load.example.com\n",
        0o644,
    );
    fs::create_dir_all(root.join("var/lib/puppet-clone-army/c1-workdir")).unwrap();
    // A removed clone's kept SSL directory, which a refused `ssl forget` leaves alone.
    write(
        root,
        "/var/lib/puppet-clone-army/.ssl/c1.load.example.com/certs/c1.load.example.com.pem",
        "cert\n",
        0o644,
    );
    // An apply source, for the refusal of --apply-source outside apply mode: 0755 all the
    // way down whatever the umask, as a source must be.
    for dir in ["srv", "srv/apply", "srv/apply/manifests"] {
        fs::create_dir_all(root.join(dir)).unwrap();
        fs::set_permissions(root.join(dir), fs::Permissions::from_mode(0o755)).unwrap();
    }
    fs::create_dir_all(root.join("var/lib/machines/c1")).unwrap();
    write(
        root,
        "/etc/systemd/system/var-lib-machines-c1.mount",
        "# Managed by clone-army 0.1.0. Changes will be overwritten.\n[Mount]\n\
         What=overlay\nWhere=/var/lib/machines/c1\nType=overlay\n\
         Options=lowerdir=/var/lib/puppet-clone-army/debian-12,\
         upperdir=/var/lib/puppet-clone-army/c1-overlay,\
         workdir=/var/lib/puppet-clone-army/c1-workdir\n",
        0o644,
    );
    write(
        root,
        "/etc/systemd/system/puppet-clone-army@.service",
        "# Managed by clone-army 0.1.0. Changes will be overwritten.\n[Service]\n",
        0o644,
    );
    let wants = root.join("etc/systemd/system/puppet-clone-army.target.wants");
    fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(
        "/etc/systemd/system/puppet-clone-army@.service",
        wants.join("puppet-clone-army@c1.service"),
    )
    .unwrap();
    write(
        root,
        "/proc/self/mountinfo",
        "22 1 8:1 / / rw - ext4 /dev/vda rw\n",
        0o444,
    );
    dir
}

use common::run_in as run;

/// What a refusal must say.
struct Expect {
    /// The envelope's kind, or [`PARSER`].
    kind: &'static str,
    exit: i32,
    field: Option<&'static str>,
    /// Each must appear in the message: the field and what is allowed.
    mentions: Vec<&'static str>,
}

/// Refused by the parser: no verb ran, so no envelope; one line on stderr instead.
const PARSER: &str = "(the parser's refusal)";

const NAME_ALLOWED: &str = "allowed: 1 to 64 characters of a-z, 0-9 and '-'";
const HOSTNAME_ALLOWED: &str = "allowed: a hostname";

fn bad_name(field: &'static str) -> Expect {
    Expect {
        kind: "invalid-name",
        exit: 2,
        field: Some(field),
        mentions: vec![NAME_ALLOWED],
    }
}

fn bad_hostname(field: &'static str) -> Expect {
    Expect {
        kind: "invalid-argument",
        exit: 2,
        field: Some(field),
        mentions: vec![HOSTNAME_ALLOWED],
    }
}

fn table() -> Vec<(Vec<String>, Expect)> {
    let long_name = "a".repeat(65);
    let long_host = [
        "a".repeat(63),
        "a".repeat(63),
        "a".repeat(63),
        "a".repeat(62),
    ]
    .join(".");
    assert_eq!(long_host.len(), 254);
    let names = ["../x", "x/y", "a\nb", "A", long_name.as_str(), "", "-x"];
    let servers = ["a b", "http://x", "x;y", long_host.as_str()];
    let strings = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let mut table = Vec::new();
    for name in names {
        // The providers put `--` before names.
        table.push((
            strings(&[
                "clone",
                "create",
                "--base",
                "debian-12",
                "--server",
                "puppet.example.com",
                "--certname",
                "c2.load.example.com",
                "--",
                name,
            ]),
            bad_name("name"),
        ));
        // `--flag=value`, so that a value starting with '-' reaches the validator.
        let base_flag = format!("--base={name}");
        table.push((
            strings(&[
                "clone",
                "create",
                "c2",
                &base_flag,
                "--server",
                "puppet.example.com",
                "--certname",
                "c2.load.example.com",
            ]),
            bad_name("base"),
        ));
        table.push((strings(&["base", "create", "--", name]), bad_name("name")));
        table.push((strings(&["base", "remove", "--", name]), bad_name("name")));
        table.push((
            strings(&["clone", "remove", "--", "c1", name]),
            bad_name("name"),
        ));
        table.push((strings(&["clone", "stop", "--", name]), bad_name("name")));
        table.push((
            strings(&[
                "clone",
                "configure",
                "--server",
                "m.example.com",
                "--",
                name,
            ]),
            bad_name("name"),
        ));
        let clone_flag = format!("--clone={name}");
        table.push((
            strings(&["exec", &clone_flag, "--", "true"]),
            bad_name("clone"),
        ));
    }
    for server in servers {
        table.push((
            strings(&[
                "clone",
                "create",
                "c2",
                "--base",
                "debian-12",
                "--server",
                server,
                "--certname",
                "c2.load.example.com",
            ]),
            bad_hostname("server"),
        ));
        table.push((
            strings(&[
                "clone",
                "create",
                "c2",
                "--base",
                "debian-12",
                "--server",
                "puppet.example.com",
                "--certname",
                server,
            ]),
            bad_hostname("certname"),
        ));
        table.push((
            strings(&["clone", "configure", "c1", "--server", server]),
            bad_hostname("server"),
        ));
        // Checked before the lock: no SSL directory is removed, and no lock file made.
        table.push((
            strings(&["ssl", "forget", "--", "c1.load.example.com", server]),
            bad_hostname("certname"),
        ));
    }
    for dots in ["..", "."] {
        table.push((
            strings(&["ssl", "forget", "--", dots]),
            bad_hostname("certname"),
        ));
    }
    table.push((
        strings(&[
            "clone",
            "create",
            "c2",
            "--base",
            "nope",
            "--server",
            "puppet.example.com",
            "--certname",
            "c2.load.example.com",
        ]),
        Expect {
            kind: "not-found",
            exit: 1,
            field: Some("base"),
            mentions: vec!["\"nope\"", "allowed for base: debian-12"],
        },
    ));
    for (args, flag) in [
        (
            &[
                "clone",
                "create",
                "c2",
                "--base",
                "debian-12",
                "--server",
                "m",
                "--certname",
                "c",
                "--bogus",
            ][..],
            "'--bogus'",
        ),
        (&["clone", "list", "--force"], "'--force'"),
        (&["base", "remove", "-f", "debian-12"], "'-f'"),
        (
            &["exec", "--all", "--parallel", "3", "--", "true"],
            "'--parallel'",
        ),
    ] {
        table.push((
            strings(args),
            Expect {
                kind: PARSER,
                exit: 2,
                field: None,
                // The unknown flag, and the verb whose --help lists the flags it takes.
                mentions: vec![flag, "see 'clone-army "],
            },
        ));
    }
    table.push((
        strings(&["base", "create", "debian-13", "--os", "windows"]),
        Expect {
            kind: PARSER,
            exit: 2,
            field: None,
            mentions: vec![
                "'--os <OS>'",
                "[possible values: debian, ubuntu, rhel, rocky, almalinux, centos, sles, opensuse]",
            ],
        },
    ));
    table.push((
        strings(&["exec", "--all", "--concurrency", "0", "--", "true"]),
        Expect {
            kind: "invalid-argument",
            exit: 2,
            field: Some("concurrency"),
            mentions: vec!["concurrency \"0\"", "1 to 1000"],
        },
    ));
    table.push((
        strings(&["exec", "--all", "--timeout", "0", "--", "true"]),
        Expect {
            kind: "invalid-argument",
            exit: 2,
            field: Some("timeout"),
            mentions: vec!["timeout \"0\"", "1 to 86400"],
        },
    ));
    // A ramp-up past its bound is refused before any clone starts: the helper sleeps
    // through a ramp holding the lock, so an unbounded one would hold off every other verb.
    table.push((
        strings(&["clone", "start", "--ramp-up", "86401", "--", "c1"]),
        Expect {
            kind: "invalid-argument",
            exit: 2,
            field: Some("ramp-up"),
            mentions: vec!["ramp-up \"86401\"", "0 to 86400"],
        },
    ));
    // Load-shape flags: each refused on create and on configure, naming the flag and
    // what is allowed, before the lock or any file is touched.
    let bad_facts = "/nonexistent/facts.json";
    for (flag_args, field, allowed) in [
        (
            &["--runinterval", "59"][..],
            "runinterval",
            "allowed: 60 to 604800",
        ),
        (&["--splay", "604801"], "splay", "allowed: 0 to 604800"),
        (
            &["--phase-index", "4", "--phase-count", "4"],
            "phase-index",
            "allowed: 0 to 3",
        ),
        (
            &["--phase-index", "0", "--phase-count", "0"],
            "phase-count",
            "allowed: 1 to",
        ),
        (
            &["--memory-max", "512MB"],
            "memory-max",
            "allowed: a positive number of bytes",
        ),
        (
            &["--memory-max=1G\nExecStart=/bin/sh"],
            "memory-max",
            "allowed: ",
        ),
        (
            &["--cpu-quota", "50"],
            "cpu-quota",
            "allowed: 1% to 100000%",
        ),
        (&["--tasks-max", "0"], "tasks-max", "allowed: 1 to 4194304"),
        (&["--facts-file", bad_facts], "facts-file", "cannot read it"),
        (
            &["--generated-facts", "10000"],
            "generated-facts",
            "allowed: 0 to 9999",
        ),
        (
            &["--churn-percent", "101"],
            "churn-percent",
            "allowed: 0 to 100",
        ),
        (
            &["--run-mode", "apply", "--apply-source", "/no/such/dir"],
            "apply-source",
            "no such directory",
        ),
        (
            &["--apply-source", "/srv/apply"],
            "apply-source",
            "only for run mode apply",
        ),
    ] {
        let mut create = strings(&[
            "clone",
            "create",
            "c2",
            "--base",
            "debian-12",
            "--server",
            "puppet.example.com",
            "--certname",
            "c2.load.example.com",
        ]);
        create.extend(strings(flag_args));
        let mut configure = strings(&["clone", "configure", "c1"]);
        configure.extend(strings(flag_args));
        for args in [create, configure] {
            table.push((
                args,
                Expect {
                    kind: "invalid-argument",
                    exit: 2,
                    field: Some(field),
                    mentions: vec![allowed],
                },
            ));
        }
    }
    table.push((
        strings(&[
            "clone",
            "create",
            "c2",
            "--base",
            "debian-12",
            "--certname",
            "c2.load.example.com",
        ]),
        Expect {
            kind: "invalid-argument",
            exit: 2,
            field: Some("server"),
            mentions: vec!["required unless --run-mode apply"],
        },
    ));
    table.push((
        strings(&["clone", "configure", "c1", "--run-mode", "cron"]),
        Expect {
            kind: PARSER,
            exit: 2,
            field: None,
            mentions: vec!["[possible values: daemon, timer, manual, apply]"],
        },
    ));
    // A ramp is refused before it starts a clone or writes its baseline.
    let ramp = |extra: &[&str]| {
        let mut args = strings(&["ramp", "run", "--output", "/nonexistent/ramp.json"]);
        args.extend(strings(extra));
        args
    };
    for (extra, field, allowed) in [
        (
            &["--step", "0", "--max-p95", "30"][..],
            "step",
            "a step adds at least one clone",
        ),
        (
            &["--step", "10"][..],
            "bounds",
            "give at least one of --max-p95, --max-error-rate, --max-jruby-wait, --min-throughput",
        ),
        (
            &["--step", "10", "--min-throughput", "0"][..],
            "min-throughput",
            "a percentage above 0, up to 100",
        ),
        (
            &["--step", "10", "--max-error-rate", "150"][..],
            "max-error-rate",
            "a percentage from 0 up to (not including) 100",
        ),
        (
            &[
                "--step",
                "10",
                "--interval",
                "120",
                "--hold",
                "60",
                "--max-p95",
                "30",
            ][..],
            "hold",
            "at least the run interval (120 s)",
        ),
        (
            &["--step", "10", "--max-jruby-wait", "100"][..],
            "max-jruby-wait",
            "give --server too",
        ),
        (
            &["--step", "10", "--max-p95", "30", "--resolution", "0%"][..],
            "resolution",
            "clones (1 or more, e.g. 5) or a share of the level",
        ),
        (
            &["--step", "10", "--max-p95", "30", "--start-at", "soon"][..],
            "start-at",
            "an RFC 3339 time",
        ),
        (
            &["--step", "10", "--max-p95", "30", "--start-at", "1"][..],
            "start-at",
            "every load host must start before the first step",
        ),
        (
            &["--step", "10", "--max-p95", "30", "--repeat", "0"][..],
            "repeat",
            "1 to 10 windows a step",
        ),
        (
            &["--step", "10", "--max-queue-limit-hits", "0"][..],
            "max-queue-limit-hits",
            "give --server too",
        ),
        (
            &["--step", "10", "--max-borrow-timeouts", "0"][..],
            "max-borrow-timeouts",
            "give --server too",
        ),
        (
            &["--step", "10", "--max-puppetdb-queue", "100"][..],
            "max-puppetdb-queue",
            "give --puppetdb too",
        ),
        (
            &[
                "--step",
                "10",
                "--interval",
                "120",
                "--max-hold",
                "60",
                "--max-p95",
                "30",
            ][..],
            "max-hold",
            "at least the hold (120 s)",
        ),
        (
            &["--step", "10", "--max-p95", "30", "--load-host-cpus", "3-1"][..],
            "load-host-cpus",
            "a CPU list: CPU numbers 0 to 1023 and ranges of them",
        ),
        (
            &[
                "--step",
                "10",
                "--puppetdb",
                "puppet",
                "--max-puppetdb-queue=-1",
            ][..],
            "max-puppetdb-queue",
            "commands waiting, 0 or more",
        ),
        (
            &[
                "--step",
                "10",
                "--max-p95",
                "30",
                "--load-host-cpus",
                "1,1024",
            ][..],
            "load-host-cpus",
            "a CPU list: CPU numbers 0 to 1023 and ranges of them",
        ),
        (
            &[
                "--step",
                "10",
                "--max-p95",
                "30",
                "--access-log",
                "/dev/null",
            ][..],
            "access-log",
            "a character device",
        ),
    ] {
        table.push((
            ramp(extra),
            Expect {
                kind: "invalid-argument",
                exit: 2,
                field: Some(field),
                mentions: vec![allowed],
            },
        ));
    }
    table.push((
        strings(&[
            "record",
            "--output",
            "/nonexistent/timeline.jsonl",
            "--access-log",
            "/dev/null",
        ]),
        Expect {
            kind: "invalid-argument",
            exit: 2,
            field: Some("access-log"),
            mentions: vec!["a character device"],
        },
    ));
    // A group key is refused before anything is looked at: the timeline's directory
    // does not even exist.
    for key in [
        "pp_authorization",
        "pp_preshared_key",
        "1.3.6.1.4.1.34380.1.2.x",
        "role",
    ] {
        table.push((
            strings(&[
                "record",
                "--output",
                "/nonexistent/timeline.jsonl",
                "--group-by",
                key,
            ]),
            Expect {
                kind: "invalid-argument",
                exit: 2,
                field: Some("group-by"),
                mentions: vec!["allowed: node, environment, a trusted extension"],
            },
        ));
    }
    table
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn refused_inputs_change_nothing_and_say_what_is_allowed() {
    common::require_root();
    let dir = populated_root();
    let before = snapshot(dir.path());
    assert!(before.len() > 20, "{before:#?}");
    for (args, expect) in table() {
        let output = run(
            dir.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let case = format!("{args:?}");
        assert_eq!(output.status.code(), Some(expect.exit), "{case}");
        if expect.kind == PARSER {
            let line = common::refused_by_parser(&output);
            for mention in &expect.mentions {
                assert!(line.contains(mention), "{case}: {line:?} lacks {mention:?}");
            }
            assert_eq!(snapshot(dir.path()), before, "{case} changed the tree");
            continue;
        }
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "{case}: {stdout:?}");
        let envelope: Envelope<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
        assert_eq!(envelope.protocol, 2);
        assert!(!envelope.ok && envelope.result.is_none(), "{case}");
        let error = envelope.error.expect("error body");
        assert_eq!(error.kind, expect.kind, "{case}: {}", error.message);
        assert_eq!(error.field.as_deref(), expect.field, "{case}");
        if let Some(field) = expect.field {
            assert!(error.message.contains(field), "{case}: {}", error.message);
        }
        for mention in &expect.mentions {
            assert!(
                error.message.contains(mention),
                "{case}: {:?} lacks {mention:?}",
                error.message
            );
        }
        assert_eq!(snapshot(dir.path()), before, "{case} changed the tree");
    }
}
