//! The server's view: Puppet Server's status API, `GET /status/v1/services?level=debug`.
//!
//! The shape (Puppet Server 7 and 8; Puppet Enterprise prefixes the service names with
//! `pe-`; Puppet Server 8 answers the HTTP metrics under `server` as well as `master`):
//! `jruby-metrics` → `status.experimental.metrics` holds the JRuby pool (`num-jrubies`,
//! `num-free-jrubies`, `borrow-count`, `borrow-timeout-count`, `queue-limit-hit-count`,
//! `requested-instances` (a list of the requests waiting), `average-borrow-time`,
//! `average-wait-time`, ... in milliseconds); `master` → `status.experimental.http-metrics`
//! is a list of routes (`route-id`, `count`, `mean`, `aggregate`; `total` for all of them);
//! `puppet-profiler` → `status.experimental.catalog-metrics` is a list of profiler metrics
//! (`metric`, `count`, `mean`, `aggregate`) of which `compile` is the catalog compile;
//! `status-service` → `status.experimental.jvm-metrics` holds the JVM's heap, its
//! collectors' `gc-stats` and its `cpu-usage`.
//!
//! What the counts mean (puppetserver's `jruby_metrics_core.clj`, trapperkeeper-comidi-
//! metrics' `puppetlabs.metrics.http`, trapperkeeper-status' `status_core.clj`): every
//! `count` is since the server started; every `mean` and `average-*` is the mean of a
//! Dropwizard timer's default reservoir, a decaying sample weighted to about the last
//! five minutes, so neither a since-start mean nor one of any window, and `aggregate` is
//! that mean times the count, no sum of anything. A window's figures are the counts'
//! differences between two answers (the recorder's `server_window`); per-request times
//! of a window come from the access log.
//!
//! The server section never fails the report: a server that does not answer, a TLS
//! failure or an answer that is not JSON is the section's `error`, and the fleet part of
//! the report stands. TLS is always verified, against the Puppet CA only.

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

pub use crate::protocol::answers::{Figure, JrubyMetrics, JvmMetrics, ServerView, Timing};
use crate::report::deadline::Deadline;
use crate::report::{endpoints, https, kept};
use crate::sys::names::DEFAULT_SERVER_PORT;
use serde_json::Value;

pub const STATUS_PATH: &str = "/status/v1/services?level=debug";
/// The most of a status answer read. Puppet Server's, at `level=debug`, is some tens of
/// KiB (its lists of functions and resource types grow with the code it compiles).
pub const MAX_STATUS_BYTES: u64 = 8 * 1024 * 1024;

/// `--server` as a full URL of the status endpoint. A bare host (or `host:port`) means
/// `https://host:8140` ([`DEFAULT_SERVER_PORT`]); a URL without a path gets the status path. Only `https` is taken.
pub fn status_url(server: &str) -> Result<String, String> {
    let server = server.trim();
    let with_scheme = if server.contains("://") {
        server.to_owned()
    } else if server.contains(':') {
        format!("https://{server}")
    } else {
        format!("https://{server}:{DEFAULT_SERVER_PORT}")
    };
    let Some(rest) = with_scheme.strip_prefix("https://") else {
        return Err("only https:// is supported: Puppet Server speaks TLS".to_owned());
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if authority.is_empty() {
        return Err("no host".to_owned());
    }
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        Ok(format!("https://{authority}{STATUS_PATH}"))
    } else {
        Ok(format!("https://{authority}{path}"))
    }
}

