//! Reading and writing in a tree a clone's root can change.
//!
//! A clone runs the agent as root and applies whatever catalog the server under test
//! sends, so anything in its upper layer may be a symlink, a FIFO, a device node or a
//! huge file put there to mislead the host. The same holds for what the host binds into
//! a clone read-only: a clone's root holds `CAP_SYS_ADMIN` in its own mount namespace
//! and can remount such a bind read-write (see the README's "Security model"). The
//! helper runs as root on the host; whatever it reads or writes in such a tree (a
//! clone's upper layer, the bound parts of its config dir) goes through here, and only
//! here:
//!
//! - the path is walked one component at a time, each opened `O_PATH | O_NOFOLLOW`
//!   relative to the one before, so a symlink anywhere on the way is refused, never
//!   followed, whether it points inside the clone or out of it (the upper layer alone
//!   cannot resolve a clone's symlinks the way the clone sees them anyway);
//! - the last component must be a regular file before it is opened for reading: a FIFO
//!   would block the reader, a device node would read the host's hardware;
//! - at most `limit` bytes are read, whatever the file's size says by then;
//! - writes go through the directory's descriptor: a temporary file created `O_EXCL |
//!   O_NOFOLLOW` under an unpredictable name and renamed over the target (which replaces
//!   a planted symlink, never follows it), or, for a file bound into a clone by itself,
//!   a rewrite in place of a regular file opened `O_NOFOLLOW`.
//!
//! Every refusal is [`Error::UnsafePath`], naming the clone and the path, so one clone's
//! planted file fails that clone's read and nothing else.
//!
//! A path the helper's *caller* names on the host ([`HostFile`]: `report --from`'s
//! timeline, `--output`'s page, the PEM files of `--ca-cert`, `--client-cert` and
//! `--client-key`) is held to the same rules at its last component: the caller may be
//! someone allowed only the `clone_army::report` task, which runs the helper as root.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::{mkdirat, Mode};
use nix::unistd::{symlinkat, unlinkat, UnlinkatFlags};

use crate::protocol::error::{Error, Result};

/// What tells one version of a file from the next without reading it. The change time is
/// in it because nothing in a clone can set it back: a file rewritten in place with its
/// size and modification time restored still has a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileIdentity {
    fn of(metadata: &std::fs::Metadata) -> Self {
        FileIdentity {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }
}

/// What [`CloneTree::read_if_changed`] found.
#[derive(Debug)]
pub enum Fresh<T = Vec<u8>> {
    Missing,
    /// Still the version the caller knows.
    Unchanged,
    /// Another version, not read: the caller could not afford its size, or it grew past
    /// the size afforded while it was read.
    Postponed,
    Read {
        identity: FileIdentity,
        content: T,
    },
}

/// One clone's tree as the host sees it: its upper layer (or any directory the clone
/// can write into).
pub struct CloneTree {
    clone: String,
    /// Where the helper opens it (under `CLONE_ARMY_ROOT` in tests).
    root: PathBuf,
    /// How it is named in messages (the system path).
    shown: PathBuf,
}

impl CloneTree {
    pub fn new(clone: &str, root: PathBuf, shown: PathBuf) -> Self {
        CloneTree {
            clone: clone.to_owned(),
            root,
            shown,
        }
    }

    /// The regular file at `path` (relative to the tree, a leading `/` ignored), at most
    /// `limit` bytes of it; `None` when it (or a directory on the way) does not exist.
    pub fn read(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        Ok(
            match self.read_if_changed(path, limit, None, |_| Some(limit))? {
                Fresh::Missing => None,
                Fresh::Read { content, .. } => Some(content),
                // Nothing was known and the whole limit afforded, so neither can be; an
                // answer, not a panic, if it were.
                Fresh::Unchanged | Fresh::Postponed => {
                    return Err(Error::Internal(format!(
                        "{path:?} in clone {:?} read as unchanged or postponed with nothing known",
                        self.clone
                    )))
                }
            },
        )
    }

    /// As [`CloneTree::read`], but a file whose identity is still `known` is not read
    /// again ([`Fresh::Unchanged`]): for a reader that keeps what it made of the file.
    /// The identity is taken from the same descriptor the content is then read through.
    ///
    /// Another version is read only as far as `afford`, given its size, agrees to (at
    /// most `limit`; `None`: not at all, [`Fresh::Postponed`]). A file that grows past
    /// what was afforded while it is read is postponed too (or, past `limit`, refused):
    /// a reader with a budget never reads more than it agreed to, whatever the clone
    /// does to the file meanwhile.
    pub fn read_if_changed(
        &self,
        path: &str,
        limit: u64,
        known: Option<&FileIdentity>,
        afford: impl FnOnce(u64) -> Option<u64>,
    ) -> Result<Fresh> {
        let Some(fd) = self.open_last(path)? else {
            return Ok(Fresh::Missing);
        };
        let shown = self.shown(path);
        let metadata = File::from(fd.try_clone().map_err(|e| self.io(&shown, e))?)
            .metadata()
            .map_err(|e| self.io(&shown, e))?;
        let file_type = metadata.file_type();
        if !file_type.is_file() {
            return Err(self.refuse(&shown, format!("it is {}", describe(&file_type))));
        }
        if metadata.size() > limit {
            return Err(self.refuse(&shown, too_large(metadata.size(), limit)));
        }
        let identity = FileIdentity::of(&metadata);
        if known == Some(&identity) {
            return Ok(Fresh::Unchanged);
        }
        let Some(afforded) = afford(identity.size).map(|bytes| bytes.min(limit)) else {
            return Ok(Fresh::Postponed);
        };
        // Reopened through the descriptor, not the path: the same inode that was checked.
        let reopened = format!("/proc/self/fd/{}", fd.as_raw_fd());
        let file = File::options()
            .read(true)
            .custom_flags(reopen_flags())
            .open(&reopened)
            .map_err(|e| self.io(&shown, e))?;
        let mut content = Vec::new();
        file.take(afforded + 1)
            .read_to_end(&mut content)
            .map_err(|e| self.io(&shown, e))?;
        if content.len() as u64 > afforded {
            if afforded == limit {
                return Err(self.refuse(&shown, too_large(content.len() as u64, limit)));
            }
            return Ok(Fresh::Postponed);
        }
        Ok(Fresh::Read { identity, content })
    }

