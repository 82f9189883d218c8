//! Fleet figures: nearest-rank percentiles and silent clones.
//!
//! A p95 is taken only over [`P95_MIN_VALUES`] values or more: a nearest-rank p95 of
//! fewer is their maximum, which a reader would take for a percentile.

use std::collections::BTreeMap;

pub use crate::protocol::answers::{Distribution, Tail, TailOf, P95_MIN_VALUES};
use crate::protocol::answers::{FleetReport, RunReport, RunStatus};

/// The fleet's figures over its clones' last runs, wherever they were read (the clones'
/// summaries on this host, or PuppetDB), each with the name `silent` lists it by.
pub fn fleet<'a>(
    runs: impl IntoIterator<Item = (&'a str, &'a RunReport)>,
    interval: u64,
) -> FleetReport {
    let runs: Vec<(&str, &RunReport)> = runs.into_iter().collect();
    let mut by_status: BTreeMap<RunStatus, usize> =
        RunStatus::ALL.iter().map(|s| (*s, 0)).collect();
    for (_, run) in &runs {
        *by_status.entry(run.status).or_default() += 1;
    }
    FleetReport {
        clones: runs.len(),
        by_status,
        total_time: Distribution::of(runs.iter().filter_map(|(_, r)| r.total_time)),
        config_retrieval_time: Distribution::of(
            runs.iter().filter_map(|(_, r)| r.config_retrieval_time),
        ),
        silent: runs
            .iter()
            .filter(|(_, r)| r.silent)
            .map(|(id, _)| (*id).to_owned())
            .collect(),
        silent_after: interval.saturating_mul(2),
    }
}

impl Distribution {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let mut sorted: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        Distribution::from_figures(
            sorted.len(),
            nearest_rank(&sorted, 50),
            p95(&sorted),
            sorted.last().copied(),
        )
    }
}

/// The 95th percentile of `sorted` (ascending) by nearest rank, where there are at least
/// [`P95_MIN_VALUES`] values; `None` below that.
pub fn p95(sorted: &[f64]) -> Option<f64> {
    if sorted.len() < P95_MIN_VALUES {
        return None;
    }
    nearest_rank(sorted, 95)
}

/// The nearest-rank percentile: the smallest value such that at least `percent` % of the
/// values are less than or equal to it, i.e. the value at 1-based rank ⌈percent/100 · n⌉ of
/// the ascending values. Always one of the values, never interpolated; `None` when empty.
pub fn nearest_rank(sorted: &[f64], percent: u32) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    Some(sorted[rank(sorted.len() as u64, percent) as usize - 1])
}

/// The 1-based nearest rank of `percent` among `n` values (`n` at least 1).
fn rank(n: u64, percent: u32) -> u64 {
    let rank = (u128::from(percent) * u128::from(n)).div_ceil(100);
    u64::try_from(rank).unwrap_or(u64::MAX).clamp(1, n)
}

/// [`nearest_rank`] of values given counted (value → how many times it occurs), without
/// laying them out: the counts are a file's to say, and may be as large as it likes.
pub fn nearest_rank_counted(counted: &BTreeMap<u64, u64>, percent: u32) -> Option<u64> {
    let n = counted.values().fold(0u64, |a, c| a.saturating_add(*c));
    if n == 0 {
        return None;
    }
    let rank = rank(n, percent);
    let mut seen = 0u64;
    counted.iter().find_map(|(value, count)| {
        seen = seen.saturating_add(*count);
        (seen >= rank).then_some(*value)
    })
}

/// Whether a clone counts as silent: its last report is more than `2 × interval` old, or it
/// never reported although it has existed for longer than that (`existed_for`, when known).
pub fn is_silent(age: Option<u64>, existed_for: Option<u64>, interval: u64) -> bool {
    let limit = interval.saturating_mul(2);
    match age {
        Some(age) => age > limit,
        None => existed_for.is_some_and(|e| e > limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(nearest_rank(&[], 50), None);
        assert_eq!(nearest_rank(&[7.0], 50), Some(7.0));
        assert_eq!(nearest_rank(&[7.0], 95), Some(7.0));
        let four = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(nearest_rank(&four, 50), Some(2.0));
        assert_eq!(nearest_rank(&four, 95), Some(4.0));
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&hundred, 50), Some(50.0));
        assert_eq!(nearest_rank(&hundred, 95), Some(95.0));
        assert_eq!(nearest_rank(&hundred, 100), Some(100.0));
        let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
        // ⌈0.95 · 20⌉ = 19.
        assert_eq!(nearest_rank(&twenty, 95), Some(19.0));
        // ⌈0.5 · 5⌉ = 3.
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0, 4.0, 5.0], 50), Some(3.0));
    }

    #[test]
    fn distribution_sorts_and_skips_non_finite() {
        let d = Distribution::of([3.0, f64::NAN, 1.0, 2.0]);
        assert_eq!(d.count, 3);
        assert_eq!(d.p50, Some(2.0));
        assert_eq!(d.max, Some(3.0));
        let empty = Distribution::of([]);
        assert_eq!(
            empty,
            Distribution {
                count: 0,
                p50: None,
                p95: None,
                max: None,
                tail: None,
            }
        );
        assert_eq!(empty.p95_cell(|v| v.to_string()), "-");
    }

    #[test]
    fn a_p95_of_fewer_than_twenty_values_is_called_the_max_of_n() {
        let nineteen = Distribution::of((1..=19).map(f64::from));
        assert_eq!(nineteen.p95, None);
        assert_eq!(
            nineteen.tail,
            Some(Tail {
                of: TailOf::Max,
                value: 19.0
            })
        );
        assert_eq!(nineteen.tail_name(), "max of 19");
        assert_eq!(nineteen.p95_cell(|v| format!("{v:.1}")), "max(19)");
        let json = serde_json::to_value(&nineteen).unwrap();
        assert_eq!(json["p95"], serde_json::Value::Null);
        assert_eq!(
            json["tail"],
            serde_json::json!({"of": "max", "value": 19.0})
        );

        let twenty = Distribution::of((1..=P95_MIN_VALUES).map(|v| v as f64));
        assert_eq!(twenty.p95, Some(19.0));
        assert_eq!(twenty.tail_value(), Some(19.0));
        assert_eq!(twenty.tail_name(), "p95");
        assert_eq!(twenty.p95_cell(|v| format!("{v:.1}")), "19.0");
    }

    /// A file an older helper wrote holds the maximum of a few values as their p95: it
    /// is read as the max of n it is.
    #[test]
    fn a_p95_of_few_values_read_from_an_old_file_is_read_as_the_max() {
        let old: Distribution =
            serde_json::from_str(r#"{"count": 3, "p50": 2.0, "p95": 3.0, "max": 3.0}"#).unwrap();
        assert_eq!((old.p95, old.tail_name()), (None, "max of 3".to_owned()));
        let enough: Distribution = serde_json::from_str(
            r#"{"count": 40, "p50": 2.0, "p95": 3.0, "max": 4.0, "tail": {"of": "max", "value": 4.0}}"#,
        )
        .unwrap();
        assert_eq!(enough.tail_value(), Some(3.0));
    }

    #[test]
    fn silent_after_two_intervals() {
        assert!(!is_silent(Some(3600), None, 1800));
        assert!(is_silent(Some(3601), None, 1800));
        assert!(!is_silent(None, None, 1800));
        assert!(!is_silent(None, Some(3600), 1800));
        assert!(is_silent(None, Some(3601), 1800));
        // A recent report wins over a long life.
        assert!(!is_silent(Some(10), Some(99_999), 1800));
    }
}
