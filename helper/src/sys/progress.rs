//! How far long work has come, for whoever shows it. The verbs that run for minutes
//! (`base create`, a ramped `clone start`, `clone create-many`) report each step or count
//! here; the command line decides where that goes (a status line when stderr is a
//! terminal, nowhere otherwise: `cli/progress.rs`), so that no verb knows about terminals.

/// What a long verb reports as it goes. Reporting never fails and never waits: the work
/// goes on whatever is shown.
pub trait Progress {
    /// Stepped work enters step `number` of `of` (counted from 1), which does `what`.
    fn step(&self, what: &str, number: usize, of: usize);
    /// Counted work has `done` of its `total` items done.
    fn count(&self, done: usize, total: usize);
}

/// Progress no one is shown: for callers inside other work (a ramp's starts) and tests.
pub struct Quiet;

impl Progress for Quiet {
    fn step(&self, _what: &str, _number: usize, _of: usize) {}
    fn count(&self, _done: usize, _total: usize) {}
}

/// Progress as the tests see it: every report, in order.
#[cfg(test)]
#[derive(Default)]
pub struct Recorded(std::sync::Mutex<Vec<String>>);

#[cfg(test)]
impl Recorded {
    pub fn reports(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[cfg(test)]
impl Progress for Recorded {
    fn step(&self, what: &str, number: usize, of: usize) {
        self.0
            .lock()
            .unwrap()
            .push(format!("step {number}/{of} {what}"));
    }

    fn count(&self, done: usize, total: usize) {
        self.0.lock().unwrap().push(format!("count {done}/{total}"));
    }
}