    /// As [`CloneTree::read`], as text (a file that is not UTF-8 is refused).
    pub fn read_to_string(&self, path: &str, limit: u64) -> Result<Option<String>> {
        self.read(path, limit)?
            .map(|bytes| self.text(path, bytes))
            .transpose()
    }

    /// As [`CloneTree::read_if_changed`], as text.
    pub fn read_to_string_if_changed(
        &self,
        path: &str,
        limit: u64,
        known: Option<&FileIdentity>,
        afford: impl FnOnce(u64) -> Option<u64>,
    ) -> Result<Fresh<String>> {
        Ok(match self.read_if_changed(path, limit, known, afford)? {
            Fresh::Missing => Fresh::Missing,
            Fresh::Unchanged => Fresh::Unchanged,
            Fresh::Postponed => Fresh::Postponed,
            Fresh::Read { identity, content } => Fresh::Read {
                identity,
                content: self.text(path, content)?,
            },
        })
    }

    fn text(&self, path: &str, bytes: Vec<u8>) -> Result<String> {
        String::from_utf8(bytes)
            .map_err(|_| self.refuse(&self.shown(path), "it is not UTF-8 text".to_owned()))
    }

    /// Where the symlink at `path` points (the link itself, never followed); `None` when
    /// nothing is there or it is no symlink.
    pub fn read_link(&self, path: &str) -> Result<Option<PathBuf>> {
        let relative = relative_components(path)?;
        let Some((last, parents)) = relative.split_last() else {
            return Ok(None);
        };
        let Some(dir) = self.walk(parents, path)? else {
            return Ok(None);
        };
        match nix::fcntl::readlinkat(&dir, *last) {
            Ok(target) => Ok(Some(PathBuf::from(target))),
            Err(Errno::ENOENT | Errno::EINVAL) => Ok(None),
            Err(errno) => Err(self.io(&self.shown(path), errno.into())),
        }
    }

