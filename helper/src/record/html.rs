//! A recorded load run for people: one self-contained HTML page (inline SVG charts, no
//! script, nothing fetched) and its summary, which is also `report --from`'s JSON.
//!
//! Each chart's series are taken from the samples by the functions in [`series`], which
//! the tests hold against the timeline: a chart whose numbers cannot be checked is a
//! defect.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::protocol::answers::{FailureKind, Figure, RunStatus, P95_MIN_VALUES};
use crate::protocol::record::{PageWritten, RunSummary, Sample, StepMark};
use crate::record::chart::{html_text, line_chart, tick_label, Mark, Series};
use crate::record::read::Recording;
use crate::record::server_window::WindowTotals;
use crate::record::shape::counted;
use crate::report::endpoints;
use crate::sys::table::truncate;
use crate::sys::time::rfc3339_utc;

pub fn summary(recording: &Recording) -> RunSummary {
    let samples = &recording.samples;
    let mut runs: BTreeMap<RunStatus, usize> = RunStatus::ALL.iter().map(|s| (*s, 0)).collect();
    let mut failed_by_kind: BTreeMap<FailureKind, usize> = BTreeMap::new();
    let mut totals = WindowTotals::default();
    let mut server_seen = false;
    for sample in samples {
        for (status, n) in &sample.runs.by_status {
            *runs.entry(*status).or_default() += n;
        }
        for (kind, n) in &sample.runs.failed_by_kind {
            let total = failed_by_kind.entry(*kind).or_default();
            *total = total.saturating_add(*n);
        }
        let (server, puppetdb, access) = (
            sample.server_window.as_ref(),
            sample.puppetdb_window.as_ref(),
            sample.access_log.as_ref(),
        );
        server_seen |= server.is_some() || puppetdb.is_some() || access.is_some();
        totals.add(server, puppetdb, access);
    }
    let max = |values: Vec<f64>| values.into_iter().reduce(f64::max);
    let last = samples.last();
    RunSummary {
        samples: samples.len(),
        skipped_lines: recording.skipped,
        // From the seconds, not the sample's own text: the timeline file is read as given.
        first: samples.first().map(|s| rfc3339_utc(s.t)),
        last: last.map(|s| rfc3339_utc(s.t)),
        seconds: match (samples.first(), last) {
            (Some(a), Some(b)) => b.t - a.t,
            _ => 0,
        },
        runs,
        peak_runs_per_minute: max(series::runs_per_minute(samples, |_| true)
            .into_iter()
            .map(|p| p.1)
            .collect()),
        max_run_time: max(samples
            .iter()
            .filter_map(|s| s.runs.total_time.max)
            .collect()),
        max_config_retrieval_time: max(samples
            .iter()
            .filter_map(|s| s.runs.config_retrieval_time.max)
            .collect()),
        clones: last.map(|s| s.fleet.clones),
        running: last.map(|s| s.fleet.running),
        silent: last.map(|s| s.fleet.silent),
        peak_clones: samples.iter().map(|s| s.fleet.clones).max(),
        peak_puppetdb_queue_depth: max(series::puppetdb_queue(samples)
            .into_iter()
            .map(|p| p.1)
            .collect()),
        peak_cpu_busy: max(samples.iter().filter_map(|s| s.host.cpu_busy).collect()),
        shape: samples.iter().rev().find_map(|s| s.shape.clone()),
        versions: last.and_then(|s| s.versions.clone()),
        steps: series::step_starts(samples)
            .into_iter()
            .map(|(_, mark)| mark)
            .collect(),
        failed_by_kind,
        server: server_seen.then(|| totals.figures()),
    }
}

/// The points of each chart, from the samples.
pub mod series {
    use super::*;

    fn figure(value: &Option<Figure>) -> Option<f64> {
        value.as_ref().and_then(Figure::as_f64)
    }

