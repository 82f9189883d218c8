//! How much a level's figures moved between its repeated windows (`--repeat`): one
//! window is one draw, and a figure that moves a lot between draws is not known to
//! better than that.

use crate::protocol::ramp::Spread;
use crate::report::stats::nearest_rank;

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
