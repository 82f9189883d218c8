//! Which systemd the binary talks to: the system bus, or, as a **test hook**, a fake
//! that keeps unit states and records calls in a JSON file, so the binary runs end to
//! end where there is no bus (the fault suite, `tests/faults.rs`).
//!
//! `CLONE_ARMY_SYSTEMD=fake:<state file>` selects the fake. It is refused (`usage`,
//! exit 2) unless `CLONE_ARMY_ROOT` is set too, so a production host never reports
//! a start that did not happen.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::error::{Error, Result};
use crate::sys::paths::ROOT_ENV;
use crate::systemd::{DbusSystemd, Systemd, SystemdError};

pub const SYSTEMD_ENV: &str = "CLONE_ARMY_SYSTEMD";

/// The systemd the environment asks for.
pub fn from_env() -> Result<Box<dyn Systemd>> {
    let Some(value) = std::env::var_os(SYSTEMD_ENV) else {
        return Ok(Box::new(DbusSystemd::new()));
    };
    let value = value.to_string_lossy().into_owned();
    let Some(path) = value.strip_prefix("fake:").filter(|p| !p.is_empty()) else {
        return Err(Error::Usage(format!(
            "{SYSTEMD_ENV}={value:?} is invalid; allowed: fake:<state file> (a test hook)"
        )));
    };
    if std::env::var_os(ROOT_ENV).is_none_or(|r| r.is_empty()) {
        return Err(Error::Usage(format!(
            "{SYSTEMD_ENV} is a test hook and needs {ROOT_ENV} set too"
        )));
    }
    Ok(Box::new(FileSystemd {
        path: PathBuf::from(path),
    }))
}

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
}

pub struct FileSystemd {
    path: PathBuf,
}

impl FileSystemd {
    fn error(&self, detail: String) -> SystemdError {
        SystemdError::Unavailable {
            bus: format!("fake:{}", self.path.display()),
            detail,
        }
    }

    fn update<T>(&self, f: impl FnOnce(&mut FakeState) -> T) -> Result<T, SystemdError> {
        let mut state = read_state(&self.path).map_err(|e| self.error(e))?;
        let out = f(&mut state);
        let text = serde_json::to_string_pretty(&state).map_err(|e| self.error(e.to_string()))?;
        std::fs::write(&self.path, text).map_err(|e| self.error(e.to_string()))?;
        Ok(out)
    }
}

pub fn read_state(path: &Path) -> Result<FakeState, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(FakeState::default()),
        Ok(text) => serde_json::from_str(&text).map_err(|e| e.to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FakeState::default()),
        Err(e) => Err(e.to_string()),
    }
}

impl Systemd for FileSystemd {
    fn start_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.update(|s| {
            s.calls.push(format!("start_unit {unit}"));
            let state = if s.failing.iter().any(|u| u == unit) {
                "failed"
            } else {
                "active"
            };
            s.states.insert(unit.to_owned(), state.to_owned());
        })
    }

    fn reset_failed_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.update(|s| {
            s.calls.push(format!("reset_failed_unit {unit}"));
            match s.states.get_mut(unit) {
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
        })?
    }

    fn stop_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.update(|s| {
            s.calls.push(format!("stop_unit {unit}"));
            match s.states.get_mut(unit) {
                Some(state) => {
                    *state = "inactive".to_owned();
                    Ok(())
                }
                None => Err(SystemdError::NoSuchUnit {
                    unit: unit.to_owned(),
                }),
            }
        })?
    }

    fn daemon_reload(&self) -> Result<(), SystemdError> {
        self.update(|s| s.calls.push("daemon_reload".to_owned()))
    }

    fn reload_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.update(|s| s.calls.push(format!("reload_unit {unit}")))
    }

    fn unit_states(&self, patterns: &[String]) -> Result<BTreeMap<String, String>, SystemdError> {
        let state = read_state(&self.path).map_err(|e| self.error(e))?;
        Ok(state
            .states
            .into_iter()
            .filter(|(unit, _)| patterns.iter().any(|p| super::glob_match(p, unit)))
            .collect())
    }

    fn active_state(&self, unit: &str) -> Result<String, SystemdError> {
        let state = read_state(&self.path).map_err(|e| self.error(e))?;
        Ok(state
            .states
            .get(unit)
            .cloned()
            .unwrap_or_else(|| "inactive".to_owned()))
    }

    fn recent_log(&self, unit: &str) -> Vec<String> {
        vec![format!("{unit}: failed (fake systemd)")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_calls_and_states_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("systemd.json");
        let fake = FileSystemd { path: path.clone() };
        let unit = "var-lib-machines-c\\x2d1.mount";
        assert!(matches!(
            fake.stop_unit(unit),
            Err(SystemdError::NoSuchUnit { .. })
        ));
        fake.start_unit(unit).unwrap();
        fake.daemon_reload().unwrap();
        assert_eq!(fake.active_state(unit).unwrap(), "active");
        let literal = crate::systemd::literal_pattern(unit);
        assert_eq!(fake.unit_states(&[literal]).unwrap().len(), 1);
        assert_eq!(
            fake.unit_states(&["var-lib-machines-*.mount".to_owned()])
                .unwrap()
                .len(),
            1
        );
        assert!(fake
            .unit_states(&["puppet-clone-army@*.service".to_owned()])
            .unwrap()
            .is_empty());
        let state = read_state(&path).unwrap();
        assert_eq!(
            state.calls,
            [
                format!("stop_unit {unit}"),
                format!("start_unit {unit}"),
                "daemon_reload".to_owned()
            ]
        );
    }
}
