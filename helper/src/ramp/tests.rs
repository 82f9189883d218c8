//! The ramp's loop against a model fleet whose run times grow with the clones running,
//! sampled by the recorder's own sampler, on a clock the tests drive.

use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::clone::run_mode::{even_share_bound, Phasing};
use crate::protocol::answers::{ReportState, RunStatus};
use crate::record::host::HostReading;
use crate::record::sample::fixtures;
use crate::record::sample::Sampler;
use crate::record::test_clock::{clock, TestClock};

const INTERVAL: u64 = 120;

/// Clones that each run every `INTERVAL` seconds from when they were started, at the
/// offset their place among the names is given by `phasing` (phase `i` of the names'
/// count, as the class gives `clone<i+1>`); a start takes `boot` seconds of the clock
/// (when one is given), and the clones' phases count from its end, as their timers start
/// when they have booted; a run takes `seconds_per_clone` × the clones running (a
/// clone's first run 30 s more, as a certificate request and the first plugin sync do),
/// and fails once more than `fails_above` run. Once more than `skips_above` run, every
/// other clone runs only every second interval, as when a timer finds the last run still
/// going and skips one.
struct ModelFleet<'c> {
    clones: Vec<(String, Option<u64>)>,
    phasing: Phasing,
    boot: Option<(&'c TestClock, u64)>,
    seconds_per_clone: f64,
    fails_above: usize,
    skips_above: usize,
    /// Names that refuse to start.
    broken: Vec<String>,
    /// The time the model is at: a start moves it to the clock's.
    now: u64,
    sampler: Sampler,
    starts: Vec<Vec<String>>,
}

impl ModelFleet<'_> {
    fn new(names: &[&str], running: usize) -> Self {
        ModelFleet {
            clones: names
                .iter()
                .enumerate()
                .map(|(i, n)| ((*n).to_owned(), (i < running).then_some(0)))
                .collect(),
            phasing: Phasing::PrefixEven,
            boot: None,
            seconds_per_clone: 0.5,
            fails_above: usize::MAX,
            skips_above: usize::MAX,
            broken: Vec::new(),
            now: 1000,
            sampler: Sampler::default(),
            starts: Vec::new(),
        }
    }

    fn running(&self) -> usize {
        self.clones.iter().filter(|c| c.1.is_some()).count()
    }

    /// When clone `i`, started at `started`, makes its first run.
    fn first_run(&self, i: usize, started: u64) -> u64 {
        let count = self.clones.len() as u32;
        started + self.phasing.offset(INTERVAL, i as u32, count)
    }

    /// When the runs that started in `(from, to]` started (every clone runs each
    /// interval: the model's skipping is not modelled here).
    fn run_starts(&self, from: u64, to: u64) -> Vec<u64> {
        assert_eq!(self.skips_above, usize::MAX);
        let mut starts: Vec<u64> = (0..self.clones.len())
            .filter_map(|i| Some(self.first_run(i, self.clones[i].1?)))
            .filter(|first| *first <= to)
            .flat_map(|first| (0..=(to - first) / INTERVAL).map(move |k| first + k * INTERVAL))
            .filter(|t| *t > from)
            .collect();
        starts.sort_unstable();
        starts
    }
}

