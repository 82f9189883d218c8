//! The answers the Ruby side's specs decode, written by the helper itself: each verb is
//! run against a temporary root and the recording systemd, and its envelope is compared
//! with `spec/fixtures/helper/generated/<name>.json`. A change to an answer type fails
//! here until the fixtures are rewritten (`CLONE_ARMY_WRITE_FIXTURES=1 cargo test
//! ruby_fixtures`), and then the Ruby specs read what the helper really says.

use std::path::Path;

use serde::Serialize;

use super::tests::Fixture;
use super::*;
use crate::protocol::answers::Envelope;

const DIR: &str = "../spec/fixtures/helper/generated";

/// The envelope as the helper prints it, with the test's temporary root taken out of
/// any path in it.
fn answer<T: Serialize>(result: T, root: &Path) -> String {
    let text = serde_json::to_string_pretty(&Envelope::success(result)).unwrap();
    text.replace(&root.display().to_string(), "") + "\n"
}

fn request(name: &str) -> CloneRequest {
    CloneRequest {
        name: name.into(),
        base: "debian-12".into(),
        server: Some("puppet.example.com".into()),
        certname: format!("{name}.loadhost.example.com"),
        start: false,
        ..Default::default()
    }
}

#[test]
fn ruby_fixtures_are_current() {
    let f = Fixture::new();
    let root = f.root().to_owned();
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut answers = Vec::new();

    for name in ["clone1", "clone2", "clone3"] {
        let created = create(&f.ctx(), &request(name)).unwrap();
        answers.push((format!("clone_create_{name}"), answer(created, &root)));
    }
    answers.push((
        "clone_list_stopped".to_owned(),
        answer(list(&f.ctx()).unwrap(), &root),
    ));

    for made in [names(&["clone3"]), names(&["clone1", "clone2", "clone3"])] {
        let g = Fixture::new();
        let requests: Vec<_> = made.iter().map(|name| request(name)).collect();
        let created = create_many(&g.ctx(), &requests, &crate::sys::progress::Quiet).unwrap();
        answers.push((
            format!("clone_create_many_{}", made.join("_")),
            answer(created, g.root()),
        ));
    }

    f.mount(&["clone1", "clone2", "clone3"]);
    for (file, started) in [
        ("clone_start_clone1", names(&["clone1"])),
        ("clone_start_clone2", names(&["clone2"])),
        ("clone_start_clone3", names(&["clone3"])),
        (
            "clone_start_clone1_clone2_clone3",
            names(&["clone1", "clone2", "clone3"]),
        ),
        (
            "clone_start_clone3_clone1_clone2",
            names(&["clone3", "clone1", "clone2"]),
        ),
    ] {
        answers.push((
            file.to_owned(),
            answer(
                start(&f.ctx(), &started, 0, &crate::sys::progress::Quiet).unwrap(),
                &root,
            ),
        ));
    }
    f.mount(&[]);
    for (file, stopped) in [
        ("clone_stop_clone1_clone2", names(&["clone1", "clone2"])),
        ("clone_stop_clone2", names(&["clone2"])),
    ] {
        answers.push((
            file.to_owned(),
            answer(stop(&f.ctx(), &stopped).unwrap(), &root),
        ));
    }
    let configured = configure(
        &f.ctx(),
        &ConfigureRequest {
            name: "clone1".into(),
            certname: Some("c1.example.com".into()),
            ..Default::default()
        },
    )
    .unwrap();
    answers.push((
        "clone_configure_clone1_certname".to_owned(),
        answer(configured, &root),
    ));

    answers.extend(twin_answers());

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR);
    let write = std::env::var_os("CLONE_ARMY_WRITE_FIXTURES").is_some();
    if write {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut stale = Vec::new();
    for (name, text) in &answers {
        let path = dir.join(format!("{name}.json"));
        if write {
            std::fs::write(&path, text).unwrap();
        }
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "not what the helper answers now: {}; rewrite them with \
         CLONE_ARMY_WRITE_FIXTURES=1 cargo test ruby_fixtures",
        stale.join(", ")
    );
}

/// `twin list` before an import, `twin import` of a directory of three nodes (two roles),
/// and `twin list` after it.
fn twin_answers() -> Vec<(String, String)> {
    let f = Fixture::new();
    let root = f.root().to_owned();
    let mut answers = vec![(
        "twin_list_empty".to_owned(),
        answer(crate::twin::import::imported(&f.ctx()).unwrap(), &root),
    )];
    let estate = root.join("srv/estate");
    std::fs::create_dir_all(&estate).unwrap();
    for (node, role) in [
        ("web01.example.com", "web"),
        ("web02.example.com", "web"),
        ("db01.example.com", "db"),
    ] {
        let record = serde_json::json!({
            "certname": node,
            "environment": "production",
            "facts": {"os": {"family": "Debian", "name": "Debian", "release": {"major": "12"}}},
            "trusted": {"extensions": {"pp_role": role}},
        });
        std::fs::write(estate.join(format!("{node}.json")), record.to_string()).unwrap();
    }
    let imported = crate::twin::import::import(&f.ctx(), &estate).unwrap();
    answers.push(("twin_import".to_owned(), answer(imported, &root)));
    answers.push((
        "twin_list".to_owned(),
        answer(crate::twin::import::imported(&f.ctx()).unwrap(), &root),
    ));
    answers
}
