//! The few systemd manager operations the helper needs, behind a trait so that tests
//! record what would have been done instead of talking to a real systemd.
//!
//! - `dbus`: the real one, `org.freedesktop.systemd1` on the system bus. Every
//!   operation is bounded: the connection has a method timeout, and the whole operation
//!   (connecting included) runs under a deadline (`deadline`), so an absent or wedged
//!   bus is an error, never a hang. A failed unit's journal lines come from `journal`.
//! - [`fake`]: the tests' systemd, one state machine over a store of its state:
//!   `fake_recording` in memory, for the unit tests; [`fake_file`] in a file, for the
//!   tests that run the binary (under `CLONE_ARMY_ROOT` only).
//! - [`units`]: the unit files the helper writes for systemd.

mod dbus;
mod deadline;
pub mod fake;
pub mod fake_file;
#[cfg(test)]
mod fake_recording;
mod journal;
pub mod units;

pub use dbus::DbusSystemd;
#[cfg(test)]
pub use fake_recording::RecordingSystemd;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Each D-Bus method call gives up after this long.
pub const METHOD_TIMEOUT: Duration = Duration::from_secs(25);
/// A whole operation, connecting included, gives up after this long.
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);
/// `Reload` gives up after this long instead: systemd reads every unit file again, which
/// takes longer the more units it has (20 s with 500 clones running, more on a busy
/// host). `systemctl daemon-reload` waits as long (systemd's `DAEMON_RELOAD_TIMEOUT_SEC`,
/// twice its 90 s default job timeout).
pub const RELOAD_TIMEOUT: Duration = Duration::from_secs(180);
/// How long a start or stop may take before the helper stops waiting.
pub const STATE_WAIT_TIMEOUT: Duration = Duration::from_secs(120);
pub const STATE_POLL_INTERVAL: Duration = Duration::from_millis(250);

pub use crate::protocol::error::{JournalTail, SystemdError};

/// The manager operations the helper uses.
pub trait Systemd {
    /// Queues a start job (mode `replace`).
    fn start_unit(&self, unit: &str) -> Result<(), SystemdError>;
    /// Clears a unit's `failed` state and its start rate-limit counter (`ResetFailedUnit`),
    /// so a unit systemd gave up on (`start-limit-hit`) can be started again. A unit that
    /// is not loaded is `NoSuchUnit` (it has nothing to reset).
    fn reset_failed_unit(&self, unit: &str) -> Result<(), SystemdError>;
    /// Queues a stop job (mode `replace`). A unit that is not loaded is `NoSuchUnit`.
    fn stop_unit(&self, unit: &str) -> Result<(), SystemdError>;
    fn daemon_reload(&self) -> Result<(), SystemdError>;
    /// Queues a reload job (`ReloadUnit`, mode `replace`), as `systemctl reload` does.
    fn reload_unit(&self, unit: &str) -> Result<(), SystemdError>;
    /// ActiveState of every loaded unit matching one of the glob `patterns`, in one call.
    fn unit_states(&self, patterns: &[String]) -> Result<BTreeMap<String, String>, SystemdError>;
    /// ActiveState of one unit; `inactive` when it is not loaded.
    fn active_state(&self, unit: &str) -> Result<String, SystemdError>;
    /// The unit's last journal lines, for the error of a unit that failed. Best effort:
    /// empty when they cannot be read.
    fn recent_log(&self, unit: &str) -> Vec<String>;
}

/// Polls `unit` until `done(state)`; a `failed` state is an error when `failed_is_error`.
pub fn wait_for_state(
    systemd: &dyn Systemd,
    unit: &str,
    wanted: &'static str,
    done: fn(&str) -> bool,
    failed_is_error: bool,
    timeout: Duration,
) -> Result<(), SystemdError> {
    let started = Instant::now();
    loop {
        let state = systemd.active_state(unit)?;
        if done(&state) {
            return Ok(());
        }
        if failed_is_error && state == "failed" {
            let lines = systemd.recent_log(unit);
            return Err(SystemdError::UnitFailed {
                unit: unit.to_owned(),
                journal: (!lines.is_empty()).then(|| JournalTail {
                    unit: unit.to_owned(),
                    lines,
                }),
            });
        }
        if started.elapsed() >= timeout {
            return Err(SystemdError::WaitTimeout {
                unit: unit.to_owned(),
                wanted,
                last: state,
                seconds: timeout.as_secs(),
            });
        }
        std::thread::sleep(STATE_POLL_INTERVAL);
    }
}

