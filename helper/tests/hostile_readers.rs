//! Every reader of bytes that a clone or a server under test controls, fed hostile input:
//! agent run summaries and reports (YAML), Puppet Server's status answer and PuppetDB's
//! answers (JSON), a clone's puppet.conf, and the recorder's timeline. None may panic,
//! and none may use memory out of proportion to what it was given: a reader here runs as
//! root beside the host's other services, for every clone, every few seconds.
//!
//! The memory a reader uses is counted by this test binary's allocator, per thread (the
//! tests run side by side), as the peak of live bytes above what was live when the
//! reader was called.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use proptest::prelude::*;
use serde_json::Value;

use clone_army::clone::{facts, puppet_conf};
use clone_army::record::read as timeline;
use clone_army::report::{last_report, puppetdb, puppetdb_fleet, server, summary};

#[path = "../src/sys/test_reach.rs"]
mod test_reach;
use test_reach::{assert_both_sides, assert_each_reaches, assert_reaches};

#[path = "hostile_readers/answers.rs"]
mod answers;
#[path = "hostile_readers/taken.rs"]
mod taken;
use answers::{puppetdb_answers, status_text, PuppetdbAnswers};
use taken::{
    command_figures, commands_refused, load_hosts_read, load_hosts_refused, puppetdb_status_read,
    puppetdb_status_refused, report_runs_read, report_runs_refused, status_read, status_refused,
};

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: a thread being torn down has no counters left, and frees all the same.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most memory `read` used above what was live when it was called, and its result.
fn peak_of<T>(read: impl FnOnce() -> T) -> (usize, T) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(base));
    let result = read();
    let peak = PEAK.with(Cell::get) - base;
    (peak.max(0) as usize, result)
}

/// What a reader may use for `input` bytes: a fixed allowance for the parser's own
/// tables, and a small multiple of the input (a parsed document is larger than its text,
/// never without bound).
fn budget(input: usize) -> usize {
    2 * 1024 * 1024 + 16 * input
}

fn assert_within_budget(what: &str, input: usize, peak: usize) {
    assert!(
        peak <= budget(input),
        "{what}: {peak} bytes at peak for {input} bytes of input (budget {})",
        budget(input)
    );
}

// --- hostile text ---

/// Strings a hostile clone or server would send: markup, quotes, terminal escapes, other
/// control characters, invisible and right-to-left characters, and long runs.
fn hostile_string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<script>alert(1)</script>".to_owned()),
        Just("</svg><img src=x onerror=alert(1)>".to_owned()),
        Just("\"'`&;".to_owned()),
        Just("\u{1b}[2J\u{1b}]0;pwned\u{7}".to_owned()),
        Just("\u{202e}\u{200b}\u{feff}".to_owned()),
        Just("\r\n\t\0\u{7f}\u{85}".to_owned()),
        Just("ok".to_owned()),
        "[ -~]{0,40}",
        "\\PC{0,20}",
        (1usize..64).prop_map(|n| "A".repeat(n * 1024)),
    ];
    proptest::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

/// A scalar the readers take: a quoted hostile string, a number, null or a boolean.
fn readable_scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        hostile_string().prop_map(|s| serde_json::to_string(&s).unwrap()),
        "-?[0-9]{1,30}(\\.[0-9]{1,20})?".prop_map(|s| s),
        Just("~".to_owned()),
        Just("true".to_owned()),
    ]
}

/// A YAML scalar: plain, quoted, or a block scalar, holding a hostile string.
fn yaml_scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        readable_scalar(),
        Just("!!binary aGVsbG8=".to_owned()),
        Just("*a".to_owned()),
        Just("&a x".to_owned()),
        Just("[1, [2, [3]]]".to_owned()),
        Just("{a: 1}".to_owned()),
    ]
}

