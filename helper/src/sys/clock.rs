//! The one clock the verbs read and sleep on: the system's in the binary, one the unit
//! tests drive (`sys::test_clock`), so that a ramp of a day, a recording of an hour or a
//! start paced over its ramp-up is tested without waiting.

use std::time::{Duration, Instant};

/// Wall time, time elapsed and sleeping.
pub trait Clock {
    /// Seconds since the Unix epoch (0 for a system clock set before it).
    fn now(&self) -> u64;
    /// Time since the clock was made; never goes back, whatever the wall clock does.
    fn elapsed(&self) -> Duration;
    fn sleep(&self, duration: Duration);
}

/// The system's clock.
pub struct SystemClock {
    made: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        SystemClock {
            made: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }

    fn elapsed(&self) -> Duration {
        self.made.elapsed()
    }

    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration)
    }
}
