//! File operations that the helper does the same way everywhere: atomic writes with fixed
//! modes that report whether anything changed, symlinks, tolerant removal. Every error
//! carries the path it happened on.
//!
//! These work on the host's own directories. Temporary files get unpredictable names
//! and are created `O_EXCL` (which never follows a symlink), so a name planted in
//! advance can at most make a write try another name, never redirect it.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::protocol::error::{Error, Result};
use crate::sys::temp_names::random_suffix;

/// Writes `content` to `path` with `mode` through a temporary file and a rename, unless
/// the file already has exactly that content and mode. Returns whether it wrote.
///
/// What is there is looked at as [`confined::host_file_holds`] does, never through a
/// symlink and never more than `content`'s length: a symlink, a FIFO or a huge file in the
/// target's place is not read, only replaced by the rename.
///
/// [`confined::host_file_holds`]: crate::sys::confined::host_file_holds
pub fn write_atomic(path: &Path, content: &[u8], mode: u32) -> Result<bool> {
    if crate::sys::confined::host_file_holds(path, content, mode) {
        return Ok(false);
    }
    let dir = path
        .parent()
        .ok_or_else(|| Error::Internal(format!("{} has no parent", path.display())))?;
    create_dir_all(dir, 0o755)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, mut file) = create_temporary(dir, &format!(".{file_name}.clone-army-"))?;
    let result = (|| {
        file.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io("set the mode of", &tmp, e))?;
        file.write_all(content)
            .map_err(|e| Error::io("write", &tmp, e))?;
        file.sync_all().map_err(|e| Error::io("sync", &tmp, e))?;
        fs::rename(&tmp, path).map_err(|e| Error::io("rename into place", path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| true)
}

/// A new file in `dir` named `prefix` and a random suffix, created exclusively (never
/// through a symlink, never an existing file) with mode 0600 until the caller sets its own.
pub fn create_temporary(dir: &Path, prefix: &str) -> Result<(PathBuf, fs::File)> {
    let mut last_error = None;
    for _ in 0..16 {
        let path = dir.join(format!("{prefix}{}", random_suffix()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => last_error = Some((path, e)),
            Err(e) => return Err(Error::io("create", &path, e)),
        }
    }
    let (path, e) = last_error.expect("tried at least once");
    Err(Error::io("create", path, e))
}

/// Creates `dir` and missing parents with `mode` (not subject to the umask's surprises:
/// the mode is set explicitly on each directory created).
pub fn create_dir_all(dir: &Path, mode: u32) -> Result<bool> {
    if dir.is_dir() {
        return Ok(false);
    }
    if let Some(parent) = dir.parent() {
        create_dir_all(parent, mode)?;
    }
    match fs::DirBuilder::new().mode(mode).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => return Ok(false),
        Err(e) => return Err(Error::io("create directory", dir, e)),
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io("set the mode of", dir, e))?;
    Ok(true)
}

/// Points `link` at `target`, replacing a different link. Returns whether it changed.
pub fn ensure_symlink(link: &Path, target: &Path) -> Result<bool> {
    if let Ok(existing) = fs::read_link(link) {
        if existing == target {
            return Ok(false);
        }
    }
    let dir = link
        .parent()
        .ok_or_else(|| Error::Internal(format!("{} has no parent", link.display())))?;
    create_dir_all(dir, 0o755)?;
    // symlink(2) never follows or replaces what is there: a taken name is tried again.
    let mut attempt = 0;
    let tmp = loop {
        let tmp = dir.join(format!(".clone-army-link-{}", random_suffix()));
        match std::os::unix::fs::symlink(target, &tmp) {
            Ok(()) => break tmp,
            Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(Error::io("create symlink", &tmp, e)),
        }
    };
    fs::rename(&tmp, link).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io("rename into place", link, e)
    })?;
    Ok(true)
}

/// Removes a file or symlink; a missing one is fine. Returns whether it removed.
pub fn remove_file(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("remove", path, e)),
    }
}

/// Removes a unit drop-in (a missing one is fine), and its `<unit>.d` directory when that
/// is left empty: other drop-ins, clone-army's or a person's, keep it. Returns whether it
/// removed the file.
pub fn remove_dropin(path: &Path) -> Result<bool> {
    let removed = remove_file(path)?;
    if let Some(dir) = path.parent() {
        // Fails, harmlessly, while the directory still holds anything.
        let _ = fs::remove_dir(dir);
    }
    Ok(removed)
}

/// Removes a directory tree; a missing one is fine. Returns whether it removed.
pub fn remove_dir_all(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io("inspect", path, e)),
        Ok(_) => {}
    }
    fs::remove_dir_all(path).map_err(|e| Error::io("remove", path, e))?;
    Ok(true)
}

/// Reads a file that may be missing.
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    #[test]
    fn atomic_write_reports_change_and_sets_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/unit.service");
        assert!(write_atomic(&path, b"x", 0o644).unwrap());
        assert!(!write_atomic(&path, b"x", 0o644).unwrap());
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o644);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(write_atomic(&path, b"x", 0o644).unwrap());
        assert!(write_atomic(&path, b"y", 0o644).unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"y");
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }

    /// A name planted in advance (as a symlink to where a write should not go) is never
    /// written through: the temporary name is unpredictable and created exclusively.
    #[test]
    fn temporary_files_never_follow_or_reuse_a_planted_name() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        let (first, _) = create_temporary(dir.path(), ".x.clone-army-").unwrap();
        let (second, _) = create_temporary(dir.path(), ".x.clone-army-").unwrap();
        assert_ne!(first, second);
        let name = first.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            crate::sys::temp_names::writer_of(&name),
            Some(std::process::id() as i32)
        );
        // Even a correctly guessed name that is a symlink is refused, not followed.
        std::fs::remove_file(&first).unwrap();
        std::os::unix::fs::symlink(&target, &first).unwrap();
        let planted = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&first);
        assert!(planted.is_err());
        assert!(write_atomic(&dir.path().join("unit"), b"x", 0o644).unwrap());
        assert!(!target.exists());
    }

    /// The comparison with what is there looks at the link itself: a symlink to a FIFO
    /// would block a read through it, one to a file of the same content would pass for it.
    #[test]
    fn write_atomic_never_reads_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        crate::sys::confined::testing::fifo(&fifo);
        let path = dir.path().join("unit.service");
        std::os::unix::fs::symlink(&fifo, &path).unwrap();
        let written = {
            let path = path.clone();
            crate::sys::confined::testing::within_seconds(10, move || {
                write_atomic(&path, b"x", 0o644)
            })
        };
        assert!(written.unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"x");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn write_atomic_replaces_a_symlink_to_the_same_content_instead_of_trusting_it() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, "x").unwrap();
        fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o644)).unwrap();
        let path = dir.path().join("unit.service");
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert!(write_atomic(&path, b"x", 0o644).unwrap());
        assert!(fs::symlink_metadata(&path).unwrap().is_file());
        assert!(!write_atomic(&path, b"x", 0o644).unwrap());
    }

    #[test]
    fn symlinks_and_removal() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("wants/x.service");
        assert!(ensure_symlink(&link, Path::new("/t/x.service")).unwrap());
        assert!(!ensure_symlink(&link, Path::new("/t/x.service")).unwrap());
        assert!(ensure_symlink(&link, Path::new("/t/y.service")).unwrap());
        assert!(remove_file(&link).unwrap());
        assert!(!remove_file(&link).unwrap());
        assert!(!remove_dir_all(&dir.path().join("nope")).unwrap());
    }
}