    /// Runs finished per minute as of each sample, of the statuses `keep` takes: the runs
    /// of the samples within the last minute (at least the sample itself) over the time
    /// they cover, so short sampling periods do not make the line jump between 0 and 12.
    pub fn runs_per_minute(
        samples: &[Sample],
        keep: impl Fn(RunStatus) -> bool,
    ) -> Vec<(u64, f64)> {
        let runs = |s: &Sample| -> usize {
            s.runs
                .by_status
                .iter()
                .filter(|(status, _)| keep(**status))
                .map(|(_, n)| n)
                .sum()
        };
        samples
            .iter()
            .enumerate()
            .filter(|(_, s)| s.period > 0)
            .map(|(i, s)| {
                let window = samples[..=i]
                    .iter()
                    .rev()
                    .take_while(|w| w.t + 60 > s.t || w.t == s.t);
                let (n, seconds) =
                    window.fold((0, 0), |(n, secs), w| (n + runs(w), secs + w.period));
                (s.t, n as f64 * 60.0 / seconds.max(1) as f64)
            })
            .collect()
    }

    /// Where each step of a stepped load begins: its first sample's time, and its mark.
    pub fn step_starts(samples: &[Sample]) -> Vec<(u64, StepMark)> {
        let mut previous = None;
        samples
            .iter()
            .filter_map(|s| {
                let began = s.step.filter(|mark| Some(*mark) != previous);
                previous = s.step;
                began.map(|mark| (s.t, mark))
            })
            .collect()
    }

    /// A figure of the samples that have it.
    pub fn of(samples: &[Sample], pick: impl Fn(&Sample) -> Option<f64>) -> Vec<(u64, f64)> {
        samples
            .iter()
            .filter_map(|s| pick(s).map(|v| (s.t, v)))
            .collect()
    }

    pub fn jruby(
        samples: &[Sample],
        pick: impl Fn(&crate::protocol::answers::JrubyMetrics) -> Option<f64>,
    ) -> Vec<(u64, f64)> {
        of(samples, |s| s.jruby().and_then(&pick))
    }

    pub fn free_jrubies(samples: &[Sample]) -> Vec<(u64, f64)> {
        jruby(samples, |j| figure(&j.num_free_jrubies))
    }

    pub fn borrowed_jrubies(samples: &[Sample]) -> Vec<(u64, f64)> {
        jruby(samples, |j| {
            Some(figure(&j.num_jrubies)? - figure(&j.num_free_jrubies)?)
        })
    }

    pub fn compile_mean_ms(samples: &[Sample]) -> Vec<(u64, f64)> {
        of(samples, |s| {
            figure(&s.server.as_ref()?.compile.as_ref()?.mean_ms)
        })
    }

    pub fn puppetdb_queue(samples: &[Sample]) -> Vec<(u64, f64)> {
        of(samples, |s| figure(&s.puppetdb.as_ref()?.queue_depth))
    }

    /// Requests a second to `endpoint` as the server counted them in each sample's window.
    pub fn requests_per_second(samples: &[Sample], endpoint: &str) -> Vec<(u64, f64)> {
        of(samples, |s| {
            let w = s.server_window.as_ref().filter(|w| w.seconds > 0)?;
            let n = w.endpoints.get(endpoint).map_or(0, |e| e.requests);
            Some(n as f64 / w.seconds as f64)
        })
    }

    /// The p95 of the access log's requests to `endpoint` in each sample that had any, ms.
    pub fn logged_p95_ms(samples: &[Sample], endpoint: &str) -> Vec<(u64, f64)> {
        of(samples, |s| {
            let times = &s.access_log.as_ref()?.endpoints.get(endpoint)?.times;
            times.percentile(95).map(|ms| ms as f64)
        })
    }

    /// The 5xx the access log had in each sample, every endpoint together.
    pub fn logged_server_errors(samples: &[Sample]) -> Vec<(u64, f64)> {
        of(samples, |s| {
            let log = s.access_log.as_ref()?;
            Some(log.endpoints.values().map(|t| t.server_errors).sum::<u64>() as f64)
        })
    }

    /// A count of the JRuby pool's in each sample's window.
    pub fn jruby_window(
        samples: &[Sample],
        pick: impl Fn(&crate::protocol::record::JrubyWindow) -> Option<u64>,
    ) -> Vec<(u64, f64)> {
        of(samples, |s| {
            pick(s.server_window.as_ref()?.jruby.as_ref()?).map(|n| n as f64)
        })
    }

