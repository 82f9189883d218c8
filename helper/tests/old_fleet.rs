//! A host that runs a fleet of sharpie-clone_army 0.2.1: the first `clone create` replaces
//! it, step by step, with the file-backed fake systemd, keeping the old data; a second
//! call changes nothing.

mod common;

use std::path::Path;

use clone_army::sys::faults;
use common::Scene;

const ASIDE: &str = "var/lib/puppet-clone-army/sharpie-clone_army-0.2.1";

/// What 0.2.1's manifests write, exactly.
const OLD_TARGET: &str = "[Unit]
Description=Puppet Clone Army Containers
PartOf=machines.target
Before=machines.target

[Install]
WantedBy=machines.target
";

const OLD_TEMPLATE: &str = "[Unit]
Description=Puppet Agent Clone Army %I
Documentation=man:systemd-nspawn(1)
PartOf=puppet-clone-army.target
Before=puppet-clone-army.target
RequiresMountsFor=/var/lib/machines/%I

[Service]
ExecStart=/usr/bin/systemd-nspawn \\
  --quiet \\
  --keep-unit \\
  --boot \\
  --link-journal=try-guest \\
  --machine=%I
KillMode=mixed
Type=notify
RestartForceExitStatus=133
SuccessExitStatus=133
Slice=machine.slice
Delegate=yes

[Install]
WantedBy=puppet-clone-army.target
";

fn old_mount(clone: &str) -> String {
    format!(
        "[Unit]
PartOf=puppet-clone-army@{clone}.service
Before=puppet-clone-army@{clone}.service

[Mount]
What=overlay
Where=/var/lib/machines/{clone}
Type=overlay
Options=lowerdir=/var/lib/puppet-clone-army/el-7,upperdir=/var/lib/puppet-clone-army/{clone}-overlay,workdir=/var/lib/puppet-clone-army/{clone}-workdir

[Install]
RequiredBy=puppet-clone-army@{clone}.service
"
    )
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn link(root: &Path, path: &str, target: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, path).unwrap();
}

/// A base of ours (b1), then the old fleet (clone1, clone2) beside it, running.
fn old_fleet() -> Scene {
    let scene = Scene::new();
    scene.run(&scene.base_create());
    let root = scene.root.path();
    let units = "etc/systemd/system";
    write(
        root,
        &format!("{units}/puppet-clone-army.target"),
        OLD_TARGET,
    );
    write(
        root,
        &format!("{units}/puppet-clone-army@.service"),
        OLD_TEMPLATE,
    );
    link(
        root,
        &format!("{units}/machines.target.wants/puppet-clone-army.target"),
        "/etc/systemd/system/puppet-clone-army.target",
    );
    write(
        root,
        "var/lib/puppet-clone-army/el-7/etc/redhat-release",
        "CentOS Linux release 7\n",
    );
    let mut states = serde_json::Map::new();
    for clone in ["clone1", "clone2"] {
        let unit = format!("var-lib-machines-{clone}.mount");
        write(root, &format!("{units}/{unit}"), &old_mount(clone));
        link(
            root,
            &format!("{units}/puppet-clone-army@{clone}.service.requires/{unit}"),
            &format!("/etc/systemd/system/{unit}"),
        );
        write(
            root,
            &format!("var/lib/puppet-clone-army/{clone}-overlay/etc/hostname"),
            &format!("{clone}.host.example.com\n"),
        );
        std::fs::create_dir_all(
            root.join(format!("var/lib/puppet-clone-army/{clone}-workdir/work")),
        )
        .unwrap();
        std::fs::create_dir_all(root.join(format!("var/lib/machines/{clone}"))).unwrap();
        states.insert(
            format!("puppet-clone-army@{clone}.service"),
            "active".into(),
        );
        states.insert(unit, "active".into());
    }
    write(
        root,
        "var/lib/puppet-clone-army/clone1-overlay/root/notes.txt",
        "mine\n",
    );
    // clone1's PE agent had its certificate; clone2 never got one.
    write(
        root,
        "var/lib/puppet-clone-army/clone1-overlay/etc/puppetlabs/puppet/ssl/certs/clone1.host.example.com.pem",
        "CERT\n",
    );
    let state = serde_json::json!({ "states": states, "calls": [] });
    std::fs::write(scene.systemd_file(), state.to_string()).unwrap();
    scene
}