/// Keys Puppet writes in a run summary and a report, and some it does not.
fn yaml_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("version".to_owned()),
        Just("config".to_owned()),
        Just("puppet".to_owned()),
        Just("time".to_owned()),
        Just("last_run".to_owned()),
        Just("total".to_owned()),
        Just("config_retrieval".to_owned()),
        Just("catalog_application".to_owned()),
        Just("resources".to_owned()),
        Just("failed".to_owned()),
        Just("changes".to_owned()),
        Just("events".to_owned()),
        Just("failure".to_owned()),
        Just("noop".to_owned()),
        Just("logs".to_owned()),
        Just("level".to_owned()),
        Just("message".to_owned()),
        Just("status".to_owned()),
        Just(":level".to_owned()),
        Just(":message".to_owned()),
        "[a-z_:]{1,12}",
    ]
}

/// A YAML document of Puppet's shape: hostile ([`hostile_puppet_yaml`]), or one the
/// readers read through (each section once, readable scalars, error logs), holding
/// hostile strings and numbers. A hostile document is refused at its first alias or
/// nested value, so the readers' own work would go untested.
fn puppet_yaml() -> impl Strategy<Value = String> {
    prop_oneof![hostile_puppet_yaml(), readable_puppet_yaml()]
}

fn readable_puppet_yaml() -> impl Strategy<Value = String> {
    let entries = || proptest::collection::btree_map(yaml_key(), readable_scalar(), 0..8);
    // One of the sections that make a summary, and any others.
    let summary_section = (
        prop::sample::select(vec!["version", "time", "resources"]),
        entries(),
    );
    let others = proptest::collection::btree_map(
        prop::sample::select(vec!["version", "time", "resources", "events", "changes"]),
        entries(),
        0..4,
    );
    let sections = (summary_section, others).prop_map(|((name, entries), mut sections)| {
        sections.insert(name, entries);
        sections
    });
    let level = prop_oneof![
        Just("err".to_owned()),
        Just(":err".to_owned()),
        Just("warning".to_owned()),
        readable_scalar(),
    ];
    let log = (level, readable_scalar())
        .prop_map(|(level, message)| format!("  - level: {level}\n    message: {message}\n"));
    (sections, proptest::collection::vec(log, 0..6)).prop_map(|(sections, logs)| {
        let mut yaml = String::new();
        for (name, entries) in sections {
            yaml.push_str(&format!("{name}:\n"));
            for (key, value) in entries {
                yaml.push_str(&format!("  {key}: {value}\n"));
            }
        }
        if !logs.is_empty() {
            yaml.push_str(&format!("logs:\n{}", logs.concat()));
        }
        yaml
    })
}

/// A YAML document of Puppet's shape (sections of key: value, and `logs` as a list of
/// level/message maps) with hostile keys, values, anchors and aliases.
fn hostile_puppet_yaml() -> impl Strategy<Value = String> {
    let entry = (yaml_key(), yaml_scalar()).prop_map(|(k, v)| format!("  {k}: {v}\n"));
    let section = (yaml_key(), proptest::collection::vec(entry, 0..8))
        .prop_map(|(k, entries)| format!("{k}:\n{}", entries.concat()));
    let log = (yaml_scalar(), yaml_scalar())
        .prop_map(|(level, message)| format!("  - level: {level}\n    message: {message}\n"));
    let logs =
        proptest::collection::vec(log, 0..12).prop_map(|logs| format!("logs:\n{}", logs.concat()));
    (
        proptest::collection::vec(prop_oneof![section, logs], 0..8),
        prop_oneof![
            Just(String::new()),
            Just("--- !ruby/object:Puppet::Transaction::Report\n".to_owned()),
            Just("%YAML 1.1\n---\n".to_owned()),
        ],
    )
        .prop_map(|(parts, head)| format!("{head}{}", parts.concat()))
}

/// Nested arrays of aliases of aliases: a few hundred bytes that a reader expanding
/// aliases naively would turn into gigabytes.
fn alias_bomb(levels: usize) -> String {
    let mut yaml = String::from("a0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n");
    for level in 1..=levels {
        let previous = level - 1;
        yaml.push_str(&format!(
            "a{level}: &a{level} [*a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}]\n"
        ));
    }
    yaml.push_str(&format!(
        "version:\n  config: *a{levels}\n  puppet: *a{levels}\nlogs: *a{levels}\n"
    ));
    yaml
}

