//! Where a long verb's progress goes: to a person at a terminal, as Rust's own tools show
//! it (cargo, rustup), one status line on stderr redrawn in place, with the time since the
//! work began and its step, or a bar and a count, cleared when the work ends so that the
//! answer and any error print clean. When stderr is no terminal (the providers, the Bolt
//! tasks, a pipe, CI) nothing at all: what reads the helper reads its answer, and a base
//! build's commands are in its build log. Lines said for people while the status line is
//! shown (warnings) are printed above it ([`say`]).
//!
//! The verbs report through [`Progress`]; the line is drawn by a thread of its own, at
//! each report and once a second, so that a slow or stopped terminal never holds up the
//! work: a report only changes what the next draw shows.

use std::io::{IsTerminal, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::sys::escape;
use crate::sys::progress::Progress;

/// How often the line is drawn again when nothing is reported: its clock moves on.
const TICK: Duration = Duration::from_secs(1);
/// The width when the terminal does not say.
const FALLBACK_WIDTH: usize = 80;
/// The widest a count's bar gets.
const BAR_CELLS: usize = 30;
/// The narrowest: a bar of fewer cells says nothing the count beside it does not.
const MIN_BAR_CELLS: usize = 5;
/// Back to the line's start, and clear to its end.
const CLEAR: &str = "\r\x1b[K";

/// What the line shows: the last report.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Work {
    Step {
        what: String,
        number: usize,
        of: usize,
    },
    Count {
        done: usize,
        total: usize,
    },
}

/// Runs `work` with the status line of `title` on stderr when stderr is a terminal, with
/// one that shows nothing otherwise, and clears the line when the work ends (by an error
/// or a panic too) before its answer is printed.
pub fn showing<T>(title: &str, work: impl FnOnce(&dyn Progress) -> T) -> T {
    let terminal = std::io::stderr().is_terminal();
    let line = StatusLine::new(title, std::io::stderr(), terminal, || {
        terminal_width(std::io::stderr().as_fd()).unwrap_or(FALLBACK_WIDTH)
    });
    if terminal {
        *lock(&SHOWN) = Some(Arc::clone(&line.shared));
    }
    work(&line)
}

/// The status line on stderr while one is shown, for [`say`].
static SHOWN: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

/// Says `line` to a person on stderr: above the status line while one is shown, else as a
/// line of its own.
pub fn say(line: &str) {
    let shown = lock(&SHOWN).clone();
    if !shown.is_some_and(|shared| shared.say(line)) {
        eprintln!("{line}");
    }
}

/// One status line: what the work reported last, drawn by its ticker thread.
pub struct StatusLine {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    work: Option<Work>,
    /// Reports so far, so the ticker knows a new one from its timeout.
    reports: u64,
    /// Lines to print above the status line.
    said: Vec<String>,
    /// Nothing more is drawn (or, for a line on no terminal, ever was).
    finished: bool,
}

impl StatusLine {
    /// The status line of `title`'s work on `out`, a terminal `width()` columns wide, or,
    /// when `out` is no terminal, a line that writes nothing at all.
    pub fn new<W, F>(title: &str, out: W, terminal: bool, width: F) -> StatusLine
    where
        W: Write + Send + 'static,
        F: Fn() -> usize + Send + 'static,
    {
        let shared = Arc::new(Shared::default());
        let ticker = if terminal {
            let screen = Screen {
                out,
                title: title.to_owned(),
                width,
                started: Instant::now(),
                shown: None,
            };
            let for_ticker = Arc::clone(&shared);
            // Without a thread there is no line: the work goes on unshown.
            std::thread::Builder::new()
                .name("status-line".to_owned())
                .spawn(move || screen.run(&for_ticker))
                .ok()
        } else {
            None
        };
        lock(&shared.state).finished = ticker.is_none();
        StatusLine { shared, ticker }
    }

    /// Prints `line` above the status line (on stderr when this line writes nothing).
    pub fn say(&self, line: &str) {
        if !self.shared.say(line) {
            eprintln!("{line}");
        }
    }

