//! The page's "By KEY" section of a recording made with `record --group-by`: a table with
//! a row per group over the whole recording, and a chart of each group's run time.
//!
//! Group values are what real nodes' records said (a role, a node's name): text from
//! outside, escaped wherever the page shows it and shortened to [`MAX_VALUE_CHARS`].

use std::fmt::Write;

use super::cell;
use crate::protocol::answers::P95_MIN_VALUES;
use crate::protocol::record::Sample;
use crate::record::chart::{html_text, Series};
use crate::record::groups::{RecordingGroups, TimeFigures};
use crate::sys::table::truncate;

/// The most groups the chart draws (those with the most runs); the others are named
/// under it. More lines than this are no longer told apart.
pub const MAX_SERIES: usize = 8;
/// The most of the other groups named under the chart.
pub const MAX_NAMED_OTHERS: usize = 20;
/// The most characters of a group value (or key) the page shows.
pub const MAX_VALUE_CHARS: usize = 64;

/// A colour for each drawn group, in order of their runs.
const COLORS: [&str; MAX_SERIES] = [
    "#0969da", "#cf222e", "#1a7f37", "#bf8700", "#8250df", "#1b7c83", "#57606a", "#953800",
];

fn shown(value: &str) -> String {
    html_text(&truncate(value, MAX_VALUE_CHARS))
}

/// The p50 of a time, and its p95, or its max marked so when the runs were too few for
/// a p95 (the page's rule elsewhere: the max is then the slow end).
fn time_cells(figures: TimeFigures) -> [String; 2] {
    let tail = match (figures.p95, figures.max) {
        (Some(p95), _) => html_text(&cell(Some(p95), " s")),
        (None, Some(max)) => format!(
            r#"<span class="few" title="fewer than {P95_MIN_VALUES} runs: no p95">max {}</span>"#,
            html_text(&cell(Some(max), " s"))
        ),
        (None, None) => "-".to_owned(),
    };
    [html_text(&cell(figures.p50, " s")), tail]
}

/// The section, when some sample has groups; `chart` draws a line chart as the page's
/// other charts are drawn (id, title, unit, series).
pub fn section(
    samples: &[Sample],
    chart: impl Fn(&str, &str, &str, &[Series]) -> String,
) -> Option<String> {
    let groups = RecordingGroups::of(samples)?;
    let by = shown(&groups.by);
    let mut out = String::new();
    let _ = writeln!(out, r#"<h2 id="groups">By {by}</h2>"#);
    let _ = writeln!(
        out,
        "<table id=\"group-table\"><tr><th>{by}</th><th>runs</th><th>failed</th>\
         <th>run time p50</th><th>run time p95</th><th>catalog retrieval p50</th>\
         <th>catalog retrieval p95</th><th>resources (median)</th><th>would change</th></tr>"
    );
    let order = groups.largest_first();
    for value in &order {
        let totals = &groups.groups[*value];
        let [run_p50, run_p95] = time_cells(totals.total_time());
        let [retrieval_p50, retrieval_p95] = time_cells(totals.config_retrieval_time());
        let _ = writeln!(
            out,
            "<tr data-group=\"{name}\"><th>{name}</th><td>{}</td><td>{}</td><td>{run_p50}</td>\
             <td>{run_p95}</td><td>{retrieval_p50}</td><td>{retrieval_p95}</td><td>{}</td>\
             <td>{}</td></tr>",
            totals.runs,
            totals.failed,
            totals
                .resources_median()
                .map_or_else(|| "-".to_owned(), |n| n.to_string()),
            totals.would_change,
            name = shown(value),
        );
    }
    let _ = writeln!(out, "</table>");
    let _ = writeln!(
        out,
        "<p class=\"empty\">Over the whole recording. A p95 needs {P95_MIN_VALUES} runs or \
         more: a group with fewer shows its max. The times are the runs', counted in \
         histograms that add up over the samples: exact below 0.128 s, above it at most \
         about 3 % high, never low.</p>"
    );
    let series: Vec<Series> = order
        .iter()
        .take(MAX_SERIES)
        .zip(COLORS)
        .map(|(value, color)| {
            let points = samples
                .iter()
                .filter_map(|s| {
                    let runs = s.groups.as_ref()?.groups.get(*value)?;
                    Some((s.t, runs.total_time.p50?))
                })
                .collect();
            Series::new(&truncate(value, MAX_VALUE_CHARS), color, points)
        })
        .collect();
    out.push_str(&chart(
        "group-run-time",
        &format!(
            "Run time p50 by {} (runs finished in each sample)",
            truncate(&groups.by, MAX_VALUE_CHARS)
        ),
        "s",
        &series,
    ));
    let others = &order[order.len().min(MAX_SERIES)..];
    if !others.is_empty() {
        let named: Vec<String> = others
            .iter()
            .take(MAX_NAMED_OTHERS)
            .map(|v| shown(v))
            .collect();
        let more = others.len().saturating_sub(MAX_NAMED_OTHERS);
        let _ = writeln!(
            out,
            r#"<p class="empty" id="groups-not-drawn">Not drawn (the {MAX_SERIES} groups with the most runs are): {}{}.</p>"#,
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    Some(out)
}
