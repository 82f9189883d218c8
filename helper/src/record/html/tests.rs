use super::*;
use crate::protocol::answers::{CloneReport, ReportState};
use crate::protocol::record::StepMark;
use crate::record::host::{CpuTimes, HostReading};
use crate::record::sample::{fixtures, Sampler};
use std::os::unix::fs::FileTypeExt;

fn clone(name: &str, run: Option<(u64, RunStatus, f64)>) -> CloneReport {
    fixtures::clone(name, ReportState::Running, run)
}

/// Three samples 30 s apart; the server view of Puppet Server 7's fixture in the last two.
fn recording() -> Recording {
    let server: serde_json::Value = serde_json::from_str(include_str!(
        "../../report/fixtures/puppetserver-7-status-debug.json"
    ))
    .unwrap();
    let summarised = crate::report::server::summarise(&server);
    let view = crate::protocol::answers::ServerView {
        url: "https://puppet:8140/status/v1/services?level=debug".to_owned(),
        ok: true,
        error: None,
        ca_cert: None,
        http_status: Some(200),
        version: summarised.version,
        states: summarised.states,
        jruby: summarised.jruby,
        compile: summarised.compile,
        catalog_requests: summarised.catalog_requests,
        all_requests: summarised.all_requests,
        endpoints: summarised.endpoints,
        jvm: summarised.jvm,
        raw: Some(server),
    };
    let steps: [(u64, Vec<CloneReport>, u64); 3] = [
        (1000, vec![clone("c1", None), clone("c2", None)], 100),
        (
            1030,
            vec![
                clone("c1", Some((1010, RunStatus::Changed, 4.0))),
                clone("c2", Some((1020, RunStatus::Failed, 8.0))),
            ],
            115,
        ),
        (
            1060,
            vec![
                clone("c1", Some((1040, RunStatus::Unchanged, 2.0))),
                clone("c2", Some((1020, RunStatus::Failed, 8.0))),
            ],
            130,
        ),
    ];
    let mut sampler = Sampler::default();
    let samples = steps
        .into_iter()
        .map(|(t, clones, busy)| {
            let mut report = fixtures::report(t, clones);
            report.server = (t > 1000).then(|| view.clone());
            let reading = HostReading {
                load1: Some(1.0),
                mem_total_bytes: Some(1000),
                mem_available_bytes: Some(250),
                cpu: Some(CpuTimes { busy, total: t }),
                ..Default::default()
            };
            sampler.sample(&report, reading, 30)
        })
        .collect();
    Recording {
        files: vec![],
        samples,
        skipped: 2,
    }
}

#[test]
fn each_chart_has_the_timelines_numbers() {
    let r = recording();
    let s = &r.samples;
    // Two runs in the second sample (one failed), one in the third; samples 30 s apart,
    // so each figure is over that sample and the one before: 2 runs in 60 s, then 3.
    assert_eq!(
        series::runs_per_minute(s, |_| true),
        [(1000, 0.0), (1030, 2.0), (1060, 3.0)]
    );
    assert_eq!(
        series::runs_per_minute(s, |st| st == RunStatus::Failed),
        [(1000, 0.0), (1030, 1.0), (1060, 1.0)]
    );
    assert_eq!(
        series::of(s, |x| x.runs.total_time.max),
        [(1030, 8.0), (1060, 2.0)]
    );
    // The fixture's pool: 4 instances, 2 free; a compile mean; no PuppetDB.
    let free = series::free_jrubies(s);
    let borrowed = series::borrowed_jrubies(s);
    assert_eq!(free.len(), 2);
    let jruby = s[1].server.as_ref().unwrap().jruby.as_ref().unwrap();
    let total = jruby.num_jrubies.as_ref().unwrap().as_f64().unwrap();
    assert_eq!(free[0].1 + borrowed[0].1, total);
    assert_eq!(series::compile_mean_ms(s).len(), 2);
    assert!(series::puppetdb_queue(s).is_empty());
    assert_eq!(
        series::memory_used_percent(s),
        [(1000, 75.0), (1030, 75.0), (1060, 75.0)]
    );
    // CPU: 15 busy ticks of 30 between samples.
    assert_eq!(
        series::of(s, |x| x.host.cpu_busy),
        [(1030, 0.5), (1060, 0.5)]
    );
}

