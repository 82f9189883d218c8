//! What the helper warns about in one invocation: said on stderr as it happens, and
//! carried in the answer's `warnings`, so that a caller that does not show stderr (the
//! Puppet providers drop it) still tells its user.

use std::sync::Mutex;

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Says `message` on stderr now and keeps it for the answer.
pub fn warn(message: impl Into<String>) {
    let message = message.into();
    eprintln!("clone-army: warning: {message}");
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
