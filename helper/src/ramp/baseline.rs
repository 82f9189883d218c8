//! The ramp's result as a file: its request, every step's figures (the curve) and the
//! verdict, so two ramps (two server versions, two tunings) can be laid side by side.

use std::path::Path;

use super::bisect;
use super::limit;
use super::step::one_decimal;
use super::usl;
use crate::protocol::error::{Error, Result};
use crate::protocol::ramp::{
    Baseline, ComparedStep, Comparison, GaveFirst, Knee, Level, Limit, Phase, RampReport,
    StepResult, Verdict, BASELINE_VERSION, OLDEST_BASELINE_VERSION,
};
use crate::report::endpoints;
use crate::sys::escape::visible;
use crate::sys::table::{Table, NONE};

impl Knee {
    /// "25 ± 5", "22.5 ± 2.5".
    pub fn describe(&self) -> String {
        format!("{} ± {}", short(self.estimate), short(self.plus_minus))
    }
}

/// A number without a needless decimal: `25`, `22.5`.
fn short(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

impl Level {
    fn of(step: &StepResult, interval: u64) -> Level {
        Level {
            step: step.step,
            clones: step.clones,
            interval,
            runs_per_minute: round1(step.runs_per_minute),
            crossed: step.crossed.iter().map(|c| c.describe()).collect(),
            server_p95_ms: step
                .server
                .iter()
                .flat_map(|server| &server.endpoints)
                .filter(|(name, _)| endpoints::OF_A_RUN.contains(&name.as_str()))
                .filter_map(|(name, e)| Some((name.clone(), e.p95_ms?)))
                .collect(),
        }
    }

    /// "server p95: catalog 335 ms, report 143 ms", in the order of an agent's run;
    /// `None` without an access log's p95s.
    fn server_p95s(&self) -> Option<String> {
        let named: Vec<String> = endpoints::OF_A_RUN
            .iter()
            .filter_map(|name| Some(format!("{name} {} ms", self.server_p95_ms.get(*name)?)))
            .collect();
        (!named.is_empty()).then(|| format!("server p95: {}", named.join(", ")))
    }
}

impl Verdict {
    /// The verdict of `steps`, ended as `ended_by`; `host_cpus` are the CPUs their
    /// `host_cpu_busy` counted (`None`: every CPU).
    pub fn of(
        steps: &[StepResult],
        interval: u64,
        ended_by: &str,
        host_cpus: Option<&str>,
    ) -> Verdict {
        let (good, bad) = bisect::bracket(steps);
        let sustained = good.map(|s| Level::of(s, interval));
        let first_degraded = bad.map(|s| Level::of(s, interval));
        let knee = good.zip(bad).map(|(g, b)| Knee {
            low: g.clones,
            high: b.clones,
            estimate: (g.clones + b.clones) as f64 / 2.0,
            plus_minus: (b.clones - g.clones) as f64 / 2.0,
        });
        // The lightest step within bounds is what the runs' growth is measured from.
        let lightest = steps
            .iter()
            .filter(|s| s.within_bounds)
            .min_by_key(|s| (s.clones, s.step));
        let limit = bad.map(|b| limit::whose(b, lightest, host_cpus));
        let scalability = usl::fit(
            &steps
                .iter()
                .map(|s| (s.clones, s.runs_per_minute))
                .collect::<Vec<_>>(),
        );
        let summary = if steps.is_empty() {
            // Nothing held and nothing gave: no step has been judged to say either.
            match ended_by {
                "signal" => "stopped before the first step was judged",
                "running" => "still ramping: no step judged yet",
                _ => "no step judged",
            }
            .to_owned()
        } else {
            Self::summary(&sustained, &first_degraded, ended_by, &knee, &limit)
        };
        Verdict {
            ended_by: ended_by.to_owned(),
            sustained,
            first_degraded,
            knee,
            limit,
            scalability,
            summary,
        }
    }

    /// "sustained ...; first degraded at ..." of a ramp with at least one step judged.
    fn summary(
        sustained: &Option<Level>,
        first_degraded: &Option<Level>,
        ended_by: &str,
        knee: &Option<Knee>,
        limit: &Option<Limit>,
    ) -> String {
        let held = match sustained {
            Some(l) => format!(
                "sustained {} agents at interval {} s ({} runs/min{})",
                l.clones,
                l.interval,
                l.runs_per_minute,
                l.server_p95s()
                    .map(|p| format!("; {p}"))
                    .unwrap_or_default()
            ),
            None => "no step within bounds".to_owned(),
        };
        let gave = match (first_degraded, ended_by) {
            (Some(l), _) => format!("first degraded at {} ({})", l.clones, l.crossed.join(", ")),
            (None, "clones") => "no bound crossed: every stopped clone was added".to_owned(),
            (None, "signal") => "stopped before any bound was crossed".to_owned(),
            (None, "running") => "still ramping".to_owned(),
            (None, _) => "no bound crossed".to_owned(),
        };
        let mut summary = format!("{held}; {gave}");
        if let Some(k) = knee {
            summary.push_str(&format!("; knee at {} agents", k.describe()));
        }
        if let Some(l) = limit {
            let who = match l.gave_first {
                GaveFirst::LoadHost => "the load host gave first",
                GaveFirst::Server => "the server gave first",
                GaveFirst::Unknown => "whose limit is not known",
            };
            summary.push_str(&format!("; {who}: {}", l.reason));
        }
        summary
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
    if !(OLDEST_BASELINE_VERSION..=BASELINE_VERSION).contains(&baseline.ramp) {
        return Err(invalid(format!(
            "baseline format {} (this helper reads {OLDEST_BASELINE_VERSION} to {BASELINE_VERSION})",
            baseline.ramp
        )));
    }
    Ok(baseline)
}

/// A baseline judged again with this helper's rules: a verdict is always its steps'
/// under one set of rules, whichever helper wrote the file (its `ended_by` stands).
pub fn read_judged(path: &Path, field: &'static str) -> Result<Baseline> {
    let mut b = read(path, field)?;
    b.verdict = Verdict::of(
        &b.steps,
        b.interval,
        &b.verdict.ended_by,
        b.load_host_cpus.as_deref(),
    );
    Ok(b)
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
            // Only p95s are compared: a max of a few runs is not one.
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
                runs_old: o.as_ref().map(|s| s.total_time.count),
                runs_new: w.as_ref().map(|s| s.total_time.count),
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
    let fit = b.verdict.scalability.as_ref();
    let mut steps = Table::new(&[
        "STEP",
        "PHASE",
        "CLONES",
        "RUNS",
        "RUNS/MIN",
        "USL/MIN",
        "RESID",
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
        // The law's value beside the measured one, never instead of it.
        let fitted = fit.map(|f| usl::throughput(f.lambda, f.sigma, f.kappa, s.clones as f64));
        steps.row([
            s.step.to_string(),
            match s.phase {
                Phase::Coarse => "coarse",
                Phase::Refine => "refine",
            }
            .to_owned(),
            s.clones.to_string(),
            s.runs.to_string(),
            format!("{:.1}", s.runs_per_minute),
            cell(fitted),
            cell(fitted.map(|f| s.runs_per_minute - f)),
            cell(s.throughput_percent),
            cell(s.total_time.p50),
            s.total_time.p95_cell(|v| cell(Some(v))),
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
    let longer = if b.max_hold > b.hold {
        " or more".to_owned()
    } else {
        String::new()
    };
    let mut out = format!(
        "ramp{}: +{} clones every {} s{longer} (settle {} s{}, hold {} s{}{}) at interval {} s, from {} running\n",
        b.label
            .as_deref()
            .map(|l| format!(" {}", visible(l)))
            .unwrap_or_default(),
        b.step,
        super::step_period(b.settle, b.hold.saturating_mul(b.repeat as u64), b.interval),
        b.settle,
        if b.steps.iter().any(|s| s.settle > b.settle) {
            format!(", {} s after a step past the bounds", b.settle + b.interval)
        } else {
            String::new()
        },
        b.hold,
        if b.max_hold > b.hold {
            format!(", longer for a p95 up to {} s", b.max_hold)
        } else {
            String::new()
        },
        if b.repeat > 1 {
            format!(", {} windows", b.repeat)
        } else {
            String::new()
        },
        b.interval,
        b.running_before,
    );
    if let Some(cpus) = &b.load_host_cpus {
        out.push_str(&format!(
            "HOST-CPU% is of the load host's own CPUs {} (--load-host-cpus)\n",
            visible(cpus)
        ));
    }
    if let Some(at) = &b.start_at {
        out.push_str(&format!(
            "steps keyed to {}: coarse only (bisection needs the load hosts to agree on each level)\n",
            visible(at)
        ));
    }
    for host in &b.load_hosts {
        out.push_str(&format!(
            "load host {}{}: {} steps, ended by {}{}\n",
            visible(&host.file),
            host.label
                .as_deref()
                .map(|l| format!(" ({})", visible(l)))
                .unwrap_or_default(),
            host.steps,
            visible(&host.ended_by),
            host.load_host_cpus
                .as_deref()
                .map(|c| format!(", its own CPUs {}", visible(c)))
                .unwrap_or_default()
        ));
    }
    out.push_str(&steps.render());
    for s in &b.steps {
        if let Some(note) = &s.hold_note {
            out.push_str(&format!("step {}: no p95: {}\n", s.step, visible(note)));
        }
    }
    if b.steps.iter().any(|s| s.spread.is_some()) {
        out.push_str(&format!("\n{}", spread_table(b)));
    }
    if b.steps.iter().any(|s| s.server.is_some()) {
        out.push_str(&format!("\n{}", server_table(b)));
    }
    if let Some(f) = fit {
        out.push_str(&format!(
            "USL fit over {} steps: λ {:.3} runs/min a clone, σ {:.4}, κ {:.3e}; {}; residuals {:.2} runs/min RMS\n",
            f.points.len(),
            f.lambda,
            f.sigma,
            f.kappa,
            match (f.peak_clones, f.peak_runs_per_minute) {
                (Some(n), Some(x)) => format!("throughput peaks at {n:.0} clones ({x:.1} runs/min)"),
                _ => "no peak: throughput does not turn down".to_owned(),
            },
            f.rms_residual
        ));
    }
    out.push_str(&format!("{}\n", visible(&b.verdict.summary)));
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
        // A step without a p95 had too few runs for one: say so, as the curve does.
        let p95 = |value: Option<f64>, runs: Option<usize>| match (value, runs) {
            (Some(v), _) => cell(Some(v)),
            (None, Some(n)) if n > 0 => format!("max({n})"),
            _ => NONE.to_owned(),
        };
        for r in &c.rows {
            rows.row([
                r.clones.to_string(),
                p95(r.p95_old, r.runs_old),
                p95(r.p95_new, r.runs_new),
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

/// The server's own view of each step it was watched in: its CPU, the p95 of the
/// requests that cost it most, its refusals and its queues.
fn server_table(b: &Baseline) -> String {
    let cell = one_decimal;
    let whole = |v: Option<u64>| v.map_or_else(|| NONE.to_owned(), |v| v.to_string());
    let mut rows = Table::new(&[
        "STEP",
        "CLONES",
        "SERVER-CPU%",
        "CATALOG-P95",
        "REPORT-P95",
        "5XX",
        "BORROW-TIMEOUTS",
        "QUEUE-503",
        "JRUBY-QUEUED",
        "GC%",
        "HEAP-MIB",
        "PUPPETDB-QUEUE",
    ]);
    for s in &b.steps {
        let Some(server) = &s.server else { continue };
        // Too few requests for a p95 read as their max, as the run times do.
        let p95 = |endpoint: &str| match server.endpoints.get(endpoint) {
            Some(e) => match (e.p95_ms, e.logged, e.max_ms) {
                (Some(p95), _, _) => p95.to_string(),
                (None, Some(n), Some(max)) if n > 0 => format!("max({n}) {max}"),
                _ => NONE.to_owned(),
            },
            None => NONE.to_owned(),
        };
        let logged_errors: Option<u64> = server
            .endpoints
            .values()
            .filter_map(|e| e.server_errors)
            .reduce(u64::saturating_add);
        rows.row([
            s.step.to_string(),
            s.clones.to_string(),
            cell(server.cpu_percent),
            p95("catalog"),
            p95("report"),
            whole(logged_errors),
            whole(server.borrow_timeouts),
            whole(server.queue_limit_hits),
            cell(server.jruby_queued_max),
            cell(server.gc_share.map(|g| g * 100.0)),
            whole(server.heap_used_max_bytes.map(|b| b / (1024 * 1024))),
            cell(server.puppetdb_queue_max),
        ]);
    }
    format!(
        "the server's view of each step (p95s in ms, from its access log; 5XX are the log's):\n{}",
        rows.render()
    )
}

/// Each repeated step's figures over its windows, min/median/max.
fn spread_table(b: &Baseline) -> String {
    let cell = |v: f64| format!("{v:.1}");
    let mut rows = Table::new(&[
        "STEP",
        "CLONES",
        "WINDOWS",
        "RUNS/MIN",
        "DUE%",
        "P50",
        "P95|MAX",
        "FAILED%",
        "JRUBY-WAIT",
        "HOST-CPU%",
    ]);
    for s in &b.steps {
        let Some(r) = &s.spread else { continue };
        let cpu = crate::protocol::ramp::Spread {
            min: r.host_cpu_busy.min.map(|v| v * 100.0),
            median: r.host_cpu_busy.median.map(|v| v * 100.0),
            max: r.host_cpu_busy.max.map(|v| v * 100.0),
        };
        rows.row([
            s.step.to_string(),
            s.clones.to_string(),
            r.repeats.to_string(),
            r.runs_per_minute.cell(cell),
            r.throughput_percent.cell(cell),
            r.p50.cell(cell),
            r.tail.cell(cell),
            r.error_percent.cell(cell),
            r.jruby_wait_ms.cell(|v| format!("{v:.0}")),
            cpu.cell(cell),
        ]);
    }
    format!(
        "spread over each step's windows (min/median/max):\n{}",
        rows.render()
    )
}