/// A JSON value of any shape, with hostile strings as keys and values.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        hostile_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 256, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::btree_map(json_key(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Keys the readers look for, and hostile ones.
fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("certname".to_owned()),
        Just("value".to_owned()),
        Just("clones".to_owned()),
        Just("names".to_owned()),
        Just("certnames".to_owned()),
        Just("status".to_owned()),
        Just("state".to_owned()),
        Just("service_version".to_owned()),
        Just("queue_depth".to_owned()),
        Just("experimental".to_owned()),
        Just("jruby-metrics".to_owned()),
        Just("pe-jruby-metrics".to_owned()),
        Just("master".to_owned()),
        Just("server".to_owned()),
        Just("metrics".to_owned()),
        Just("end_time".to_owned()),
        Just("puppet_version".to_owned()),
        Just("configuration_version".to_owned()),
        Just("Count".to_owned()),
        Just("Mean".to_owned()),
        hostile_string(),
    ]
}

/// A puppet.conf a clone rewrote: sections, settings with hostile values or host names
/// (with something hostile after them, or not), and hostile lines. Hostile values alone
/// are almost never a host name, so what is taken back would go unchecked.
fn puppet_conf() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        hostile_string(),
        "[a-z0-9]{1,10}(\\.[a-z0-9]{1,10}){0,2}",
        ("[a-z0-9]{1,10}", hostile_string()).prop_map(|(host, rest)| format!("{host}{rest}")),
    ];
    proptest::collection::vec(
        prop_oneof![
            Just("[main]".to_owned()),
            Just("[agent]".to_owned()),
            (
                prop_oneof![
                    Just("server"),
                    Just("serverport"),
                    Just("certname"),
                    Just("ssldir")
                ],
                value
            )
                .prop_map(|(k, v)| format!("{k} = {v}")),
            hostile_string(),
        ],
        0..40,
    )
    .prop_map(|lines| lines.join("\n"))
}

#[test]
fn the_puppet_conf_generator_gives_host_names_taken_back_and_refused() {
    let taken = |text: &String| {
        let (settings, _) = puppet_conf::read_back(text);
        settings.server.is_some() || settings.certname.is_some()
    };
    assert_both_sides(
        "puppet.conf with a host name taken back",
        &puppet_conf(),
        taken,
        25,
    );
    assert_reaches(
        "puppet.conf with a value refused",
        &puppet_conf(),
        |text| !puppet_conf::read_back(text).1.is_empty(),
        25,
    );
}

/// Facts as JSON text: hostile or almost JSON ([`json_text`]), or an object of facts
/// with plain names and hostile strings, numbers and booleans, which a hostile value
/// alone almost never is.
fn facts_text() -> impl Strategy<Value = String> {
    let fact = prop_oneof![
        hostile_string().prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
    ];
    let name = prop_oneof![3 => "[a-z0-9_]{1,20}", 1 => json_key()];
    prop_oneof![
        json_text(),
        proptest::collection::btree_map(name, fact, 0..8)
            .prop_map(|facts| Value::Object(facts.into_iter().collect()).to_string()),
    ]
}

#[test]
fn the_facts_generator_gives_facts_taken_and_refused() {
    assert_both_sides(
        "facts taken",
        &facts_text(),
        |text| serde_json::from_str::<Value>(text).is_ok_and(|json| facts::validate(json).is_ok()),
        25,
    );
}

/// A timeline line of the current version holding a hostile `at`: a sample the reader
/// takes, so that hostile text reaches what it keeps, not only what it skips.
fn hostile_sample() -> impl Strategy<Value = String> {
    hostile_string().prop_map(|at| {
        let none = r#"{"count":0}"#;
        format!(
            r#"{{"timeline":1,"t":1,"at":{},"period":10,"fleet":{{"clones":0,"running":0,"stopped":0,"unknown":0,"silent":0,"by_status":{{}}}},"runs":{{"count":0,"by_status":{{}},"total_time":{none},"config_retrieval_time":{none}}},"server":null,"puppetdb":null,"host":{{}}}}"#,
            serde_json::to_string(&at).unwrap()
        )
    })
}

fn timeline_lines() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(prop_oneof![json_text(), hostile_sample()], 0..20)
}