    fn report(&self, work: Work) {
        let mut state = lock(&self.shared.state);
        if state.finished || state.work.as_ref() == Some(&work) {
            return;
        }
        state.work = Some(work);
        state.reports += 1;
        self.shared.changed.notify_one();
    }
}

impl Progress for StatusLine {
    fn step(&self, what: &str, number: usize, of: usize) {
        self.report(Work::Step {
            what: what.to_owned(),
            number,
            of,
        });
    }

    fn count(&self, done: usize, total: usize) {
        self.report(Work::Count { done, total });
    }
}

impl Drop for StatusLine {
    /// Clears the line and waits for its ticker to end, so nothing is drawn after the
    /// answer.
    fn drop(&mut self) {
        {
            let mut shown = lock(&SHOWN);
            if shown.as_ref().is_some_and(|s| Arc::ptr_eq(s, &self.shared)) {
                *shown = None;
            }
        }
        lock(&self.shared.state).finished = true;
        self.shared.changed.notify_one();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

impl Shared {
    /// Queues `line` for the ticker to print above the status line; false once the line
    /// is finished (then the caller prints it).
    fn say(&self, line: &str) -> bool {
        let mut state = lock(&self.state);
        if state.finished {
            return false;
        }
        state.said.push(line.to_owned());
        self.changed.notify_one();
        true
    }
}

/// The ticker's side: the terminal and what is on it.
struct Screen<W, F> {
    out: W,
    title: String,
    width: F,
    started: Instant,
    /// The line as it is on the terminal now, if one is.
    shown: Option<String>,
}

impl<W: Write, F: Fn() -> usize> Screen<W, F> {
    /// Draws at each report and each tick until the line is finished, then clears it.
    fn run(mut self, shared: &Shared) {
        let mut seen = 0;
        let mut state = lock(&shared.state);
        loop {
            state = shared
                .changed
                .wait_timeout_while(state, TICK, |s| {
                    s.reports == seen && s.said.is_empty() && !s.finished
                })
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            seen = state.reports;
            let work = state.work.clone();
            let said = std::mem::take(&mut state.said);
            let finished = state.finished;
            // The terminal is written without the lock: a report never waits for it.
            drop(state);
            self.print_above(&said);
            if finished {
                self.clear();
                return;
            }
            if let Some(work) = work {
                self.draw(&work);
            }
            state = lock(&shared.state);
        }
    }

    fn draw(&mut self, work: &Work) {
        let line = render(&self.title, work, self.started.elapsed(), (self.width)());
        if self.shown.as_ref() == Some(&line) {
            return;
        }
        self.write(&format!("{CLEAR}{line}"));
        self.shown = Some(line);
    }

    fn clear(&mut self) {
        if self.shown.take().is_some() {
            self.write(CLEAR);
        }
    }

    /// The lines said, each on a line of its own where the status line was; the next
    /// draw puts the status line back under them.
    fn print_above(&mut self, said: &[String]) {
        if said.is_empty() {
            return;
        }
        let cleared = if self.shown.take().is_some() {
            CLEAR
        } else {
            ""
        };
        let lines: String = said.iter().map(|line| format!("{line}\n")).collect();
        self.write(&format!("{cleared}{lines}"));
    }

    /// One write for the whole change, so the terminal never shows half of it. A failed
    /// write is let go: the line is only ever a courtesy.
    fn write(&mut self, text: &str) {
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }
}

/// The status line for `work` of `title`, `elapsed` since it began, on a terminal `width`
/// columns wide: `base debian-13: [1m23s] debootstrap bookworm (step 1 of 3)`, or
/// `starting clones [#######.......] 120/300 1m05s`. One column short of the width at most:
/// a line that fills the last column wraps on some terminals, and `\r` then returns to
/// the wrong line. Control characters in the title or a step are shown as escapes.
fn render(title: &str, work: &Work, elapsed: Duration, width: usize) -> String {
    let room = width.max(2) - 1;
    let title = escape::visible(title);
    let time = elapsed_text(elapsed);
    let line = match work {
        Work::Step { what, number, of } => format!(
            "{title}: [{time}] {} (step {number} of {of})",
            escape::visible(what)
        ),
        Work::Count { done, total } => {
            let count = format!("{done}/{total} {time}");
            // What the line holds besides the bar's cells: "{title} [", "] {count}".
            let around = title.chars().count() + count.chars().count() + 4;
            let cells = room.saturating_sub(around).min(BAR_CELLS);
            if cells >= MIN_BAR_CELLS {
                format!("{title} [{}] {count}", bar(*done, *total, cells))
            } else {
                format!("{title} {count}")
            }
        }
    };
    line.chars().take(room).collect()
}

/// A bar of `cells` cells, `#` for the part done and `.` for the rest; full only when all
/// is done.
fn bar(done: usize, total: usize, cells: usize) -> String {
    let filled = (cells * done.min(total))
        .checked_div(total)
        .unwrap_or(cells);
    format!("{}{}", "#".repeat(filled), ".".repeat(cells - filled))
}

/// A time for people: `42s`, `1m05s`, `2h03m09s`.
fn elapsed_text(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, _) => format!("{minutes}m{seconds:02}s"),
        _ => format!("{hours}h{minutes:02}m{seconds:02}s"),
    }
}

