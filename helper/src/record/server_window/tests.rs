//! Windows between two of Puppet Server 8.7's real answers (the second as it answered, the
//! first made from it with smaller counts), a restart between them, and a step's totals.

use serde_json::Value;

use super::*;
use crate::report::server::summarise;

const STATUS_8: &str = include_str!("../../report/fixtures/puppetserver-8-status-debug.json");

/// The server's view of an answer.
fn view(json: &Value) -> ServerView {
    let s = summarise(json);
    ServerView {
        url: "https://puppet:8140".to_owned(),
        ok: true,
        error: None,
        ca_cert: None,
        http_status: Some(200),
        version: s.version,
        states: s.states,
        jruby: s.jruby,
        compile: s.compile,
        catalog_requests: s.catalog_requests,
        all_requests: s.all_requests,
        endpoints: s.endpoints,
        jvm: s.jvm,
        raw: None,
    }
}

fn real() -> Value {
    serde_json::from_str(STATUS_8).unwrap()
}

/// Sets the `count` of route `route` in the HTTP metrics.
fn set_route(json: &mut Value, route: &str, count: u64) {
    for service in ["master", "server"] {
        let routes = json[service]["status"]["experimental"]["http-metrics"]
            .as_array_mut()
            .unwrap();
        let entry = routes.iter_mut().find(|r| r["route-id"] == route).unwrap();
        entry["count"] = count.into();
    }
}

fn jruby(json: &mut Value) -> &mut Value {
    &mut json["jruby-metrics"]["status"]["experimental"]["metrics"]
}

fn jvm(json: &mut Value) -> &mut Value {
    &mut json["status-service"]["status"]["experimental"]["jvm-metrics"]
}

/// The answer ten seconds before the real one: 2 catalogs, 20 file contents, 27 requests,
/// 24 borrows, 2 queue-limit refusals and 500 ms of collection fewer.
fn before() -> Value {
    let mut json = real();
    set_route(&mut json, "total", 100);
    set_route(&mut json, "puppet-v3-catalog-/*/", 4);
    set_route(&mut json, "puppet-v3-file_content-/*/", 76);
    set_route(&mut json, "puppet-v3-report-/*/", 6);
    jruby(&mut json)["borrow-count"] = 100.into();
    jruby(&mut json)["queue-limit-hit-count"] = 1.into();
    jvm(&mut json)["gc-stats"]["G1 Young Generation"]["total-time-ms"] = 3065.into();
    json
}

#[test]
fn a_window_is_the_exact_difference_of_two_answers() {
    let w = server(&view(&before()), &view(&real()), 10);
    assert!(!w.restarted);
    assert_eq!(w.requests, Some(27));
    let requests: Vec<(&str, u64)> = w
        .endpoints
        .iter()
        .map(|(name, e)| (name.as_str(), e.requests))
        .collect();
    // The report endpoint had no request in between: it is not listed.
    assert_eq!(requests, [("catalog", 2), ("file_content", 20)]);
    assert_eq!(w.endpoints["catalog"].recent_mean_ms, Some(3298.0));
    let jruby = w.jruby.unwrap();
    assert_eq!(jruby.borrows, Some(24));
    assert_eq!(jruby.queue_limit_hits, Some(2));
    assert_eq!(jruby.borrow_timeouts, Some(0));
    assert_eq!(
        (jruby.instances, jruby.free, jruby.queued),
        (Some(1.0), Some(1.0), Some(0.0))
    );
    let jvm = w.jvm.unwrap();
    assert_eq!(jvm.gc_ms, Some(500));
    assert_eq!(jvm.gc_share, Some(0.05));
    assert_eq!(jvm.heap_max_bytes, Some(1 << 30));
}

