//! `clone start [--ramp-up SECONDS]`: the clones start in waves spread over the ramp-up,
//! so a large fleet does not boot all at once (hundreds of systemds starting together
//! put an IO and CPU spike on the host and a herd of first agent runs on the server).
//!
//! Inside a wave every start job is queued first and then all are waited for together,
//! under one deadline, with one `ListUnitsByPatterns` call per poll: starting 100 clones
//! is one wait of about the slowest clone's boot, not 100 waits one after the other.
//! A clone that fails does not stop the others; the verb answers with an error naming
//! every failed clone after it has tried them all.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{describe_named, find};
use crate::context::Context;
use crate::host::limits::{self as host_limits};
pub use crate::protocol::answers::ClonesStarted;
use crate::protocol::error::{Error, Result};
use crate::sys::clock::{Clock, SystemClock};
use crate::sys::names::validate_name;
use crate::sys::progress::Progress;
use crate::systemd::{JournalTail, SystemdError, STATE_POLL_INTERVAL};

/// About how far apart the waves of a ramp-up are.
pub const WAVE_INTERVAL_SECONDS: u64 = 5;

/// The longest ramp-up: a day. The helper sleeps through its ramp holding the shared
/// lock, so an unbounded one would hold every other verb's exclusive lock off for as long
/// as a caller asked.
pub const MAX_RAMP_UP_SECONDS: u64 = 86_400;

/// The waves: `min(N, max(1, ramp_up / 5))` of them, each of `ceil(N / waves)` clones,
/// and the offset (from the start) at which each begins.
pub fn plan_waves(clones: &[String], ramp_up_seconds: u64) -> Vec<(Duration, Vec<String>)> {
    if clones.is_empty() {
        return Vec::new();
    }
    let wanted = (ramp_up_seconds / WAVE_INTERVAL_SECONDS).max(1) as usize;
    let waves = wanted.min(clones.len());
    let size = clones.len().div_ceil(waves);
    let chunks: Vec<Vec<String>> = clones.chunks(size).map(<[String]>::to_vec).collect();
    let count = chunks.len() as u32;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            // Spread evenly over the ramp-up: the first wave at 0, none at its very end.
            let at = Duration::from_secs(ramp_up_seconds) * i as u32 / count;
            (at, chunk)
        })
        .collect()
}

/// `clone start`, reporting how many of the clones are active as they come up.
pub fn start(
    ctx: &Context,
    clones: &[String],
    ramp_up_seconds: u64,
    progress: &dyn Progress,
) -> Result<ClonesStarted> {
    start_paced(ctx, clones, ramp_up_seconds, &SystemClock::new(), progress)
}

pub fn start_paced(
    ctx: &Context,
    clones: &[String],
    ramp_up_seconds: u64,
    clock: &dyn Clock,
    progress: &dyn Progress,
) -> Result<ClonesStarted> {
    if ramp_up_seconds > MAX_RAMP_UP_SECONDS {
        return Err(Error::InvalidArgument {
            field: "ramp-up",
            value: ramp_up_seconds.to_string(),
            reason: format!("allowed: 0 to {MAX_RAMP_UP_SECONDS} seconds"),
        });
    }
    for clone in clones {
        validate_name("clone", "name", clone)?;
    }
    for clone in clones {
        find(&ctx.layout, clone)?;
    }
    let _lock = ctx.lock_shared()?;
    // Duplicates start once.
    let mut unique: Vec<String> = Vec::new();
    for clone in clones {
        if !unique.contains(clone) {
            unique.push(clone.clone());
        }
    }
    let host_limits = host_limits::ensure(&ctx.layout);
    let bus_limits = crate::host::bus::ensure(&ctx.layout, ctx.systemd);
    let waves = plan_waves(&unique, ramp_up_seconds);
    let mut failures: Vec<(String, Error)> = Vec::new();
    let mut started = Started {
        active: 0,
        of: unique.len(),
        progress,
    };
    started.add(0);
    for (at, wave) in &waves {
        let now = clock.elapsed();
        if *at > now {
            clock.sleep(*at - now);
        }
        failures.extend(start_wave(ctx, wave, clock, &mut started)?);
    }
    if !failures.is_empty() {
        return Err(Error::ClonesFailed {
            verb: "start",
            tried: unique.len(),
            failed: failures.iter().map(|(c, _)| c.clone()).collect(),
            errors: failures
                .iter()
                .map(|(clone, e)| {
                    let mut line = format!("{clone}: {e}");
                    for cause in e.causes() {
                        line.push('\n');
                        line.push_str(&cause);
                    }
                    line
                })
                .collect(),
        });
    }
    Ok(ClonesStarted {
        clones: describe_named(ctx, clones)?,
        waves: waves.into_iter().map(|(_, wave)| wave).collect(),
        ramp_up_seconds,
        host_limits,
        bus_limits: Some(bus_limits),
    })
}

