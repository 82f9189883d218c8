//! systemd on the system bus: a small `#[proxy]` of the manager interface, driven with
//! `zbus::block_on` under a deadline (zbus 6 has no blocking API, and `zbus_systemd`'s
//! proxies are async only and generate the whole systemd1 surface).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;

use super::deadline::with_deadline;
use std::time::Duration;

use super::{
    literal_pattern, Systemd, SystemdError, METHOD_TIMEOUT, OPERATION_TIMEOUT, RELOAD_TIMEOUT,
};

const NO_SUCH_UNIT: &str = "org.freedesktop.systemd1.NoSuchUnit";

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
        self.call_within(method, unit, METHOD_TIMEOUT, op)
    }

    /// As `call`, the method given `method_timeout` (and the operation as much more as
    /// connecting may take); a timeout other than the usual one gets a connection of its
    /// own, since zbus sets the timeout per connection.
    fn call_within<T, F, Fut>(
        &self,
        method: &'static str,
        unit: Option<&str>,
        method_timeout: Duration,
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
        let usual = method_timeout == METHOD_TIMEOUT;
        let existing = if usual {
            self.connection.borrow().clone()
        } else {
            None
        };
        let operation_timeout = OPERATION_TIMEOUT - METHOD_TIMEOUT + method_timeout;
        let bus = Self::bus();
        let outcome = zbus::block_on(with_deadline(operation_timeout, async {
            let connection = match existing {
                Some(c) => c,
                None => zbus::connection::Builder::system()
                    .method_timeout(method_timeout)
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
                seconds: operation_timeout.as_secs(),
            }),
            Some(Ok((connection, value))) => {
                if usual {
                    *self.connection.borrow_mut() = Some(connection);
                }
                Ok(value)
            }
            Some(Err(Failure::Connect(e))) => Err(SystemdError::Unavailable {
                bus,
                detail: e.to_string(),
            }),
            Some(Err(Failure::Call(e))) => Err(classify(method, unit, bus, method_timeout, e)),
        }
    }
}

fn classify(
    method: &'static str,
    unit: Option<&str>,
    bus: String,
    method_timeout: Duration,
    e: zbus::Error,
) -> SystemdError {
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
                seconds: method_timeout.as_secs(),
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
        self.call_within("Reload", None, RELOAD_TIMEOUT, |p| async move {
            p.reload().await
        })
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
        super::journal::recent_lines(unit)
    }
}
