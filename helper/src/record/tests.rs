//! The recorder's loop over a temporary root with no clones and a clock the test drives.

use super::*;
use crate::report::tests::{Fleet, NOW, UNCHANGED};
use crate::sys::paths::Layout;
use crate::sys::test_clock::clock;
use crate::systemd::RecordingSystemd;
use std::fs;

fn request(output: PathBuf) -> RecordRequest {
    RecordRequest {
        output,
        every: 10,
        duration: None,
        samples: None,
        max_bytes: DEFAULT_MAX_BYTES,
        keep: DEFAULT_KEEP,
        report: ReportRequest::fleet_only(1800),
        access_log: None,
        group_by: None,
    }
}

fn lines(path: &Path) -> Vec<crate::protocol::record::Sample> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn it_samples_every_period_until_the_count_or_the_duration() {
    let dir = tempfile::tempdir().unwrap();
    let systemd = RecordingSystemd::default();
    let ctx = Context::new(Layout::under(dir.path()), &systemd);
    let output = dir.path().join("timeline.jsonl");
    let never = AtomicBool::new(false);

    let mut by_count = request(output.clone());
    by_count.samples = Some(3);
    let done = record(&ctx, &by_count, &clock(None), &never).unwrap();
    assert_eq!((done.samples, done.ended_by.as_str()), (3, "samples"));
    let taken = lines(&output);
    let times: Vec<u64> = taken.iter().map(|s| s.t).collect();
    assert_eq!(times, [1000, 1010, 1020]);
    assert!(taken
        .iter()
        .all(|s| s.fleet.clones == 0 && s.runs.count == 0));
    assert_eq!(done.started_at, "1970-01-01T00:16:40Z");

    // 25 s: samples at 0, 10 and 20 s; the one due at 30 s is past the end. Appended.
    let mut by_duration = request(output.clone());
    by_duration.duration = Some(25);
    let done = record(&ctx, &by_duration, &clock(None), &never).unwrap();
    assert_eq!((done.samples, done.ended_by.as_str()), (3, "duration"));
    assert_eq!(lines(&output).len(), 6);
}

#[test]
fn a_signal_ends_it_after_the_line_it_wrote() {
    static STOPPED: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let systemd = RecordingSystemd::default();
    let ctx = Context::new(Layout::under(dir.path()), &systemd);
    let output = dir.path().join("timeline.jsonl");
    let done = record(
        &ctx,
        &request(output.clone()),
        &clock(Some((1015, &STOPPED))),
        &STOPPED,
    )
    .unwrap();
    assert_eq!((done.samples, done.ended_by.as_str()), (2, "signal"));
    assert_eq!(lines(&output).len(), 2);
}

#[test]
fn a_samples_requests_together_end_within_its_period_or_one_requests_limit() {
    assert_eq!(sample_deadline(1), https::HTTP_TIMEOUT);
    assert_eq!(sample_deadline(15), Duration::from_secs(15));
    assert_eq!(sample_deadline(3600), report::REPORT_DEADLINE);
}

#[test]
fn bad_requests_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let systemd = RecordingSystemd::default();
    let ctx = Context::new(Layout::under(dir.path()), &systemd);
    let output = dir.path().join("timeline.jsonl");
    let never = AtomicBool::new(false);
    for (field, change) in [
        (
            "every",
            Box::new(|r: &mut RecordRequest| r.every = 0) as Box<dyn Fn(&mut RecordRequest)>,
        ),
        (
            "samples",
            Box::new(|r: &mut RecordRequest| r.samples = Some(0)),
        ),
        (
            "max-bytes",
            Box::new(|r: &mut RecordRequest| r.max_bytes = 100),
        ),
        (
            "interval",
            Box::new(|r: &mut RecordRequest| r.report.interval = 0),
        ),
    ] {
        let mut bad = request(output.clone());
        change(&mut bad);
        let e = record(&ctx, &bad, &clock(None), &never).unwrap_err();
        assert_eq!(e.kind(), "invalid-argument", "{field}");
        assert!(e.to_string().contains(field), "{e}");
        assert!(!output.exists());
    }
}

#[test]
fn the_fleet_s_shape_comes_every_five_minutes_and_the_versions_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let systemd = RecordingSystemd::default();
    let ctx = Context::new(Layout::under(dir.path()), &systemd);
    let output = dir.path().join("timeline.jsonl");
    let never = AtomicBool::new(false);
    let mut every_ten = request(output.clone());
    every_ten.samples = Some(31);
    record(&ctx, &every_ten, &clock(None), &never).unwrap();
    let taken = lines(&output);
    let with_shape: Vec<usize> = taken
        .iter()
        .enumerate()
        .filter(|(_, s)| s.shape.is_some())
        .map(|(i, _)| i)
        .collect();
    // The same (no) clones all along: the first sample, then the one 300 s later.
    assert_eq!(with_shape, [0, 30]);
    assert_eq!(taken[0].shape.as_ref().unwrap().clones, 0);
    assert!(taken.iter().all(|s| s.versions.is_some()));
}

/// `record --group-by pp_role`: a sample's new runs by the same records, looked up as the
/// report looks them up.
#[test]
fn the_recorders_samples_count_their_runs_by_the_same_groups() {
    let fleet = Fleet::new();
    for name in ["web1", "web2", "plain"] {
        fleet.clone(name, "active", Some(UNCHANGED));
    }
    let record = |name: &str, role: &str| {
        let config = fleet.layout.fs(fleet.layout.config_dir(name));
        fs::create_dir_all(&config).unwrap();
        let text = serde_json::json!({"node": format!("{name}.example.com"), "extensions": {"pp_role": role}});
        fs::write(config.join("twin.json"), text.to_string()).unwrap();
    };
    record("web1", "web");
    record("web2", "web");
    let request = ReportRequest::fleet_only(1800);
    let mut sampling = Sampling {
        group_by: Some(crate::report::groups::key("1.3.6.1.4.1.34380.1.1.13").unwrap()),
        ..Sampling::default()
    };
    let sample = sampling.take(&fleet.ctx(), &request, 100, NOW).unwrap();
    let groups = sample.groups.expect("groups");
    assert_eq!(groups.by, "pp_role");
    let runs: Vec<(&str, usize)> = groups
        .groups
        .iter()
        .map(|(value, g)| (value.as_str(), g.runs))
        .collect();
    assert_eq!(runs, [("-", 1), ("web", 2)]);
    assert_eq!(groups.groups["web"].total_time.count, 2);
    // Nothing new in the next sample: the key, and no group.
    let next = sampling
        .take(&fleet.ctx(), &request, 100, NOW + 10)
        .unwrap();
    assert_eq!(
        next.groups.map(|g| (g.by, g.groups.len())),
        Some(("pp_role".to_owned(), 0))
    );
    // Without the key, no groups at all.
    let mut plain = Sampling::default();
    assert_eq!(
        plain.take(&fleet.ctx(), &request, 100, NOW).unwrap().groups,
        None
    );
}
