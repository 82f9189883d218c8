//! What each status and PuppetDB reader took of an answer, and what it refused: the two
//! sides the answers' generators must reach.

use serde_json::Value;

use clone_army::report::{puppetdb, puppetdb_fleet, server};

/// Whether `summarise` took any field of a status answer.
pub fn status_read(summary: &server::Summary) -> bool {
    *summary != server::Summary::default()
}

/// Whether a status answer holds, at a key `summarise` looks up, a value it did not take:
/// a state that is no text, a version that is none, a JRuby or JVM figure that is no
/// number, a compile timing without its count.
pub fn status_refused(json: &Value, summary: &server::Summary) -> bool {
    let service = |name: &str| json.get(name).or_else(|| json.get(format!("pe-{name}")));
    let offered_not_taken = |at: Option<&Value>, taken: &[(&str, bool)]| {
        at.is_some_and(|at| {
            taken
                .iter()
                .any(|(key, taken)| at.get(key).is_some() && !taken)
        })
    };
    let states = json.as_object().is_some_and(|all| {
        all.values()
            .any(|s| s.get("state").is_some_and(|v| !v.is_string()))
    });
    let version = offered_not_taken(
        service("master"),
        &[("service_version", summary.version.is_some())],
    );
    let jruby = summary.jruby.as_ref();
    let took = |figure: fn(&server::JrubyMetrics) -> &Option<server::Figure>| {
        jruby.is_some_and(|j| figure(j).is_some())
    };
    let jruby = offered_not_taken(
        service("jruby-metrics").and_then(|s| s.pointer("/status/experimental/metrics")),
        &[
            ("num-jrubies", took(|j| &j.num_jrubies)),
            ("num-free-jrubies", took(|j| &j.num_free_jrubies)),
            ("borrow-count", took(|j| &j.borrow_count)),
            ("borrow-timeout-count", took(|j| &j.borrow_timeout_count)),
            ("average-borrow-time", took(|j| &j.average_borrow_time_ms)),
            ("average-wait-time", took(|j| &j.average_wait_time_ms)),
            ("queue-limit-hit-count", took(|j| &j.queue_limit_hit_count)),
            ("requested-instances", took(|j| &j.queued)),
        ],
    );
    let jvm = summary.jvm.as_ref();
    let took = |figure: fn(&server::JvmMetrics) -> &Option<server::Figure>| {
        jvm.is_some_and(|j| figure(j).is_some())
    };
    let jvm_metrics =
        service("status-service").and_then(|s| s.pointer("/status/experimental/jvm-metrics"));
    let jvm = offered_not_taken(
        jvm_metrics,
        &[
            ("cpu-usage", took(|j| &j.cpu_percent)),
            ("start-time-ms", took(|j| &j.start_time_ms)),
            ("up-time-ms", took(|j| &j.up_time_ms)),
        ],
    ) || offered_not_taken(
        jvm_metrics.and_then(|m| m.get("heap-memory")),
        &[
            ("used", took(|j| &j.heap_used_bytes)),
            ("max", took(|j| &j.heap_max_bytes)),
        ],
    );
    let compile = offered_not_taken(
        service("puppet-profiler")
            .and_then(|s| s.pointer("/status/experimental/catalog-metrics"))
            .and_then(Value::as_array)
            .and_then(|list| {
                list.iter()
                    .find(|m| m.get("metric") == Some(&Value::from("compile")))
            }),
        &[(
            "count",
            summary.compile.as_ref().is_some_and(|c| c.count.is_some()),
        )],
    );
    states || version || jruby || jvm || compile
}

/// Whether `status_fields` took any of PuppetDB's version, state and queue depth.
pub fn puppetdb_status_read(status: &Value) -> bool {
    let (version, state, queue_depth) = puppetdb::status_fields(status);
    version.is_some() || state.is_some() || queue_depth.is_some()
}

/// Whether PuppetDB's status holds a version, state or queue depth not taken.
pub fn puppetdb_status_refused(status: &Value) -> bool {
    let (version, state, queue_depth) = puppetdb::status_fields(status);
    (status.get("service_version").is_some() && version.is_none())
        || (status.get("state").is_some() && state.is_none())
        || (status.pointer("/status/queue_depth").is_some() && queue_depth.is_none())
}

/// The command figures taken, of the five.
pub fn command_figures(processed: &Value, time: &Value) -> usize {
    puppetdb::commands(processed, time).map_or(0, |c| {
        [
            c.processed,
            c.processed_per_second,
            c.processing_mean_ms,
            c.processing_p95_ms,
            c.processing_max_ms,
        ]
        .iter()
        .filter(|f| f.is_some())
        .count()
    })
}

/// Whether the metrics answers are taken with a figure under `value` that is not.
pub fn commands_refused(processed: &Value, time: &Value) -> bool {
    let offered = |answer: &Value, keys: &[&str]| {
        keys.iter()
            .filter(|k| answer.get("value").and_then(|v| v.get(**k)).is_some())
            .count()
    };
    puppetdb::commands(processed, time).is_ok()
        && command_figures(processed, time)
            < offered(processed, &["Count", "OneMinuteRate"])
                + offered(time, &["Mean", "95thPercentile", "Max"])
}

/// Whether `load_hosts` trusted a clone of a load host.
pub fn load_hosts_read(facts: &Value) -> bool {
    puppetdb_fleet::load_hosts(facts)
        .is_ok_and(|found| found.hosts.iter().any(|h| !h.clones.is_empty()))
}

/// Whether `load_hosts` took the answer but refused a claim in it.
pub fn load_hosts_refused(facts: &Value) -> bool {
    puppetdb_fleet::load_hosts(facts).is_ok_and(|found| !found.untrusted.is_empty())
}

/// Whether `report_runs` took a run's status or its total time.
pub fn report_runs_read(reports: &Value) -> bool {
    puppetdb_fleet::report_runs(reports).is_ok_and(|runs| {
        runs.values()
            .any(|run| run.status.is_some() || run.total_time.is_some())
    })
}

/// Whether `report_runs` took the answer but skipped a row, or did not take a row's
/// status, end time, noop or Puppet version (each row read alone, as a later row of the
/// same certname takes the place of an earlier one).
pub fn report_runs_refused(reports: &Value) -> bool {
    let refused = |row: &Value| {
        let runs = puppetdb_fleet::report_runs(&Value::Array(vec![row.clone()]));
        let Some(run) = runs.ok().and_then(|runs| runs.into_values().next()) else {
            return true;
        };
        let offered = |key: &str| row.get(key).is_some();
        (offered("status") && run.status.is_none())
            || (offered("end_time") && run.end_time.is_none())
            || (offered("noop") && run.noop.is_none())
            || (offered("puppet_version") && run.puppet_version.is_none())
    };
    puppetdb_fleet::report_runs(reports).is_ok()
        && reports
            .as_array()
            .is_some_and(|rows| rows.iter().any(refused))
}
