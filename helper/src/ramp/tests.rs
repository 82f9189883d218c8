//! The ramp's loop against a model fleet whose run times grow with the clones running,
//! sampled by the recorder's own sampler, on a clock the tests drive.

use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::clone::run_mode::{even_share_bound, Phasing};
use crate::protocol::answers::{Distribution, ReportState, RunStatus};
use crate::protocol::ramp::GaveFirst;
use crate::record::host::{CpuTimes, HostReading};
use crate::record::sample::fixtures;
use crate::record::sample::Sampler;
use crate::sys::test_clock::{clock, TestClock};

const INTERVAL: u64 = 120;

/// Clones that each run every `INTERVAL` seconds from when they were started, at the
/// offset their place among the names is given by `phasing` (phase `i` of the names'
/// count, as the class gives `clone<i+1>`); a start takes `boot` seconds of the clock
/// (when one is given), and the clones' phases count from its end, as their timers start
/// when they have booted; a run takes `seconds_per_clone` × the clones running (a
/// clone's first run 30 s more, as a certificate request and the first plugin sync do),
/// half of it catalog retrieval (the server's share) and half the agent's own work, and
/// fails once more than `fails_above` run. Once more than `skips_above` run, every
/// other clone runs only every second interval, as when a timer finds the last run still
/// going and skips one. Once more than `starved_above` run, the agent's own work takes
/// three times as long and the retrieval does not, as on a load host out of CPU; the
/// host's CPU is `cpu_per_clone` busy for each clone running (at most all of it). With
/// `server_cpu`, the host has two CPUs: a server pinned to CPU 0 keeps it that busy, and
/// the clones run on CPU 1. A run also takes `drift` seconds more for every interval the model has run, so that windows
/// one after another differ.
struct ModelFleet<'c> {
    clones: Vec<(String, Option<u64>)>,
    phasing: Phasing,
    boot: Option<(&'c TestClock, u64)>,
    seconds_per_clone: f64,
    fails_above: usize,
    skips_above: usize,
    starved_above: usize,
    cpu_per_clone: Option<f64>,
    server_cpu: Option<f64>,
    drift: f64,
    /// Names that refuse to start.
    broken: Vec<String>,
    /// The time the model is at: a start moves it to the clock's.
    now: u64,
    sampler: Sampler,
    starts: Vec<Vec<String>>,
    stops: Vec<Vec<String>>,
    /// Each CPU's ticks so far, busy and in all.
    cpus: Vec<CpuTimes>,
    /// When each run the samples saw started, and the index of its clone.
    run_log: std::collections::BTreeSet<(u64, usize)>,
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
            starved_above: usize::MAX,
            cpu_per_clone: None,
            server_cpu: None,
            drift: 0.0,
            broken: Vec::new(),
            now: 1000,
            sampler: Sampler::default(),
            starts: Vec::new(),
            stops: Vec::new(),
            cpus: Vec::new(),
            run_log: std::collections::BTreeSet::new(),
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

    /// When the runs that started in `(from, to]` started, as the samples saw them (so
    /// whichever clones ran then, and however often).
    fn run_starts(&self, from: u64, to: u64) -> Vec<u64> {
        self.run_log
            .range((from + 1, 0)..=(to, usize::MAX))
            .map(|(t, _)| *t)
            .collect()
    }

    /// The clones (their indices among the names) whose runs started in `(from, to]`.
    fn clones_that_ran(&self, from: u64, to: u64) -> Vec<usize> {
        let ran: std::collections::BTreeSet<usize> = self
            .run_log
            .range((from + 1, 0)..=(to, usize::MAX))
            .map(|(_, i)| *i)
            .collect();
        ran.into_iter().collect()
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

    fn stop(&mut self, names: &[String]) -> Result<()> {
        self.stops.push(names.to_vec());
        for name in names {
            let clone = self.clones.iter_mut().find(|c| &c.0 == name).unwrap();
            clone.1 = None;
        }
        Ok(())
    }

    fn cpus(&mut self) -> Result<Vec<u32>> {
        Ok(if self.server_cpu.is_some() {
            vec![0, 1]
        } else {
            vec![0]
        })
    }

    fn sample(&mut self, now: u64) -> Result<(Sample, Vec<NewRun>)> {
        let elapsed = now.saturating_sub(self.now);
        self.now = now;
        let running = self.running();
        let drift = self.drift * (now.saturating_sub(1000) / INTERVAL) as f64;
        let retrieval = self.seconds_per_clone * running as f64 / 2.0;
        let own = if running > self.starved_above {
            3.0 * retrieval
        } else {
            retrieval
        };
        let seconds = retrieval + own + drift;
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
                let mut clone = fixtures::clone(name, state, last.map(|t| (t, status, seconds)));
                clone.run.config_retrieval_time = last.map(|_| retrieval);
                (clone, last.map(|t| (t, i)))
            })
            .collect::<Vec<_>>();
        let (clones, lasts): (Vec<_>, Vec<_>) = clones.into_iter().unzip();
        self.run_log.extend(lasts.into_iter().flatten());
        let report = fixtures::report(now, clones);
        let reading = match self.cpu_per_clone {
            Some(per_clone) => {
                let ticks = elapsed * 100;
                let clones = (per_clone * running as f64).min(1.0);
                let shares = match self.server_cpu {
                    Some(server) => vec![server, clones],
                    None => vec![clones],
                };
                self.cpus
                    .resize(shares.len(), CpuTimes { busy: 0, total: 0 });
                for (cpu, share) in self.cpus.iter_mut().zip(shares) {
                    cpu.total += ticks;
                    cpu.busy += (share * ticks as f64) as u64;
                }
                HostReading {
                    cpu: Some(CpuTimes {
                        busy: self.cpus.iter().map(|c| c.busy).sum(),
                        total: self.cpus.iter().map(|c| c.total).sum(),
                    }),
                    cpus: (0..).zip(self.cpus.iter().copied()).collect(),
                    ..HostReading::default()
                }
            }
            None => HostReading::default(),
        };
        let sample = self
            .sampler
            .sample(&report, reading, crate::record::DEFAULT_EVERY);
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
        // One window of one interval, coarse only: the tests of longer holds, repeats
        // and bisection ask for them.
        repeat: 1,
        max_hold: INTERVAL,
        resolution: bisect::Resolution::Clones(10),
        start_at: None,
        load_host_cpus: None,
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
        "sustained 20 agents at interval 120 s (10 runs/min); first degraded at 30 (p95 run time 15.0 s > 12.0 s); \
         knee at 25 ± 5 agents; \
         the server gave first: the load host had room (runs' own time 3.0× from 10 clones, catalog retrieval 3.0×)"
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

/// The busiest `WINDOW` seconds of each step's windows, and their bound for the clones
/// the step ran ([`even_share_bound`]): `(clones, runs in the windows, busiest, bound)`.
fn busiest_of_each_step(
    fleet: &ModelFleet,
    baseline: &Baseline,
) -> Vec<(usize, usize, usize, usize)> {
    const WINDOW: u64 = 12;
    baseline
        .steps
        .iter()
        .map(|step| {
            let from = step.t + step.settle;
            let starts = fleet.run_starts(from, from + step.hold * step.repeats as u64);
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
    // Held as asked: a window made longer for a p95 is another test's.
    req.max_hold = req.hold;
    req.bounds.p95_seconds = Some(1000.0);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let starts: Vec<u64> = done.baseline.steps.iter().map(|s| s.t).collect();
    assert_eq!(starts, [1000, 1240, 1480]);
    let text = baseline::table(&RampReport {
        baseline: done.baseline,
        comparison: None,
    });
    assert!(
        text.contains("+10 clones every 240 s (settle 30 s, hold 150 s)"),
        "{text}"
    );
}

/// Bisection tries levels below and between the coarse ones, and a step whose window
/// holds longer for a p95 is followed on the same rhythm: every level the ramp tries
/// starts a whole number of intervals after the first (its step period later than the
/// one before), its clones are the first in name order (a prefix of the prefix-even
/// sequence: the ramp stops the clones it started last and starts them again first),
/// and its window holds their runs evenly spread.
#[test]
fn bisection_and_longer_holds_keep_every_level_a_prefix_on_the_step_rhythm() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    // Settled one interval, and 90 s: then no step ends on an interval of its own.
    for settle in [INTERVAL, 90] {
        let clock = clock(None);
        let mut fleet = fleet_of(50, 0);
        fleet.boot = Some((&clock, 6));
        let mut req = request(dir.path().join(format!("{settle}.json")));
        req.settle = settle;
        req.max_hold = schedule::default_max_hold(req.hold, INTERVAL);
        req.resolution = bisect::Resolution::Clones(1);
        let done = ramp(&mut fleet, &req, &clock, &never).unwrap();
        let steps = &done.baseline.steps;
        // 0.5 s a clone against 12 s: past at 30, then 25, 22, 23, 24. The 10 clones
        // of the first step need two intervals for their 20 runs, and hold on to where
        // the next step starts.
        let levels: Vec<(usize, Phase)> = steps.iter().map(|s| (s.clones, s.phase)).collect();
        assert_eq!(
            levels,
            [
                (10, Phase::Coarse),
                (20, Phase::Coarse),
                (30, Phase::Coarse),
                (25, Phase::Refine),
                (22, Phase::Refine),
                (23, Phase::Refine),
                (24, Phase::Refine),
            ]
        );
        assert_eq!(steps[0].hold, 3 * INTERVAL - settle);
        assert!(steps[1..].iter().all(|s| s.hold == INTERVAL));
        // The levels tried after one past the bounds (30, then 25) settle one interval
        // more: the backlog of the step before ends before their window opens.
        let settled: Vec<u64> = steps.iter().map(|s| s.settle).collect();
        let longer = settle + INTERVAL;
        assert_eq!(
            settled,
            [settle, settle, settle, longer, longer, settle, settle]
        );
        let text = baseline::table(&RampReport {
            baseline: done.baseline.clone(),
            comparison: None,
        });
        assert!(
            text.contains(&format!(
                "(settle {settle} s, {longer} s after a step past the bounds,"
            )),
            "{text}"
        );
        for pair in steps.windows(2) {
            assert_eq!(
                pair[1].t - pair[0].t,
                step_period(pair[0].settle, pair[0].hold, INTERVAL),
                "settle {settle}, step {}",
                pair[1].step
            );
            assert_eq!((pair[1].t - steps[0].t) % INTERVAL, 0);
        }
        let busiest = busiest_of_each_step(&fleet, &done.baseline);
        for (step, (running, runs, busiest, bound)) in steps.iter().zip(busiest) {
            let from = step.t + step.settle;
            let ran = fleet.clones_that_ran(from, from + step.hold);
            let case = format!("settle {settle}, step {}", step.step);
            assert_eq!(
                ran,
                (0..running).collect::<Vec<_>>(),
                "{case}: the first {running}"
            );
            let (least, most) = (step.hold / INTERVAL, step.hold.div_ceil(INTERVAL));
            assert!(
                (running as u64 * least..=running as u64 * most).contains(&(runs as u64)),
                "{case}: {runs} runs of {running} clones"
            );
            assert!(
                busiest <= bound,
                "{case}: at {running} clones the busiest 12 s held {busiest} runs, more than {bound}"
            );
        }
    }
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
        .contains("first degraded at 30 (runs finished 50.0 % of those due < 90.0 %)"));
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
        ("repeat", Box::new(|r| r.repeat = 0)),
        ("repeat", Box::new(|r| r.repeat = MAX_REPEAT + 1)),
        ("max-hold", Box::new(|r| r.max_hold = r.hold - 1)),
        // The model host has one CPU, CPU 0.
        (
            "load-host-cpus",
            Box::new(|r| r.load_host_cpus = Some("0-1".parse().unwrap())),
        ),
        // A start time already past (the clock is at 1000 s), or far ahead.
        ("start-at", Box::new(|r| r.start_at = Some(999))),
        (
            "start-at",
            Box::new(|r| r.start_at = Some(1000 + schedule::MAX_START_AHEAD + 1)),
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
    let text = baseline::table(&RampReport {
        baseline: new,
        comparison: Some(compared),
    });
    assert!(text.contains(
        "ramp model: +10 clones every 240 s (settle 120 s, hold 120 s) at interval 120 s, from 0 running"
    ));
    assert!(text.contains("old: sustained 20 agents"), "{text}");
    // Ten runs a side at 10 clones: no p95 to compare, and the table says why.
    assert!(text.contains("\n10      max(10)  max(10)  -"), "{text}");
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
    let text = baseline::table(&RampReport {
        baseline: new,
        comparison: Some(compared),
    });
    for raw in ['\u{1b}', '\u{9b}', '\u{7}', '\r'] {
        assert!(!text.contains(raw), "{raw:?} in {text:?}");
    }
}

#[test]
fn a_step_too_short_for_a_p95_holds_until_its_clones_have_run_twenty_times() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(40, 0);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.max_hold = schedule::default_max_hold(req.hold, INTERVAL);
    req.timeline = Some(dir.path().join("ramp.jsonl"));
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let steps = &done.baseline.steps;
    // 10 clones run 20 times in two intervals; 20 clones and more in one.
    let holds: Vec<(usize, u64, usize)> =
        steps.iter().map(|s| (s.clones, s.hold, s.runs)).collect();
    assert_eq!(holds, [(10, 240, 20), (20, 120, 20), (30, 120, 30)]);
    assert!(steps
        .iter()
        .all(|s| s.total_time.p95.is_some() && s.hold_note.is_none()));
    assert_eq!(steps[0].seconds, 240);
    assert_eq!(steps[0].throughput_percent, Some(100.0));
    // The first step's samples: its first, then one every 10 s of settling and hold.
    let marks = std::fs::read_to_string(req.timeline.as_ref().unwrap())
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""step":{"step":1,"#))
        .count();
    assert_eq!(marks, 1 + (INTERVAL + 240) as usize / 10);
}

#[test]
fn a_step_that_cannot_hold_long_enough_says_why_and_is_held_to_its_max() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(20, 0);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    // 0.5 s a clone: 5 s at 10 clones, over a 4.5 s bound.
    req.bounds.p95_seconds = Some(4.5);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let first = &done.baseline.steps[0];
    assert_eq!((first.runs, first.total_time.p95), (10, None));
    assert_eq!(
        first.hold_note.as_deref(),
        Some("20 runs of 10 clones at interval 120 s over 1 window need 240 s a window; --max-hold is 120 s")
    );
    // Too few runs for a p95 hide nothing: their max is held to the p95 bound.
    assert_eq!(first.crossed.len(), 1);
    assert_eq!(first.crossed[0].figure.as_deref(), Some("max of 10"));
    assert_eq!(
        first.crossed[0].describe(),
        "max of 10 run times 5.0 s > 4.5 s"
    );
    let text = baseline::table(&RampReport {
        baseline: done.baseline.clone(),
        comparison: None,
    });
    assert!(text.contains(" max(10) "), "{text}");
    assert!(
        text.contains("step 1: no p95: 20 runs of 10 clones"),
        "{text}"
    );
}

