//! What the helper warns about in one invocation: said on stderr as it happens, and
//! carried in the answer's `warnings`, so that a caller that does not show stderr (the
//! Puppet providers drop it) still tells its user.

use std::sync::{Mutex, OnceLock};

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// How a warning is said, once the command line has set it ([`say_through`]); a line of
/// its own on stderr until then.
static SAY: OnceLock<fn(&str)> = OnceLock::new();

/// Has every warning from now on said through `say`: the command line's, which prints it
/// above the status line of a long verb while one is on the terminal (a line of stderr's
/// own would be written into the middle of it).
pub fn say_through(say: fn(&str)) {
    let _ = SAY.set(say);
}

/// Says `message` on stderr now and keeps it for the answer.
pub fn warn(message: impl Into<String>) {
    let message = message.into();
    let line = format!("clone-army: warning: {message}");
    match SAY.get() {
        Some(say) => say(&line),
        None => eprintln!("{line}"),
    }
    WARNINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(message);
}

/// The warnings kept so far, in order; the list is empty afterwards.
pub fn take() -> Vec<String> {
    std::mem::take(
        &mut *WARNINGS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_kept_in_order_and_taken_once() {
        // Other tests may warn at the same time: only this test's own are looked for.
        warn("first of warnings_are_kept");
        warn("second of warnings_are_kept");
        let taken: Vec<String> = take()
            .into_iter()
            .filter(|w| w.ends_with("of warnings_are_kept"))
            .collect();
        assert_eq!(
            taken,
            ["first of warnings_are_kept", "second of warnings_are_kept"]
        );
        assert!(!take().iter().any(|w| w.ends_with("of warnings_are_kept")));
    }
}
