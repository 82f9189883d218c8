//! The in-memory fake the unit tests run every verb against.

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::{glob_match, Systemd, SystemdError};

/// Records every call and keeps unit states in memory: started units become `active`,
/// stopped ones `inactive`, unless the test said otherwise.
#[derive(Default)]
pub struct RecordingSystemd {
    pub calls: RefCell<Vec<String>>,
    pub states: RefCell<BTreeMap<String, String>>,
    /// Units whose start ends in `failed`.
    pub failing: RefCell<Vec<String>>,
    /// Units systemd gave up on (`start-limit-hit`): their start jobs fail until
    /// `reset_failed_unit` clears them, as systemd's do.
    pub start_limited: RefCell<Vec<String>>,
    /// When set, listing unit states fails as an absent system bus does.
    pub unreachable: std::cell::Cell<bool>,
}

impl RecordingSystemd {
    pub fn calls(&self) -> Vec<String> {
        self.calls.borrow().clone()
    }

    pub fn active_state_of(&self, unit: &str) -> String {
        self.states.borrow().get(unit).cloned().unwrap_or_default()
    }

    pub fn set_state(&self, unit: &str, state: &str) {
        self.states
            .borrow_mut()
            .insert(unit.to_owned(), state.to_owned());
    }
}

impl Systemd for RecordingSystemd {
    fn start_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.calls.borrow_mut().push(format!("start_unit {unit}"));
        let limited = self.start_limited.borrow().iter().any(|u| u == unit);
        let state = if limited || self.failing.borrow().iter().any(|u| u == unit) {
            "failed"
        } else {
            "active"
        };
        self.set_state(unit, state);
        Ok(())
    }

    fn reset_failed_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.calls
            .borrow_mut()
            .push(format!("reset_failed_unit {unit}"));
        self.start_limited.borrow_mut().retain(|u| u != unit);
        match self.states.borrow_mut().get_mut(unit) {
            Some(state) => {
                if state == "failed" {
                    *state = "inactive".to_owned();
                }
                Ok(())
            }
            None => Err(SystemdError::NoSuchUnit {
                unit: unit.to_owned(),
            }),
        }
    }

    fn stop_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.calls.borrow_mut().push(format!("stop_unit {unit}"));
        match self.states.borrow_mut().get_mut(unit) {
            Some(state) => {
                *state = "inactive".to_owned();
                Ok(())
            }
            None => Err(SystemdError::NoSuchUnit {
                unit: unit.to_owned(),
            }),
        }
    }

    fn daemon_reload(&self) -> Result<(), SystemdError> {
        self.calls.borrow_mut().push("daemon_reload".to_owned());
        Ok(())
    }

    fn reload_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.calls.borrow_mut().push(format!("reload_unit {unit}"));
        Ok(())
    }

    fn unit_states(&self, patterns: &[String]) -> Result<BTreeMap<String, String>, SystemdError> {
        self.calls
            .borrow_mut()
            .push(format!("unit_states {}", patterns.join(" ")));
        if self.unreachable.get() {
            return Err(SystemdError::Unavailable {
                bus: "unix:path=/nonexistent".to_owned(),
                detail: "No such file or directory (os error 2)".to_owned(),
            });
        }
        Ok(self
            .states
            .borrow()
            .iter()
            .filter(|(unit, _)| patterns.iter().any(|p| glob_match(p, unit)))
            .map(|(u, s)| (u.clone(), s.clone()))
            .collect())
    }

    fn active_state(&self, unit: &str) -> Result<String, SystemdError> {
        Ok(self
            .states
            .borrow()
            .get(unit)
            .cloned()
            .unwrap_or_else(|| "inactive".to_owned()))
    }

    fn recent_log(&self, unit: &str) -> Vec<String> {
        vec![format!("{unit}: Failed with result 'exit-code'.")]
    }
}