#[test]
fn the_timeline_generator_gives_both_samples_and_skipped_lines() {
    let read = |lines: &Vec<String>| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timeline.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        timeline::read(&path).unwrap()
    };
    assert_reaches(
        "timelines with samples",
        &timeline_lines(),
        |lines| !read(lines).samples.is_empty(),
        50,
    );
    assert_reaches(
        "timelines with skipped lines",
        &timeline_lines(),
        |lines| read(lines).skipped > 0,
        50,
    );
}

/// A JSON text: a hostile value, or a text that is almost JSON.
fn json_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => json_value().prop_map(|v| v.to_string()),
        1 => "\\PC{0,200}",
        1 => (1usize..4000).prop_map(|n| "[".repeat(n)),
        1 => (1usize..4000).prop_map(|n| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n))),
    ]
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        // A failing case is shown shrunk, not saved beside the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_hostile_run_summary_neither_panics_nor_grows(text in puppet_yaml()) {
        let (peak, _) = peak_of(|| summary::parse(&text));
        assert_within_budget("summary::parse", text.len(), peak);
    }

    #[test]
    fn a_hostile_report_neither_panics_nor_grows(text in puppet_yaml()) {
        let (peak, _) = peak_of(|| last_report::failure(&text));
        assert_within_budget("last_report::failure", text.len(), peak);
    }

    #[test]
    fn arbitrary_bytes_as_yaml_neither_panic_nor_grow(text in "\\PC{0,4000}") {
        let (peak, _) = peak_of(|| (summary::parse(&text), last_report::failure(&text)));
        assert_within_budget("YAML readers", text.len(), peak);
    }

    #[test]
    fn a_hostile_status_answer_neither_panics_nor_grows(text in status_text()) {
        let (peak, _) = peak_of(|| {
            serde_json::from_str::<Value>(&text).map(|json| server::summarise(&json))
        });
        assert_within_budget("server::summarise", text.len(), peak);
    }

    /// Every reader gets an answer: hostile, or along the paths it walks (the texts that
    /// are almost JSON are the status and facts readers' cases, which parse first).
    #[test]
    fn hostile_puppetdb_answers_neither_panic_nor_grow(answers in puppetdb_answers()) {
        let size = answers.size();
        let PuppetdbAnswers { status, processed, processing_time, facts, reports } = &answers;
        let (peak, _) = peak_of(|| {
            let _ = puppetdb::status_fields(status);
            let _ = puppetdb::commands(processed, processing_time);
            let _ = puppetdb_fleet::load_hosts(facts);
            let _ = puppetdb_fleet::report_runs(reports);
        });
        assert_within_budget("PuppetDB readers", size, peak);
    }

    #[test]
    fn a_hostile_puppet_conf_neither_panics_nor_grows(text in puppet_conf()) {
        let (peak, (read_back, _, _)) = peak_of(|| {
            (puppet_conf::read_back(&text), puppet_conf::parse(&text), puppet_conf::section(&text, "main"))
        });
        assert_within_budget("puppet_conf::read_back", text.len(), peak);
        // What is taken back is only ever a host name, never the clone's text as it is.
        let (settings, _) = read_back;
        for value in [settings.server, settings.certname].into_iter().flatten() {
            assert!(value.len() <= 253 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.".contains(&b)), "{value:?}");
        }
    }

    #[test]
    fn hostile_facts_neither_panic_nor_grow(text in facts_text()) {
        let (peak, _) = peak_of(|| {
            serde_json::from_str::<Value>(&text).map(facts::validate)
        });
        assert_within_budget("facts::validate", text.len(), peak);
    }

    /// A timeline whose lines are samples with hostile strings, other JSON, or no JSON at
    /// all: read whole, every line that is no sample skipped and counted.
    #[test]
    fn a_hostile_timeline_neither_panics_nor_grows(
        lines in timeline_lines()
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timeline.jsonl");
        let text = lines.join("\n");
        std::fs::write(&path, &text).unwrap();
        let (peak, read) = peak_of(|| timeline::read(&path));
        assert_within_budget("record::read", text.len(), peak);
        let recording = read.unwrap();
        assert_eq!(recording.samples.len() + recording.skipped, lines.iter().filter(|l| !l.trim().is_empty()).count());
    }
}

