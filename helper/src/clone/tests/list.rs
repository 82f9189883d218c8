//! `clone list` and what it reports: states, stale state with its fix, bases.

use super::*;

#[test]
fn list_reads_disk_and_states_in_one_call() {
    let f = Fixture::new();
    f.create("b", false);
    f.create("a", true);
    f.mount(&["a"]);
    // A foreign mount unit is not a clone.
    fs::write(
        f.path("/etc/systemd/system/var-lib-machines-other.mount"),
        "[Mount]\nWhere=/var/lib/machines/other\nOptions=lowerdir=/x\n",
    )
    .unwrap();
    let calls_before = f.systemd.calls().len();

    let list = list(&f.ctx()).unwrap();
    let names: Vec<&str> = list.clones.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let a = &list.clones[0];
    assert_eq!(a.base, "debian-12");
    assert_eq!(a.server.as_deref(), Some("puppet.example.com"));
    assert_eq!(a.certname.as_deref(), Some("a.load.example.com"));
    assert_eq!(a.state, CloneState::Running);
    assert_eq!(a.unit, "puppet-clone-army@a.service");
    assert!(a.mounted);
    assert_eq!(list.clones[1].state, CloneState::Stopped);
    assert!(!list.clones[1].mounted);
    assert_eq!(
        f.systemd.calls()[calls_before..],
        ["unit_states puppet-clone-army@*.service"]
    );

    let bases = base::list(&f.ctx()).unwrap();
    assert_eq!(bases.bases.len(), 1);
    assert_eq!(bases.bases[0].clones, ["a", "b"]);
}

#[test]
fn list_reports_stale_state_with_the_command_that_fixes_it() {
    let f = Fixture::new();
    for clone in ["c1", "c2", "c3", "c4"] {
        f.create(clone, false);
    }
    // A create killed after the mount unit, before the link into the fleet target.
    fs::remove_file(
        f.path("/etc/systemd/system/puppet-clone-army.target.wants/puppet-clone-army@c4.service"),
    )
    .unwrap();
    fs::remove_dir_all(f.path("/var/lib/puppet-clone-army/c1-overlay")).unwrap();
    fs::remove_dir_all(f.path("/var/lib/puppet-clone-army/c2-workdir")).unwrap();
    // A clone whose base was removed by hand.
    fs::write(
        f.layout
            .fs(f.layout.unit_path(&f.layout.mount_unit_name("c9"))),
        crate::systemd::units::clone_mount(&f.layout, "c9", "gone"),
    )
    .unwrap();
    // c3's own mount, an overlay of ours no unit owns, and another tool's machine.
    fs::create_dir_all(f.root.join("proc/self")).unwrap();
    fs::write(
        f.root.join("proc/self/mountinfo"),
        "22 1 8:1 / / rw - ext4 /dev/vda rw\n\
         60 22 0:50 / /var/lib/machines/c3 rw - overlay overlay rw,lowerdir=/var/lib/puppet-clone-army/debian-12,upperdir=/var/lib/puppet-clone-army/c3-overlay,workdir=/var/lib/puppet-clone-army/c3-workdir\n\
         61 22 0:51 / /var/lib/machines/old rw - overlay overlay rw,lowerdir=/var/lib/puppet-clone-army/debian-12,upperdir=/var/lib/puppet-clone-army/old-overlay,workdir=/var/lib/puppet-clone-army/old-workdir\n\
         62 22 0:52 / /var/lib/machines/other rw - overlay overlay rw,lowerdir=/srv/image,upperdir=/srv/upper,workdir=/srv/work\n",
    )
    .unwrap();

    let listed = list(&f.ctx()).unwrap();
    let problems: Vec<(&str, Vec<(&str, &str)>)> = listed
        .clones
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.problems
                    .iter()
                    .map(|p| (p.kind.as_str(), p.fix.as_str()))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        problems,
        vec![
            (
                "c1",
                vec![("upper-dir-missing", "clone-army clone remove -- c1")]
            ),
            (
                "c2",
                vec![(
                    "work-dir-missing",
                    "clone-army clone create c2 --base debian-12 --server puppet.example.com --certname c2.load.example.com"
                )]
            ),
            ("c3", vec![]),
            (
                "c4",
                vec![(
                    "incomplete",
                    "clone-army clone create c4 --base debian-12 --server puppet.example.com --certname c4.load.example.com --start"
                )]
            ),
            (
                "c9",
                vec![
                    ("base-missing", "clone-army clone remove -- c9"),
                    ("upper-dir-missing", "clone-army clone remove -- c9"),
                    ("incomplete", "clone-army clone remove -- c9")
                ]
            ),
        ]
    );
    assert!(listed.clones[3].problems[0]
        .message
        .contains("killed half-way"));
    assert!(listed.clones[0].problems[0]
        .message
        .contains("/var/lib/puppet-clone-army/c1-overlay"));
    let orphan = |problems: &[crate::protocol::answers::Problem]| {
        problems
            .iter()
            .map(|p| (p.kind.to_string(), p.fix.clone()))
            .collect::<Vec<_>>()
    };
    let orphan_fix = (
        "orphan-mount".to_owned(),
        "umount -- /var/lib/machines/old && clone-army clone remove -- old".to_owned(),
    );
    assert_eq!(orphan(&listed.problems), vec![orphan_fix.clone()]);

    let bases = base::list(&f.ctx()).unwrap();
    assert_eq!(
        orphan(&bases.problems),
        vec![
            orphan_fix,
            (
                "base-missing".to_owned(),
                "clone-army clone remove -- c9".to_owned()
            )
        ]
    );

    // The fix given for the missing work dir does fix it, keeping the upper layer.
    f.create("c2", false);
    let c2 = describe_one(&f.ctx(), "c2").unwrap();
    assert!(c2.problems.is_empty(), "{:?}", c2.problems);
    assert_eq!(c2.server.as_deref(), Some("puppet.example.com"));
}

