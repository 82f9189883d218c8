use std::cell::RefCell;

use serde_json::json;

use super::*;

use super::fake::{facts, reports};

const INTERVAL: u64 = 1800;

/// The moment the fixtures were taken: the newest report's end.
fn fixture_now() -> u64 {
    reports()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| parse_rfc3339(r["end_time"].as_str()?))
        .max()
        .unwrap()
}

#[test]
fn the_queries_are_pql() {
    assert_eq!(
        hosts_query(),
        r#"facts[certname, value] { name = "clone_army" }"#
    );
    assert_eq!(
        reports_query(&["clone1.load1", "clone2.load1"]),
        "reports[certname, status, noop, end_time, puppet_version, configuration_version, \
         metrics] { latest_report? = true and certname in [\"clone1.load1\", \"clone2.load1\"] }"
    );
    let body: Value = serde_json::from_str(&query_body("nodes {}")).unwrap();
    assert_eq!(body, json!({"query": "nodes {}"}));
}

#[test]
fn runs_come_from_the_latest_reports() {
    let answer = reports();
    let runs = report_runs(&answer).unwrap();
    let rows = answer.as_array().unwrap();
    assert_eq!(runs.len(), rows.len());
    for row in rows {
        let run = &runs[row["certname"].as_str().unwrap()];
        let metric = |category: &str, name: &str| {
            row["metrics"]["data"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["category"] == category && m["name"] == name)
                .and_then(|m| m["value"].as_f64())
        };
        assert_eq!(
            run.status.map(RunStatus::as_str),
            row["status"].as_str(),
            "{row}"
        );
        assert_eq!(run.noop, row["noop"].as_bool());
        assert_eq!(
            run.end_time,
            parse_rfc3339(row["end_time"].as_str().unwrap())
        );
        assert!(run.end_time.is_some());
        assert_eq!(run.total_time, metric("time", "total"));
        assert!(run.total_time.is_some());
        assert_eq!(
            run.config_retrieval_time,
            metric("time", "config_retrieval")
        );
        assert_eq!(
            run.failed_resources,
            metric("resources", "failed").map(|v| v as u64)
        );
        assert_eq!(
            run.puppet_version.as_deref(),
            row["puppet_version"].as_str()
        );
        assert_eq!(
            run.config_version.as_deref(),
            row["configuration_version"].as_str()
        );
    }
}

#[test]
fn a_noop_report_puppet_calls_unchanged_would_change_its_out_of_sync_resources() {
    // PuppetDB 8.4's latest report of a clone, made a noop run: Puppet sends such a run
    // as `unchanged`, its pending changes as `noop` events.
    let mut report = reports()[0].clone();
    report["status"] = json!("unchanged");
    report["noop"] = json!(true);
    let metrics = report["metrics"]["data"].as_array_mut().unwrap();
    metrics.retain(|m| !(m["category"] == "resources" && m["name"] == "out_of_sync"));
    metrics.push(json!({"category": "events", "name": "noop", "value": 85}));
    metrics.push(json!({"category": "resources", "name": "out_of_sync", "value": 85}));
    let certname = report["certname"].as_str().unwrap().to_owned();
    let runs = report_runs(&json!([report])).unwrap();
    assert_eq!(runs[&certname].status, Some(RunStatus::WouldChange));
    assert_eq!(runs[&certname].would_change, Some(85));
    assert_eq!(runs[&certname].noop, Some(true));
    // The catalog's size, from the report's own resources metric.
    let total = reports()[0]["metrics"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["category"] == "resources" && m["name"] == "total")
        .and_then(|m| m["value"].as_u64());
    assert!(total.is_some());
    assert_eq!(runs[&certname].resources, total);

    // The fixture's own run, a real one, has nothing pending.
    let real = report_runs(&json!([reports()[0].clone()])).unwrap();
    assert_eq!(real[&certname].would_change, None);
    assert_ne!(real[&certname].status, Some(RunStatus::WouldChange));
}

#[test]
fn a_report_is_read_narrowly() {
    let answer = json!([{
        "certname": "c1.load1",
        "status": "\u{1b}[2Jrooted",
        "end_time": "yesterday",
        "metrics": {"data": [
            {"category": "time", "name": "total", "value": -4.0},
            {"category": "time", "name": "config_retrieval", "value": "1.0"}
        ]}
    }]);
    let runs = report_runs(&answer).unwrap();
    let run = &runs["c1.load1"];
    assert_eq!(run.status, None);
    assert_eq!(run.unknown_status.as_deref(), Some("\u{1b}[2Jrooted"));
    assert_eq!(
        (run.end_time, run.total_time, run.config_retrieval_time),
        (None, None, None)
    );
    let host = LoadHost {
        certname: "load1".to_owned(),
        clones: vec![
            ("c1".to_owned(), "c1.load1".to_owned()),
            ("c2".to_owned(), "c2.load1".to_owned()),
        ],
        error: None,
    };
    let rows = host_runs(&host, &runs, 10_000, INTERVAL);
    assert_eq!(rows[0].run.status, RunStatus::Unreadable);
    assert!(rows[0]
        .error
        .as_deref()
        .unwrap()
        .contains("none Puppet writes"));
    assert_eq!(rows[1].run.status, RunStatus::Never);
    assert!(
        !rows[1].run.silent,
        "no report and no age: never, not silent"
    );
}