/// A report whose error messages repeat through aliases is refused or read within the
/// budget, never expanded into gigabytes.
#[test]
fn an_alias_bomb_in_a_report_or_summary_is_not_expanded() {
    let yaml = alias_bomb(9);
    let (peak, _) = peak_of(|| summary::parse(&yaml));
    assert_within_budget("summary::parse of an alias bomb", yaml.len(), peak);
    let (peak, _) = peak_of(|| last_report::failure(&yaml));
    assert_within_budget("last_report::failure of an alias bomb", yaml.len(), peak);
}

/// The counter sees what a reader keeps: a test of the test.
#[test]
fn the_counter_sees_an_allocation() {
    let (peak, kept) = peak_of(|| vec![0u8; 10 * 1024 * 1024]);
    assert!(peak >= 10 * 1024 * 1024, "{peak}");
    drop(kept);
    assert!(budget(0) < 10 * 1024 * 1024);
}

#[test]
fn the_yaml_generator_gives_summaries_read_and_refused() {
    assert_both_sides(
        "YAML read as a run summary",
        &puppet_yaml(),
        |text| summary::parse(text).is_ok(),
        20,
    );
}

#[test]
fn the_yaml_generator_gives_reports_with_and_without_a_failure() {
    let failure = |text: &String| last_report::failure(text);
    assert_reaches(
        "reports with a failure",
        &puppet_yaml(),
        |t| matches!(failure(t), Ok(Some(_))),
        15,
    );
    assert_reaches(
        "reports without a failure",
        &puppet_yaml(),
        |t| matches!(failure(t), Ok(None)),
        15,
    );
    assert_reaches(
        "reports refused",
        &puppet_yaml(),
        |t| failure(t).is_err(),
        15,
    );
}

#[test]
fn the_status_generator_gives_answers_with_fields_read_and_refused() {
    let summarised = |text: &String| {
        serde_json::from_str::<Value>(text).map(|json| (server::summarise(&json), json))
    };
    assert_each_reaches(
        &status_text(),
        &[
            ("status answers with a field read", &|text| {
                summarised(text).is_ok_and(|(summary, _)| status_read(&summary))
            }),
            ("status answers with a field refused", &|text| {
                summarised(text).is_ok_and(|(summary, json)| status_refused(&json, &summary))
            }),
        ],
        15,
    );
}

#[test]
fn the_puppetdb_generator_gives_answers_with_fields_read_and_refused() {
    assert_each_reaches(
        &puppetdb_answers(),
        &[
            ("PuppetDB status with a field read", &|a| {
                puppetdb_status_read(&a.status)
            }),
            ("PuppetDB status with a field refused", &|a| {
                puppetdb_status_refused(&a.status)
            }),
            ("command metrics with a figure read", &|a| {
                command_figures(&a.processed, &a.processing_time) > 0
            }),
            ("command metrics with a figure refused", &|a| {
                commands_refused(&a.processed, &a.processing_time)
            }),
            ("facts with a load host's clone trusted", &|a| {
                load_hosts_read(&a.facts)
            }),
            ("facts with a claim refused", &|a| {
                load_hosts_refused(&a.facts)
            }),
            ("reports with a run read", &|a| report_runs_read(&a.reports)),
            ("reports with a row or a field refused", &|a| {
                report_runs_refused(&a.reports)
            }),
        ],
        15,
    );
}

// --- twins: real nodes' records ---

/// A fact or key name: plain, secret-named, set by the agent, or hostile.
fn twin_key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_]{1,12}",
        1 => Just("db_password".to_owned()),
        1 => Just("API_KEY".to_owned()),
        1 => Just("clientcert".to_owned()),
        1 => Just("ec2_metadata".to_owned()),
        1 => json_key(),
        1 => hostile_string(),
    ]
}

