//! The few systemd manager operations the helper needs, behind a trait so that tests
//! record what would have been done instead of talking to a real systemd.
//!
//! The real implementation talks to `org.freedesktop.systemd1` on the system bus with
//! zbus. zbus 6 has no blocking API any more (and `zbus_systemd`'s proxies are async
//! only, and generate the whole systemd1 surface), so this file declares a small
//! `#[proxy]` of its own and drives it with `zbus::block_on`. Every operation is bounded:
//! the connection has a method timeout, and the whole operation (connecting included)
//! runs under a deadline, so an absent or wedged bus is an error, never a hang.

pub mod fake_file;
pub mod units;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

/// Each D-Bus method call gives up after this long.
pub const METHOD_TIMEOUT: Duration = Duration::from_secs(25);
/// A whole operation, connecting included, gives up after this long.
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a start or stop may take before the helper stops waiting.
pub const STATE_WAIT_TIMEOUT: Duration = Duration::from_secs(120);
pub const STATE_POLL_INTERVAL: Duration = Duration::from_millis(250);

const NO_SUCH_UNIT: &str = "org.freedesktop.systemd1.NoSuchUnit";

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

// --- D-Bus ------------------------------------------------------------------------------------

type UnitRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    zbus::OwnedObjectPath,
    u32,
    String,
    zbus::OwnedObjectPath,
);

#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Manager",
    default_service = "org.freedesktop.systemd1",
    default_path = "/org/freedesktop/systemd1"
)]
trait Manager {
    fn start_unit(&self, name: &str, mode: &str) -> zbus::Result<zbus::OwnedObjectPath>;
    fn stop_unit(&self, name: &str, mode: &str) -> zbus::Result<zbus::OwnedObjectPath>;
    fn reset_failed_unit(&self, name: &str) -> zbus::Result<()>;
    fn reload_unit(&self, name: &str, mode: &str) -> zbus::Result<zbus::OwnedObjectPath>;
    fn reload(&self) -> zbus::Result<()>;
    fn list_units_by_patterns(
        &self,
        states: &[&str],
        patterns: &[&str],
    ) -> zbus::Result<Vec<UnitRow>>;
}

/// systemd on the system bus.
#[derive(Default)]
pub struct DbusSystemd {
    connection: RefCell<Option<zbus::Connection>>,
}

impl DbusSystemd {
    pub fn new() -> Self {
        Self::default()
    }

    /// How the system bus is reached, for error messages.
    fn bus() -> String {
        std::env::var("DBUS_SYSTEM_BUS_ADDRESS")
            .unwrap_or_else(|_| "unix:path=/var/run/dbus/system_bus_socket".to_owned())
    }

    fn call<T, F, Fut>(
        &self,
        method: &'static str,
        unit: Option<&str>,
        op: F,
    ) -> Result<T, SystemdError>
    where
        F: FnOnce(ManagerProxy<'static>) -> Fut,
        Fut: Future<Output = zbus::Result<T>>,
    {
        enum Failure {
            Connect(zbus::Error),
            Call(zbus::Error),
        }
        let existing = self.connection.borrow().clone();
        let bus = Self::bus();
        let outcome = zbus::block_on(with_deadline(OPERATION_TIMEOUT, async {
            let connection = match existing {
                Some(c) => c,
                None => zbus::connection::Builder::system()
                    .method_timeout(METHOD_TIMEOUT)
                    .build()
                    .await
                    .map_err(Failure::Connect)?,
            };
            let proxy = ManagerProxy::new(&connection)
                .await
                .map_err(Failure::Call)?;
            let value = op(proxy).await.map_err(Failure::Call)?;
            Ok((connection, value))
        }));
        match outcome {
            None => Err(SystemdError::Timeout {
                method,
                unit: unit.map(str::to_owned),
                bus,
                seconds: OPERATION_TIMEOUT.as_secs(),
            }),
            Some(Ok((connection, value))) => {
                *self.connection.borrow_mut() = Some(connection);
                Ok(value)
            }
            Some(Err(Failure::Connect(e))) => Err(SystemdError::Unavailable {
                bus,
                detail: e.to_string(),
            }),
            Some(Err(Failure::Call(e))) => Err(classify(method, unit, bus, e)),
        }
    }
}

fn classify(method: &'static str, unit: Option<&str>, bus: String, e: zbus::Error) -> SystemdError {
    match &e {
        zbus::Error::MethodError(name, _, _) if name.as_str() == NO_SUCH_UNIT => {
            SystemdError::NoSuchUnit {
                unit: unit.unwrap_or_default().to_owned(),
            }
        }
        zbus::Error::InputOutput(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            SystemdError::Timeout {
                method,
                unit: unit.map(str::to_owned),
                bus,
                seconds: METHOD_TIMEOUT.as_secs(),
            }
        }
        _ => SystemdError::Call {
            method,
            unit: unit.map(str::to_owned),
            bus,
            detail: e.to_string(),
        },
    }
}

impl Systemd for DbusSystemd {
    fn start_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.call("StartUnit", Some(unit), |p| async move {
            p.start_unit(unit, "replace").await.map(drop)
        })
    }