/// The ioctl, in a module of its own: the macro makes it a public function.
mod ioctl {
    nix::ioctl_read_bad!(
        /// `TIOCGWINSZ`: the size of the terminal `fd` is.
        window_size,
        nix::libc::TIOCGWINSZ,
        nix::libc::winsize
    );
}

/// How many columns the terminal on `fd` has; `None` when it is no terminal or does not
/// say (a width of 0).
fn terminal_width(fd: BorrowedFd<'_>) -> Option<usize> {
    let mut size = nix::libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into `size`, which outlives the call; the
    // descriptor is borrowed, so it is open.
    unsafe { ioctl::window_size(fd.as_raw_fd(), &mut size) }.ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(what: &str, number: usize, of: usize) -> Work {
        Work::Step {
            what: what.to_owned(),
            number,
            of,
        }
    }

    #[test]
    fn elapsed_time_reads_as_people_say_it() {
        let text = |s| elapsed_text(Duration::from_secs(s));
        assert_eq!(text(0), "0s");
        assert_eq!(text(59), "59s");
        assert_eq!(text(60), "1m00s");
        assert_eq!(text(83), "1m23s");
        assert_eq!(text(3599), "59m59s");
        assert_eq!(text(3600), "1h00m00s");
        assert_eq!(text(7389), "2h03m09s");
        assert_eq!(elapsed_text(Duration::from_millis(1999)), "1s");
    }

    #[test]
    fn a_step_shows_the_time_and_which_step_of_how_many() {
        let line = render(
            "base debian-13",
            &step("debootstrap trixie", 2, 5),
            Duration::from_secs(83),
            80,
        );
        assert_eq!(
            line,
            "base debian-13: [1m23s] debootstrap trixie (step 2 of 5)"
        );
    }

    #[test]
    fn a_count_shows_a_bar_the_count_and_the_time() {
        let count = |done, total| Work::Count { done, total };
        let line = render(
            "starting clones",
            &count(120, 300),
            Duration::from_secs(65),
            80,
        );
        assert_eq!(
            line,
            format!(
                "starting clones [{}{}] 120/300 1m05s",
                "#".repeat(12),
                ".".repeat(18)
            )
        );
        // A narrower terminal narrows the bar; too narrow for one, the count alone.
        let narrow = render("starting clones", &count(1, 2), Duration::ZERO, 40);
        assert_eq!(narrow, "starting clones [#######.......] 1/2 0s");
        assert_eq!(narrow.chars().count(), 39);
        assert_eq!(
            render("starting clones", &count(1, 2), Duration::ZERO, 28),
            "starting clones 1/2 0s"
        );
    }

    #[test]
    fn the_bar_is_full_only_when_all_is_done() {
        assert_eq!(bar(0, 300, 10), "..........");
        assert_eq!(bar(299, 300, 10), "#########.");
        assert_eq!(bar(300, 300, 10), "##########");
        // More reported than asked, or nothing asked: full, never past its cells.
        assert_eq!(bar(400, 300, 10), "##########");
        assert_eq!(bar(0, 0, 4), "####");
    }

    #[test]
    fn the_line_never_reaches_the_last_column() {
        let long = step(&"x".repeat(500), 1, 1);
        for width in [0, 1, 2, 10, 80, 200] {
            let line = render("base b", &long, Duration::ZERO, width);
            assert_eq!(line.chars().count(), width.max(2) - 1, "{width}");
        }
        let line = render("base b", &long, Duration::ZERO, 20);
        assert_eq!(line, "base b: [0s] xxxxxx");
    }

    #[test]
    fn control_characters_cannot_reach_the_terminal() {
        let line = render(
            "base \x1b]0;owned\x07",
            &step("x\rgone", 1, 1),
            Duration::ZERO,
            200,
        );
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.contains("\\x1b]0;owned\\x07") && line.contains("x\\x0dgone"));
    }

    #[test]
    fn width_comes_from_a_terminal_only() {
        let file = tempfile::tempfile().unwrap();
        assert_eq!(terminal_width(file.as_fd()), None);
    }

    /// A terminal the test reads back while the ticker writes to it.
    #[derive(Clone, Default)]
    struct Terminal(Arc<Mutex<Vec<u8>>>);

    impl Write for Terminal {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Terminal {
        fn text(&self) -> String {
            String::from_utf8(lock(&self.0).clone()).unwrap()
        }

        /// Waits (a few seconds at most) until the ticker has written `wanted`.
        fn wait_for(&self, wanted: &str) {
            let deadline = Instant::now() + Duration::from_secs(5);
            while !self.text().contains(wanted) {
                assert!(
                    Instant::now() < deadline,
                    "never drawn {wanted:?}: {:?}",
                    self.text()
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }

        /// What was written between clears, each once however often it was drawn again,
        /// with the clock as `[T]`: the first clear opens the first frame.
        fn frames(&self) -> Vec<String> {
            let text = self.text();
            let mut frames = text.split(CLEAR);
            assert_eq!(frames.next(), Some(""), "{text:?}");
            let mut out: Vec<String> = Vec::new();
            for frame in frames {
                let frame = match (frame.find(": ["), frame.find("] ")) {
                    (Some(open), Some(close)) if open < close => {
                        format!("{}: [T{}", &frame[..open], &frame[close..])
                    }
                    _ => frame.to_owned(),
                };
                if out.last() != Some(&frame) {
                    out.push(frame);
                }
            }
            out
        }
    }

    #[test]
    fn a_terminal_sees_each_report_drawn_over_the_last_then_cleared() {
        let terminal = Terminal::default();
        let line = StatusLine::new("base b1", terminal.clone(), true, || 80);
        line.step("debootstrap bookworm", 1, 2);
        terminal.wait_for("debootstrap bookworm (step 1 of 2)");
        line.step("finishing", 2, 2);
        terminal.wait_for("finishing (step 2 of 2)");
        line.say("clone-army: warning: w");
        terminal.wait_for("warning: w\n");
        let shared = Arc::clone(&line.shared);
        drop(line);
        // The warning where the status line was, the status line drawn again under it,
        // and at the end nothing: the answer starts at the line's first column.
        assert_eq!(
            terminal.frames(),
            [
                "base b1: [T] debootstrap bookworm (step 1 of 2)",
                "base b1: [T] finishing (step 2 of 2)",
                "clone-army: warning: w\n",
                "base b1: [T] finishing (step 2 of 2)",
                "",
            ]
        );
        assert!(terminal.text().ends_with(CLEAR));
        // Once the line is gone, what is said is for stderr itself, not for a line no one
        // draws any more.
        assert!(!shared.say("clone-army: warning: late"));
    }

    #[test]
    fn no_terminal_sees_nothing_at_all() {
        let terminal = Terminal::default();
        let line = StatusLine::new("starting clones", terminal.clone(), false, || 80);
        line.count(0, 3);
        line.count(3, 3);
        drop(line);
        assert_eq!(terminal.text(), "");
    }

    #[test]
    fn nothing_is_drawn_before_the_first_report() {
        let terminal = Terminal::default();
        let line = StatusLine::new("creating clones", terminal.clone(), true, || 80);
        std::thread::sleep(Duration::from_millis(50));
        drop(line);
        assert_eq!(terminal.text(), "");
    }
}
