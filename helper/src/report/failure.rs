//! Why a run counts as failed, by kind: what the agent's own files say went wrong.
//!
//! The summary says a run failed when resources failed or no catalog was applied; the
//! full report says more, and some of it the summary hides: an agent that kept Puppet's
//! `usecacheonfailure = true` applies its cached catalog when the server fails it, and
//! its summary then reads like a check-in. A load test must count such a run as failed,
//! and say why, so a run is failed here as soon as its report shows the server failing
//! it (a cached catalog, a 5xx, a timeout, a refused connection), whatever the summary
//! says.
//!
//! The kinds are read from Puppet's own messages (its `err` and `warning` lines: the
//! node request that failed is only a warning, the run goes on), worded as Puppet 7 and 8
//! word them:
//! - "Error 503 on SERVER: ..." (`Puppet::Indirector::REST`, every indirected request:
//!   catalog, node, file metadata), "Too many HTTP retries for ..." (503s with
//!   `Retry-After`, given up on);
//! - "Request to ... timed out read operation after 60.0 seconds" (`Puppet::HTTP::Client`),
//!   `Net::ReadTimeout`, "execution expired", and a run stopped by `runtimeout`;
//! - "Connection refused", "No route to host", ... (the client's `SystemCallError`s and
//!   resolver errors).
//!
//! What a run is judged, from its summary and these kinds, is `judge.rs`'s.

pub use crate::protocol::answers::FailureKind;

/// The most kinds a run is given (every kind there is, each once).
pub const MAX_KINDS: usize = FailureKind::ALL.len();

impl FailureKind {
    /// The server failed the run (or could not be reached): the kinds that fail a run
    /// whatever its summary says.
    pub fn is_the_servers(self) -> bool {
        matches!(
            self,
            FailureKind::CachedCatalog
                | FailureKind::ServerError
                | FailureKind::Timeout
                | FailureKind::Connection
        )
    }
}

/// How Puppet words a request the server answered with a 5xx, or a 503 given up on.
const SERVER_ERROR_WORDS: &[&str] = &[
    "Too many HTTP retries",
    "Internal Server Error",
    "Service Unavailable",
    "Bad Gateway",
    "Gateway Timeout",
];

/// How Puppet and Ruby word a request or a run that ran out of time.
const TIMEOUT_WORDS: &[&str] = &[
    "timed out connect operation",
    "timed out read operation",
    "Net::ReadTimeout",
    "Net::OpenTimeout",
    "Net::WriteTimeout",
    "execution expired",
    "Timeout::Error",
    "did not complete within",
];

/// How the server that could not be reached is worded (`Errno::*`, the resolver's
/// errors, a TLS handshake that failed).
const CONNECTION_WORDS: &[&str] = &[
    "Connection refused",
    "Connection reset",
    "No route to host",
    "Network is unreachable",
    "getaddrinfo",
    "Name or service not known",
    "Temporary failure in name resolution",
    "SSL_connect",
    "certificate verify failed",
];

/// The kind one logged message names, if any.
pub fn kind_of_message(message: &str) -> Option<FailureKind> {
    if has_server_error_code(message) || SERVER_ERROR_WORDS.iter().any(|w| message.contains(w)) {
        Some(FailureKind::ServerError)
    } else if TIMEOUT_WORDS.iter().any(|w| message.contains(w)) {
        Some(FailureKind::Timeout)
    } else if CONNECTION_WORDS.iter().any(|w| message.contains(w)) {
        Some(FailureKind::Connection)
    } else {
        None
    }
}

/// "Error 5NN on SERVER", as `Puppet::Indirector::REST` words every 5xx.
fn has_server_error_code(message: &str) -> bool {
    message.match_indices("Error 5").any(|(i, _)| {
        let rest = &message.as_bytes()[i + "Error 5".len()..];
        rest.len() >= 2
            && rest[..2].iter().all(u8::is_ascii_digit)
            && rest[2..].starts_with(b" on SERVER")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puppets_words_for_each_kind() {
        for (message, kind) in [
            (
                "Could not retrieve catalog from remote server: Error 503 on SERVER: The number of requests waiting for a JRuby instance has exceeded the limit",
                Some(FailureKind::ServerError),
            ),
            (
                "Could not retrieve catalog from remote server: Error 500 on SERVER: Server Error: Evaluation Error: boom",
                Some(FailureKind::ServerError),
            ),
            (
                "Too many HTTP retries for https://puppet:8140/puppet/v3/catalog/c1",
                Some(FailureKind::ServerError),
            ),
            (
                "Could not retrieve catalog from remote server: Request to https://puppet:8140/puppet/v3/catalog/c1?environment=production timed out read operation after 2.003 seconds",
                Some(FailureKind::Timeout),
            ),
            (
                "Connection to https://127.0.0.1:1/puppet/v3 failed, trying next route: Request to https://127.0.0.1:1/puppet/v3 failed after 0.001 seconds: Failed to open TCP connection to 127.0.0.1:1 (Connection refused - connect(2) for \"127.0.0.1\" port 1)",
                Some(FailureKind::Connection),
            ),
            ("'/bin/false' returned 1 instead of one of [0]", None),
            // A 5 in another place is no server error.
            ("Error 5 files on SERVER", None),
            ("Error 50 on SERVER", None),
            ("Error 404 on SERVER: Not Found", None),
            ("Error 5", None),
        ] {
            assert_eq!(kind_of_message(message), kind, "{message}");
        }
    }

    #[test]
    fn only_the_servers_kinds_fail_a_run_the_summary_calls_good() {
        let servers: Vec<&str> = FailureKind::ALL
            .iter()
            .filter(|k| k.is_the_servers())
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            servers,
            ["cached-catalog", "server-error", "timeout", "connection"]
        );
    }
}
