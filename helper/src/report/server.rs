//! The server's view: Puppet Server's status API, `GET /status/v1/services?level=debug`.
//!
//! The shape (Puppet Server 7; Puppet Enterprise prefixes the service names with `pe-`):
//! `jruby-metrics` → `status.experimental.metrics` holds the JRuby pool (`num-jrubies`,
//! `num-free-jrubies`, `borrow-count`, `average-borrow-time`, `average-wait-time`, ... in
//! milliseconds); `master` → `status.experimental.http-metrics` is a list of routes
//! (`route-id`, `count`, `mean`, `aggregate`; `total` for all of them);
//! `puppet-profiler` → `status.experimental.catalog-metrics` is a list of profiler metrics
//! (`metric`, `count`, `mean`, `aggregate`) of which `compile` is the catalog compile.
//!
//! The server section never fails the report: a server that does not answer, a TLS
//! failure or an answer that is not JSON is the section's `error`, and the fleet part of
//! the report stands. TLS is always verified, against the Puppet CA only.

use std::path::{Path, PathBuf};

pub use crate::protocol::answers::{Figure, JrubyMetrics, ServerView, Timing};
use crate::report::deadline::Deadline;
use crate::report::{https, kept};
use serde_json::Value;

/// Puppet Server's default port, for a `--server` given as a bare host name.
pub const DEFAULT_PORT: u16 = 8140;
pub const STATUS_PATH: &str = "/status/v1/services?level=debug";
/// The most of a status answer read. Puppet Server's, at `level=debug`, is some tens of
/// KiB (its lists of functions and resource types grow with the code it compiles).
pub const MAX_STATUS_BYTES: u64 = 8 * 1024 * 1024;

/// `--server` as a full URL of the status endpoint. A bare host (or `host:port`) means
/// `https://host:8140`; a URL without a path gets the status path. Only `https` is taken.
pub fn status_url(server: &str) -> Result<String, String> {
    let server = server.trim();
    let with_scheme = if server.contains("://") {
        server.to_owned()
    } else if server.contains(':') {
        format!("https://{server}")
    } else {
        format!("https://{server}:{DEFAULT_PORT}")
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
        });
    let profiler = service(json, "puppet-profiler");
    let compile = timing_where(
        profiler.and_then(|s| experimental(s, "catalog-metrics")),
        "metric",
        "compile",
    );
    let http = service(json, "master").and_then(|s| experimental(s, "http-metrics"));
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
