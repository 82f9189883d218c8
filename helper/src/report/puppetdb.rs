//! PuppetDB's view: its command queue while the fleet loads the server.
//!
//! The server hands PuppetDB one command per fact set, catalog and report; when PuppetDB
//! cannot keep up, its queue grows and the stack is past what it sustains, whatever the
//! agents' run times say. Asked over TLS with a client certificate (PuppetDB's TLS port
//! takes only certificates signed by the Puppet CA):
//! - `GET /status/v1/services/puppetdb-status?level=debug`: `state`, `service_version` and
//!   `status.queue_depth`;
//! - `GET /metrics/v2/read/puppetlabs.puppetdb.mq:name=global.processed` (a meter:
//!   `Count`, `OneMinuteRate` per second) and `...name=global.processing-time` (a timer:
//!   `Mean`, `95thPercentile`, `Max` in milliseconds), Jolokia answers with the figures
//!   under `value`.
//!
//! - then the fleet across load hosts from its query API (see [`puppetdb_fleet`]).
//!
//! Like the server's, this section never fails the report: what did not answer is its
//! `error` (the status), `metrics_error` (the metrics alone) or `fleet_error` (the
//! queries).

use std::path::{Path, PathBuf};

pub use crate::protocol::answers::{CommandMetrics, PuppetdbView};
use crate::report::deadline::Deadline;
use crate::report::https::{self, ClientIdentity};
use crate::report::server::Figure;
use crate::report::{kept, puppetdb_fleet};
use serde_json::Value;

/// PuppetDB's default TLS port, for a `--puppetdb` given as a bare host name.
pub const DEFAULT_PORT: u16 = 8081;
pub const STATUS_PATH: &str = "/status/v1/services/puppetdb-status?level=debug";
/// The MBean names' `:` goes percent-encoded, which PuppetDB decodes; some servers and
/// proxies refuse a bare `:` in a path.
pub const PROCESSED_PATH: &str = "/metrics/v2/read/puppetlabs.puppetdb.mq%3Aname=global.processed";
pub const PROCESSING_TIME_PATH: &str =
    "/metrics/v2/read/puppetlabs.puppetdb.mq%3Aname=global.processing-time";
/// The most of the status answer read: PuppetDB's is under 1 KiB.
pub const MAX_STATUS_BYTES: u64 = 64 * 1024;
/// The most of one Jolokia metric's answer read: an MBean's figures, under 1 KiB.
pub const MAX_METRIC_BYTES: u64 = 64 * 1024;

/// `--puppetdb` as the base URL the paths above go under. A bare host (or `host:port`)
/// means `https://host:8081`; a path given is dropped, since PuppetDB serves its APIs at
/// the root. Only `https` is taken.
pub fn base_url(puppetdb: &str) -> Result<String, String> {
    let puppetdb = puppetdb.trim();
    let with_scheme = if puppetdb.contains("://") {
        puppetdb.to_owned()
    } else if puppetdb.contains(':') {
        format!("https://{puppetdb}")
    } else {
        format!("https://{puppetdb}:{DEFAULT_PORT}")
    };
    let Some(rest) = with_scheme.strip_prefix("https://") else {
        return Err(
            "only https:// is supported: PuppetDB's metrics and queries need its TLS port"
                .to_owned(),
        );
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err("no host".to_owned());
    }
    Ok(format!("https://{authority}"))
}

/// Where the request's TLS files are: the CA (given or the agent's) and the client
/// certificate (given, or the host agent's own).
pub struct Credentials<'a> {
    pub ca_cert: Option<&'a Path>,
    pub client: Option<ClientIdentity>,
}

/// One PuppetDB as it is asked: its base URL, the CA it is verified against and the
/// client certificate it is asked with, each as the answer shows it too.
pub struct Client {
    pub base: String,
    pub ca: https::CaCert,
    pub identity: ClientIdentity,
    /// The client certificate's path as the answer shows it.
    pub shown_cert: String,
}