/// Asks the server, by `deadline`, and summarises its answer. Never fails: errors land in
/// the view.
///
/// `host_path` maps a host file the helper reads by default (the agent's CA) to where it
/// opens it (under `CLONE_ARMY_ROOT` in tests); a `--ca-cert` given is opened as given.
pub fn fetch(
    server: &str,
    ca_cert: Option<&Path>,
    deadline: &Deadline,
    host_path: impl Fn(&Path) -> PathBuf,
) -> ServerView {
    let mut view = ServerView::empty(server.to_owned());
    let url = match status_url(server) {
        Ok(url) => url,
        Err(e) => {
            view.error = Some(format!("--server {server:?} is not usable: {e}"));
            return view;
        }
    };
    view.url = url.clone();
    let ca = match https::ca_cert(ca_cert, "the server", host_path) {
        Ok(ca) => ca,
        Err(e) => {
            view.error = Some(e);
            return view;
        }
    };
    view.ca_cert = Some(ca.shown.display().to_string());
    match https::get(&url, &ca.open, None, deadline, MAX_STATUS_BYTES) {
        Ok((status, body)) => {
            view.http_status = Some(status);
            match serde_json::from_str::<Value>(&body) {
                Ok(json) => {
                    let parsed = summarise(&json);
                    view.ok = true;
                    view.version = parsed.version;
                    view.states = parsed.states;
                    view.jruby = parsed.jruby;
                    view.compile = parsed.compile;
                    view.catalog_requests = parsed.catalog_requests;
                    view.all_requests = parsed.all_requests;
                    view.endpoints = parsed.endpoints;
                    view.jvm = parsed.jvm;
                    view.raw = Some(json);
                }
                Err(e) => {
                    view.error = Some(format!(
                        "the server answered HTTP {status} with something that is not JSON: {e}"
                    ));
                }
            }
        }
        Err(e) => view.error = Some(e),
    }
    view
}

impl ServerView {
    fn empty(url: String) -> Self {
        ServerView {
            url,
            ok: false,
            error: None,
            ca_cert: None,
            http_status: None,
            version: None,
            states: Default::default(),
            jruby: None,
            compile: None,
            catalog_requests: None,
            all_requests: None,
            endpoints: None,
            jvm: None,
            raw: None,
        }
    }
}

/// The named fields of a status answer.
#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    pub version: Option<String>,
    pub states: std::collections::BTreeMap<String, String>,
    pub jruby: Option<JrubyMetrics>,
    pub compile: Option<Timing>,
    pub catalog_requests: Option<Timing>,
    pub all_requests: Option<Timing>,
    pub endpoints: Option<BTreeMap<String, Timing>>,
    pub jvm: Option<JvmMetrics>,
}

/// The service under its open-source or its Puppet Enterprise name.
fn service<'a>(json: &'a Value, name: &str) -> Option<&'a Value> {
    json.get(name).or_else(|| json.get(format!("pe-{name}")))
}

fn experimental<'a>(service: &'a Value, key: &str) -> Option<&'a Value> {
    service.get("status")?.get("experimental")?.get(key)
}

fn number(value: &Value, key: &str) -> Option<Figure> {
    value.get(key).and_then(Value::as_number).cloned()
}

fn timing_where(list: Option<&Value>, key: &str, wanted: &str) -> Option<Timing> {
    list?
        .as_array()?
        .iter()
        .find(|entry| entry.get(key).and_then(Value::as_str) == Some(wanted))
        .map(|entry| Timing {
            count: number(entry, "count"),
            mean_ms: number(entry, "mean"),
        })
}

