//! Reading a timeline back: the rotated files oldest first, then the current one; a line
//! that is not a sample (cut short when the recorder was killed, or written by something
//! else) is skipped and counted, never fatal.
//!
//! The path is the caller's (`report --from`, which the `clone_army::report` task passes
//! on as root), so every file is read as a [`HostFile`]: never through a symlink, a
//! regular file only, at most [`MAX_FILE_BYTES`]. Anything else is refused naming `from`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::protocol::error::{Error, Result};
use crate::protocol::record::{Sample, TIMELINE_VERSION};
use crate::sys::confined::{HostFile, HostFileError};

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

/// A refusal of `file`, named as the caller's `from`.
fn refused(file: &Path) -> impl FnOnce(HostFileError) -> Error + '_ {
    move |e| e.into_error("from", file)
}

/// The names of `timeline`'s rotated files beside it (`NAME.N`), highest number first.
fn rotated_names(timeline: &HostFile, name: &str) -> Result<Vec<OsString>> {
    let prefix = format!("{name}.");
    let mut numbered: Vec<(u32, OsString)> = timeline
        .names_beside()
        .map_err(refused(timeline.path()))?
        .into_iter()
        .filter_map(|file| {
            let n = file.to_str()?.strip_prefix(&prefix)?.parse::<u32>().ok()?;
            Some((n, file))
        })
        .collect();
    numbered.sort_by_key(|n| std::cmp::Reverse(n.0));
    Ok(numbered.into_iter().map(|(_, file)| file).collect())
}

/// Reads the timeline at `path` (with its rotated files).
pub fn read(path: &Path) -> Result<Recording> {
    let timeline = HostFile::at(path).map_err(refused(path))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut files = Vec::new();
    let mut samples = Vec::new();
    let mut skipped = 0;
    // One file in memory at a time, parsed before the next is read.
    let mut take = |file: &Path, bytes: Vec<u8>| {
        files.push(file.to_owned());
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Sample>(line) {
                Ok(sample) if sample.timeline == TIMELINE_VERSION => samples.push(sample),
                _ => skipped += 1,
            }
        }
    };
    for rotated in rotated_names(&timeline, &name)? {
        let file = timeline.sibling(&rotated).map_err(refused(path))?;
        // A rotated file gone between the listing and the read was rotated away: skipped.
        if let Some(bytes) = file.read(MAX_FILE_BYTES).map_err(refused(file.path()))? {
            take(file.path(), bytes);
        }
    }
    if let Some(bytes) = timeline.read(MAX_FILE_BYTES).map_err(refused(path))? {
        take(path, bytes);
    }
    if files.is_empty() {
        return Err(Error::InvalidArgument {
            field: "from",
            value: path.display().to_string(),
            reason: "no such timeline (nor rotated files of it)".to_owned(),
        });
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
    use crate::sys::confined::testing::{fifo, within_seconds};

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

    /// Groups came in a later helper as a field of their own, without a new timeline
    /// version: a line written before (without the field) reads as a sample without
    /// groups, a grouped line reads back whole, and a field a later helper may add is
    /// passed over, so one timeline of both reads as one recording.
    #[test]
    fn lines_with_and_without_groups_read_as_one_recording() {
        use crate::record::groups::of_sample;
        use crate::record::sample::NewRun;
        let none = r#"{"count":0}"#;
        let old = format!(
            r#"{{"timeline":1,"t":100,"at":"x","period":10,"fleet":{{"clones":0,"running":0,"stopped":0,"unknown":0,"silent":0,"by_status":{{}}}},"runs":{{"count":0,"by_status":{{}},"total_time":{none},"config_retrieval_time":{none}}},"server":null,"puppetdb":null,"host":{{"load1":null,"mem_total_bytes":null,"mem_available_bytes":null,"cpu_busy":null}}}}"#
        );
        let report = crate::record::sample::fixtures::report(110, vec![]);
        let mut grouped = Sampler::default().sample(&report, Default::default(), 10);
        let run = NewRun {
            clone: "web1".to_owned(),
            status: crate::protocol::answers::RunStatus::Changed,
            total_time: Some(4.0),
            config_retrieval_time: Some(2.0),
            failure_kinds: Vec::new(),
            resources: Some(1200),
            would_change: None,
        };
        grouped.groups = Some(of_sample("pp_role", &[run], |_| Ok("web".to_owned())).unwrap());
        let grouped_line = serde_json::to_string(&grouped).unwrap();
        assert!(
            grouped_line.contains(r#""groups":{"by":"pp_role""#),
            "{grouped_line}"
        );
        assert!(
            !line(90).contains("groups"),
            "a sample without groups has no field"
        );
        let later = line(120).replacen('{', r#"{"a_later_field":[1,2],"#, 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, format!("{old}\n{grouped_line}\n{later}\n")).unwrap();
        let recording = read(&path).unwrap();
        assert_eq!(recording.skipped, 0);
        assert_eq!(recording.samples.len(), 3);
        assert_eq!(recording.samples[0].groups, None);
        assert_eq!(recording.samples[0].runs.count, 0);
        assert_eq!(recording.samples[1], grouped);
        let groups = crate::record::groups::RecordingGroups::of(&recording.samples).unwrap();
        assert_eq!(groups.groups["web"].runs, 1);
    }

    /// The refusal `read` gave for `path`, within ten seconds: the field it names, and
    /// its message.
    fn refused(path: PathBuf) -> (Option<&'static str>, String) {
        let error = within_seconds(10, move || read(&path)).unwrap_err();
        (error.field(), error.to_string())
    }

    #[test]
    fn a_timeline_from_dev_zero_is_refused_naming_from() {
        let (field, message) = refused(PathBuf::from("/dev/zero"));
        assert_eq!(field, Some("from"), "{message}");
        assert!(message.contains("a character device"), "{message}");
    }

    #[test]
    fn a_timeline_that_is_a_fifo_is_refused_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        fifo(&path);
        let (field, message) = refused(path);
        assert_eq!(field, Some("from"), "{message}");
        assert!(message.contains("a FIFO"), "{message}");
    }

    #[test]
    fn a_timeline_behind_a_symlink_is_refused_and_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere.jsonl");
        std::fs::write(&elsewhere, format!("{}\n", line(100))).unwrap();
        let path = dir.path().join("t.jsonl");
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        let (field, message) = refused(path);
        assert_eq!(field, Some("from"), "{message}");
        assert!(message.contains("a symlink"), "{message}");
    }

    #[test]
    fn a_rotated_file_that_is_a_symlink_is_refused_and_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere.jsonl");
        std::fs::write(&elsewhere, format!("{}\n", line(100))).unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, format!("{}\n", line(110))).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("t.jsonl.1")).unwrap();
        let (field, message) = refused(path);
        assert_eq!(field, Some("from"), "{message}");
        assert!(message.contains("t.jsonl.1"), "{message}");
        assert!(message.contains("a symlink"), "{message}");
    }

    #[test]
    fn a_timeline_that_is_a_directory_is_refused_naming_from() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::create_dir(&path).unwrap();
        let (field, message) = refused(path);
        assert_eq!(field, Some("from"), "{message}");
        assert!(message.contains("a directory"), "{message}");
    }

    #[test]
    fn a_missing_timeline_is_an_error_naming_from() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(&dir.path().join("none.jsonl")).unwrap_err();
        assert_eq!(e.kind(), "invalid-argument");
        assert!(e.to_string().contains("from"), "{e}");
    }
}