impl Fleet for ModelFleet<'_> {
    fn clones(&mut self) -> Result<Vec<(String, bool)>> {
        Ok(self
            .clones
            .iter()
            .map(|(n, s)| (n.clone(), s.is_some()))
            .collect())
    }

    fn start(&mut self, names: &[String], _spread: u64) -> Result<Vec<String>> {
        self.starts.push(names.to_vec());
        if let Some((clock, boot)) = self.boot {
            clock.sleep(std::time::Duration::from_secs(boot));
            self.now = clock.now();
        }
        let mut failed = Vec::new();
        for name in names {
            if self.broken.contains(name) {
                failed.push(name.clone());
                continue;
            }
            let clone = self.clones.iter_mut().find(|c| &c.0 == name).unwrap();
            clone.1 = Some(self.now);
        }
        Ok(failed)
    }

    fn sample(&mut self, now: u64) -> Result<(Sample, Vec<NewRun>)> {
        self.now = now;
        let running = self.running();
        let seconds = self.seconds_per_clone * running as f64;
        let status = if running > self.fails_above {
            RunStatus::Failed
        } else {
            RunStatus::Unchanged
        };
        let clones = self
            .clones
            .iter()
            .enumerate()
            .map(|(i, (name, started))| {
                let first = started.map(|s| self.first_run(i, s));
                let period = if running > self.skips_above && i % 2 == 1 {
                    2 * INTERVAL
                } else {
                    INTERVAL
                };
                let last = first.and_then(|first| {
                    (now >= first).then(|| first + (now - first) / period * period)
                });
                let seconds = if last.is_some() && last == first {
                    seconds + 30.0
                } else {
                    seconds
                };
                let state = if started.is_some() {
                    ReportState::Running
                } else {
                    ReportState::Stopped
                };
                fixtures::clone(name, state, last.map(|t| (t, status, seconds)))
            })
            .collect();
        let report = fixtures::report(now, clones);
        let sample = self.sampler.sample(
            &report,
            HostReading::default(),
            crate::record::DEFAULT_EVERY,
        );
        Ok((sample, self.sampler.latest_runs().to_vec()))
    }
}

/// clone1 to cloneN, `running` of them running.
fn fleet_of(n: usize, running: usize) -> ModelFleet<'static> {
    let names: Vec<String> = (1..=n).map(|i| format!("clone{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    ModelFleet::new(&refs, running)
}

fn request(output: PathBuf) -> RampRequest {
    RampRequest {
        output,
        timeline: None,
        label: Some("model".to_owned()),
        step: 10,
        settle: INTERVAL,
        hold: INTERVAL,
        every: crate::record::DEFAULT_EVERY,
        max_clones: None,
        spread: 0,
        bounds: Bounds {
            p95_seconds: Some(12.0),
            ..Bounds::default()
        },
        report: ReportRequest {
            interval: INTERVAL,
            server: None,
            ca_cert: None,
            puppetdb: None,
            client: None,
        },
    }
}

#[test]
fn it_stops_at_the_first_step_past_a_bound_and_names_the_last_one_within() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.timeline = Some(dir.path().join("ramp.jsonl"));
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();

    // 0.5 s a clone: 10 s at 20 clones, 15 s at 30 — past the 12 s bound.
    let clones: Vec<usize> = done.baseline.steps.iter().map(|s| s.clones).collect();
    assert_eq!(clones, [10, 20, 30]);
    let v = &done.baseline.verdict;
    assert_eq!(v.ended_by, "degraded");
    assert_eq!(v.sustained.as_ref().unwrap().clones, 20);
    assert_eq!(v.first_degraded.as_ref().unwrap().clones, 30);
    assert_eq!(
        v.summary,
        "sustained 20 agents at interval 120 s (10 runs/min); first degraded at 30 (p95 run time 15.0 s > 12.0 s)"
    );
    // Every clone of a step ran once in its hold, and nothing was started after the knee.
    assert!(done
        .baseline
        .steps
        .iter()
        .all(|s| s.runs == s.clones && s.throughput_percent == Some(100.0)));
    assert_eq!(fleet.running(), 30);
    assert_eq!(fleet.starts.len(), 3);

    // The file is the answer, and the timeline marks each sample with its step.
    let written = baseline::read(&req.output, "baseline").unwrap();
    assert_eq!(written, done.baseline);
    let marks: Vec<Option<StepMark>> = std::fs::read_to_string(req.timeline.as_ref().unwrap())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Sample>(l).unwrap().step)
        .collect();
    // Each step: its first sample, then one every 10 s of its settling and its window.
    assert_eq!(marks.len(), 3 * 25);
    assert_eq!(
        marks[25],
        Some(StepMark {
            step: 2,
            clones: 20
        })
    );
}

