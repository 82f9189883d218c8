//! Refining the knee: the coarse steps bracket it between the last level within bounds
//! and the first past them; bisection then tries the level midway until the bracket is
//! within the resolution, so the verdict can state the knee with its uncertainty.

use std::fmt;
use std::str::FromStr;

use crate::protocol::ramp::StepResult;

/// How narrow the bracket around the knee must get: a number of clones, or a share of
/// the level past the bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resolution {
    Clones(usize),
    Percent(f64),
}

/// Within a tenth of the level: the knee stated to about ±5 %.
pub const DEFAULT_RESOLUTION: Resolution = Resolution::Percent(10.0);

impl Resolution {
    /// The widest bracket, in clones, that is narrow enough below `level` (at least 1:
    /// a bracket of one clone cannot be split).
    pub fn clones_at(&self, level: usize) -> usize {
        match *self {
            Resolution::Clones(n) => n.max(1),
            Resolution::Percent(p) => ((p / 100.0 * level as f64).floor() as usize).max(1),
        }
    }
}

impl fmt::Display for Resolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resolution::Clones(n) => write!(f, "{n}"),
            Resolution::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl FromStr for Resolution {
    type Err = String;

    /// `5` (clones, at least 1) or `10%` (above 0, below 100).
    fn from_str(text: &str) -> Result<Self, String> {
        let allowed = "clones (1 or more, e.g. 5) or a share of the level (above 0 % and below 100 %, e.g. 10%)";
        if let Some(percent) = text.strip_suffix('%') {
            return match percent.trim().parse::<f64>() {
                Ok(p) if p.is_finite() && p > 0.0 && p < 100.0 => Ok(Resolution::Percent(p)),
                _ => Err(allowed.to_owned()),
            };
        }
        match text.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Resolution::Clones(n)),
            _ => Err(allowed.to_owned()),
        }
    }
}

/// The steps that bracket the knee: the first past the bounds (fewest clones, then the
/// earliest), and the last within them below it (most clones, then the latest). A ramp
/// steps up and bisects within the bracket, so no step within bounds lies above the
/// one past them unless the load's effect was not the same twice; the bracket is then the
/// cautious one.
pub fn bracket(steps: &[StepResult]) -> (Option<&StepResult>, Option<&StepResult>) {
    let bad = steps
        .iter()
        .filter(|s| !s.within_bounds)
        .min_by_key(|s| (s.clones, s.step));
    let below = bad.map_or(usize::MAX, |b| b.clones);
    let good = steps
        .iter()
        .filter(|s| s.within_bounds && s.clones < below)
        .max_by_key(|s| (s.clones, s.step));
    (good, bad)
}

/// The level to try between `good` clones (within bounds, or the floor) and `bad` (past
/// them); `None` once the bracket is within `resolution`.
pub fn next_level(good: usize, bad: usize, resolution: Resolution) -> Option<usize> {
    let width = bad.checked_sub(good)?;
    (width > resolution.clones_at(bad)).then(|| good + width / 2)
}

/// The most levels bisection tries in a bracket `width` clones wide: each try halves the
/// bracket ([`next_level`]), and at worst leaves its wider half, down to the narrowest
/// bracket `resolution` asks for at any level (a share of the level is never less than
/// one clone).
pub fn most_levels(width: usize, resolution: Resolution) -> u64 {
    let narrowest = Resolution::Clones(resolution.clones_at(0));
    let (mut good, bad, mut levels) = (0, width, 0);
    while let Some(level) = next_level(good, bad, narrowest) {
        good = level;
        levels += 1;
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolution_is_clones_or_a_share_of_the_level() {
        assert_eq!("5".parse(), Ok(Resolution::Clones(5)));
        assert_eq!("10%".parse(), Ok(Resolution::Percent(10.0)));
        for bad in ["0", "-1", "0%", "100%", "x", "nan%", ""] {
            assert!(bad.parse::<Resolution>().is_err(), "{bad}");
        }
        assert_eq!(Resolution::Percent(10.0).clones_at(150), 15);
        // Never below one clone.
        assert_eq!(Resolution::Percent(10.0).clones_at(5), 1);
        assert_eq!(DEFAULT_RESOLUTION.to_string(), "10%");
    }

    #[test]
    fn bisection_halves_the_bracket_until_it_is_within_the_resolution() {
        let one = Resolution::Clones(1);
        assert_eq!(next_level(20, 30, one), Some(25));
        assert_eq!(next_level(25, 30, one), Some(27));
        assert_eq!(next_level(27, 28, one), None);
        // 10 % of 30 is 3 clones.
        assert_eq!(next_level(20, 30, DEFAULT_RESOLUTION), Some(25));
        assert_eq!(next_level(27, 30, DEFAULT_RESOLUTION), None);
        assert_eq!(next_level(30, 20, one), None);
    }

    #[test]
    fn bisection_tries_at_most_the_levels_that_halve_a_step_to_the_resolution() {
        let one = Resolution::Clones(1);
        // 25 clones: 13, 7, 4, 2, 1 wide after each try.
        assert_eq!(most_levels(25, one), 5);
        assert_eq!(most_levels(8, one), 3);
        assert_eq!(most_levels(1, one), 0);
        assert_eq!(most_levels(0, one), 0);
        assert_eq!(most_levels(25, Resolution::Clones(5)), 3);
        // A share of the level: at worst one clone, at a level near the floor.
        assert_eq!(most_levels(25, DEFAULT_RESOLUTION), 5);
        assert_eq!(most_levels(usize::MAX, one), 64);
    }
}
