//! One change at a time: an exclusive `flock` on the state directory's lock file for the
//! verbs that change the fleet (create, configure, remove, base builds), a shared one for
//! those that act on it (start, stop, exec), which run beside each other but never beside
//! a change. Waited for (bounded) rather than failed at once, since Puppet and a person
//! may well overlap. Listing and `report` take none.
//!
//! The state directory is root's alone (0700) and the lock file 0600: a local user who
//! could open the lock could hold it and stall every change.

use std::fs::File;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::create_dir_all;
use crate::sys::paths::{Layout, STATE_DIR};

pub const LOCK_TIMEOUT: Duration = Duration::from_secs(300);
/// The state directory (bases, upper layers, what clones are given): root's alone.
pub const STATE_DIR_MODE: u32 = 0o700;
const LOCK_FILE_MODE: u32 = 0o600;

/// Creates the state directory with [`STATE_DIR_MODE`], or narrows a wider one (made by
/// an older clone-army, or by hand). Returns whether it changed anything.
pub fn ensure_state_dir(layout: &Layout) -> Result<bool> {
    let dir = layout.fs(STATE_DIR);
    if let Some(parent) = dir.parent() {
        create_dir_all(parent, 0o755)?;
    }
    let created = create_dir_all(&dir, STATE_DIR_MODE)?;
    let mode = std::fs::metadata(&dir)
        .map_err(|e| Error::io("inspect", &dir, e))?
        .permissions()
        .mode()
        & 0o7777;
    if mode == STATE_DIR_MODE {
        return Ok(created);
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(STATE_DIR_MODE))
        .map_err(|e| Error::io("set the mode of", &dir, e))?;
    Ok(true)
}

pub struct Lock {
    _flock: Flock<File>,
}

/// Whether a lock excludes every other holder or only changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    Exclusive,
    Shared,
}

pub fn acquire(layout: &Layout, timeout: Duration) -> Result<Lock> {
    acquire_as(layout, timeout, LockMode::Exclusive)
}

pub fn acquire_as(layout: &Layout, timeout: Duration, mode: LockMode) -> Result<Lock> {
    let arg = match mode {
        LockMode::Exclusive => FlockArg::LockExclusiveNonblock,
        LockMode::Shared => FlockArg::LockSharedNonblock,
    };
    let path = layout.fs(layout.lock_file());
    ensure_state_dir(layout)?;
    let started = Instant::now();
    let mut said = false;
    loop {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(LOCK_FILE_MODE)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| Error::io("open the lock file", &path, e))?;
        // A lock file made by an older clone-army (0644) is narrowed too.
        file.set_permissions(std::fs::Permissions::from_mode(LOCK_FILE_MODE))
            .map_err(|e| Error::io("set the mode of", &path, e))?;
        match Flock::lock(file, arg) {
            Ok(flock) => return Ok(Lock { _flock: flock }),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) if started.elapsed() < timeout => {
                // Once, so a person (or Puppet's log) sees why nothing happens.
                if !said {
                    eprintln!(
                        "clone-army: waiting for lock {} (another clone-army is running; giving up after {} s)",
                        path.display(),
                        timeout.as_secs()
                    );
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
                return Err(Error::LockTimeout {
                    path,
                    seconds: timeout.as_secs(),
                })
            }
            Err((_, errno)) => return Err(Error::io("lock", &path, std::io::Error::from(errno))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_dir_and_lock_are_roots_alone() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let state = layout.fs(STATE_DIR);
        std::fs::create_dir_all(&state).unwrap();
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(layout.fs(layout.lock_file()), "").unwrap();
        let _held = acquire(&layout, Duration::from_secs(1)).unwrap();
        let mode =
            |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(&layout.fs(layout.lock_file())), 0o600);
        assert!(!ensure_state_dir(&layout).unwrap());
    }

    #[test]
    fn shared_locks_go_together_and_exclude_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let short = Duration::from_millis(300);
        let first = acquire_as(&layout, short, LockMode::Shared).unwrap();
        let _second = acquire_as(&layout, short, LockMode::Shared).unwrap();
        assert_eq!(
            acquire(&layout, short).err().unwrap().kind(),
            "lock-timeout"
        );
        drop(first);
        drop(_second);
        let _change = acquire(&layout, short).unwrap();
        assert_eq!(
            acquire_as(&layout, short, LockMode::Shared)
                .err()
                .unwrap()
                .kind(),
            "lock-timeout"
        );
    }

    #[test]
    fn second_lock_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let _held = acquire(&layout, Duration::from_secs(1)).unwrap();
        let error = acquire(&layout, Duration::from_millis(300)).err().unwrap();
        assert_eq!(error.kind(), "lock-timeout");
    }
}