impl Client {
    /// `puppetdb` (as [`base_url`] takes it) with the given CA and client certificate, or
    /// else the host agent's, which `host_path` maps to where the helper opens them
    /// (under `CLONE_ARMY_ROOT` in tests); files given are opened as given.
    pub fn new(
        puppetdb: &str,
        credentials: Credentials<'_>,
        host_path: impl Fn(&Path) -> PathBuf,
    ) -> Result<Client, ClientError> {
        let base = base_url(puppetdb)
            .map_err(|e| ClientError::Url(format!("--puppetdb {puppetdb:?} is not usable: {e}")))?;
        let ca = https::ca_cert(credentials.ca_cert, "PuppetDB", &host_path).map_err(|e| {
            ClientError::Tls {
                base: base.clone(),
                ca: None,
                message: e,
            }
        })?;
        let (identity, shown_cert) = match credentials.client {
            Some(given) => {
                let shown = given.cert.display().to_string();
                (given, shown)
            }
            None => match https::agent_identity(
                |p| host_path(p).exists(),
                |dir| file_names(&host_path(dir)),
            ) {
                Ok(found) => (
                    ClientIdentity {
                        cert: host_path(&found.cert),
                        key: host_path(&found.key),
                    },
                    found.cert.display().to_string(),
                ),
                Err(e) => {
                    return Err(ClientError::Tls {
                        base,
                        ca: Some(ca.shown.display().to_string()),
                        message: format!(
                            "PuppetDB takes only a client certificate signed by the Puppet CA: {e}"
                        ),
                    })
                }
            },
        };
        Ok(Client {
            base,
            ca,
            identity,
            shown_cert,
        })
    }

    /// GET `path`, its JSON answer read up to `max_body` bytes, by `deadline`.
    pub fn get(&self, path: &str, max_body: u64, deadline: &Deadline) -> Result<Value, String> {
        let url = format!("{}{path}", self.base);
        let (status, body) = https::get(
            &url,
            &self.ca.open,
            Some(&self.identity),
            deadline,
            max_body,
        )?;
        serde_json::from_str::<Value>(&body)
            .map_err(|e| format!("GET {url}: HTTP {status} with something that is not JSON: {e}"))
    }

    /// One PQL query (a POST to [`puppetdb_fleet::QUERY_PATH`]), its JSON answer read up
    /// to `max_body` bytes, by `deadline`; an answer other than 200 is an error quoting
    /// the start of its first line.
    pub fn query(&self, pql: &str, max_body: u64, deadline: &Deadline) -> Result<Value, String> {
        let url = format!("{}{}", self.base, puppetdb_fleet::QUERY_PATH);
        let (status, body) = https::post_json(
            &url,
            &puppetdb_fleet::query_body(pql),
            &self.ca.open,
            Some(&self.identity),
            deadline,
            max_body,
        )?;
        if status != 200 {
            let first = body.lines().next().unwrap_or_default();
            return Err(format!(
                "POST {url} ({pql}) answered HTTP {status}: {}",
                first.chars().take(300).collect::<String>()
            ));
        }
        serde_json::from_str::<Value>(&body)
            .map_err(|e| format!("POST {url}: HTTP {status} with something that is not JSON: {e}"))
    }
}

/// Why a [`Client`] could not be made: the URL, or the TLS files (with what was found
/// by then, for the view).
#[derive(Debug)]
pub enum ClientError {
    Url(String),
    Tls {
        base: String,
        ca: Option<String>,
        message: String,
    },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Url(message) | ClientError::Tls { message, .. } => f.write_str(message),
        }
    }
}

/// Asks PuppetDB, every request by `deadline`, and summarises its answers. Never fails:
/// errors land in the view.
pub fn fetch(
    puppetdb: &str,
    credentials: Credentials<'_>,
    fleet: Option<FleetClock>,
    deadline: &Deadline,
    host_path: impl Fn(&Path) -> PathBuf,
) -> PuppetdbView {
    let mut view = PuppetdbView::empty(puppetdb.to_owned());
    let client = match Client::new(puppetdb, credentials, host_path) {
        Ok(client) => client,
        Err(ClientError::Url(e)) => {
            view.error = Some(e);
            return view;
        }
        Err(ClientError::Tls { base, ca, message }) => {
            view.url = base;
            view.ca_cert = ca;
            view.error = Some(message);
            return view;
        }
    };
    view.url = client.base.clone();
    view.ca_cert = Some(client.ca.shown.display().to_string());
    view.client_cert = Some(client.shown_cert.clone());
    match client.get(STATUS_PATH, MAX_STATUS_BYTES, deadline) {
        Ok(status) => {
            view.ok = true;
            (view.version, view.state, view.queue_depth) = status_fields(&status);
        }
        Err(e) => {
            view.error = Some(e);
            return view;
        }
    }
    match client
        .get(PROCESSED_PATH, MAX_METRIC_BYTES, deadline)
        .and_then(|processed| {
            client
                .get(PROCESSING_TIME_PATH, MAX_METRIC_BYTES, deadline)
                .map(|time| commands(&processed, &time))
        }) {
        Ok(Ok(commands)) => view.commands = Some(commands),
        Ok(Err(e)) | Err(e) => view.metrics_error = Some(e),
    }
    if let Some(clock) = fleet {
        let query = |pql: &str, max_body: u64| client.query(pql, max_body, deadline);
        match puppetdb_fleet::fleet(query, clock.now, clock.interval) {
            Ok(found) => view.fleet = Some(found),
            Err(e) => view.fleet_error = Some(e),
        }
    }
    view
}

