//! The hand-written answers in `spec/fixtures/helper/` (the ones the helper does not
//! write itself, see `clone::ruby_fixtures`) claim to be what the helper prints. Each is
//! read here as the answer type of its verb and written back: a field the helper always
//! sends but the file lacks, a field the helper never sends, or a value of the wrong kind
//! shows up as a difference, so the Ruby specs cannot test an answer the helper never
//! gives.

use std::path::{Path, PathBuf};

use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

use clone_army::protocol::answers::{
    BaseCreated, BaseList, BaseRemoved, CloneChanged, CloneCreated, CloneList, CloneNames,
    ClonesRemoved, ClonesStarted, Envelope, PROTOCOL_VERSION,
};

/// Every hand-written fixture, with the verb whose answer it claims to be. A file in the
/// directory but not here (nor in [`NOT_ANSWERS`]) fails the test, so none goes unchecked.
const ANSWERS: &[(&str, Verb)] = &[
    ("base_create.json", Verb::BaseCreate),
    ("base_create_ubuntu-jammy.json", Verb::BaseCreate),
    ("base_list.json", Verb::BaseList),
    ("base_list_empty.json", Verb::BaseList),
    ("base_remove.json", Verb::BaseRemove),
    ("base_remove_in_use.json", Verb::Failure),
    ("captured_base_list.json", Verb::BaseList),
    ("captured_base_list_empty.json", Verb::BaseList),
    ("captured_clone_list_empty.json", Verb::CloneList),
    ("captured_invalid_name.json", Verb::Failure),
    ("captured_not_found.json", Verb::Failure),
    ("captured_systemd_unreachable.json", Verb::Failure),
    ("captured_usage.json", Verb::Failure),
    ("clone_configure.json", Verb::CloneConfigure),
    ("clone_configure_clone2.json", Verb::CloneConfigure),
    ("clone_configure_shape.json", Verb::CloneConfigure),
    ("clone_create.json", Verb::CloneCreate),
    ("clone_create_shape.json", Verb::CloneCreate),
    ("clone_create_stopped.json", Verb::CloneCreate),
    ("clone_list.json", Verb::CloneList),
    ("clone_list_empty.json", Verb::CloneList),
    ("clone_list_shape.json", Verb::CloneList),
    ("clone_remove.json", Verb::CloneRemove),
    ("clone_remove_names.json", Verb::CloneRemove),
    ("clone_start.json", Verb::CloneStart),
    ("clone_start_clone1.json", Verb::CloneStart),
    ("clone_start_clone3.json", Verb::CloneStart),
    ("clone_stop.json", Verb::CloneStop),
    ("error_not_found.json", Verb::Failure),
    ("error_systemd.json", Verb::Failure),
    ("error_usage.json", Verb::Failure),
];

/// The deliberately bad documents the specs feed the Ruby side; each must be refused.
const NOT_ANSWERS: &[&str] = &["malformed.txt", "truncated.json", "protocol_99.json"];

/// Files of the directory that are no answer at all.
const NOT_FIXTURES: &[&str] = &["README.md"];

#[derive(Debug, Clone, Copy)]
enum Verb {
    BaseCreate,
    BaseList,
    BaseRemove,
    CloneConfigure,
    CloneCreate,
    CloneList,
    CloneRemove,
    CloneStart,
    CloneStop,
    /// Any verb that failed: the envelope with `ok: false` and its `error`.
    Failure,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/fixtures/helper")
}

/// Why `text` is not an answer the helper gives for `verb`, or nothing.
fn differences(text: &str, verb: Verb) -> Vec<String> {
    let document: Value = match serde_json::from_str(text) {
        Ok(document) => document,
        Err(error) => return vec![format!("not JSON: {error}")],
    };
    let written = match verb {
        Verb::BaseCreate => written_back::<BaseCreated>(&document),
        Verb::BaseList => written_back::<BaseList>(&document),
        Verb::BaseRemove => written_back::<BaseRemoved>(&document),
        Verb::CloneConfigure => written_back::<CloneChanged>(&document),
        Verb::CloneCreate => written_back::<CloneCreated>(&document),
        Verb::CloneList => written_back::<CloneList>(&document),
        Verb::CloneRemove => written_back::<ClonesRemoved>(&document),
        Verb::CloneStart => written_back::<ClonesStarted>(&document),
        Verb::CloneStop => written_back::<CloneNames>(&document),
        Verb::Failure => written_back::<Value>(&document),
    };
    let written = match written {
        Ok(written) => written,
        Err(error) => return vec![format!("not this verb's answer: {error}")],
    };
    let mut found = Vec::new();
    if document["protocol"] != PROTOCOL_VERSION {
        found.push(format!("protocol is not {PROTOCOL_VERSION}"));
    }
    // A failure carries an error and no result; a success the other way round.
    let failed = matches!(verb, Verb::Failure);
    if document["ok"] != !failed {
        found.push(format!("ok is not {}", !failed));
    }
    compare("", &document, &written, &mut found);
    found
}

