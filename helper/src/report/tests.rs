//! The report over a temporary root with fake clones, the recording systemd and a fixed
//! "now"; its three formats are snapshots.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::*;
use crate::protocol::answers::RunReportFile;
use crate::sys::paths::Layout;
use crate::systemd::units::clone_mount;
use crate::systemd::RecordingSystemd;

/// A little after the fixtures' runs (1795318947 .. 1795318974).
pub(crate) const NOW: u64 = 1_795_319_000;

impl ReportRequest {
    /// A report of the fleet alone: no server, no PuppetDB.
    pub(crate) fn fleet_only(interval: u64) -> Self {
        ReportRequest {
            interval,
            server: None,
            ca_cert: None,
            puppetdb: None,
            client: None,
        }
    }
}

/// A temporary fleet on disk, which the recorder's tests share.
pub(crate) struct Fleet {
    _dir: tempfile::TempDir,
    root: PathBuf,
    pub(crate) layout: Layout,
    systemd: RecordingSystemd,
}

impl Fleet {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        // A base without base.json: its confdir is taken to be Debian's, so the summary
        // is under /var/cache/puppet/public.
        fs::create_dir_all(root.join("var/lib/puppet-clone-army/debian-12/etc/clone-army"))
            .unwrap();
        Fleet {
            layout: Layout::under(&root),
            root,
            _dir: dir,
            systemd: RecordingSystemd::default(),
        }
    }

    pub(crate) fn ctx(&self) -> Context<'_> {
        Context::new(self.layout.clone(), &self.systemd)
    }

    /// A clone as `clone create` leaves it on disk, with `summary` as its agent's last run.
    pub(crate) fn clone(&self, name: &str, state: &str, summary: Option<&str>) {
        let unit = self
            .layout
            .fs(self.layout.unit_path(&self.layout.mount_unit_name(name)));
        fs::create_dir_all(unit.parent().unwrap()).unwrap();
        fs::write(&unit, clone_mount(&self.layout, name, "debian-12")).unwrap();
        let upper = self.layout.fs(self.layout.upper_dir(name));
        fs::create_dir_all(upper.join("etc/puppet")).unwrap();
        fs::write(
            upper.join("etc/puppet/puppet.conf"),
            format!("[main]\nserver = puppet.example.com\ncertname = {name}.load\n"),
        )
        .unwrap();
        if let Some(text) = summary {
            let public = upper.join("var/cache/puppet/public");
            fs::create_dir_all(&public).unwrap();
            fs::write(public.join("last_run_summary.yaml"), text).unwrap();
        }
        self.systemd
            .set_state(&format!("puppet-clone-army@{name}.service"), state);
    }

    /// Puts `text` as the clone's agent's `last_run_report.yaml` of the run its summary is
    /// of, as the agent writes it: its top-level `time` (when the run began) made the
    /// summary's `last_run` less its `total` time.
    fn full_report(&self, name: &str, text: &str) {
        let time = self.run_start(name);
        let without: String = text
            .split_inclusive('\n')
            .filter(|line| !line.starts_with("time:"))
            .collect();
        let text = match without.split_once('\n') {
            Some((first, rest)) if first.starts_with("---") => {
                format!("{first}\n{time}{rest}")
            }
            _ => format!("{time}{without}"),
        };
        self.earlier_report(name, &text);
    }

    /// The report's `time` line of the run the clone's summary is of.
    fn run_start(&self, name: &str) -> String {
        let summary = self
            .layout
            .fs(self.layout.upper_dir(name))
            .join("var/cache/puppet/public/last_run_summary.yaml");
        let run = summary::parse(&fs::read_to_string(summary).unwrap()).unwrap();
        let began = run.last_run.unwrap() - run.total_time.unwrap().ceil() as u64;
        format!("time: '{}'\n", crate::sys::time::rfc3339_utc(began))
    }

    /// Puts `text` as the clone's agent's `last_run_report.yaml`, as it is.
    fn earlier_report(&self, name: &str, text: &str) {
        let state = self
            .layout
            .fs(self.layout.upper_dir(name))
            .join("var/cache/puppet/state");
        fs::create_dir_all(&state).unwrap();
        fs::write(state.join("last_run_report.yaml"), text).unwrap();
    }

    /// Makes the clone's mount unit look `secs` older than NOW.
    fn age_mount_unit(&self, name: &str, secs: u64) {
        let unit = self
            .layout
            .fs(self.layout.unit_path(&self.layout.mount_unit_name(name)));
        let when = SystemTime::UNIX_EPOCH + Duration::from_secs(NOW - secs);
        fs::File::options()
            .write(true)
            .open(unit)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    fn report(&self) -> Report {
        report(&self.ctx(), &ReportRequest::fleet_only(1800), NOW).unwrap()
    }
}