#[test]
fn repeated_windows_are_judged_together_and_give_each_figures_spread() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(30, 0);
    // Each interval's runs take 1 s longer than the last one's.
    fleet.drift = 1.0;
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.repeat = 3;
    req.bounds.p95_seconds = Some(60.0);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let first = &done.baseline.steps[0];
    // Three windows of one interval, 10 runs each: 30 runs, enough for a p95.
    assert_eq!((first.repeats, first.runs, first.seconds), (3, 30, 360));
    assert!(first.total_time.p95.is_some());
    let spread = first.spread.as_ref().unwrap();
    assert_eq!(spread.repeats, 3);
    assert_eq!(
        (spread.runs_per_minute.min, spread.runs_per_minute.max),
        (Some(5.0), Some(5.0))
    );
    // The step settles one interval, then each window's runs finish one interval later.
    let tails = (
        spread.tail.min.unwrap(),
        spread.tail.median.unwrap(),
        spread.tail.max.unwrap(),
    );
    assert_eq!(tails, (7.0, 8.0, 9.0));
    let text = baseline::table(&RampReport {
        baseline: done.baseline.clone(),
        comparison: None,
    });
    assert!(text.contains("spread over each step's windows"), "{text}");
    assert!(text.contains("7.0/8.0/9.0"), "{text}");
}