    fn reset_failed_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.call("ResetFailedUnit", Some(unit), |p| async move {
            p.reset_failed_unit(unit).await
        })
    }

    fn stop_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.call("StopUnit", Some(unit), |p| async move {
            p.stop_unit(unit, "replace").await.map(drop)
        })
    }

    fn daemon_reload(&self) -> Result<(), SystemdError> {
        self.call("Reload", None, |p| async move { p.reload().await })
    }

    fn reload_unit(&self, unit: &str) -> Result<(), SystemdError> {
        self.call("ReloadUnit", Some(unit), |p| async move {
            p.reload_unit(unit, "replace").await.map(drop)
        })
    }

    fn unit_states(&self, patterns: &[String]) -> Result<BTreeMap<String, String>, SystemdError> {
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let rows = self.call("ListUnitsByPatterns", None, |p| async move {
            p.list_units_by_patterns(&[], &patterns).await
        })?;
        Ok(rows.into_iter().map(|row| (row.0, row.3)).collect())
    }

    fn active_state(&self, unit: &str) -> Result<String, SystemdError> {
        let pattern = literal_pattern(unit);
        let rows = self.call("ListUnitsByPatterns", Some(unit), |p| async move {
            p.list_units_by_patterns(&[], &[pattern.as_str()]).await
        })?;
        Ok(rows
            .into_iter()
            .find(|row| row.0 == unit)
            .map(|row| row.3)
            .unwrap_or_else(|| "inactive".to_owned()))
    }

    fn recent_log(&self, unit: &str) -> Vec<String> {
        // journald has no D-Bus API for reading; its own client is the way. Its output is
        // captured, never passed through to our stdout, and bounded like every other call.
        let mut command = std::process::Command::new("journalctl");
        command.args([
            "--no-pager",
            "--quiet",
            "--output=short",
            "--lines=15",
            "--unit",
            unit,
        ]);
        match run_bounded(command, JOURNAL_TIMEOUT) {
            Some(stdout) => String::from_utf8_lossy(&stdout)
                .lines()
                .map(str::to_owned)
                .collect(),
            None => Vec::new(),
        }
    }
}

/// How long reading a failed unit's journal lines may take (best effort).
pub const JOURNAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `command` and returns its stdout when it succeeds within `timeout`; kills it and
/// returns `None` otherwise (a wedged journal must not hang the helper).
fn run_bounded(mut command: std::process::Command, timeout: Duration) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Read on a thread so a chatty child cannot block on a full pipe while we wait.
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(50))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let out = reader.join().ok()?;
    status.filter(|s| s.success()).map(|_| out)
}

/// Runs `future` until it completes or `timeout` passes (`None`).
///
/// zbus's runtime has no public timer; a helper thread that wakes the task at the
/// deadline is enough for a short-lived helper. It exits as soon as the future is done.
async fn with_deadline<F: Future>(timeout: Duration, future: F) -> Option<F::Output> {
    #[derive(Default)]
    struct Shared {
        expired: bool,
        waker: Option<Waker>,
    }
    let shared = Arc::new(Mutex::new(Shared::default()));
    let timer = Arc::clone(&shared);
    let (done, done_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(timeout) {
            let mut state = timer.lock().unwrap_or_else(|p| p.into_inner());
            state.expired = true;
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
    });
    let mut future = std::pin::pin!(future);
    let output = std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        let mut state = shared.lock().unwrap_or_else(|p| p.into_inner());
        if state.expired {
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    })
    .await;
    // Dropping the sender ends the timer thread.
    drop(done);
    output
}

// --- recording fake -------------------------------------------------------------------------

/// Records every call and keeps unit states in memory: started units become `active`,
/// stopped ones `inactive`, unless the test said otherwise.
#[cfg(test)]
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

#[cfg(test)]
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

/// fnmatch with `*` only, and `\\` escaping the next character (as [`literal_pattern`]).
#[cfg(test)]
fn glob_match(pattern: &str, name: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