/// The server restarted between the samples: its JVM's start time moved and its counts
/// began again. The window holds the counts since the restart, never a wrapped-around
/// difference.
#[test]
fn a_restart_between_two_answers_counts_from_the_restart() {
    let mut after = before();
    set_route(&mut after, "total", 9);
    set_route(&mut after, "puppet-v3-catalog-/*/", 1);
    jruby(&mut after)["borrow-count"] = 7.into();
    jvm(&mut after)["start-time-ms"] = 1_795_873_000_000u64.into();
    let w = server(&view(&real()), &view(&after), 10);
    assert!(w.restarted);
    assert_eq!(w.requests, Some(9));
    assert_eq!(w.endpoints["catalog"].requests, 1);
    assert_eq!(w.jruby.unwrap().borrows, Some(7));

    // Without the JVM's start time, a count that went back says the same.
    let mut no_jvm_before = real();
    let mut no_jvm_after = after.clone();
    no_jvm_before
        .as_object_mut()
        .unwrap()
        .remove("status-service");
    no_jvm_after
        .as_object_mut()
        .unwrap()
        .remove("status-service");
    let w = server(&view(&no_jvm_before), &view(&no_jvm_after), 10);
    assert!(w.restarted);
    assert_eq!(w.requests, Some(9));

    // A restart after which the server already served more than before is still one.
    let mut busy = real();
    set_route(&mut busy, "total", 500);
    jvm(&mut busy)["start-time-ms"] = 1_795_873_000_000u64.into();
    let w = server(&view(&real()), &view(&busy), 10);
    assert!(w.restarted);
    assert_eq!(w.requests, Some(500));
}

#[test]
fn a_figure_either_answer_lacks_is_no_figure() {
    let mut bare = real();
    bare.as_object_mut().unwrap().remove("jruby-metrics");
    let w = server(&view(&bare), &view(&real()), 10);
    let jruby = w.jruby.unwrap();
    assert_eq!(jruby.borrows, None);
    // Gauges need only the later answer.
    assert_eq!(jruby.instances, Some(1.0));
    assert_eq!(server(&view(&real()), &view(&bare), 10).jruby, None);
}

fn puppetdb_view(processed: u64, depth: u64) -> PuppetdbView {
    serde_json::from_value(serde_json::json!({
        "url": "https://puppet:8081", "ok": true, "error": null, "ca_cert": null,
        "client_cert": null, "version": "8.4.1", "state": "running",
        "queue_depth": depth,
        "commands": {"processed": processed, "processed_per_second": 0.5,
            "processing_mean_ms": 12.5, "processing_p95_ms": 30, "processing_max_ms": 40},
        "metrics_error": null, "fleet": null, "fleet_error": null
    }))
    .unwrap()
}

#[test]
fn puppetdb_commands_are_counted_per_window_and_from_a_restart() {
    let w = puppetdb(&puppetdb_view(100, 0), &puppetdb_view(130, 7), 10);
    assert_eq!(
        (w.processed, w.queue_depth, w.restarted),
        (Some(30), Some(7.0), false)
    );
    assert_eq!(w.recent_processing_ms, Some(12.5));
    let w = puppetdb(&puppetdb_view(100, 0), &puppetdb_view(4, 0), 10);
    assert_eq!((w.processed, w.restarted), (Some(4), true));
}

#[test]
fn a_steps_totals_add_its_windows_up() {
    let mut totals = WindowTotals::default();
    let w = server(&view(&before()), &view(&real()), 10);
    let mut access = AccessWindow::default();
    let times = access.endpoints.entry("catalog".to_owned()).or_default();
    for (ms, status) in [(40, 200), (6, 503), (3000, 200)] {
        times.requests += 1;
        times.server_errors += u64::from(status >= 500);
        times.times.record(ms);
    }
    access.requests = 3;
    access.skipped = 1;
    totals.add(
        Some(&w),
        Some(&puppetdb(
            &puppetdb_view(100, 3),
            &puppetdb_view(110, 9),
            10,
        )),
        Some(&access),
    );
    totals.add(
        Some(&w),
        Some(&puppetdb(
            &puppetdb_view(110, 9),
            &puppetdb_view(111, 2),
            10,
        )),
        Some(&access),
    );
    let f = totals.figures();
    assert_eq!(f.seconds, 20);
    assert_eq!(f.queue_limit_hits, Some(4));
    assert_eq!(f.borrow_timeouts, Some(0));
    assert_eq!(f.gc_share, Some(0.05));
    assert_eq!(f.puppetdb_queue_max, Some(9.0));
    assert_eq!(f.puppetdb_processed, Some(11));
    assert_eq!((f.access_log_requests, f.access_log_skipped), (6, 2));
    let catalog = &f.endpoints["catalog"];
    assert_eq!(catalog.requests, Some(4));
    assert_eq!(catalog.logged, Some(6));
    assert_eq!(catalog.server_errors, Some(2));
    assert_eq!(catalog.p50_ms, Some(40));
    // Six requests are too few for a p95: their max is the tail.
    assert_eq!((catalog.p95_ms, catalog.max_ms), (None, Some(3000)));
    assert_eq!(f.endpoints["file_content"].logged, None);
}
