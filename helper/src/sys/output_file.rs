//! A file written at a path the helper's caller gave (`report --output`): a recorded run's
//! page or the Prometheus textfile. The helper runs as root and such a path often lies in
//! a directory others read from (node_exporter's textfile directory, a web root), so it
//! is trusted no more than a clone's file: it is a [`HostFile`], and what is there is
//! replaced only when it is nothing or a file this helper wrote of the same kind, known
//! by the marker such a file begins with.

use std::path::Path;

use crate::protocol::error::{Error, Result};
use crate::sys::confined::{HostFile, HostFileError};

/// Puts `content` (which begins with `marker`) at `path` whole, mode 0644 (its readers,
/// a browser or node_exporter, are not root): a temporary file beside it, renamed over
/// it, so a reader sees the old file or the new one, never half of one.
///
/// The directory must exist (none is made); what is at `path` must be nothing or a
/// regular file that begins with `marker`. A symlink, a FIFO, a device or any other file
/// is refused naming `output`, and stays as it is. `what` names the kind of file in that
/// refusal ("page", "textfile").
pub fn replace_own(path: &Path, marker: &str, what: &str, content: &[u8]) -> Result<()> {
    debug_assert!(content.starts_with(marker.as_bytes()));
    let refused = |e: HostFileError| e.into_error("output", path);
    let target = HostFile::at(path).map_err(refused)?;
    let existing = target.head(marker.len() as u64).map_err(refused)?;
    if existing.is_some_and(|head| head != marker.as_bytes()) {
        return Err(Error::InvalidArgument {
            field: "output",
            value: path.display().to_string(),
            reason: format!(
                "it is not a {what} clone-army wrote (it does not begin with the {what}'s \
                 marker); a {what} replaces only an earlier {what}, never another file"
            ),
        });
    }
    target.replace(content, 0o644).map_err(refused)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

    use super::*;

    const MARKER: &str = "# made by the test\n";

    fn refused(path: &Path) -> (Option<&'static str>, String) {
        let path = path.to_owned();
        let error = crate::sys::confined::testing::within_seconds(10, move || {
            replace_own(&path, MARKER, "textfile", b"# made by the test\nnew\n")
        })
        .unwrap_err();
        (error.field(), error.to_string())
    }

    #[test]
    fn replaces_nothing_or_its_own_file_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clone_army.prom");
        replace_own(&path, MARKER, "textfile", b"# made by the test\nold\n").unwrap();
        replace_own(&path, MARKER, "textfile", b"# made by the test\nnew\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# made by the test\nnew\n"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o644);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_file_it_did_not_write_is_refused_and_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.prom");
        std::fs::write(&path, "node_load1 3\n").unwrap();
        let (field, message) = refused(&path);
        assert_eq!(field, Some("output"), "{message}");
        assert!(
            message.contains("not a textfile clone-army wrote"),
            "{message}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "node_load1 3\n");
    }

    #[test]
    fn a_symlink_is_refused_and_its_target_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("shadow");
        std::fs::write(&elsewhere, "# made by the test\nkept\n").unwrap();
        let path = dir.path().join("clone_army.prom");
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        let (field, message) = refused(&path);
        assert_eq!(field, Some("output"), "{message}");
        assert!(message.contains("a symlink"), "{message}");
        assert_eq!(
            std::fs::read_to_string(&elsewhere).unwrap(),
            "# made by the test\nkept\n"
        );
        assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }

    #[test]
    fn a_fifo_is_refused_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clone_army.prom");
        crate::sys::confined::testing::fifo(&path);
        let (field, message) = refused(&path);
        assert_eq!(field, Some("output"), "{message}");
        assert!(std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_fifo());
    }

    #[test]
    fn a_missing_directory_is_refused_and_not_made() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("textfile_collector/clone_army.prom");
        let (field, message) = refused(&path);
        assert_eq!(field, Some("output"), "{message}");
        assert!(message.contains("does not exist"), "{message}");
        assert!(!dir.path().join("textfile_collector").exists());
    }
}