    /// Writes `content` to the regular file `path` with `mode`, unless it already reads
    /// so with that mode: through a temporary file beside it and a rename, which
    /// replaces whatever is there (a planted symlink included) without following it.
    /// Missing directories on the way are made (0755), none through a symlink. Returns
    /// whether it wrote.
    pub fn write(&self, path: &str, content: &[u8], mode: u32) -> Result<bool> {
        if self.holds(path, content, mode) {
            return Ok(false);
        }
        let (dir, name) = self.parent_made(path)?;
        let shown = self.shown(path);
        let (tmp, file) = self.create_temporary(&dir, &shown)?;
        let written = (|| {
            let mut file = File::from(file);
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            file.write_all(content)?;
            file.sync_all()
        })()
        .map_err(|e| self.io(&shown, e));
        let renamed = written.and_then(|()| {
            renameat(&dir, tmp.as_str(), &dir, name).map_err(|e| self.io(&shown, e.into()))
        });
        if renamed.is_err() {
            let _ = unlinkat(&dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
        }
        renamed.map(|()| true)
    }

    /// Rewrites the regular file `path` in place (creating it when missing), for a file
    /// bound into a clone by itself: a bind holds the inode it was made with. The new
    /// text goes first, then the length, so a reader sees the old text, or the new one
    /// with at most the old one's tail for an instant. A symlink or anything but a
    /// regular file there is refused. Returns whether it wrote.
    pub fn write_in_place(&self, path: &str, content: &[u8], mode: u32) -> Result<bool> {
        if self.holds(path, content, mode) {
            return Ok(false);
        }
        let (dir, name) = self.parent_made(path)?;
        let shown = self.shown(path);
        let flags = OFlag::O_WRONLY
            | OFlag::O_CREAT
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_CLOEXEC;
        let fd = match openat(&dir, name, flags, Mode::from_bits_truncate(mode)) {
            Ok(fd) => fd,
            Err(Errno::ELOOP) => return Err(self.refuse(&shown, "it is a symlink".to_owned())),
            Err(Errno::ENXIO) => return Err(self.refuse(&shown, "it is a FIFO".to_owned())),
            Err(errno) => return Err(self.io(&shown, errno.into())),
        };
        let mut file = File::from(fd);
        let file_type = file.metadata().map_err(|e| self.io(&shown, e))?.file_type();
        if !file_type.is_file() {
            return Err(self.refuse(&shown, format!("it is {}", describe(&file_type))));
        }
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .and_then(|()| file.write_all(content))
            .and_then(|()| file.set_len(content.len() as u64))
            .and_then(|()| file.sync_all())
            .map_err(|e| self.io(&shown, e))?;
        Ok(true)
    }

    /// Points the symlink `path` at `target` (a path as the clone sees it), replacing
    /// whatever is there by a rename. Returns whether it changed.
    pub fn link(&self, path: &str, target: &str) -> Result<bool> {
        if self.read_link(path).ok().flatten().as_deref() == Some(Path::new(target)) {
            return Ok(false);
        }
        let (dir, name) = self.parent_made(path)?;
        let shown = self.shown(path);
        for _ in 0..16 {
            let tmp = format!(
                ".clone-army-link-{}",
                crate::sys::temp_names::random_suffix()
            );
            match symlinkat(target, &dir, tmp.as_str()) {
                Ok(()) => {
                    return renameat(&dir, tmp.as_str(), &dir, name)
                        .map(|()| true)
                        .map_err(|e| {
                            let _ = unlinkat(&dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
                            self.io(&shown, e.into())
                        });
                }
                Err(Errno::EEXIST) => continue,
                Err(errno) => return Err(self.io(&shown, errno.into())),
            }
        }
        Err(self.io(&shown, Errno::EEXIST.into()))
    }

    /// Removes the file or symlink `path` (never what a symlink points at). Returns
    /// whether it was there.
    pub fn remove(&self, path: &str) -> Result<bool> {
        let relative = relative_components(path)?;
        let Some((last, parents)) = relative.split_last() else {
            return Err(self.refuse(&self.shown(path), "it is the tree itself".to_owned()));
        };
        let Some(dir) = self.walk(parents, path)? else {
            return Ok(false);
        };
        match unlinkat(&dir, *last, UnlinkatFlags::NoRemoveDir) {
            Ok(()) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(errno) => Err(self.io(&self.shown(path), errno.into())),
        }
    }

    /// Whether `path` is a real directory (not a symlink to one); `false` when it, or a
    /// directory on the way, is missing or is anything else.
    pub fn is_dir(&self, path: &str) -> Result<bool> {
        match self.open_last(path) {
            Ok(Some(fd)) => Ok(File::from(fd)
                .metadata()
                .is_ok_and(|m| m.file_type().is_dir())),
            Ok(None) | Err(Error::UnsafePath { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Moves the directory `path` out of the tree to `to_dir/to_name` (a host directory
    /// the clone cannot write: it is opened `O_NOFOLLOW`) by one rename on the same file
    /// system, never replacing what is there. Nothing in the directory is read or
    /// followed: it goes as it is. Returns whether it moved; `false` when `path` is
    /// missing or is no real directory, or `to_name` is taken. Whatever arrives is checked
    /// to be a directory after the rename too, and removed (itself) if it is not, so a
    /// clone that swapped the directory for a symlink in between moves nothing usable.
    pub fn move_dir_out(&self, path: &str, to_dir: &Path, to_name: &str) -> Result<bool> {
        let relative = relative_components(path)?;
        let Some((last, parents)) = relative.split_last() else {
            return Err(self.refuse(&self.shown(path), "it is the tree itself".to_owned()));
        };
        if !self.is_dir(path)? {
            return Ok(false);
        }
        let Some(dir) = self.walk(parents, path)? else {
            return Ok(false);
        };
        let target = open_host_dir(to_dir)?;
        let shown = self.shown(path);
        match nix::fcntl::renameat2(
            &dir,
            *last,
            &target,
            to_name,
            nix::fcntl::RenameFlags::RENAME_NOREPLACE,
        ) {
            Ok(()) => {}
            Err(Errno::ENOENT | Errno::EEXIST) => return Ok(false),
            Err(errno) => return Err(self.io(&shown, errno.into())),
        }
        let arrived = to_dir.join(to_name);
        let is_dir = match openat(&target, to_name, path_flags(), Mode::empty()) {
            Ok(fd) => File::from(fd)
                .metadata()
                .map_err(|e| Error::io("inspect", &arrived, e))?
                .is_dir(),
            Err(errno) => return Err(Error::io("inspect", &arrived, errno.into())),
        };
        if !is_dir {
            unlinkat(&target, to_name, UnlinkatFlags::NoRemoveDir)
                .map_err(|e| Error::io("remove", &arrived, e.into()))?;
            return Err(self.refuse(&shown, "it changed under the helper".to_owned()));
        }
        Ok(true)
    }

    /// Whether `path` is a regular file that reads `content` with `mode`.
    fn holds(&self, path: &str, content: &[u8], mode: u32) -> bool {
        let Ok(Some(fd)) = self.open_last(path) else {
            return false;
        };
        let same_mode = File::from(fd)
            .metadata()
            .is_ok_and(|m| m.is_file() && m.mode() & 0o7777 == mode);
        same_mode
            && self
                .read(path, content.len() as u64)
                .ok()
                .flatten()
                .as_deref()
                == Some(content)
    }

    /// The directory that holds `path`, and the last component. A directory on the way
    /// that is missing is made (0755); anything else in its place (a symlink, a file, a
    /// FIFO) is removed first (itself, never what it points at).
    fn parent_made<'p>(&self, path: &'p str) -> Result<(OwnedFd, &'p OsStr)> {
        let relative = relative_components(path)?;
        let Some((last, parents)) = relative.split_last() else {
            return Err(self.refuse(&self.shown(path), "it is the tree itself".to_owned()));
        };
        let mut dir =
            nix::fcntl::open(&self.root, path_flags() | OFlag::O_DIRECTORY, Mode::empty())
                .map_err(|e| self.io(&self.shown, e.into()))?;
        let mut walked = PathBuf::new();
        for name in parents {
            walked.push(name);
            let shown = self.shown.join(&walked);
            let is_dir = match openat(&dir, *name, path_flags(), Mode::empty()) {
                Ok(fd) => {
                    let kind = File::from(fd).metadata().map_err(|e| self.io(&shown, e))?;
                    if !kind.is_dir() {
                        unlinkat(&dir, *name, UnlinkatFlags::NoRemoveDir)
                            .map_err(|e| self.io(&shown, e.into()))?;
                    }
                    kind.is_dir()
                }
                Err(Errno::ENOENT) => false,
                Err(errno) => return Err(self.io(&shown, errno.into())),
            };
            if !is_dir {
                match mkdirat(&dir, *name, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(errno) => return Err(self.io(&shown, errno.into())),
                }
            }
            let next = openat(
                &dir,
                *name,
                path_flags() | OFlag::O_DIRECTORY,
                Mode::empty(),
            )
            .map_err(|e| match e {
                Errno::ELOOP | Errno::ENOTDIR => {
                    self.refuse(&shown, "it changed under the helper".to_owned())
                }
                errno => self.io(&shown, errno.into()),
            })?;
            dir = next;
        }
        Ok((dir, *last))
    }

    fn create_temporary(&self, dir: &OwnedFd, shown: &Path) -> Result<(String, OwnedFd)> {
        create_temporary_in(dir, ".clone-army-").map_err(|errno| self.io(shown, errno.into()))
    }

    fn open_last(&self, path: &str) -> Result<Option<OwnedFd>> {
        let relative = relative_components(path)?;
        let Some((last, parents)) = relative.split_last() else {
            return Err(self.refuse(&self.shown(path), "it is the tree itself".to_owned()));
        };
        let Some(dir) = self.walk(parents, path)? else {
            return Ok(None);
        };
        let shown = self.shown(path);
        match openat(&dir, *last, path_flags(), Mode::empty()) {
            Ok(fd) => {
                let is_link = File::from(fd.try_clone().map_err(|e| self.io(&shown, e))?)
                    .metadata()
                    .map_err(|e| self.io(&shown, e))?
                    .file_type()
                    .is_symlink();
                if is_link {
                    return Err(self.refuse(&shown, "it is a symlink".to_owned()));
                }
                Ok(Some(fd))
            }
            Err(Errno::ENOENT) => Ok(None),
            Err(errno) => Err(self.io(&shown, errno.into())),
        }
    }

    /// The directory `components` name below the root, every one checked to be a real
    /// directory; `None` when one is missing.
    fn walk(&self, components: &[&OsStr], path: &str) -> Result<Option<OwnedFd>> {
        let open_dir = |at: Option<&OwnedFd>, name: &Path| -> std::result::Result<OwnedFd, Errno> {
            match at {
                Some(dir) => openat(dir, name, path_flags(), Mode::empty()),
                None => nix::fcntl::open(name, path_flags() | OFlag::O_DIRECTORY, Mode::empty()),
            }
        };
        let mut current = match open_dir(None, &self.root) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            Err(errno) => return Err(self.io(&self.shown, errno.into())),
        };
        let mut walked = PathBuf::new();
        for name in components {
            walked.push(name);
            let shown = self.shown.join(&walked);
            let next = match open_dir(Some(&current), Path::new(name)) {
                Ok(fd) => fd,
                Err(Errno::ENOENT) => return Ok(None),
                Err(errno) => return Err(self.io(&shown, errno.into())),
            };
            let file_type = File::from(next.try_clone().map_err(|e| self.io(&shown, e))?)
                .metadata()
                .map_err(|e| self.io(&shown, e))?
                .file_type();
            if !file_type.is_dir() {
                return Err(self.refuse(
                    &self.shown(path),
                    format!(
                        "{} on its way is {}",
                        walked.display(),
                        describe(&file_type)
                    ),
                ));
            }
            current = next;
        }
        Ok(Some(current))
    }

    fn shown(&self, path: &str) -> PathBuf {
        self.shown.join(path.trim_start_matches('/'))
    }

    fn refuse(&self, path: &Path, reason: String) -> Error {
        Error::UnsafePath {
            clone: self.clone.clone(),
            path: path.to_owned(),
            reason,
        }
    }

    fn io(&self, path: &Path, source: std::io::Error) -> Error {
        Error::io("reach", path, source)
    }
}

/// Makes the directory `dir/name` with exactly `mode`, for a directory a clone is then
/// given to write (its SSL directory): `dir` is the host's and opened `O_NOFOLLOW`, the new
/// directory is made by `mkdirat` and its mode set through its own descriptor. One that
/// is already there is kept as it is (what the clone made of its mode is the clone's),
/// provided it is a real directory; anything else there is refused, never followed.
/// Returns whether it made it.
pub fn make_dir_in(dir: &Path, name: &str, mode: u32) -> Result<bool> {
    let parent = open_host_dir(dir)?;
    let shown = dir.join(name);
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(Error::Internal(format!("{name:?} is not a plain name")));
    }
    let made = match mkdirat(&parent, name, Mode::from_bits_truncate(0o700)) {
        Ok(()) => true,
        Err(Errno::EEXIST) => false,
        Err(errno) => return Err(Error::io("create directory", &shown, errno.into())),
    };
    let fd = openat(
        &parent,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        Errno::ELOOP | Errno::ENOTDIR => Error::UnsafePath {
            clone: String::new(),
            path: shown.clone(),
            reason: "it is not a directory".to_owned(),
        },
        errno => Error::io("open", &shown, errno.into()),
    })?;
    if made {
        File::from(fd)
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io("set the mode of", &shown, e))?;
    }
    Ok(made)
}

/// A file on the host whose path the helper's caller gave. Nothing found at such a path is
/// trusted more than a clone's file:
///
/// - its directory is opened once, as the path names it (the caller's own path, which
///   `O_NOFOLLOW` would resolve the same way), and everything after goes through that
///   descriptor, so the directory looked at is the one read or written; a missing
///   directory is refused, never made;
/// - the file itself is opened `O_PATH | O_NOFOLLOW`: a symlink is refused, never
///   followed, and nothing is opened for reading before it is known to be a regular file
///   (`/dev/zero`, a FIFO, a directory are refused without a byte read or a wait);
/// - at most `limit` bytes are read, whatever its size says by then;
/// - it is replaced only by a temporary file beside it renamed over it, never rewritten in
///   place, so the inode that was there (a hard link to anything at all) never changes.
pub struct HostFile {
    path: PathBuf,
    dir: OwnedFd,
    name: OsString,
}

/// Why a [`HostFile`] was not read or replaced.
#[derive(Debug, thiserror::Error)]
pub enum HostFileError {
    /// What is there may not be read or replaced: the reason, as "it is a FIFO".
    #[error("{0}")]
    Refused(String),
    #[error("cannot {action} it: {source}")]
    Io {
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl HostFileError {
    /// The protocol's error for the file at `path` given as `field`: a refusal is bad input
    /// in that field, a failed system call an I/O error on the path.
    pub fn into_error(self, field: &'static str, path: &Path) -> Error {
        match self {
            HostFileError::Refused(reason) => Error::InvalidArgument {
                field,
                value: path.display().to_string(),
                reason,
            },
            HostFileError::Io { action, source } => Error::io(action, path, source),
        }
    }

    fn io(action: &'static str, errno: Errno) -> Self {
        HostFileError::Io {
            action,
            source: errno.into(),
        }
    }
}

impl HostFile {
    /// The file at `path`, its directory opened (which must exist); the file itself may be
    /// missing.
    pub fn at(path: &Path) -> std::result::Result<HostFile, HostFileError> {
        let Some(Component::Normal(name)) = path.components().next_back() else {
            return Err(HostFileError::Refused(
                "it does not end in a file name".to_owned(),
            ));
        };
        let mut dir_path: PathBuf = path.components().collect();
        dir_path.pop();
        if dir_path.as_os_str().is_empty() {
            dir_path.push(".");
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let dir =
            nix::fcntl::open(&dir_path, flags, Mode::empty()).map_err(|errno| match errno {
                Errno::ENOENT => HostFileError::Refused(format!(
                    "its directory {} does not exist (it is never made)",
                    dir_path.display()
                )),
                Errno::ENOTDIR => HostFileError::Refused(format!(
                    "{} on its way is not a directory",
                    dir_path.display()
                )),
                errno => HostFileError::io("open the directory of", errno),
            })?;
        Ok(HostFile {
            path: path.to_owned(),
            dir,
            name: name.to_owned(),
        })
    }

    /// The file `name` in the same directory (the descriptor already open).
    pub fn sibling(&self, name: &OsStr) -> std::result::Result<HostFile, HostFileError> {
        if name.is_empty() || name == "." || name == ".." || name.as_encoded_bytes().contains(&b'/')
        {
            return Err(HostFileError::Refused(format!(
                "{name:?} is not a plain file name"
            )));
        }
        let dir = self.dir.try_clone().map_err(|source| HostFileError::Io {
            action: "open the directory of",
            source,
        })?;
        Ok(HostFile {
            path: self.path.with_file_name(name),
            dir,
            name: name.to_owned(),
        })
    }

    /// The path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The names of the entries of its directory (read through the descriptor).
    pub fn names_beside(&self) -> std::result::Result<Vec<OsString>, HostFileError> {
        let listed = std::fs::read_dir(format!("/proc/self/fd/{}", self.dir.as_raw_fd())).map_err(
            |source| HostFileError::Io {
                action: "list the directory of",
                source,
            },
        )?;
        Ok(listed.flatten().map(|entry| entry.file_name()).collect())
    }

    /// The whole regular file, at most `limit` bytes of it; `None` when nothing is there.
    pub fn read(&self, limit: u64) -> std::result::Result<Option<Vec<u8>>, HostFileError> {
        Ok(self.read_with_metadata(limit)?.map(|(content, _)| content))
    }

    /// The first `count` bytes of the regular file (all of it when it is shorter), for a
    /// look at what wrote it; `None` when nothing is there.
    pub fn head(&self, count: u64) -> std::result::Result<Option<Vec<u8>>, HostFileError> {
        let Some((fd, _)) = self.open_regular()? else {
            return Ok(None);
        };
        self.read_at_most(&fd, count).map(Some)
    }

    /// The regular file opened for reading (through its descriptor, never the path again)
    /// with what it was when opened, for a reader that follows it as it grows and keeps
    /// it open across renames (a log rotated away); `None` when nothing is there.
    pub fn open_to_follow(
        &self,
    ) -> std::result::Result<Option<(File, std::fs::Metadata)>, HostFileError> {
        let Some((fd, metadata)) = self.open_regular()? else {
            return Ok(None);
        };
        let file = File::options()
            .read(true)
            .custom_flags(reopen_flags())
            .open(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(|source| HostFileError::Io {
                action: "open",
                source,
            })?;
        Ok(Some((file, metadata)))
    }

    /// Puts `content` there with `mode` in one rename: whatever entry was there (a file,
    /// and so far as the caller did not look first, a symlink) is replaced, never written
    /// through. The caller decides first whether what is there may go.
    pub fn replace(&self, content: &[u8], mode: u32) -> std::result::Result<(), HostFileError> {
        let prefix = format!(".{}.clone-army-", self.name.to_string_lossy());
        let (tmp, fd) = create_temporary_in(&self.dir, &prefix)
            .map_err(|errno| HostFileError::io("create a temporary file beside", errno))?;
        let written = (|| {
            let mut file = File::from(fd);
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            file.write_all(content)?;
            file.sync_all()
        })()
        .map_err(|source| HostFileError::Io {
            action: "write",
            source,
        });
        let renamed = written.and_then(|()| {
            renameat(&self.dir, tmp.as_str(), &self.dir, self.name.as_os_str())
                .map_err(|errno| HostFileError::io("rename into place", errno))
        });
        if renamed.is_err() {
            let _ = unlinkat(&self.dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
        }
        renamed
    }

    fn read_with_metadata(
        &self,
        limit: u64,
    ) -> std::result::Result<Option<(Vec<u8>, std::fs::Metadata)>, HostFileError> {
        let Some((fd, metadata)) = self.open_regular()? else {
            return Ok(None);
        };
        if metadata.size() > limit {
            return Err(HostFileError::Refused(host_too_large(
                metadata.size(),
                limit,
            )));
        }
        let content = self.read_at_most(&fd, limit + 1)?;
        if content.len() as u64 > limit {
            return Err(HostFileError::Refused(host_too_large(
                content.len() as u64,
                limit,
            )));
        }
        Ok(Some((content, metadata)))
    }

    /// The entry, opened `O_PATH | O_NOFOLLOW`, when it is a regular file; `None` when it
    /// is missing; refused when it is anything else.
    fn open_regular(
        &self,
    ) -> std::result::Result<Option<(OwnedFd, std::fs::Metadata)>, HostFileError> {
        let fd = match openat(
            &self.dir,
            self.name.as_os_str(),
            path_flags(),
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            Err(errno) => return Err(HostFileError::io("open", errno)),
        };
        let metadata = fd
            .try_clone()
            .map(File::from)
            .and_then(|file| file.metadata())
            .map_err(|source| HostFileError::Io {
                action: "inspect",
                source,
            })?;
        let file_type = metadata.file_type();
        if !file_type.is_file() {
            return Err(HostFileError::Refused(format!(
                "it is {}, not a regular file",
                describe(&file_type)
            )));
        }
        Ok(Some((fd, metadata)))
    }

    /// At most `count` bytes of the regular file `fd` holds, reopened through the
    /// descriptor (the very inode checked, never the path again).
    fn read_at_most(
        &self,
        fd: &OwnedFd,
        count: u64,
    ) -> std::result::Result<Vec<u8>, HostFileError> {
        let io = |source| HostFileError::Io {
            action: "read",
            source,
        };
        let file = File::options()
            .read(true)
            .custom_flags(reopen_flags())
            .open(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(io)?;
        let mut content = Vec::new();
        file.take(count).read_to_end(&mut content).map_err(io)?;
        Ok(content)
    }
}

/// Whether the host file at `path` is a regular file that reads exactly `content` with
/// `mode`, looked at as [`HostFile`] reads (never through a symlink, never blocking, at
/// most `content`'s length read): for a writer that skips a write that changes nothing.
/// Anything else, an error included, is "no": the writer then replaces it.
pub fn host_file_holds(path: &Path, content: &[u8], mode: u32) -> bool {
    let Ok(file) = HostFile::at(path) else {
        return false;
    };
    matches!(
        file.read_with_metadata(content.len() as u64),
        Ok(Some((existing, metadata)))
            if metadata.mode() & 0o7777 == mode && existing == content
    )
}

/// A new file in `dir` named `prefix` and a random suffix, created `O_EXCL | O_NOFOLLOW`
/// (never through a planted name) with mode 0600 until its writer sets its own; its name
/// and descriptor.
fn create_temporary_in(
    dir: &OwnedFd,
    prefix: &str,
) -> std::result::Result<(String, OwnedFd), Errno> {
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    for _ in 0..16 {
        let name = format!("{prefix}{}", crate::sys::temp_names::random_suffix());
        match openat(dir, name.as_str(), flags, Mode::from_bits_truncate(0o600)) {
            Ok(fd) => return Ok((name, fd)),
            Err(Errno::EEXIST) => continue,
            Err(errno) => return Err(errno),
        }
    }
    Err(Errno::EEXIST)
}

/// A host directory, opened `O_NOFOLLOW` (a symlink in its place is refused).
fn open_host_dir(dir: &Path) -> Result<OwnedFd> {
    nix::fcntl::open(dir, path_flags() | OFlag::O_DIRECTORY, Mode::empty())
        .map_err(|errno| Error::io("open", dir, errno.into()))
}

/// `O_PATH`: nothing is opened for reading (no FIFO blocks, no device is touched) until
/// the type is known; `O_NOFOLLOW`: a symlink is opened as itself.
fn path_flags() -> OFlag {
    OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// A regular file does not block; these only keep the reopen harmless whatever it meets.
fn reopen_flags() -> i32 {
    OFlag::O_NONBLOCK.bits() | OFlag::O_NOCTTY.bits()
}

/// The plain names of `path` below the tree: `..` and anything but names are refused, so
/// a caller's path can never climb out either.
fn relative_components(path: &str) -> Result<Vec<&OsStr>> {
    Path::new(path.trim_start_matches('/'))
        .components()
        .map(|component| match component {
            Component::Normal(name) => Ok(name),
            Component::CurDir => Ok(OsStr::new(".")),
            _ => Err(Error::Internal(format!(
                "{path:?} is not a plain path inside a clone"
            ))),
        })
        .filter(|c| !matches!(c, Ok(name) if *name == OsStr::new(".")))
        .collect()
}

fn describe(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "a symlink"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

fn too_large(size: u64, limit: u64) -> String {
    format!("it is {size} bytes, more than the {limit} read from a clone")
}

fn host_too_large(size: u64, limit: u64) -> String {
    format!("it is {size} bytes, more than the {limit} bytes read of such a file")
}

/// What the tests of every reader of a caller's path share.
#[cfg(test)]
pub mod testing {
    use std::path::Path;
    use std::time::Duration;

    /// `work`'s result, or a failed test when it takes longer than `seconds`: a read that
    /// blocks (a FIFO opened for reading) fails the test instead of hanging it.
    pub fn within_seconds<T: Send + 'static>(
        seconds: u64,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(work());
        });
        receiver
            .recv_timeout(Duration::from_secs(seconds))
            .expect("it hung: a reader of a caller's path blocked")
    }

    /// A FIFO at `path`, with no writer: whoever opens it for reading blocks.
    pub fn fifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Scene {
        dir: tempfile::TempDir,
        outside: PathBuf,
    }

    impl Scene {
        /// A clone tree with `etc/puppet/puppet.conf`, and a host file beside it.
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let tree = dir.path().join("tree");
            std::fs::create_dir_all(tree.join("etc/puppet")).unwrap();
            std::fs::write(tree.join("etc/puppet/puppet.conf"), "[main]\n").unwrap();
            let outside = dir.path().join("host-secret");
            std::fs::write(&outside, "HOST SECRET\n").unwrap();
            Scene { dir, outside }
        }

        fn tree(&self) -> CloneTree {
            CloneTree::new(
                "c1",
                self.dir.path().join("tree"),
                PathBuf::from("/var/lib/puppet-clone-army/c1-overlay"),
            )
        }

        fn at(&self, path: &str) -> PathBuf {
            self.dir.path().join("tree").join(path)
        }
    }

    fn refusal(result: Result<Option<Vec<u8>>>) -> (String, String) {
        match result {
            Err(Error::UnsafePath {
                clone,
                path,
                reason,
            }) => {
                assert_eq!(clone, "c1");
                (path.display().to_string(), reason)
            }
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn plain_files_are_read_and_missing_ones_are_none() {
        let scene = Scene::new();
        let tree = scene.tree();
        assert_eq!(
            tree.read("/etc/puppet/puppet.conf", 64).unwrap().unwrap(),
            b"[main]\n"
        );
        assert_eq!(tree.read("etc/puppet/missing", 64).unwrap(), None);
        assert_eq!(tree.read("no/such/dir/file", 64).unwrap(), None);
    }

    #[test]
    fn symlinks_are_refused_wherever_they_are_on_the_path() {
        let scene = Scene::new();
        let tree = scene.tree();
        // The last component, absolute and relative, out of the tree and inside it.
        symlink(&scene.outside, scene.at("etc/abs")).unwrap();
        symlink("../../host-secret", scene.at("etc/rel")).unwrap();
        symlink("puppet/puppet.conf", scene.at("etc/inside")).unwrap();
        for name in ["abs", "rel", "inside"] {
            let (path, reason) = refusal(tree.read(&format!("etc/{name}"), 64));
            assert_eq!(
                path,
                format!("/var/lib/puppet-clone-army/c1-overlay/etc/{name}")
            );
            assert_eq!(reason, "it is a symlink");
        }
        // A directory on the way.
        std::fs::create_dir(scene.dir.path().join("hostdir")).unwrap();
        std::fs::write(scene.dir.path().join("hostdir/puppet.conf"), "HOST").unwrap();
        symlink(scene.dir.path().join("hostdir"), scene.at("var")).unwrap();
        let (path, reason) = refusal(tree.read("var/puppet.conf", 64));
        assert!(path.ends_with("c1-overlay/var/puppet.conf"), "{path}");
        assert_eq!(reason, "var on its way is a symlink");
    }

    #[test]
    fn fifos_are_refused_without_blocking_and_big_files_are_cut() {
        let scene = Scene::new();
        let tree = scene.tree();
        nix::unistd::mkfifo(&scene.at("etc/fifo"), Mode::from_bits_truncate(0o600)).unwrap();
        let (_, reason) = refusal(tree.read("etc/fifo", 64));
        assert_eq!(reason, "it is a FIFO");
        std::fs::write(scene.at("etc/big"), vec![b'x'; 100]).unwrap();
        let (_, reason) = refusal(tree.read("etc/big", 99));
        assert_eq!(
            reason,
            "it is 100 bytes, more than the 99 read from a clone"
        );
        assert_eq!(tree.read("etc/big", 100).unwrap().unwrap().len(), 100);
        let (_, reason) = refusal(tree.read("etc/puppet", 64));
        assert_eq!(reason, "it is a directory");
        let (_, reason) = refusal(tree.read("etc/puppet/puppet.conf/x", 64));
        assert_eq!(
            reason,
            "etc/puppet/puppet.conf on its way is a regular file"
        );
    }

    /// A reader with a budget reads a changed file only as far as it afforded: a file it
    /// cannot afford is not read at all, and one that holds more than was afforded (it
    /// grew after it was measured) is not taken either.
    #[test]
    fn a_changed_file_is_read_only_as_far_as_it_was_afforded() {
        let scene = Scene::new();
        let tree = scene.tree();
        std::fs::write(scene.at("etc/report"), vec![b'x'; 100]).unwrap();
        let mut asked = None;
        let refused = tree.read_if_changed("etc/report", 1000, None, |size| {
            asked = Some(size);
            None
        });
        assert!(matches!(refused, Ok(Fresh::Postponed)), "{refused:?}");
        assert_eq!(asked, Some(100));
        let short = tree.read_if_changed("etc/report", 1000, None, |size| Some(size - 1));
        assert!(matches!(short, Ok(Fresh::Postponed)), "{short:?}");
        let read = tree.read_if_changed("etc/report", 1000, None, Some);
        assert!(matches!(read, Ok(Fresh::Read { content, .. }) if content.len() == 100));
    }

    #[test]
    fn links_are_read_as_links() {
        let scene = Scene::new();
        let tree = scene.tree();
        symlink("/dev/null", scene.at("etc/masked")).unwrap();
        assert_eq!(
            tree.read_link("/etc/masked").unwrap(),
            Some(PathBuf::from("/dev/null"))
        );
        assert_eq!(tree.read_link("/etc/puppet/puppet.conf").unwrap(), None);
        assert_eq!(tree.read_link("/etc/missing").unwrap(), None);
        symlink(scene.dir.path(), scene.at("lib")).unwrap();
        assert!(matches!(
            tree.read_link("/lib/x"),
            Err(Error::UnsafePath { .. })
        ));
    }

    #[test]
    fn writes_replace_what_was_planted_and_never_follow_it() {
        let scene = Scene::new();
        let tree = scene.tree();
        symlink(&scene.outside, scene.at("etc/unit")).unwrap();
        assert!(tree.write("etc/unit", b"[Unit]\n", 0o644).unwrap());
        assert!(!tree.write("etc/unit", b"[Unit]\n", 0o644).unwrap());
        assert_eq!(std::fs::read(&scene.outside).unwrap(), b"HOST SECRET\n");
        assert_eq!(std::fs::read(scene.at("etc/unit")).unwrap(), b"[Unit]\n");
        assert!(tree.write("new/dir/file", b"x", 0o600).unwrap());
        assert_eq!(
            std::fs::metadata(scene.at("new/dir/file")).unwrap().mode() & 0o7777,
            0o600
        );
        // In place: a regular file keeps its inode; a symlink or FIFO is refused.
        let inode = std::fs::metadata(scene.at("etc/puppet/puppet.conf"))
            .unwrap()
            .ino();
        assert!(tree
            .write_in_place("etc/puppet/puppet.conf", b"[agent]\n", 0o644)
            .unwrap());
        assert_eq!(
            std::fs::metadata(scene.at("etc/puppet/puppet.conf"))
                .unwrap()
                .ino(),
            inode
        );
        symlink(&scene.outside, scene.at("etc/bound")).unwrap();
        let error = tree.write_in_place("etc/bound", b"x", 0o644).unwrap_err();
        assert!(matches!(error, Error::UnsafePath { .. }), "{error:?}");
        nix::unistd::mkfifo(&scene.at("etc/fifo"), Mode::from_bits_truncate(0o600)).unwrap();
        let error = tree.write_in_place("etc/fifo", b"x", 0o644).unwrap_err();
        assert!(matches!(error, Error::UnsafePath { .. }), "{error:?}");
        // Links and removal act on the entry, never on what it points at.
        assert!(tree.link("etc/bound", "/dev/null").unwrap());
        assert_eq!(
            std::fs::read_link(scene.at("etc/bound")).unwrap(),
            Path::new("/dev/null")
        );
        assert!(tree.remove("etc/bound").unwrap());
        assert!(!tree.remove("etc/bound").unwrap());
        assert!(scene.outside.exists());
        let leftovers: Vec<_> = std::fs::read_dir(scene.at("etc"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn paths_that_climb_are_refused() {
        let scene = Scene::new();
        assert!(matches!(
            scene.tree().read("../host-secret", 64),
            Err(Error::Internal(_))
        ));
    }

    #[test]
    fn a_replaced_host_file_leaves_the_inode_that_was_there_unchanged() {
        let scene = Scene::new();
        // A hard link to a host file, where a page should go.
        let link = scene.dir.path().join("page.html");
        std::fs::hard_link(&scene.outside, &link).unwrap();
        HostFile::at(&link)
            .unwrap()
            .replace(b"page", 0o644)
            .unwrap();
        assert_eq!(std::fs::read(&link).unwrap(), b"page");
        assert_eq!(std::fs::read(&scene.outside).unwrap(), b"HOST SECRET\n");
        let mode = std::fs::metadata(&link).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o644);
    }

    #[test]
    fn a_host_file_is_read_whole_or_refused_and_its_head_at_most() {
        let scene = Scene::new();
        let file = HostFile::at(&scene.outside).unwrap();
        assert_eq!(file.read(64).unwrap().unwrap(), b"HOST SECRET\n");
        assert_eq!(file.head(4).unwrap().unwrap(), b"HOST");
        let error = file.read(4).unwrap_err().to_string();
        assert_eq!(
            error,
            "it is 12 bytes, more than the 4 bytes read of such a file"
        );
        let missing = file.sibling(OsStr::new("missing")).unwrap();
        assert_eq!(missing.read(64).unwrap(), None);
        assert!(file.sibling(OsStr::new("..")).is_err());
        assert!(file.sibling(OsStr::new("a/b")).is_err());
        assert!(HostFile::at(Path::new("/")).is_err());
    }

    #[test]
    fn make_dir_in_makes_0700_keeps_a_dir_and_refuses_a_symlink() {
        let scene = Scene::new();
        let host = scene.dir.path().join("ssl");
        std::fs::create_dir(&host).unwrap();
        assert!(make_dir_in(&host, "c1.example.com", 0o700).unwrap());
        let made = host.join("c1.example.com");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        assert_eq!(mode(&made), 0o700);
        // What the clone made of it is the clone's: kept as it is.
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o771)).unwrap();
        assert!(!make_dir_in(&host, "c1.example.com", 0o700).unwrap());
        assert_eq!(mode(&made), 0o771);
        // A symlink in its place (to a host directory) is refused, never followed.
        let target = scene.dir.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        symlink(&target, host.join("c2.example.com")).unwrap();
        let error = make_dir_in(&host, "c2.example.com", 0o700).unwrap_err();
        assert_eq!(error.kind(), "unsafe-path", "{error}");
        assert_eq!(mode(&target), 0o755);
        // Nor is the host directory itself reached through a symlink.
        symlink(&host, scene.dir.path().join("ssl-link")).unwrap();
        assert!(make_dir_in(&scene.dir.path().join("ssl-link"), "c3", 0o700).is_err());
        assert!(!host.join("c3").exists());
        assert!(make_dir_in(&host, "..", 0o700).is_err());
    }

    #[test]
    fn move_dir_out_moves_a_directory_as_it_is_and_nothing_else() {
        let scene = Scene::new();
        let host = scene.dir.path().join("ssl");
        std::fs::create_dir(&host).unwrap();
        std::fs::create_dir_all(scene.at("var/lib/puppet/ssl/certs")).unwrap();
        std::fs::write(scene.at("var/lib/puppet/ssl/certs/c1.pem"), "cert").unwrap();
        symlink(&scene.outside, scene.at("var/lib/puppet/ssl/link")).unwrap();
        let tree = scene.tree();
        assert!(tree.is_dir("var/lib/puppet/ssl").unwrap());
        assert!(tree
            .move_dir_out("/var/lib/puppet/ssl", &host, "c1.example.com")
            .unwrap());
        assert!(!scene.at("var/lib/puppet/ssl").exists());
        assert_eq!(
            std::fs::read_to_string(host.join("c1.example.com/certs/c1.pem")).unwrap(),
            "cert"
        );
        // Moved as it is: the link inside is still a link.
        assert!(std::fs::symlink_metadata(host.join("c1.example.com/link"))
            .unwrap()
            .is_symlink());
        // Missing: nothing moved.
        assert!(!tree
            .move_dir_out("var/lib/puppet/ssl", &host, "c2.example.com")
            .unwrap());
        // A symlink (to a host directory) is no directory: not moved.
        symlink(scene.dir.path(), scene.at("var/lib/puppet/ssl")).unwrap();
        assert!(!tree.is_dir("var/lib/puppet/ssl").unwrap());
        assert!(!tree
            .move_dir_out("var/lib/puppet/ssl", &host, "c2.example.com")
            .unwrap());
        assert!(!host.join("c2.example.com").exists());
        // A taken name is never replaced.
        std::fs::remove_file(scene.at("var/lib/puppet/ssl")).unwrap();
        std::fs::create_dir(scene.at("var/lib/puppet/ssl")).unwrap();
        assert!(!tree
            .move_dir_out("var/lib/puppet/ssl", &host, "c1.example.com")
            .unwrap());
        assert!(scene.at("var/lib/puppet/ssl").is_dir());
        assert!(host.join("c1.example.com/certs/c1.pem").exists());
        // A symlink on the way is refused by is_dir's walk: nothing moved.
        std::fs::remove_dir_all(scene.at("var/lib/puppet")).unwrap();
        std::fs::create_dir_all(scene.dir.path().join("other/ssl")).unwrap();
        symlink(scene.dir.path().join("other"), scene.at("var/lib/puppet")).unwrap();
        assert!(!tree
            .move_dir_out("var/lib/puppet/ssl", &host, "c3.example.com")
            .unwrap());
        assert!(scene.dir.path().join("other/ssl").is_dir());
    }
}
