//! The longest a ramp can take (`ramp longest`): the time limit its caller gives a `ramp
//! run`, so that only a ramp that hangs meets it, read from the rules the steps keep.
//!
//! A ramp takes at most ⌈`--max-clones` / `--step`⌉ coarse steps: each starts up to
//! `--step` more clones, of at most `--max-clones`. After the first step past a bound,
//! bisection tries at most [`bisect::most_levels`] levels in a bracket no wider than that
//! step added. A coarse step follows one within the bounds and settles `--settle`; a
//! level bisection tries may follow one past them and settle an interval more
//! ([`settle_after`]). Every step holds each of its windows at most `--max-hold`
//! ([`super::schedule::HoldRule`]), and the next one starts a step period later
//! ([`step_period`]). A step may also start late by as long as one ordinary call of the
//! helper takes at most (`late_by`: its clones' start, the last sample's requests of
//! the step before), and the ramp's beginning and its answer take one more.
//!
//! The bound is reached when the coarse steps stay within the bounds up to the last,
//! every level bisection tries is past them and the step is a power of two clones. It
//! holds while the clones the ramp starts and stops are the only ones that come and go:
//! bisection narrows the bracket by the clones each level ran.
//!
//! A ramp whose steps are not bounded has no longest: without `--max-clones` it steps up
//! to every stopped clone on the host, and with `--start-at` its first step waits for
//! the wall clock.

use super::{bisect, settle_after, step_period, validate, RampRequest};
use crate::protocol::error::Result;
use crate::protocol::ramp::RampLongest;

/// The most steps `request` takes and the longest it can take, each step late by up to
/// `late_by` seconds; refused as `ramp run` refuses it before it starts anything.
pub fn longest(request: &RampRequest, late_by: u64) -> Result<RampLongest> {
    validate(request)?;
    let (Some(max_clones), None) = (request.max_clones, request.start_at) else {
        return Ok(RampLongest::default());
    };
    let interval = request.report.interval;
    // No window holds longer than the most a hold may grow to (`HoldRule::hold_for`).
    let windows = request.max_hold.saturating_mul(request.repeat as u64);
    let period = |past_bounds| {
        step_period(
            settle_after(past_bounds, request.settle, interval),
            windows,
            interval,
        )
    };
    let coarse = max_clones.div_ceil(request.step) as u64;
    let levels = bisect::most_levels(request.step.min(max_clones), request.resolution);
    let steps = coarse.saturating_add(levels);
    let seconds = coarse
        .saturating_mul(period(false))
        .saturating_add(levels.saturating_mul(period(true)))
        .saturating_add(steps.saturating_add(1).saturating_mul(late_by));
    Ok(RampLongest {
        steps: Some(steps),
        seconds: Some(seconds),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ramp::Bounds;
    use crate::report::ReportRequest;

    fn request(max_clones: Option<usize>) -> RampRequest {
        RampRequest {
            output: "ramp.json".into(),
            timeline: None,
            label: None,
            step: 25,
            settle: 1800,
            hold: 1800,
            every: 10,
            max_clones,
            spread: 0,
            repeat: 1,
            max_hold: 4 * 1800,
            resolution: bisect::DEFAULT_RESOLUTION,
            start_at: None,
            load_host_cpus: None,
            bounds: Bounds {
                p95_seconds: Some(30.0),
                ..Bounds::default()
            },
            report: ReportRequest {
                interval: 1800,
                server: None,
                ca_cert: None,
                puppetdb: None,
                client: None,
            },
        }
    }

    #[test]
    fn a_ramp_up_to_its_most_clones_is_its_steps_at_their_longest() {
        // 4 coarse steps of 25 clones, each settling 1800 s and holding at most 7200:
        // 9000 s; 5 levels of bisection (a bracket of 25 halved to one clone), each
        // settling an interval more: 10800 s; each of the 9 late by 900 s, and 900 more.
        assert_eq!(
            longest(&request(Some(100)), 900).unwrap(),
            RampLongest {
                steps: Some(9),
                seconds: Some(4 * 9000 + 5 * 10_800 + 10 * 900)
            }
        );
        // Fewer clones than a step: one step of them, bisected in a bracket of 3.
        let few = longest(&request(Some(3)), 0).unwrap();
        assert_eq!(few.steps, Some(1 + 2));
    }

    #[test]
    fn a_ramp_whose_steps_are_not_bounded_has_no_longest() {
        assert_eq!(
            longest(&request(None), 900).unwrap(),
            RampLongest::default()
        );
        let keyed = RampRequest {
            start_at: Some(1_795_712_400),
            ..request(Some(100))
        };
        assert_eq!(longest(&keyed, 900).unwrap(), RampLongest::default());
    }

    #[test]
    fn a_request_the_ramp_refuses_is_refused() {
        let e = longest(
            &RampRequest {
                step: 0,
                ..request(Some(100))
            },
            900,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("step"), "{e}");
    }

    #[test]
    fn a_longest_past_what_a_number_holds_is_the_most_it_holds() {
        let huge = RampRequest {
            step: 1,
            max_clones: Some(usize::MAX),
            ..request(None)
        };
        assert_eq!(longest(&huge, u64::MAX).unwrap().seconds, Some(u64::MAX));
    }
}
