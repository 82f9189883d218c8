//! The recorded run's page, made from a timeline whose every string that a clone or a
//! server under test supplied is hostile (markup, quotes, `</svg>`, control characters,
//! lines of a mebibyte), and loaded in headless Chromium as a person would open it: the
//! page runs no script, holds no element but the page's own, and stays small.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use clone_army::protocol::answers::{
    Distribution, FailureKind, JrubyMetrics, PuppetdbView, RunStatus, ServerView, Timing,
};
use clone_army::protocol::record::HostSample;
use clone_army::protocol::record::{AccessWindow, RequestTimes};
use clone_army::protocol::record::{
    EndpointWindow, JrubyWindow, JvmWindow, PuppetdbWindow, ServerWindow,
};
use clone_army::protocol::record::{FleetSample, RunsSample, Sample, StepMark, TIMELINE_VERSION};
use clone_army::protocol::record::{FleetShape, GroupRuns, GroupsSample, Versions};

const CHROMIUM: &str = "/usr/bin/chromium";

/// What a hostile clone or server says, one of each kind.
fn hostile(n: usize) -> String {
    let kinds = [
        "<script>document.title='pwned'</script>".to_owned(),
        "</svg></figure><img src=x onerror=alert(1)><svg>".to_owned(),
        "\"><iframe src=\"javascript:alert(1)\"></iframe>".to_owned(),
        "' onmouseover='alert(1)".to_owned(),
        "\u{1b}[2J\u{1b}]0;pwned\u{7}\r\n\0\u{202e}".to_owned(),
        "<!--".to_owned(),
        "]]><style>body{display:none}</style>".to_owned(),
        format!("<b>{}</b>", "x".repeat(1024 * 1024)),
    ];
    kinds[n % kinds.len()].clone()
}

fn figure(n: u64) -> Option<serde_json::Number> {
    Some(serde_json::Number::from(n))
}

fn server_view(t: u64) -> ServerView {
    ServerView {
        url: hostile(t as usize),
        ok: true,
        error: Some(hostile(t as usize + 1)),
        ca_cert: Some(hostile(t as usize + 2)),
        http_status: Some(200),
        version: Some(hostile(t as usize + 3)),
        states: (0..4)
            .map(|i| (hostile(t as usize + i), hostile(t as usize + i + 1)))
            .collect(),
        jruby: Some(JrubyMetrics {
            num_jrubies: figure(2),
            num_free_jrubies: figure(t % 3),
            borrow_count: figure(t),
            borrow_timeout_count: figure(0),
            average_borrow_time_ms: figure(100 + t),
            average_wait_time_ms: figure(t),
            average_free_jrubies: figure(1),
            average_requested_jrubies: figure(1),
            requested_count: figure(t),
            return_count: figure(t),
            borrow_retry_count: figure(0),
            queue_limit_hit_count: figure(t),
            queued: figure(1),
        }),
        compile: Some(Timing {
            count: figure(t),
            mean_ms: figure(200 + t),
        }),
        catalog_requests: None,
        all_requests: None,
        endpoints: None,
        jvm: None,
        raw: Some(serde_json::json!({ hostile(t as usize): hostile(t as usize + 5) })),
    }
}

fn puppetdb_view(t: u64) -> PuppetdbView {
    PuppetdbView {
        url: hostile(t as usize + 2),
        ok: true,
        error: Some(hostile(t as usize)),
        ca_cert: Some(hostile(t as usize + 1)),
        client_cert: Some(hostile(t as usize + 3)),
        version: Some(hostile(t as usize + 4)),
        state: Some(hostile(t as usize + 5)),
        queue_depth: figure(t % 7),
        commands: None,
        metrics_error: Some(hostile(t as usize + 6)),
        fleet: None,
        fleet_error: Some(hostile(t as usize + 7)),
    }
}