fn twin_fact() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
        "[ -~]{0,20}".prop_map(Value::String),
        hostile_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(twin_key(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A node's record as JSON text: a PuppetDB inventory or factset record whose certname
/// is a host name or hostile, whose facts have keys of every kind at every depth and
/// whose extensions are of every kind; or hostile JSON.
fn twin_record() -> impl Strategy<Value = String> {
    let certname = prop_oneof![3 => "[a-z_]{1,8}\\.example\\.com", 1 => hostile_string()];
    let facts = proptest::collection::btree_map(twin_key(), twin_fact(), 0..8);
    let extension = prop_oneof![
        Just("pp_role".to_owned()),
        Just("pp_preshared_key".to_owned()),
        Just("pp_auth_role".to_owned()),
        "1\\.3\\.6\\.1\\.4\\.1\\.34380\\.1\\.[123]\\.[0-9]{1,3}",
        json_key(),
    ];
    let extensions = proptest::collection::btree_map(
        extension,
        prop_oneof!["[a-z]{1,8}", hostile_string()],
        0..4,
    );
    let environment = prop_oneof!["[a-z_]{1,10}", hostile_string()];
    let record = (certname, environment, facts, extensions, any::<bool>()).prop_map(
        |(certname, environment, facts, extensions, factset)| {
            let trusted = serde_json::json!({ "extensions": extensions });
            if factset {
                let mut data: Vec<Value> = facts
                    .into_iter()
                    .map(|(name, value)| serde_json::json!({ "name": name, "value": value }))
                    .collect();
                data.push(serde_json::json!({ "name": "trusted", "value": trusted }));
                serde_json::json!({ "certname": certname, "environment": environment, "facts": { "data": data } })
            } else {
                serde_json::json!({ "certname": certname, "environment": environment, "facts": facts, "trusted": trusted })
            }
            .to_string()
        },
    );
    prop_oneof![4 => record, 1 => json_text()]
}

fn twin_identities(text: &str) -> Option<Result<Vec<clone_army::twin::Identity>, String>> {
    serde_json::from_str::<Value>(text)
        .ok()
        .map(|json| clone_army::twin::document::identities(&json))
}

/// Whether any key, at any depth, names a secret.
fn holds_secret_key(value: &Value) -> bool {
    let secret = |key: &str| {
        let lower = key.to_ascii_lowercase();
        clone_army::twin::facts::SECRET_WORDS
            .iter()
            .any(|word| lower.contains(word))
    };
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, inner)| secret(key) || holds_secret_key(inner)),
        Value::Array(items) => items.iter().any(holds_secret_key),
        _ => false,
    }
}

#[test]
fn the_twin_record_generator_gives_records_taken_refused_and_trimmed() {
    assert_both_sides(
        "twin records taken",
        &twin_record(),
        |text| matches!(twin_identities(text), Some(Ok(_))),
        25,
    );
    assert_reaches(
        "twin records taken with something left out",
        &twin_record(),
        |text| matches!(twin_identities(text), Some(Ok(ids)) if ids.iter().any(|id| !id.dropped.is_empty())),
        25,
    );
}

proptest! {
    #![proptest_config(config())]

    /// What a twin takes from a hostile record is never a secret-named key at any depth,
    /// a fact the agent sets, an authorization extension, or a name that is not a host
    /// name; and reading it neither panics nor grows.
    #[test]
    fn a_hostile_twin_record_gives_nothing_a_twin_must_not_take(text in twin_record()) {
        let (peak, read) = peak_of(|| twin_identities(&text));
        assert_within_budget("twin::document::identities", text.len(), peak);
        for identity in read.and_then(Result::ok).unwrap_or_default() {
            prop_assert!(clone_army::twin::is_node_name(&identity.node), "{:?}", identity.node);
            prop_assert!(!holds_secret_key(&Value::Object(identity.facts.clone())), "{:?}", identity.facts);
            for fact in clone_army::twin::facts::AGENT_FACTS {
                prop_assert!(!identity.facts.contains_key(fact));
            }
            for key in identity.extensions.keys() {
                prop_assert!(clone_army::twin::extensions::canonical(key).as_deref() == Ok(key.as_str()), "{key}");
                prop_assert!(key != "pp_preshared_key" && !key.starts_with("1.3.6.1.4.1.34380.1.3."), "{key}");
            }
            if let Some(env) = &identity.environment {
                prop_assert!(env.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'), "{env:?}");
            }
        }
    }
}
