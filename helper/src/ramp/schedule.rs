//! When a ramp's steps begin and how long their windows hold.
//!
//! A window holds long enough for its clones to finish [`P95_MIN_VALUES`] runs over the
//! step's repeats, so that the step has a p95 and not a max passed off as one; no longer
//! than `--max-hold`, and when that is too short the step says why.
//!
//! Steps start whole run intervals apart ([`super::step_period`]), so that the clones'
//! phases stay aligned: a step whose windows were made longer is followed by the next
//! one its settle and windows later, rounded up to whole intervals. The seconds up to
//! that next interval would pass unsampled, so a lengthened window holds on through
//! them (up to `--max-hold`): more runs for the p95 at no cost to the ramp's length,
//! and with the default settle of one interval and one window, a window of whole
//! intervals, in which every clone's runs count equally often.
//!
//! With `--start-at`, steps are keyed to the wall clock: step k begins at
//! `start_at + (k − 1) × step period`, so load hosts started together step together,
//! each with its own clones. Their windows are then the same length on
//! every host (the hold as given: a host does not know the others' clones, and the
//! merged step reaches its p95 over all of them), and the ramp is coarse only
//! (bisection would need the hosts to agree on each level they try).

use super::step_period;
use crate::protocol::answers::P95_MIN_VALUES;
use crate::protocol::error::{Error, Result};
use crate::sys::time::{parse_rfc3339, rfc3339_utc};

/// A window holds at most this many run intervals unless `--max-hold` says otherwise:
/// enough for a step of five clones to finish a p95's runs in one window.
pub const DEFAULT_MAX_HOLD_INTERVALS: u64 = 4;

/// The latest a `--start-at` may be ahead of now: load hosts started together start
/// within minutes of each other, and a day ahead is a typing mistake.
pub const MAX_START_AHEAD: u64 = 86_400;

/// The longest a window holds when `--max-hold` is not given: the hold asked, or
/// [`DEFAULT_MAX_HOLD_INTERVALS`] run intervals if that is longer.
pub fn default_max_hold(hold: u64, interval: u64) -> u64 {
    hold.max(interval.saturating_mul(DEFAULT_MAX_HOLD_INTERVALS))
}

/// How long a step's windows hold, and why no longer when its runs stay short of a p95.
#[derive(Debug, Clone, PartialEq)]
pub struct Hold {
    pub seconds: u64,
    pub note: Option<String>,
}

/// What a window's hold is computed from.
#[derive(Debug, Clone, Copy)]
pub struct HoldRule {
    /// Seconds a step settles before its first window: a lengthened window ends where
    /// the step period does.
    pub settle: u64,
    /// The hold asked (`--hold`), the least a window holds.
    pub hold: u64,
    /// The most a window holds (`--max-hold`).
    pub max_hold: u64,
    /// Seconds between samples: a longer hold is a whole number of them.
    pub every: u64,
    pub interval: u64,
    pub repeats: usize,
    /// Whether the hold may grow (not when steps are keyed to `--start-at`).
    pub extend: bool,
}

impl HoldRule {
    /// The hold for a step that runs `clones` clones: long enough for them, each running
    /// once an interval, to finish [`P95_MIN_VALUES`] runs over the step's windows.
    pub fn hold_for(&self, clones: usize) -> Hold {
        let runs_wanted = P95_MIN_VALUES as u64;
        let per_window = (clones as u64).saturating_mul(self.repeats as u64);
        let needed = if per_window == 0 {
            u64::MAX
        } else {
            let seconds = (runs_wanted * self.interval).div_ceil(per_window);
            seconds.div_ceil(self.every).saturating_mul(self.every)
        };
        if needed <= self.hold {
            return Hold {
                seconds: self.hold,
                note: None,
            };
        }
        let why = |cap: &str, seconds: u64| {
            let need = if needed == u64::MAX {
                "no clone runs".to_owned()
            } else {
                format!("{needed} s")
            };
            format!(
                "{runs_wanted} runs of {clones} clones at interval {} s over {} window{} need {need} a window; {cap} is {seconds} s",
                self.interval,
                self.repeats,
                if self.repeats == 1 { "" } else { "s" }
            )
        };
        if !self.extend {
            return Hold {
                seconds: self.hold,
                note: Some(why("the hold of steps keyed to --start-at", self.hold)),
            };
        }
        if needed <= self.max_hold {
            // Held on to the step's end: the next step starts on a whole interval, and
            // the seconds until then would pass unsampled.
            let repeats = (self.repeats as u64).max(1);
            let period = step_period(self.settle, needed.saturating_mul(repeats), self.interval);
            let filled = period.saturating_sub(self.settle) / repeats / self.every * self.every;
            return Hold {
                seconds: filled.min(self.max_hold).max(needed),
                note: None,
            };
        }
        Hold {
            seconds: self.max_hold,
            note: Some(why("--max-hold", self.max_hold)),
        }
    }
}

/// `--start-at`: an RFC 3339 time (`2026-11-26T17:00:00Z`) or seconds since the epoch.
pub fn parse_start_at(text: &str) -> Result<u64> {
    let parsed = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok()
    } else {
        parse_rfc3339(text)
    };
    parsed.ok_or_else(|| Error::InvalidArgument {
        field: "start-at",
        value: text.to_owned(),
        reason: "an RFC 3339 time (2026-11-26T17:00:00Z) or seconds since the epoch".into(),
    })
}

