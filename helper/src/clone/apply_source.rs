//! The apply source of a clone in `apply` run mode: a host directory with `manifests/`
//! (and usually `modules/`) bound read-only into the clone at [`APPLY_DIR`], where the
//! clone's `puppet apply` runs read it. The bind is in the clone's `.nspawn` settings
//! (see [`super::nspawn_settings`]); a directory bound into a running clone only appears
//! at the clone's next start.
//!
//! Every clone in apply mode can read the source, and a clone's root applies whatever
//! it is given: so the source is a directory of its own, never a system directory or
//! a tree that holds the host's secrets ([`refused_because`]). And whoever can write the
//! source writes what every apply-mode clone runs as root: so it, and every directory
//! above it, is root's and writable by no one else ([`crate::sys::trusted`]), and it is
//! given as the path it resolves to, which is the path nspawn binds.
//!
//! nspawn resolves the path again at every start, and the directories may have changed
//! since they were checked: so every start of an apply-mode clone runs [`check`] first,
//! from a drop-in of the clone's service ([`check_dropin`]), whichever way the clone is
//! started (`clone start`, `systemctl start`, the fleet target at boot), and a source that
//! no longer passes keeps the clone from starting.

use std::path::{Path, PathBuf};

use super::config::CloneConfig;
pub use super::config::APPLY_DIR;
use super::nspawn_settings::read_apply_source;
use crate::protocol::answers::ApplySourceChecked;
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{remove_dropin, write_atomic};
use crate::sys::names::validate_name;
use crate::sys::paths::{Layout, MACHINES_DIR, STATE_DIR};
use crate::systemd::units::{header, read_ours, refuse_foreign};

/// What a source's path may hold, as a pattern for the Puppet side (`clone-army schema`):
/// what [`is_plain_path`] takes: absolute, plain, with no `..` component.
pub const PATTERN: &str = "^(?!.*/\\.\\.(/|$))/[A-Za-z0-9._+@/-]*$";

/// What the path of a source may be, in words.
pub const PATH_RULE: &str = "an absolute path of letters, digits and . _ - + @ / only, \
     with no .. component";

const ALLOWED: &str = "allowed: an absolute path of an existing directory on the host that \
     holds manifests/, made of letters, digits and . _ - + @ / only, at least two levels \
     deep and outside the host's system and secret trees (/etc but its code/ \
     directories, /root, /boot, /proc, /sys, /dev, /run, /var/lib, /var/log, /var/cache, \
     /var/spool), reached through no symlink, and root's and writable by no one else, \
     like every directory above it";

/// What a refusal of the owners or modes on the way adds.
const TRUSTED: &str = "the source and every directory above it must be root's and writable \
     by no one else (as sudo and sshd ask of what they trust): whoever can write them \
     writes what every apply-mode clone runs as root";

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

