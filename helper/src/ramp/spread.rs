//! How much a level's figures moved between its repeated windows (`--repeat`): one
//! window is one draw, and a figure that moves a lot between draws is not known to
//! better than that.

use serde::{Deserialize, Serialize};

use crate::report::stats::nearest_rank;

/// The least, the middle (nearest-rank median) and the greatest of a figure over the
/// repeats that had it; all `null` when none had it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: Option<f64>,
    pub median: Option<f64>,
    pub max: Option<f64>,
}

impl Spread {
    pub fn of(values: impl IntoIterator<Item = Option<f64>>) -> Self {
        let mut sorted: Vec<f64> = values
            .into_iter()
            .flatten()
            .filter(|v| v.is_finite())
            .collect();
        sorted.sort_by(f64::total_cmp);
        Spread {
            min: sorted.first().copied(),
            median: nearest_rank(&sorted, 50),
            max: sorted.last().copied(),
        }
    }

    /// For people: `4.0/5.0/7.5` (min/median/max), `-` without a value.
    pub fn cell(&self, format: impl Fn(f64) -> String) -> String {
        match (self.min, self.median, self.max) {
            (Some(a), Some(m), Some(b)) => format!("{}/{}/{}", format(a), format(m), format(b)),
            _ => crate::sys::table::NONE.to_owned(),
        }
    }
}

/// The spread of a level's figures over its repeated windows, each window judged on its
/// own runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatSpread {
    /// The windows the level held.
    pub repeats: usize,
    pub runs_per_minute: Spread,
    pub throughput_percent: Spread,
    pub error_percent: Spread,
    /// The p50 of each window's run times, seconds.
    pub p50: Spread,
    /// The slow end of each window's run times: its p95 where it had enough runs, else
    /// its max (a window has fewer runs than the level).
    pub tail: Spread,
    pub jruby_wait_ms: Spread,
    pub host_cpu_busy: Spread,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_min_median_max_of_the_repeats_that_had_the_figure() {
        let s = Spread::of([Some(3.0), None, Some(1.0), Some(2.0), Some(f64::NAN)]);
        assert_eq!((s.min, s.median, s.max), (Some(1.0), Some(2.0), Some(3.0)));
        assert_eq!(s.cell(|v| format!("{v:.1}")), "1.0/2.0/3.0");
        assert_eq!(Spread::of([None]).cell(|v| v.to_string()), "-");
    }
}