/// The busiest `WINDOW` seconds of each step's window, and their bound for the clones
/// the step ran ([`even_share_bound`]): `(clones, runs in the window, busiest, bound)`.
fn busiest_of_each_step(
    fleet: &ModelFleet,
    baseline: &Baseline,
) -> Vec<(usize, usize, usize, usize)> {
    const WINDOW: u64 = 12;
    baseline
        .steps
        .iter()
        .map(|step| {
            let from = step.t + baseline.settle;
            let starts = fleet.run_starts(from, from + baseline.hold);
            let busiest = (0..starts.len())
                .map(|i| starts[i..].partition_point(|t| *t < starts[i] + WINDOW))
                .max()
                .unwrap_or(0);
            let bound = even_share_bound(step.clones as u64, INTERVAL, WINDOW);
            (step.clones, starts.len(), busiest, bound)
        })
        .collect()
}

/// Each step's clones take 6 s to boot, so a step ends a little after its hold; starting
/// the next one when the last ended would shift every step's clones against the ones
/// before by those seconds, and their runs would bunch. On the ramp's rhythm of whole
/// intervals, the prefix-even phasing keeps every step's window evenly loaded.
#[test]
fn every_steps_window_holds_its_runs_evenly_spread() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    for (clones, step) in [(40, 10), (20, 2), (12, 1)] {
        let clock = clock(None);
        let mut fleet = fleet_of(clones, 0);
        fleet.boot = Some((&clock, 6));
        let mut req = request(dir.path().join(format!("{clones}-{step}.json")));
        req.step = step;
        req.bounds.p95_seconds = Some(1000.0);
        let done = ramp(&mut fleet, &req, &clock, &never).unwrap();
        assert_eq!(done.baseline.steps.len(), clones / step);
        // Each step starts two intervals (settle and hold) after the one before.
        for pair in done.baseline.steps.windows(2) {
            assert_eq!(pair[1].t - pair[0].t, 2 * INTERVAL);
        }
        for (running, runs, busiest, bound) in busiest_of_each_step(&fleet, &done.baseline) {
            assert_eq!(runs, running, "{clones} by {step}: one run of each clone");
            assert!(
                busiest <= bound,
                "{clones} by {step}: at {running} clones the busiest 12 s held {busiest} runs, more than {bound}"
            );
        }
    }
}

/// A step whose clones take 25 s to start samples from then on its 10 s rhythm: the
/// samples due while they started are skipped, not taken at once.
#[test]
fn samples_due_while_the_clones_start_are_skipped_not_taken_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    let clock = clock(None);
    let mut fleet = fleet_of(20, 0);
    fleet.boot = Some((&clock, 25));
    let mut req = request(dir.path().join("ramp.json"));
    req.timeline = Some(dir.path().join("ramp.jsonl"));
    req.bounds.p95_seconds = Some(1000.0);
    let done = ramp(&mut fleet, &req, &clock, &never).unwrap();
    let times: Vec<u64> = std::fs::read_to_string(req.timeline.as_ref().unwrap())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Sample>(l).unwrap().t)
        .collect();
    let first = done.baseline.steps[0].t;
    let mut want = vec![first + 25];
    want.extend((3..=24).map(|k| first + k * 10));
    assert_eq!(times[..23], want[..]);
    assert_eq!(times[23], first + 2 * INTERVAL + 25);
}

/// The same ramp with the clones phased `i·T/N` over the whole fleet: at its first step
/// the ten clones run within the first quarter of the interval.
#[test]
fn a_fleet_phased_over_its_final_size_bunches_its_first_steps() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    let clock = clock(None);
    let mut fleet = fleet_of(40, 0);
    fleet.phasing = Phasing::FleetEven;
    let mut req = request(dir.path().join("ramp.json"));
    req.bounds.p95_seconds = Some(1000.0);
    let done = ramp(&mut fleet, &req, &clock, &never).unwrap();
    let steps = busiest_of_each_step(&fleet, &done.baseline);
    // 10 clones 3 s apart: four in 12 s where the even share is one and the bound two.
    assert_eq!(steps[0], (10, 10, 4, 2));
    assert_eq!(steps[3], (40, 40, 4, 8));
}

