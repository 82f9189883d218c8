//! A base build's log: what the builder's commands print, kept on the host.
//!
//! A build runs for a minute or more and fails deep inside debootstrap, dnf or zypper,
//! whose own words are what tells a person why. So every command's output goes to
//! `/var/log/clone-army/base-<name>.log` (root's, 0600), which outlives the staging
//! directory; a failed command's error carries the log's last lines and its path. The
//! tool's own detailed log inside the staging directory (debootstrap's
//! `debootstrap/debootstrap.log`) is copied to the end of it before the staging
//! directory goes.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::protocol::error::{Error, OutputTail, Result};
use crate::sys::fsutil::create_dir_all;
use crate::sys::paths::Layout;

/// How many of the log's last lines a failure carries.
pub const TAIL_LINES: usize = 20;
/// The most of the log read to find them.
const TAIL_BYTES: u64 = 64 * 1024;
/// The most copied of a tool's own log.
const TOOL_LOG_BYTES: u64 = 8 * 1024 * 1024;
/// Where tools the builders run keep a detailed log inside the root they build.
const TOOL_LOGS_IN_STAGING: &[&str] = &["debootstrap/debootstrap.log"];

pub struct BuildLog {
    /// The system path, as errors and people see it.
    shown: PathBuf,
    file: File,
}

impl BuildLog {
    /// Starts the log of building `base`, replacing the log of an earlier build of it.
    pub fn start(layout: &Layout, base: &str) -> Result<Self> {
        let shown = layout.build_log(base);
        let path = layout.fs(&shown);
        if let Some(dir) = path.parent() {
            create_dir_all(dir, 0o700)?;
        }
        // Appending: the commands write through the same open file, so no write of
        // theirs or ours lands on another's; the tail is read at an offset, never moving it.
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("replace", &path, e)),
        }
        let file = fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| Error::io("create", &path, e))?;
        Ok(BuildLog { shown, file })
    }

    /// Runs `argv` with its output (stdout and stderr) appended to the log; our stdout
    /// carries only the protocol's JSON document, and our stderr nothing of the command
    /// (a person at a terminal sees its step on the build's status line). A failure carries
    /// the log's last lines.
    pub fn run(&mut self, argv: &[String]) -> Result<()> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Error::Internal("empty command".to_owned()))?;
        let _ = writeln!(self.file, "# clone-army: running {}", argv.join(" "));
        let output = |log: &File| -> Result<Stdio> {
            let fd = log
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| Error::io("duplicate", &self.shown, e))?;
            Ok(Stdio::from(fd))
        };
        let status = Command::new(program)
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .stdout(output(&self.file)?)
            .stderr(output(&self.file)?)
            .status()
            .map_err(|e| Error::CommandFailed {
                program: program.clone(),
                detail: if e.kind() == std::io::ErrorKind::NotFound {
                    format!("{program} is not installed")
                } else {
                    e.to_string()
                },
                output: None,
            })?;
        if status.success() {
            return Ok(());
        }
        let _ = writeln!(self.file, "# clone-army: {program} exited with {status}");
        Err(Error::CommandFailed {
            program: program.clone(),
            detail: format!("it exited with {status}"),
            output: Some(self.tail()),
        })
    }

    /// Copies the detailed logs the build's tools left in `staging` to the end of this
    /// log, so they outlive it. Best effort: the build has failed already.
    pub fn keep_tool_logs(&mut self, staging: &Path) {
        for relative in TOOL_LOGS_IN_STAGING {
            let path = staging.join(relative);
            let Ok(file) = fs::OpenOptions::new()
                .read(true)
                .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
                .open(&path)
            else {
                continue;
            };
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                continue;
            }
            let mut text = Vec::new();
            if file.take(TOOL_LOG_BYTES).read_to_end(&mut text).is_ok() {
                let _ = writeln!(self.file, "# clone-army: {relative} of the failed build:");
                let _ = self.file.write_all(&text);
            }
        }
    }

    /// The log's last [`TAIL_LINES`] lines, as they are now.
    fn tail(&self) -> OutputTail {
        let mut text = Vec::new();
        let read = (|| -> std::io::Result<()> {
            let length = self.file.metadata()?.len();
            let start = length.saturating_sub(TAIL_BYTES);
            text.resize((length - start) as usize, 0);
            self.file.read_exact_at(&mut text, start)
        })();
        let lines = match read {
            Ok(()) => last_lines(&String::from_utf8_lossy(&text), TAIL_LINES),
            Err(e) => vec![format!("(the log could not be read back: {e})")],
        };
        OutputTail {
            log: self.shown.clone(),
            lines,
        }
    }
}

