//! What every verb works with: the layout on disk, systemd, and the time limits.

use std::time::Duration;

use crate::protocol::error::Result;
use crate::sys::lock::{self, Lock};
use crate::sys::paths::Layout;
use crate::systemd::{Systemd, STATE_WAIT_TIMEOUT};

pub struct Context<'a> {
    pub layout: Layout,
    pub systemd: &'a dyn Systemd,
    /// How long a start or stop may take.
    pub wait_timeout: Duration,
    pub lock_timeout: Duration,
}

impl<'a> Context<'a> {
    pub fn new(layout: Layout, systemd: &'a dyn Systemd) -> Self {
        Context {
            layout,
            systemd,
            wait_timeout: STATE_WAIT_TIMEOUT,
            lock_timeout: lock::LOCK_TIMEOUT,
        }
    }

    /// Verbs that change the fleet hold this for their whole run.
    pub fn lock(&self) -> Result<Lock> {
        lock::acquire(&self.layout, self.lock_timeout)
    }

    /// Verbs that act on the fleet without changing it (start, stop, exec) hold this for
    /// their whole run: they go together, never beside a change.
    pub fn lock_shared(&self) -> Result<Lock> {
        lock::acquire_as(&self.layout, self.lock_timeout, lock::LockMode::Shared)
    }
}
