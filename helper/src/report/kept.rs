//! How much of the text others wrote the report keeps: a clone's run summary and report,
//! the server's and PuppetDB's answers.
//!
//! Each of them is read with a size cap (a summary 1 MiB, a report 32 MiB, an answer
//! 64 MiB), but what is kept of them lives longer than the read: the recorder keeps every
//! clone's failure and versions for its whole life, and the server's version and states
//! go into every line of the timeline. A clone that fails with a huge message (an `exec`
//! with a huge command line, served by the server under test) would otherwise cost the
//! recorder the whole message per clone. So every value kept is cut here to what such a
//! value is in practice, with a visible mark (`…`) where it was cut.
//!
//! Certnames are not cut: they are kept only when they are host names (the rule clones
//! are made with, [`crate::sys::names::validate_hostname`], at most
//! [`crate::sys::names::MAX_HOSTNAME_LEN`] characters).

use crate::sys::table::truncate;

/// One line of why a run failed. Puppet's longest in practice (a compile error with its
/// file, line and node; a refused connection with its URL and errno) stay well below.
pub const MAX_FAILURE_LINE_CHARS: usize = 1024;
/// A version: Puppet's (`8.10.0`), the server's and PuppetDB's, and a catalog's
/// `config_version` (a timestamp by default; a commit id or a short text from a
/// `config_version` script).
pub const MAX_VERSION_CHARS: usize = 128;
/// A service's name or state in a status answer (`jruby-metrics`, `running`), and the
/// status of a report PuppetDB holds.
pub const MAX_SERVICE_CHARS: usize = 128;
/// The services of Puppet Server's status answer that are kept (it has about 20,
/// Puppet Enterprise's about 30).
pub const MAX_SERVICES: usize = 100;
/// An error quoting what was wrong with a file or an answer (a parser's message may
/// quote the value it refused).
pub const MAX_ERROR_CHARS: usize = 1024;

/// A failure line as it is kept.
pub fn failure_line(text: &str) -> String {
    truncate(text, MAX_FAILURE_LINE_CHARS)
}

/// A version as it is kept.
pub fn version(text: &str) -> String {
    truncate(text, MAX_VERSION_CHARS)
}

/// A service's name or a state as it is kept.
pub fn service(text: &str) -> String {
    truncate(text, MAX_SERVICE_CHARS)
}

/// An error as it is kept.
pub fn error(text: &str) -> String {
    truncate(text, MAX_ERROR_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_cut_with_a_mark_and_short_ones_kept_as_they_are() {
        assert_eq!(version("8.10.0"), "8.10.0");
        let long = version(&"7".repeat(1 << 20));
        assert_eq!(long.chars().count(), MAX_VERSION_CHARS);
        assert!(long.ends_with('…'), "{long}");
        assert_eq!(failure_line(&"ü".repeat(5000)).chars().count(), 1024);
        assert_eq!(service(&"s".repeat(MAX_SERVICE_CHARS)).len(), 128);
        assert_eq!(error(""), "");
    }
}