/// A clone's upper layer is the clone's to write: a base.json planted there never makes
/// it a base (to list, or to remove with the clone's layer), nor can a base be named so.
#[test]
fn a_clones_directories_never_pass_for_a_base() {
    let f = Fixture::new();
    f.create("c1", false);
    let planted = f.path("/var/lib/puppet-clone-army/c1-overlay/etc/clone-army");
    fs::create_dir_all(&planted).unwrap();
    fs::copy(
        f.path("/var/lib/puppet-clone-army/debian-12/etc/clone-army/base.json"),
        planted.join("base.json"),
    )
    .unwrap();
    let bases = base::list(&f.ctx()).unwrap();
    let names: Vec<&str> = bases.bases.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["debian-12"]);
    let error = base::remove(&f.ctx(), "c1-overlay").unwrap_err();
    assert_eq!(error.kind(), "invalid-name");
    assert!(f.path("/var/lib/puppet-clone-army/c1-overlay/etc").exists());
}

/// What a clone's problems say, by kind, for `clone`.
fn problems_of<'a>(
    list: &'a crate::protocol::answers::CloneList,
    clone: &str,
) -> Vec<&'a crate::protocol::answers::Problem> {
    let c = list.clones.iter().find(|c| c.name == clone).unwrap();
    c.problems.iter().collect()
}

/// A clone's root can remount what is bound into it read-write and rewrite its
/// puppet.conf: a certname, server or port that `clone create` refuses is not listed as
/// the clone's (it would reach Puppet's change messages and the `clone_army` fact), but
/// is a problem of that clone, which does not quote it.
#[test]
fn a_certname_rewritten_in_the_clone_is_a_problem_not_a_value() {
    let f = Fixture::new();
    f.create("c1", false);
    f.create("c2", false);
    let huge = "a".repeat((4 << 20) - 200);
    fs::write(
        f.path(&format!("{CONFIG_C1}/puppet.conf")),
        format!("[main]\nserver = evil\u{1b}[2J.example\nserverport = 99999\ncertname = {huge}\n"),
    )
    .unwrap();
    let listed = list(&f.ctx()).unwrap();
    let c1 = &listed.clones[0];
    assert_eq!(
        (c1.certname.as_deref(), c1.server.as_deref(), c1.server_port),
        (None, None, None)
    );
    let problems = problems_of(&listed, "c1");
    let kinds: Vec<&str> = problems.iter().map(|p| p.kind.as_str()).collect();
    assert_eq!(kinds, ["config-invalid"; 3]);
    for (problem, setting) in problems.iter().zip(["server", "serverport", "certname"]) {
        assert!(
            problem.message.contains(&format!("its {setting} ")),
            "{problem:?}"
        );
        assert!(problem.message.len() < 1024, "{}", problem.message.len());
        assert!(!problem.message.contains('\u{1b}'), "{problem:?}");
        assert_eq!(problem.fix, "clone-army clone remove -- c1");
    }
    let c2 = &listed.clones[1];
    assert_eq!(c2.certname.as_deref(), Some("c2.load.example.com"));
    assert!(c2.problems.is_empty(), "{:?}", c2.problems);
}

