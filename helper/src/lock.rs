//! One mutating clone-army at a time: an exclusive `flock` on the state directory's lock
//! file, waited for (bounded) rather than failed at once, since Puppet and a person may
//! well overlap.

use std::fs::File;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use crate::error::{Error, Result};
use crate::fsutil::create_dir_all;
use crate::paths::Layout;

pub const LOCK_TIMEOUT: Duration = Duration::from_secs(300);

pub struct Lock {
    _flock: Flock<File>,
}

pub fn acquire(layout: &Layout, timeout: Duration) -> Result<Lock> {
    let path = layout.fs(layout.lock_file());
    if let Some(dir) = path.parent() {
        create_dir_all(dir, 0o755)?;
    }
    let started = Instant::now();
    let mut said = false;
    loop {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("open the lock file", &path, e))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
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
    fn second_lock_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let _held = acquire(&layout, Duration::from_secs(1)).unwrap();
        let error = acquire(&layout, Duration::from_millis(300)).err().unwrap();
        assert_eq!(error.kind(), "lock-timeout");
    }
}
