//! Reading a timeline back: the rotated files oldest first, then the current one; a line
//! that is not a sample (cut short when the recorder was killed, or written by something
//! else) is skipped and counted, never fatal.

use std::path::{Path, PathBuf};

use crate::protocol::error::{Error, Result};
use crate::record::sample::{Sample, TIMELINE_VERSION};

/// The most read of one timeline file (the recorder rotates far below this).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The files read, oldest first.
    pub files: Vec<PathBuf>,
    /// Samples in time order.
    pub samples: Vec<Sample>,
    /// Lines that were not samples of this timeline version.
    pub skipped: usize,
}

/// `path`'s rotated files (`path.N` down to `path.1`) and `path` itself, those that exist.
pub fn files_of(path: &Path) -> Vec<PathBuf> {
    let mut numbered: Vec<(u32, PathBuf)> = Vec::new();
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let prefix = format!("{}.", name.to_string_lossy());
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let file = entry.file_name().to_string_lossy().into_owned();
                if let Some(n) = file
                    .strip_prefix(&prefix)
                    .and_then(|n| n.parse::<u32>().ok())
                {
                    numbered.push((n, path.with_file_name(file)));
                }
            }
        }
    }
    numbered.sort_by_key(|n| std::cmp::Reverse(n.0));
    let mut files: Vec<PathBuf> = numbered.into_iter().map(|(_, p)| p).collect();
    if path.exists() {
        files.push(path.to_owned());
    }
    files
}

/// Reads the timeline at `path` (with its rotated files).
pub fn read(path: &Path) -> Result<Recording> {
    let files = files_of(path);
    if files.is_empty() {
        return Err(Error::InvalidArgument {
            field: "from",
            value: path.display().to_string(),
            reason: "no such timeline (nor rotated files of it)".to_owned(),
        });
    }
    let mut samples = Vec::new();
    let mut skipped = 0;
    for file in &files {
        let size = std::fs::metadata(file)
            .map_err(|e| Error::Internal(format!("cannot read {}: {e}", file.display())))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(Error::InvalidArgument {
                field: "from",
                value: file.display().to_string(),
                reason: format!(
                    "it is larger than {MAX_FILE_BYTES} bytes; not a timeline the recorder wrote"
                ),
            });
        }
        let bytes = std::fs::read(file)
            .map_err(|e| Error::Internal(format!("cannot read {}: {e}", file.display())))?;
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Sample>(line) {
                Ok(sample) if sample.timeline == TIMELINE_VERSION => samples.push(sample),
                _ => skipped += 1,
            }
        }
    }
    samples.sort_by_key(|s| s.t);
    Ok(Recording {
        files,
        samples,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::sample::Sampler;

    fn line(t: u64) -> String {
        let report = crate::record::sample::fixtures::report(t, vec![]);
        let sample = Sampler::default().sample(&report, Default::default(), 10);
        serde_json::to_string(&sample).unwrap()
    }

    #[test]
    fn rotated_files_come_first_and_bad_lines_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(dir.path().join("t.jsonl.2"), format!("{}\n", line(100))).unwrap();
        std::fs::write(
            dir.path().join("t.jsonl.1"),
            format!("{}\nnot json\n{{\"timeline\":99}}\n", line(110)),
        )
        .unwrap();
        let last = line(120);
        // The recorder killed half-way through its last line.
        std::fs::write(&path, format!("{last}\n{}", &last[..40])).unwrap();
        std::fs::write(dir.path().join("t.jsonl.old"), "ignored").unwrap();
        let recording = read(&path).unwrap();
        let names: Vec<String> = recording
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["t.jsonl.2", "t.jsonl.1", "t.jsonl"]);
        let times: Vec<u64> = recording.samples.iter().map(|s| s.t).collect();
        assert_eq!(times, [100, 110, 120]);
        assert_eq!(recording.skipped, 3);
    }

    #[test]
    fn a_missing_timeline_is_an_error_naming_from() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(&dir.path().join("none.jsonl")).unwrap_err();
        assert_eq!(e.kind(), "invalid-argument");
        assert!(e.to_string().contains("from"), "{e}");
    }
}
