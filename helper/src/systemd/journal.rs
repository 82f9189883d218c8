//! A failed unit's last journal lines, read with journalctl (journald has no D-Bus API
//! for reading): captured, never passed through to our stdout, and bounded in time.

use std::time::{Duration, Instant};

/// How long reading a failed unit's journal lines may take (best effort).
pub const JOURNAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `command` and returns its stdout when it succeeds within `timeout`; kills it and
/// returns `None` otherwise (a wedged journal must not hang the helper).
pub fn run_bounded(mut command: std::process::Command, timeout: Duration) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Read on a thread so a chatty child cannot block on a full pipe while we wait.
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(50))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let out = reader.join().ok()?;
    status.filter(|s| s.success()).map(|_| out)
}

/// The unit's last 15 journal lines; none when journalctl fails or takes too long.
pub fn recent_lines(unit: &str) -> Vec<String> {
    let mut command = std::process::Command::new("journalctl");
    command.args([
        "--no-pager",
        "--quiet",
        "--output=short",
        "--lines=15",
        "--unit",
        unit,
    ]);
    match run_bounded(command, JOURNAL_TIMEOUT) {
        Some(stdout) => String::from_utf8_lossy(&stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    }
}
