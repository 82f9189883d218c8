//! One verdict from several load hosts that stepped together (`ramp run --start-at`):
//! their baselines merged step by step. Clones, runs and runs a minute add up; the run
//! time percentiles are taken over every host's runs together (each step keeps its run
//! times for this, [`super::run_times`]); the server's JRuby wait and the load hosts'
//! CPU are the highest any host saw. Each merged step is judged again against the
//! bounds, over every host's runs together: the server saw them all.
//!
//! Only the steps every load host held are merged: a host that ended early (its own
//! step crossed a bound, or it ran out of clones) ends the merged ramp there.

use std::collections::BTreeMap;

use super::run_times::MAX_RUN_TIMES;
use super::step::{crossings, per_minute};
use crate::protocol::answers::{Distribution, RunStatus, P95_MIN_VALUES};
use crate::protocol::error::{Error, Result};
use crate::protocol::ramp::{
    Baseline, FirstRuns, LoadHost, Phase, RunTimes, StepResult, Verdict, BASELINE_VERSION,
};
use crate::record::sample::NewRun;

/// The most baselines merged into one: load hosts of one ramp, not a directory of files.
pub const MAX_LOAD_HOSTS: usize = 64;

/// `baselines` (each with the file it came from) merged into one.
pub fn merge(baselines: Vec<(String, Baseline)>) -> Result<Baseline> {
    let refuse = |file: &str, reason: String| Error::InvalidArgument {
        field: "baseline",
        value: file.to_owned(),
        reason,
    };
    if baselines.len() > MAX_LOAD_HOSTS {
        return Err(refuse(
            &baselines[MAX_LOAD_HOSTS].0,
            format!("at most {MAX_LOAD_HOSTS} baselines merge into one"),
        ));
    }
    let Some((first_file, first)) = baselines.first() else {
        return Err(Error::InvalidArgument {
            field: "baseline",
            value: String::new(),
            reason: "at least one baseline".into(),
        });
    };
    for (file, b) in &baselines {
        if b.ramp < BASELINE_VERSION {
            return Err(refuse(
                file,
                format!(
                    "baseline format {} keeps no run times: only format {BASELINE_VERSION} baselines merge",
                    b.ramp
                ),
            ));
        }
        if b.start_at.is_none() {
            return Err(refuse(
                file,
                "its steps were not keyed to --start-at: only load hosts that stepped together merge".into(),
            ));
        }
        let differs = |what: &str, mine: String, theirs: String| {
            refuse(
                file,
                format!("its {what} {mine} differs from {theirs} in {first_file}: one ramp's baselines share it"),
            )
        };
        for (what, mine, theirs) in [
            (
                "start-at",
                b.start_at.clone().unwrap_or_default(),
                first.start_at.clone().unwrap_or_default(),
            ),
            (
                "interval",
                b.interval.to_string(),
                first.interval.to_string(),
            ),
            ("settle", b.settle.to_string(), first.settle.to_string()),
            ("hold", b.hold.to_string(), first.hold.to_string()),
            ("repeat", b.repeat.to_string(), first.repeat.to_string()),
            ("bounds", b.bounds.to_string(), first.bounds.to_string()),
        ] {
            if mine != theirs {
                return Err(differs(what, mine, theirs));
            }
        }
    }
    let common = baselines
        .iter()
        .map(|(_, b)| b.steps.len())
        .min()
        .unwrap_or(0);
    let mut steps = Vec::with_capacity(common);
    for k in 0..common {
        let at: Vec<(&str, &StepResult)> = baselines
            .iter()
            .map(|(file, b)| (file.as_str(), &b.steps[k]))
            .collect();
        let (earliest, latest) = at
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), (_, s)| (lo.min(s.t), hi.max(s.t)));
        // Each host begins step k at its slot (later only when a slow last sample made
        // it late); a host a whole step out of time began it in another slot.
        let half_step = super::step_period(
            first.settle,
            first.hold.saturating_mul(first.repeat as u64),
            first.interval,
        ) / 2;
        if latest - earliest > half_step {
            let late = at.iter().max_by_key(|(_, s)| s.t).map_or("", |(f, _)| *f);
            return Err(refuse(
                late,
                format!(
                    "its step {} began {} s after another host's: the hosts did not step together",
                    k + 1,
                    latest - earliest
                ),
            ));
        }
        steps.push(merge_step(&at, first));
    }
    let ended: Vec<&str> = baselines
        .iter()
        .filter(|(_, b)| b.steps.len() == common)
        .map(|(_, b)| b.verdict.ended_by.as_str())
        .collect();
    let ended_by = if steps.iter().any(|s| !s.within_bounds) {
        "degraded"
    } else if ended.contains(&"signal") {
        "signal"
    } else if ended.iter().all(|e| *e == "clones") {
        "clones"
    } else {
        "load-host"
    };
    // Each host's CPU share is of the CPUs it counted; the merged step has the highest.
    // They are named when every host counted the same ones.
    let load_host_cpus = first.load_host_cpus.clone().filter(|cpus| {
        baselines
            .iter()
            .all(|(_, b)| b.load_host_cpus.as_ref() == Some(cpus))
    });
    let labels: Vec<String> = baselines
        .iter()
        .map(|(file, b)| b.label.clone().unwrap_or_else(|| file.clone()))
        .collect();
    Ok(Baseline {
        ramp: BASELINE_VERSION,
        label: Some(labels.join(" + ")),
        started_at: baselines
            .iter()
            .map(|(_, b)| b.started_at.clone())
            .min()
            .unwrap_or_default(),
        ended_at: baselines
            .iter()
            .filter_map(|(_, b)| b.ended_at.clone())
            .max(),
        interval: first.interval,
        step: baselines.iter().map(|(_, b)| b.step).sum(),
        settle: first.settle,
        hold: first.hold,
        bounds: first.bounds,
        running_before: baselines.iter().map(|(_, b)| b.running_before).sum(),
        server_version: baselines.iter().find_map(|(_, b)| b.server_version.clone()),
        repeat: first.repeat,
        max_hold: first.max_hold,
        resolution: None,
        start_at: first.start_at.clone(),
        load_host_cpus: load_host_cpus.clone(),
        load_hosts: baselines
            .iter()
            .map(|(file, b)| LoadHost {
                file: file.clone(),
                label: b.label.clone(),
                steps: b.steps.len(),
                ended_by: b.verdict.ended_by.clone(),
                summary: b.verdict.summary.clone(),
                load_host_cpus: b.load_host_cpus.clone(),
            })
            .collect(),
        verdict: Verdict::of(&steps, first.interval, ended_by, load_host_cpus.as_deref()),
        steps,
    })
}