pub(crate) const UNCHANGED: &str = include_str!("fixtures/unchanged.yaml");
const CHANGED: &str = include_str!("fixtures/changed.yaml");
const FAILED: &str = include_str!("fixtures/failed.yaml");
const UNREACHABLE: &str = include_str!("fixtures/unreachable.yaml");
const FAILED_REPORT: &str = include_str!("fixtures/failed-report.yaml");
const UNREACHABLE_REPORT: &str = include_str!("fixtures/unreachable-report.yaml");

/// Six clones: one of each status, one silent for long, one never run for long.
fn sample() -> Fleet {
    let f = Fleet::new();
    f.clone("c1", "active", Some(UNCHANGED));
    f.clone("c2", "active", Some(CHANGED));
    f.clone("c3", "active", Some(FAILED));
    f.full_report("c3", FAILED_REPORT);
    f.clone("c4", "activating", Some(UNREACHABLE));
    f.full_report("c4", UNREACHABLE_REPORT);
    // Last ran 5000 s ago: silent (> 2 × 1800).
    f.clone(
        "c5",
        "inactive",
        Some(&UNCHANGED.replace("last_run: 1795318947", "last_run: 1795314000")),
    );
    // Never ran, created 4000 s ago: silent.
    f.clone("c6", "active", None);
    f.age_mount_unit("c6", 4000);
    // Never ran, just created: not silent.
    f.clone("c7", "active", None);
    f.clone("c8", "active", Some("resources: [unterminated\n"));
    f
}

#[test]
fn every_clone_with_its_last_run() {
    let f = sample();
    let r = f.report();
    assert!(r.states_known);
    assert_eq!(r.systemd_error, None);
    let status: Vec<(&str, RunStatus)> = r
        .clones
        .iter()
        .map(|c| (c.name.as_str(), c.run.status))
        .collect();
    assert_eq!(
        status,
        vec![
            ("c1", RunStatus::Unchanged),
            ("c2", RunStatus::Changed),
            ("c3", RunStatus::Failed),
            ("c4", RunStatus::Failed),
            ("c5", RunStatus::Unchanged),
            ("c6", RunStatus::Never),
            ("c7", RunStatus::Never),
            ("c8", RunStatus::Unreadable),
        ]
    );
    // A check-in is a run that did not fail; never and unreadable are none.
    let succeeded: Vec<&str> = r
        .clones
        .iter()
        .filter(|c| c.run.succeeded)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(succeeded, vec!["c1", "c2", "c5"]);
    let c1 = &r.clones[0];
    assert_eq!(c1.state, ReportState::Running);
    assert_eq!(c1.run.age, Some(NOW - 1_795_318_947));
    assert_eq!(
        c1.summary.as_deref(),
        Some("/var/lib/puppet-clone-army/c1-overlay/var/cache/puppet/public/last_run_summary.yaml")
    );
    assert_eq!(r.clones[4].state, ReportState::Stopped);
    assert!(r.clones[7].error.is_some());
    // Failed runs say why, from the agent's full report.
    let c4_failure = r.clones[3].failure.as_deref().unwrap();
    assert!(c4_failure.contains("Connection refused"), "{c4_failure}");
    assert!(r.clones[2]
        .failure
        .as_deref()
        .unwrap()
        .starts_with("'/bin/false' returned 1"));
    // Only failed runs: c1's report would not be read even if it were there.
    assert!(r.clones.iter().filter(|c| c.failure.is_some()).count() == 2);
    assert_eq!(r.fleet.clones, 8);
    assert_eq!(r.fleet.by_status[&RunStatus::Failed], 2);
    assert_eq!(r.fleet.by_status[&RunStatus::Never], 2);
    assert_eq!(r.fleet.by_status[&RunStatus::Unreadable], 1);
    assert_eq!(r.fleet.silent, vec!["c5", "c6"]);
    assert_eq!(r.fleet.silent_after, 3600);
    // Run times over the five clones with a summary that has them.
    assert_eq!(r.fleet.total_time.count, 5);
    assert_eq!(r.fleet.total_time.max, Some(2.268126647));
    // Config retrieval only where a catalog was retrieved.
    assert_eq!(r.fleet.config_retrieval_time.count, 4);
    assert_eq!(r.server, None);
}

#[test]
fn a_noop_run_is_a_check_in_that_would_change_its_out_of_sync_resources() {
    let f = Fleet::new();
    f.clone("n1", "active", Some(include_str!("fixtures/noop.yaml")));
    f.clone("n2", "active", Some(UNCHANGED));
    let r = f.report();
    assert_eq!(r.clones[0].run.status, RunStatus::WouldChange);
    assert_eq!(r.clones[0].run.would_change, Some(2));
    assert!(r.clones[0].run.succeeded);
    assert_eq!(r.clones[1].run.would_change, None);
    assert_eq!(r.fleet.by_status[&RunStatus::WouldChange], 1);
    let table = super::render::table(&r);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("n1 ") && l.contains(" would-change (2) ")),
        "{table}"
    );
    let metrics = super::render::prometheus(&r);
    assert!(
        metrics.contains("clone_army_clone_would_change_resources{clone=\"n1\"} 2\n"),
        "{metrics}"
    );
    assert!(!metrics.contains("clone_army_clone_would_change_resources{clone=\"n2\"}"));
}