/// A start time the ramp can keep: not past (a host that starts late would step out of
/// time with the others), and at most [`MAX_START_AHEAD`] ahead of `now`.
pub fn check_start_at(start_at: u64, now: u64) -> Result<()> {
    if start_at < now || start_at - now > MAX_START_AHEAD {
        return Err(Error::InvalidArgument {
            field: "start-at",
            value: rfc3339_utc(start_at),
            reason: format!(
                "from now ({}) up to {MAX_START_AHEAD} s ahead: every load host must start before the first step",
                rfc3339_utc(now)
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(hold: u64, max_hold: u64, repeats: usize, extend: bool) -> HoldRule {
        HoldRule {
            settle: 120,
            hold,
            max_hold,
            every: 10,
            interval: 120,
            repeats,
            extend,
        }
    }

    #[test]
    fn a_window_holds_until_its_clones_have_run_enough_for_a_p95() {
        let r = rule(120, 480, 1, true);
        // 20 clones run 20 times an interval: the hold asked is enough.
        assert_eq!(
            r.hold_for(20),
            Hold {
                seconds: 120,
                note: None
            }
        );
        // 7 clones: 20 runs take 343 s, 350 in whole samples; with the settle that is
        // 470 s, and the next step starts 480 s after this one: the window holds 360.
        assert_eq!(r.hold_for(7).seconds, 360);
        // Two windows each half as long: 2 × 180 after the settle are 480 s already.
        assert_eq!(rule(120, 480, 2, true).hold_for(7).seconds, 180);
    }

    /// The steps start whole intervals apart; a window lengthened for a p95 holds on to
    /// where its step's period ends (in whole samples, up to `--max-hold`), and never
    /// makes the period longer than the runs it needs do.
    #[test]
    fn a_lengthened_window_holds_on_to_the_end_of_its_step_period() {
        for settle in [0, 30, 120, 200] {
            for repeats in 1..=3 {
                for clones in 1..=40 {
                    let r = HoldRule {
                        settle,
                        max_hold: 100_000,
                        ..rule(120, 480, repeats, true)
                    };
                    let hold = r.hold_for(clones).seconds;
                    let n = repeats as u64;
                    let needed = (20 * 120u64).div_ceil(clones as u64 * n).div_ceil(10) * 10;
                    if needed <= 120 {
                        assert_eq!(hold, 120, "the hold asked is kept");
                        continue;
                    }
                    let period = step_period(settle, needed * n, 120);
                    let case = format!("settle {settle}, {repeats} windows, {clones} clones");
                    assert!(hold >= needed, "{case}: {hold} < {needed}");
                    assert_eq!(hold % 10, 0, "{case}");
                    assert_eq!(step_period(settle, hold * n, 120), period, "{case}");
                    // Short of the period by less than one sample a window.
                    assert!(settle + hold * n + 10 * n > period, "{case}: {hold}");
                }
            }
        }
        // 7 clones after a settle of 30 s: 350 s needed, the step ends at 480, the
        // window holds 450 s, or --max-hold.
        let r = HoldRule {
            settle: 30,
            ..rule(120, 480, 1, true)
        };
        assert_eq!(r.hold_for(7).seconds, 450);
        let capped = HoldRule { max_hold: 400, ..r };
        assert_eq!(
            capped.hold_for(7),
            Hold {
                seconds: 400,
                note: None
            }
        );
    }

    #[test]
    fn a_hold_that_cannot_reach_a_p95_says_why() {
        let short = rule(120, 480, 1, true).hold_for(2);
        assert_eq!(short.seconds, 480);
        assert_eq!(
            short.note.as_deref(),
            Some("20 runs of 2 clones at interval 120 s over 1 window need 1200 s a window; --max-hold is 480 s")
        );
        let keyed = rule(120, 480, 1, false).hold_for(10);
        assert_eq!(keyed.seconds, 120);
        assert!(keyed
            .note
            .unwrap()
            .ends_with("the hold of steps keyed to --start-at is 120 s"));
        assert!(rule(120, 480, 1, true)
            .hold_for(0)
            .note
            .unwrap()
            .contains("no clone runs"));
    }

    #[test]
    fn the_longest_hold_is_four_intervals_unless_the_hold_asked_is_longer() {
        assert_eq!(default_max_hold(120, 120), 480);
        assert_eq!(default_max_hold(1000, 120), 1000);
    }

    #[test]
    fn a_start_time_is_a_time_ahead_and_not_far() {
        assert_eq!(parse_start_at("1795712400").unwrap(), 1_795_712_400);
        assert_eq!(
            parse_start_at("2026-11-26T17:00:00Z").unwrap(),
            1_795_712_400
        );
        for bad in ["", "soon", "-5", "2026-11-26"] {
            let e = parse_start_at(bad).unwrap_err();
            assert!(e.to_string().starts_with("start-at"), "{e}");
        }
        assert!(check_start_at(1000, 1000).is_ok());
        assert!(check_start_at(999, 1000).is_err());
        assert!(check_start_at(1000 + MAX_START_AHEAD + 1, 1000).is_err());
    }
}
