//! The ramp's result as a file: its request, every step's figures (the curve) and the
//! verdict, so two ramps (two server versions, two tunings) can be laid side by side.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::step::{one_decimal, Bounds, StepResult};
use crate::protocol::error::{Error, Result};
use crate::sys::escape::visible;
use crate::sys::table::{Table, NONE};

/// The baseline's format version, its first field.
pub const BASELINE_VERSION: u32 = 1;

/// What a ramp found, written after every step (so a ramp that is stopped keeps its
/// steps) and at its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub ramp: u32,
    /// The user's name for this run (`--label`), to tell two baselines apart.
    pub label: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The agents' run interval the ramp was told, seconds.
    pub interval: u64,
    /// Clones added a step, seconds a step settles before its window, and seconds the
    /// window holds.
    pub step: usize,
    pub settle: u64,
    pub hold: u64,
    pub bounds: Bounds,
    /// Clones already running when the ramp began.
    pub running_before: usize,
    /// The server's version, as its status service gave it.
    pub server_version: Option<String>,
    pub steps: Vec<StepResult>,
    pub verdict: Verdict,
}

/// Where the load held and where it gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `running` while steps are still to come; then `degraded` (a step crossed a bound),
    /// `clones` (every clone it could add ran within bounds: no knee up to there) or
    /// `signal` (stopped by SIGTERM or SIGINT).
    pub ended_by: String,
    /// The last step within bounds; `null` when the first step already crossed one.
    pub sustained: Option<Level>,
    /// The first step that crossed a bound; `null` when none did.
    pub first_degraded: Option<Level>,
    /// The verdict in one sentence.
    pub summary: String,
}

/// A step's load: clones, at the run interval, and the runs a minute they made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub step: u32,
    pub clones: usize,
    pub interval: u64,
    pub runs_per_minute: f64,
    /// The bounds it crossed, described ("p95 run time 41.2 s > 30 s").
    pub crossed: Vec<String>,
}

impl Level {
    fn of(step: &StepResult, interval: u64) -> Level {
        Level {
            step: step.step,
            clones: step.clones,
            interval,
            runs_per_minute: round1(step.runs_per_minute),
            crossed: step.crossed.iter().map(|c| c.describe()).collect(),
        }
    }
}

impl Verdict {
    /// The verdict of `steps`, ended as `ended_by`.
    pub fn of(steps: &[StepResult], interval: u64, ended_by: &str) -> Verdict {
        let first_bad = steps.iter().position(|s| !s.within_bounds);
        let good = &steps[..first_bad.unwrap_or(steps.len())];
        let sustained = good.last().map(|s| Level::of(s, interval));
        let first_degraded = first_bad.map(|i| Level::of(&steps[i], interval));
        let summary = if steps.is_empty() {
            // Nothing held and nothing gave: no step has been judged to say either.
            match ended_by {
                "signal" => "stopped before the first step was judged",
                "running" => "still ramping: no step judged yet",
                _ => "no step judged",
            }
            .to_owned()
        } else {
            Self::summary(&sustained, &first_degraded, ended_by)
        };
        Verdict {
            ended_by: ended_by.to_owned(),
            sustained,
            first_degraded,
            summary,
        }
    }

    /// "sustained ...; first degraded at ..." of a ramp with at least one step judged.
    fn summary(
        sustained: &Option<Level>,
        first_degraded: &Option<Level>,
        ended_by: &str,
    ) -> String {
        let held = match sustained {
            Some(l) => format!(
                "sustained {} agents at interval {} s ({} runs/min)",
                l.clones, l.interval, l.runs_per_minute
            ),
            None => "no step within bounds".to_owned(),
        };
        let gave = match (first_degraded, ended_by) {
            (Some(l), _) => format!("first degraded at {} ({})", l.clones, l.crossed.join(", ")),
            (None, "clones") => "no bound crossed: every stopped clone was added".to_owned(),
            (None, "signal") => "stopped before any bound was crossed".to_owned(),
            (None, _) => "still ramping".to_owned(),
        };
        format!("{held}; {gave}")
    }
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// Writes the baseline whole (a reader never sees half of it), never through a symlink.
pub fn write(baseline: &Baseline, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(baseline)
        .map_err(|e| Error::Internal(format!("a baseline does not serialize: {e}")))?;
    crate::sys::fsutil::write_atomic(path, format!("{text}\n").as_bytes(), 0o644)?;
    Ok(())
}

/// Reads a baseline `ramp run` wrote; `field` names the flag it came from.
pub fn read(path: &Path, field: &'static str) -> Result<Baseline> {
    let invalid = |reason: String| Error::InvalidArgument {
        field,
        value: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| invalid(format!("cannot read: {e}")))?;
    let baseline: Baseline = serde_json::from_str(&text)
        .map_err(|e| invalid(format!("not a baseline `ramp run` wrote: {e}")))?;
    if baseline.ramp != BASELINE_VERSION {
        return Err(invalid(format!(
            "baseline format {} (this helper reads {BASELINE_VERSION})",
            baseline.ramp
        )));
    }
    Ok(baseline)
}

/// Two baselines step by step, matched by the clones each step ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub against: Baseline,
    pub rows: Vec<ComparedStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedStep {
    pub clones: usize,
    /// p95 run time, seconds, in the old run (`against`) and the new one.
    pub p95_old: Option<f64>,
    pub p95_new: Option<f64>,
    /// new / old; below 1 is faster.
    pub p95_ratio: Option<f64>,
    pub error_percent_old: Option<f64>,
    pub error_percent_new: Option<f64>,
    pub runs_per_minute_old: Option<f64>,
    pub runs_per_minute_new: Option<f64>,
}

/// What `ramp report` answers: the baseline, and its comparison with another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampReport {
    pub baseline: Baseline,
    pub comparison: Option<Comparison>,
}