/// Errors that are about the bus, not about one clone: no use going on.
fn is_bus_failure(error: &SystemdError) -> bool {
    matches!(
        error,
        SystemdError::Unavailable { .. } | SystemdError::Timeout { .. }
    )
}

/// How many of the clones asked are active so far, reported as each comes up.
struct Started<'p> {
    active: usize,
    of: usize,
    progress: &'p dyn Progress,
}

impl Started<'_> {
    fn add(&mut self, clones: usize) {
        self.active += clones;
        self.progress.count(self.active, self.of);
    }
}

/// Queues every start of the wave, then waits for all of them together. Returns the
/// clones that failed; an unreachable bus fails the whole verb.
fn start_wave(
    ctx: &Context,
    wave: &[String],
    clock: &dyn Clock,
    started: &mut Started,
) -> Result<Vec<(String, Error)>> {
    let mut failures = Vec::new();
    let mut pending: Vec<(String, String)> = Vec::new();
    for clone in wave {
        let unit = ctx.layout.service_unit_name(clone);
        match super::lifecycle::start_unit(ctx, &unit) {
            Ok(()) => pending.push((clone.clone(), unit)),
            Err(Error::Systemd(e)) if is_bus_failure(&e) => return Err(Error::Systemd(e)),
            Err(e) => failures.push((clone.clone(), e)),
        }
    }
    let deadline = clock.elapsed() + ctx.wait_timeout;
    let pattern = vec![ctx.layout.service_unit_name("*")];
    let mut last: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let states = ctx.systemd.unit_states(&pattern)?;
        let mut active = 0;
        pending.retain(|(clone, unit)| {
            let state = states.get(unit).map_or("inactive", String::as_str);
            match state {
                "active" => {
                    active += 1;
                    false
                }
                "failed" => {
                    let lines = ctx.systemd.recent_log(unit);
                    failures.push((
                        clone.clone(),
                        SystemdError::UnitFailed {
                            unit: unit.clone(),
                            journal: (!lines.is_empty()).then(|| JournalTail {
                                unit: unit.clone(),
                                lines,
                            }),
                        }
                        .into(),
                    ));
                    false
                }
                other => {
                    last.insert(unit.clone(), other.to_owned());
                    true
                }
            }
        });
        if active > 0 {
            started.add(active);
        }
        if pending.is_empty() {
            break;
        }
        if clock.elapsed() >= deadline {
            for (clone, unit) in pending.drain(..) {
                let state = last.get(&unit).cloned().unwrap_or_default();
                failures.push((
                    clone,
                    SystemdError::WaitTimeout {
                        unit,
                        wanted: "active",
                        last: state,
                        seconds: ctx.wait_timeout.as_secs(),
                    }
                    .into(),
                ));
            }
            break;
        }
        clock.sleep(STATE_POLL_INTERVAL);
    }
    // Report failures in the order the clones were given.
    failures.sort_by_key(|(clone, _)| wave.iter().position(|c| c == clone));
    Ok(failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::progress::{Quiet, Recorded};
    use crate::sys::test_clock::clock;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("c{i}")).collect()
    }

    #[test]
    fn waves_are_spread_over_the_ramp_up() {
        let plan = plan_waves(&names(10), 20);
        // 20 s: 4 waves of ceil(10 / 4) = 3, at 0, 5, 10, 15 s.
        assert_eq!(
            plan.iter()
                .map(|(at, w)| (at.as_secs(), w.len()))
                .collect::<Vec<_>>(),
            [(0, 3), (5, 3), (10, 3), (15, 1)]
        );
        // No ramp-up: one wave.
        assert_eq!(plan_waves(&names(100), 0).len(), 1);
        // Fewer clones than waves: one clone a wave.
        let plan = plan_waves(&names(2), 60);
        assert_eq!(
            plan.iter()
                .map(|(at, w)| (at.as_secs(), w.clone()))
                .collect::<Vec<_>>(),
            [(0, vec!["c1".to_owned()]), (30, vec!["c2".to_owned()])]
        );
        // 7 clones over 12 s: 2 waves (every ~5 s), 4 then 3.
        let plan = plan_waves(&names(7), 12);
        assert_eq!(
            plan.iter()
                .map(|(at, w)| (at.as_secs(), w.len()))
                .collect::<Vec<_>>(),
            [(0, 4), (6, 3)]
        );
        assert!(plan_waves(&[], 30).is_empty());
    }

    pub(crate) fn fixture_with(clones: &[&str]) -> crate::clone::tests::Fixture {
        let f = crate::clone::tests::Fixture::new();
        for clone in clones {
            f.create(clone, false);
        }
        f
    }

    #[test]
    fn a_wave_queues_every_start_before_waiting() {
        let f = fixture_with(&["c1", "c2", "c3", "c4", "c5"]);
        let before = f.systemd.calls().len();
        let pace = clock(None);
        let progress = Recorded::default();
        let started = start_paced(&f.ctx(), &names(5), 10, &pace, &progress).unwrap();
        let calls: Vec<String> = f.systemd.calls()[before..]
            .iter()
            .filter(|c| !c.starts_with("reset_failed_unit"))
            .cloned()
            .collect();
        let wait = "unit_states puppet-clone-army@*.service";
        let start = |c: &str| format!("start_unit puppet-clone-army@{c}.service");
        // Two waves (10 s / 5 s) of 3 and 2: all starts of a wave, then one wait.
        assert_eq!(
            &calls[..5],
            [
                start("c1"),
                start("c2"),
                start("c3"),
                wait.into(),
                start("c4")
            ]
        );
        assert_eq!(calls[5], start("c5"));
        assert_eq!(calls[6], wait);
        // The second wave began 5 s in: one sleep until then, no polling sleeps
        // (the fake's units are active at once).
        assert_eq!(pace.sleeps(), [Duration::from_secs(5)]);
        assert_eq!(started.waves.len(), 2);
        assert_eq!(started.waves[1], ["c4", "c5"]);
        assert_eq!(started.ramp_up_seconds, 10);
        assert_eq!(started.clones.len(), 5);
        // Shown from the start, then as each wave comes up.
        assert_eq!(progress.reports(), ["count 0/5", "count 3/5", "count 5/5"]);
    }

    #[test]
    fn a_ramp_up_past_a_day_is_refused_before_any_clone_starts() {
        let f = fixture_with(&["c1", "c2"]);
        let before = f.systemd.calls().len();
        let pace = clock(None);
        let error =
            start_paced(&f.ctx(), &names(2), MAX_RAMP_UP_SECONDS + 1, &pace, &Quiet).unwrap_err();
        assert_eq!(error.field(), Some("ramp-up"));
        assert!(error.to_string().contains("allowed: 0 to 86400"), "{error}");
        assert_eq!(f.systemd.calls().len(), before);
        assert!(pace.sleeps().is_empty());
        // The bound itself is a ramp like any other.
        start_paced(&f.ctx(), &names(2), MAX_RAMP_UP_SECONDS, &pace, &Quiet).unwrap();
    }

    #[test]
    fn a_failed_clone_is_reported_after_the_others_were_tried() {
        let f = fixture_with(&["c1", "c2", "c3"]);
        f.systemd.fail_starts_of("puppet-clone-army@c2.service");
        let pace = clock(None);
        let progress = Recorded::default();
        let error = start_paced(&f.ctx(), &names(3), 0, &pace, &progress).unwrap_err();
        assert_eq!(error.kind(), "systemd");
        assert_eq!(error.exit_code(), 1);
        let message = error.to_string();
        assert!(
            message.contains("c2") && !message.contains("c1,"),
            "{message}"
        );
        let causes = error.causes();
        assert_eq!(causes.len(), 1, "{causes:?}");
        assert!(causes[0].starts_with("c2: unit puppet-clone-army@c2.service failed"));
        assert!(causes[0].contains("exit-code"), "{}", causes[0]);
        // c3 was started all the same; the count is of the clones that are active.
        assert_eq!(progress.reports(), ["count 0/3", "count 2/3"]);
        assert_eq!(
            f.systemd.active_state_of("puppet-clone-army@c3.service"),
            "active"
        );
    }

    #[test]
    fn the_wait_is_bounded_for_the_whole_wave() {
        let f = fixture_with(&["c1", "c2"]);
        // c1 never comes up: it stays `activating` whatever is done to it.
        struct Stuck<'a>(&'a crate::systemd::RecordingSystemd);
        impl crate::systemd::Systemd for Stuck<'_> {
            fn start_unit(&self, unit: &str) -> std::result::Result<(), SystemdError> {
                self.0.start_unit(unit)?;
                if unit.contains("c1") {
                    self.0.set_state(unit, "activating");
                }
                Ok(())
            }
            fn reset_failed_unit(&self, unit: &str) -> std::result::Result<(), SystemdError> {
                self.0.reset_failed_unit(unit)
            }
            fn stop_unit(&self, unit: &str) -> std::result::Result<(), SystemdError> {
                self.0.stop_unit(unit)
            }
            fn daemon_reload(&self) -> std::result::Result<(), SystemdError> {
                self.0.daemon_reload()
            }
            fn reload_unit(&self, unit: &str) -> std::result::Result<(), SystemdError> {
                self.0.reload_unit(unit)
            }
            fn unit_states(
                &self,
                patterns: &[String],
            ) -> std::result::Result<BTreeMap<String, String>, SystemdError> {
                self.0.unit_states(patterns)
            }
            fn active_state(&self, unit: &str) -> std::result::Result<String, SystemdError> {
                self.0.active_state(unit)
            }
            fn recent_log(&self, unit: &str) -> Vec<String> {
                self.0.recent_log(unit)
            }
        }
        let stuck = Stuck(&f.systemd);
        let mut ctx = f.ctx();
        ctx.systemd = &stuck;
        ctx.wait_timeout = Duration::from_secs(120);
        let pace = clock(None);
        let error = start_paced(&ctx, &names(2), 0, &pace, &Quiet).unwrap_err();
        assert!(error.to_string().contains("c1"), "{error}");
        assert!(error.causes()[0].contains("did not become active within 120 s"));
        // One deadline, polled: about 120 s of simulated time, not per clone.
        let slept: Duration = pace.sleeps().iter().sum();
        assert!(slept >= Duration::from_secs(120) && slept < Duration::from_secs(121));
    }

    #[test]
    fn an_unreachable_bus_fails_the_verb_at_once() {
        let f = fixture_with(&["c1"]);
        f.systemd.make_unreachable();
        let pace = clock(None);
        let error = start_paced(&f.ctx(), &names(1), 0, &pace, &Quiet).unwrap_err();
        assert_eq!(error.kind(), "systemd");
        assert!(error.to_string().contains("/nonexistent"), "{error}");
    }
}
