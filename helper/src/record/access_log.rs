//! Puppet Server's access log, read as it grows: what each request of a sample's period
//! cost the server, per endpoint, where the recorder can read the log (the lab; a server
//! that shares it).
//!
//! The status API gives counts and decaying means only; the access log gives every
//! request's status and time, so a window's p50 and p95 per endpoint and its 5xx are
//! exact (within the [`Latencies`](crate::protocol::latency::Latencies) buckets). Lines
//! are Puppet Server's default logback access pattern (Debian's and Puppet's
//! `request-logging.xml`):
//!
//! ```text
//! %h %l %u [%t] "%r" %s %b "%i{Referer}" "%i{User-Agent}" %D %i{Content-Length} %mdc{jruby.borrow-time:--}
//! 127.0.0.1 - - [28/Nov/2026:13:28:57 +0000] "POST /puppet/v3/catalog/c1.load.example.com?environment=production HTTP/1.1" 503 118 "-" "Puppet/8.10.0 Ruby/3.3.8-p144 (x86_64-linux-gnu)" 7 8017 -
//! ```
//!
//! `%D` is the milliseconds the request took. The log is the server's text, its request
//! lines and headers the clients' (hostile ground): a line is taken only when it has
//! exactly that shape; any other is skipped and counted, never guessed at. Only the
//! endpoint (one of [`endpoints`]' fixed names), the status and the time are kept.
//!
//! The path is the caller's (`--access-log`), read as a [`HostFile`] (never through a
//! symlink, a regular file only). It is read from where the last sample stopped, at most
//! [`MAX_READ_BYTES`] a sample (the rest waits for the next: `behind_bytes`), up to the
//! last whole line; a line longer than [`MAX_LINE_BYTES`] is skipped. The first sample
//! starts at the log's end, so only requests from then on count. A log rotated away
//! (renamed, with a new file in its place) is read to its end through the descriptor
//! kept open, then the new one from its start; one truncated in place is read again from
//! its start.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use crate::protocol::error::Result;
use crate::protocol::record::{AccessWindow, RequestTimes};
use crate::report::{endpoints, kept};
use crate::sys::confined::HostFile;

/// The most of the log read in one sample: far more than a server writes in a period
/// (a line is about 250 bytes).
pub const MAX_READ_BYTES: u64 = 32 * 1024 * 1024;
/// The longest line taken (Jetty refuses request lines and headers above 8 KiB each).
pub const MAX_LINE_BYTES: usize = 32 * 1024;

impl RequestTimes {
    /// Adds `other`'s requests.
    pub fn merge(&mut self, other: &RequestTimes) {
        self.requests = self.requests.saturating_add(other.requests);
        self.server_errors = self.server_errors.saturating_add(other.server_errors);
        self.times.merge(&other.times);
    }
}

/// One request as its line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub endpoint: &'static str,
    pub status: u16,
    pub millis: u64,
}

