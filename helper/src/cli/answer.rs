//! What a verb answers and how it reaches stdout: the JSON envelope (with the
//! invocation's warnings), text for people, or the error envelope with its exit code; and
//! the host every verb but the rules and documents runs on, given only to root.

use serde::Serialize;
use serde_json::Value;

use super::args::ListFormat;
use super::format::Chosen;
use crate::context::Context;
use crate::protocol::answers;
use crate::protocol::answers::Envelope;
use crate::protocol::error::{Error, Result};
use crate::protocol::warnings;
use crate::sys::escape;
use crate::sys::paths::Layout;
use crate::systemd::fake_file;

/// What a verb answers on success: the envelope's result, or text for people.
pub enum Answer {
    Json(Value),
    Text(String),
}

/// Prints what a verb answered; the process's exit code.
pub fn answer(result: Result<Answer>) -> i32 {
    match result {
        Ok(Answer::Json(result)) => {
            answers::print(&Envelope::success(result).with_warnings(warnings::take()));
            0
        }
        Ok(Answer::Text(text)) => {
            print_text(&text);
            0
        }
        Err(e) => fail(&e),
    }
}

pub fn print_text(text: &str) {
    print_bytes(text.as_bytes());
}

pub fn print_bytes(bytes: &[u8]) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(bytes);
    let _ = stdout.flush();
}

fn check_root() -> Result<()> {
    let euid = nix::unistd::geteuid();
    if euid.is_root() {
        Ok(())
    } else {
        Err(Error::NotRoot {
            euid: euid.as_raw(),
        })
    }
}

/// Prints the error envelope (and the error for people on stderr); the exit code.
pub fn fail(error: &Error) -> i32 {
    eprintln!("clone-army: {}", escape::visible(&error.to_string()));
    answers::print(&Envelope::failure(error).with_warnings(warnings::take()));
    error.exit_code()
}

/// A verb's result as the envelope's.
pub fn json<T: Serialize>(result: Result<T>) -> Result<Answer> {
    serde_json::to_value(result?)
        .map(Answer::Json)
        .map_err(|e| Error::Internal(e.to_string()))
}

/// A listing as the envelope or, with `--format table` (or `auto` on a terminal), as the
/// table for people.
pub fn listing<T: Serialize>(
    result: Result<T>,
    format: Chosen<ListFormat>,
    table: fn(&T) -> String,
) -> Result<Answer> {
    match format.resolve(ListFormat::Table, ListFormat::Json) {
        ListFormat::Json => json(result),
        ListFormat::Table => result.map(|list| Answer::Text(table(&list))),
    }
}

/// Runs `verb` on the host: as root only, with the layout and systemd of this process.
pub fn on_host<T>(verb: impl FnOnce(&Context) -> Result<T>) -> Result<T> {
    check_root()?;
    let systemd = fake_file::from_env()?;
    let ctx = Context::new(Layout::from_env(), systemd.as_ref());
    verb(&ctx)
}