/// What the fleet's figures are taken against: the report's time and run interval.
/// Without one, `fetch` leaves the fleet out (the recorder asks only for the queue).
#[derive(Debug, Clone, Copy)]
pub struct FleetClock {
    pub now: u64,
    pub interval: u64,
}

fn file_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

impl PuppetdbView {
    fn empty(url: String) -> Self {
        PuppetdbView {
            url,
            ok: false,
            error: None,
            ca_cert: None,
            client_cert: None,
            version: None,
            state: None,
            queue_depth: None,
            commands: None,
            metrics_error: None,
            fleet: None,
            fleet_error: None,
        }
    }
}

/// Version, state and queue depth from the `puppetdb-status` service's answer, the
/// texts kept as [`kept`] says.
pub fn status_fields(status: &Value) -> (Option<String>, Option<String>, Option<Figure>) {
    let text = |key: &str| status.get(key).and_then(Value::as_str);
    let queue_depth = status
        .get("status")
        .and_then(|s| s.get("queue_depth"))
        .and_then(Value::as_number)
        .cloned();
    (
        text("service_version").map(kept::version),
        text("state").map(kept::service),
        queue_depth,
    )
}

/// The figures under a Jolokia answer's `value`, or why there are none (Jolokia says
/// `status` and `error` in the body, whatever the HTTP status).
fn jolokia_value(answer: &Value) -> Result<&Value, String> {
    match answer.get("value") {
        Some(value) if value.is_object() => Ok(value),
        _ => Err(kept::error(&format!(
            "PuppetDB's metrics answered without figures (status {}): {}",
            answer
                .get("status")
                .map_or("-".to_owned(), Value::to_string),
            answer
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("no error given")
        ))),
    }
}