#[test]
fn bisection_narrows_the_knee_stopping_the_clones_above_the_level_tried() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.resolution = bisect::Resolution::Clones(1);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let b = &done.baseline;
    // 0.5 s a clone against a 12 s bound: 24 clones hold, 25 do not. Coarse 10, 20, 30;
    // then 25 (past), 22, 23, 24 (within): the bracket is one clone.
    let tried: Vec<(usize, Phase, bool)> = b
        .steps
        .iter()
        .map(|s| (s.clones, s.phase, s.within_bounds))
        .collect();
    assert_eq!(
        tried,
        [
            (10, Phase::Coarse, true),
            (20, Phase::Coarse, true),
            (30, Phase::Coarse, false),
            (25, Phase::Refine, false),
            (22, Phase::Refine, true),
            (23, Phase::Refine, true),
            (24, Phase::Refine, true),
        ]
    );
    // Down from 30 and 25 by stopping the last clones started; up again by starting
    // the ones stopped, in order.
    assert_eq!(fleet.stops.len(), 2);
    assert_eq!(fleet.stops[0].first().map(String::as_str), Some("clone26"));
    assert_eq!(fleet.stops[1], ["clone23", "clone24", "clone25"]);
    assert_eq!(fleet.starts[3..], [vec!["clone23"], vec!["clone24"]]);
    assert_eq!(fleet.running(), 24);
    let v = &b.verdict;
    assert_eq!(v.ended_by, "degraded");
    let knee = v.knee.as_ref().unwrap();
    assert_eq!((knee.low, knee.high), (24, 25));
    assert!(
        v.summary.starts_with(
            "sustained 24 agents at interval 120 s (12 runs/min); first degraded at 25 (p95 run time 12.5 s > 12.0 s); knee at 24.5 ± 0.5 agents"
        ),
        "{}",
        v.summary
    );
    assert_eq!(b.resolution.as_deref(), Some("1"));
}

