//! The test fakes' systemd: one state machine over unit states, kept in a [`FakeStore`].
//! Started units become `active` (or `failed`, when a test said so), stopped ones
//! `inactive`; every call is recorded in order. Where the state lives is the store's
//! business: in memory for the unit tests (`fake_recording`), in a JSON file for the
//! tests that run the binary ([`super::fake_file`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{glob_match, Systemd, SystemdError};

/// Everything the fake knows: what the tests read back and what they set up.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct FakeState {
    /// ActiveState of every unit the fake has seen started or stopped.
    #[serde(default)]
    pub states: BTreeMap<String, String>,
    /// Every call, in order (`start_unit <unit>`, `daemon_reload`, ...).
    #[serde(default)]
    pub calls: Vec<String>,
    /// Units whose start ends `failed`.
    #[serde(default)]
    pub failing: Vec<String>,
    /// Units systemd gave up on (`start-limit-hit`): their starts fail until
    /// `reset_failed_unit` clears them, as systemd's do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_limited: Vec<String>,
    /// Listing unit states fails, as an absent system bus does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unreachable: bool,
}

/// Where a fake's state lives between calls.
pub trait FakeStore {
    /// Runs `f` on the state and keeps what it changed.
    fn update<T>(&self, f: impl FnOnce(&mut FakeState) -> T) -> Result<T, SystemdError>;
    /// Runs `f` on the state, changing nothing.
    fn read<T>(&self, f: impl FnOnce(&FakeState) -> T) -> Result<T, SystemdError>;
}

/// The fake systemd over the store `S`.
#[derive(Default)]
pub struct FakeSystemd<S> {
    pub store: S,
}

fn no_such_unit(unit: &str) -> SystemdError {
    SystemdError::NoSuchUnit {
        unit: unit.to_owned(),
    }
}

impl<S: FakeStore> Systemd for FakeSystemd<S> {
    fn start_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.store.update(|s| {
            s.calls.push(format!("start_unit {unit}"));
            let fails = s.start_limited.iter().chain(&s.failing).any(|u| u == unit);
            let state = if fails { "failed" } else { "active" };
            s.states.insert(unit.to_owned(), state.to_owned());
        })
    }

    fn reset_failed_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.store.update(|s| {
            s.calls.push(format!("reset_failed_unit {unit}"));
            s.start_limited.retain(|u| u != unit);
            let state = s.states.get_mut(unit).ok_or_else(|| no_such_unit(unit))?;
            if state == "failed" {
                *state = "inactive".to_owned();
            }
            Ok(())
        })?
    }

    fn stop_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.store.update(|s| {
            s.calls.push(format!("stop_unit {unit}"));
            let state = s.states.get_mut(unit).ok_or_else(|| no_such_unit(unit))?;
            *state = "inactive".to_owned();
            Ok(())
        })?
    }

    fn daemon_reload(&self) -> Result<(), SystemdError> {
        self.store
            .update(|s| s.calls.push("daemon_reload".to_owned()))
    }

    fn reload_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.store
            .update(|s| s.calls.push(format!("reload_unit {unit}")))
    }

    fn unit_states(&self, patterns: &[String]) -> Result<BTreeMap<String, String>, SystemdError> {
        self.store.update(|s| {
            s.calls.push(format!("unit_states {}", patterns.join(" ")));
            if s.unreachable {
                return Err(SystemdError::Unavailable {
                    bus: "unix:path=/nonexistent".to_owned(),
                    detail: "No such file or directory (os error 2)".to_owned(),
                });
            }
            Ok(s.states
                .iter()
                .filter(|(unit, _)| patterns.iter().any(|p| glob_match(p, unit)))
                .map(|(u, s)| (u.clone(), s.clone()))
                .collect())
        })?
    }

    fn active_state(&self, unit: &str) -> Result<String, SystemdError> {
        self.store.read(|s| {
            s.states
                .get(unit)
                .cloned()
                .unwrap_or_else(|| "inactive".to_owned())
        })
    }

    fn recent_log(&self, unit: &str) -> Vec<String> {
        vec![format!("{unit}: Failed with result 'exit-code'.")]
    }
}