fn create(scene: &Scene, clone: &str) -> serde_json::Value {
    let certname = format!("{clone}.host.example.com");
    let output = scene.run(&[
        "clone",
        "create",
        clone,
        "--base",
        "b1",
        "--server",
        "puppet.example.com",
        "--certname",
        &certname,
    ]);
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The fake systemd's calls that act (its `unit_states` reads left out).
fn calls(scene: &Scene) -> Vec<String> {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(scene.systemd_file()).unwrap()).unwrap();
    state["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .filter(|c| !c.starts_with("unit_states "))
        .collect()
}

fn warnings(answer: &serde_json::Value) -> Vec<String> {
    answer["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn the_first_create_replaces_an_old_fleet_keeping_its_data_and_a_second_changes_nothing() {
    common::require_root();
    let scene = old_fleet();
    let root = scene.root.path();
    let answer = create(&scene, "clone1");
    assert_eq!(answer["ok"], true, "{answer}");

    // The steps, in order: both services stopped, then both mounts, failures reset, one
    // daemon-reload for the migration (and the create's own afterwards).
    let calls = calls(&scene);
    let migration: Vec<&str> = calls.iter().map(String::as_str).take(9).collect();
    assert_eq!(
        migration,
        [
            "stop_unit puppet-clone-army@clone1.service",
            "stop_unit puppet-clone-army@clone2.service",
            "stop_unit var-lib-machines-clone1.mount",
            "stop_unit var-lib-machines-clone2.mount",
            "reset_failed_unit puppet-clone-army@clone1.service",
            "reset_failed_unit puppet-clone-army@clone2.service",
            "reset_failed_unit var-lib-machines-clone1.mount",
            "reset_failed_unit var-lib-machines-clone2.mount",
            "daemon_reload",
        ],
        "{calls:?}"
    );
    assert!(
        !calls[9..].iter().any(|c| c.starts_with("stop_unit")),
        "{calls:?}"
    );

    // Every step said in the answer.
    let said = warnings(&answer).join("\n");
    for expected in [
        "found units of sharpie-clone_army 0.2.1 (clones: clone1, clone2)",
        "stopped the clones of sharpie-clone_army 0.2.1",
        "moved /var/lib/puppet-clone-army/clone1-overlay to /var/lib/puppet-clone-army/sharpie-clone_army-0.2.1/clone1-overlay",
        "moved /var/lib/puppet-clone-army/clone2-workdir to /var/lib/puppet-clone-army/sharpie-clone_army-0.2.1/clone2-workdir",
        "moved /var/lib/puppet-clone-army/el-7 to /var/lib/puppet-clone-army/sharpie-clone_army-0.2.1/el-7",
        "puppetserver ca clean --certname clone2.host.example.com",
        "kept the certificate and key of clone clone1 of sharpie-clone_army 0.2.1 as /var/lib/puppet-clone-army/.ssl/clone1.host.example.com",
        "removed the mount unit var-lib-machines-clone2.mount of sharpie-clone_army 0.2.1 (kept as /var/lib/puppet-clone-army/sharpie-clone_army-0.2.1/units/var-lib-machines-clone2.mount)",
        "replaced /etc/systemd/system/puppet-clone-army@.service of sharpie-clone_army 0.2.1",
        "replaced /etc/systemd/system/puppet-clone-army.target of sharpie-clone_army 0.2.1",
    ] {
        assert!(said.contains(expected), "missing {expected:?} in:\n{said}");
    }

    // The old data, renamed whole; the old units kept as they were.
    let aside = root.join(ASIDE);
    assert_eq!(
        std::fs::read_to_string(aside.join("clone1-overlay/root/notes.txt")).unwrap(),
        "mine\n"
    );
    assert!(aside.join("clone2-overlay/etc/hostname").is_file());
    // clone1's certificate is the new clone1's; no `ca clean` is asked for it.
    assert_eq!(
        std::fs::read_to_string(
            root.join("var/lib/puppet-clone-army/.ssl/clone1.host.example.com/certs/clone1.host.example.com.pem")
        )
        .unwrap(),
        "CERT\n"
    );
    assert!(!aside
        .join("clone1-overlay/etc/puppetlabs/puppet/ssl")
        .exists());
    assert!(
        !said.contains("--certname clone1.host.example.com"),
        "{said}"
    );
    assert!(aside.join("clone1-workdir/work").is_dir());
    assert!(aside.join("el-7/etc/redhat-release").is_file());
    let kept = |unit: &str| std::fs::read_to_string(aside.join("units").join(unit)).unwrap();
    assert_eq!(kept("var-lib-machines-clone2.mount"), old_mount("clone2"));
    assert_eq!(kept("puppet-clone-army@.service"), OLD_TEMPLATE);
    assert_eq!(kept("puppet-clone-army.target"), OLD_TARGET);

    // The old units, links and mount points gone; this fleet's units in their place.
    let units = root.join("etc/systemd/system");
    for gone in [
        "var-lib-machines-clone2.mount",
        "puppet-clone-army@clone1.service.requires",
        "puppet-clone-army@clone2.service.requires",
        "machines.target.wants/puppet-clone-army.target",
    ] {
        assert!(
            std::fs::symlink_metadata(units.join(gone)).is_err(),
            "{gone}"
        );
    }
    assert!(!root.join("var/lib/machines/clone2").exists());
    assert!(!root.join("var/lib/puppet-clone-army/el-7").exists());
    for ours in [
        "puppet-clone-army@.service",
        "puppet-clone-army.target",
        "var-lib-machines-clone1.mount",
    ] {
        let text = std::fs::read_to_string(units.join(ours)).unwrap();
        assert!(
            text.starts_with("# Managed by clone-army "),
            "{ours}: {text}"
        );
    }
    // The new clone1 starts from a fresh upper layer.
    assert!(!root
        .join("var/lib/puppet-clone-army/clone1-overlay/root/notes.txt")
        .exists());
    assert_eq!(answer["result"]["clone"]["name"], "clone1");

    // Again: nothing of the old fleet is left to do, nothing changes.
    let before = scene.tree();
    let calls_before = self::calls(&scene).len();
    let again = create(&scene, "clone1");
    assert_eq!(again["result"]["changed"], false, "{again}");
    assert!(
        !warnings(&again).iter().any(|w| w.contains("0.2.1")),
        "{again}"
    );
    assert_eq!(scene.tree(), before);
    let calls_after = self::calls(&scene);
    assert!(
        !calls_after[calls_before..]
            .iter()
            .any(|c| c.starts_with("stop_unit")),
        "{calls_after:?}"
    );
    // And the other clone is created on the same ground.
    let second = create(&scene, "clone2");
    assert!(
        !warnings(&second).iter().any(|w| w.contains("0.2.1")),
        "{second}"
    );
    assert_eq!(second["result"]["clone"]["name"], "clone2");
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn an_old_clone_still_mounted_or_a_taken_name_aside_moves_nothing() {
    common::require_root();
    let scene = old_fleet();
    let root = scene.root.path();
    // The unmount did not happen: the overlay is still in the mount table.
    write(
        root,
        "proc/self/mountinfo",
        "60 22 0:50 / /var/lib/machines/clone2 rw - overlay overlay rw,lowerdir=/var/lib/puppet-clone-army/el-7\n",
    );
    let before = scene.tree();
    let output = scene
        .command(&[
            "clone",
            "create",
            "clone1",
            "--base",
            "b1",
            "--server",
            "p.example.com",
            "--certname",
            "clone1.example.com",
        ])
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["error"]["kind"], "still-mounted", "{answer}");
    let mut after = scene.tree();
    // The daemon-reload marker stays for the next call; nothing else changed.
    after.remove("var/lib/puppet-clone-army/.daemon-reload-pending");
    assert_eq!(after, before);

    // Unmounted now, but a name in the aside dir is taken by an earlier migration.
    std::fs::remove_file(root.join("proc/self/mountinfo")).unwrap();
    write(root, &format!("{ASIDE}/clone2-workdir/earlier"), "x");
    let mut before = scene.tree();
    before.remove("var/lib/puppet-clone-army/.daemon-reload-pending");
    let output = scene
        .command(&[
            "clone",
            "create",
            "clone1",
            "--base",
            "b1",
            "--server",
            "p.example.com",
            "--certname",
            "clone1.example.com",
        ])
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["error"]["kind"], "already-exists", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("sharpie-clone_army-0.2.1/clone2-workdir"),
        "{message}"
    );
    let mut after = scene.tree();
    after.remove("var/lib/puppet-clone-army/.daemon-reload-pending");
    assert_eq!(after, before, "nothing moved");
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn an_old_clones_planted_hostname_link_is_never_followed() {
    common::require_root();
    let scene = old_fleet();
    let root = scene.root.path();
    let hostname = root.join("var/lib/puppet-clone-army/clone2-overlay/etc/hostname");
    std::fs::remove_file(&hostname).unwrap();
    write(root, "etc/secret-name", "leaked.example.com\n");
    std::os::unix::fs::symlink(root.join("etc/secret-name"), &hostname).unwrap();
    let answer = create(&scene, "clone1");
    let said = warnings(&answer).join("\n");
    assert!(!said.contains("leaked.example.com"), "{said}");
    assert!(
        said.contains(".ssl/clone1.host.example.com: the new clone1"),
        "{said}"
    );
    // The link itself was moved with its upper layer, untouched.
    let moved = root.join(ASIDE).join("clone2-overlay/etc/hostname");
    assert!(std::fs::symlink_metadata(&moved)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn a_migration_killed_at_any_step_is_finished_by_the_next_call() {
    common::require_root();
    let clean = old_fleet();
    create(&clean, "clone1");
    let want = clean.tree();
    for step in faults::steps_of("old-fleet") {
        let scene = old_fleet();
        let args = [
            "clone",
            "create",
            "clone1",
            "--base",
            "b1",
            "--server",
            "puppet.example.com",
            "--certname",
            "clone1.host.example.com",
        ];
        scene.run_killed_after(step, &args);
        let answer = create(&scene, "clone1");
        assert_eq!(answer["ok"], true, "{step}: {answer}");
        let got = scene.tree();
        if got != want {
            let diff: Vec<String> = want
                .iter()
                .filter(|(p, w)| got.get(*p) != Some(*w))
                .map(|(p, w)| format!("want {p}: {w}"))
                .chain(
                    got.iter()
                        .filter(|(p, _)| !want.contains_key(*p))
                        .map(|(p, g)| format!("extra {p}: {g}")),
                )
                .collect();
            panic!("{step}: not the clean run's tree:\n{}", diff.join("\n"));
        }
    }
}