#[test]
fn the_default_resolution_stops_within_a_tenth_of_the_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.resolution = bisect::DEFAULT_RESOLUTION;
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let clones: Vec<usize> = done.baseline.steps.iter().map(|s| s.clones).collect();
    // Past at 30, then 25 (past), 22 and 23 (within): 2 clones apart, within 10 % of 25.
    assert_eq!(clones, [10, 20, 30, 25, 22, 23]);
    let knee = done.baseline.verdict.knee.unwrap();
    assert_eq!((knee.estimate, knee.plus_minus), (24.0, 1.0));
}

#[test]
fn the_scalability_law_is_fitted_beside_the_measured_steps() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    let never = AtomicBool::new(false);
    let req = request(dir.path().join("ramp.json"));
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    // Every clone runs once an interval up to the knee: throughput rises in line with
    // the clones, λ = 0.5 runs/min a clone, no contention, no crosstalk, no peak.
    let fit = done.baseline.verdict.scalability.as_ref().unwrap();
    assert!((fit.lambda - 0.5).abs() < 1e-9, "{fit:?}");
    assert!(fit.sigma < 1e-9 && fit.kappa < 1e-12, "{fit:?}");
    assert_eq!(fit.peak_clones, None);
    let measured: Vec<(usize, f64)> = fit
        .points
        .iter()
        .map(|p| (p.clones, p.runs_per_minute))
        .collect();
    assert_eq!(measured, [(10, 5.0), (20, 10.0), (30, 15.0)]);
    let text = baseline::table(&RampReport {
        baseline: done.baseline.clone(),
        comparison: None,
    });
    assert!(
        text.contains("USL fit over 3 steps: λ 0.500 runs/min a clone"),
        "{text}"
    );
    assert!(text.contains("no peak"), "{text}");
}

#[test]
fn the_load_host_gave_first_when_its_cpu_saturated() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    // 3 % of the host a clone: 90 % at 30 clones.
    fleet.cpu_per_clone = Some(0.031);
    let never = AtomicBool::new(false);
    let req = request(dir.path().join("ramp.json"));
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let limit = done.baseline.verdict.limit.as_ref().unwrap();
    assert_eq!(limit.gave_first, GaveFirst::LoadHost);
    assert!(limit.host_cpu_busy.unwrap() >= limit::LOAD_HOST_CPU_SATURATED);
    assert!(
        done.baseline.verdict.summary.contains(
            "; the load host gave first: the load host's CPU was 92.9 % busy (saturated from 90.0 %)"
        ),
        "{}",
        done.baseline.verdict.summary
    );
}

#[test]
fn the_load_host_gave_first_when_its_agents_slowed_and_catalog_retrieval_did_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    fleet.starved_above = 20;
    fleet.cpu_per_clone = Some(0.01);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.bounds.p95_seconds = Some(20.0);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let v = &done.baseline.verdict;
    assert_eq!(v.first_degraded.as_ref().unwrap().clones, 30);
    let limit = v.limit.as_ref().unwrap();
    assert_eq!(limit.gave_first, GaveFirst::LoadHost);
    // From 10 clones: retrieval 2.5 s to 7.5 s (3×), the agents' own 2.5 s to 22.5 s.
    assert_eq!(limit.retrieval_growth, Some(3.0));
    assert_eq!(limit.agent_time_growth, Some(9.0));
    assert!(
        limit
            .reason
            .ends_with("the agents were starved on the load host"),
        "{}",
        limit.reason
    );
}

/// Counted on the load host's own CPUs, CPUs with room say its agents were not
/// starved: runs' own time that grew is time they spent on the server's other requests
/// (plugins, files, the report), and the server gave first.
#[test]
fn agents_slower_on_a_load_host_whose_own_cpus_had_room_waited_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    fleet.starved_above = 20;
    fleet.cpu_per_clone = Some(0.01);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.bounds.p95_seconds = Some(20.0);
    req.load_host_cpus = Some("0".parse().unwrap());
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let limit = done.baseline.verdict.limit.clone().unwrap();
    assert_eq!(limit.gave_first, GaveFirst::Server);
    assert_eq!(limit.agent_time_growth, Some(9.0));
    assert!(
        limit.reason.starts_with("the load host had room (CPU (CPUs 0) ")
            && limit.reason.ends_with(
                "runs' own time 9.0× from 10 clones, catalog retrieval 3.0×: outside catalog retrieval they waited on the server)"
            ),
        "{}",
        limit.reason
    );
}

#[test]
fn the_server_gave_first_when_the_load_host_had_room() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    fleet.cpu_per_clone = Some(0.01);
    let never = AtomicBool::new(false);
    let req = request(dir.path().join("ramp.json"));
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let limit = done.baseline.verdict.limit.as_ref().unwrap();
    assert_eq!(limit.gave_first, GaveFirst::Server);
    assert_eq!(
        limit.reason,
        "the load host had room (CPU 30.0 % busy; runs' own time 3.0× from 10 clones, catalog retrieval 3.0×)"
    );
    // A ramp that crossed nothing names no limit.
    let mut all_fine = fleet_of(20, 0);
    let done = ramp(
        &mut all_fine,
        &request(dir.path().join("fine.json")),
        &clock(None),
        &never,
    )
    .unwrap();
    assert_eq!(done.baseline.verdict.limit, None);
}

