//! Answers along the paths the status and PuppetDB readers walk.
//!
//! A hostile value of any shape almost never holds a reader's key at the depth it looks,
//! so the readers would refuse every answer at their first lookup and their fields would
//! go untested. These answers hold the keys each reader looks up, at their depth, with
//! well-formed figures and texts among hostile ones, and keys left out.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::{hostile_string, json_text, json_value};

/// A value a reader refuses where it wants a figure or a text, or one at the edge of
/// what it takes: the wrong type, a number at the ends of its range or negative, a text
/// that reads as a number, deep nesting, a long text.
fn hostile_leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![
            json!(u64::MAX),
            json!(i64::MIN),
            json!(f64::MAX),
            json!(-1),
            json!(-0.5),
        ]),
        prop::sample::select(vec![
            "NaN",
            "Infinity",
            "-Infinity",
            "1e999",
            "-0",
            "0x1F",
            "12 ms"
        ])
        .prop_map(Value::from),
        hostile_string().prop_map(Value::String),
        (1usize..64).prop_map(|depth| (0..depth).fold(json!(1), |inner, _| json!([inner]))),
        Just(json!({})),
    ]
    .boxed()
}

/// A figure as the servers write them (a count, or a time in milliseconds), or a hostile
/// value in its place.
fn figure() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => prop_oneof![
            (0u64..100_000).prop_map(Value::from),
            (0.0f64..1e6).prop_map(Value::from),
        ],
        1 => hostile_leaf(),
    ]
    .boxed()
}

