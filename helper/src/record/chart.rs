//! Line charts as inline SVG, drawn by hand: a load run's report must open anywhere,
//! with nothing fetched and no script.
//!
//! Every series is one `<polyline>` whose `points` are the data in drawing coordinates,
//! and carries `data-series` and `data-points` (how many samples it drew), so a test (or
//! a person with the page's source) can check the chart against the timeline.

use std::fmt::Write;

use crate::record::time_axis;
use crate::sys::escape::visible;

/// Drawing area in SVG units; the page scales it to its width. Below the plot, two lines
/// of the time axis (clock times, then dates); on the right, room for half a clock time
/// centred on a tick at the end.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 232.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 32.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;

/// One line: its name, colour and points (seconds since the epoch, value).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub points: Vec<(u64, f64)>,
}

impl Series {
    pub fn new(name: &str, color: &'static str, points: Vec<(u64, f64)>) -> Self {
        Series {
            name: name.to_owned(),
            color,
            points: points.into_iter().filter(|(_, v)| v.is_finite()).collect(),
        }
    }
}

/// A moment marked across a chart (a ramp's step beginning): a dashed vertical line
/// with a short label at its top and a longer title for whoever points at it. `key` says
/// what such marks are and what their labels give; the legend shows it once for every
/// kind of mark the chart draws.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub t: u64,
    pub label: String,
    pub title: String,
    pub key: &'static str,
}

/// The colour of marks: grey, apart from every series' colour.
const MARK_COLOR: &str = "#656d76";

