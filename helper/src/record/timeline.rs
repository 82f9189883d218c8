//! The timeline file: JSON lines appended one whole line per write, rotated by size so a
//! recorder that runs for days stays within `max_bytes × (keep + 1)` on disk.
//!
//! Rotation is logrotate's numbering: `FILE` becomes `FILE.1`, `FILE.1` becomes `FILE.2`,
//! and so on up to `FILE.<keep>`; the oldest beyond that is removed. A reader takes the
//! files from the highest number down to `FILE` for the whole run.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::protocol::error::{Error, Result};

pub struct Timeline {
    path: PathBuf,
    max_bytes: u64,
    keep: u32,
    file: File,
    size: u64,
    /// How many times it rotated.
    pub rotations: u32,
}

impl Timeline {
    /// Opens `path` for appending (created 0644 when missing), as a regular file only.
    pub fn open(path: &Path, max_bytes: u64, keep: u32) -> Result<Timeline> {
        let file = open_append(path)?;
        let size = file
            .metadata()
            .map_err(|e| io_error(path, "cannot read the size of", e))?
            .len();
        Ok(Timeline {
            path: path.to_owned(),
            max_bytes,
            keep,
            file,
            size,
            rotations: 0,
        })
    }

    /// Appends `line` (no newline in it) and a newline in one write, rotating first when
    /// the file would grow past `max_bytes` (a file that is empty takes the line anyway).
    pub fn append(&mut self, line: &str) -> Result<()> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        if self.size > 0 && self.size + bytes.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        self.file
            .write_all(&bytes)
            .map_err(|e| io_error(&self.path, "cannot append to", e))?;
        self.size += bytes.len() as u64;
        Ok(())
    }

    fn rotate(&mut self) -> Result<()> {
        let numbered = |n: u32| PathBuf::from(format!("{}.{n}", self.path.display()));
        if self.keep == 0 {
            std::fs::remove_file(&self.path)
                .map_err(|e| io_error(&self.path, "cannot remove", e))?;
        } else {
            for n in (1..self.keep).rev() {
                let from = numbered(n);
                if from.exists() {
                    std::fs::rename(&from, numbered(n + 1))
                        .map_err(|e| io_error(&from, "cannot rotate", e))?;
                }
            }
            std::fs::rename(&self.path, numbered(1))
                .map_err(|e| io_error(&self.path, "cannot rotate", e))?;
        }
        self.file = open_append(&self.path)?;
        self.size = 0;
        self.rotations += 1;
        Ok(())
    }
}

fn open_append(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| io_error(path, "cannot open", e))?;
    let kind = file
        .metadata()
        .map_err(|e| io_error(path, "cannot read", e))?
        .file_type();
    if !kind.is_file() {
        return Err(Error::InvalidArgument {
            field: "output",
            value: path.display().to_string(),
            reason: "it is not a regular file".to_owned(),
        });
    }
    Ok(file)
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::Internal(format!("{what} the timeline {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_appended_and_rotated_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timeline.jsonl");
        let mut t = Timeline::open(&path, 25, 2).unwrap();
        for n in 0..7 {
            t.append(&format!("{{\"n\":{n}}}")).unwrap(); // 8 bytes a line
        }
        // 3 lines a file: [0 1 2] [3 4 5] [6]; keep 2 numbered files.
        assert_eq!(t.rotations, 2);
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(path.clone()), "{\"n\":6}\n");
        assert_eq!(
            read(dir.path().join("timeline.jsonl.1")),
            "{\"n\":3}\n{\"n\":4}\n{\"n\":5}\n"
        );
        assert_eq!(
            read(dir.path().join("timeline.jsonl.2")),
            "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n"
        );
        for n in 7..10 {
            t.append(&format!("{{\"n\":{n}}}")).unwrap();
        }
        // The oldest went: [3 4 5] is .2 now, and nothing is beyond it.
        assert_eq!(
            read(dir.path().join("timeline.jsonl.2")),
            "{\"n\":3}\n{\"n\":4}\n{\"n\":5}\n"
        );
        assert!(!dir.path().join("timeline.jsonl.3").exists());
    }

    #[test]
    fn an_existing_timeline_is_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "{\"old\":1}\n").unwrap();
        let mut t = Timeline::open(&path, 1 << 20, 1).unwrap();
        t.append("{\"new\":1}").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"old\":1}\n{\"new\":1}\n"
        );
    }

    #[test]
    fn a_symlink_or_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(Timeline::open(&link, 100, 1).is_err());
        assert!(Timeline::open(dir.path(), 100, 1).is_err());
    }
}