#[test]
fn steps_keyed_to_a_start_time_begin_on_the_clock_and_are_not_bisected() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(50, 0);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.start_at = Some(1100);
    req.resolution = bisect::Resolution::Clones(1);
    req.max_hold = 4 * INTERVAL;
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let b = &done.baseline;
    let begun: Vec<(u64, Phase, u64)> = b.steps.iter().map(|s| (s.t, s.phase, s.hold)).collect();
    // A step every settle + hold from the start time; the hold as given on every host.
    assert_eq!(
        begun,
        [
            (1100, Phase::Coarse, INTERVAL),
            (1340, Phase::Coarse, INTERVAL),
            (1580, Phase::Coarse, INTERVAL)
        ]
    );
    assert!(b.steps[0]
        .hold_note
        .as_deref()
        .unwrap()
        .ends_with("the hold of steps keyed to --start-at is 120 s"));
    assert_eq!(b.start_at.as_deref(), Some("1970-01-01T00:18:20Z"));
    assert_eq!(b.resolution, None);
    assert_eq!(b.verdict.ended_by, "degraded");
    let text = baseline::table(&RampReport {
        baseline: b.clone(),
        comparison: None,
    });
    assert!(
        text.contains("steps keyed to 1970-01-01T00:18:20Z: coarse only"),
        "{text}"
    );
}

/// A ramp on a host whose CPU 0 runs a server `server` busy and whose CPU 1 runs the
/// clones, `per_clone` busy each, counting `cpus` as the load host's (`None`: all).
fn pinned(dir: &std::path::Path, server: f64, per_clone: f64, cpus: Option<&str>) -> Baseline {
    let never = AtomicBool::new(false);
    let mut fleet = fleet_of(50, 0);
    fleet.server_cpu = Some(server);
    fleet.cpu_per_clone = Some(per_clone);
    let mut req = request(dir.join(format!("{server}-{}.json", cpus.unwrap_or("all"))));
    req.load_host_cpus = cpus.map(|c| c.parse().unwrap());
    ramp(&mut fleet, &req, &clock(None), &never)
        .unwrap()
        .baseline
}

/// The lab's layout: the server pinned to CPU 0, the clones to CPU 1. Counted over
/// both, a busy server makes the load host look saturated, and clones out of their
/// CPU look like half a host with room; counted on the clones' CPU, each is what it is.
#[test]
fn the_load_hosts_cpu_is_the_cpus_it_is_told_are_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let limit = |b: &Baseline| b.verdict.limit.clone().unwrap();
    // The server's CPU all busy, the clones' 85 % at 30 clones (the step past 12 s).
    let all = pinned(dir.path(), 1.0, 0.0283, None);
    assert_eq!(limit(&all).gave_first, GaveFirst::LoadHost);
    assert_eq!(all.load_host_cpus, None);
    let own = pinned(dir.path(), 1.0, 0.0283, Some("1"));
    let step = &own.steps[2];
    assert_eq!(step.clones, 30);
    assert_eq!(
        step.host_cpu_busy.map(|b| (b * 1000.0).round()),
        Some(849.0)
    );
    assert_eq!(own.load_host_cpus.as_deref(), Some("1"));
    let l = limit(&own);
    assert_eq!(l.gave_first, GaveFirst::Server);
    assert_eq!(l.host_cpus.as_deref(), Some("1"));
    assert!(
        l.reason
            .starts_with("the load host had room (CPU (CPUs 1) 84.9 % busy;"),
        "{}",
        l.reason
    );
    // The server's CPU idle, the clones' saturated at 30 clones.
    let all = pinned(dir.path(), 0.0, 0.031, None);
    assert_eq!(limit(&all).gave_first, GaveFirst::Server);
    let own = pinned(dir.path(), 0.0, 0.031, Some("1"));
    assert_eq!(limit(&own).gave_first, GaveFirst::LoadHost);
    assert!(
        own.verdict.summary.contains(
            "the load host gave first: the load host's CPU (CPUs 1) was 92.9 % busy (saturated from 90.0 %)"
        ),
        "{}",
        own.verdict.summary
    );
    let text = baseline::table(&RampReport {
        baseline: own,
        comparison: None,
    });
    assert!(
        text.contains("HOST-CPU% is of the load host's own CPUs 1 (--load-host-cpus)"),
        "{text}"
    );
}

/// Two load hosts' ramps keyed to one start time, written to `dir`: host a's run times
/// 0.5 s a clone, host b's 0.25 s.
fn two_hosts(dir: &std::path::Path) -> (Baseline, Baseline) {
    let never = AtomicBool::new(false);
    let run = |seconds_per_clone: f64, name: &str| {
        let mut fleet = fleet_of(40, 0);
        fleet.seconds_per_clone = seconds_per_clone;
        let mut req = request(dir.join(format!("{name}.json")));
        req.label = Some(name.to_owned());
        req.start_at = Some(1100);
        ramp(&mut fleet, &req, &clock(None), &never)
            .unwrap()
            .baseline
    };
    (run(0.5, "a"), run(0.25, "b"))
}