/// The command figures from the `global.processed` meter and `global.processing-time` timer.
pub fn commands(processed: &Value, processing_time: &Value) -> Result<CommandMetrics, String> {
    let processed = jolokia_value(processed)?;
    let time = jolokia_value(processing_time)?;
    let figure = |v: &Value, key: &str| -> Option<Figure> { v.get(key)?.as_number().cloned() };
    Ok(CommandMetrics {
        processed: figure(processed, "Count"),
        processed_per_second: figure(processed, "OneMinuteRate"),
        processing_mean_ms: figure(time, "Mean"),
        processing_p95_ms: figure(time, "95thPercentile"),
        processing_max_ms: figure(time, "Max"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PuppetDB 8.4's answers (Debian 13), see fixtures/README.md.
    const PROCESSED: &str = include_str!("fixtures/puppetdb-8-processed.json");
    const PROCESSING_TIME: &str = include_str!("fixtures/puppetdb-8-processing-time.json");
    const CLOCK: FleetClock = FleetClock {
        now: 1_795_145_400,
        interval: 1800,
    };

    #[test]
    fn base_urls() {
        assert_eq!(
            base_url("puppetdb.example.com").unwrap(),
            "https://puppetdb.example.com:8081"
        );
        assert_eq!(
            base_url("127.0.0.1:8091").unwrap(),
            "https://127.0.0.1:8091"
        );
        assert_eq!(
            base_url("https://puppet:8081/pdb/query/v4").unwrap(),
            "https://puppet:8081"
        );
        assert!(base_url("http://puppet:8080")
            .unwrap_err()
            .contains("https"));
        assert!(base_url("https:///x").is_err());
    }

    #[test]
    fn command_figures_come_from_the_meter_and_the_timer() {
        let processed: Value = serde_json::from_str(PROCESSED).unwrap();
        let time: Value = serde_json::from_str(PROCESSING_TIME).unwrap();
        let c = commands(&processed, &time).unwrap();
        assert_eq!(
            c.processed.as_ref().unwrap().as_u64(),
            processed["value"]["Count"].as_u64()
        );
        assert!(c.processed.as_ref().unwrap().as_u64().unwrap() > 0);
        assert_eq!(
            c.processed_per_second.as_ref().unwrap().as_f64(),
            processed["value"]["OneMinuteRate"].as_f64()
        );
        assert_eq!(
            c.processing_mean_ms.as_ref().unwrap().as_f64(),
            time["value"]["Mean"].as_f64()
        );
        assert_eq!(
            c.processing_p95_ms.as_ref().unwrap().as_f64(),
            time["value"]["95thPercentile"].as_f64()
        );
        assert_eq!(
            c.processing_max_ms.as_ref().unwrap().as_f64(),
            time["value"]["Max"].as_f64()
        );
    }

    #[test]
    fn version_state_and_queue_depth_come_from_the_status() {
        let status: Value =
            serde_json::from_str(include_str!("fixtures/puppetdb-8-status-debug.json")).unwrap();
        let (version, state, queue_depth) = status_fields(&status);
        assert_eq!(version.as_deref(), Some("8.4.1"));
        assert_eq!(state.as_deref(), Some("running"));
        assert_eq!(queue_depth, Some(0.into()));
        assert_eq!(status_fields(&serde_json::json!({})), (None, None, None));
    }

    /// PuppetDB is a server under test too: its version, state and Jolokia's error go
    /// into every timeline line, so a MiB of any of them is kept cut.
    #[test]
    fn a_puppetdb_version_state_and_error_of_1_mib_are_kept_cut() {
        let huge = "9".repeat(1 << 20);
        let status = serde_json::json!({"service_version": huge, "state": huge});
        let (version, state, _) = status_fields(&status);
        assert_eq!(version.unwrap().chars().count(), kept::MAX_VERSION_CHARS);
        assert_eq!(state.unwrap().chars().count(), kept::MAX_SERVICE_CHARS);
        let denied = serde_json::json!({"status": huge, "error": huge});
        let time: Value = serde_json::from_str(PROCESSING_TIME).unwrap();
        let e = commands(&denied, &time).unwrap_err();
        assert!(e.chars().count() <= kept::MAX_ERROR_CHARS, "{}", e.len());
    }

    #[test]
    fn a_jolokia_error_is_said() {
        let denied = serde_json::json!({"status": 403, "error": "access denied"});
        let time: Value = serde_json::from_str(PROCESSING_TIME).unwrap();
        let e = commands(&denied, &time).unwrap_err();
        assert!(e.contains("403") && e.contains("access denied"), "{e}");
    }

    #[test]
    fn without_a_client_certificate_nothing_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, include_str!("fixtures/ca.pem")).unwrap();
        let view = fetch(
            "https://127.0.0.1:1",
            Credentials {
                ca_cert: Some(&ca),
                client: None,
            },
            Some(CLOCK),
            &Deadline::after(https::HTTP_TIMEOUT),
            |p| dir.path().join(p.strip_prefix("/").unwrap()),
        );
        assert!(!view.ok);
        let error = view.error.unwrap();
        assert!(error.contains("--client-cert"), "{error}");
        assert_eq!(view.url, "https://127.0.0.1:1");
    }

    #[test]
    fn a_puppetdb_that_does_not_answer_is_an_error_in_the_view() {
        let dir = tempfile::tempdir().unwrap();
        let ssl = dir.path().join("var/lib/puppet/ssl");
        std::fs::create_dir_all(ssl.join("certs")).unwrap();
        std::fs::create_dir_all(ssl.join("private_keys")).unwrap();
        std::fs::write(ssl.join("certs/ca.pem"), include_str!("fixtures/ca.pem")).unwrap();
        std::fs::write(ssl.join("certs/load1.pem"), include_str!("fixtures/ca.pem")).unwrap();
        std::fs::write(ssl.join("private_keys/load1.pem"), "not a key").unwrap();
        let view = fetch(
            "127.0.0.1:1",
            Credentials {
                ca_cert: None,
                client: None,
            },
            Some(CLOCK),
            &Deadline::after(https::HTTP_TIMEOUT),
            |p| dir.path().join(p.strip_prefix("/").unwrap()),
        );
        assert!(!view.ok);
        assert_eq!(
            view.ca_cert.as_deref(),
            Some("/var/lib/puppet/ssl/certs/ca.pem")
        );
        assert_eq!(
            view.client_cert.as_deref(),
            Some("/var/lib/puppet/ssl/certs/load1.pem")
        );
        let error = view.error.unwrap();
        assert!(error.contains("client key"), "{error}");
    }
}
