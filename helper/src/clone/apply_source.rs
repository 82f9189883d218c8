//! The apply source of a clone in `apply` run mode: a host directory with `manifests/`
//! (and usually `modules/`) bound read-only into the clone at [`APPLY_DIR`], where the
//! clone's `puppet apply` runs read it. The bind is in the clone's `.nspawn` settings
//! (see [`super::nspawn_settings`]); a directory bound into a running clone only appears
//! at the clone's next start.
//!
//! Every clone in apply mode can read the source, and a clone's root applies whatever
//! it is given: so the source is a directory of its own, never a system directory or
//! a tree that holds the host's secrets ([`refused_because`]).

use std::path::{Path, PathBuf};

use crate::protocol::error::{Error, Result};
use crate::sys::paths::{Layout, MACHINES_DIR, STATE_DIR};

/// Where the source appears inside a clone.
pub const APPLY_DIR: &str = "/srv/clone-army-apply";

const ALLOWED: &str = "allowed: an absolute path of an existing directory on the host that \
     holds manifests/, made of letters, digits and . _ - + @ / only, at least two levels \
     deep and outside the host's system and secret trees (/etc but its code/ \
     directories, /root, /boot, /proc, /sys, /dev, /run, /var/lib, /var/log, /var/cache, \
     /var/spool)";

/// Trees no apply source may be in (or be): the host's configuration and secrets, its
/// kernel and device interfaces, the state of its services, and the fleet itself.
const REFUSED_TREES: &[&str] = &[
    "/etc",
    "/root",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    STATE_DIR,
    MACHINES_DIR,
];

/// Puppet code directories inside the refused trees, which are a natural apply source:
/// an environment's manifests and modules.
const ALLOWED_TREES: &[&str] = &["/etc/puppetlabs/code", "/etc/puppet/code"];

fn invalid(value: &Path, reason: impl Into<String>) -> Error {
    Error::InvalidArgument {
        field: "apply-source",
        value: value.display().to_string(),
        reason: reason.into(),
    }
}

/// Characters that can go into nspawn's `BindReadOnly=SRC:DST` as they are: no
/// whitespace, no `:` (nspawn's separator), no `%`, no quotes or backslashes, no line
/// breaks.
fn plain(path: &str) -> bool {
    path.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-+@/".contains(&b))
}

fn within(path: &Path, tree: &str) -> bool {
    path.starts_with(tree)
}

/// Why `path` (an absolute, resolved host path) is never an apply source; `None` when
/// it may be one.
pub fn refused_because(path: &Path) -> Option<String> {
    if path.components().count() < 3 {
        return Some(format!(
            "{} is the root or a top-level directory",
            path.display()
        ));
    }
    if ALLOWED_TREES.iter().any(|tree| within(path, tree)) {
        return None;
    }
    REFUSED_TREES
        .iter()
        .find(|tree| within(path, tree))
        .map(|tree| format!("{} is in {tree}", path.display()))
}

/// Checks `--apply-source`: absolute, plain, no `..`, an existing directory with a
/// `manifests/` directory in it (looked up through the layout, so tests use a temp root)
/// that is, symlinks resolved, none of the [`refused_because`] directories.
pub fn validate(layout: &Layout, path: &Path) -> Result<PathBuf> {
    let text = path.to_str().unwrap_or_default();
    if !path.is_absolute() || !plain(text) || text.split('/').any(|c| c == "..") {
        return Err(invalid(path, ALLOWED));
    }
    let on_host = layout.fs(text);
    if !on_host.is_dir() {
        return Err(invalid(
            path,
            format!("no such directory on the host; {ALLOWED}"),
        ));
    }
    // nspawn binds what the path resolves to: judge that.
    let root = std::fs::canonicalize(layout.fs("/")).map_err(|e| Error::io("resolve", "/", e))?;
    let resolved = std::fs::canonicalize(&on_host).map_err(|e| Error::io("resolve", path, e))?;
    let resolved = Path::new("/").join(resolved.strip_prefix(&root).unwrap_or(&resolved));
    if let Some(reason) = refused_because(&resolved) {
        return Err(invalid(path, format!("{reason}; {ALLOWED}")));
    }
    if !on_host.join("manifests").is_dir() {
        return Err(invalid(
            path,
            format!("it has no manifests/ directory; {ALLOWED}"),
        ));
    }
    Ok(PathBuf::from(text.trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for sub in [
            "srv/apply/manifests",
            "srv/empty",
            "etc/manifests",
            "etc/puppetlabs/code/environments/production/manifests",
            "var/lib/puppet-clone-army/c1-overlay/manifests",
            "opt/manifests",
        ] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::os::unix::fs::symlink("/etc", dir.path().join("srv/to-etc")).unwrap();
        dir
    }

    fn refused(root: &Path, path: &str) -> String {
        match validate(&Layout::under(root), Path::new(path)) {
            Err(Error::InvalidArgument { field, reason, .. }) => {
                assert_eq!(field, "apply-source");
                reason
            }
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn the_source_must_be_an_absolute_plain_directory_with_manifests() {
        let root = source_dir();
        let root = root.path();
        assert_eq!(
            validate(&Layout::under(root), Path::new("/srv/apply/")).unwrap(),
            PathBuf::from("/srv/apply")
        );
        assert!(refused(root, "srv/apply").starts_with("allowed: "));
        assert!(refused(root, "/srv/missing").starts_with("no such directory"));
        assert!(refused(root, "/srv/empty").starts_with("it has no manifests/"));
        for bad in [
            "/srv/a:b",
            "/srv/a b",
            "/srv/%i",
            "/srv/apply\nExecStart=/bin/sh",
            "/srv/../srv/apply",
        ] {
            assert!(refused(root, bad).starts_with("allowed: "), "{bad:?}");
        }
    }

    #[test]
    fn system_and_secret_trees_are_refused_even_through_a_symlink() {
        let root = source_dir();
        let root = root.path();
        assert_eq!(
            refused(root, "/"),
            format!("/ is the root or a top-level directory; {ALLOWED}")
        );
        assert!(refused(root, "/etc").starts_with("/etc is the root or a top-level directory"));
        assert!(refused(root, "/opt").starts_with("/opt is the root or a top-level directory"));
        assert!(refused(root, "/var/lib/puppet-clone-army/c1-overlay")
            .starts_with("/var/lib/puppet-clone-army/c1-overlay is in /var/lib;"));
        let through = refused(root, "/srv/to-etc");
        assert!(
            through.contains("is in /etc") || through.contains("top-level"),
            "{through}"
        );
        assert!(validate(
            &Layout::under(root),
            Path::new("/etc/puppetlabs/code/environments/production")
        )
        .is_ok());
        assert_eq!(
            refused_because(Path::new("/etc/ssh/keys")).unwrap(),
            "/etc/ssh/keys is in /etc"
        );
        assert_eq!(refused_because(Path::new("/srv/load/apply")), None);
        assert_eq!(refused_because(Path::new("/home/alice/apply")), None);
    }
}