fn sample(i: u64) -> Sample {
    let t = 1_800_000_000 + 10 * i;
    let statuses = BTreeMap::from([(RunStatus::Unchanged, 3), (RunStatus::Failed, 1)]);
    Sample {
        timeline: TIMELINE_VERSION,
        t,
        at: hostile(i as usize),
        period: 10,
        fleet: FleetSample {
            clones: 4,
            running: 4,
            stopped: 0,
            unknown: 0,
            silent: 0,
            by_status: statuses.clone(),
        },
        runs: RunsSample {
            count: (i % 3) as usize,
            by_status: statuses,
            total_time: Distribution::from_figures(
                20,
                Some(3.0),
                Some(4.0 + i as f64),
                Some(5.0 + i as f64),
            ),
            config_retrieval_time: Distribution::from_figures(20, Some(1.0), Some(1.5), Some(2.0)),
            failed_by_kind: BTreeMap::from([(FailureKind::CachedCatalog, 1)]),
        },
        server: Some(server_view(i)),
        puppetdb: Some(puppetdb_view(i)),
        host: HostSample {
            load1: Some(1.0),
            mem_total_bytes: Some(1 << 34),
            mem_available_bytes: Some(1 << 33),
            cpu_busy: Some(0.5),
            cpus_busy: vec![(0, 0.25), (1, 0.75)],
        },
        versions: Some(Versions {
            agent: (0..8).map(|k| (hostile(i as usize + k), 1)).collect(),
            server: Some(hostile(i as usize + 1)),
            puppetdb: Some(hostile(i as usize + 2)),
        }),
        shape: Some(FleetShape {
            clones: 4,
            run_modes: (0..8).map(|k| (hostile(i as usize + k), 1)).collect(),
            runintervals: BTreeMap::from([(60, 4)]),
            phased: 4,
            agent_noop: 0,
        }),
        step: Some(StepMark {
            step: (i / 10) as u32,
            clones: 4,
        }),
        server_window: Some(server_window(i)),
        puppetdb_window: Some(PuppetdbWindow {
            seconds: 10,
            restarted: false,
            processed: Some(3),
            queue_depth: Some(i as f64),
            recent_processing_ms: Some(12.0),
        }),
        access_log: Some(access_window(i)),
        groups: Some(groups(i, hostile)),
    }
}

/// Three groups' runs (of eight in all), each named by `name` of its number; the key too.
fn groups(i: u64, name: fn(usize) -> String) -> GroupsSample {
    let runs = |k: u64| {
        let mut group = GroupRuns {
            runs: 1,
            failed: usize::from(k == 0),
            total_time: Distribution::from_figures(1, Some(3.0), None, Some(3.0)),
            config_retrieval_time: Distribution::from_figures(1, Some(1.0), None, Some(1.0)),
            resources: BTreeMap::from([(1000 + k, 1)]),
            would_change: k,
            ..GroupRuns::default()
        };
        group.total_time_ms.record(3000 + k);
        group.config_retrieval_ms.record(1000);
        group
    };
    GroupsSample {
        by: name(i as usize),
        groups: (0..3).map(|k| (name((i + k) as usize), runs(k))).collect(),
    }
}

/// The server's window, an endpoint of it named as the timeline's hostile writer names it.
fn server_window(i: u64) -> ServerWindow {
    let endpoint = |requests| EndpointWindow {
        requests,
        recent_mean_ms: Some(5.0),
    };
    ServerWindow {
        seconds: 10,
        restarted: i.is_multiple_of(7),
        requests: Some(10 + i),
        endpoints: BTreeMap::from([
            (hostile(i as usize), endpoint(3)),
            ("catalog".to_owned(), endpoint(2 + i)),
        ]),
        compiles: Some(2),
        jruby: Some(JrubyWindow {
            borrows: Some(4),
            borrow_timeouts: Some(i % 2),
            queue_limit_hits: Some(i % 3),
            queued: Some(1.0),
            ..JrubyWindow::default()
        }),
        jvm: Some(JvmWindow {
            gc_ms: Some(100),
            gc_share: Some(0.01),
            heap_used_bytes: Some(1 << 28),
            heap_max_bytes: Some(1 << 30),
            cpu_percent: Some(40.0),
        }),
    }
}

fn access_window(i: u64) -> AccessWindow {
    let mut times = RequestTimes::default();
    for ms in [5, 50, 500 + i] {
        times.requests += 1;
        times.times.record(ms);
    }
    times.server_errors = 1;
    AccessWindow {
        requests: 6,
        skipped: 1,
        endpoints: BTreeMap::from([
            (hostile(i as usize + 1), times.clone()),
            ("catalog".to_owned(), times),
        ]),
        behind_bytes: 0,
        rotated: false,
        error: Some(hostile(i as usize + 2)),
    }
}

