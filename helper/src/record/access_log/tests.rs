//! The access log's lines as Puppet Server 8.7 wrote them, and as a hostile server or
//! client could make them; the log followed as it grows, is cut, rotated or replaced.

use std::fs;
use std::io::Write;

use super::*;

/// The last 40 lines of a real log (see fixtures/README.md), the 503s among them.
const REAL: &str = include_str!("../../report/fixtures/puppetserver-8-access.log");

fn line(path: &str, status: u16, millis: u64) -> String {
    format!(
        "127.0.0.1 - - [28/Nov/2026:13:28:57 +0000] \"POST {path} HTTP/1.1\" {status} 118 \"-\" \"Puppet/8.10.0 Ruby/3.3.8-p144 (x86_64-linux-gnu)\" {millis} 8017 -\n"
    )
}

#[test]
fn every_line_of_a_real_log_is_read_with_its_endpoint_status_and_time() {
    let requests: Vec<Request> = REAL
        .lines()
        .map(|l| parse_line(l.as_bytes()).unwrap_or_else(|| panic!("{l}")))
        .collect();
    assert_eq!(requests.len(), 40);
    let unavailable: Vec<(&str, u64)> = requests
        .iter()
        .filter(|r| r.status == 503)
        .map(|r| (r.endpoint, r.millis))
        .collect();
    assert_eq!(
        unavailable,
        [("file_metadatas", 6), ("catalog", 7), ("report", 5)]
    );
    let slow = requests.iter().map(|r| r.millis).max();
    assert_eq!(slow, Some(6403));
    assert_eq!(requests.last().unwrap().endpoint, "status");
}

#[test]
fn lines_of_another_shape_are_not_guessed_at() {
    let good = line("/puppet/v3/catalog/c1", 200, 12);
    assert!(parse_line(good.trim_end().as_bytes()).is_some());
    for bad in [
        String::new(),
        "garbage".to_owned(),
        // The pattern before Puppet Server logged the content length and borrow time.
        good.replace(" 8017 -\n", ""),
        good.replace("[28/Nov/2026:13:28:57 +0000]", "[yesterday]"),
        good.replace("POST", "post"),
        good.replace("HTTP/1.1", "SPDY/3"),
        good.replace(" 200 ", " 2000 "),
        good.replace(" 200 ", " 099 "),
        good.replace(" 12 8017", " -12 8017"),
        good.replace(" 12 8017", " 123456789012345678901234 8017"),
        good.replace("/puppet/v3/catalog/c1", "puppet/v3/catalog/c1"),
        good.replace("/puppet/v3/catalog/c1", "/puppet/v3/\"catalog"),
    ] {
        assert_eq!(parse_line(bad.trim_end().as_bytes()), None, "{bad}");
    }
    assert_eq!(parse_line(b"127.0.0.1 - - [\xff\xfe"), None);
}

/// A client's headers may hold quotes, spaces and escape sequences: the figures are taken
/// from the line's end, and what the client wrote is kept nowhere.
#[test]
fn a_clients_user_agent_full_of_quotes_moves_no_figure() {
    let hostile = line("/puppet/v3/report/c1", 200, 33).replace(
        "Puppet/8.10.0 Ruby/3.3.8-p144 (x86_64-linux-gnu)",
        "x\" 503 999 \"\u{1b}]0;owned\u{7} \" 1 2 3",
    );
    let request = parse_line(hostile.trim_end().as_bytes()).unwrap();
    assert_eq!(
        (request.endpoint, request.status, request.millis),
        ("report", 200, 33)
    );
}

/// The log, and a reader that has taken its first look (at the log's end).
struct Log {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    reader: AccessLog,
}

impl Log {
    fn new(before: &str) -> Log {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("puppetserver-access.log");
        fs::write(&path, before).unwrap();
        let mut reader = AccessLog::open(&path).unwrap();
        assert_eq!(reader.read(), None, "the first look finds the log's end");
        Log {
            _dir: dir,
            path,
            reader,
        }
    }

    fn append(&self, text: &[u8]) {
        fs::File::options()
            .append(true)
            .open(&self.path)
            .unwrap()
            .write_all(text)
            .unwrap();
    }
}

#[test]
fn only_the_requests_logged_since_the_sample_before_count() {
    let mut log = Log::new(&line("/puppet/v3/catalog/old", 200, 999));
    log.append(line("/puppet/v3/catalog/c1", 200, 40).as_bytes());
    log.append(line("/puppet/v3/catalog/c2", 503, 6).as_bytes());
    log.append(line("/puppet/v3/node/c1", 200, 3).as_bytes());
    let window = log.reader.read().unwrap();
    assert_eq!(window.requests, 3);
    let catalog = &window.endpoints["catalog"];
    assert_eq!((catalog.requests, catalog.server_errors), (2, 1));
    assert_eq!(catalog.times.max_ms(), Some(40));
    assert_eq!(catalog.times.percentile(50), Some(6));
    assert_eq!(window.endpoints["node"].requests, 1);
    assert_eq!(log.reader.read().unwrap(), AccessWindow::default());
}