#[test]
fn two_load_hosts_that_stepped_together_merge_into_one_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_hosts(dir.path());
    // Alone, host a crosses 12 s at 30 clones (15 s); host b never does (10 s at 40).
    assert_eq!(
        (a.steps.len(), a.verdict.ended_by.as_str()),
        (3, "degraded")
    );
    assert_eq!((b.steps.len(), b.verdict.ended_by.as_str()), (4, "clones"));
    let files: Vec<PathBuf> = ["a.json", "b.json"]
        .iter()
        .map(|f| dir.path().join(f))
        .collect();
    let merged = super::report(&files, None).unwrap().baseline;
    // The steps both held; clones and runs add up.
    let steps: Vec<(usize, usize, f64)> = merged
        .steps
        .iter()
        .map(|s| (s.clones, s.runs, s.runs_per_minute))
        .collect();
    assert_eq!(steps, [(20, 20, 10.0), (40, 40, 20.0), (60, 60, 30.0)]);
    // The percentiles are of every run of both hosts: at step 1, 10 runs of 5 s and 10
    // of 2.5 s make a p95 neither host had alone.
    for (k, s) in merged.steps.iter().enumerate() {
        let all = Distribution::of(
            a.steps[k]
                .run_times
                .totals()
                .chain(b.steps[k].run_times.totals()),
        );
        assert_eq!(s.total_time, all);
        assert!(s.run_times.complete);
    }
    assert_eq!(a.steps[0].total_time.p95, None);
    assert_eq!(merged.steps[0].total_time.p95, Some(5.0));
    assert_eq!(merged.steps[0].hold_note, None);
    let v = &merged.verdict;
    assert_eq!(v.ended_by, "degraded");
    assert_eq!(
        (
            v.sustained.as_ref().unwrap().clones,
            v.first_degraded.as_ref().unwrap().clones
        ),
        (40, 60)
    );
    assert!(
        v.summary.contains("knee at 50 ± 10 agents"),
        "{}",
        v.summary
    );
    assert_eq!(merged.label.as_deref(), Some("a + b"));
    assert_eq!(merged.step, 20);
    let hosts: Vec<(usize, &str)> = merged
        .load_hosts
        .iter()
        .map(|h| (h.steps, h.ended_by.as_str()))
        .collect();
    assert_eq!(hosts, [(3, "degraded"), (4, "clones")]);
    let text = baseline::table(&RampReport {
        baseline: merged,
        comparison: None,
    });
    assert!(
        text.contains("a.json (a): 3 steps, ended by degraded"),
        "{text}"
    );
}

/// Merged, a step's failed runs add up by kind, and the server the hosts watched
/// together is judged once: its refusals are the first host's view that has them, not
/// one count per host.
#[test]
fn merged_steps_add_failures_by_kind_and_judge_the_servers_view_once() {
    use crate::protocol::answers::FailureKind;
    use crate::protocol::record::ServerFigures;
    use std::collections::BTreeMap;
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_hosts(dir.path());
    a.bounds.max_queue_limit_hits = Some(0);
    b.bounds.max_queue_limit_hits = Some(0);
    a.steps[2].failed_by_kind = BTreeMap::from([(FailureKind::CachedCatalog, 2)]);
    b.steps[2].failed_by_kind = BTreeMap::from([
        (FailureKind::CachedCatalog, 1),
        (FailureKind::ServerError, 3),
    ]);
    let refused = ServerFigures {
        queue_limit_hits: Some(4),
        ..ServerFigures::default()
    };
    a.steps[0].server = None;
    b.steps[0].server = Some(refused.clone());
    let files: Vec<PathBuf> = [("a.json", &a), ("b.json", &b)]
        .iter()
        .map(|(name, baseline)| {
            let file = dir.path().join(name);
            std::fs::write(&file, serde_json::to_vec(baseline).unwrap()).unwrap();
            file
        })
        .collect();
    let merged = super::report(&files, None).unwrap().baseline;
    assert_eq!(
        merged.steps[2].failed_by_kind,
        BTreeMap::from([
            (FailureKind::CachedCatalog, 3),
            (FailureKind::ServerError, 3)
        ])
    );
    assert_eq!(merged.steps[0].server, Some(refused));
    let crossed: Vec<(&str, Option<f64>)> = merged.steps[0]
        .crossed
        .iter()
        .map(|c| (c.bound.as_str(), c.value))
        .collect();
    assert_eq!(crossed, [("queue-limit-hits", Some(4.0))]);
}

/// Each load host's CPU share is of the CPUs it counted: a merged baseline names them
/// for every host, and at its top only when all counted the same ones.
#[test]
fn merged_load_hosts_keep_the_cpus_each_counted() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    let run = |name: &str, cpus: &str| {
        let mut fleet = fleet_of(40, 0);
        fleet.server_cpu = Some(0.5);
        fleet.cpu_per_clone = Some(0.01);
        let mut req = request(dir.path().join(format!("{name}.json")));
        req.start_at = Some(1100);
        req.load_host_cpus = Some(cpus.parse().unwrap());
        ramp(&mut fleet, &req, &clock(None), &never).unwrap();
        dir.path().join(format!("{name}.json"))
    };
    let (a, b, c) = (run("a", "1"), run("b", "1"), run("c", "0-1"));
    let same = super::report(&[a.clone(), b], None).unwrap().baseline;
    assert_eq!(same.load_host_cpus.as_deref(), Some("1"));
    assert_eq!(
        same.verdict.limit.as_ref().unwrap().host_cpus.as_deref(),
        Some("1")
    );
    let mixed = super::report(&[a, c], None).unwrap().baseline;
    assert_eq!(mixed.load_host_cpus, None);
    let each: Vec<Option<&str>> = mixed
        .load_hosts
        .iter()
        .map(|h| h.load_host_cpus.as_deref())
        .collect();
    assert_eq!(each, [Some("1"), Some("0-1")]);
    let text = baseline::table(&RampReport {
        baseline: mixed,
        comparison: None,
    });
    assert!(
        text.contains("c.json (model): 3 steps, ended by degraded, its own CPUs 0-1"),
        "{text}"
    );
}