/// The named fields of a status answer. The services' names and states are kept as
/// [`kept`] says (at most [`kept::MAX_SERVICES`] of them, by name): they go into every
/// timeline line.
pub fn summarise(json: &Value) -> Summary {
    let states = json
        .as_object()
        .map(|services| {
            services
                .iter()
                .filter_map(|(name, s)| {
                    s.get("state")
                        .and_then(Value::as_str)
                        .map(|state| (kept::service(name), kept::service(state)))
                })
                .take(kept::MAX_SERVICES)
                .collect()
        })
        .unwrap_or_default();
    let jruby = service(json, "jruby-metrics")
        .and_then(|s| experimental(s, "metrics"))
        .map(|m| JrubyMetrics {
            num_jrubies: number(m, "num-jrubies"),
            num_free_jrubies: number(m, "num-free-jrubies"),
            borrow_count: number(m, "borrow-count"),
            borrow_timeout_count: number(m, "borrow-timeout-count"),
            average_borrow_time_ms: number(m, "average-borrow-time"),
            average_wait_time_ms: number(m, "average-wait-time"),
            average_free_jrubies: number(m, "average-free-jrubies"),
            average_requested_jrubies: number(m, "average-requested-jrubies"),
            requested_count: number(m, "requested-count"),
            return_count: number(m, "return-count"),
            borrow_retry_count: number(m, "borrow-retry-count"),
            queue_limit_hit_count: number(m, "queue-limit-hit-count"),
            queued: m
                .get("requested-instances")
                .and_then(Value::as_array)
                .map(|waiting| Figure::from(waiting.len())),
        });
    let profiler = service(json, "puppet-profiler");
    let compile = timing_where(
        profiler.and_then(|s| experimental(s, "catalog-metrics")),
        "metric",
        "compile",
    );
    let http = service(json, "master")
        .or_else(|| service(json, "server"))
        .and_then(|s| experimental(s, "http-metrics"));
    Summary {
        version: service(json, "master")
            .and_then(|s| s.get("service_version"))
            .and_then(Value::as_str)
            .map(kept::version),
        states,
        jruby,
        compile,
        catalog_requests: timing_where(http, "route-id", "puppet-v3-catalog-/*/"),
        all_requests: timing_where(http, "route-id", "total"),
        endpoints: http.and_then(by_endpoint),
        jvm: service(json, "status-service")
            .and_then(|s| experimental(s, "jvm-metrics"))
            .map(jvm),
    }
}

/// The HTTP metrics' routes by endpoint ([`endpoints::of_route_id`]): counts added up, the
/// mean of routes that share an endpoint weighted by their counts, in whole ms. Only endpoints with
/// requests; a route without a count is left out.
fn by_endpoint(routes: &Value) -> Option<BTreeMap<String, Timing>> {
    let mut sums: BTreeMap<&'static str, (u64, f64)> = BTreeMap::new();
    for route in routes.as_array()? {
        let Some(endpoint) = route
            .get("route-id")
            .and_then(Value::as_str)
            .and_then(endpoints::of_route_id)
        else {
            continue;
        };
        let Some(count) = route.get("count").and_then(Value::as_u64) else {
            continue;
        };
        let mean = route
            .get("mean")
            .and_then(Value::as_f64)
            .filter(|m| m.is_finite() && *m >= 0.0)
            .unwrap_or(0.0);
        let sum = sums.entry(endpoint).or_default();
        sum.0 = sum.0.saturating_add(count);
        sum.1 += count as f64 * mean;
    }
    Some(
        sums.into_iter()
            .filter(|(_, (count, _))| *count > 0)
            .map(|(endpoint, (count, weighted))| {
                let timing = Timing {
                    count: Some(Figure::from(count)),
                    // Whole milliseconds, as the server gives each route's.
                    mean_ms: Some(Figure::from((weighted / count as f64).round() as u64)),
                };
                (endpoint.to_owned(), timing)
            })
            .collect(),
    )
}