/// The same for the facts a clone is given: a facts file the clone rewrote with more
/// facts than `--facts-file` takes, and a generated facts script with a count out of its
/// range, are problems, and the clone is listed without them.
#[test]
fn facts_rewritten_in_the_clone_are_a_problem_not_a_value() {
    use crate::clone::facts::{FACTS_JSON, GENERATED_SCRIPT};
    let f = Fixture::new();
    let facts = f.root().join("facts.json");
    fs::write(&facts, r#"{"role": "web"}"#).unwrap();
    f.create_shaped(
        "c1",
        ShapeRequest {
            facts_file: Some(facts),
            generated_facts: Some(500),
            churn_percent: Some(15),
            ..ShapeRequest::default()
        },
    );
    let in_facts = |name: &str| f.path(&format!("{CONFIG_C1}/facts.d/{name}"));
    // 3 MiB of facts each of which the rule takes: more than a facts file holds.
    let many: serde_json::Map<String, serde_json::Value> = (0..800)
        .map(|i| (format!("fact_{i}"), "v".repeat(4000).into()))
        .collect();
    fs::write(in_facts(FACTS_JSON), serde_json::to_string(&many).unwrap()).unwrap();
    let script = fs::read_to_string(in_facts(GENERATED_SCRIPT)).unwrap();
    fs::write(
        in_facts(GENERATED_SCRIPT),
        script.replace("\ncount=500\n", "\ncount=4294967295\n"),
    )
    .unwrap();
    let listed = list(&f.ctx()).unwrap();
    let shape = &listed.clones[0].shape;
    assert!(shape.facts.is_empty(), "{} facts", shape.facts.len());
    assert_eq!((shape.generated_facts, shape.churn_percent), (0, None));
    let problems = problems_of(&listed, "c1");
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(problems.len(), 2, "{messages:?}");
    assert!(problems.iter().all(|p| p.kind == "config-invalid"));
    assert!(messages[0].contains(FACTS_JSON), "{messages:?}");
    assert!(messages[1].contains(GENERATED_SCRIPT), "{messages:?}");
}

/// A clone's root rewrites its bound timer: an interval, a splay and a phase no create
/// would write are left out and named, not passed on to Puppet and the fact.
#[test]
fn run_settings_rewritten_in_the_clone_are_a_problem_not_a_value() {
    use crate::clone::run_mode::{RunMode, AGENT_TIMER};
    let f = Fixture::new();
    f.create_shaped(
        "c1",
        ShapeRequest {
            run_mode: Some(RunMode::Timer),
            runinterval: Some(1800),
            phase_index: Some(2),
            phase_count: Some(10),
            ..ShapeRequest::default()
        },
    );
    let path = f.in_units(AGENT_TIMER);
    let timer = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        format!(
            "{timer}OnUnitActiveSec=18446744073709551615\nRandomizedDelaySec=99999999\n\
             X-CloneArmyPhaseIndex=12\n"
        ),
    )
    .unwrap();
    let listed = list(&f.ctx()).unwrap();
    let shape = &listed.clones[0].shape;
    assert_eq!(shape.run_mode, Some(RunMode::Timer));
    assert_eq!(
        (
            shape.runinterval,
            shape.splay,
            shape.phase_index,
            shape.phase_count
        ),
        (None, None, None, None)
    );
    let problems = problems_of(&listed, "c1");
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(problems.len(), 3, "{messages:?}");
    assert!(problems.iter().all(|p| p.kind == "config-invalid"));
    for setting in ["runinterval", "splay", "phase"] {
        assert!(
            messages.iter().any(|m| m.contains(setting)),
            "{setting}: {messages:?}"
        );
    }
    assert!(
        messages.iter().all(|m| !m.contains("18446744073709551615")),
        "{messages:?}"
    );
}
