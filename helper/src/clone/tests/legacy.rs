//! Clones an older clone-army made: listed from their upper layer, moved over untouched.

use super::*;
use crate::clone::run_mode::{agent_service, agent_timer, Phasing, RunMode, RunSettings};

/// The files of a tree, with their kinds and contents (or link targets).
fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let key = path.strip_prefix(root).unwrap().display().to_string();
            if meta.is_symlink() {
                out.insert(
                    key,
                    format!("-> {}", fs::read_link(&path).unwrap().display()),
                );
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                out.insert(key, fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    out
}

use std::collections::BTreeMap;

/// A timer-mode clone as clone-army 0.3 left it: settings in its upper layer.
fn legacy_clone(f: &Fixture, name: &str) -> PathBuf {
    let layout = &f.layout;
    let unit = layout.fs(layout.unit_path(&layout.mount_unit_name(name)));
    fs::create_dir_all(unit.parent().unwrap()).unwrap();
    fs::write(
        &unit,
        crate::systemd::units::clone_mount(layout, name, "debian-12"),
    )
    .unwrap();
    let upper = layout.fs(layout.upper_dir(name));
    let settings = RunSettings {
        mode: RunMode::Timer,
        runinterval: 600,
        splay: 5,
        phase_index: 2,
        phase_count: 3,
        phasing: Phasing::FleetEven,
    };
    // clone-army 0.3 named no phasing rule: it had only `i·T/N`.
    let timer: String = agent_timer(&settings)
        .lines()
        .filter(|line| !line.starts_with("X-CloneArmyPhasing="))
        .map(|line| format!("{line}\n"))
        .collect();
    for (path, text) in [
        (
            "etc/puppet/puppet.conf",
            format!("[main]\nserver = old.example.com\ncertname = {name}.old\nlog_level = info\n"),
        ),
        ("etc/hostname", format!("{name}.old\n")),
        ("etc/systemd/system/clone-army-agent.timer", timer),
        (
            "etc/systemd/system/clone-army-agent.service",
            agent_service("/usr/bin/puppet", &settings),
        ),
        (
            "etc/facter/facts.d/clone_army.json",
            "{\"role\": \"old\"}\n".to_owned(),
        ),
    ] {
        let path = upper.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    std::os::unix::fs::symlink("/dev/null", upper.join("etc/systemd/system/puppet.service"))
        .unwrap();
    fs::create_dir_all(f.path("/var/lib/machines").join(name)).unwrap();
    upper
}

#[test]
fn a_legacy_clone_is_listed_from_its_upper_layer_and_moved_over_untouched() {
    let f = Fixture::new();
    let upper = legacy_clone(&f, "old1");
    let before = tree(&upper);

    let listed = describe_one(&f.ctx(), "old1").unwrap();
    assert_eq!(listed.server.as_deref(), Some("old.example.com"));
    assert_eq!(listed.shape.run_mode, Some(RunMode::Timer));
    assert_eq!(
        (
            listed.shape.runinterval,
            listed.shape.splay,
            listed.shape.phase_index
        ),
        (Some(600), Some(5), Some(2))
    );
    // A timer that names no rule was phased `i·T/N`, and keeps that offset when moved.
    assert_eq!(listed.shape.phasing, Some(Phasing::FleetEven));
    assert_eq!(listed.shape.facts["role"], "old");

    // Any mutating call moves every legacy clone over before the template changes.
    f.create("new1", false);
    let config = "/var/lib/puppet-clone-army/old1-config";
    assert_eq!(
        f.read(&format!("{config}/puppet.conf")),
        "[main]\nserver = old.example.com\ncertname = old1.old\nlog_level = info\n"
    );
    assert_eq!(f.read(&format!("{config}/hostname")), "old1.old\n");
    assert!(f
        .read("/etc/systemd/nspawn/old1.nspawn")
        .contains("BindReadOnly=/etc/hosts\n"));
    let after = describe_one(&f.ctx(), "old1").unwrap();
    assert_eq!(after.shape, listed.shape);
    let timer = f.read(&format!("{config}/systemd/clone-army-agent.timer"));
    assert!(
        timer.contains("OnActiveSec=400\n") && timer.contains("X-CloneArmyPhasing=fleet-even\n"),
        "{timer}"
    );
    assert_eq!(after.server, listed.server);
    // Nothing in the clone's own tree was changed or removed.
    assert_eq!(tree(&upper), before);
}

#[test]
fn a_legacy_clones_planted_files_read_as_missing_and_are_never_followed() {
    let f = Fixture::new();
    let upper = legacy_clone(&f, "old1");
    let host_secret = f.root.join("host-puppet.conf");
    fs::write(&host_secret, "[main]\nserver = host-secret.example.com\n").unwrap();
    fs::remove_file(upper.join("etc/puppet/puppet.conf")).unwrap();
    std::os::unix::fs::symlink(&host_secret, upper.join("etc/puppet/puppet.conf")).unwrap();
    let facts = upper.join("etc/facter/facts.d");
    fs::remove_dir_all(&facts).unwrap();
    std::os::unix::fs::symlink(&f.root, &facts).unwrap();

    let listed = describe_one(&f.ctx(), "old1").unwrap();
    assert_eq!(listed.server, None);
    assert!(listed.shape.facts.is_empty());
    f.create("new1", false);
    let moved = f.read("/var/lib/puppet-clone-army/old1-config/puppet.conf");
    assert!(!moved.contains("host-secret"), "{moved}");
    assert_eq!(fs::read_link(&facts).unwrap(), f.root);
}
