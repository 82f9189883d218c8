//! Which systemd the binary talks to: the system bus, or, as a **test hook**, the fake
//! ([`super::fake`]) keeping its unit states and calls in a JSON file, so the binary runs
//! end to end where there is no bus (the fault suite, `tests/faults.rs`).
//!
//! `CLONE_ARMY_SYSTEMD=fake:<state file>` selects the fake. It is refused (`usage`,
//! exit 2) unless `CLONE_ARMY_ROOT` is set too, so a production host never reports
//! a start that did not happen.

use std::path::{Path, PathBuf};

use crate::protocol::error::{Error, Result};
use crate::sys::paths::{test_root, ROOT_ENV};
use crate::systemd::fake::{FakeState, FakeStore, FakeSystemd};
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
    if test_root().is_none() {
        return Err(Error::Usage(format!(
            "{SYSTEMD_ENV} is a test hook and needs {ROOT_ENV} set too"
        )));
    }
    Ok(Box::new(FileSystemd {
        store: FileStore {
            path: PathBuf::from(path),
        },
    }))
}

/// The fake systemd with its state in the file at `path`, read and written whole on
/// each call, so that every run of the binary in a test sees what the ones before did.
pub type FileSystemd = FakeSystemd<FileStore>;

pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    fn error(&self, detail: String) -> SystemdError {
        SystemdError::Unavailable {
            bus: format!("fake:{}", self.path.display()),
            detail,
        }
    }
}

impl FakeStore for FileStore {
    fn update<T>(&self, f: impl FnOnce(&mut FakeState) -> T) -> Result<T, SystemdError> {
        let mut state = read_state(&self.path).map_err(|e| self.error(e))?;
        let out = f(&mut state);
        let text = serde_json::to_string_pretty(&state).map_err(|e| self.error(e.to_string()))?;
        std::fs::write(&self.path, text).map_err(|e| self.error(e.to_string()))?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&FakeState) -> T) -> Result<T, SystemdError> {
        let state = read_state(&self.path).map_err(|e| self.error(e))?;
        Ok(f(&state))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_calls_and_states_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("systemd.json");
        let fake = FileSystemd {
            store: FileStore { path: path.clone() },
        };
        let unit = "var-lib-machines-c\\x2d1.mount";
        assert!(matches!(
            fake.stop_unit(unit),
            Err(SystemdError::NoSuchUnit { .. })
        ));
        fake.start_unit(unit).unwrap();
        fake.daemon_reload().unwrap();
        assert_eq!(fake.active_state(unit).unwrap(), "active");
        let literal = crate::systemd::literal_pattern(unit);
        assert_eq!(
            fake.unit_states(std::slice::from_ref(&literal))
                .unwrap()
                .len(),
            1
        );
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
                "daemon_reload".to_owned(),
                format!("unit_states {literal}"),
                "unit_states var-lib-machines-*.mount".to_owned(),
                "unit_states puppet-clone-army@*.service".to_owned(),
            ]
        );
    }
}
