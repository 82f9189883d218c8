//! Telling a full disk apart from other build failures.
//!
//! A base is a few hundred MiB, written by debootstrap, dnf or zypper, whose own
//! "No space left on device" goes to stderr and reaches the helper only as an exit
//! status. So a build failure counts as a full disk when ENOSPC is anywhere in the
//! error's causes, or when the file system the base is built on has less than
//! [`MIN_FREE_BYTES`] free once it failed (checked before the staging directory is
//! removed, while what filled the disk is still there). The same floor refuses a build
//! before it starts, so a host already short of space is told at once.

use std::path::{Path, PathBuf};

use crate::protocol::error::Error;

/// Below this much free space on its file system a base build is refused, and a failed
/// build is reported as `no-space`.
pub const MIN_FREE_BYTES: u64 = 64 * 1024 * 1024;

const ENOSPC_TEXT: &str = "No space left on device";

/// Bytes available to root on the file system holding `path`, or on its nearest
/// existing ancestor's (the state directory may not exist yet). `None` if unknown.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    let stat = nix::sys::statvfs::statvfs(existing).ok()?;
    // f_bfree, not f_bavail: the helper runs as root, which may use the reserved blocks.
    Some(stat.blocks_free() as u64 * stat.fragment_size() as u64)
}

/// Whether ENOSPC is `error` itself or anywhere in its chain of causes.
pub fn is_enospc(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = next {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.raw_os_error() == Some(nix::libc::ENOSPC)
                || io.kind() == std::io::ErrorKind::StorageFull
            {
                return true;
            }
        }
        if cause.to_string().contains(ENOSPC_TEXT) {
            return true;
        }
        next = cause.source();
    }
    false
}

/// The error for a base build that failed with `error`, given the free space measured
/// on `fs_path` right after: `no-space` when the disk is the reason, else
/// `base-build-failed`. Either way the caller has removed (or is removing) the staging
/// directory.
pub fn build_failure(base: &str, fs_path: &Path, free: Option<u64>, error: Error) -> Error {
    let short = free.is_some_and(|f| f < MIN_FREE_BYTES);
    if short || is_enospc(&error) {
        Error::NoSpace {
            base: base.to_owned(),
            path: fs_path.to_path_buf(),
            free_mib: free.map(|f| f / (1024 * 1024)),
            needed_mib: MIN_FREE_BYTES / (1024 * 1024),
            source: Some(Box::new(error)),
        }
    } else {
        Error::BaseBuildFailed {
            base: base.to_owned(),
            source: Box::new(error),
        }
    }
}

/// Refuses to start a build on a file system that already has less than the floor.
pub fn check_before_build(base: &str, fs_path: &Path) -> Result<(), Error> {
    match free_bytes(fs_path) {
        Some(free) if free < MIN_FREE_BYTES => Err(Error::NoSpace {
            base: base.to_owned(),
            path: PathBuf::from(fs_path),
            free_mib: Some(free / (1024 * 1024)),
            needed_mib: MIN_FREE_BYTES / (1024 * 1024),
            source: None,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn command_failed() -> Error {
        Error::CommandFailed {
            program: "debootstrap".to_owned(),
            detail: "it exited with exit status: 1".to_owned(),
            output: None,
        }
    }

    #[test]
    fn enospc_is_found_anywhere_in_the_causes() {
        let io = Error::io(
            "write",
            "/var/lib/puppet-clone-army/.staging-b/etc/x",
            std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
        );
        assert!(is_enospc(&io));
        let wrapped = Error::BaseBuildFailed {
            base: "b".to_owned(),
            source: Box::new(io),
        };
        assert!(is_enospc(&wrapped));
        let said = Error::CommandFailed {
            program: "tar".to_owned(),
            detail: "write error: No space left on device".to_owned(),
            output: None,
        };
        assert!(is_enospc(&said));
        assert!(!is_enospc(&command_failed()));
        let other_io = Error::io(
            "write",
            "/x",
            std::io::Error::from_raw_os_error(nix::libc::EACCES),
        );
        assert!(!is_enospc(&other_io));
    }

    #[test]
    fn a_failure_on_a_nearly_full_disk_is_no_space() {
        let path = Path::new("/var/lib/puppet-clone-army");
        let error = build_failure("b", path, Some(3 * MIB), command_failed());
        assert_eq!(error.kind(), "no-space");
        assert_eq!(error.exit_code(), 1);
        let message = error.to_string();
        assert!(message.contains("/var/lib/puppet-clone-army"), "{message}");
        assert!(message.contains("3 MiB free"), "{message}");
        // The command's own failure stays visible among the causes.
        assert!(
            error.causes()[0].contains("debootstrap"),
            "{:?}",
            error.causes()
        );
    }

    #[test]
    fn enospc_is_no_space_even_when_space_came_back() {
        let io = Error::io(
            "write",
            "/x",
            std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
        );
        let error = build_failure("b", Path::new("/x"), Some(10 * 1024 * MIB), io);
        assert_eq!(error.kind(), "no-space");
    }

    #[test]
    fn other_failures_with_room_left_stay_build_failures() {
        let error = build_failure(
            "b",
            Path::new("/x"),
            Some(10 * 1024 * MIB),
            command_failed(),
        );
        assert_eq!(error.kind(), "base-build-failed");
        let unknown = build_failure("b", Path::new("/x"), None, command_failed());
        assert_eq!(unknown.kind(), "base-build-failed");
    }

    #[test]
    fn free_space_is_read_from_the_nearest_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(&dir.path().join("not/yet/made")).unwrap();
        assert!(free > 0);
        assert!(check_before_build("b", dir.path()).is_ok() || free < MIN_FREE_BYTES);
    }
}