#[test]
fn baselines_that_did_not_step_together_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (a, mut b) = two_hosts(dir.path());
    let path = |f: &str| dir.path().join(f);
    let refused = |files: &[&str], why: &str| {
        let files: Vec<PathBuf> = files.iter().map(|f| path(f)).collect();
        let e = super::report(&files, None).unwrap_err();
        assert_eq!(e.kind(), "invalid-argument", "{e}");
        assert!(e.to_string().starts_with("baseline"), "{e}");
        assert!(e.to_string().contains(why), "{e}");
    };
    b.start_at = Some("1970-01-01T00:20:00Z".to_owned());
    baseline::write(&b, &path("late.json")).unwrap();
    refused(&["a.json", "late.json"], "its start-at");
    b.start_at = None;
    baseline::write(&b, &path("alone.json")).unwrap();
    refused(&["a.json", "alone.json"], "not keyed to --start-at");
    // Bounds are named as the flags that set them, not as the helper's structure.
    let mut stricter = a.clone();
    stricter.bounds.max_queue_limit_hits = Some(0);
    baseline::write(&stricter, &path("stricter.json")).unwrap();
    refused(
        &["a.json", "stricter.json"],
        &format!(
            "its bounds {} --max-queue-limit-hits 0 differs from {} in",
            a.bounds, a.bounds
        ),
    );
    assert!(
        a.bounds.to_string().starts_with("--max-p95 "),
        "{}",
        a.bounds
    );
    // A host whose second step began in another slot.
    let mut out_of_time = a.clone();
    out_of_time.steps[1].t += 200;
    baseline::write(&out_of_time, &path("out.json")).unwrap();
    refused(
        &["b.json", "out.json"],
        "its step 2 began 200 s after another host's",
    );
    let mut old = serde_json::to_value(&a).unwrap();
    old["ramp"] = 1.into();
    std::fs::write(path("old.json"), old.to_string()).unwrap();
    refused(
        &["old.json", "a.json"],
        "baseline format 1 keeps no run times",
    );
}

/// A baseline an older helper wrote (format 1: no run times, no knee, no limit, p95s of
/// a few runs) is read, and its few-run p95s are read as the maxima they are.
#[test]
fn a_baseline_of_format_1_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = r#"{"ramp": 1, "label": "old", "started_at": "2026-11-26T17:00:00Z", "ended_at": null,
 "interval": 120, "step": 10, "settle": 120, "hold": 120,
 "bounds": {"p95_seconds": 30.0, "error_percent": null, "jruby_wait_ms": null, "min_throughput_percent": null},
 "running_before": 0, "server_version": "8.7.0",
 "steps": [{"step": 1, "clones": 10, "added": 10, "start_failed": [],
            "started_at": "2026-11-26T17:00:05Z", "t": 1795712405, "seconds": 120,
            "samples": 12, "runs": 10, "failed_runs": 0, "error_percent": 0.0,
            "runs_per_minute": 5.0, "throughput_percent": 100.0, "total_time": {"count": 10, "p50": 4.2, "p95": 6.0, "max": 6.0},
            "first_runs": {"runs": 0, "failed_runs": 0, "total_time": {"count": 0, "p50": null, "p95": null, "max": null}},
            "jruby_wait_ms": 0.0, "host_cpu_busy": 0.31, "within_bounds": true, "crossed": []}],
 "verdict": {"ended_by": "clones", "sustained": {"step": 1, "clones": 10, "interval": 120, "runs_per_minute": 5.0, "crossed": []},
             "first_degraded": null, "summary": "sustained 10 agents at interval 120 s (5 runs/min); no bound crossed: every stopped clone was added"}}"#;
    let path = dir.path().join("v1.json");
    std::fs::write(&path, v1).unwrap();
    let old = baseline::read(&path, "baseline").unwrap();
    assert_eq!(old.ramp, 1);
    assert_eq!((old.repeat, old.steps[0].repeats), (1, 1));
    assert_eq!(old.steps[0].total_time.p95, None);
    assert_eq!(old.steps[0].total_time.tail_name(), "max of 10");
    assert!(!old.steps[0].run_times.complete);
    let text = baseline::table(&RampReport {
        baseline: old,
        comparison: None,
    });
    assert!(text.contains(" max(10) "), "{text}");
    // A format from a newer helper is refused.
    std::fs::write(&path, v1.replace(r#""ramp": 1"#, r#""ramp": 3"#)).unwrap();
    let e = baseline::read(&path, "baseline").unwrap_err();
    assert!(e.to_string().contains("this helper reads 1 to 2"), "{e}");
}

#[test]
fn a_first_step_past_the_bounds_is_bisected_down_from_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = fleet_of(20, 0);
    let never = AtomicBool::new(false);
    let mut req = request(dir.path().join("ramp.json"));
    req.resolution = bisect::Resolution::Clones(1);
    // 0.5 s a clone: 6 clones make 3 s, 7 make 3.5 s.
    req.bounds.p95_seconds = Some(3.0);
    let done = ramp(&mut fleet, &req, &clock(None), &never).unwrap();
    let clones: Vec<usize> = done.baseline.steps.iter().map(|s| s.clones).collect();
    assert_eq!(clones, [10, 5, 7, 6]);
    let v = &done.baseline.verdict;
    assert_eq!(v.sustained.as_ref().unwrap().clones, 6);
    assert_eq!(v.knee.as_ref().unwrap().describe(), "6.5 ± 0.5");
}

/// The verdict names the server's own p95 per endpoint at the level it sustained, from
/// its access log, in the order of an agent's run; endpoints no agent run asks for, and
/// ones with too few requests for a p95, are left out.
#[test]
fn the_verdict_gives_the_servers_p95_per_endpoint_where_it_held() {
    use crate::protocol::record::{EndpointFigures, ServerFigures};
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _) = two_hosts(dir.path());
    let p95 = |ms: Option<u64>| EndpointFigures {
        p95_ms: ms,
        ..EndpointFigures::default()
    };
    a.steps[1].server = Some(ServerFigures {
        endpoints: [
            ("report".to_owned(), p95(Some(143))),
            ("catalog".to_owned(), p95(Some(335))),
            ("status".to_owned(), p95(Some(20))),
            ("node".to_owned(), p95(None)),
        ]
        .into(),
        ..ServerFigures::default()
    });
    let v = Verdict::of(&a.steps, a.interval, &a.verdict.ended_by, None);
    let held = v.sustained.as_ref().unwrap();
    assert_eq!(held.clones, a.steps[1].clones);
    assert_eq!(
        held.server_p95_ms,
        [("catalog".to_owned(), 335), ("report".to_owned(), 143)].into()
    );
    assert!(
        v.summary.starts_with(&format!(
            "sustained {} agents at interval {} s ({} runs/min; server p95: catalog 335 ms, report 143 ms); first degraded",
            held.clones, a.interval, held.runs_per_minute
        )),
        "{}",
        v.summary
    );
}