/// Escapes a literal unit name for use as a `ListUnitsByPatterns` (fnmatch) pattern; mount
/// unit names carry backslashes (`\x2d`).
pub fn literal_pattern(unit: &str) -> String {
    let mut out = String::with_capacity(unit.len());
    for c in unit.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// fnmatch with `*` only, and `\\` escaping the next character (as [`literal_pattern`]
/// writes them): how systemd matches the patterns the fakes are given.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    fn chars(pattern: &[char], name: &[char]) -> bool {
        match pattern.split_first() {
            None => name.is_empty(),
            Some(('*', rest)) => (0..=name.len()).any(|i| chars(rest, &name[i..])),
            Some(('\\', rest)) if !rest.is_empty() => {
                name.first() == Some(&rest[0]) && chars(&rest[1..], &name[1..])
            }
            Some((c, rest)) => name.first() == Some(c) && chars(rest, &name[1..]),
        }
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    chars(&pattern, &name)
}

#[cfg(test)]
mod tests {
    use super::deadline::with_deadline;
    use super::journal::run_bounded;
    use super::*;
    use std::time::Instant;

    #[test]
    fn literal_patterns_escape_backslashes() {
        assert_eq!(
            literal_pattern("var-lib-machines-clone\\x2d1.mount"),
            "var-lib-machines-clone\\\\x2d1.mount"
        );
        assert_eq!(literal_pattern("a*b"), "a\\*b");
    }

    #[test]
    fn unreachable_bus_is_a_clear_error_not_a_hang() {
        // Point the helper at a socket that does not exist; the error names the bus.
        let dir = tempfile::tempdir().unwrap();
        let address = format!("unix:path={}/nothing-here", dir.path().display());
        // Safe here: no other test reads this variable.
        std::env::set_var("DBUS_SYSTEM_BUS_ADDRESS", &address);
        let started = Instant::now();
        let error = DbusSystemd::new().daemon_reload().unwrap_err();
        std::env::remove_var("DBUS_SYSTEM_BUS_ADDRESS");
        assert!(started.elapsed() < OPERATION_TIMEOUT);
        assert!(
            matches!(error, SystemdError::Unavailable { .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(&address), "{message}");
        assert!(
            message.contains("D-Bus") && message.contains("systemd"),
            "{message}"
        );
    }

    #[test]
    fn bounded_commands_are_killed_at_their_deadline() {
        let mut echo = std::process::Command::new("sh");
        echo.args(["-c", "echo hello"]);
        assert_eq!(
            run_bounded(echo, Duration::from_secs(5)).as_deref(),
            Some(&b"hello\n"[..])
        );
        let mut sleeper = std::process::Command::new("sleep");
        sleeper.arg("30");
        let started = Instant::now();
        assert_eq!(run_bounded(sleeper, Duration::from_millis(200)), None);
        assert!(started.elapsed() < Duration::from_secs(5));
        let failing = std::process::Command::new("false");
        assert_eq!(run_bounded(failing, Duration::from_secs(5)), None);
    }

    #[test]
    fn deadline_fires() {
        let never = std::future::pending::<()>();
        let out = zbus::block_on(with_deadline(Duration::from_millis(50), never));
        assert_eq!(out, None);
        let ready = std::future::ready(7);
        let started = Instant::now();
        let out = zbus::block_on(with_deadline(Duration::from_secs(30), ready));
        assert_eq!(out, Some(7));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn waiting_reports_failed_units() {
        let fake = RecordingSystemd::default();
        fake.set_state("a.service", "failed");
        let error = wait_for_state(
            &fake,
            "a.service",
            "active",
            |s| s == "active",
            true,
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(error.to_string().contains("a.service"));
        let cause = std::error::Error::source(&error).expect("journal tail");
        assert!(cause.to_string().contains("exit-code"), "{cause}");
        assert!(glob_match(
            "puppet-clone-army@*.service",
            "puppet-clone-army@c1.service"
        ));
        assert!(!glob_match(
            "var-lib-machines-*.mount",
            "puppet-clone-army@c1.service"
        ));
    }
}
