//! Temporary files a killed helper leaves behind.
//!
//! `write_atomic` and `ensure_symlink` write `.<name>.clone-army-<pid>-<random>` and
//! `.clone-army-link-<pid>-<random>` (older ones without `-<random>`) next to their target and rename them into place; a SIGKILL
//! between the two leaves that file. systemd ignores such names (no unit suffix), but
//! they are litter in `/etc/systemd/system`, so `clone create` and `clone remove` sweep
//! the directories they write, under the lock, removing only files whose writer is gone.

use std::path::Path;

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

use crate::protocol::error::Result;
use crate::sys::fsutil::remove_file;
use crate::sys::temp_names::writer_of;

fn alive(pid: i32) -> bool {
    // EPERM: it exists, owned by someone else.
    !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
}

/// Removes the temporary files in `dir` whose writer no longer runs. Returns how many.
pub fn sweep(dir: &Path) -> Result<usize> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = writer_of(&name.to_string_lossy()) else {
            continue;
        };
        if pid == std::process::id() as i32 || alive(pid) {
            continue;
        }
        if remove_file(&entry.path())? {
            crate::protocol::warnings::warn(format!(
                "removed {}, left by a clone-army that was killed",
                entry.path().display()
            ));
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_files_of_dead_writers_only() {
        let dir = tempfile::tempdir().unwrap();
        // Above the kernel's largest pid_max: no such process.
        let dead = dir
            .path()
            .join(".a.mount.clone-army-4194999-0123456789abcdef");
        let mine = dir.path().join(format!(
            ".b.mount.clone-army-{}-0123456789abcdef",
            std::process::id()
        ));
        let other = dir.path().join("c.mount");
        for path in [&dead, &mine, &other] {
            std::fs::write(path, "").unwrap();
        }
        assert_eq!(sweep(dir.path()).unwrap(), 1);
        assert!(!dead.exists() && mine.exists() && other.exists());
        assert_eq!(sweep(&dir.path().join("missing")).unwrap(), 0);
    }
}