#[test]
fn the_fleet_spans_hosts_with_a_breakdown_per_host() {
    let asked = RefCell::new(Vec::new());
    let query = |pql: &str, max_body: u64| -> Result<Value, String> {
        asked.borrow_mut().push(pql.to_owned());
        super::fake::answer(pql, max_body)
    };
    let now = fixture_now();
    let fleet = fleet(query, now, INTERVAL).unwrap();
    let hosts = load_hosts(&facts()).unwrap().hosts;
    let asked = asked.into_inner();
    assert_eq!(
        asked.len(),
        1 + hosts.len(),
        "one facts query, one reports query a host"
    );
    assert_eq!(fleet.hosts.len(), hosts.len());
    let runs = report_runs(&reports()).unwrap();
    let mut total = 0;
    for (got, host) in fleet.hosts.iter().zip(&hosts) {
        assert_eq!(got.host, host.certname);
        assert_eq!(got.clones.len(), host.clones.len());
        assert_eq!(got.fleet.clones, host.clones.len());
        let certnames: Vec<&str> = host.clones.iter().map(|(_, c)| c.as_str()).collect();
        assert!(asked.contains(&reports_query(&certnames)));
        for c in &got.clones {
            match runs.get(&c.certname) {
                Some(run) => {
                    assert_eq!(Some(c.run.status), run.status);
                    assert_eq!(c.run.total_time, run.total_time);
                    assert_eq!(c.run.age, run.end_time.map(|t| now - t));
                }
                None => assert_eq!((c.run.status, c.run.age), (RunStatus::Never, None)),
            }
            assert!(!c.run.silent);
        }
        let reported = got
            .clones
            .iter()
            .filter(|c| c.run.status != RunStatus::Never)
            .count();
        assert_eq!(got.fleet.total_time.count, reported);
        total += got.clones.len();
    }
    assert_eq!(fleet.fleet.clones, total);
    assert!(fleet.fleet.silent.is_empty());
    // Two intervals and a second later, every clone is silent, named by certname.
    let later = super::fleet(
        |pql: &str, _: u64| {
            if pql == hosts_query() {
                Ok(facts())
            } else {
                Ok(reports())
            }
        },
        now + 2 * INTERVAL + 1 + (now - runs.values().filter_map(|r| r.end_time).min().unwrap()),
        INTERVAL,
    )
    .unwrap();
    assert_eq!(later.fleet.silent.len(), runs.len());
    assert!(later.fleet.silent.iter().all(|s| runs.contains_key(s)));
}

#[test]
fn a_failed_reports_query_leaves_the_hosts_clones_never_with_the_error() {
    let fleet = fleet(
        |pql: &str, _: u64| {
            if pql == hosts_query() {
                Ok(facts())
            } else {
                Err("POST https://puppet:8081/pdb/query/v4 answered HTTP 400: bad".to_owned())
            }
        },
        fixture_now(),
        INTERVAL,
    )
    .unwrap();
    assert!(!fleet.hosts.is_empty());
    for host in &fleet.hosts {
        assert!(host.error.as_deref().unwrap().contains("HTTP 400"));
        assert!(host.clones.iter().all(|c| c.run.status == RunStatus::Never));
    }
    let e = super::fleet(|_: &str, _: u64| Err("refused".to_owned()), 0, INTERVAL).unwrap_err();
    assert_eq!(e, "refused");
}

/// A report PuppetDB holds names versions and a status the clone's agent sent: a MiB of
/// each is kept cut.
#[test]
fn versions_and_a_status_of_1_mib_in_a_report_are_kept_cut() {
    let huge = "9".repeat(1 << 20);
    let answer = json!([{
        "certname": "c1.load1",
        "status": huge,
        "puppet_version": huge,
        "configuration_version": huge,
    }]);
    let runs = report_runs(&answer).unwrap();
    let run = &runs["c1.load1"];
    let count = |text: &Option<String>| text.as_deref().unwrap().chars().count();
    assert_eq!(count(&run.puppet_version), kept::MAX_VERSION_CHARS);
    assert_eq!(count(&run.config_version), kept::MAX_VERSION_CHARS);
    assert_eq!(count(&run.unknown_status), kept::MAX_SERVICE_CHARS);
}