/// Whether `text` is a path a source may have ([`PATTERN`], [`PATH_RULE`]).
pub fn is_plain_path(text: &str) -> bool {
    text.starts_with('/') && plain(text) && !text.split('/').any(|c| c == "..")
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

/// Checks `--apply-source`: what [`check`] checks before every start, and that it holds
/// a `manifests/` directory. Returns the path, without a trailing `/`.
pub fn validate(layout: &Layout, path: &Path) -> Result<PathBuf> {
    let resolved = judge(layout, path)?;
    if !layout.fs(&resolved).join("manifests").is_dir() {
        return Err(invalid(
            path,
            format!("it has no manifests/ directory; {ALLOWED}"),
        ));
    }
    Ok(resolved)
}

/// Whether `path` may be bound: absolute, plain, no `..`, an existing directory (looked
/// up through the layout, so tests use a temp root) that is, symlinks resolved, none of
/// the [`refused_because`] directories; reached through no symlink, so that the path
/// given is the path bound; and root's and writable by no one else, like every
/// directory above it. Returns the path, without a trailing `/`.
fn judge(layout: &Layout, path: &Path) -> Result<PathBuf> {
    let text = path.to_str().unwrap_or_default();
    if !is_plain_path(text) {
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
    // The path as given, `//` and a trailing `/` aside, must be that: a symlink on the way
    // is resolved by nspawn again at every start, to wherever it points by then.
    let given: PathBuf = path.components().collect();
    if given != resolved {
        return Err(invalid(
            path,
            format!(
                "it resolves to {} through a symlink; give that path, which is what is bound",
                resolved.display()
            ),
        ));
    }
    if let Err(untrusted) = crate::sys::trusted::check_dir(&layout.fs("/"), &resolved) {
        return Err(invalid(path, format!("{untrusted}; {TRUSTED}")));
    }
    Ok(resolved)
}

/// `clone check-apply-source`: what the clone's service runs before every start (see
/// [`check_dropin`]). The apply source the clone's `.nspawn` settings bind (none: nothing
/// to check) may still be bound, as `--apply-source` was judged; an error fails the
/// start. (A missing `manifests/` does not: the clone's runs skip themselves then.)
pub fn check(layout: &Layout, clone: &str) -> Result<ApplySourceChecked> {
    validate_name("clone", "name", clone)?;
    let source = read_apply_source(&CloneConfig::of(layout, clone))?;
    if let Some(source) = &source {
        judge(layout, source)?;
    }
    Ok(ApplySourceChecked {
        clone: clone.to_owned(),
        apply_source: source.map(|path| path.display().to_string()),
    })
}

/// The drop-in of the clone's service that runs [`check`] before every start.
pub fn check_dropin(layout: &Layout, clone: &str) -> PathBuf {
    layout
        .service_dropin_dir(clone)
        .join("45-apply-source-check.conf")
}

/// The drop-in's text: `helper` (a plain absolute path) checks the clone's source before
/// nspawn binds it. systemd runs `ExecStartPre=` at every start of the unit, and fails
/// the start when it fails.
pub fn render_check_dropin(helper: &Path, clone: &str) -> String {
    format!(
        "{header}\
# Before every start: the apply source the clone's .nspawn settings bind is still root's,
# writable by no one else and reached through no symlink, or the clone does not start.
[Service]
ExecStartPre={helper} clone check-apply-source -- {clone}
",
        header = header(),
        helper = helper.display(),
    )
}

/// The helper as its own executable, for the drop-in: a path the unit file takes as it
/// is, since systemd runs it as root at every start of the clone.
fn helper_path() -> Result<PathBuf> {
    let path = std::env::current_exe().map_err(|e| Error::io("find", "the helper itself", e))?;
    match path.to_str() {
        Some(text) if is_plain_path(text) => Ok(path),
        _ => Err(Error::Unsupported {
            what: format!("clone-army at {}", path.display()),
            detail: format!(
                "an apply-mode clone's service runs the helper before every start, and its \
                 path goes into a unit file as it is: install the helper at {PATH_RULE}"
            ),
        }),
    }
}

/// Writes the clone's check drop-in when it binds a source, removes it when not (one
/// clone-army did not write is refused). Returns whether it changed: then systemd must
/// reload.
pub fn write_check(layout: &Layout, clone: &str, source: Option<&Path>) -> Result<bool> {
    let path = layout.fs(check_dropin(layout, clone));
    refuse_foreign(&path, "drop-in")?;
    match source {
        Some(_) => write_atomic(
            &path,
            render_check_dropin(&helper_path()?, clone).as_bytes(),
            0o644,
        ),
        None => remove_dropin(&path),
    }
}

/// Removes the clone's check drop-in (one clone-army did not write is left alone).
/// Returns whether it did.
pub fn remove_check(layout: &Layout, clone: &str) -> Result<bool> {
    let path = layout.fs(check_dropin(layout, clone));
    match read_ours(&path)? {
        Some(_) => remove_dropin(&path),
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::os::unix::fs::PermissionsExt;

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Directories under a temporary root (0700, the test's), each 0755 whatever the
    /// umask.
    fn source_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for sub in [
            "srv/apply/manifests",
            "srv/empty",
            "etc/manifests",
            "etc/puppetlabs/code/environments/production/manifests",
            "var/lib/puppet-clone-army/c1-overlay/manifests",
            "opt/manifests",
            "home/alice/apply/manifests",
        ] {
            let mut path = dir.path().to_owned();
            for component in Path::new(sub) {
                path.push(component);
                std::fs::create_dir_all(&path).unwrap();
                set_mode(&path, 0o755);
            }
        }
        std::os::unix::fs::symlink("/etc", dir.path().join("srv/to-etc")).unwrap();
        std::os::unix::fs::symlink("apply", dir.path().join("srv/current")).unwrap();
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

    /// Whoever may write the source, or any directory above it, writes what every
    /// apply-mode clone runs as root: group and other write are refused all the way up,
    /// the sticky bit of a shared directory included.
    #[test]
    fn a_source_its_group_or_others_can_write_is_refused_naming_the_component() {
        let root = source_dir();
        let root = root.path();
        assert!(validate(&Layout::under(root), Path::new("/srv/apply")).is_ok());
        for (dir, mode, said) in [
            (
                "srv/apply",
                0o775,
                "/srv/apply is writable by its group (mode 775)",
            ),
            (
                "srv/apply",
                0o757,
                "/srv/apply is writable by others (mode 757)",
            ),
            (
                "srv",
                0o777,
                "/srv is writable by its group and by others (mode 777)",
            ),
            (
                "srv",
                0o1777,
                "/srv is writable by its group and by others (mode 1777)",
            ),
            (
                "",
                0o777,
                "/ is writable by its group and by others (mode 777)",
            ),
        ] {
            set_mode(&root.join(dir), mode);
            let reason = refused(root, "/srv/apply");
            assert!(reason.starts_with(said), "{dir} {mode:o}: {reason}");
            assert!(
                reason.contains("root's and writable by no one else"),
                "{reason}"
            );
            set_mode(&root.join(dir), if dir.is_empty() { 0o700 } else { 0o755 });
        }
        assert!(validate(&Layout::under(root), Path::new("/srv/apply")).is_ok());
    }

    /// nspawn binds the path it is given, resolving it again at every start: a source
    /// reached through a symlink is refused, so what is bound is what was checked.
    #[test]
    fn a_source_reached_through_a_symlink_is_refused_naming_what_it_resolves_to() {
        let root = source_dir();
        let reason = refused(root.path(), "/srv/current");
        assert!(
            reason.starts_with("it resolves to /srv/apply through a symlink"),
            "{reason}"
        );
    }

    fn chown(path: &Path, uid: u32) {
        nix::unistd::chown(path, Some(nix::unistd::Uid::from_raw(uid)), None).unwrap();
    }

    /// A user's home (or anything a user owns on the way) is that user's to change.
    #[test]
    #[ignore = "needs root (to give a directory to another user); make test runs it"]
    fn a_source_in_a_users_home_is_refused() {
        assert!(nix::unistd::geteuid().is_root(), "this test needs root");
        let root = source_dir();
        let root = root.path();
        chown(&root.join("home/alice"), 1000);
        let reason = refused(root, "/home/alice/apply");
        assert!(
            reason.starts_with("/home/alice is owned by uid 1000, not root"),
            "{reason}"
        );
        chown(&root.join("home/alice"), 0);
        chown(&root.join("home/alice/apply"), 1000);
        let reason = refused(root, "/home/alice/apply");
        assert!(
            reason.starts_with("/home/alice/apply is owned by uid 1000, not root"),
            "{reason}"
        );
        chown(&root.join("home/alice/apply"), 0);
        assert!(validate(&Layout::under(root), Path::new("/home/alice/apply")).is_ok());
    }
}