#[test]
fn a_failed_run_without_its_report_has_no_failure_and_a_broken_one_says_so() {
    let f = Fleet::new();
    f.clone("c1", "active", Some(UNREACHABLE));
    f.clone("c2", "active", Some(UNREACHABLE));
    f.full_report("c2", "logs: [unclosed");
    // The report there is an earlier run's: it says nothing of this run.
    f.clone("c3", "active", Some(UNCHANGED));
    f.earlier_report("c3", UNREACHABLE_REPORT);
    let r = f.report();
    assert_eq!(r.clones[0].failure, None);
    let broken = r.clones[1].failure.as_deref().unwrap();
    assert!(broken.contains("last_run_report.yaml"), "{broken}");
    assert_eq!(r.clones[2].failure, None);
    let files: Vec<Option<RunReportFile>> = r.clones.iter().map(|c| c.run_report).collect();
    assert_eq!(
        files,
        [
            Some(RunReportFile::Missing),
            Some(RunReportFile::Unreadable),
            Some(RunReportFile::EarlierRun)
        ]
    );
}

/// Real runs of Puppet 8.10 against Puppet Server 8.7 that applied their cached catalog
/// after the server failed them (a 500, a 503 from a full queue, a read timeout): Puppet
/// calls each `unchanged`, and the report counts each as failed, saying why.
#[test]
fn a_run_that_applied_its_cached_catalog_counts_as_failed_with_the_servers_reason() {
    let f = Fleet::new();
    let pairs = [
        (
            "c1",
            include_str!("fixtures/puppet-8-cached-catalog-500.yaml"),
            include_str!("fixtures/puppet-8-cached-catalog-500-report.yaml"),
        ),
        (
            "c2",
            include_str!("fixtures/puppet-8-503-cached-catalog.yaml"),
            include_str!("fixtures/puppet-8-503-cached-catalog-report.yaml"),
        ),
        (
            "c3",
            include_str!("fixtures/puppet-8-timeout-cached-catalog.yaml"),
            include_str!("fixtures/puppet-8-timeout-cached-catalog-report.yaml"),
        ),
        (
            "c4",
            include_str!("fixtures/puppet-8-unchanged.yaml"),
            include_str!("fixtures/puppet-8-unchanged-report.yaml"),
        ),
    ];
    for (name, summary, report) in pairs {
        f.clone(name, "active", Some(summary));
        // As the agent wrote them: each report is of its summary's run.
        f.earlier_report(name, report);
    }
    // The summary alone says what Puppet says.
    assert_eq!(
        summary::parse(pairs[0].1).unwrap().status,
        RunStatus::Unchanged
    );
    let r = f.report();
    let seen: Vec<(RunStatus, Vec<&str>)> = r
        .clones
        .iter()
        .map(|c| {
            assert_eq!(c.run_report, Some(RunReportFile::Read), "{c:?}");
            (
                c.run.status,
                c.failure_kinds.iter().map(|k| k.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (RunStatus::Failed, vec!["cached-catalog", "server-error"]),
            (RunStatus::Failed, vec!["cached-catalog", "server-error"]),
            (RunStatus::Failed, vec!["cached-catalog", "timeout"]),
            (RunStatus::Unchanged, vec![]),
        ]
    );
    assert!(!r.clones[0].run.succeeded);
    let failure = r.clones[1].failure.as_deref().unwrap();
    assert!(failure.contains("Error 503 on SERVER"), "{failure}");
    assert_eq!(r.fleet.by_status[&RunStatus::Failed], 3);
    assert_eq!(r.clones[3].failure, None);
}

/// Until the agent has written the report of its run (it sends it to the server first),
/// the summary's word stands and the report says so.
#[test]
fn the_report_of_an_earlier_run_does_not_judge_the_last_one() {
    let f = Fleet::new();
    f.clone(
        "c1",
        "active",
        Some(include_str!("fixtures/puppet-8-unchanged.yaml")),
    );
    // The cached-catalog run's report is from a minute later than this summary's run.
    f.earlier_report(
        "c1",
        include_str!("fixtures/puppet-8-cached-catalog-500-report.yaml"),
    );
    let c1 = &f.report().clones[0];
    assert_eq!(c1.run.status, RunStatus::Unchanged);
    assert_eq!(c1.run_report, Some(RunReportFile::EarlierRun));
    assert!(c1.failure_kinds.is_empty());
}

/// What a clone's root can plant where the report reads: each one is that clone's
/// `unreadable` run, naming the path and why, and nothing of the host is read.
#[test]
fn planted_files_are_refused_per_clone_and_never_followed() {
    let f = Fleet::new();
    let host_secret = f.root.join("host-secret.yaml");
    fs::write(&host_secret, UNCHANGED).unwrap();
    let public = |name: &str| {
        let dir = f
            .layout
            .fs(f.layout.upper_dir(name))
            .join("var/cache/puppet/public");
        fs::create_dir_all(&dir).unwrap();
        dir.join("last_run_summary.yaml")
    };
    f.clone("c1", "active", None);
    std::os::unix::fs::symlink(&host_secret, public("c1")).unwrap();
    f.clone("c2", "active", None);
    nix::unistd::mkfifo(
        &public("c2"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    f.clone("c3", "active", None);
    fs::write(public("c3"), vec![b'#'; MAX_SUMMARY_BYTES as usize + 1]).unwrap();
    f.clone("c4", "active", Some(FAILED));
    let state = f
        .layout
        .fs(f.layout.upper_dir("c4"))
        .join("var/cache/puppet/state");
    std::os::unix::fs::symlink(&f.root, &state).unwrap();
    f.clone("c5", "active", Some(UNCHANGED));

    let r = f.report();
    let reasons: Vec<&str> = r.clones[..3]
        .iter()
        .map(|c| {
            assert_eq!(c.run.status, RunStatus::Unreadable, "{c:?}");
            c.error.as_deref().unwrap()
        })
        .collect();
    assert!(reasons[0].contains("it is a symlink"), "{}", reasons[0]);
    assert!(reasons[1].contains("it is a FIFO"), "{}", reasons[1]);
    assert!(reasons[2].contains("more than the"), "{}", reasons[2]);
    for (clone, reason) in r.clones.iter().zip(&reasons) {
        assert!(
            reason.contains(&format!(
                "/var/lib/puppet-clone-army/{}-overlay/var/cache/puppet/public/last_run_summary.yaml",
                clone.name
            )),
            "{reason}"
        );
    }
    let failure = r.clones[3].failure.as_deref().unwrap();
    assert!(
        failure.contains("var/cache/puppet/state on its way is a symlink"),
        "{failure}"
    );
    assert_eq!(r.clones[4].run.status, RunStatus::Unchanged);
}

/// A clone writes its own summary and report: their text reaches a terminal escaped.
#[test]
fn the_table_shows_clone_text_escaped() {
    let f = Fleet::new();
    f.clone(
        "c1",
        "active",
        Some(&FAILED.replace("puppet: 7.23.0", "puppet: \"7.23\\e]0;owned\\a\"")),
    );
    f.full_report(
        "c1",
        &FAILED_REPORT.replacen("message: ", "message: \"\\e[2Jcleared\" # ", 1),
    );
    let table = render::table(&f.report());
    assert!(
        !table.contains('\u{1b}') && !table.contains('\u{7}'),
        "{table}"
    );
    assert!(table.contains("7.23\\x1b]0;owned\\x07"), "{table}");
}

#[test]
fn works_without_systemd() {
    let f = sample();
    f.systemd.make_unreachable();
    let r = f.report();
    assert!(!r.states_known);
    assert!(r.systemd_error.as_deref().unwrap().contains("system bus"));
    assert!(r.clones.iter().all(|c| c.state == ReportState::Unknown));
    assert_eq!(r.fleet.by_status[&RunStatus::Unchanged], 2);
}

#[test]
fn aio_bases_keep_the_summary_under_opt() {
    let f = Fleet::new();
    fs::write(
        f.root
            .join("var/lib/puppet-clone-army/debian-12/etc/clone-army/base.json"),
        r#"{"name":"debian-12","os":"debian","release":"bookworm","mirror":"m",
            "puppet_source":"distro","puppet_confdir":"/etc/puppetlabs/puppet",
            "created_at":"2026-11-22T03:30:00Z","builder":"debootstrap"}"#,
    )
    .unwrap();
    f.clone("a1", "active", None);
    let public = f
        .layout
        .fs("/var/lib/puppet-clone-army/a1-overlay/opt/puppetlabs/puppet/public");
    fs::create_dir_all(&public).unwrap();
    fs::write(public.join("last_run_summary.yaml"), CHANGED).unwrap();
    let r = f.report();
    assert_eq!(r.clones[0].run.status, RunStatus::Changed);
    assert_eq!(
        r.clones[0].summary.as_deref(),
        Some("/var/lib/puppet-clone-army/a1-overlay/opt/puppetlabs/puppet/public/last_run_summary.yaml")
    );
}

/// Puppet before 7 (Debian 11's 5.5) wrote the summary to `$statedir`.
#[test]
fn older_agents_keep_the_summary_in_the_statedir() {
    let f = Fleet::new();
    f.clone("old1", "active", None);
    let state = f
        .layout
        .fs("/var/lib/puppet-clone-army/old1-overlay/var/cache/puppet/state");
    fs::create_dir_all(&state).unwrap();
    fs::write(state.join("last_run_summary.yaml"), CHANGED).unwrap();
    let r = f.report();
    assert_eq!(r.clones[0].run.status, RunStatus::Changed);
    assert_eq!(
        r.clones[0].summary.as_deref(),
        Some(
            "/var/lib/puppet-clone-army/old1-overlay/var/cache/puppet/state/last_run_summary.yaml"
        )
    );
}

#[test]
fn an_empty_fleet_reports_zeroes() {
    let f = Fleet::new();
    let r = f.report();
    assert_eq!(r.fleet.clones, 0);
    assert_eq!(r.fleet.total_time.p50, None);
    // No clones, no systemd call needed.
    assert!(f.systemd.calls().is_empty());
}

#[test]
fn interval_zero_is_refused() {
    let f = Fleet::new();
    let err = report(&f.ctx(), &ReportRequest::fleet_only(0), NOW).unwrap_err();
    assert_eq!(err.kind(), "invalid-argument");
}

#[test]
fn a_server_that_does_not_answer_leaves_the_fleet_part() {
    let f = sample();
    let ca = f.root.join("ca.pem");
    fs::write(&ca, include_str!("fixtures/ca.pem")).unwrap();
    let r = report(
        &f.ctx(),
        &ReportRequest {
            interval: 1800,
            server: Some("https://127.0.0.1:1".to_owned()),
            ca_cert: Some(ca),
            puppetdb: Some("127.0.0.1:1".to_owned()),
            client: None,
        },
        NOW,
    )
    .unwrap();
    assert_eq!(r.clones.len(), 8);
    let server = r.server.unwrap();
    assert!(!server.ok);
    assert!(server.error.is_some());
    let puppetdb = r.puppetdb.unwrap();
    assert!(!puppetdb.ok);
    assert_eq!(puppetdb.url, "https://127.0.0.1:1");
    assert!(puppetdb.error.unwrap().contains("--client-cert"));
}

/// The report with a server view from the Puppet Server 7 fixture, as `fetch` would make it.
pub(crate) fn sample_with_server() -> Report {
    let mut r = sample().report();
    let json: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/puppetserver-7-status-debug.json")).unwrap();
    let s = server::summarise(&json);
    r.server = Some(server::ServerView {
        url: "https://puppet.example.com:8140/status/v1/services?level=debug".to_owned(),
        ok: true,
        error: None,
        ca_cert: Some("/var/lib/puppet/ssl/certs/ca.pem".to_owned()),
        http_status: Some(200),
        version: s.version,
        states: s.states,
        jruby: s.jruby,
        compile: s.compile,
        catalog_requests: s.catalog_requests,
        all_requests: s.all_requests,
        endpoints: s.endpoints,
        jvm: s.jvm,
        // The raw answer is the fixture itself; kept out of the snapshot for size.
        raw: None,
    });
    let status: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/puppetdb-8-status-debug.json")).unwrap();
    let (version, state, queue_depth) = puppetdb::status_fields(&status);
    let metric = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    r.puppetdb = Some(puppetdb::PuppetdbView {
        url: "https://puppet.example.com:8081".to_owned(),
        ok: true,
        error: None,
        ca_cert: Some("/var/lib/puppet/ssl/certs/ca.pem".to_owned()),
        client_cert: Some("/var/lib/puppet/ssl/certs/load1.example.com.pem".to_owned()),
        version,
        state,
        queue_depth,
        commands: Some(
            puppetdb::commands(
                &metric(include_str!("fixtures/puppetdb-8-processed.json")),
                &metric(include_str!("fixtures/puppetdb-8-processing-time.json")),
            )
            .unwrap(),
        ),
        metrics_error: None,
        fleet: Some(puppetdb_fleet_sample(r.now, r.interval)),
        fleet_error: None,
    });
    r
}

/// Two load hosts' fleet from PuppetDB's answers (fixtures/README.md), as `fetch` makes it.
fn puppetdb_fleet_sample(now: u64, interval: u64) -> crate::protocol::answers::PuppetdbFleet {
    puppetdb_fleet::fleet(puppetdb_fleet::fake::answer, now, interval).unwrap()
}

#[test]
fn the_table_shows_what_is_not_trusted_escaped() {
    let mut r = sample_with_server();
    let fleet = r.puppetdb.as_mut().unwrap().fleet.as_mut().unwrap();
    fleet
        .untrusted
        .push(crate::protocol::answers::UntrustedClaim {
            node: "clone1.tw.sandbox.test\u{1b}]0;owned\u{7}".to_owned(),
            clone: None,
            certname: None,
            problem: crate::protocol::answers::UntrustedProblem::CloneAsLoadHost,
            message: "its clone_army fact lists 2 clones\u{9b}2J".to_owned(),
        });
    let text = render::table(&r);
    assert!(
        text.contains(
            "  not trusted, so not asked for: 1 claim of clone_army facts\n    \
             clone1.tw.sandbox.test\\x1b]0;owned\\x07 (clone-as-load-host): \
             its clone_army fact lists 2 clones\\u{9b}2J\n"
        ),
        "{text}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\u{9b}'));
}

#[test]
fn json_snapshot() {
    let r = sample_with_server();
    let text =
        serde_json::to_string_pretty(&crate::protocol::answers::Envelope::success(&r)).unwrap();
    insta::assert_snapshot!(text);
    // And it decodes back.
    let back: crate::protocol::answers::Envelope<Report> = serde_json::from_str(&text).unwrap();
    assert_eq!(back.result.unwrap(), r);
}

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(render::table(&sample_with_server()));
}

#[test]
fn prometheus_snapshot() {
    // The format's rules are held in render's own tests; this is the whole file, to
    // review as a whole when it changes.
    let text =
        render::prometheus(&sample_with_server()).replace(env!("CARGO_PKG_VERSION"), "[version]");
    insta::assert_snapshot!(text);
}

#[test]
fn table_shows_a_server_error() {
    let mut r = sample().report();
    let ca = PathBuf::from("/nonexistent/ca.pem");
    let deadline = Deadline::after(REPORT_DEADLINE);
    r.server = Some(server::fetch(
        "https://127.0.0.1:1",
        Some(&ca),
        &deadline,
        |p| p.to_owned(),
    ));
    let text = render::table(&r);
    let expected = concat!(
        "server: https://127.0.0.1:1/status/v1/services?level=debug\n",
        "  error: cannot read the CA certificate /nonexistent/ca.pem"
    );
    assert!(text.contains(expected), "{text}");
}

#[test]
fn reports_through_one_cache_say_what_fresh_reports_say() {
    let f = sample();
    let request = ReportRequest::fleet_only(1800);
    let mut runs = RunCache::default();
    let deadline = Deadline::after(REPORT_DEADLINE);
    let cached =
        |runs: &mut RunCache| report_with(&f.ctx(), &request, NOW, runs, &deadline).unwrap();
    assert_eq!(cached(&mut runs), f.report());
    assert_eq!(cached(&mut runs), f.report());

    // c3's next run failed otherwise, and c2 is gone.
    std::thread::sleep(Duration::from_millis(50));
    f.full_report("c3", UNREACHABLE_REPORT);
    fs::remove_file(
        f.layout
            .fs(f.layout.unit_path(&f.layout.mount_unit_name("c2"))),
    )
    .unwrap();
    let after = cached(&mut runs);
    assert_eq!(after, f.report());
    let c3 = after.clones.iter().find(|c| c.name == "c3").unwrap();
    assert!(
        c3.failure
            .as_deref()
            .unwrap()
            .contains("Connection refused"),
        "{c3:?}"
    );
}

/// The server under test writes its status answer: the names and states of its services
/// reach the operator's terminal escaped.
#[test]
fn a_server_state_with_escape_sequences_is_shown_escaped() {
    let mut r = sample_with_server();
    let hostile = serde_json::json!({
        "evil\u{1b}]0;owned\u{7}": {"state": "stopped\u{1b}[2J\u{9b}31m"},
        "master": {"state": "running"}
    });
    let server = r.server.as_mut().unwrap();
    server.states = server::summarise(&hostile).states;
    server.url = "https://puppet:8140/\u{1b}[2J".to_owned();
    let table = render::table(&r);
    assert!(
        !table.chars().any(|c| c.is_control() && c != '\n'),
        "{table:?}"
    );
    assert!(
        table.contains("services not running: evil\\x1b]0;owned\\x07 stopped\\x1b[2J\\u{9b}31m"),
        "{table}"
    );
}

/// PuppetDB's answers name load hosts and clones: in the textfile they are label values
/// without control characters, whatever PuppetDB held.
#[test]
fn a_puppetdb_host_with_escape_sequences_is_a_label_value_without_them() {
    let mut r = sample_with_server();
    let fleet = r.puppetdb.as_mut().unwrap().fleet.as_mut().unwrap();
    fleet.hosts[0].host = "load1\u{1b}]0;owned\u{7}\r# HELP fake".to_owned();
    fleet.hosts[0].clones[0].name = "clone1\u{9b}2J".to_owned();
    let text = render::prometheus(&r);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(
        text.contains("host=\"load1\\\\x1b]0;owned\\\\x07\\\\x0d# HELP fake\""),
        "{text}"
    );
    assert!(text.contains("clone=\"clone1\\\\u{9b}2J\""), "{text}");
}

/// The server under test serves a failing `exec` whose command line is 32 MiB: the agent
/// logs it whole, and the report keeps the first of it.
#[test]
fn a_failure_line_of_32_mib_is_kept_cut() {
    let f = Fleet::new();
    f.clone("c1", "active", Some(FAILED));
    let head = format!("{}logs:\n- level: err\n  message: '", f.run_start("c1"));
    let tail = "'\n";
    let line = "x".repeat(MAX_REPORT_BYTES as usize - head.len() - tail.len());
    f.earlier_report("c1", &format!("{head}{line}{tail}"));
    let failure = f.report().clones[0].failure.clone().unwrap();
    assert_eq!(
        failure.chars().count(),
        kept::MAX_FAILURE_LINE_CHARS,
        "{}",
        failure.len()
    );
    assert!(failure.starts_with("xxx") && failure.ends_with('…'));
}

/// A clone's summary says its Puppet and catalog versions are 400 KiB each (two fit in a
/// summary): each is kept cut.
#[test]
fn versions_of_400_kib_are_kept_cut() {
    let f = Fleet::new();
    let huge = "9".repeat(400 * 1024);
    f.clone(
        "c1",
        "active",
        Some(
            &UNCHANGED
                .replace("puppet: 7.23.0", &format!("puppet: '7.{huge}'"))
                .replace("config: 1795318947", &format!("config: '{huge}'")),
        ),
    );
    let r = f.report();
    let run = &r.clones[0].run;
    let version = run.puppet_version.as_deref().unwrap();
    assert_eq!(version.chars().count(), kept::MAX_VERSION_CHARS);
    assert!(version.starts_with("7.99") && version.ends_with('…'));
    let config = run.config_version.as_deref().unwrap();
    assert_eq!(config.chars().count(), kept::MAX_VERSION_CHARS);
}

/// Two clones rewrite a failing report of 20 MiB before every sample: together more than a
/// sample parses. Each sample parses one of them; the other keeps what was read of it
/// before (or says it is not read yet), and has its turn in the next sample.
#[test]
fn clones_rewriting_huge_reports_every_sample_cannot_make_every_sample_parse_them() {
    let f = Fleet::new();
    let request = ReportRequest::fleet_only(1800);
    f.clone("c1", "active", Some(FAILED));
    f.clone("c2", "active", Some(FAILED));
    let time = f.run_start("c1");
    let huge = |sample: u32| {
        let head = format!("{time}logs:\n- level: err\n  message: 'sample {sample} ");
        format!("{head}{}'\n", "x".repeat(20 << 20))
    };
    let mut runs = RunCache::default();
    let failure = |r: &Report, i: usize| r.clones[i].failure.clone().unwrap();
    f.full_report("c1", &huge(1));
    f.full_report("c2", &huge(1));
    let first = report_with(
        &f.ctx(),
        &request,
        NOW,
        &mut runs,
        &Deadline::after(REPORT_DEADLINE),
    )
    .unwrap();
    assert!(failure(&first, 0).starts_with("sample 1 "));
    assert!(failure(&first, 1).contains("not read yet"), "{first:?}");
    // The agent writes a new report by renaming it over the old one.
    for clone in ["c1", "c2"] {
        let state = f
            .layout
            .fs(f.layout.upper_dir(clone))
            .join("var/cache/puppet/state");
        fs::write(state.join("new.yaml"), huge(2)).unwrap();
        fs::rename(state.join("new.yaml"), state.join("last_run_report.yaml")).unwrap();
    }
    let second = report_with(
        &f.ctx(),
        &request,
        NOW,
        &mut runs,
        &Deadline::after(REPORT_DEADLINE),
    )
    .unwrap();
    assert!(failure(&second, 1).starts_with("sample 2 "));
    assert!(
        failure(&second, 0).starts_with("sample 1 "),
        "c1 waits its turn"
    );
    // Their summaries, small, are read every sample all the same.
    assert_eq!(second.clones[0].run.status, RunStatus::Failed);
}

/// What the recorder keeps for its whole life stays within a budget per clone, however
/// large the lines and versions its clones' agents write: here 64 clones, each failing
/// with three distinct lines of 512 KiB and saying its Puppet version is 200 KiB.
#[test]
fn many_clones_with_huge_failure_lines_keep_a_bounded_run_cache() {
    let f = Fleet::new();
    let clones = 64;
    let line = |c: usize, n: usize| format!("{c} {n} {}", "x".repeat(512 << 10));
    for c in 0..clones {
        let name = format!("c{c}");
        let version = format!("puppet: '7.{}'", "1".repeat(200 << 10));
        f.clone(
            &name,
            "active",
            Some(&FAILED.replace("puppet: 7.23.0", &version)),
        );
        let logs: String = (0..3)
            .map(|n| format!("- level: err\n  message: '{}'\n", line(c, n)))
            .collect();
        f.full_report(&name, &format!("logs:\n{logs}"));
    }
    let mut runs = RunCache::for_one_report();
    let request = ReportRequest::fleet_only(1800);
    let r = report_with(
        &f.ctx(),
        &request,
        NOW,
        &mut runs,
        &Deadline::after(REPORT_DEADLINE),
    )
    .unwrap();
    assert!(r.clones.iter().all(|c| c.failure.is_some()));
    // Three failure lines, two versions and two paths a clone, in UTF-8.
    let per_clone = last_report::MAX_FAILURE_LINES * (4 * kept::MAX_FAILURE_LINE_CHARS + 1)
        + 2 * 4 * kept::MAX_VERSION_CHARS
        + 2 * 256;
    let kept = runs.kept_text_bytes();
    assert!(
        kept <= clones * per_clone,
        "{kept} bytes kept for {clones} clones, more than {per_clone} a clone"
    );
}

/// `report --group-by pp_role`: the twins' runs by their node's role, read from each
/// twin's record on the host; clones that are no twins, and twins of no role, are `-`.
#[test]
fn the_runs_are_grouped_by_the_role_their_twins_stand_in_for() {
    let fleet = Fleet::new();
    for (name, summary) in [
        ("web1", UNCHANGED),
        ("web2", CHANGED),
        ("db1", FAILED),
        ("plain", UNCHANGED),
    ] {
        fleet.clone(name, "active", Some(summary));
    }
    let record = |name: &str, node: &str, extensions: serde_json::Value| {
        let config = fleet.layout.fs(fleet.layout.config_dir(name));
        fs::create_dir_all(&config).unwrap();
        let text = serde_json::json!({"node": node, "environment": "production", "extensions": extensions});
        fs::write(config.join("twin.json"), text.to_string()).unwrap();
    };
    record(
        "web1",
        "web01.example.com",
        serde_json::json!({"pp_role": "web"}),
    );
    record(
        "web2",
        "web02.example.com",
        serde_json::json!({"pp_role": "web"}),
    );
    record(
        "db1",
        "db01.example.com",
        serde_json::json!({"pp_role": "db\u{1b}[2J"}),
    );
    let report = fleet.report();
    let groups = super::groups::of(&fleet.ctx(), &report.clones, "pp_role", 1800).unwrap();
    let seen: Vec<(&str, usize)> = groups
        .groups
        .iter()
        .map(|g| (g.value.as_str(), g.fleet.clones))
        .collect();
    assert_eq!(seen, [("-", 2), ("web", 2)]);
    let web = &groups.groups[1];
    assert_eq!(web.fleet.total_time.count, 2);
    assert_eq!(web.resources.count, 2);

    let mut with_groups = report.clone();
    with_groups.groups = Some(groups);
    let table = super::render::table(&with_groups);
    assert!(table.contains("pp_role=web:\n  clones: 2"), "{table}");
    assert!(
        !table.contains('\u{1b}'),
        "a twin's value is escaped: {table}"
    );

    assert_eq!(
        super::groups::key("1.3.6.1.4.1.34380.1.1.13").unwrap(),
        "pp_role"
    );
    let error = super::groups::key("pp_authorization").unwrap_err();
    assert_eq!(error.field(), Some("group-by"));
}

/// `report --group-by facts.<path>`: a twin's value from its node's facts on the host, a
/// scalar only; `--group-by pp_role` of a clone that is no twin: the extension its own
/// certificate request asks for (`clone create --extension`).
#[test]
fn clones_are_grouped_by_their_twins_facts_and_by_their_own_extensions() {
    let fleet = Fleet::new();
    for name in ["twin1", "own1", "plain"] {
        fleet.clone(name, "active", Some(UNCHANGED));
    }
    let config = |name: &str| {
        let dir = fleet.layout.fs(fleet.layout.config_dir(name));
        fs::create_dir_all(dir.join("facts.d")).unwrap();
        dir
    };
    let twin = config("twin1");
    fs::write(
        twin.join("twin.json"),
        serde_json::json!({"node": "web01.example.com", "extensions": {"pp_role": "web"}})
            .to_string(),
    )
    .unwrap();
    fs::write(
        twin.join("facts.d/clone_army_twin.json"),
        serde_json::json!({"os": {"family": "Debian", "release": {"major": "12"}},
                           "is_virtual": true, "role_fact": "web"})
        .to_string(),
    )
    .unwrap();
    fs::write(
        config("own1").join("csr_attributes.yaml"),
        "---\nextension_requests:\n  \"pp_role\": \"cache\"\n",
    )
    .unwrap();
    let group = |clone: &str, key: &str| {
        let key = super::groups::key(key).unwrap();
        super::groups::group_of(&fleet.ctx(), clone, &key).unwrap()
    };
    assert_eq!(group("twin1", "facts.os.family"), "Debian");
    assert_eq!(group("twin1", "facts.os.release.major"), "12");
    assert_eq!(group("twin1", "facts.is_virtual"), "true");
    assert_eq!(group("twin1", "facts.os"), "-", "a structure is no group");
    assert_eq!(group("twin1", "facts.nothing.here"), "-");
    assert_eq!(
        group("own1", "facts.os.family"),
        "-",
        "no twin: no node's facts"
    );
    assert_eq!(group("twin1", "pp_role"), "web");
    assert_eq!(group("own1", "pp_role"), "cache");
    assert_eq!(group("own1", "node"), "-", "no twin: no node");
    assert_eq!(group("plain", "pp_role"), "-");
    assert!(super::groups::key("facts.os family").is_err());
}