/// The document read as the helper's envelope of `T` and written again as the helper
/// writes it.
fn written_back<T: Serialize + DeserializeOwned>(document: &Value) -> serde_json::Result<Value> {
    let envelope: Envelope<T> = serde_json::from_value(document.clone())?;
    serde_json::to_value(envelope)
}

fn compare(at: &str, fixture: &Value, helper: &Value, found: &mut Vec<String>) {
    match (fixture, helper) {
        (Value::Object(fixture), Value::Object(helper)) => {
            for key in helper.keys().filter(|key| !fixture.contains_key(*key)) {
                found.push(format!("{at}.{key}: missing, the helper always sends it"));
            }
            for key in fixture.keys().filter(|key| !helper.contains_key(*key)) {
                found.push(format!("{at}.{key}: the helper never sends it"));
            }
            for (key, value) in fixture {
                if let Some(other) = helper.get(key) {
                    compare(&format!("{at}.{key}"), value, other, found);
                }
            }
        }
        (Value::Array(fixture), Value::Array(helper)) if fixture.len() == helper.len() => {
            for (index, (value, other)) in fixture.iter().zip(helper).enumerate() {
                compare(&format!("{at}[{index}]"), value, other, found);
            }
        }
        _ if fixture != helper => found.push(format!("{at}: {fixture} is written as {helper}")),
        _ => {}
    }
}

#[test]
fn hand_written_ruby_fixtures_are_answers_the_helper_gives() {
    let mut wrong = Vec::new();
    for (file, verb) in ANSWERS {
        let text = std::fs::read_to_string(dir().join(file)).unwrap();
        for difference in differences(&text, *verb) {
            wrong.push(format!("{file}: {difference}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_hand_written_fixture_is_checked() {
    let listed: Vec<&str> = ANSWERS
        .iter()
        .map(|(file, _)| *file)
        .chain(NOT_ANSWERS.iter().copied())
        .chain(NOT_FIXTURES.iter().copied())
        .collect();
    let mut unlisted = Vec::new();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_file() && !listed.contains(&name.as_str()) {
            unlisted.push(name);
        }
    }
    assert!(
        unlisted.is_empty(),
        "not checked against the helper's answers: {unlisted:?}"
    );
}

#[test]
fn the_deliberately_bad_fixtures_are_refused() {
    for file in NOT_ANSWERS {
        let text = std::fs::read_to_string(dir().join(file)).unwrap();
        // Whatever verb they would answer: the listing the specs feed them to.
        for verb in [Verb::BaseList, Verb::CloneList] {
            assert!(
                !differences(&text, verb).is_empty(),
                "{file} reads as a {verb:?} answer"
            );
        }
    }
}

#[test]
fn a_fixture_lacking_a_field_the_helper_sends_is_refused() {
    let text = std::fs::read_to_string(dir().join("clone_list.json")).unwrap();
    assert_eq!(differences(&text, Verb::CloneList), Vec::<String>::new());
    let mut document: Value = serde_json::from_str(&text).unwrap();
    document["result"]["clones"][0]
        .as_object_mut()
        .unwrap()
        .remove("problems");
    assert_eq!(
        differences(&document.to_string(), Verb::CloneList),
        [".result.clones[0].problems: missing, the helper always sends it"]
    );
    document["result"]["clones"][0]["colour"] = "blue".into();
    document["result"]["clones"][0]["problems"] = 3.into();
    let found = differences(&document.to_string(), Verb::CloneList);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("not this verb's answer"), "{found:?}");
}
