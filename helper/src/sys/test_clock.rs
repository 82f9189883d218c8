//! A clock the tests drive: it starts at 1000 s, a sleep moves it on and is recorded,
//! and work takes no time; it can set a stop flag once it passes a given second, as a
//! signal would.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::clock::Clock;

const START_MS: u64 = 1_000_000;

pub struct TestClock {
    now_ms: Cell<u64>,
    sleeps: RefCell<Vec<Duration>>,
    /// Sets `stop` once the clock passes this second.
    stop_after: Option<(u64, &'static AtomicBool)>,
}

impl TestClock {
    /// Every sleep, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.sleeps.borrow().clone()
    }
}

impl Clock for TestClock {
    fn now(&self) -> u64 {
        self.now_ms.get() / 1000
    }

    fn elapsed(&self) -> Duration {
        Duration::from_millis(self.now_ms.get() - START_MS)
    }

    fn sleep(&self, duration: Duration) {
        self.sleeps.borrow_mut().push(duration);
        self.now_ms
            .set(self.now_ms.get() + duration.as_millis() as u64);
        if let Some((after, stop)) = self.stop_after {
            if self.now() > after {
                stop.store(true, Ordering::SeqCst);
            }
        }
    }
}

pub fn clock(stop_after: Option<(u64, &'static AtomicBool)>) -> TestClock {
    TestClock {
        now_ms: Cell::new(START_MS),
        sleeps: RefCell::new(Vec::new()),
        stop_after,
    }
}