/// The last `count` non-empty lines of `text`, without the helper's own markers.
fn last_lines(text: &str, count: usize) -> Vec<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with("# clone-army:"))
        .collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_failed_command_carries_its_last_lines_and_the_kept_log() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let mut log = BuildLog::start(&layout, "b1").unwrap();
        log.run(&argv(&[
            "sh",
            "-c",
            "echo fetched; echo 'E: Couldn'\\''t find a release' >&2",
        ]))
        .unwrap();
        let error = log
            .run(&argv(&[
                "sh",
                "-c",
                "seq 1 30; echo 'W: Failure trying to run' >&2; exit 3",
            ]))
            .unwrap_err();
        assert_eq!(error.kind(), "command-failed");
        let causes = error.causes();
        assert_eq!(causes.len(), 1, "{causes:?}");
        assert!(
            causes[0].contains("/var/log/clone-army/base-b1.log"),
            "{causes:?}"
        );
        let Error::CommandFailed {
            output: Some(tail), ..
        } = &error
        else {
            panic!("no output tail: {error:?}");
        };
        assert_eq!(tail.lines.len(), TAIL_LINES);
        assert_eq!(tail.lines.last().unwrap(), "W: Failure trying to run");
        assert_eq!(tail.lines[0], "12");

        let kept = fs::read_to_string(layout.fs(layout.build_log("b1"))).unwrap();
        assert!(kept.contains("fetched\n"));
        assert!(kept.contains("E: Couldn't find a release"));
        assert!(kept.contains("exited with exit status: 3"));
    }

    #[test]
    fn the_log_is_private_and_replaced_by_the_next_build() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let mut first = BuildLog::start(&layout, "b1").unwrap();
        first.run(&argv(&["echo", "first build"])).unwrap();
        drop(first);
        let mut second = BuildLog::start(&layout, "b1").unwrap();
        second.run(&argv(&["echo", "second build"])).unwrap();
        let path = layout.fs(layout.build_log("b1"));
        let kept = fs::read_to_string(&path).unwrap();
        assert!(kept.contains("second build") && !kept.contains("first build"));
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
    }

    #[test]
    fn a_missing_program_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = BuildLog::start(&Layout::under(dir.path()), "b1").unwrap();
        let error = log.run(&argv(&["clone-army-no-such-program"])).unwrap_err();
        assert!(error.to_string().contains("is not installed"), "{error}");
    }

    #[test]
    fn tool_logs_outlive_the_staging_directory_but_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let staging = dir.path().join("staging");
        fs::create_dir_all(staging.join("debootstrap")).unwrap();
        fs::write(
            staging.join("debootstrap/debootstrap.log"),
            "dpkg: error processing\n",
        )
        .unwrap();
        let mut log = BuildLog::start(&layout, "b1").unwrap();
        log.keep_tool_logs(&staging);

        let secret = dir.path().join("secret");
        fs::write(&secret, "not for the log\n").unwrap();
        let linked = dir.path().join("linked");
        fs::create_dir_all(linked.join("debootstrap")).unwrap();
        std::os::unix::fs::symlink(&secret, linked.join("debootstrap/debootstrap.log")).unwrap();
        log.keep_tool_logs(&linked);

        let kept = fs::read_to_string(layout.fs(layout.build_log("b1"))).unwrap();
        assert!(kept.contains("dpkg: error processing"));
        assert!(!kept.contains("not for the log"));
    }

    #[test]
    fn last_lines_skips_blank_lines_and_markers() {
        let text = "a\n\n# clone-army: running x\nb\nc\n\n";
        assert_eq!(last_lines(text, 2), ["b", "c"]);
        assert_eq!(last_lines(text, 10), ["a", "b", "c"]);
        assert!(last_lines("", 3).is_empty());
    }
}