/// A timeline of `samples` samples, written where the recorder would write it.
fn timeline(dir: &Path, samples: u64, hostile_lines: bool) -> PathBuf {
    let path = dir.join("timeline.jsonl");
    let mut text = String::new();
    for i in 0..samples {
        let mut sample = sample(i);
        if !hostile_lines {
            sample = benign(sample);
        }
        text.push_str(&serde_json::to_string(&sample).unwrap());
        text.push('\n');
    }
    if hostile_lines {
        // Lines that are no sample at all: skipped and counted.
        text.push_str(&hostile(7));
        text.push('\n');
        text.push_str("{\"timeline\":1,\"t\":\"<script>\"}\n");
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// The same sample with every string plain: the page's own elements, for comparison.
fn benign(mut sample: Sample) -> Sample {
    let plain = |s: &mut String| *s = "plain".to_owned();
    plain(&mut sample.at);
    if let Some(server) = sample.server.as_mut() {
        plain(&mut server.url);
        server.error = None;
        server.ca_cert = None;
        server.version = Some("8.7.0".to_owned());
        server.states = BTreeMap::from([("master".to_owned(), "running".to_owned())]);
        server.raw = None;
    }
    if let Some(puppetdb) = sample.puppetdb.as_mut() {
        plain(&mut puppetdb.url);
        puppetdb.error = None;
        puppetdb.ca_cert = None;
        puppetdb.client_cert = None;
        puppetdb.version = Some("8.4.1".to_owned());
        puppetdb.state = Some("running".to_owned());
        puppetdb.metrics_error = None;
        puppetdb.fleet_error = None;
    }
    sample.versions = Some(Versions {
        agent: BTreeMap::from([("8.10.0".to_owned(), 4)]),
        server: Some("8.7.0".to_owned()),
        puppetdb: Some("8.4.1".to_owned()),
    });
    if let Some(shape) = sample.shape.as_mut() {
        shape.run_modes = BTreeMap::from([("timer".to_owned(), 4)]);
    }
    // As many groups as the hostile names make (they repeat every eight), under one key.
    let mut groups = groups((sample.t / 10) % 8, |n| format!("group{}", n % 8));
    groups.by = "pp_role".to_owned();
    sample.groups = Some(groups);
    let plain_keys = |keys: &mut Vec<String>| {
        for key in keys.iter_mut().filter(|k| k.as_str() != "catalog") {
            *key = "report".to_owned();
        }
    };
    if let Some(window) = sample.server_window.as_mut() {
        let mut names: Vec<String> = window.endpoints.keys().cloned().collect();
        plain_keys(&mut names);
        window.endpoints = names
            .into_iter()
            .zip(window.endpoints.values().cloned())
            .collect();
    }
    if let Some(log) = sample.access_log.as_mut() {
        let mut names: Vec<String> = log.endpoints.keys().cloned().collect();
        plain_keys(&mut names);
        log.endpoints = names
            .into_iter()
            .zip(log.endpoints.values().cloned())
            .collect();
        log.error = None;
    }
    sample
}

/// The page the helper makes of `timeline`, as `report --from --format html` writes it.
fn page_of(timeline: &Path) -> PathBuf {
    let page = timeline.with_extension("html");
    let output = Command::new(env!("CARGO_BIN_EXE_clone-army"))
        .args(["report", "--from"])
        .arg(timeline)
        .args(["--format", "html", "--output"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "report --from failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    page
}

/// The page's DOM after Chromium loaded it and ran whatever it would run.
fn dom_of(page: &Path, profile: &Path) -> String {
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            // Chromium's own sandbox needs user namespaces that root does not get here.
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("{CHROMIUM} did not run ({e}); make test installs chromium"));
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Every element's tag name in a serialized DOM. Chromium serializes text with `<`
/// escaped, so every `<` that is not `</` or `<!` opens an element.
fn elements(dom: &str) -> Vec<String> {
    dom.split('<')
        .skip(1)
        .filter(|part| !part.starts_with('/') && !part.starts_with('!'))
        .map(|part| {
            part.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
                .to_ascii_lowercase()
        })
        .collect()
}

/// Every attribute name of every element in a serialized DOM.
fn attributes(dom: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for tag in dom.split('<').skip(1) {
        let Some(tag) = tag.split('>').next() else {
            continue;
        };
        let mut rest = tag
            .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '/')
            .trim_start();
        while !rest.is_empty() {
            let name: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '=' && *c != '/')
                .collect();
            rest = rest[name.len()..].trim_start();
            if let Some(after) = rest.strip_prefix('=') {
                let after = after.trim_start();
                // Chromium quotes every attribute value with `"` and escapes `"` inside.
                rest = match after.strip_prefix('"') {
                    Some(quoted) => quoted.split_once('"').map_or("", |(_, r)| r),
                    None => after.split_once(' ').map_or("", |(_, r)| r),
                }
                .trim_start();
            } else if name.is_empty() {
                rest = rest.get(1..).unwrap_or("").trim_start();
            }
            if !name.is_empty() {
                names.insert(name.to_ascii_lowercase());
            }
        }
    }
    names
}

/// A page that is at most this much larger than the same run's page with plain strings:
/// room for escaped and cut text, never for a mebibyte a line.
const MAX_EXTRA_BYTES: u64 = 256 * 1024;

#[test]
#[ignore = "needs Chromium (/usr/bin/chromium, which make test installs)"]
fn a_timeline_of_hostile_strings_makes_a_page_that_runs_nothing_and_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    let plain_dir = dir.path().join("plain");
    let hostile_dir = dir.path().join("hostile");
    std::fs::create_dir_all(&plain_dir).unwrap();
    std::fs::create_dir_all(&hostile_dir).unwrap();

    let plain_page = page_of(&timeline(&plain_dir, 40, false));
    let hostile_timeline = timeline(&hostile_dir, 40, true);
    let hostile_page = page_of(&hostile_timeline);

    let plain_dom = dom_of(&plain_page, profile.path());
    let hostile_dom = dom_of(&hostile_page, profile.path());

    // The test sees the page's own elements: it is not comparing two empty pages.
    let own: BTreeSet<String> = elements(&plain_dom).into_iter().collect();
    for expected in ["table", "svg", "polyline", "title", "h2"] {
        assert!(
            own.contains(expected),
            "no <{expected}> in the plain page: {own:?}"
        );
    }
    let found: BTreeSet<String> = elements(&hostile_dom).into_iter().collect();
    let foreign: Vec<&String> = found.difference(&own).collect();
    assert!(
        foreign.is_empty(),
        "elements the page does not make: {foreign:?}"
    );
    assert!(!found.contains("script") && !found.contains("iframe") && !found.contains("img"));
    // Nothing ran: a script would have changed the title.
    assert!(!hostile_dom.contains("<title>pwned"), "a script ran");

    let own_attributes = attributes(&plain_dom);
    let hostile_attributes = attributes(&hostile_dom);
    let foreign: Vec<&String> = hostile_attributes.difference(&own_attributes).collect();
    assert!(
        foreign.is_empty(),
        "attributes the page does not make: {foreign:?}"
    );
    assert!(hostile_attributes.iter().all(|a| !a.starts_with("on")));

    // The same number of elements of each kind: no text turned into markup.
    let count = |dom: &str| {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for e in elements(dom) {
            *counts.entry(e).or_default() += 1;
        }
        counts
    };
    let (plain_counts, hostile_counts) = (count(&plain_dom), count(&hostile_dom));
    for (element, n) in &hostile_counts {
        let plain = plain_counts.get(element).copied().unwrap_or(0);
        // The summary table may have a row more or less; charts and their parts match.
        assert!(
            n.abs_diff(plain) <= 2,
            "<{element}>: {n} in the hostile page, {plain} in the plain one"
        );
    }

    let plain_size = std::fs::metadata(&plain_page).unwrap().len();
    let hostile_size = std::fs::metadata(&hostile_page).unwrap().len();
    let timeline_size = std::fs::metadata(&hostile_timeline).unwrap().len();
    assert!(
        timeline_size > 40 * 1024 * 1024,
        "the timeline holds mebibyte lines: {timeline_size}"
    );
    assert!(
        hostile_size <= plain_size + MAX_EXTRA_BYTES,
        "the hostile page is {hostile_size} bytes, the plain one {plain_size}"
    );
}