/// The value range drawn: from 0 (or the lowest value, if negative) to the highest,
/// never empty.
fn value_range(series: &[Series]) -> (f64, f64) {
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (low, high) = values.fold((0.0f64, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !high.is_finite() || high <= low {
        (low, low + 1.0)
    } else {
        (low, high)
    }
}

/// The time the series cover, first to last point (never empty).
pub fn time_span(series: &[Series]) -> (u64, u64) {
    let times = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (first, last) = times.fold((u64::MAX, 0), |(a, b), t| (a.min(t), b.max(t)));
    if first > last {
        (0, 1)
    } else if first == last {
        (first, first + 1)
    } else {
        (first, last)
    }
}

/// A figure on an axis: whole numbers as such, others with up to two decimals.
pub fn tick_label(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e12 {
        format!("{}", value as i64)
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// Where each point of a series is drawn, in SVG coordinates.
pub fn coordinates(
    points: &[(u64, f64)],
    times: (u64, u64),
    values: (f64, f64),
) -> Vec<(f64, f64)> {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    points
        .iter()
        .map(|&(t, v)| {
            let x = LEFT + (t - times.0) as f64 / (times.1 - times.0) as f64 * plot_w;
            let y = TOP + plot_h - (v - values.0) / (values.1 - values.0) * plot_h;
            (x, y)
        })
        .collect()
}

/// The chart: a titled SVG with the value axis labelled at its ends and middle (in
/// `unit`), the time axis from `times.0` to `times.1` (seconds since the epoch; every
/// chart of a page takes the whole recording's, so they line up) with ticks at round
/// clock times in UTC ([`time_axis`]), the `marks` within it, one line per series and a
/// legend. A chart without any point says so instead of drawing empty axes.
pub fn line_chart(
    times: (u64, u64),
    marks: &[Mark],
    id: &str,
    title: &str,
    unit: &str,
    series: &[Series],
) -> String {
    let mut out = String::new();
    let drawn: usize = series.iter().map(|s| s.points.len()).sum();
    let _ = writeln!(
        out,
        r#"<figure class="chart" id="{id}" data-points="{drawn}"><figcaption>{}</figcaption>"#,
        html_text(title)
    );
    if drawn == 0 {
        let _ = writeln!(
            out,
            r#"<p class="empty">no samples had this figure</p></figure>"#
        );
        return out;
    }
    let times = if times.1 > times.0 {
        times
    } else {
        (times.0, times.0 + 1)
    };
    let values = value_range(series);
    let _ = writeln!(
        out,
        r#"<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}">"#,
        html_text(title)
    );
    let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
    let _ = writeln!(
        out,
        r##"<path d="M{x0} {y0}V{y1}H{x1}" fill="none" stroke="#888" stroke-width="1"/>"##
    );
    for (fraction, value) in [
        (0.0, values.0),
        (0.5, (values.0 + values.1) / 2.0),
        (1.0, values.1),
    ] {
        let y = y1 - fraction * (y1 - y0);
        let _ = writeln!(
            out,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{} {}</text>"##,
            x0 - 4.0,
            y + 4.0,
            tick_label(value),
            html_text(unit)
        );
    }
    // The zone is said once: after the date, which the first tick always has.
    let mut zone = Some(" UTC");
    for tick in time_axis::ticks(times) {
        let (x, _) = coordinates(&[(tick.t, values.0)], times, values)[0];
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{y1}" x2="{x:.1}" y2="{:.1}" stroke="#888"/><text class="tick" data-t="{}" x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"##,
            y1 + 4.0,
            tick.t,
            y1 + 15.0,
            tick.clock
        );
        if let Some(date) = tick.date {
            let _ = writeln!(
                out,
                r##"<text class="date" x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="{MARK_COLOR}">{date}{}</text>"##,
                y1 + 28.0,
                zone.take().unwrap_or_default()
            );
        }
    }
    let marks: Vec<&Mark> = marks
        .iter()
        .filter(|m| (times.0..=times.1).contains(&m.t))
        .collect();
    for mark in &marks {
        let (x, _) = coordinates(&[(mark.t, values.0)], times, values)[0];
        let _ = writeln!(
            out,
            r##"<line class="mark" x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="{MARK_COLOR}" stroke-dasharray="3 3"><title>{}</title></line><text x="{:.1}" y="{:.1}" font-size="9" fill="{MARK_COLOR}">{}</text>"##,
            html_text(&mark.title),
            x + 2.0,
            y0 + 9.0,
            html_text(&mark.label)
        );
    }
    for s in series {
        if s.points.is_empty() {
            continue;
        }
        let points: Vec<String> = coordinates(&s.points, times, values)
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline data-series="{}" data-points="{}" points="{}" fill="none" stroke="{}" stroke-width="1.5"/>"#,
            html_text(&s.name),
            s.points.len(),
            points.join(" "),
            s.color
        );
    }
    let _ = writeln!(out, "</svg>");
    let mut legend: Vec<String> = series
        .iter()
        .map(|s| {
            format!(
                r#"<span><i style="background:{}"></i>{}</span>"#,
                s.color,
                html_text(&s.name)
            )
        })
        .collect();
    let mut keys: Vec<&str> = marks.iter().map(|m| m.key).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        legend.push(format!(
            r#"<span class="mark-key"><i style="border-top:1px dashed {MARK_COLOR}"></i>{}</span>"#,
            html_text(key)
        ));
    }
    let _ = writeln!(
        out,
        r#"<div class="legend">{}</div></figure>"#,
        legend.join(" ")
    );
    out
}

/// Text for HTML: escaped, and control characters made visible first.
pub fn html_text(text: &str) -> String {
    visible(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_placed_by_time_and_value() {
        let series = [Series::new(
            "a",
            "#000",
            vec![(100, 0.0), (160, 5.0), (220, 10.0)],
        )];
        let xy = coordinates(&series[0].points, time_span(&series), value_range(&series));
        assert_eq!(xy[0], (LEFT, HEIGHT - BOTTOM));
        assert_eq!(xy[2], (WIDTH - RIGHT, TOP));
        assert_eq!(xy[1].0, (LEFT + WIDTH - RIGHT) / 2.0);
        assert_eq!(xy[1].1, (TOP + HEIGHT - BOTTOM) / 2.0);
    }

    #[test]
    fn a_chart_draws_every_series_with_its_point_count() {
        let series = [
            Series::new("ok", "#1a7f37", vec![(0, 1.0), (60, 2.0), (120, f64::NAN)]),
            Series::new("failed", "#cf222e", vec![(0, 0.0)]),
        ];
        let svg = line_chart(
            time_span(&series),
            &[],
            "runs",
            "Runs <per> minute",
            "runs",
            &series,
        );
        assert!(svg.contains(r#"data-points="3""#), "{svg}");
        assert!(
            svg.contains(r#"<polyline data-series="ok" data-points="2""#),
            "{svg}"
        );
        assert!(
            svg.contains(r#"<polyline data-series="failed" data-points="1""#),
            "{svg}"
        );
        assert!(svg.contains("Runs &lt;per&gt; minute"));
        assert!(
            svg.contains(">2 runs</text>"),
            "the top of the value axis: {svg}"
        );
        // A minute from the epoch (the last point is not a number): a tick every 10 s,
        // the last at the end.
        assert_eq!(svg.matches(r#"<text class="tick""#).count(), 7, "{svg}");
        assert!(
            svg.contains(r#"data-t="60" x="688.0""#) && svg.contains(">00:01:00</text>"),
            "the end of the time axis: {svg}"
        );
        assert!(svg.contains(r#"data-t="0" x="64.0""#), "{svg}");
        assert_eq!(svg.matches("UTC").count(), 1, "{svg}");
        assert!(svg.contains(">1970-01-01 UTC</text>"), "{svg}");
    }

    #[test]
    fn marks_are_drawn_where_they_fall_and_only_within_the_span() {
        let series = [Series::new("a", "#000", vec![(100, 1.0), (220, 2.0)])];
        let mark = |t: u64, label: &str| Mark {
            t,
            label: label.to_owned(),
            title: format!("step {label} <b>"),
            key: "step <began>",
        };
        let svg = line_chart(
            time_span(&series),
            &[mark(100, "10"), mark(160, "20"), mark(400, "30")],
            "m",
            "Marked",
            "",
            &series,
        );
        assert_eq!(svg.matches(r#"<line class="mark""#).count(), 2, "{svg}");
        let middle = (LEFT + WIDTH - RIGHT) / 2.0;
        assert!(
            svg.contains(&format!(r#"<line class="mark" x1="{middle:.1}""#)),
            "{svg}"
        );
        assert!(svg.contains(r#"<line class="mark" x1="64.0""#), "{svg}");
        assert!(svg.contains("<title>step 20 &lt;b&gt;</title>"), "{svg}");
        assert!(!svg.contains(">30</text>"), "{svg}");
        // One legend entry for the kind of mark, however many are drawn.
        assert_eq!(svg.matches(r#"class="mark-key""#).count(), 1, "{svg}");
        assert!(svg.contains("step &lt;began&gt;</span>"), "{svg}");
    }

    #[test]
    fn a_chart_whose_marks_all_fall_outside_it_has_no_mark_in_its_legend() {
        let series = [Series::new("a", "#000", vec![(100, 1.0), (220, 2.0)])];
        let outside = Mark {
            t: 400,
            label: "30".to_owned(),
            title: "step 3".to_owned(),
            key: "step began",
        };
        let svg = line_chart(time_span(&series), &[outside], "m", "M", "", &series);
        assert!(!svg.contains(r#"class="mark-key""#), "{svg}");
    }

    #[test]
    fn a_chart_without_points_says_so() {
        let html = line_chart(
            (0, 60),
            &[],
            "q",
            "Queue",
            "",
            &[Series::new("q", "#000", vec![])],
        );
        assert!(html.contains(r#"data-points="0""#));
        assert!(html.contains("no samples had this figure"));
        assert!(!html.contains("<svg"));
    }

    #[test]
    fn labels() {
        assert_eq!(tick_label(3.0), "3");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(1.5), "1.5");
        assert_eq!(tick_label(2.0 / 3.0), "0.67");
        assert_eq!(html_text("a\"b&<\u{1b}"), "a&quot;b&amp;&lt;\\x1b");
    }
}