/// Steps whose settle and hold are no whole intervals wait for the next one, so their
/// clones keep the phases of those before.
#[test]
fn steps_start_whole_intervals_apart() {
    assert_eq!(step_period(120, 120, 120), 240);
    assert_eq!(step_period(60, 150, 120), 240);
    assert_eq!(step_period(1800, 1800, 1800), 3600);
    // A baseline read back may hold anything: no overflow, no division by zero.
    assert_eq!(step_period(u64::MAX, 1, 120), u64::MAX);
    assert_eq!(step_period(60, 60, 0), 120);
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    let mut fleet = fleet_of(30, 0);
    let mut req = request(dir.path().join("ramp.json"));
    req.settle = 30;
    req.hold = 150;
    req.bounds.p95_seconds = Some(1000.0);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let starts: Vec<u64> = done.baseline.steps.iter().map(|s| s.t).collect();
    assert_eq!(starts, [1000, 1240, 1480]);
    let text = baseline::table(&baseline::RampReport {
        baseline: done.baseline,
        comparison: None,
    });
    assert!(
        text.contains("+10 clones every 240 s (settle 30 s, hold 150 s)"),
        "{text}"
    );
}

#[test]
fn runs_falling_behind_their_interval_cross_the_throughput_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(40, 0);
    fleet.skips_above = 20;
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.bounds = Bounds {
        min_throughput_percent: Some(90.0),
        ..Bounds::default()
    };
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let steps = &done.baseline.steps;
    assert_eq!(steps.len(), 3, "{steps:#?}");
    assert_eq!(steps[1].throughput_percent, Some(100.0));
    // At 30 clones half of them run every second interval, and their turns fall outside
    // the one-interval window: 15 runs where 30 were due.
    let last = &steps[2];
    assert_eq!((last.runs, last.throughput_percent), (15, Some(50.0)));
    assert_eq!(last.crossed.len(), 1, "{:?}", last.crossed);
    assert_eq!(last.crossed[0].bound, "throughput");
    assert!(done
        .baseline
        .verdict
        .summary
        .ends_with("first degraded at 30 (runs finished 50.0 % of those due < 90.0 %)"));
}

#[test]
fn clones_are_added_in_name_order_from_those_running_up_to_the_most_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = ModelFleet::new(
        &["clone1", "clone2", "clone10", "clone9", "clone11", "web3"],
        1,
    );
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.step = 2;
    req.max_clones = Some(5);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    assert_eq!(
        fleet.starts,
        [vec!["clone2", "clone9"], vec!["clone10", "clone11"]]
    );
    assert_eq!(done.baseline.running_before, 1);
    assert_eq!(done.baseline.verdict.ended_by, "clones");
    assert!(done
        .baseline
        .verdict
        .summary
        .ends_with("no bound crossed: every stopped clone was added"));
}

#[test]
fn failed_runs_and_clones_that_would_not_start_are_in_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(30, 0);
    fleet.fails_above = 15;
    fleet.broken = vec!["clone3".to_owned()];
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.bounds = Bounds {
        error_percent: Some(0.0),
        ..Bounds::default()
    };
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let first = &done.baseline.steps[0];
    assert_eq!((first.added, first.clones), (10, 9));
    assert_eq!(first.start_failed, ["clone3"]);
    let second = &done.baseline.steps[1];
    assert_eq!(second.error_percent, Some(100.0));
    assert_eq!(second.crossed[0].bound, "error-rate");
}

