//! File operations that the helper does the same way everywhere: atomic writes with fixed
//! modes that report whether anything changed, symlinks, tolerant removal. Every error
//! carries the path it happened on.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `content` to `path` with `mode` through a temporary file and a rename, unless
/// the file already has exactly that content and mode. Returns whether it wrote.
pub fn write_atomic(path: &Path, content: &[u8], mode: u32) -> Result<bool> {
    if let Ok(existing) = fs::read(path) {
        let same_mode = fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o7777 == mode)
            .unwrap_or(false);
        if existing == content && same_mode {
            return Ok(false);
        }
    }
    let dir = path
        .parent()
        .ok_or_else(|| Error::Internal(format!("{} has no parent", path.display())))?;
    create_dir_all(dir, 0o755)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.clone-army-{}", std::process::id()));
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| Error::io("create", &tmp, e))?;
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

/// Creates `dir` with the mode and owner of `like` (or 0755 root when `like` is missing).
pub fn create_dir_like(dir: &Path, like: &Path) -> Result<bool> {
    if dir.is_dir() {
        return Ok(false);
    }
    let (mode, uid, gid) = match fs::metadata(like) {
        Ok(m) if m.is_dir() => (m.mode() & 0o7777, m.uid(), m.gid()),
        _ => (0o755, 0, 0),
    };
    match fs::DirBuilder::new().mode(mode).create(dir) {
        Ok(()) => {}
        Err(e) => return Err(Error::io("create directory", dir, e)),
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io("set the mode of", dir, e))?;
    std::os::unix::fs::chown(dir, Some(uid), Some(gid))
        .map_err(|e| Error::io("set the owner of", dir, e))?;
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
    let tmp = dir.join(format!(".clone-army-link-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).map_err(|e| Error::io("create symlink", &tmp, e))?;
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