/// One of `texts`, or a hostile value in its place.
fn text(texts: &[&'static str]) -> BoxedStrategy<Value> {
    prop_oneof![
        3 => prop::sample::select(texts.to_vec()).prop_map(Value::from),
        1 => hostile_leaf(),
    ]
    .boxed()
}

/// A key and its value, or (a fifth of the time) no such key.
type Field = BoxedStrategy<Option<(String, Value)>>;

fn field(key: &'static str, value: BoxedStrategy<Value>) -> Field {
    proptest::option::weighted(0.8, (Just(key.to_owned()), value)).boxed()
}

/// A key always there, and its value.
fn required(key: &'static str, value: BoxedStrategy<Value>) -> Field {
    (Just(key.to_owned()), value).prop_map(Some).boxed()
}

/// An object of `fields` and perhaps a key no reader looks up, or (one time in twenty) a
/// hostile value where the object should be.
fn object(fields: Vec<Field>) -> BoxedStrategy<Value> {
    let object = (
        fields,
        proptest::collection::vec((hostile_string(), hostile_leaf()), 0..2),
    )
        .prop_map(|(fields, others)| {
            Value::Object(
                others
                    .into_iter()
                    .chain(fields.into_iter().flatten())
                    .collect(),
            )
        });
    prop_oneof![19 => object, 1 => hostile_leaf()].boxed()
}

/// `inner` at `path`: objects one in the other, any of which may be hostile instead.
fn along(path: &[&'static str], inner: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    path.iter()
        .rev()
        .fold(inner, |inner, key| object(vec![required(key, inner)]))
}

/// A list of up to `most` entries, or a hostile value where the list should be.
fn list(entry: BoxedStrategy<Value>, most: usize) -> BoxedStrategy<Value> {
    prop_oneof![
        9 => proptest::collection::vec(entry, 0..most).prop_map(Value::Array),
        1 => hostile_leaf(),
    ]
    .boxed()
}

/// An object of figures under `keys`.
fn figures(keys: &[&'static str]) -> BoxedStrategy<Value> {
    object(keys.iter().map(|key| field(key, figure())).collect())
}

/// A service of Puppet Server's status answer under `names`, with its `state`, `fields`
/// and, at `status.experimental.<key>`, `experimental`.
fn status_service(
    names: &[&'static str],
    fields: Vec<Field>,
    key: &'static str,
    experimental: BoxedStrategy<Value>,
) -> Field {
    let mut fields = fields;
    fields.push(field("state", text(&["running", "starting", "error"])));
    fields.push(field("status", along(&["experimental", key], experimental)));
    proptest::option::weighted(
        0.8,
        (
            prop::sample::select(names.to_vec()).prop_map(str::to_owned),
            object(fields),
        ),
    )
    .boxed()
}

/// One timing of a list of them: `id` naming it, `count`, `mean`, `aggregate`.
fn timing(id: &'static str, names: &[&'static str]) -> BoxedStrategy<Value> {
    object(vec![
        field(id, text(names)),
        field("count", figure()),
        field("mean", figure()),
        field("aggregate", figure()),
    ])
}

/// Puppet Server's answer to `/status/v1/services?level=debug` as `server::summarise`
/// walks it (its services under their open-source or Enterprise names).
fn status_answer() -> BoxedStrategy<Value> {
    let jruby = {
        let mut fields: Vec<Field> = [
            "num-jrubies",
            "num-free-jrubies",
            "borrow-count",
            "borrow-timeout-count",
            "average-borrow-time",
            "average-wait-time",
            "average-free-jrubies",
            "average-requested-jrubies",
            "requested-count",
            "return-count",
            "borrow-retry-count",
            "queue-limit-hit-count",
        ]
        .into_iter()
        .map(|key| field(key, figure()))
        .collect();
        fields.push(field("requested-instances", list(hostile_leaf(), 4)));
        object(fields)
    };
    let jvm = object(vec![
        field("heap-memory", figures(&["used", "committed", "max"])),
        field(
            "gc-stats",
            prop_oneof![
                9 => proptest::collection::btree_map(
                    prop_oneof![Just("G1 Young Generation".to_owned()), hostile_string()],
                    figures(&["count", "total-time-ms"]),
                    0..3,
                )
                .prop_map(|all| Value::Object(all.into_iter().collect())),
                1 => hostile_leaf(),
            ]
            .boxed(),
        ),
        field("cpu-usage", figure()),
        field("gc-cpu-usage", figure()),
        field("start-time-ms", figure()),
        field("up-time-ms", figure()),
        field("threading", figures(&["thread-count"])),
    ]);
    let routes = [
        "puppet-v3-catalog-/*/",
        "total",
        "puppet-v3-node-/*/",
        "puppet-v3-report-/*/",
        "puppet-v3-file_content-/*/",
        "made-up",
    ];
    object(vec![
        status_service(
            &["jruby-metrics", "pe-jruby-metrics"],
            vec![],
            "metrics",
            jruby,
        ),
        status_service(
            &["puppet-profiler", "pe-puppet-profiler"],
            vec![],
            "catalog-metrics",
            list(
                timing("metric", &["compile", "find_node", "compile_catalog"]),
                4,
            ),
        ),
        status_service(
            &["master", "server", "pe-master"],
            vec![field("service_version", text(&["8.7.0", "7.9.5"]))],
            "http-metrics",
            list(timing("route-id", &routes), 8),
        ),
        status_service(&["status-service"], vec![], "jvm-metrics", jvm),
    ])
}

/// A status answer as text: hostile or almost JSON ([`json_text`]), or an answer along
/// the paths `summarise` walks.
pub fn status_text() -> impl Strategy<Value = String> {
    prop_oneof![
        json_text(),
        status_answer().prop_map(|answer| answer.to_string())
    ]
}

/// The answers the PuppetDB readers read, each hostile ([`json_value`]) or along the
/// paths its reader walks.
#[derive(Debug, Clone)]
pub struct PuppetdbAnswers {
    /// `puppetdb-status` at level debug, read by `status_fields`.
    pub status: Value,
    /// The `global.processed` meter and the `global.processing-time` timer, read by
    /// `commands`.
    pub processed: Value,
    pub processing_time: Value,
    /// The `clone_army` facts, read by `load_hosts`.
    pub facts: Value,
    /// The latest reports, read by `report_runs`.
    pub reports: Value,
}

impl PuppetdbAnswers {
    pub fn size(&self) -> usize {
        [
            &self.status,
            &self.processed,
            &self.processing_time,
            &self.facts,
            &self.reports,
        ]
        .iter()
        .map(|answer| answer.to_string().len())
        .sum()
    }
}

/// Certnames of nodes that send a `clone_army` fact: load hosts, and a clone of one.
const NODES: [&str; 3] = ["lh1.example.com", "lh2.example.com", "web1.lh1.example.com"];
/// Certnames a fact lists for its clones: clones by the convention or not, and a load
/// host.
const CLONE_CERTNAMES: [&str; 4] = [
    "web1.lh1.example.com",
    "web2.lh1.example.com",
    "db.lh2.example.com",
    "lh2.example.com",
];

/// PuppetDB's `puppetdb-status` answer as `status_fields` reads it.
fn puppetdb_status() -> BoxedStrategy<Value> {
    object(vec![
        field("state", text(&["running", "starting"])),
        field("service_version", text(&["8.4.0", "7.20.1"])),
        field("status", figures(&["queue_depth"])),
    ])
}

/// A Jolokia answer holding an MBean's figures under `keys`, as `commands` reads it
/// (without `value`, hostile or not an object, when it is hostile).
fn jolokia(keys: &[&'static str]) -> BoxedStrategy<Value> {
    object(vec![
        required("value", figures(keys)),
        field("status", figure()),
        field(
            "error",
            text(&["javax.management.InstanceNotFoundException"]),
        ),
    ])
}

/// The answer to the `clone_army` facts query as `load_hosts` reads it: rows of a
/// certname and a fact listing clones' names and certnames.
fn facts_answer() -> BoxedStrategy<Value> {
    let clone_name = prop_oneof![
        3 => prop::sample::select(vec!["web1", "web2", "db"]).prop_map(str::to_owned),
        1 => hostile_string(),
    ];
    let certnames = prop_oneof![
        9 => proptest::collection::btree_map(clone_name, text(&CLONE_CERTNAMES), 1..4)
            .prop_map(|all| Value::Object(all.into_iter().collect())),
        1 => hostile_leaf(),
    ];
    let clones = object(vec![
        field("names", list(text(&["web1", "web2", "db"]), 4)),
        field("certnames", certnames.boxed()),
    ]);
    list(
        object(vec![
            field("certname", text(&NODES)),
            field("value", along(&["clones"], clones)),
        ]),
        6,
    )
}

/// The answer to the latest reports query as `report_runs` reads it.
fn reports_answer() -> BoxedStrategy<Value> {
    let metric = object(vec![
        field("category", text(&["time", "resources", "events"])),
        field(
            "name",
            text(&["total", "config_retrieval", "failed", "out_of_sync", "noop"]),
        ),
        field("value", figure()),
    ]);
    let noop = prop_oneof![any::<bool>().prop_map(Value::Bool), hostile_leaf()];
    list(
        object(vec![
            field("certname", text(&CLONE_CERTNAMES)),
            field(
                "status",
                text(&["changed", "unchanged", "failed", "skipped"]),
            ),
            field("noop", noop.boxed()),
            field(
                "end_time",
                text(&["2026-05-01T12:00:00.000Z", "2026-05-01T12:00:00+01:00"]),
            ),
            field("puppet_version", text(&["8.10.0"])),
            field("configuration_version", text(&["1714564800"])),
            field("metrics", along(&["data"], list(metric, 8))),
        ]),
        6,
    )
}

/// An answer: hostile ([`json_value`]) or, three times in four, `shaped`.
fn hostile_or(shaped: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    prop_oneof![1 => json_value(), 3 => shaped]
}

pub fn puppetdb_answers() -> impl Strategy<Value = PuppetdbAnswers> {
    (
        hostile_or(puppetdb_status()),
        hostile_or(jolokia(&["Count", "OneMinuteRate"])),
        hostile_or(jolokia(&["Mean", "95thPercentile", "Max"])),
        hostile_or(facts_answer()),
        hostile_or(reports_answer()),
    )
        .prop_map(
            |(status, processed, processing_time, facts, reports)| PuppetdbAnswers {
                status,
                processed,
                processing_time,
                facts,
                reports,
            },
        )
}