    /// The runs of each sample that failed with `kind`.
    pub fn failed_runs_of(samples: &[Sample], kind: FailureKind) -> Vec<(u64, f64)> {
        of(samples, |s| {
            Some(s.runs.failed_by_kind.get(&kind).copied().unwrap_or(0) as f64)
        })
    }

    pub fn queued_requests(samples: &[Sample]) -> Vec<(u64, f64)> {
        jruby(samples, |j| figure(&j.queued))
    }

    /// The server's heap in use as a percentage of its maximum.
    pub fn heap_used_percent(samples: &[Sample]) -> Vec<(u64, f64)> {
        of(samples, |s| {
            let jvm = s.server.as_ref()?.jvm.as_ref()?;
            let (used, max) = (figure(&jvm.heap_used_bytes)?, figure(&jvm.heap_max_bytes)?);
            (max > 0.0).then(|| used / max * 100.0)
        })
    }

    /// Garbage collection's share of each sample's window, percent.
    pub fn gc_percent(samples: &[Sample]) -> Vec<(u64, f64)> {
        of(samples, |s| {
            Some(s.server_window.as_ref()?.jvm.as_ref()?.gc_share? * 100.0)
        })
    }

    pub fn server_cpu_percent(samples: &[Sample]) -> Vec<(u64, f64)> {
        of(samples, |s| {
            figure(&s.server.as_ref()?.jvm.as_ref()?.cpu_percent)
        })
    }

    /// Memory in use (total less available) as a percentage of the total.
    pub fn memory_used_percent(samples: &[Sample]) -> Vec<(u64, f64)> {
        of(samples, |s| {
            let total = s.host.mem_total_bytes? as f64;
            let available = s.host.mem_available_bytes? as f64;
            (total > 0.0).then(|| (total - available) / total * 100.0)
        })
    }
}

const OK: &str = "#1a7f37";
const BAD: &str = "#cf222e";
const P50: &str = "#0969da";
const P95: &str = "#bf8700";
const MAX: &str = "#8250df";
const TEAL: &str = "#1b7c83";
const GREY: &str = "#57606a";

/// A colour for each endpoint of an agent's run ([`endpoints::OF_A_RUN`], in its order).
const ENDPOINT_COLORS: [&str; 6] = [GREY, TEAL, MAX, P50, BAD, P95];

/// One series per endpoint of an agent's run, each in its colour.
fn endpoint_series(points: impl Fn(&str) -> Vec<(u64, f64)>) -> Vec<Series> {
    endpoints::OF_A_RUN
        .iter()
        .zip(ENDPOINT_COLORS)
        .map(|(endpoint, color)| Series::new(endpoint, color, points(endpoint)))
        .collect()
}

/// What every chart of the page shares: the whole recording's time span, and where each
/// step of a stepped load began, with its clones.
fn span_and_marks(samples: &[Sample]) -> ((u64, u64), Vec<Mark>) {
    let span = (
        samples.first().map_or(0, |s| s.t),
        samples.last().map_or(0, |s| s.t),
    );
    let marks = series::step_starts(samples)
        .into_iter()
        .map(|(t, mark)| Mark {
            t,
            label: mark.clones.to_string(),
            title: format!("step {}: {} clones", mark.step, mark.clones),
            key: "ramp step began (its clones)",
        })
        .collect();
    (span, marks)
}