#[test]
fn a_signal_ends_it_without_judging_the_step_cut_short() {
    static STOPPED: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(40, 0);
    let req = request(dir.path().join("ramp.json"));
    // Within the second step (1240 to 1480 s).
    let done = ramp(&mut fleet, &req, &clock(Some((1300, &STOPPED))), &STOPPED).unwrap();
    assert!(STOPPED.load(Ordering::SeqCst));
    assert_eq!(done.baseline.steps.len(), 1);
    assert_eq!(done.baseline.verdict.ended_by, "signal");
    assert!(done
        .baseline
        .verdict
        .summary
        .starts_with("sustained 10 agents"));
}

#[test]
fn a_signal_in_the_first_step_says_no_step_was_judged() {
    static STOPPED: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(40, 0);
    let req = request(dir.path().join("ramp.json"));
    // Within the first step's settling (0 to 120 s).
    let done = ramp(&mut fleet, &req, &clock(Some((60, &STOPPED))), &STOPPED).unwrap();
    assert!(STOPPED.load(Ordering::SeqCst));
    let verdict = &done.baseline.verdict;
    assert!(done.baseline.steps.is_empty());
    assert_eq!(verdict.ended_by, "signal");
    assert_eq!(
        (verdict.sustained.as_ref(), verdict.first_degraded.as_ref()),
        (None, None)
    );
    assert_eq!(verdict.summary, "stopped before the first step was judged");
    // The file says as much.
    assert_eq!(
        baseline::read(&req.output, "baseline").unwrap(),
        done.baseline
    );
}

#[test]
fn first_runs_are_counted_apart_and_the_settling_keeps_them_out_of_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);

    // Settled: the window sees each clone's second run, 5 s at 10 clones.
    let mut fleet = fleet_of(20, 0);
    let done = ramp(
        &mut fleet,
        &request(dir.path().join("a.json")),
        &clock(None),
        &never,
    )
    .unwrap();
    let first = &done.baseline.steps[0];
    assert_eq!((first.runs, first.total_time.max), (10, Some(5.0)));
    assert_eq!(first.first_runs.runs, 0);

    // Not settled, from no clone running: the window holds nine first runs (35 s), kept
    // apart, and one second run (the clone at phase 0 made its first as the step began).
    let mut fleet = fleet_of(20, 0);
    let mut unsettled = request(dir.path().join("b.json"));
    unsettled.settle = 0;
    let done = ramp(&mut fleet, &unsettled, &clock(None), &never).unwrap();
    let first = &done.baseline.steps[0];
    assert_eq!((first.runs, first.first_runs.runs), (1, 9));
    assert_eq!(first.first_runs.total_time.max, Some(35.0));
    // One run is no p95: its time is the max of 1.
    assert_eq!(first.total_time.p95, None);
    assert_eq!(first.total_time.tail_value(), Some(5.0));
    assert_eq!(first.total_time.tail_name(), "max of 1");
    // Each clone made its run in the window, nine of them their first.
    assert_eq!(first.throughput_percent, Some(100.0));
    assert!(first.within_bounds);
}

