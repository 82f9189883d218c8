//! The report's requests against a hostile service over real TLS on loopback
//! ([`test_tls`]): redirects, answers too large, answers that trickle.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::deadline::Deadline;
use super::https::{self, HTTP_TIMEOUT};
use super::run_cache::RunCache;
use super::test_tls::{Pki, Reply, Witness};
use super::{puppetdb, puppetdb_fleet, report_with, server, test_tls, ReportRequest};
use crate::context::Context;
use crate::sys::paths::Layout;
use crate::systemd::RecordingSystemd;

const GENEROUS: u64 = 1024 * 1024;

fn deadline() -> Deadline {
    Deadline::after(HTTP_TIMEOUT)
}

#[test]
fn a_real_answer_is_read() {
    let pki = Pki::new();
    let service = pki.serve(|request: &test_tls::Request| {
        Reply::json(serde_json::json!({"method": request.method, "body": request.body}).to_string())
    });
    let (status, body) = https::post_json(
        &format!("{}/pdb/query/v4", service.url()),
        r#"{"query": "nodes {}"}"#,
        &pki.ca,
        Some(&pki.client),
        &deadline(),
        GENEROUS,
    )
    .unwrap();
    assert_eq!(status, 200);
    let echoed: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        echoed,
        serde_json::json!({"method": "POST", "body": r#"{"query": "nodes {}"}"#})
    );
}

#[test]
fn a_redirect_to_plain_http_is_not_followed() {
    let pki = Pki::new();
    let elsewhere = Witness::start();
    let location = format!("http://127.0.0.1:{}/", elsewhere.port);
    let service = pki.serve(move |_| Reply::redirect(302, location.as_bytes()));
    let url = format!("{}/status/v1/services?level=debug", service.url());
    let e = https::get(&url, &pki.ca, None, &deadline(), GENEROUS).unwrap_err();
    assert!(
        e.contains("HTTP 302")
            && e.contains(&format!("\"http://127.0.0.1:{}/\"", elsewhere.port))
            && e.contains("not followed"),
        "{e}"
    );
    // Give a follower time to have connected, then make sure none did.
    std::thread::sleep(Duration::from_millis(200));
    assert!(!elsewhere.contacted(), "the redirect was followed");
}

#[test]
fn a_redirect_to_another_https_service_is_not_followed() {
    // Even to a service the same CA vouches for: the helper asks only where it was told.
    let pki = Pki::new();
    let other_asked = Arc::new(AtomicBool::new(false));
    let asked = Arc::clone(&other_asked);
    let other = pki.serve(move |_| {
        asked.store(true, Ordering::SeqCst);
        Reply::json("{}")
    });
    let location = format!("{}/status/v1/services?level=debug", other.url());
    let service = pki.serve(move |_| Reply::redirect(302, location.as_bytes()));
    let e = https::get(&service.url(), &pki.ca, None, &deadline(), GENEROUS).unwrap_err();
    assert!(e.contains("HTTP 302") && e.contains("not followed"), "{e}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !other_asked.load(Ordering::SeqCst),
        "the redirect was followed"
    );
}

#[test]
fn a_redirect_of_a_puppetdb_query_is_not_followed() {
    let pki = Pki::new();
    let elsewhere = Witness::start();
    let location = format!("http://127.0.0.1:{}/pdb/query/v4", elsewhere.port);
    let service = pki.serve(move |_| Reply::redirect(303, location.as_bytes()));
    let url = format!("{}/pdb/query/v4", service.url());
    let e = https::post_json(&url, "{}", &pki.ca, None, &deadline(), GENEROUS).unwrap_err();
    assert!(e.contains("HTTP 303") && e.contains("not followed"), "{e}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!elsewhere.contacted());
}

#[test]
fn a_redirect_with_a_json_body_does_not_pass_for_the_servers_status() {
    let pki = Pki::new();
    let elsewhere = Witness::start();
    let location = format!("http://127.0.0.1:{}/", elsewhere.port);
    let service = pki.serve(move |_| Reply::Answer {
        status: 301,
        headers: vec![("Location".to_owned(), location.clone().into_bytes())],
        body: br#"{"master": {"state": "running"}}"#.to_vec(),
    });
    let view = server::fetch(&service.url(), Some(&pki.ca), &deadline(), |p| p.to_owned());
    assert!(!view.ok, "{view:?}");
    assert_eq!(view.http_status, None);
    assert!(
        view.error.as_deref().unwrap().contains("HTTP 301"),
        "{view:?}"
    );
    assert!(!elsewhere.contacted());
}

#[test]
fn a_redirects_location_is_escaped_and_shortened_in_the_error() {
    let pki = Pki::new();
    // U+009B, the one-character CSI of the C1 controls, sent as its UTF-8 bytes (header
    // values may carry bytes above 0x7f), then a screenful of text.
    let mut location = b"https://127.0.0.1:1/\xc2\x9b2J\"".to_vec();
    location.extend(std::iter::repeat_n(b'a', 1000));
    let service = pki.serve(move |_| Reply::redirect(302, &location));
    let e = https::get(&service.url(), &pki.ca, None, &deadline(), GENEROUS).unwrap_err();
    assert!(!e.chars().any(char::is_control), "{e:?}");
    assert!(e.contains(r#"\u{9b}2J\""#), "{e}");
    assert!(e.len() < 600, "{} bytes: {e}", e.len());
}

#[test]
fn an_answer_larger_than_its_limit_is_refused() {
    let pki = Pki::new();
    let service = pki.serve(|_| Reply::json(vec![b' '; 4096]));
    let e = https::get(&service.url(), &pki.ca, None, &deadline(), 1024).unwrap_err();
    assert!(e.contains("more than 1024 bytes"), "{e}");
}

#[test]
fn a_puppetdb_status_larger_than_any_real_one_is_refused() {
    let pki = Pki::new();
    // A JSON status that is 1 MiB of padding: PuppetDB's own is under 1 KiB.
    let padded = format!(
        r#"{{"state": "running", "service_version": "8.4.1", "pad": "{}"}}"#,
        "x".repeat(1024 * 1024)
    );
    let service = pki.serve(move |_| Reply::json(padded.clone()));
    let view = puppetdb::fetch(
        &service.url(),
        puppetdb::Credentials {
            ca_cert: Some(&pki.ca),
            client: Some(pki.client.clone()),
        },
        None,
        &deadline(),
        |p| p.to_owned(),
    );
    assert!(!view.ok, "{view:?}");
    let error = view.error.unwrap();
    assert!(
        error.contains(&format!("more than {} bytes", puppetdb::MAX_STATUS_BYTES)),
        "{error}"
    );
}

#[test]
fn a_trickling_answer_is_cut_at_the_deadline() {
    let pki = Pki::new();
    let service = pki.serve(|_| Reply::Trickle {
        every: Duration::from_millis(100),
    });
    let started = Instant::now();
    let e = https::get(
        &service.url(),
        &pki.ca,
        None,
        &Deadline::after(Duration::from_secs(1)),
        GENEROUS,
    )
    .unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(
        e.contains("given to all the requests together ran out"),
        "{e}"
    );
}

/// A server and a PuppetDB that answer their status at once and then trickle every other
/// answer (PuppetDB's metrics and queries): the whole report is done by its deadline, and
/// what was not asked says so.
#[test]
fn a_trickling_server_and_puppetdb_do_not_hold_a_report_past_its_deadline() {
    let pki = Pki::new();
    let answer_status_then_trickle = |request: &test_tls::Request| {
        if request.path.starts_with("/status/") {
            Reply::json(r#"{"state": "running", "status": {"queue_depth": 0}}"#)
        } else {
            Reply::Trickle {
                every: Duration::from_millis(100),
            }
        }
    };
    let server = pki.serve(answer_status_then_trickle);
    let puppetdb = pki.serve(answer_status_then_trickle);
    let dir = tempfile::tempdir().unwrap();
    let systemd = RecordingSystemd::default();
    let ctx = Context::new(Layout::under(dir.path()), &systemd);
    let request = ReportRequest {
        interval: 1800,
        server: Some(server.url()),
        ca_cert: Some(pki.ca.clone()),
        puppetdb: Some(puppetdb.url()),
        client: Some(pki.client.clone()),
    };
    let budget = Duration::from_secs(2);
    let started = Instant::now();
    let report = report_with(
        &ctx,
        &request,
        1_795_319_000,
        &mut RunCache::default(),
        &Deadline::after(budget),
    )
    .unwrap();
    let took = started.elapsed();
    assert!(
        took < budget + Duration::from_secs(1),
        "the report took {took:?} for a deadline of {budget:?}"
    );
    assert!(report.server.unwrap().ok);
    let puppetdb = report.puppetdb.unwrap();
    assert!(puppetdb.ok, "{puppetdb:?}");
    let metrics = puppetdb.metrics_error.unwrap();
    assert!(
        metrics.contains("given to all the requests together ran out"),
        "{metrics}"
    );
    let fleet = puppetdb.fleet_error.unwrap();
    assert!(fleet.contains("not asked"), "{fleet}");
}

/// A PuppetDB whose facts hold a clone that publishes a fleet naming the server and
/// another node: the report asks only about the load hosts' own clones, and says what it
/// did not trust.
#[test]
fn a_clone_claiming_to_be_a_load_host_is_never_asked_about() {
    let pki = Pki::new();
    let asked = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&asked);
    let puppetdb = pki.serve(move |request: &test_tls::Request| {
        if request.path.starts_with("/status/") {
            return Reply::json(r#"{"state": "running", "status": {"queue_depth": 0}}"#);
        }
        if request.path.starts_with("/metrics/") {
            return Reply::json(r#"{"value": {"Count": 1}, "status": 200}"#);
        }
        assert_eq!(request.method, "POST");
        let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
        let pql = body["query"].as_str().unwrap().to_owned();
        seen.lock().unwrap().push(pql.clone());
        let answer = if pql == puppetdb_fleet::hosts_query() {
            let mut facts = puppetdb_fleet::fake::facts();
            facts.as_array_mut().unwrap().push(serde_json::json!({
                "certname": "clone1.tw.sandbox.test",
                "value": {"clones": {"names": ["a", "b"], "certnames": {
                    "a": "puppet.sandbox.test", "b": "clone2.tw-b.sandbox.test"}}}
            }));
            facts
        } else {
            puppetdb_fleet::fake::answer(&pql, 0).unwrap()
        };
        Reply::json(answer.to_string())
    });
    let view = puppetdb::fetch(
        &puppetdb.url(),
        puppetdb::Credentials {
            ca_cert: Some(&pki.ca),
            client: Some(pki.client.clone()),
        },
        Some(puppetdb::FleetClock {
            now: 1_795_319_000,
            interval: 1800,
        }),
        &deadline(),
        |p| p.to_owned(),
    );
    let fleet = view
        .fleet
        .unwrap_or_else(|| panic!("{:?}", view.fleet_error));
    let hosts: Vec<&str> = fleet.hosts.iter().map(|h| h.host.as_str()).collect();
    assert_eq!(hosts, ["tw-b.sandbox.test", "tw.sandbox.test"]);
    assert_eq!(fleet.fleet.clones, 4);
    assert_eq!(fleet.untrusted.len(), 1);
    assert_eq!(fleet.untrusted[0].node, "clone1.tw.sandbox.test");
    let asked = asked.lock().unwrap();
    assert_eq!(
        asked.len(),
        3,
        "the facts, then one reports query a host: {asked:?}"
    );
    assert!(
        asked.iter().all(|pql| !pql.contains("puppet.sandbox.test")),
        "{asked:?}"
    );
}

/// `twin import --puppetdb`: the query goes as a POST of PQL with the client
/// certificate, its records become the imported set; an error answer is an error.
#[test]
fn a_twin_import_takes_the_nodes_of_puppetdbs_answer_and_refuses_an_error() {
    let pki = Pki::new();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let service = pki.serve(move |request: &test_tls::Request| {
        seen.lock().unwrap().push(request.body.clone());
        if request.body.contains("broken") {
            return Reply::Answer {
                status: 400,
                headers: Vec::new(),
                body: b"PQL parse error at line 1".to_vec(),
            };
        }
        Reply::json(
            serde_json::json!([{"certname": "web01.example.com", "environment": "production",
                "facts": {"os": {"family": "Debian"}}, "trusted": {"extensions": {"pp_role": "web"}}}])
            .to_string(),
        )
    });
    let client = puppetdb::Client::new(
        &service.url(),
        puppetdb::Credentials {
            ca_cert: Some(&pki.ca),
            client: Some(pki.client.clone()),
        },
        |p| p.to_owned(),
    )
    .unwrap();
    let query = "inventory[certname, environment, facts, trusted] { facts.os.family = \"Debian\" }";
    let answer = client.query(query, GENEROUS, &deadline()).unwrap();
    assert_eq!(
        asked.lock().unwrap()[0],
        puppetdb_fleet::query_body(query),
        "the query goes as PuppetDB's POST body"
    );

    let root = tempfile::tempdir().unwrap();
    let systemd = RecordingSystemd::default();
    let ctx = Context::new(Layout::under(root.path()), &systemd);
    let list =
        crate::twin::import::import_answer(&ctx, &answer, "https://puppetdb:8081", query).unwrap();
    assert_eq!(list.summary.by_role["web"], 1);

    let error = client.query("broken", GENEROUS, &deadline()).unwrap_err();
    assert!(
        error.contains("HTTP 400") && error.contains("PQL parse error"),
        "{error}"
    );
}