/// Step k of every load host as one step.
fn merge_step(at: &[(&str, &StepResult)], first: &Baseline) -> StepResult {
    let steps: Vec<&StepResult> = at.iter().map(|(_, s)| *s).collect();
    let sum = |pick: fn(&StepResult) -> usize| steps.iter().map(|s| pick(s)).sum::<usize>();
    let highest = |pick: fn(&StepResult) -> Option<f64>| {
        steps.iter().filter_map(|s| pick(s)).reduce(f64::max)
    };
    let runs = sum(|s| s.runs);
    let failed_runs = sum(|s| s.failed_runs);
    let first_runs = sum(|s| s.first_runs.runs);
    // The runs due on each host: its clones, one run an interval, over its windows.
    let due: f64 = steps
        .iter()
        .map(|s| s.clones as f64 * s.seconds as f64 / first.interval as f64)
        .sum();
    let seconds = steps.iter().map(|s| s.seconds).max().unwrap_or(0);
    let times = merged_times(&steps);
    let total_time = Distribution::of(times.totals());
    let hold_note = (total_time.p95.is_none() && total_time.count > 0).then(|| {
        format!(
            "{} runs over {} load hosts: fewer than the {P95_MIN_VALUES} a p95 needs",
            total_time.count,
            steps.len()
        )
    });
    let t = steps.iter().map(|s| s.t).min().unwrap_or(0);
    let mut merged = StepResult {
        step: steps[0].step,
        clones: sum(|s| s.clones),
        added: sum(|s| s.added),
        start_failed: at
            .iter()
            .flat_map(|(file, s)| s.start_failed.iter().map(move |c| format!("{file}: {c}")))
            .collect(),
        started_at: crate::sys::time::rfc3339_utc(t),
        t,
        seconds,
        samples: steps.iter().map(|s| s.samples).min().unwrap_or(0),
        runs,
        failed_runs,
        error_percent: (runs > 0).then(|| 100.0 * failed_runs as f64 / runs as f64),
        // Each host's rate over its own windows, added up.
        runs_per_minute: steps.iter().map(|s| per_minute(s.runs, s.seconds)).sum(),
        throughput_percent: (due > 0.0).then(|| 100.0 * (runs + first_runs) as f64 / due),
        total_time,
        first_runs: FirstRuns {
            runs: first_runs,
            failed_runs: sum(|s| s.first_runs.failed_runs),
            total_time: Distribution::of(times.first_runs.iter().copied()),
        },
        jruby_wait_ms: highest(|s| s.jruby_wait_ms),
        host_cpu_busy: highest(|s| s.host_cpu_busy),
        phase: Phase::Coarse,
        settle: steps.iter().map(|s| s.settle).max().unwrap_or(0),
        hold: steps.iter().map(|s| s.hold).max().unwrap_or(0),
        repeats: steps[0].repeats,
        hold_note,
        config_retrieval_time: Distribution::of(times.retrievals()),
        agent_time: Distribution::of(times.agent_times()),
        // A spread is over one host's windows; several hosts' windows are not draws of
        // one level.
        spread: None,
        run_times: times,
        within_bounds: true,
        crossed: Vec::new(),
        failed_by_kind: steps.iter().fold(BTreeMap::new(), |mut all, s| {
            for (kind, n) in &s.failed_by_kind {
                *all.entry(*kind).or_default() += n;
            }
            all
        }),
        // Load hosts stepping together watch one server over the same step period: the
        // first host's view of it stands for the step, the server's counts are not the
        // hosts' to add up.
        server: steps.iter().find_map(|s| s.server.clone()),
    };
    merged.crossed = crossings(&first.bounds, &merged);
    merged.within_bounds = merged.crossed.is_empty();
    merged
}

/// The run times of every host's step together, bounded as one step's are.
fn merged_times(steps: &[&StepResult]) -> RunTimes {
    let as_run = |total: f64, retrieval: Option<f64>| NewRun {
        clone: String::new(),
        status: RunStatus::Unchanged,
        total_time: Some(total),
        config_retrieval_time: retrieval,
        failure_kinds: Vec::new(),
        resources: None,
        would_change: None,
    };
    let runs: Vec<NewRun> = steps
        .iter()
        .flat_map(|s| s.run_times.runs.iter().map(|(t, r)| as_run(*t, *r)))
        .collect();
    let first: Vec<NewRun> = steps
        .iter()
        .flat_map(|s| s.run_times.first_runs.iter().map(|t| as_run(*t, None)))
        .collect();
    let mut times = RunTimes::of(&runs, &first);
    times.complete &= steps.iter().all(|s| s.run_times.complete);
    debug_assert!(times.runs.len() + times.first_runs.len() <= MAX_RUN_TIMES);
    times
}
