//! The burst's summary figures.

use crate::protocol::answers::P95_MIN_VALUES;

/// The nearest-rank p95 of `values` where there are at least [`P95_MIN_VALUES`] of them:
/// below that it would be their maximum, which the summary gives as such.
pub fn p95(values: &[f64]) -> Option<f64> {
    if values.len() < P95_MIN_VALUES {
        return None;
    }
    percentile(values, 95.0)
}

/// The `p`th percentile (0 < p <= 100) of `values` by the nearest-rank method: the
/// smallest value at least `p` % of the values are less than or equal to. `None` for no
/// values. Nearest-rank always answers one of the measured values, never an interpolation.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Seconds rounded to milliseconds, as the protocol reports them.
pub fn seconds(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[3.0], 95.0), Some(3.0));
        let values: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(percentile(&values, 50.0), Some(10.0));
        assert_eq!(percentile(&values, 95.0), Some(19.0));
        assert_eq!(percentile(&values, 100.0), Some(20.0));
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0), Some(2.0));
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 95.0), Some(4.0));
    }

    #[test]
    fn a_burst_over_fewer_than_twenty_clones_has_no_p95() {
        let nineteen: Vec<f64> = (1..=19).map(f64::from).collect();
        assert_eq!(p95(&nineteen), None);
        let twenty: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(p95(&twenty), Some(19.0));
    }

    #[test]
    fn seconds_are_rounded_to_milliseconds() {
        assert_eq!(seconds(std::time::Duration::from_micros(1_234_567)), 1.235);
    }
}