/// The request a line of the default pattern says; `None` for any other line.
pub fn parse_line(line: &[u8]) -> Option<Request> {
    let line = std::str::from_utf8(line).ok()?;
    let line = line.strip_suffix('\r').unwrap_or(line);
    // %h %l %u: three tokens, none empty.
    let (host, rest) = line.split_once(' ')?;
    let (_, rest) = rest.split_once(' ')?;
    let (_, rest) = rest.split_once(' ')?;
    if host.is_empty() {
        return None;
    }
    // [%t]: dd/Mon/yyyy:HH:MM:SS +zzzz
    let rest = rest.strip_prefix('[')?;
    let (time, rest) = rest.split_once("] ")?;
    if !is_access_time(time) {
        return None;
    }
    // "%r": METHOD SP TARGET SP PROTOCOL, each without spaces.
    let rest = rest.strip_prefix('"')?;
    let (method, rest) = rest.split_once(' ')?;
    let (target, rest) = rest.split_once(' ')?;
    let (protocol, rest) = rest.split_once("\" ")?;
    let method_ok =
        (1..=16).contains(&method.len()) && method.bytes().all(|b| b.is_ascii_uppercase());
    let protocol_ok = protocol.strip_prefix("HTTP/").is_some_and(|v| {
        (1..=3).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    });
    if !method_ok || !protocol_ok || !target.starts_with('/') || target.contains('"') {
        return None;
    }
    // %s %b
    let (status, rest) = rest.split_once(' ')?;
    let (bytes, rest) = rest.split_once(' ')?;
    let status: u16 = digits(status, 3)?.try_into().ok()?;
    if !(100..=599).contains(&status) || !(bytes == "-" || digits(bytes, 20).is_some()) {
        return None;
    }
    // "%i{Referer}" "%i{User-Agent}" %D %i{Content-Length} %mdc{jruby.borrow-time:--}: the
    // quoted headers are the client's, so the three figures are taken from the end.
    let (rest, borrow) = rest.rsplit_once(' ')?;
    let (rest, length) = rest.rsplit_once(' ')?;
    let (headers, millis) = rest.rsplit_once(' ')?;
    let dash_or_number = |t: &str| t == "-" || digits(t, 20).is_some();
    if !dash_or_number(borrow) || !dash_or_number(length) {
        return None;
    }
    let millis = digits(millis, 20)?;
    if headers.len() < 7
        || !headers.starts_with('"')
        || !headers.ends_with('"')
        || !headers.contains("\" \"")
    {
        return None;
    }
    Some(Request {
        endpoint: endpoints::of_path(target),
        status,
        millis,
    })
}