/// The JVM's figures; the collectors' counts and times added up (saturating: they are the
/// server's numbers).
fn jvm(metrics: &Value) -> JvmMetrics {
    let heap = metrics.get("heap-memory");
    let heap_figure = |key: &str| heap.and_then(|h| number(h, key));
    let collectors = metrics.get("gc-stats").and_then(Value::as_object);
    let total = |key: &str| {
        collectors.map(|all| {
            let sum = all
                .values()
                .filter_map(|c| c.get(key).and_then(Value::as_u64))
                .fold(0u64, u64::saturating_add);
            Figure::from(sum)
        })
    };
    JvmMetrics {
        heap_used_bytes: heap_figure("used"),
        heap_committed_bytes: heap_figure("committed"),
        heap_max_bytes: heap_figure("max"),
        gc_count: total("count"),
        gc_time_ms: total("total-time-ms"),
        cpu_percent: number(metrics, "cpu-usage"),
        gc_cpu_percent: number(metrics, "gc-cpu-usage"),
        start_time_ms: number(metrics, "start-time-ms"),
        up_time_ms: number(metrics, "up-time-ms"),
        threads: metrics
            .get("threading")
            .and_then(|t| number(t, "thread-count")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped like Puppet Server 7.9's answer to `GET /status/v1/services?level=debug`
    /// (trimmed lists; see fixtures/README.md).
    const STATUS: &str = include_str!("fixtures/puppetserver-7-status-debug.json");

    #[test]
    fn status_urls() {
        assert_eq!(
            status_url("puppet.example.com").unwrap(),
            "https://puppet.example.com:8140/status/v1/services?level=debug"
        );
        assert_eq!(
            status_url("127.0.0.1:8141").unwrap(),
            "https://127.0.0.1:8141/status/v1/services?level=debug"
        );
        assert_eq!(
            status_url("https://puppet:8140/").unwrap(),
            "https://puppet:8140/status/v1/services?level=debug"
        );
        assert_eq!(
            status_url("https://puppet:8140/status/v1/services/jruby-metrics?level=debug").unwrap(),
            "https://puppet:8140/status/v1/services/jruby-metrics?level=debug"
        );
        assert!(status_url("http://puppet:8140").is_err());
        assert!(status_url("https:///x").is_err());
    }

    #[test]
    fn summarises_a_puppet_server_7_answer() {
        let json: Value = serde_json::from_str(STATUS).unwrap();
        let s = summarise(&json);
        assert_eq!(
            s.states.get("jruby-metrics").map(String::as_str),
            Some("running")
        );
        assert_eq!(s.states.len(), 5);
        assert_eq!(s.version.as_deref(), Some("7.9.5"));
        let jruby = s.jruby.unwrap();
        assert_eq!(jruby.num_jrubies, Some(2.into()));
        assert_eq!(jruby.num_free_jrubies, Some(1.into()));
        assert_eq!(jruby.borrow_count, Some(214.into()));
        assert_eq!(jruby.average_borrow_time_ms, Some(412.into()));
        assert_eq!(jruby.average_wait_time_ms, Some(37.into()));
        assert_eq!(jruby.borrow_timeout_count, Some(0.into()));
        let compile = s.compile.unwrap();
        assert_eq!(compile.count, Some(40.into()));
        assert_eq!(compile.mean_ms, Some(1181.into()));
        assert_eq!(s.catalog_requests.unwrap().count, Some(40.into()));
        assert_eq!(s.all_requests.unwrap().count, Some(216.into()));
    }

    /// Puppet Server 8.7's real answer, right after three agents met a queue of one.
    const STATUS_8: &str = include_str!("fixtures/puppetserver-8-status-debug.json");

    #[test]
    fn summarises_a_puppet_server_8_answer_per_endpoint_with_its_jvm() {
        let json: Value = serde_json::from_str(STATUS_8).unwrap();
        let s = summarise(&json);
        assert_eq!(s.version.as_deref(), Some("8.7.0"));
        let jruby = s.jruby.unwrap();
        assert_eq!(jruby.queue_limit_hit_count, Some(3.into()));
        assert_eq!(jruby.borrow_timeout_count, Some(0.into()));
        assert_eq!(jruby.requested_count, Some(124.into()));
        assert_eq!(jruby.return_count, Some(124.into()));
        assert_eq!(jruby.queued, Some(0.into()));
        let endpoints = s.endpoints.unwrap();
        let counts: Vec<(&str, u64)> = endpoints
            .iter()
            .map(|(e, t)| (e.as_str(), t.count.as_ref().unwrap().as_u64().unwrap()))
            .collect();
        assert_eq!(
            counts,
            [
                ("catalog", 6),
                ("file_content", 96),
                ("file_metadatas", 16),
                ("node", 3),
                ("report", 6)
            ]
        );
        assert_eq!(endpoints["catalog"].mean_ms, Some(3298.into()));
        let jvm = s.jvm.unwrap();
        assert_eq!(jvm.heap_used_bytes, Some(275_125_216u64.into()));
        assert_eq!(jvm.heap_max_bytes, Some(1_073_741_824u64.into()));
        // G1 Young 47 + Old 0 + Concurrent 16; 3565 + 0 + 903 ms.
        assert_eq!(jvm.gc_count, Some(63.into()));
        assert_eq!(jvm.gc_time_ms, Some(4468.into()));
        assert_eq!(jvm.start_time_ms, Some(1_795_872_318_400u64.into()));
        assert_eq!(jvm.threads, Some(58.into()));
    }

    /// Routes the server makes up, and counts or means that are no numbers, add no
    /// endpoint and no nonsense.
    #[test]
    fn made_up_routes_fall_under_other_and_bad_figures_are_left_out() {
        let mut routes: Vec<Value> = (0..10_000)
            .map(|i| serde_json::json!({"route-id": format!("made-up-{i}"), "count": 1, "mean": 2}))
            .collect();
        routes.push(serde_json::json!({"route-id": "puppet-v3-node-/*/", "count": "many"}));
        routes
            .push(serde_json::json!({"route-id": "puppet-v3-report-/*/", "count": 2, "mean": -5}));
        let json =
            serde_json::json!({"master": {"status": {"experimental": {"http-metrics": routes}}}});
        let endpoints = summarise(&json).endpoints.unwrap();
        assert_eq!(endpoints.len(), 2, "{endpoints:?}");
        assert_eq!(endpoints["other"].count, Some(10_000.into()));
        assert_eq!(endpoints["other"].mean_ms, Some(2.into()));
        assert_eq!(endpoints["report"].mean_ms, Some(0.into()));
    }

    #[test]
    fn summarises_enterprise_names_and_missing_parts() {
        let json = serde_json::json!({
            "pe-jruby-metrics": {"state": "running",
                "status": {"experimental": {"metrics": {"num-jrubies": 4}}}},
            "status-service": {"state": "running", "status": {}}
        });
        let s = summarise(&json);
        assert_eq!(s.jruby.unwrap().num_jrubies, Some(4.into()));
        assert_eq!(s.compile, None);
        assert_eq!(s.catalog_requests, None);
        assert_eq!(s.version, None, "no master service, no version");
        assert_eq!(summarise(&serde_json::json!([1])), Summary::default());
    }

    /// The server under test answers with ten thousand services of long names and states
    /// and a version of a MiB: what is kept of it, which goes into every timeline line,
    /// stays small.
    #[test]
    fn a_status_answer_of_many_long_services_is_kept_bounded() {
        let mut services = serde_json::Map::new();
        for i in 0..10_000 {
            services.insert(
                format!("service-{i:05}-{}", "n".repeat(1000)),
                serde_json::json!({"state": "s".repeat(1000)}),
            );
        }
        services.insert(
            "master".to_owned(),
            serde_json::json!({"state": "running", "service_version": "8".repeat(1 << 20)}),
        );
        let s = summarise(&Value::Object(services));
        assert_eq!(s.states.len(), kept::MAX_SERVICES);
        for (name, state) in &s.states {
            assert!(name.chars().count() <= kept::MAX_SERVICE_CHARS, "{name}");
            assert!(state.chars().count() <= kept::MAX_SERVICE_CHARS, "{state}");
        }
        let version = s.version.unwrap();
        assert_eq!(version.chars().count(), kept::MAX_VERSION_CHARS);
        assert!(version.ends_with('…'));
    }

    #[test]
    fn a_server_that_does_not_answer_is_an_error_in_the_view() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, include_str!("fixtures/ca.pem")).unwrap();
        // Port 1 on loopback: nobody listens, the connection is refused at once.
        let deadline = Deadline::after(https::HTTP_TIMEOUT);
        let view = fetch("https://127.0.0.1:1", Some(&ca), &deadline, |p| {
            p.to_owned()
        });
        assert!(!view.ok);
        assert_eq!(view.http_status, None);
        let error = view.error.unwrap();
        assert!(error.contains("127.0.0.1:1"), "{error}");
        assert_eq!(
            view.url,
            "https://127.0.0.1:1/status/v1/services?level=debug"
        );

        let missing = fetch("puppet", None, &deadline, |p| {
            dir.path().join(p.strip_prefix("/").unwrap())
        });
        assert!(missing.error.unwrap().contains("--ca-cert"));
        let bad = fetch(
            "https://127.0.0.1:1",
            Some(Path::new("/nonexistent/ca.pem")),
            &deadline,
            |p| p.to_owned(),
        );
        assert!(bad.error.unwrap().contains("/nonexistent/ca.pem"));
    }
}