/// The table gives the server's own view of each step it watched, beside the runs':
/// a p95 where there were enough requests for one, else their max, marked.
#[test]
fn the_ramp_table_shows_the_servers_view_of_each_step() {
    use crate::protocol::record::{EndpointFigures, ServerFigures};
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _) = two_hosts(dir.path());
    let logged = |n: u64, p95: Option<u64>, max: u64| EndpointFigures {
        logged: Some(n),
        server_errors: Some(1),
        p95_ms: p95,
        max_ms: Some(max),
        ..EndpointFigures::default()
    };
    a.steps[1].server = Some(ServerFigures {
        endpoints: [
            ("catalog".to_owned(), logged(5, None, 900)),
            ("report".to_owned(), logged(40, Some(120), 300)),
        ]
        .into(),
        cpu_percent: Some(42.25),
        queue_limit_hits: Some(3),
        heap_used_max_bytes: Some(300 * 1024 * 1024),
        ..ServerFigures::default()
    });
    let text = baseline::table(&RampReport {
        baseline: a.clone(),
        comparison: None,
    });
    let (_, server) = text
        .split_once("the server's view of each step")
        .unwrap_or_else(|| panic!("{text}"));
    let row: Vec<&str> = server
        .lines()
        .find(|l| l.starts_with("2 "))
        .unwrap_or_else(|| panic!("{text}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        [
            "2",
            &a.steps[1].clones.to_string(),
            "42.2",
            "max(5)",
            "900",
            "120",
            "2",
            "-",
            "3",
            "-",
            "-",
            "300",
            "-"
        ]
    );
    // Steps the server was not watched in have no row.
    assert!(!server.lines().any(|l| l.starts_with("1 ")), "{text}");
}

/// The longest a ramp can take ([`longest::longest`]) holds the ramp's own schedule on a
/// clock where only the clones' starts take time: a ramp whose coarse steps stay within
/// the bounds up to the last, whose every level bisection tries is past them (so each
/// settles an interval more) and whose every window holds its longest, with a step of a
/// power of two clones, takes exactly that long and that many steps.
#[test]
fn the_longest_ramp_takes_exactly_its_longest() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    let clock = clock(None);
    let mut fleet = fleet_of(30, 0);
    let mut req = request(dir.path().join("ramp.json"));
    req.step = 8;
    req.max_clones = Some(24);
    req.resolution = bisect::Resolution::Clones(1);
    // 0.5 s a clone: 16 clones make 8 s, 17 make 8.5.
    req.bounds.p95_seconds = Some(8.2);
    let done = ramp(&mut fleet, &req, &clock, &never).unwrap();
    let tried: Vec<(usize, bool)> = done
        .baseline
        .steps
        .iter()
        .map(|s| (s.clones, s.within_bounds))
        .collect();
    assert_eq!(
        tried,
        [
            (8, true),
            (16, true),
            (24, false),
            (20, false),
            (18, false),
            (17, false)
        ]
    );
    assert!(done.baseline.steps.iter().all(|s| s.hold == req.max_hold));
    let bound = longest::longest(&req, 0).unwrap();
    assert_eq!(bound.steps, Some(6));
    // Three steps of 240 s, three of 360 (settling an interval more).
    assert_eq!(bound.seconds, Some(clock.now() - 1000));
    assert_eq!(bound.seconds, Some(3 * 240 + 3 * 360));
}

/// No ramp takes longer or more steps than its longest: whatever its steps, bounds,
/// resolution, settle, holds and repeats, wherever its knee lies, and with clones whose
/// start takes up to the lateness the bound allows a step.
#[test]
fn no_ramp_takes_longer_than_its_longest() {
    let dir = tempfile::tempdir().unwrap();
    let never = AtomicBool::new(false);
    // (settle, max hold, repeat, resolution, clones on the host, start takes).
    let shapes = [
        (INTERVAL, INTERVAL, 1, bisect::Resolution::Clones(1), 30, 0),
        (90, 4 * INTERVAL, 2, bisect::DEFAULT_RESOLUTION, 30, 6),
        (0, 2 * INTERVAL, 1, bisect::Resolution::Clones(3), 20, 300),
    ];
    let mut ramps = 0;
    for (settle, max_hold, repeat, resolution, clones, late) in shapes {
        for step in [3, 7, 8, 10] {
            // Knees at 4, 12 and 18 clones, and none.
            for p95 in [2.2, 6.2, 9.2, 1000.0] {
                let clock = clock(None);
                let mut fleet = fleet_of(clones, 0);
                fleet.boot = Some((&clock, late));
                let mut req = request(dir.path().join(format!("{ramps}.json")));
                req.step = step;
                req.max_clones = Some(24);
                req.settle = settle;
                req.max_hold = max_hold;
                req.repeat = repeat;
                req.resolution = resolution;
                req.bounds.p95_seconds = Some(p95);
                let done = ramp(&mut fleet, &req, &clock, &never).unwrap();
                let bound = longest::longest(&req, late).unwrap();
                let case = format!(
                    "settle {settle}, max hold {max_hold}, {repeat} windows, {resolution}, \
                     step {step}, bound {p95}, start {late} s"
                );
                assert!(
                    clock.now() - 1000 <= bound.seconds.unwrap(),
                    "{case}: {} s, longest {bound:?}",
                    clock.now() - 1000
                );
                assert!(
                    done.baseline.steps.len() as u64 <= bound.steps.unwrap(),
                    "{case}: {} steps, longest {bound:?}",
                    done.baseline.steps.len()
                );
                ramps += 1;
            }
        }
    }
    assert_eq!(ramps, 48);
}