/// Every chart of the page, in order.
pub fn charts(samples: &[Sample]) -> Vec<String> {
    use series::*;
    let (span, marks) = span_and_marks(samples);
    let line_chart = |id: &str, title: &str, unit: &str, series: &[Series]| {
        line_chart(span, &marks, id, title, unit, series)
    };
    let successful = RunStatus::is_success;
    // A sample's p95 is drawn only where it had enough runs for one: below that it would
    // be the max, drawn beside it.
    let p95_name = format!("p95 (of {P95_MIN_VALUES} runs or more)");
    let distribution = |pick: fn(&Sample) -> &crate::protocol::answers::Distribution| {
        vec![
            Series::new("p50", P50, of(samples, |s| pick(s).p50)),
            Series::new(&p95_name, P95, of(samples, |s| pick(s).p95)),
            Series::new("max", MAX, of(samples, |s| pick(s).max)),
        ]
    };
    vec![
        line_chart(
            "runs-per-minute",
            "Runs finished per minute (over the last minute)",
            "/min",
            &[
                Series::new("successful", OK, runs_per_minute(samples, successful)),
                Series::new(
                    "failed",
                    BAD,
                    runs_per_minute(samples, |s| s == RunStatus::Failed),
                ),
            ],
        ),
        line_chart(
            "run-time",
            "Run time (runs finished in each sample)",
            "s",
            &distribution(|s| &s.runs.total_time),
        ),
        line_chart(
            "config-retrieval-time",
            "Catalog retrieval time (runs finished in each sample)",
            "s",
            &distribution(|s| &s.runs.config_retrieval_time),
        ),
        line_chart(
            "clones",
            "Clones running and silent",
            "",
            &[
                Series::new("running", OK, of(samples, |s| Some(s.fleet.running as f64))),
                Series::new("silent", BAD, of(samples, |s| Some(s.fleet.silent as f64))),
            ],
        ),
        line_chart(
            "jrubies",
            "Puppet Server JRuby instances",
            "",
            &[
                Series::new("free", OK, free_jrubies(samples)),
                Series::new("borrowed", P95, borrowed_jrubies(samples)),
                Series::new("requests waiting", BAD, queued_requests(samples)),
            ],
        ),
        line_chart(
            "jruby-times",
            "JRuby borrow and wait time (the server's recent means: a decaying sample of about the last five minutes)",
            "ms",
            &[
                Series::new(
                    "borrow",
                    P50,
                    jruby(samples, |j| {
                        j.average_borrow_time_ms.as_ref().and_then(Figure::as_f64)
                    }),
                ),
                Series::new(
                    "wait",
                    BAD,
                    jruby(samples, |j| {
                        j.average_wait_time_ms.as_ref().and_then(Figure::as_f64)
                    }),
                ),
            ],
        ),
        line_chart(
            "compile-time",
            "Catalog compile time (the server's recent mean)",
            "ms",
            &[Series::new("mean", P50, compile_mean_ms(samples))],
        ),
        line_chart(
            "puppetdb-queue",
            "PuppetDB command queue depth",
            "",
            &[Series::new("queue depth", P95, puppetdb_queue(samples))],
        ),
        line_chart(
            "endpoint-requests",
            "Requests a second by endpoint (the server's counts, each sample's window)",
            "/s",
            &endpoint_series(|e| requests_per_second(samples, e)),
        ),
        line_chart(
            "endpoint-time",
            "Request time p95 by endpoint (the access log, each sample's requests)",
            "ms",
            &endpoint_series(|e| logged_p95_ms(samples, e)),
        ),
        line_chart(
            "server-failures",
            "The server failing requests and runs (each sample)",
            "",
            &[
                Series::new(
                    "borrow timeouts (503)",
                    BAD,
                    jruby_window(samples, |j| j.borrow_timeouts),
                ),
                Series::new(
                    "queue-limit refusals (503)",
                    P95,
                    jruby_window(samples, |j| j.queue_limit_hits),
                ),
                Series::new("5xx logged", MAX, logged_server_errors(samples)),
                Series::new(
                    "runs on a cached catalog",
                    TEAL,
                    failed_runs_of(samples, FailureKind::CachedCatalog),
                ),
                Series::new(
                    "runs that met a 5xx",
                    P50,
                    failed_runs_of(samples, FailureKind::ServerError),
                ),
                Series::new(
                    "runs that timed out",
                    GREY,
                    failed_runs_of(samples, FailureKind::Timeout),
                ),
            ],
        ),
        line_chart(
            "server-jvm",
            "Puppet Server's JVM: heap used, garbage collection, CPU",
            "%",
            &[
                Series::new("heap used of its max", P50, heap_used_percent(samples)),
                Series::new("collecting garbage", BAD, gc_percent(samples)),
                Series::new("CPU of the host's", P95, server_cpu_percent(samples)),
            ],
        ),
        line_chart(
            "host",
            "Load host CPU busy and memory used",
            "%",
            &[
                Series::new(
                    "CPU busy",
                    BAD,
                    of(samples, |s| s.host.cpu_busy.map(|b| b * 100.0)),
                ),
                Series::new("memory used", P50, memory_used_percent(samples)),
            ],
        ),
    ]
}

