//! The in-memory fake the unit tests run every verb against: the fake systemd
//! ([`super::fake`]) with its state in memory, and what the tests set up and read back.

use std::cell::RefCell;

use super::fake::{FakeState, FakeStore, FakeSystemd};
use super::SystemdError;

/// The state in memory, for one test.
#[derive(Default)]
pub struct MemoryStore(RefCell<FakeState>);

impl FakeStore for MemoryStore {
    fn update<T>(&self, f: impl FnOnce(&mut FakeState) -> T) -> Result<T, SystemdError> {
        Ok(f(&mut self.0.borrow_mut()))
    }

    fn read<T>(&self, f: impl FnOnce(&FakeState) -> T) -> Result<T, SystemdError> {
        Ok(f(&self.0.borrow()))
    }
}

/// Records every call and keeps unit states in memory.
pub type RecordingSystemd = FakeSystemd<MemoryStore>;

impl RecordingSystemd {
    fn state(&self) -> std::cell::RefMut<'_, FakeState> {
        self.store.0.borrow_mut()
    }

    pub fn calls(&self) -> Vec<String> {
        self.state().calls.clone()
    }

    pub fn active_state_of(&self, unit: &str) -> String {
        self.state().states.get(unit).cloned().unwrap_or_default()
    }

    pub fn set_state(&self, unit: &str, state: &str) {
        self.state()
            .states
            .insert(unit.to_owned(), state.to_owned());
    }

    /// The unit's starts end `failed`.
    pub fn fail_starts_of(&self, unit: &str) {
        self.state().failing.push(unit.to_owned());
    }

    /// systemd has given up on the unit (`start-limit-hit`) until its failure is reset.
    pub fn limit_starts_of(&self, unit: &str) {
        self.state().start_limited.push(unit.to_owned());
    }

    /// Listing unit states fails as an absent system bus does.
    pub fn make_unreachable(&self) {
        self.state().unreachable = true;
    }
}
