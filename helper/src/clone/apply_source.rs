//! The apply source of a clone in `apply` run mode: a host directory with `manifests/`
//! (and usually `modules/`) bound read-only into the clone at [`APPLY_DIR`], where the
//! clone's `puppet apply` runs read it.
//!
//! The bind is a per-clone drop-in on the host,
//! `/etc/systemd/system/puppet-clone-army@<clone>.service.d/60-apply-source.conf`, that
//! resets the template's `ExecStart=` and gives it again with `--bind-ro=DIR:/srv/...`.
//! Why not `Bind=` in `/etc/systemd/nspawn/<clone>.nspawn`: systemd 252 ignored it here
//! for units started with `--keep-unit` from our template (the mount was missing in the
//! clone), while an option on the command line always holds. The command line comes from
//! [`units::nspawn_exec_start`], shared with the template, so the two cannot drift.
//!
//! A directory bound into a running clone only appears at the clone's next start.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsutil::{remove_dropin, write_atomic};
use crate::paths::Layout;
use crate::units::{self, header, read_ours, refuse_foreign};

/// Where the source appears inside a clone.
pub const APPLY_DIR: &str = "/srv/clone-army-apply";

const ALLOWED: &str = "allowed: an absolute path of an existing directory on the host that \
     holds manifests/, made of letters, digits and . _ - + @ / only";

fn invalid(value: &Path, reason: impl Into<String>) -> Error {
    Error::InvalidArgument {
        field: "apply-source",
        value: value.display().to_string(),
        reason: reason.into(),
    }
}

/// Characters that can go into a unit's `ExecStart=` and nspawn's `--bind-ro=SRC:DST`
/// as they are: no whitespace, no `:` (nspawn's separator), no `%` (a unit specifier),
/// no quotes or backslashes, no line breaks.
fn plain(path: &str) -> bool {
    path.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-+@/".contains(&b))
}

/// Checks `--apply-source`: absolute, plain, no `..`, an existing directory with a
/// `manifests/` directory in it (looked up through the layout, so tests use a temp root).
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
    if !on_host.join("manifests").is_dir() {
        return Err(invalid(
            path,
            format!("it has no manifests/ directory; {ALLOWED}"),
        ));
    }
    let trimmed = text.trim_end_matches('/');
    Ok(PathBuf::from(if trimmed.is_empty() {
        "/"
    } else {
        trimmed
    }))
}

/// Host path of the clone's drop-in.
pub fn dropin_path(layout: &Layout, clone: &str) -> PathBuf {
    layout.unit_path(&format!(
        "{}.d/60-apply-source.conf",
        layout.service_unit_name(clone)
    ))
}

pub fn render(source: &Path) -> String {
    format!(
        "{header}\
[Service]
ExecStart=
ExecStart={exec_start} --bind-ro={source}:{APPLY_DIR}
",
        header = header(),
        exec_start = units::nspawn_exec_start(),
        source = source.display(),
    )
}

/// The source the drop-in on disk binds, if any (none when missing or not ours).
pub fn read(layout: &Layout, clone: &str) -> Result<Option<PathBuf>> {
    let Some(text) = read_ours(&layout.fs(dropin_path(layout, clone)))? else {
        return Ok(None);
    };
    let suffix = format!(":{APPLY_DIR}");
    Ok(text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("ExecStart="))
        .flat_map(str::split_whitespace)
        .filter_map(|arg| {
            arg.strip_prefix("--bind-ro=")?
                .strip_suffix(suffix.as_str())
        })
        .next_back()
        .map(PathBuf::from))
}

/// Writes the drop-in for `source`, or removes it (and its directory, when empty) for
/// `None`. A file there that clone-army did not write is refused. Returns whether it
/// changed.
pub fn apply(layout: &Layout, clone: &str, source: Option<&Path>) -> Result<bool> {
    let path = layout.fs(dropin_path(layout, clone));
    refuse_foreign(&path, "drop-in")?;
    match source {
        Some(source) => write_atomic(&path, render(source).as_bytes(), 0o644),
        None => remove(layout, clone),
    }
}

/// Removes the drop-in and its directory when that is left empty.
pub fn remove(layout: &Layout, clone: &str) -> Result<bool> {
    remove_dropin(&layout.fs(dropin_path(layout, clone)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("srv/apply/manifests")).unwrap();
        std::fs::create_dir_all(dir.path().join("srv/empty")).unwrap();
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
    fn dropin_snapshot() {
        insta::assert_snapshot!(
            render(Path::new("/srv/apply")).replace(env!("CARGO_PKG_VERSION"), "[version]")
        );
    }

    #[test]
    fn the_dropin_repeats_the_templates_command_line() {
        let template = units::service_template();
        let exec_start = template
            .lines()
            .find_map(|l| l.strip_prefix("ExecStart="))
            .unwrap();
        assert!(render(Path::new("/srv/apply")).contains(&format!(
            "ExecStart={exec_start} --bind-ro=/srv/apply:{APPLY_DIR}\n"
        )));
    }

    #[test]
    fn written_read_back_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        assert_eq!(read(&layout, "c1").unwrap(), None);
        assert!(apply(&layout, "c1", Some(Path::new("/srv/apply"))).unwrap());
        assert!(!apply(&layout, "c1", Some(Path::new("/srv/apply"))).unwrap());
        assert_eq!(
            read(&layout, "c1").unwrap(),
            Some(PathBuf::from("/srv/apply"))
        );
        let path = layout.fs(dropin_path(&layout, "c1"));
        assert!(path
            .ends_with("etc/systemd/system/puppet-clone-army@c1.service.d/60-apply-source.conf"));
        assert!(apply(&layout, "c1", None).unwrap());
        assert!(!path.exists() && !path.parent().unwrap().exists());
        assert!(!apply(&layout, "c1", None).unwrap());
    }

    #[test]
    fn a_foreign_dropin_is_neither_read_nor_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let path = layout.fs(dropin_path(&layout, "c1"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "[Service]\nExecStart=\n").unwrap();
        assert_eq!(read(&layout, "c1").unwrap(), None);
        assert!(matches!(
            apply(&layout, "c1", None),
            Err(Error::AlreadyExists { .. })
        ));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[Service]\nExecStart=\n"
        );
    }
}