/// `ramp report`: the baseline at `path`, and its comparison with the one at `against`.
pub fn report(path: &Path, against: Option<&Path>) -> Result<RampReport> {
    let baseline = read(path, "baseline")?;
    let comparison = against
        .map(|old| read(old, "against"))
        .transpose()?
        .map(|old| compare(&baseline, old));
    Ok(RampReport {
        baseline,
        comparison,
    })
}

/// The steps of `new` and `old` side by side: a step of one is matched with the step of
/// the other that ran the same clones, and a step without a match has its side empty.
pub fn compare(new: &Baseline, old: Baseline) -> Comparison {
    let mut clones: Vec<usize> = new
        .steps
        .iter()
        .chain(&old.steps)
        .map(|s| s.clones)
        .collect();
    clones.sort_unstable();
    clones.dedup();
    let at = |b: &Baseline, n: usize| b.steps.iter().find(|s| s.clones == n).cloned();
    let rows = clones
        .into_iter()
        .map(|n| {
            let (o, w) = (at(&old, n), at(new, n));
            let p95_old = o.as_ref().and_then(|s| s.total_time.p95);
            let p95_new = w.as_ref().and_then(|s| s.total_time.p95);
            ComparedStep {
                clones: n,
                p95_old,
                p95_new,
                p95_ratio: p95_old
                    .zip(p95_new)
                    .filter(|(o, _)| *o > 0.0)
                    .map(|(o, w)| (w / o * 100.0).round() / 100.0),
                error_percent_old: o.as_ref().and_then(|s| s.error_percent),
                error_percent_new: w.as_ref().and_then(|s| s.error_percent),
                runs_per_minute_old: o.as_ref().map(|s| round1(s.runs_per_minute)),
                runs_per_minute_new: w.as_ref().map(|s| round1(s.runs_per_minute)),
            }
        })
        .collect();
    Comparison { against: old, rows }
}

/// The curve for people, and the comparison when there is one.
pub fn table(report: &RampReport) -> String {
    let b = &report.baseline;
    let cell = one_decimal;
    let mut steps = Table::new(&[
        "STEP",
        "CLONES",
        "RUNS",
        "RUNS/MIN",
        "DUE%",
        "P50",
        "P95",
        "MAX",
        "FAILED%",
        "JRUBY-WAIT",
        "HOST-CPU%",
        "VERDICT",
    ]);
    for s in &b.steps {
        steps.row([
            s.step.to_string(),
            s.clones.to_string(),
            s.runs.to_string(),
            format!("{:.1}", s.runs_per_minute),
            cell(s.throughput_percent),
            cell(s.total_time.p50),
            cell(s.total_time.p95),
            cell(s.total_time.max),
            cell(s.error_percent),
            s.jruby_wait_ms
                .map_or_else(|| NONE.to_owned(), |v| format!("{v:.0}")),
            cell(s.host_cpu_busy.map(|c| c * 100.0)),
            if s.within_bounds {
                "ok".to_owned()
            } else {
                s.crossed
                    .iter()
                    .map(|c| c.bound.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            },
        ]);
    }
    let mut out = format!(
        "ramp{}: +{} clones every {} s (settle {} s, hold {} s) at interval {} s, from {} running\n{}{}\n",
        b.label
            .as_deref()
            .map(|l| format!(" {}", visible(l)))
            .unwrap_or_default(),
        b.step,
        super::step_period(b.settle, b.hold, b.interval),
        b.settle,
        b.hold,
        b.interval,
        b.running_before,
        steps.render(),
        visible(&b.verdict.summary)
    );
    if let Some(c) = &report.comparison {
        let mut rows = Table::new(&[
            "CLONES",
            "P95-OLD",
            "P95-NEW",
            "RATIO",
            "FAILED%-OLD",
            "FAILED%-NEW",
            "RUNS/MIN-OLD",
            "RUNS/MIN-NEW",
        ]);
        for r in &c.rows {
            rows.row([
                r.clones.to_string(),
                cell(r.p95_old),
                cell(r.p95_new),
                r.p95_ratio
                    .map_or_else(|| NONE.to_owned(), |v| format!("{v:.2}")),
                cell(r.error_percent_old),
                cell(r.error_percent_new),
                cell(r.runs_per_minute_old),
                cell(r.runs_per_minute_new),
            ]);
        }
        out.push_str(&format!(
            "\nagainst{} (started {}):\n{}old: {}\nnew: {}\n",
            c.against
                .label
                .as_deref()
                .map(|l| format!(" {}", visible(l)))
                .unwrap_or_default(),
            visible(&c.against.started_at),
            rows.render(),
            visible(&c.against.verdict.summary),
            visible(&b.verdict.summary)
        ));
    }
    out
}
