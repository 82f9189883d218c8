//! The time axis of the page's charts: ticks at round clock times in UTC, so a point can
//! be matched with the server's logs and the clones' reports, which carry the same
//! clock.

use crate::sys::time::rfc3339_utc;

/// The steps between ticks, shortest first: each a whole number of times into the next
/// larger unit, so ticks fall on round clock times (10:30, 10:45, never 10:37).
pub const STEPS: [u64; 17] = [
    1,
    2,
    5,
    10,
    30,
    60,
    2 * 60,
    5 * 60,
    10 * 60,
    15 * 60,
    30 * 60,
    3600,
    2 * 3600,
    3 * 3600,
    6 * 3600,
    12 * 3600,
    86_400,
];

/// The most ticks an axis has; the step is the shortest that keeps within it.
pub const MAX_TICKS: usize = 8;

/// One tick: its time (seconds since the epoch), the clock time it shows and, on the
/// first tick and wherever the day changes, the date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tick {
    pub t: u64,
    pub clock: String,
    pub date: Option<String>,
}

/// The shortest step of [`STEPS`] (or, past a day, of whole days) with at most
/// [`MAX_TICKS`] ticks between `times.0` and `times.1`, both included.
pub fn step(times: (u64, u64)) -> u64 {
    let ticks = |step: u64| (times.1 / step + 1).saturating_sub(times.0.div_ceil(step)) as usize;
    STEPS
        .into_iter()
        .find(|&s| ticks(s) <= MAX_TICKS)
        .unwrap_or_else(|| {
            (1..)
                .map(|days| days * 86_400)
                .find(|&s| ticks(s) <= MAX_TICKS)
                .expect("a step of the whole span has at most two ticks")
        })
}

/// The ticks between `times.0` and `times.1` (seconds since the epoch, both included),
/// at multiples of [`step`]: `HH:MM`, or `HH:MM:SS` for steps under a minute.
pub fn ticks(times: (u64, u64)) -> Vec<Tick> {
    let (first, last) = (times.0, times.1.max(times.0));
    let step = step((first, last));
    let mut previous_day = None;
    (first.div_ceil(step)..=last / step)
        .map(|n| {
            let t = n * step;
            // YYYY-MM-DDTHH:MM:SSZ
            let stamp = rfc3339_utc(t);
            let (day, clock) = (&stamp[..10], &stamp[11..19]);
            let clock = if step < 60 { clock } else { &clock[..5] };
            let date = (previous_day != Some(t / 86_400)).then(|| day.to_owned());
            previous_day = Some(t / 86_400);
            Tick {
                t,
                clock: clock.to_owned(),
                date,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-20T03:30:00Z.
    const MORNING: u64 = 1_795_145_400;
    /// 2026-11-20T00:00:00Z.
    const MIDNIGHT: u64 = MORNING - 3 * 3600 - 1800;

    fn clocks(ticks: &[Tick]) -> Vec<&str> {
        ticks.iter().map(|t| t.clock.as_str()).collect()
    }

    fn dates(ticks: &[Tick]) -> Vec<Option<&str>> {
        ticks.iter().map(|t| t.date.as_deref()).collect()
    }

    #[test]
    fn a_few_minutes_tick_every_thirty_seconds_with_seconds_shown() {
        // 3 min 10 s from 03:30:05: ten-second ticks would be 19.
        let span = (MORNING + 5, MORNING + 5 + 190);
        assert_eq!(step(span), 30);
        let ticks = ticks(span);
        assert_eq!(
            clocks(&ticks),
            ["03:30:30", "03:31:00", "03:31:30", "03:32:00", "03:32:30", "03:33:00"]
        );
        assert_eq!(ticks[0].t, MORNING + 30);
        assert_eq!(
            dates(&ticks),
            [Some("2026-11-20"), None, None, None, None, None]
        );
    }

    #[test]
    fn an_hour_ticks_every_ten_minutes() {
        let span = (MORNING - 7, MORNING + 3600 - 7);
        assert_eq!(step(span), 600);
        assert_eq!(
            clocks(&ticks(span)),
            ["03:30", "03:40", "03:50", "04:00", "04:10", "04:20"]
        );
        // The same hour on round times: seven ticks, both ends included.
        assert_eq!(
            clocks(&ticks((MORNING, MORNING + 3600))),
            ["03:30", "03:40", "03:50", "04:00", "04:10", "04:20", "04:30"]
        );
    }

    #[test]
    fn a_day_ticks_every_three_or_six_hours_and_dates_each_midnight() {
        let span = (MORNING, MORNING + 86_400);
        assert_eq!(step(span), 3 * 3600);
        let ticks = ticks(span);
        assert_eq!(
            clocks(&ticks),
            ["06:00", "09:00", "12:00", "15:00", "18:00", "21:00", "00:00", "03:00"]
        );
        assert_eq!(
            dates(&ticks),
            [
                Some("2026-11-20"),
                None,
                None,
                None,
                None,
                None,
                Some("2026-11-21"),
                None
            ]
        );
        // From midnight to midnight, 3 h would make nine ticks.
        assert_eq!(step((MIDNIGHT, MIDNIGHT + 86_400)), 6 * 3600);
    }

    #[test]
    fn a_span_across_midnight_dates_the_first_tick_and_the_new_day() {
        let span = (MIDNIGHT - 40 * 60, MIDNIGHT + 20 * 60);
        assert_eq!(step(span), 10 * 60);
        let ticks = ticks(span);
        assert_eq!(
            clocks(&ticks),
            ["23:20", "23:30", "23:40", "23:50", "00:00", "00:10", "00:20"]
        );
        assert_eq!(
            dates(&ticks),
            [
                Some("2026-11-19"),
                None,
                None,
                None,
                Some("2026-11-20"),
                None,
                None
            ]
        );
    }

    #[test]
    fn every_span_has_between_two_and_eight_ticks() {
        for seconds in [
            1,
            7,
            9,
            45,
            100,
            190,
            599,
            3600,
            5 * 3600,
            86_400,
            30 * 86_400,
        ] {
            for start in [MORNING, MORNING + 13, MIDNIGHT - 1] {
                let n = ticks((start, start + seconds)).len();
                assert!(
                    (2..=MAX_TICKS).contains(&n),
                    "{seconds} s from {start}: {n} ticks"
                );
            }
        }
    }

    #[test]
    fn weeks_tick_on_whole_days() {
        let span = (MIDNIGHT, MIDNIGHT + 30 * 86_400);
        assert_eq!(step(span) % 86_400, 0);
        let ticks = ticks(span);
        assert!(ticks.iter().all(|t| t.clock == "00:00" && t.date.is_some()));
    }
}