/// The server is half-way through a line when the sample reads: the half is left for the
/// next sample, which has the whole line.
#[test]
fn a_line_still_being_written_counts_once_it_is_whole() {
    let mut log = Log::new("");
    let whole = line("/puppet/v3/report/c1", 200, 21);
    let (head, tail) = whole.split_at(40);
    log.append(head.as_bytes());
    assert_eq!(log.reader.read().unwrap().requests, 0);
    log.append(tail.as_bytes());
    let window = log.reader.read().unwrap();
    assert_eq!((window.requests, window.skipped), (1, 0));
}

/// Hostile and broken lines among good ones: each is skipped and counted, and neither a
/// line of megabytes nor bytes that are no text keep a good line after them from counting.
#[test]
fn hostile_and_partial_lines_are_skipped_and_counted() {
    let mut log = Log::new("");
    log.append(b"\xff\xfe not text\n");
    log.append(b"\n\n");
    log.append(line("/puppet/v3/catalog/c1", 200, 5).as_bytes());
    log.append(&vec![b'x'; MAX_LINE_BYTES + 10]);
    let window = log.reader.read().unwrap();
    // The not-text line, and the overlong one (still unfinished) already.
    assert_eq!((window.requests, window.skipped), (1, 2), "{window:?}");
    log.append(&vec![b'y'; 3 * MAX_LINE_BYTES]);
    log.append(b"\n");
    log.append(line("/puppet/v3/node/c1", 200, 7).as_bytes());
    let window = log.reader.read().unwrap();
    assert_eq!((window.requests, window.skipped), (1, 0), "{window:?}");
    assert_eq!(window.endpoints["node"].requests, 1);
}

/// logback renames the log away (to be compressed) and starts a new one: the old one's
/// last lines, read through the descriptor kept open, and the new one's all count.
#[test]
fn a_rotated_log_is_read_to_its_end_and_the_new_one_from_its_start() {
    let mut log = Log::new("");
    log.append(line("/puppet/v3/catalog/c1", 200, 5).as_bytes());
    assert_eq!(log.reader.read().unwrap().requests, 1);
    log.append(line("/puppet/v3/catalog/c2", 200, 6).as_bytes());
    fs::rename(&log.path, log.path.with_extension("1")).unwrap();
    fs::write(&log.path, line("/puppet/v3/node/c3", 200, 7)).unwrap();
    let window = log.reader.read().unwrap();
    assert!(window.rotated);
    assert_eq!(window.requests, 2);
    assert_eq!(window.endpoints["catalog"].requests, 1);
    assert_eq!(window.endpoints["node"].requests, 1);
    // Truncated in place: what is there now is new (seen as long as the log has not
    // grown past where it was read to by the next look).
    log.append(line("/puppet/v3/node/c4", 200, 7).repeat(3).as_bytes());
    assert_eq!(log.reader.read().unwrap().requests, 3);
    fs::write(&log.path, line("/puppet/v3/report/c3", 200, 8)).unwrap();
    let window = log.reader.read().unwrap();
    assert!(window.rotated);
    assert_eq!(window.endpoints["report"].requests, 1);
}

#[test]
fn a_log_that_is_no_regular_file_is_refused_naming_access_log() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("access.log");
    std::os::unix::fs::symlink("/etc/shadow", &link).unwrap();
    let error = AccessLog::open(&link).err().unwrap();
    assert_eq!(error.field(), Some("access-log"), "{error}");
    assert!(error.to_string().contains("symlink"), "{error}");
    let fifo = dir.path().join("fifo.log");
    crate::sys::confined::testing::fifo(&fifo);
    let error = AccessLog::open(&fifo).err().unwrap();
    assert!(error.to_string().contains("FIFO"), "{error}");
    // A directory that does not exist is refused; a log not written yet is not.
    assert!(AccessLog::open(&dir.path().join("none/access.log")).is_err());
    let mut later = AccessLog::open(&dir.path().join("later.log")).unwrap();
    assert_eq!(later.read(), None);
    assert_eq!(later.read(), Some(AccessWindow::default()));
    fs::write(
        dir.path().join("later.log"),
        line("/puppet/v3/node/c1", 200, 1),
    )
    .unwrap();
    assert_eq!(later.read().unwrap().requests, 1);
}

/// The server under test replaces its log with a symlink to a host file while the
/// recorder follows it: the sample says why it read nothing, and reads nothing there.
#[test]
fn a_log_replaced_by_a_symlink_is_not_followed() {
    let mut log = Log::new("");
    fs::remove_file(&log.path).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &log.path).unwrap();
    let window = log.reader.read().unwrap();
    assert_eq!(window.requests, 0);
    assert!(window.error.unwrap().contains("symlink"));
}

/// A server that writes more in a period than a sample reads: the rest waits for the
/// next sample, which goes on where this one stopped.
#[test]
fn more_than_a_sample_reads_is_left_for_the_next() {
    let mut log = Log::new("");
    let one = line("/puppet/v3/file_content/x", 200, 1);
    let count = (MAX_READ_BYTES as usize / one.len()) + 1000;
    log.append(one.repeat(count).as_bytes());
    let first = log.reader.read().unwrap();
    assert!(first.behind_bytes > 0);
    let second = log.reader.read().unwrap();
    assert_eq!(second.behind_bytes, 0);
    assert_eq!(first.requests + second.requests, count as u64);
    assert_eq!(first.skipped + second.skipped, 0);
}
