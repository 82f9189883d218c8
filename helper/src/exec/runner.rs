//! Runs one child process with a time limit and keeps the tails of its output.
//!
//! std only: one reader thread per output stream, and the calling thread polls the child
//! with `try_wait`. Because the caller owns the `Child` and has not reaped it, killing it
//! by PID on timeout can never hit a reused PID.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How much of stdout and of stderr is kept: the last 4 KiB of each.
pub const TAIL_BYTES: usize = 4096;
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// How long to wait for the output pipes to close after the child ended. With
/// `systemd-run --pipe` the pipes are held by the command inside the clone, which may
/// outlive a killed `systemd-run`; the tails are then taken as they are.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What became of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The exit code; `None` when the child was ended by a signal.
    pub exit_code: Option<i32>,
    /// The signal that ended the child, if one did.
    pub signal: Option<i32>,
    /// Whether it was killed for running longer than the timeout.
    pub timed_out: bool,
    pub elapsed: Duration,
    pub stdout_tail: String,
    pub stderr_tail: String,
}

/// Runs `argv` (no shell) with stdin from /dev/null, killing it (SIGKILL, by PID) once it
/// has run for `timeout`. An error only when it could not be started at all.
pub fn run_bounded(argv: &[String], timeout: Duration) -> std::io::Result<Outcome> {
    let (program, args) = argv.split_first().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command line")
    })?;
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let stdout = Tail::collect(child.stdout.take(), done_tx.clone());
    let stderr = Tail::collect(child.stderr.take(), done_tx);

    let (status, timed_out) = wait_bounded(&mut child, started, timeout)?;
    let elapsed = started.elapsed();
    // Both readers report when their pipe closed; wait for that only a little.
    let drain_deadline = Instant::now() + DRAIN_GRACE;
    for _ in 0..2 {
        let left = drain_deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    Ok(Outcome {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        elapsed,
        stdout_tail: stdout.text(),
        stderr_tail: stderr.text(),
    })
}

fn wait_bounded(
    child: &mut Child,
    started: Instant,
    timeout: Duration,
) -> std::io::Result<(std::process::ExitStatus, bool)> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((status, false));
        }
        if started.elapsed() >= timeout {
            // Still ours and not reaped: the PID is the child's. An error here means it
            // exited in the meantime, which the wait below reports.
            let _ = child.kill();
            return Ok((child.wait()?, true));
        }
        thread::sleep(POLL_INTERVAL);
    }
}

/// The last `TAIL_BYTES` a reader thread has seen of one pipe.
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<Vec<u8>>>);

impl Tail {
    fn collect<R: Read + Send + 'static>(pipe: Option<R>, done: mpsc::Sender<()>) -> Tail {
        let tail = Tail::default();
        let sink = tail.clone();
        match pipe {
            Some(mut pipe) => {
                thread::spawn(move || {
                    let mut buffer = [0u8; 8192];
                    while let Ok(n) = pipe.read(&mut buffer) {
                        if n == 0 {
                            break;
                        }
                        sink.push(&buffer[..n]);
                    }
                    let _ = done.send(());
                });
            }
            None => {
                let _ = done.send(());
            }
        }
        tail
    }

    fn push(&self, bytes: &[u8]) {
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        kept.extend_from_slice(bytes);
        if kept.len() > TAIL_BYTES {
            let excess = kept.len() - TAIL_BYTES;
            kept.drain(..excess);
        }
    }

    /// The tail as text; bytes that are not UTF-8 (or a character cut at the start of
    /// the tail) become U+FFFD.
    fn text(&self) -> String {
        let kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&kept).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn keeps_raw_exit_codes_and_output() {
        let outcome = run_bounded(
            &sh("echo out; echo err >&2; exit 2"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(outcome.exit_code, Some(2));
        assert_eq!(outcome.signal, None);
        assert!(!outcome.timed_out);
        assert_eq!(outcome.stdout_tail, "out\n");
        assert_eq!(outcome.stderr_tail, "err\n");
    }

    #[test]
    fn keeps_only_the_tail() {
        let outcome = run_bounded(
            &sh("head -c 10000 /dev/zero | tr '\\0' a; printf END"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(outcome.exit_code, Some(0));
        assert_eq!(outcome.stdout_tail.len(), TAIL_BYTES);
        assert!(outcome.stdout_tail.ends_with("aaaEND"));
    }

    #[test]
    fn kills_a_child_that_runs_too_long() {
        let started = Instant::now();
        let outcome = run_bounded(
            &sh("echo started; exec sleep 30"),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(outcome.timed_out);
        assert_eq!(outcome.exit_code, None);
        assert_eq!(outcome.signal, Some(9));
        assert_eq!(outcome.stdout_tail, "started\n");
        assert!(outcome.elapsed >= Duration::from_millis(300));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_grandchild_holding_the_pipe_does_not_hang_the_run() {
        // Like a command inside a clone that outlives a killed systemd-run.
        let started = Instant::now();
        let outcome = run_bounded(&sh("sleep 4 & exit 0"), Duration::from_secs(10)).unwrap();
        assert_eq!(outcome.exit_code, Some(0));
        assert!(started.elapsed() < Duration::from_millis(3500));
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let error = run_bounded(
            &["/nonexistent/clone-army-test".to_owned()],
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    }
}