fn cell(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(
        || "-".to_owned(),
        |v| format!("{}{unit}", tick_label((v * 100.0).round() / 100.0)),
    )
}

/// How every page begins: what tells a page this helper wrote from any other file, which
/// [`write_page`] never replaces. A comment after the doctype, where browsers keep their
/// standards mode.
pub const PAGE_MARKER: &str = "<!doctype html>\n<!-- clone-army load-run page: `clone-army report --from` writes it, and replaces only a file that begins so -->\n";

/// The page.
pub fn page(recording: &Recording) -> String {
    let s = summary(recording);
    let mut out = String::new();
    let title = format!(
        "clone-army load run {} – {}",
        s.first.as_deref().unwrap_or("-"),
        s.last.as_deref().unwrap_or("-")
    );
    out.push_str(PAGE_MARKER);
    // Without the viewport, phones lay the page out at a desktop's width and shrink it.
    let _ = writeln!(
        out,
        "<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    );
    let _ = writeln!(out, "<title>{}</title>", html_text(&title));
    let _ = writeln!(
        out,
        "<style>body{{font:14px/1.4 system-ui,sans-serif;margin:2em auto;padding:0 8px;max-width:760px;color:#1f2328}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #d0d7de;padding:2px 8px;text-align:left}}\
         figure{{margin:1.5em 0}}figcaption{{font-weight:600}}svg{{width:100%;height:auto}}\
         .legend span{{margin-right:1em}}.legend i{{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}}\
         .legend .mark-key i{{height:0}}\
         .empty{{color:#656d76}}.few{{font-style:italic}}</style></head><body>"
    );
    let _ = writeln!(out, "<h1>{}</h1>", html_text(&title));
    let rows = summary_rows(&s);
    let _ = writeln!(out, "<table id=\"summary\">");
    for (name, value) in &rows {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            html_text(name),
            html_text(value)
        );
    }
    let _ = writeln!(out, "</table>");
    let (span, marks) = span_and_marks(&recording.samples);
    let grouped = groups::section(&recording.samples, |id, title, unit, series| {
        line_chart(span, &marks, id, title, unit, series)
    });
    out.push_str(&grouped.unwrap_or_default());
    for chart in charts(&recording.samples) {
        out.push_str(&chart);
    }
    let _ = writeln!(out, "</body></html>");
    out
}

/// The most of a summary row's value shown, in the page and in the text table: room for a
/// fleet with a dozen agent versions and every run mode. The versions and run modes are
/// the clones' and the servers' words, read back from a timeline as it was given.
pub const MAX_ROW_CHARS: usize = 1024;

/// The summary as (name, value) rows, for the page's table and the text one; each value
/// at most [`MAX_ROW_CHARS`] characters.
pub fn summary_rows(s: &RunSummary) -> Vec<(&'static str, String)> {
    full_rows(s)
        .into_iter()
        .map(|(name, value)| (name, truncate(&value, MAX_ROW_CHARS)))
        .collect()
}