#[test]
fn the_page_draws_every_chart_from_its_samples() {
    let r = recording();
    let page = page(&r);
    assert!(page.starts_with("<!doctype html>"));
    assert!(!page.contains("<script"), "no script");
    assert!(
        !page.contains("http://") && !page.contains("https://puppet"),
        "nothing fetched, no server URL"
    );
    for (id, points) in [
        ("runs-per-minute", 6),
        // p50 and max of each sample's runs: none had enough for a p95.
        ("run-time", 4),
        ("config-retrieval-time", 4),
        ("clones", 6),
        ("jrubies", 6),
        ("jruby-times", 4),
        ("compile-time", 2),
        ("puppetdb-queue", 0),
        // One window (the second and third samples had the server's answer), six
        // endpoints; no access log.
        ("endpoint-requests", 6),
        ("endpoint-time", 0),
        // One window's borrow timeouts (Puppet Server 7's answer has no queue-limit
        // count), three kinds of failed runs in each sample.
        ("server-failures", 10),
        ("server-jvm", 5),
        ("host", 5),
    ] {
        let needle = format!(r#"<figure class="chart" id="{id}" data-points="{points}">"#);
        assert!(page.contains(&needle), "{needle} in\n{page}");
    }
    assert!(
        page.contains("<tr><th>runs finished</th><td>failed 1, changed 1, unchanged 1</td></tr>"),
        "{page}"
    );
    assert!(page.contains("(2 lines skipped)"));
}

#[test]
fn the_summary_adds_up_the_samples() {
    let s = summary(&recording());
    assert_eq!(s.samples, 3);
    assert_eq!(s.seconds, 60);
    assert_eq!(s.runs[&RunStatus::Changed], 1);
    assert_eq!(s.runs[&RunStatus::Failed], 1);
    assert_eq!(s.runs[&RunStatus::Unchanged], 1);
    assert_eq!(s.peak_runs_per_minute, Some(3.0));
    assert_eq!(s.max_run_time, Some(8.0));
    assert_eq!(s.max_config_retrieval_time, Some(4.0));
    assert_eq!((s.clones, s.peak_clones), (Some(2), Some(2)));
    assert_eq!(s.peak_puppetdb_queue_depth, None);
    assert_eq!(s.skipped_lines, 2);
}

#[test]
fn runs_per_minute_covers_the_last_minute_of_short_samples() {
    // A sample with two runs, every 30 s among samples 5 s apart.
    let with_runs = recording().samples[1].clone();
    let samples: Vec<Sample> = (0..24u64)
        .map(|i| {
            let mut s = with_runs.clone();
            s.t = 2000 + i * 5;
            s.period = 5;
            if i % 6 != 0 {
                s.runs.by_status.values_mut().for_each(|n| *n = 0);
            }
            s
        })
        .collect();
    let rates = series::runs_per_minute(&samples, |_| true);
    // The first sample alone: 2 runs in 5 s.
    assert_eq!(rates[0].1, 24.0);
    // A minute in: the 12 samples of the last 60 s hold 4 runs.
    assert_eq!(rates[23].1, 4.0);
}

#[test]
fn a_stepped_recording_marks_each_step_where_it_began() {
    let mut r = recording();
    // Step 1 from the first sample, step 2 from the third; the second is still step 1.
    let mark = |step, clones| Some(StepMark { step, clones });
    r.samples[0].step = mark(1, 10);
    r.samples[1].step = mark(1, 10);
    r.samples[2].step = mark(2, 20);
    assert_eq!(
        series::step_starts(&r.samples),
        [
            (
                1000,
                StepMark {
                    step: 1,
                    clones: 10
                }
            ),
            (
                1060,
                StepMark {
                    step: 2,
                    clones: 20
                }
            )
        ]
    );
    let stepped = page(&r);
    let drawn = stepped.matches("<svg ").count();
    // Every chart with points has both marks: at the left end and the right end.
    assert_eq!(stepped.matches(r#"<line class="mark""#).count(), 2 * drawn);
    assert_eq!(
        stepped.matches("<title>step 2: 20 clones</title>").count(),
        drawn
    );
    // And says once in its legend what the marks are.
    assert_eq!(stepped.matches(r#"<span class="mark-key">"#).count(), drawn);
    assert!(stepped.contains("ramp step began (its clones)</span>"));
    assert!(
        stepped.contains("<tr><th>steps (clones each ran)</th><td>2: 10, 20</td></tr>"),
        "{stepped}"
    );
    assert_eq!(summary(&r).steps.len(), 2);
    // A recording without steps has neither marks nor the row, and its summary's JSON
    // leaves the field out.
    let plain = recording();
    let plain_page = page(&plain);
    assert!(!plain_page.contains(r#"class="mark""#));
    assert!(!plain_page.contains(r#"class="mark-key""#));
    assert!(!plain_page.contains("steps (clones"));
    let json = serde_json::to_value(summary(&plain)).unwrap();
    assert!(json.get("steps").is_none(), "{json}");
}

#[test]
fn every_chart_spans_the_whole_recording() {
    // The compile chart's points start at the second sample; its axis still ends where
    // the recording does (its last tick at the right end), as every chart's with points
    // does.
    let page = page(&recording());
    let drawn = page.matches("<svg ").count();
    assert_eq!(
        drawn, 11,
        "every chart but PuppetDB's and the access log's has points"
    );
    let end = format!(r#"data-t="{}" x="688.0""#, recording().samples[2].t);
    assert_eq!(page.matches(&end).count(), drawn, "{page}");
    assert_eq!(page.matches(" UTC</text>").count(), drawn, "{page}");
}

#[test]
fn the_page_fits_a_phone_screen() {
    let page = page(&recording());
    let head = page.split("</head>").next().unwrap();
    assert!(
        head.contains(r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#),
        "{head}"
    );
}

/// The refusal `write_page` gave for `path`, within ten seconds: the field it names, and
/// its message.
fn page_refused(path: &std::path::Path) -> (Option<&'static str>, String) {
    let path = path.to_owned();
    let error =
        crate::sys::confined::testing::within_seconds(10, move || write_page(&recording(), &path))
            .unwrap_err();
    (error.field(), error.to_string())
}

#[test]
fn a_page_replaces_the_page_it_wrote_before_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.html");
    let recording = recording();
    write_page(&recording, &path).unwrap();
    let written = write_page(&recording, &path).unwrap();
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert_eq!(on_disk, page(&recording));
    assert!(on_disk.starts_with(PAGE_MARKER), "{on_disk}");
    assert_eq!(
        written,
        PageWritten {
            page: path.display().to_string(),
            bytes: on_disk.len(),
            samples: 3,
            skipped_lines: recording.skipped,
        }
    );
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
}

#[test]
fn a_page_output_over_a_symlink_is_refused_and_its_target_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("ld.so.preload");
    std::fs::write(&elsewhere, "kept").unwrap();
    let path = dir.path().join("run.html");
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    let (field, message) = page_refused(&path);
    assert_eq!(field, Some("output"), "{message}");
    assert!(message.contains("a symlink"), "{message}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "kept");
    assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
}

#[test]
fn a_page_output_over_a_file_clone_army_did_not_write_is_refused_and_it_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x");
    std::fs::write(&path, "root ALL=(ALL) ALL\n").unwrap();
    let (field, message) = page_refused(&path);
    assert_eq!(field, Some("output"), "{message}");
    assert!(message.contains("not a page"), "{message}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "root ALL=(ALL) ALL\n"
    );
}

#[test]
fn a_page_output_over_a_fifo_is_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.html");
    crate::sys::confined::testing::fifo(&path);
    let (field, message) = page_refused(&path);
    assert_eq!(field, Some("output"), "{message}");
    assert!(message.contains("a FIFO"), "{message}");
    assert!(std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_page_output_in_a_missing_directory_is_refused_and_nothing_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sudoers.d/run.html");
    let (field, message) = page_refused(&path);
    assert_eq!(field, Some("output"), "{message}");
    assert!(message.contains("does not exist"), "{message}");
    assert!(!dir.path().join("sudoers.d").exists());
}

#[test]
fn the_header_says_how_the_fleet_ran_and_against_which_versions() {
    let mut recording = recording();
    // The fleet's shape as the first sample took it; the versions of the last sample.
    recording.samples[0].shape = Some(crate::protocol::record::FleetShape {
        clones: 2,
        run_modes: BTreeMap::from([("timer".to_owned(), 2)]),
        runintervals: BTreeMap::from([(1800, 2)]),
        phased: 2,
        agent_noop: 0,
    });
    let last = recording.samples.last_mut().unwrap();
    last.versions.as_mut().unwrap().agent = BTreeMap::from([("8.10.0".to_owned(), 2)]);
    let rows: BTreeMap<&str, String> = summary_rows(&summary(&recording)).into_iter().collect();
    assert_eq!(
        rows["fleet"],
        "2 clones; run mode timer (2); interval 1800 s (2); phased 2; noop 0"
    );
    // The fixture's server is Puppet Server 7.9.5; no PuppetDB was asked.
    assert_eq!(
        rows["versions"],
        "agent 8.10.0 (2); Puppet Server 7.9.5; PuppetDB -"
    );
    let page = page(&recording);
    assert!(
        page.contains("<tr><th>fleet</th><td>2 clones; run mode timer (2);"),
        "{page}"
    );
}

/// The versions in the header are the server's, PuppetDB's and the clones' words: on the
/// page they are text, whatever markup or control characters they hold.
#[test]
fn versions_with_markup_from_the_servers_and_clones_are_text_in_the_page() {
    let mut recording = recording();
    let versions = recording
        .samples
        .last_mut()
        .unwrap()
        .versions
        .as_mut()
        .unwrap();
    versions.server = Some("</td></tr></table><script>alert(1)</script>".to_owned());
    versions.puppetdb = Some("8\u{1b}]0;owned\u{7}".to_owned());
    versions.agent = BTreeMap::from([("<svg onload=alert(1)>".to_owned(), 2)]);
    let page = page(&recording);
    assert!(
        !page.contains("<script") && !page.contains("<svg onload"),
        "{page}"
    );
    assert!(
        !page.chars().any(|c| c.is_control() && c != '\n'),
        "{page:?}"
    );
    assert!(page.contains("&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;"));
    assert!(page.contains("8\\x1b]0;owned\\x07"), "{page}");
}

/// The server's windows and the access log, as the charts and the summary give them:
/// each figure is the sample's own, none a since-start one.
#[test]
fn the_servers_windows_and_its_access_log_are_drawn_with_their_numbers() {
    use crate::protocol::record::{AccessWindow, RequestTimes};
    let mut r = recording();
    let mut times = RequestTimes::default();
    for ms in [10, 20, 30, 40, 2000] {
        times.requests += 1;
        times.times.record(ms);
    }
    times.server_errors = 2;
    r.samples[2].access_log = Some(AccessWindow {
        requests: 5,
        endpoints: [("catalog".to_owned(), times)].into(),
        ..AccessWindow::default()
    });
    r.samples[2].runs.failed_by_kind = [(FailureKind::CachedCatalog, 1)].into();
    let s = &r.samples;
    let window = s[2].server_window.as_ref().unwrap();
    // Puppet Server 7's fixture twice: nothing happened in between.
    assert_eq!(window.seconds, 30);
    assert_eq!(series::requests_per_second(s, "catalog"), [(1060, 0.0)]);
    assert_eq!(series::logged_p95_ms(s, "catalog"), [(1060, 2000.0)]);
    assert_eq!(series::logged_server_errors(s), [(1060, 2.0)]);
    assert_eq!(
        series::failed_runs_of(s, FailureKind::CachedCatalog),
        [(1000, 0.0), (1030, 0.0), (1060, 1.0)]
    );
    assert_eq!(
        series::jruby_window(s, |j| j.borrow_timeouts),
        [(1060, 0.0)]
    );
    // 301989888 of 536870912 bytes.
    assert_eq!(series::heap_used_percent(s), [(1030, 56.25), (1060, 56.25)]);
    let summary = summary(&r);
    assert_eq!(summary.failed_by_kind[&FailureKind::CachedCatalog], 1);
    let server = summary.server.as_ref().unwrap();
    let catalog = &server.endpoints["catalog"];
    assert_eq!((catalog.logged, catalog.server_errors), (Some(5), Some(2)));
    // Five requests are too few for a p95: the summary gives their max.
    assert_eq!((catalog.p50_ms, catalog.p95_ms), (Some(30), None));
    let page = page(&r);
    assert!(
        page.contains("<tr><th>requests logged by endpoint</th><td>catalog 5 (p50 30 ms, max 2000 ms)</td></tr>"),
        "{page}"
    );
    assert!(
        page.contains("<tr><th>failed runs by kind</th><td>cached-catalog 1</td></tr>"),
        "{page}"
    );
}

/// A recording of `samples` samples 30 s apart, each with one run of every group of
/// `groups` (value, run time), grouped by `by`.
fn grouped_recording(by: &str, groups: &[(&str, f64)], samples: u64) -> Recording {
    use crate::record::groups::of_sample;
    use crate::record::sample::NewRun;
    let mut r = recording();
    let template = r.samples[0].clone();
    r.samples = (0..samples)
        .map(|i| {
            let runs: Vec<NewRun> = groups
                .iter()
                .map(|(value, seconds)| NewRun {
                    clone: (*value).to_owned(),
                    status: if i == 0 {
                        RunStatus::Failed
                    } else {
                        RunStatus::Changed
                    },
                    total_time: Some(*seconds + i as f64 / 100.0),
                    config_retrieval_time: Some(*seconds / 2.0),
                    failure_kinds: Vec::new(),
                    resources: Some(1200),
                    would_change: None,
                })
                .collect();
            let mut sample = template.clone();
            sample.t = 1000 + 30 * i;
            sample.groups = Some(of_sample(by, &runs, |clone| Ok(clone.to_owned())).unwrap());
            sample
        })
        .collect();
    r
}

/// The section's row of `value` (as the page writes it), cells as text.
fn group_row(page: &str, value: &str) -> String {
    let start = page
        .find(&format!("<tr data-group=\"{value}\">"))
        .unwrap_or_else(|| panic!("no row {value}: {page}"));
    page[start..].split("</tr>").next().unwrap().to_owned()
}

#[test]
fn a_grouped_recording_has_a_row_per_group_and_its_run_times_drawn() {
    // 25 runs of web over the recording (enough for a p95), 25 of db; none has 20 in
    // one sample.
    let r = grouped_recording("pp_role", &[("web", 4.0), ("db", 10.0)], 25);
    let page = page(&r);
    assert!(
        page.contains(r#"<h2 id="groups">By pp_role</h2>"#),
        "{page}"
    );
    let web = group_row(&page, "web");
    // Nearest rank of 4.00 .. 4.24 s: p50 the 13th (4.12), p95 the 24th (4.23), each
    // as the upper end of its histogram bucket (4.096 .. 4.223 s), never above the max.
    assert!(
        web.contains("<td>25</td><td>1</td><td>4.22 s</td><td>4.24 s</td>"),
        "{web}"
    );
    assert!(
        web.contains("<td>2 s</td><td>2 s</td><td>1200</td><td>0</td>"),
        "{web}"
    );
    let chart = page
        .split(r#"<figure class="chart" id="group-run-time""#)
        .nth(1)
        .expect("the groups' chart");
    let chart = chart.split("</figure>").next().unwrap();
    assert!(
        chart.contains(r#"data-series="web" data-points="25""#),
        "{chart}"
    );
    assert!(
        chart.contains(r#"data-series="db" data-points="25""#),
        "{chart}"
    );
    assert!(!page.contains("groups-not-drawn"), "{page}");
    // The section comes before the other charts, and a recording without groups has none.
    assert!(page.find("group-run-time").unwrap() < page.find("runs-per-minute").unwrap());
    assert!(!super::page(&recording()).contains("By "));
}

/// Fewer runs than a p95 needs: the max, said to be one, as the page says elsewhere.
#[test]
fn a_group_with_too_few_runs_shows_its_max_and_no_p95() {
    let r = grouped_recording("node", &[("web01.example.com", 4.0)], 5);
    let page = page(&r);
    let row = group_row(&page, "web01.example.com");
    assert!(
        row.contains(r#"<span class="few" title="fewer than 20 runs: no p95">max 4.04 s</span>"#),
        "{row}"
    );
    // The 3rd of 4.00 .. 4.04 s, as its bucket's upper end (3.968 .. 4.031 s).
    assert!(row.contains("<td>5</td><td>1</td><td>4.03 s</td>"), "{row}");
}

/// Group values are real nodes' words: markup and control characters are text, and a
/// key from the timeline too.
#[test]
fn group_values_and_the_key_are_text_in_the_page() {
    let hostile = "</td></tr><script>alert(1)</script>\u{1b}[2J";
    let r = grouped_recording("pp_role<b>", &[(hostile, 4.0), ("web", 2.0)], 3);
    let page = page(&r);
    assert!(!page.contains("<script") && !page.contains("<b>"), "{page}");
    assert!(
        !page.chars().any(|c| c.is_control() && c != '\n'),
        "{page:?}"
    );
    assert!(page.contains("By pp_role&lt;b&gt;</h2>"), "{page}");
    let escaped = "&lt;/td&gt;&lt;/tr&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[2J";
    assert!(
        page.contains(&format!("<tr data-group=\"{escaped}\">")),
        "{page}"
    );
    assert!(
        page.contains(&format!("data-series=\"{escaped}\"")),
        "{page}"
    );
}

/// Of many groups the chart draws the ones with the most runs and names the others.
#[test]
fn the_chart_draws_the_largest_groups_and_names_the_rest() {
    use super::groups::{MAX_NAMED_OTHERS, MAX_SERIES};
    let names: Vec<String> = (0..40).map(|i| format!("role{i:02}")).collect();
    let groups: Vec<(&str, f64)> = names.iter().map(|n| (n.as_str(), 3.0)).collect();
    let mut r = grouped_recording("pp_role", &groups, 2);
    // role32 .. role39 run once more, in a last sample: they are the largest.
    let last = r.samples.last().unwrap().clone();
    let mut extra = last.clone();
    extra.t += 30;
    extra
        .groups
        .as_mut()
        .unwrap()
        .groups
        .retain(|value, _| value.as_str() >= "role32");
    r.samples.push(extra);
    let page = page(&r);
    assert_eq!(page.matches("<tr data-group=").count(), 40);
    let chart = page
        .split(r#"id="group-run-time""#)
        .nth(1)
        .unwrap()
        .split("</figure>")
        .next()
        .unwrap();
    assert_eq!(chart.matches("<polyline").count(), MAX_SERIES, "{chart}");
    for drawn in 32..40 {
        assert!(
            chart.contains(&format!("data-series=\"role{drawn}\"")),
            "{chart}"
        );
    }
    let note = page
        .split(r#"id="groups-not-drawn">"#)
        .nth(1)
        .unwrap()
        .split("</p>")
        .next()
        .unwrap();
    assert!(note.contains(": role00, role01, role02"), "{note}");
    assert!(!note.contains("role32"), "{note}");
    assert!(
        note.ends_with(&format!(
            " and {} more.",
            40 - MAX_SERIES - MAX_NAMED_OTHERS
        )),
        "{note}"
    );
}
