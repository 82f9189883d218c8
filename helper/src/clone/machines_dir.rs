//! `/var/lib/machines`, where every clone's OverlayFS root is mounted: root's alone.
//!
//! A running clone's merged root holds whatever the clone's root made there, setuid
//! binaries and world-writable directories included. Through a machines directory that
//! others may enter, a local user on the host could run those binaries (setuid root on
//! the host, since the clone's root is the host's uid 0) or use those directories. So
//! the directory is 0700 and root's, as systemd's own `tmpfiles.d/systemd-nspawn.conf`
//! makes it (`Q /var/lib/machines 0700 - - -`); the helper makes it so when it is
//! missing and puts it right at every `clone create`, since systemd-tmpfiles only runs
//! at boot and a mount unit makes a missing one 0755.

use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::create_dir_all;
use crate::sys::paths::{Layout, MACHINES_DIR};

/// The machines directory's mode: root's alone.
pub const MACHINES_DIR_MODE: u32 = 0o700;

/// Makes the machines directory (0700, the helper's) or puts a wider one or one of
/// another owner right; refuses a symlink or anything else in its place. Returns
/// whether it changed anything.
pub fn ensure(layout: &Layout) -> Result<bool> {
    let dir = layout.fs(MACHINES_DIR);
    if let Some(parent) = dir.parent() {
        create_dir_all(parent, 0o755)?;
    }
    let mut changed = match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => false,
        Ok(_) => return Err(not_a_directory(&dir)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create_dir_all(&dir, MACHINES_DIR_MODE)?
        }
        Err(e) => return Err(Error::io("inspect", &dir, e)),
    };
    // Opened without following a link, and changed through that descriptor, so what is
    // inspected is what is changed.
    let opened = std::fs::File::options()
        .read(true)
        .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(&dir);
    let file = match opened {
        Ok(file) => file,
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(nix::libc::ELOOP | nix::libc::ENOTDIR)
            ) =>
        {
            return Err(not_a_directory(&dir));
        }
        Err(e) => return Err(Error::io("open", &dir, e)),
    };
    let meta = file.metadata().map_err(|e| Error::io("inspect", &dir, e))?;
    let helper = nix::unistd::geteuid();
    if meta.uid() != helper.as_raw() {
        nix::unistd::fchown(file.as_fd(), Some(helper), None)
            .map_err(|e| Error::io("change the owner of", &dir, e.into()))?;
        changed = true;
    }
    let mode = meta.mode() & 0o7777;
    if mode != MACHINES_DIR_MODE {
        crate::protocol::warnings::warn(format!(
            "{} was mode {mode:o}, which lets local users into the clones' roots; made it \
             {MACHINES_DIR_MODE:o}",
            dir.display()
        ));
        file.set_permissions(std::fs::Permissions::from_mode(MACHINES_DIR_MODE))
            .map_err(|e| Error::io("set the mode of", &dir, e))?;
        changed = true;
    }
    Ok(changed)
}

fn not_a_directory(dir: &Path) -> Error {
    Error::AlreadyExists {
        what: "machines directory",
        name: dir.display().to_string(),
        detail: format!(
            "it is a symlink or not a directory; the clones' roots are mounted only in a \
             directory of root's alone ({MACHINES_DIR_MODE:o}): move it away"
        ),
    }
}