fn full_rows(s: &RunSummary) -> Vec<(&'static str, String)> {
    let runs: Vec<String> = s
        .runs
        .iter()
        // A run that is neither is not one; noop runs are named only in a noop fleet.
        .filter(|(status, n)| match status {
            RunStatus::Never | RunStatus::Unreadable => false,
            RunStatus::WouldChange => **n > 0,
            _ => true,
        })
        .map(|(status, n)| format!("{} {n}", status.as_str()))
        .collect();
    let shape = s.shape.as_ref().map_or_else(
        || "-".to_owned(),
        |f| {
            let intervals: BTreeMap<String, usize> = f
                .runintervals
                .iter()
                .map(|(t, n)| (format!("{t} s"), *n))
                .collect();
            format!(
                "{} clones; run mode {}; interval {}; phased {}; noop {}",
                f.clones,
                counted(&f.run_modes),
                counted(&intervals),
                f.phased,
                f.agent_noop
            )
        },
    );
    let versions = s.versions.as_ref().map_or_else(
        || "-".to_owned(),
        |v| {
            format!(
                "agent {}; Puppet Server {}; PuppetDB {}",
                counted(&v.agent),
                v.server.as_deref().unwrap_or("-"),
                v.puppetdb.as_deref().unwrap_or("-")
            )
        },
    );
    let mut rows = vec![
        ("fleet", shape),
        ("versions", versions),
        (
            "samples",
            format!(
                "{} over {} min ({} lines skipped)",
                s.samples,
                tick_label((s.seconds as f64 / 60.0 * 10.0).round() / 10.0),
                s.skipped_lines
            ),
        ),
        ("runs finished", runs.join(", ")),
        ("peak runs per minute", cell(s.peak_runs_per_minute, "")),
        ("longest run", cell(s.max_run_time, " s")),
        (
            "longest catalog retrieval",
            cell(s.max_config_retrieval_time, " s"),
        ),
        (
            "clones at the end",
            format!(
                "{} ({} running, {} silent); at most {}",
                whole(s.clones),
                whole(s.running),
                whole(s.silent),
                whole(s.peak_clones)
            ),
        ),
        (
            "peak PuppetDB queue depth",
            cell(s.peak_puppetdb_queue_depth, ""),
        ),
        (
            "peak load host CPU busy",
            cell(s.peak_cpu_busy.map(|b| b * 100.0), " %"),
        ),
    ];
    let kinds: Vec<String> = s
        .failed_by_kind
        .iter()
        .map(|(kind, n)| format!("{} {n}", kind.as_str()))
        .collect();
    if !kinds.is_empty() {
        rows.push(("failed runs by kind", kinds.join(", ")));
    }
    if let Some(server) = &s.server {
        rows.push((
            "the server failing requests",
            format!(
                "borrow timeouts {}, queue-limit refusals {}, 5xx logged {}{}",
                whole(server.borrow_timeouts.map(|n| n as usize)),
                whole(server.queue_limit_hits.map(|n| n as usize)),
                server
                    .endpoints
                    .values()
                    .filter_map(|e| e.server_errors)
                    .sum::<u64>(),
                if server.restarted {
                    "; the server restarted"
                } else {
                    ""
                }
            ),
        ));
        let logged: Vec<String> = endpoints::OF_A_RUN
            .iter()
            .filter_map(|name| {
                let e = server.endpoints.get(*name)?;
                let tail = match (e.p95_ms, e.max_ms) {
                    (Some(p95), _) => format!("p95 {p95} ms"),
                    (None, Some(max)) => format!("max {max} ms"),
                    (None, None) => "p95 -".to_owned(),
                };
                Some(format!(
                    "{name} {} (p50 {} ms, {tail})",
                    e.logged?,
                    e.p50_ms.map_or_else(|| "-".to_owned(), |v| v.to_string()),
                ))
            })
            .collect();
        if !logged.is_empty() {
            rows.push(("requests logged by endpoint", logged.join(", ")));
        }
    }
    if !s.steps.is_empty() {
        let steps: Vec<String> = s.steps.iter().map(|m| m.clones.to_string()).collect();
        rows.push((
            "steps (clones each ran)",
            format!("{}: {}", s.steps.len(), steps.join(", ")),
        ));
    }
    rows
}

/// `report --from --format table`: the summary's rows as text.
pub fn summary_table(recording: &Recording) -> String {
    let rows = summary_rows(&summary(recording));
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (name, value) in rows {
        let _ = writeln!(
            out,
            "{name:width$}  {}",
            crate::sys::escape::visible(&value)
        );
    }
    out
}

/// Writes the page to `path` whole, mode 0644, as [`output_file::replace_own`] does: only
/// over nothing or a page this helper wrote (a regular file that begins with
/// [`PAGE_MARKER`]), never over a symlink or any other file.
///
/// The path is the caller's (`--output`, which the `clone_army::report` task passes on as
/// root).
///
/// [`output_file::replace_own`]: crate::sys::output_file::replace_own
pub fn write_page(
    recording: &Recording,
    path: &std::path::Path,
) -> crate::protocol::error::Result<PageWritten> {
    let page = page(recording);
    crate::sys::output_file::replace_own(path, PAGE_MARKER, "page", page.as_bytes())?;
    Ok(PageWritten {
        page: path.display().to_string(),
        bytes: page.len(),
        samples: recording.samples.len(),
        skipped_lines: recording.skipped,
    })
}

fn whole(value: Option<usize>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

pub mod groups;

#[cfg(test)]
mod tests;