/// A number of at most `max` ASCII digits.
fn digits(text: &str, max: usize) -> Option<u64> {
    if text.is_empty() || text.len() > max || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `28/Nov/2026:13:28:57 +0000`, as logback's `%t` writes it.
fn is_access_time(time: &str) -> bool {
    let b = time.as_bytes();
    let digit = |i: usize| b[i].is_ascii_digit();
    b.len() == 26
        && digit(0)
        && digit(1)
        && b[2] == b'/'
        && b[3..6].iter().all(u8::is_ascii_alphabetic)
        && b[6] == b'/'
        && (7..11).all(digit)
        && b[11] == b':'
        && digit(12)
        && digit(13)
        && b[14] == b':'
        && digit(15)
        && digit(16)
        && b[17] == b':'
        && digit(18)
        && digit(19)
        && b[20] == b' '
        && matches!(b[21], b'+' | b'-')
        && (22..26).all(digit)
}

/// The log file a recorder follows.
pub struct AccessLog {
    file: HostFile,
    /// The file being read, which inode it is, and how far it is read.
    held: Option<Held>,
    /// Whether a sample looked at the log yet (the first starts at its end).
    started: bool,
    /// Inside a line too long to take, skipping to its end.
    skipping_line: bool,
}

struct Held {
    file: File,
    device: u64,
    inode: u64,
    offset: u64,
}

/// What one read of the log's new bytes gave.
#[derive(Default)]
struct Lines {
    window: AccessWindow,
    budget: u64,
}

impl AccessLog {
    /// The log at `path`, as the caller gives it (`--access-log`): its directory must
    /// exist; the file may not yet, but what is there must be a regular file.
    pub fn open(path: &Path) -> Result<AccessLog> {
        let refused = |e: crate::sys::confined::HostFileError| e.into_error("access-log", path);
        let file = HostFile::at(path).map_err(refused)?;
        // Refuses a symlink, a FIFO, a directory now, before the recording starts.
        file.open_to_follow().map_err(refused)?;
        Ok(AccessLog {
            file,
            held: None,
            started: false,
            skipping_line: false,
        })
    }

    /// The requests logged since the sample before; `None` at the first look, which only
    /// finds where the log ends. Never fails: why it read nothing is in `error`.
    pub fn read(&mut self) -> Option<AccessWindow> {
        let first = !self.started;
        let mut lines = Lines {
            budget: MAX_READ_BYTES,
            ..Lines::default()
        };
        if let Err(e) = self.read_into(&mut lines) {
            lines.window.error = Some(kept::error(&e));
        }
        (!first).then_some(lines.window)
    }

    fn read_into(&mut self, lines: &mut Lines) -> std::result::Result<(), String> {
        let current = self
            .file
            .open_to_follow()
            .map_err(|e| format!("{}: {e}", self.file.path().display()))?;
        let first = !self.started;
        self.started = true;
        let same = |held: &Held, metadata: &std::fs::Metadata| {
            held.device == metadata.dev() && held.inode == metadata.ino()
        };
        match (self.held.take(), current) {
            (Some(mut held), Some((_, metadata))) if same(&held, &metadata) => {
                if metadata.size() < held.offset {
                    // Truncated in place: its lines are new ones.
                    held.offset = 0;
                    lines.window.rotated = true;
                    self.skipping_line = false;
                }
                self.take(&mut held, lines, false)?;
                self.held = Some(held);
            }
            (held, current) => {
                if let Some(mut old) = held {
                    // Rotated away (or gone): what it holds after where it was read to,
                    // to its end before the new file is begun.
                    lines.window.rotated = true;
                    self.take(&mut old, lines, true)?;
                    if lines.window.behind_bytes > 0 {
                        self.held = Some(old);
                        return Ok(());
                    }
                    self.skipping_line = false;
                }
                if let Some((file, metadata)) = current {
                    let mut new = Held {
                        file,
                        device: metadata.dev(),
                        inode: metadata.ino(),
                        offset: if first { metadata.size() } else { 0 },
                    };
                    if !first {
                        self.take(&mut new, lines, false)?;
                    }
                    self.held = Some(new);
                }
            }
        }
        Ok(())
    }

    /// Reads `held` from its offset, within what is left of the sample's budget, and
    /// counts its whole lines (a last line without its newline too when `to_the_end`: the
    /// file was rotated away and no more comes to it).
    fn take(
        &mut self,
        held: &mut Held,
        lines: &mut Lines,
        to_the_end: bool,
    ) -> std::result::Result<(), String> {
        let size = held
            .file
            .metadata()
            .map_err(|e| format!("cannot inspect {}: {e}", self.file.path().display()))?
            .size();
        let pending = size.saturating_sub(held.offset);
        let want = pending.min(lines.budget);
        lines.window.behind_bytes = lines.window.behind_bytes.saturating_add(pending - want);
        if want == 0 {
            return Ok(());
        }
        let mut buffer = vec![0u8; want as usize];
        let mut filled = 0usize;
        while filled < buffer.len() {
            let n = held
                .file
                .read_at(&mut buffer[filled..], held.offset + filled as u64)
                .map_err(|e| format!("cannot read {}: {e}", self.file.path().display()))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        buffer.truncate(filled);
        lines.budget -= filled as u64;
        let complete = match buffer.iter().rposition(|b| *b == b'\n') {
            Some(last) => last + 1,
            None => 0,
        };
        let mut consumed = complete;
        for line in buffer[..complete].split(|b| *b == b'\n') {
            // The end of a line too long to take, read in an earlier sample.
            if std::mem::take(&mut self.skipping_line) || line.is_empty() {
                continue;
            }
            self.count(line, &mut lines.window);
        }
        // What follows the last newline: a line still being written, unless the file is
        // done with or the line is already too long to take.
        let tail = &buffer[complete..];
        if to_the_end && !tail.is_empty() {
            if !std::mem::take(&mut self.skipping_line) {
                self.count(tail, &mut lines.window);
            }
            consumed = buffer.len();
        } else if tail.len() > MAX_LINE_BYTES {
            if !self.skipping_line {
                lines.window.skipped += 1;
                self.skipping_line = true;
            }
            consumed = buffer.len();
        }
        held.offset += consumed as u64;
        Ok(())
    }

    fn count(&self, line: &[u8], window: &mut AccessWindow) {
        match (line.len() <= MAX_LINE_BYTES)
            .then(|| parse_line(line))
            .flatten()
        {
            Some(request) => {
                window.requests += 1;
                let times = window
                    .endpoints
                    .entry(request.endpoint.to_owned())
                    .or_default();
                times.requests += 1;
                times.server_errors += u64::from(request.status >= 500);
                times.times.record(request.millis);
            }
            None => window.skipped += 1,
        }
    }
}

#[cfg(test)]
mod tests;