#[test]
fn bad_requests_are_refused_naming_the_field_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("ramp.json");
    type Change = Box<dyn Fn(&mut RampRequest)>;
    let cases: Vec<(&str, Change)> = vec![
        ("step", Box::new(|r| r.step = 0)),
        ("hold", Box::new(|r| r.hold = INTERVAL - 1)),
        ("every", Box::new(|r| r.every = 0)),
        ("every", Box::new(|r| r.every = r.hold + 1)),
        ("spread", Box::new(|r| r.spread = r.hold)),
        ("max-clones", Box::new(|r| r.max_clones = Some(0))),
        ("interval", Box::new(|r| r.report.interval = 0)),
        ("bounds", Box::new(|r| r.bounds = Bounds::default())),
        ("max-p95", Box::new(|r| r.bounds.p95_seconds = Some(0.0))),
        (
            "max-error-rate",
            Box::new(|r| r.bounds.error_percent = Some(100.0)),
        ),
        (
            "max-jruby-wait",
            Box::new(|r| r.bounds.jruby_wait_ms = Some(-1.0)),
        ),
        (
            "min-throughput",
            Box::new(|r| r.bounds.min_throughput_percent = Some(0.0)),
        ),
        (
            "min-throughput",
            Box::new(|r| r.bounds.min_throughput_percent = Some(100.5)),
        ),
        // The JRuby wait comes from the server: without one it cannot be checked.
        (
            "max-jruby-wait",
            Box::new(|r| r.bounds.jruby_wait_ms = Some(100.0)),
        ),
    ];
    let never = AtomicBool::new(false);
    for (field, change) in cases {
        let mut fleet = ModelFleet::new(&["clone1"], 0);
        let mut bad = request(output.clone());
        change(&mut bad);
        let e = ramp(&mut fleet, &bad, &clock(None), &never).unwrap_err();
        assert_eq!(e.kind(), "invalid-argument", "{field}: {e}");
        assert!(e.to_string().starts_with(field), "{field}: {e}");
        assert!(fleet.starts.is_empty());
        assert!(!output.exists());
    }

    // Nothing stopped to add.
    let mut fleet = ModelFleet::new(&["clone1"], 1);
    let e = ramp(&mut fleet, &request(output.clone()), &clock(None), &never).unwrap_err();
    assert!(
        e.to_string()
            .contains("no stopped clone to add (1 running)"),
        "{e}"
    );
    assert!(!output.exists());
}

#[test]
fn two_baselines_line_up_by_the_clones_each_step_ran() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    let run = |seconds_per_clone: f64, file: &str| {
        let mut fleet = fleet_of(50, 0);
        fleet.seconds_per_clone = seconds_per_clone;
        ramp(
            &mut fleet,
            &request(dir.path().join(file)),
            &clock(None),
            &never,
        )
        .unwrap()
        .baseline
    };
    let old = run(0.5, "old.json");
    let new = run(0.25, "new.json");
    assert_eq!(new.verdict.sustained.as_ref().unwrap().clones, 40);
    let compared = baseline::compare(&new, old);
    type Row = (usize, Option<f64>, Option<f64>, Option<f64>);
    let rows: Vec<Row> = compared
        .rows
        .iter()
        .map(|r| (r.clones, r.p95_old, r.p95_new, r.p95_ratio))
        .collect();
    assert_eq!(
        rows,
        [
            // Ten runs at 10 clones: no p95 on either side to compare.
            (10, None, None, None),
            (20, Some(10.0), Some(5.0), Some(0.5)),
            (30, Some(15.0), Some(7.5), Some(0.5)),
            (40, None, Some(10.0), None),
            (50, None, Some(12.5), None),
        ]
    );
    let text = baseline::table(&baseline::RampReport {
        baseline: new,
        comparison: Some(compared),
    });
    assert!(text.contains(
        "ramp model: +10 clones every 240 s (settle 120 s, hold 120 s) at interval 120 s, from 0 running"
    ));
    assert!(text.contains("old: sustained 20 agents"), "{text}");
    assert!(text.contains("new: sustained 40 agents"), "{text}");
}

/// A baseline file is read as given: a label, a start time or a verdict with escape
/// sequences in it reaches the terminal escaped.
#[test]
fn a_baseline_with_escape_sequences_is_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    let mut old = ramp(
        &mut fleet_of(20, 0),
        &request(dir.path().join("old.json")),
        &clock(None),
        &never,
    )
    .unwrap()
    .baseline;
    let mut new = old.clone();
    new.label = Some("\u{1b}]0;new\u{7}".to_owned());
    old.label = Some("\u{1b}[2Jold".to_owned());
    old.started_at = "\u{9b}31m".to_owned();
    old.verdict.summary = "\u{1b}[8mhidden".to_owned();
    new.verdict.summary = "\rsustained".to_owned();
    let compared = baseline::compare(&new, old);
    let text = baseline::table(&baseline::RampReport {
        baseline: new,
        comparison: Some(compared),
    });
    for raw in ['\u{1b}', '\u{9b}', '\u{7}', '\r'] {
        assert!(!text.contains(raw), "{raw:?} in {text:?}");
    }
}
