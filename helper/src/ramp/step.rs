//! One step of a ramp: the runs that finished while it held, its figures, and whether
//! they stayed within the user's bounds.

use std::collections::BTreeMap;

use super::host_cpus::{self, CpuList};
use crate::protocol::answers::{Distribution, FailureKind};
use crate::protocol::ramp::{
    Bounds, Crossing, FirstRuns, Phase, RepeatSpread, RunTimes, Spread, StepResult,
};
use crate::protocol::record::Sample;
use crate::record::sample::NewRun;
use crate::record::server_window::WindowTotals;
use crate::sys::table::NONE;

/// The bounds as the flags that set them (`--max-p95 30 --max-error-rate 1`), so a user
/// told two baselines' bounds differ reads them in the words they typed; "none" for none.
impl std::fmt::Display for Bounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let flags: Vec<String> = [
            ("max-p95", self.p95_seconds),
            ("max-error-rate", self.error_percent),
            ("max-jruby-wait", self.jruby_wait_ms),
            ("min-throughput", self.min_throughput_percent),
            (
                "max-borrow-timeouts",
                self.max_borrow_timeouts.map(|v| v as f64),
            ),
            (
                "max-queue-limit-hits",
                self.max_queue_limit_hits.map(|v| v as f64),
            ),
            ("max-puppetdb-queue", self.max_puppetdb_queue),
        ]
        .into_iter()
        .filter_map(|(flag, value)| value.map(|v| format!("--{flag} {v}")))
        .collect();
        if flags.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&flags.join(" "))
        }
    }
}

/// The runs that finished in a window as a share of the runs due in it, percent: each
/// clone running is due one run every `interval` seconds, so `clones * seconds /
/// interval` runs are due. `None` without clones or time to be due in. `runs` counts
/// first runs too: a new clone whose first run ended in the window made its run, and
/// its next one may end after the window, so leaving it out would call it behind.
pub fn throughput_percent(runs: usize, clones: usize, seconds: u64, interval: u64) -> Option<f64> {
    let due = clones as f64 * seconds as f64 / interval as f64;
    (due > 0.0).then(|| 100.0 * runs as f64 / due)
}

/// A figure with one decimal, as the ramp shows its figures to people; `-` without one.
pub fn one_decimal(value: Option<f64>) -> String {
    value.map_or_else(|| NONE.to_owned(), |v| format!("{v:.1}"))
}

impl Crossing {
    /// For people: "p95 run time 41.2 s > 30 s", "max of 12 run times 41.2 s > 30 s".
    pub fn describe(&self) -> String {
        let text = self.describe_figure();
        match &self.detail {
            Some(detail) => format!("{text} ({detail})"),
            None => text,
        }
    }

    fn describe_figure(&self) -> String {
        let whole = |v: Option<f64>| v.map_or_else(|| NONE.to_owned(), |v| format!("{v:.0}"));
        match self.bound.as_str() {
            "p95" => format!(
                "{} run time{} {} s > {} s",
                self.figure.as_deref().unwrap_or("p95"),
                if self.figure.is_some() { "s" } else { "" },
                one_decimal(self.value),
                one_decimal(self.limit)
            ),
            "error-rate" => format!(
                "failed runs {} % > {} %",
                one_decimal(self.value),
                one_decimal(self.limit)
            ),
            "jruby-wait" => format!(
                "JRuby wait {} ms > {} ms",
                one_decimal(self.value),
                one_decimal(self.limit)
            ),
            "throughput" => format!(
                "runs finished {} % of those due < {} %",
                one_decimal(self.value),
                one_decimal(self.limit)
            ),
            "borrow-timeouts" => format!(
                "JRuby borrow timeouts (503) {} > {}",
                whole(self.value),
                whole(self.limit)
            ),
            "queue-limit-hits" => format!(
                "requests refused by the queue limit (503) {} > {}",
                whole(self.value),
                whole(self.limit)
            ),
            "puppetdb-queue" => format!(
                "PuppetDB queue depth {} > {}",
                whole(self.value),
                whole(self.limit)
            ),
            _ => "no run finished while the step held".to_owned(),
        }
    }
}

