//! Whether a host directory can be trusted with what root runs: the rule sudo applies to
//! its sudoers files and sshd (`StrictModes`) to a user's `authorized_keys`. The directory
//! and every directory above it, from `/` down, is owned by root and writable by neither
//! its group nor others (a sticky shared directory such as `/tmp` included): whoever could
//! write any of them could put something else in its place.
//!
//! The walk looks at each component itself (`lstat`), never through a symlink: one on the
//! way is refused, since what it points at is decided by whoever owns the directory that
//! holds it, and at the next lookup anew. A path that passes has no component a user
//! other than root can change, so it stays as it was checked until root changes it.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Write by the group or by others.
const GROUP_WRITE: u32 = 0o020;
const OTHER_WRITE: u32 = 0o002;

/// The first component of a path that is not to be trusted, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// The component, as a system path (`/`, `/srv`, `/srv/apply`, ...).
    pub component: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.component.display(), self.reason)
    }
}

/// Whom a directory may belong to: root, and (so that tests run by another user can
/// make trusted trees of their own) the helper's own user, which is root in production.
fn trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == nix::unistd::geteuid().as_raw()
}

/// Checks the directory `system_path` (absolute, without `..`) and every directory above
/// it, as the file system under `root` holds them (`/` in production, a test's root
/// otherwise: the walk starts there, at the system path `/`).
pub fn check_dir(root: &Path, system_path: &Path) -> Result<(), Untrusted> {
    let mut system = PathBuf::from("/");
    let mut on_disk = root.to_owned();
    check_one(&on_disk, &system)?;
    for component in system_path.components() {
        match component {
            Component::RootDir | Component::CurDir => continue,
            Component::Normal(name) => {
                system.push(name);
                on_disk.push(name);
            }
            Component::ParentDir | Component::Prefix(_) => {
                return Err(Untrusted {
                    component: system,
                    reason: "is followed by '..'".to_owned(),
                })
            }
        }
        check_one(&on_disk, &system)?;
    }
    Ok(())
}

fn check_one(on_disk: &Path, system: &Path) -> Result<(), Untrusted> {
    let untrusted = |reason: String| Untrusted {
        component: system.to_owned(),
        reason,
    };
    let meta = std::fs::symlink_metadata(on_disk)
        .map_err(|e| untrusted(format!("cannot be inspected: {e}")))?;
    if meta.file_type().is_symlink() {
        return Err(untrusted("is a symlink".to_owned()));
    }
    if !meta.is_dir() {
        return Err(untrusted("is not a directory".to_owned()));
    }
    if !trusted_owner(meta.uid()) {
        return Err(untrusted(format!(
            "is owned by uid {}, not root",
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o7777;
    let writers = match (mode & GROUP_WRITE != 0, mode & OTHER_WRITE != 0) {
        (false, false) => return Ok(()),
        (true, false) => "its group",
        (false, true) => "others",
        (true, true) => "its group and by others",
    };
    Err(untrusted(format!(
        "is writable by {writers} (mode {mode:o})"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["a", "a/b"] {
            let path = dir.path().join(sub);
            std::fs::create_dir(&path).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    }

    #[test]
    fn a_tree_only_its_owner_writes_is_trusted_from_the_root_down() {
        let dir = tree();
        assert_eq!(check_dir(dir.path(), Path::new("/a/b")), Ok(()));
        assert_eq!(check_dir(dir.path(), Path::new("/")), Ok(()));
    }

    #[test]
    fn the_first_component_others_may_change_is_named() {
        let dir = tree();
        let set = |sub: &str, mode: u32| {
            std::fs::set_permissions(dir.path().join(sub), std::fs::Permissions::from_mode(mode))
                .unwrap()
        };
        set("a", 0o1777);
        set("a/b", 0o775);
        assert_eq!(
            check_dir(dir.path(), Path::new("/a/b"))
                .unwrap_err()
                .to_string(),
            "/a is writable by its group and by others (mode 1777)"
        );
        set("a", 0o755);
        assert_eq!(
            check_dir(dir.path(), Path::new("/a/b"))
                .unwrap_err()
                .to_string(),
            "/a/b is writable by its group (mode 775)"
        );
        set("a/b", 0o757);
        assert_eq!(
            check_dir(dir.path(), Path::new("/a/b"))
                .unwrap_err()
                .to_string(),
            "/a/b is writable by others (mode 757)"
        );
    }

    #[test]
    fn a_symlink_a_file_or_a_missing_component_on_the_way_is_not_trusted() {
        let dir = tree();
        std::os::unix::fs::symlink("a", dir.path().join("link")).unwrap();
        std::fs::write(dir.path().join("a/file"), "").unwrap();
        for (path, said) in [
            ("/link/b", "/link is a symlink"),
            ("/a/file", "/a/file is not a directory"),
            ("/a/missing", "/a/missing cannot be inspected: "),
            ("/a/../a", "/a is followed by '..'"),
        ] {
            let error = check_dir(dir.path(), Path::new(path))
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(said), "{path}: {error}");
        }
    }
}