/// The bounds `step` crosses, in the order they are checked; its figures are set, its
/// `crossed` is not read. A step is judged here whether its figures were measured on one
/// host ([`StepWindow::judge`]) or merged from several ([`super::merge`]).
pub fn crossings(bounds: &Bounds, step: &StepResult) -> Vec<Crossing> {
    let mut crossed = Vec::new();
    if step.runs == 0 {
        crossed.push(Crossing {
            bound: "no-runs".to_owned(),
            limit: None,
            value: None,
            figure: None,
            detail: None,
        });
    }
    // `above`: a figure crosses its bound by going over it; otherwise by going under.
    let mut check = |bound: &str, limit: Option<f64>, value: Option<f64>, above: bool| {
        if let (Some(limit), Some(value)) = (limit, value) {
            if (above && value > limit) || (!above && value < limit) {
                crossed.push(Crossing {
                    bound: bound.to_owned(),
                    limit: Some(limit),
                    value: Some(value),
                    figure: None,
                    detail: None,
                });
            }
        }
    };
    // Too few runs for a p95: their maximum, which is at least what their p95 would be,
    // is held to the bound, and the crossing says it is the max.
    check(
        "p95",
        bounds.p95_seconds,
        step.total_time.tail_value(),
        true,
    );
    check("error-rate", bounds.error_percent, step.error_percent, true);
    check("jruby-wait", bounds.jruby_wait_ms, step.jruby_wait_ms, true);
    check(
        "throughput",
        bounds.min_throughput_percent,
        step.throughput_percent,
        false,
    );
    let server = step.server.as_ref();
    let whole = |v: Option<u64>| v.map(|n| n as f64);
    check(
        "borrow-timeouts",
        whole(bounds.max_borrow_timeouts),
        whole(server.and_then(|f| f.borrow_timeouts)),
        true,
    );
    check(
        "queue-limit-hits",
        whole(bounds.max_queue_limit_hits),
        whole(server.and_then(|f| f.queue_limit_hits)),
        true,
    );
    check(
        "puppetdb-queue",
        bounds.max_puppetdb_queue,
        server.and_then(|f| f.puppetdb_queue_max),
        true,
    );
    for c in &mut crossed {
        if c.bound == "p95" && step.total_time.p95.is_none() {
            c.figure = Some(step.total_time.tail_name());
        }
        // The failed runs by kind say whether the server or the agents failed them.
        if c.bound == "error-rate" && !step.failed_by_kind.is_empty() {
            c.detail = Some(
                step.failed_by_kind
                    .iter()
                    .map(|(kind, n)| format!("{} {n}", kind.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
    }
    crossed
}

/// One window of a step: the samples and runs taken in it.
#[derive(Debug)]
struct Window {
    from: u64,
    last_t: u64,
    samples: usize,
    clones: usize,
    runs: Vec<NewRun>,
    first_runs: Vec<NewRun>,
    jruby_wait_ms: Option<f64>,
    cpu: Vec<f64>,
}

impl Window {
    fn new(from: u64) -> Self {
        Window {
            from,
            last_t: from,
            samples: 0,
            clones: 0,
            runs: Vec::new(),
            first_runs: Vec::new(),
            jruby_wait_ms: None,
            cpu: Vec::new(),
        }
    }

    fn seconds(&self) -> u64 {
        self.last_t.saturating_sub(self.from)
    }
}

/// The figures of some runs over some seconds, as a step and each of its windows has them.
struct Figures {
    runs: usize,
    failed_runs: usize,
    error_percent: Option<f64>,
    runs_per_minute: f64,
    throughput_percent: Option<f64>,
    total_time: Distribution,
}

impl Figures {
    fn of(runs: &[&NewRun], first_runs: usize, clones: usize, seconds: u64, interval: u64) -> Self {
        let n = runs.len();
        let failed_runs = runs.iter().filter(|r| !r.status.is_success()).count();
        Figures {
            runs: n,
            failed_runs,
            error_percent: (n > 0).then(|| 100.0 * failed_runs as f64 / n as f64),
            runs_per_minute: per_minute(n, seconds),
            throughput_percent: throughput_percent(n + first_runs, clones, seconds, interval),
            total_time: Distribution::of(runs.iter().filter_map(|r| r.total_time)),
        }
    }
}

/// `runs` over `seconds`, a minute; 0 without time.
pub fn per_minute(runs: usize, seconds: u64) -> f64 {
    if seconds == 0 {
        0.0
    } else {
        runs as f64 * 60.0 / seconds as f64
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The samples and runs of a step as they come in: one window, or several one after
/// another (`--repeat`), judged together.
#[derive(Debug)]
pub struct StepWindow {
    step: u32,
    added: usize,
    start_failed: Vec<String>,
    started: u64,
    phase: Phase,
    hold: u64,
    hold_note: Option<String>,
    /// The load host's own CPUs, when they are not all of them.
    cpus: Option<CpuList>,
    windows: Vec<Window>,
    /// What the server and PuppetDB did over every window of the step.
    server: WindowTotals,
    /// Whether any sample had a server's or PuppetDB's window, or the access log's.
    server_seen: bool,
}

impl StepWindow {
    /// A step whose clones were started at `started` and whose window opens at `window_from`.
    pub fn new(
        step: u32,
        added: usize,
        start_failed: Vec<String>,
        started: u64,
        window_from: u64,
    ) -> Self {
        StepWindow {
            step,
            added,
            start_failed,
            started,
            phase: Phase::Coarse,
            hold: 0,
            hold_note: None,
            cpus: None,
            windows: vec![Window::new(window_from)],
            server: WindowTotals::default(),
            server_seen: false,
        }
    }

    /// How the level was chosen, and how long each window holds (and why no longer).
    pub fn held(mut self, phase: Phase, hold: u64, hold_note: Option<String>) -> Self {
        self.phase = phase;
        self.hold = hold;
        self.hold_note = hold_note;
        self
    }

    /// The load host's CPU is `cpus` (`--load-host-cpus`), not every CPU.
    pub fn counting(mut self, cpus: Option<CpuList>) -> Self {
        self.cpus = cpus;
        self
    }

    /// Opens the next window, at `from`: the samples added after it are its own.
    pub fn repeat(&mut self, from: u64) {
        self.windows.push(Window::new(from));
    }

    /// Adds a sample taken in the window, the runs it counted, and which of them were
    /// first runs.
    pub fn add(&mut self, sample: &Sample, runs: Vec<NewRun>, first_runs: Vec<NewRun>) {
        let w = self
            .windows
            .last_mut()
            .expect("a step has a window from its start");
        w.samples += 1;
        w.last_t = sample.t;
        w.clones = sample.fleet.running;
        w.runs.extend(runs);
        w.first_runs.extend(first_runs);
        if let Some(wait) = sample
            .jruby()
            .and_then(|j| j.average_wait_time_ms.as_ref())
            .and_then(serde_json::Number::as_f64)
        {
            w.jruby_wait_ms = Some(wait);
        }
        w.cpu
            .extend(host_cpus::busy(self.cpus.as_ref(), &sample.host));
        let (server, puppetdb, access) = (
            sample.server_window.as_ref(),
            sample.puppetdb_window.as_ref(),
            sample.access_log.as_ref(),
        );
        self.server_seen |= server.is_some() || puppetdb.is_some() || access.is_some();
        self.server.add(server, puppetdb, access);
    }

    /// The step's figures at run interval `interval`, held to `bounds`: every window's
    /// runs together, and the spread of each window's own figures when there are several.
    pub fn judge(self, bounds: &Bounds, interval: u64) -> StepResult {
        let windows = &self.windows;
        let runs: Vec<&NewRun> = windows.iter().flat_map(|w| &w.runs).collect();
        let first: Vec<NewRun> = windows
            .iter()
            .flat_map(|w| w.first_runs.iter().cloned())
            .collect();
        let seconds: u64 = windows.iter().map(Window::seconds).sum();
        let last = windows.last().expect("a step has a window from its start");
        // Due runs are counted window by window, at each window's clones.
        let due: f64 = windows
            .iter()
            .map(|w| w.clones as f64 * w.seconds() as f64 / interval as f64)
            .sum();
        let mut all = Figures::of(&runs, first.len(), last.clones, seconds, interval);
        all.throughput_percent =
            (due > 0.0).then(|| 100.0 * (runs.len() + first.len()) as f64 / due);
        let cpu: Vec<f64> = windows.iter().flat_map(|w| w.cpu.iter().copied()).collect();
        let jruby_wait_ms = windows.iter().rev().find_map(|w| w.jruby_wait_ms);
        let spread = (windows.len() > 1).then(|| {
            let each: Vec<(Figures, &Window)> = windows
                .iter()
                .map(|w| {
                    let runs: Vec<&NewRun> = w.runs.iter().collect();
                    (
                        Figures::of(&runs, w.first_runs.len(), w.clones, w.seconds(), interval),
                        w,
                    )
                })
                .collect();
            RepeatSpread {
                repeats: windows.len(),
                runs_per_minute: Spread::of(each.iter().map(|(f, _)| Some(f.runs_per_minute))),
                throughput_percent: Spread::of(each.iter().map(|(f, _)| f.throughput_percent)),
                error_percent: Spread::of(each.iter().map(|(f, _)| f.error_percent)),
                p50: Spread::of(each.iter().map(|(f, _)| f.total_time.p50)),
                tail: Spread::of(each.iter().map(|(f, _)| f.total_time.tail_value())),
                jruby_wait_ms: Spread::of(each.iter().map(|(_, w)| w.jruby_wait_ms)),
                host_cpu_busy: Spread::of(each.iter().map(|(_, w)| mean(&w.cpu))),
            }
        });
        let mut failed_by_kind: BTreeMap<FailureKind, usize> = BTreeMap::new();
        for kind in runs.iter().flat_map(|r| &r.failure_kinds) {
            *failed_by_kind.entry(*kind).or_default() += 1;
        }
        let server = self.server_seen.then(|| self.server.figures());
        let owned: Vec<NewRun> = runs.iter().map(|r| (*r).clone()).collect();
        let run_times = RunTimes::of(&owned, &first);
        let mut result = StepResult {
            step: self.step,
            clones: last.clones,
            added: self.added,
            start_failed: self.start_failed,
            started_at: crate::sys::time::rfc3339_utc(self.started),
            t: self.started,
            seconds,
            samples: windows.iter().map(|w| w.samples).sum(),
            runs: all.runs,
            failed_runs: all.failed_runs,
            error_percent: all.error_percent,
            runs_per_minute: all.runs_per_minute,
            throughput_percent: all.throughput_percent,
            total_time: all.total_time,
            first_runs: FirstRuns {
                runs: first.len(),
                failed_runs: first.iter().filter(|r| !r.status.is_success()).count(),
                total_time: Distribution::of(first.iter().filter_map(|r| r.total_time)),
            },
            jruby_wait_ms,
            host_cpu_busy: mean(&cpu),
            phase: self.phase,
            settle: self.windows[0].from.saturating_sub(self.started),
            hold: self.hold,
            repeats: windows.len(),
            hold_note: self.hold_note,
            config_retrieval_time: Distribution::of(run_times.retrievals()),
            agent_time: Distribution::of(run_times.agent_times()),
            spread,
            run_times,
            within_bounds: true,
            crossed: Vec::new(),
            failed_by_kind,
            server,
        };
        result.crossed = crossings(bounds, &result);
        result.within_bounds = result.crossed.is_empty();
        result
    }
}

/// A step in one line, for the ramp's progress on stderr.
pub fn progress(step: &StepResult) -> String {
    let verdict = if step.within_bounds {
        "within bounds".to_owned()
    } else {
        step.crossed
            .iter()
            .map(Crossing::describe)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "step {}: {} clones, {} runs ({:.1}/min, {} % of due), {} {}, {} failed: {verdict}",
        step.step,
        step.clones,
        step.runs,
        step.runs_per_minute,
        one_decimal(step.throughput_percent),
        step.total_time.tail_name(),
        step.total_time.tail_value().map_or_else(
            || NONE.to_owned(),
            |p| format!("{} s", one_decimal(Some(p)))
        ),
        step.failed_runs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::answers::RunStatus;

    fn run(status: RunStatus, seconds: f64) -> NewRun {
        NewRun {
            clone: "clone1".to_owned(),
            status,
            total_time: Some(seconds),
            config_retrieval_time: Some(seconds / 2.0),
            failure_kinds: Vec::new(),
            resources: None,
            would_change: None,
        }
    }

    /// The run interval of the tests' windows: 20 clones over a 120 s window are due 20 runs.
    const INTERVAL: u64 = 120;

    fn window(runs: &[NewRun]) -> StepWindow {
        let mut w = StepWindow::new(2, 10, vec![], 880, 1000);
        let first = &mut w.windows[0];
        first.runs = runs.to_vec();
        first.last_t = 1120;
        first.clones = 20;
        w
    }

    #[test]
    fn a_step_within_every_bound_is_sustained() {
        let runs: Vec<NewRun> = (1..=20)
            .map(|i| run(RunStatus::Unchanged, i as f64))
            .collect();
        let result = window(&runs).judge(
            &Bounds {
                p95_seconds: Some(19.0),
                error_percent: Some(0.0),
                min_throughput_percent: Some(100.0),
                ..Bounds::default()
            },
            INTERVAL,
        );
        assert!(result.within_bounds, "{:?}", result.crossed);
        assert_eq!(result.total_time.p95, Some(19.0));
        assert_eq!(result.error_percent, Some(0.0));
        assert_eq!(result.runs_per_minute, 10.0);
        assert_eq!(result.throughput_percent, Some(100.0));
        assert_eq!((result.step, result.clones, result.seconds), (2, 20, 120));
        assert_eq!(
            progress(&result),
            "step 2: 20 clones, 20 runs (10.0/min, 100.0 % of due), p95 19.0 s, 0 failed: within bounds"
        );
    }

    #[test]
    fn each_bound_crossed_is_named_with_its_figure() {
        let mut runs: Vec<NewRun> = (1..=19)
            .map(|i| run(RunStatus::WouldChange, i as f64))
            .collect();
        runs.push(run(RunStatus::Failed, 60.0));
        let mut w = window(&runs);
        w.windows[0].jruby_wait_ms = Some(250.0);
        // 20 runs where 25 clones were due one each.
        w.windows[0].clones = 25;
        let result = w.judge(
            &Bounds {
                p95_seconds: Some(18.5),
                error_percent: Some(1.0),
                jruby_wait_ms: Some(200.0),
                min_throughput_percent: Some(90.0),
                ..Bounds::default()
            },
            INTERVAL,
        );
        assert!(!result.within_bounds);
        let named: Vec<(&str, Option<f64>)> = result
            .crossed
            .iter()
            .map(|c| (c.bound.as_str(), c.value))
            .collect();
        assert_eq!(
            named,
            [
                ("p95", Some(19.0)),
                ("error-rate", Some(5.0)),
                ("jruby-wait", Some(250.0)),
                ("throughput", Some(80.0))
            ]
        );
        assert_eq!(result.crossed[0].describe(), "p95 run time 19.0 s > 18.5 s");
        assert_eq!(result.crossed[1].describe(), "failed runs 5.0 % > 1.0 %");
        assert_eq!(
            result.crossed[3].describe(),
            "runs finished 80.0 % of those due < 90.0 %"
        );
    }

    #[test]
    fn a_step_without_runs_cannot_be_called_coping() {
        let result = window(&[]).judge(
            &Bounds {
                p95_seconds: Some(30.0),
                ..Bounds::default()
            },
            INTERVAL,
        );
        assert!(!result.within_bounds);
        assert_eq!(result.crossed[0].bound, "no-runs");
        assert_eq!(result.error_percent, None);
    }

    #[test]
    fn runs_short_of_those_due_cross_the_throughput_bound() {
        // 15 runs where 20 clones were due one each: 75 %.
        let runs: Vec<NewRun> = (1..=15)
            .map(|i| run(RunStatus::Unchanged, i as f64))
            .collect();
        let bounds = Bounds {
            min_throughput_percent: Some(90.0),
            ..Bounds::default()
        };
        let result = window(&runs).judge(&bounds, INTERVAL);
        assert_eq!(result.throughput_percent, Some(75.0));
        assert_eq!(result.crossed.len(), 1);
        assert_eq!(
            result.crossed[0].describe(),
            "runs finished 75.0 % of those due < 90.0 %"
        );
        // At twice the interval the same runs are 150 % of the 10 due: within.
        assert!(window(&runs).judge(&bounds, 2 * INTERVAL).within_bounds);
    }

    /// The server refused requests (a full queue, instances not free in time) and
    /// PuppetDB fell behind, while the runs themselves looked fine: the step crosses the
    /// bounds on the server's own counts of the window.
    #[test]
    fn a_step_whose_server_refused_requests_crosses_the_servers_bounds() {
        use crate::protocol::record::{JrubyWindow, PuppetdbWindow, ServerWindow};
        let runs: Vec<NewRun> = (1..=20)
            .map(|i| run(RunStatus::Unchanged, i as f64))
            .collect();
        let mut w = window(&runs);
        let server = ServerWindow {
            seconds: 60,
            jruby: Some(JrubyWindow {
                borrow_timeouts: Some(1),
                queue_limit_hits: Some(2),
                ..JrubyWindow::default()
            }),
            ..ServerWindow::default()
        };
        let puppetdb = |depth| PuppetdbWindow {
            seconds: 60,
            queue_depth: Some(depth),
            ..PuppetdbWindow::default()
        };
        w.server.add(Some(&server), Some(&puppetdb(80.0)), None);
        w.server.add(Some(&server), Some(&puppetdb(20.0)), None);
        w.server_seen = true;
        let result = w.judge(
            &Bounds {
                max_borrow_timeouts: Some(2),
                max_queue_limit_hits: Some(0),
                max_puppetdb_queue: Some(50.0),
                ..Bounds::default()
            },
            INTERVAL,
        );
        let described: Vec<String> = result.crossed.iter().map(Crossing::describe).collect();
        assert_eq!(
            described,
            [
                "requests refused by the queue limit (503) 4 > 0",
                "PuppetDB queue depth 80 > 50"
            ]
        );
        let server = result.server.unwrap();
        assert_eq!(
            (server.borrow_timeouts, server.queue_limit_hits),
            (Some(2), Some(4))
        );
        assert_eq!(server.seconds, 120);
        // Without a server's window there is no figure, and no bound is checked.
        let quiet = window(&runs).judge(
            &Bounds {
                max_queue_limit_hits: Some(0),
                ..Bounds::default()
            },
            INTERVAL,
        );
        assert!(quiet.within_bounds);
        assert_eq!(quiet.server, None);
    }

    /// Runs Puppet called `unchanged` after applying their cached catalog are failed runs:
    /// the error rate crosses its bound and says what failed them.
    #[test]
    fn the_error_rate_names_the_kinds_of_its_failed_runs() {
        let mut runs: Vec<NewRun> = (1..=18)
            .map(|i| run(RunStatus::Unchanged, i as f64))
            .collect();
        for _ in 0..2 {
            let mut cached = run(RunStatus::Failed, 1.0);
            cached.failure_kinds = vec![FailureKind::CachedCatalog, FailureKind::ServerError];
            runs.push(cached);
        }
        let result = window(&runs).judge(
            &Bounds {
                error_percent: Some(1.0),
                ..Bounds::default()
            },
            INTERVAL,
        );
        assert_eq!(
            result.crossed[0].describe(),
            "failed runs 10.0 % > 1.0 % (cached-catalog 2, server-error 2)"
        );
        assert_eq!(result.failed_by_kind[&FailureKind::CachedCatalog], 2);
    }

    #[test]
    fn nothing_is_due_without_clones_or_time() {
        assert_eq!(throughput_percent(5, 0, 120, 60), None);
        assert_eq!(throughput_percent(5, 10, 0, 60), None);
        assert_eq!(throughput_percent(5, 10, 60, 60), Some(50.0));
    }
}
