//! What a clone's last run did, from the agent's `last_run_report.yaml`.
//!
//! The summary (`summary.rs`) says *that* a run failed; the full report's `logs` say
//! *why*: a fleet whose clones cannot reach the server shows "Connection refused" there,
//! a catalog that does not compile shows the server's error. It also says what the
//! summary hides: `cached_catalog_status: on_failure` for a run that applied its cached
//! catalog because the server failed it ([`super::failure`]). Puppet writes it to
//! `$statedir/last_run_report.yaml` (`lastrunreport`), in the clone's upper layer like the
//! summary, *after* the summary and after sending it to the server: until then the file
//! there is the run before's, which its `time` (when its run began) tells apart.
//!
//! Its top level is tagged `!ruby/object:Puppet::Transaction::Report` and it can be large
//! (one entry per resource, in `resource_statuses`), while what is wanted of it is small:
//! `time`, `cached_catalog_status` and `logs`. So it is read whole (within its cap and
//! the sample's budget) but only those top-level entries are parsed ([`wanted_entries`]):
//! Ruby's YAML writer puts every top-level key at the start of a line and indents
//! everything under it (nested lists included, and the lines of a multi-line string), so
//! the lines from one top-level key to the next are that key's entry.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::failure::{kind_of_message, FailureKind};
use super::kept;
use crate::inventory::bases::agent_dirs_for;

pub const REPORT_FILE: &str = "last_run_report.yaml";

/// At most this many error messages make a clone's `failure`.
pub const MAX_FAILURE_LINES: usize = 3;

/// The levels Puppet logs a failure at (`err` is what runs use; the rest for completeness).
const ERROR_LEVELS: &[&str] = &["err", "alert", "emerg", "crit"];
/// The level of what fails a request while the run goes on (the node request that
/// failed: "Unable to fetch my node definition, but the agent run will continue").
const WARNING_LEVEL: &str = "warning";

/// The top-level entries of the report that are parsed.
const WANTED_ENTRIES: &[&str] = &["time", "cached_catalog_status", "logs"];

/// The report's directories to try for a base with this confdir, most likely first.
pub fn statedirs_for(confdir: &str) -> [&'static str; 2] {
    agent_dirs_for(confdir).map(|agent| agent.statedir)
}

/// What the report makes of one `last_run_report.yaml`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFindings {
    /// When its run began (its `time`), seconds since the epoch: which run it is of.
    pub started: Option<u64>,
    /// Its `cached_catalog_status` was `on_failure`: the catalog applied was the cached
    /// one, because a new one could not be had.
    pub cached_catalog_on_failure: bool,
    /// The first [`MAX_FAILURE_LINES`] distinct error messages, one a line (as
    /// [`failure`] gives them).
    pub errors: Option<String>,
    /// The kinds its errors and warnings name, and [`FailureKind::CachedCatalog`].
    pub kinds: BTreeSet<FailureKind>,
}

impl RunFindings {
    /// The bytes of text kept.
    pub fn kept_bytes(&self) -> usize {
        self.errors.as_ref().map_or(0, String::len)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawReport {
    #[serde(alias = ":time")]
    time: Option<RawScalar>,
    #[serde(alias = ":cached_catalog_status")]
    cached_catalog_status: Option<RawScalar>,
    #[serde(alias = ":logs")]
    logs: Option<Vec<RawLog>>,
}

/// A scalar as Ruby writes it: the time is a quoted string, but what a clone writes is
/// its own business and must not make the whole report unreadable.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawScalar {
    Text(String),
    Other(serde::de::IgnoredAny),
}

impl RawScalar {
    fn text(&self) -> Option<&str> {
        match self {
            RawScalar::Text(t) => Some(t),
            RawScalar::Other(_) => None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawLog {
    #[serde(alias = ":level")]
    level: Option<String>,
    #[serde(alias = ":message")]
    message: Option<String>,
    #[serde(alias = ":source")]
    source: Option<String>,
}

/// The `source` of what the agent itself logs (its requests to the server among them);
/// a resource's logs name the resource, Facter's `Facter`.
const AGENT_SOURCE: &str = "Puppet";

/// The lines of `text` that are the entries `WANTED_ENTRIES` names of its top-level mapping:
/// from a line that begins with one of their keys (`key:`, or `:key:` as Ruby writes a
/// symbol) up to the next line that begins with any key. A line that begins with a
/// space, a tab, `-`, `#` or nothing is within the entry before it.
pub fn wanted_entries(text: &str) -> String {
    let mut out = String::new();
    let mut keeping = false;
    for line in text.split_inclusive('\n') {
        if let Some(key) = top_level_key(line) {
            keeping = WANTED_ENTRIES.contains(&key);
        } else if line.starts_with("---") || line.starts_with("...") {
            // A document marker ends whatever entry was open.
            keeping = false;
            continue;
        }
        if keeping {
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// The key a line of the top-level mapping begins with.
fn top_level_key(line: &str) -> Option<&str> {
    let line = line.strip_prefix(':').unwrap_or(line);
    let end = line.find(':')?;
    let key = &line[..end];
    let after = &line.as_bytes()[end + 1..];
    let key_like = !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && key.as_bytes()[0].is_ascii_alphabetic();
    let ends = after.is_empty() || matches!(after[0], b' ' | b'\n' | b'\r');
    (key_like && ends).then_some(key)
}

/// What the report says of its run. An error says what was wrong with the file.
pub fn findings(text: &str) -> Result<RunFindings, String> {
    let wanted = wanted_entries(text);
    let raw: Option<RawReport> = super::yaml::from_str(&wanted).map_err(|e| {
        let message = e.to_string();
        let first = message.lines().next().unwrap_or_default();
        kept::error(&format!("{REPORT_FILE} is not YAML Puppet wrote: {first}"))
    })?;
    let raw = raw.unwrap_or_default();
    let mut lines: Vec<String> = Vec::new();
    let mut kinds = BTreeSet::new();
    let cached_catalog_on_failure = raw
        .cached_catalog_status
        .as_ref()
        .and_then(RawScalar::text)
        .is_some_and(|s| s.trim() == "on_failure");
    if cached_catalog_on_failure {
        kinds.insert(FailureKind::CachedCatalog);
    }
    for log in raw.logs.unwrap_or_default() {
        let level = log.level.as_deref().unwrap_or_default();
        let level = level.trim_start_matches(':');
        let is_error = ERROR_LEVELS.contains(&level);
        if !is_error && level != WARNING_LEVEL {
            continue;
        }
        let Some(message) = log.message.as_deref() else {
            continue;
        };
        // What a resource or a fact says (an `exec` of curl that was refused) is not the
        // server failing the run.
        let agents_own = log.source.as_deref().is_none_or(|s| s == AGENT_SOURCE);
        if let Some(kind) = kind_of_message(message).filter(|_| agents_own) {
            kinds.insert(kind);
        }
        let Some(line) = message.lines().map(str::trim).find(|l| !l.is_empty()) else {
            continue;
        };
        let line = kept::failure_line(line);
        if is_error && lines.len() < MAX_FAILURE_LINES && !lines.contains(&line) {
            lines.push(line);
        }
    }
    Ok(RunFindings {
        started: raw
            .time
            .as_ref()
            .and_then(RawScalar::text)
            .and_then(crate::sys::time::parse_rfc3339),
        cached_catalog_on_failure,
        errors: (!lines.is_empty()).then(|| lines.join("\n")),
        kinds,
    })
}

/// The first [`MAX_FAILURE_LINES`] distinct error messages of a report, each cut to its
/// first line (Puppet's "Wrapped exception:" continuations repeat the first) and to
/// [`kept::MAX_FAILURE_LINE_CHARS`], joined with newlines; `None` when the report logged
/// no error. An error says what was wrong with the file.
pub fn failure(text: &str) -> Result<Option<String>, String> {
    findings(text).map(|f| f.errors)
}

/// Seconds either way a report's start may lie off the start its summary implies
/// (`time.last_run` less `time.total`, both rounded by the agent): far below the time
/// between two runs.
pub const SAME_RUN_SLACK: u64 = 5;

/// Whether a report that began at `started` is of the run a summary ended at `last_run`
/// after `total_time` seconds; `false` when either time is missing.
pub fn is_same_run(started: Option<u64>, last_run: Option<u64>, total_time: Option<f64>) -> bool {
    let (Some(started), Some(last_run), Some(total)) = (started, last_run, total_time) else {
        return false;
    };
    if !total.is_finite() || total < 0.0 {
        return false;
    }
    let began = last_run.saturating_sub(total.ceil() as u64);
    started.saturating_add(SAME_RUN_SLACK) >= began
        && started <= last_run.saturating_add(SAME_RUN_SLACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Written by Puppet 7.23 (Debian 12); see fixtures/README.md.
    const UNREACHABLE: &str = include_str!("fixtures/unreachable-report.yaml");
    const FAILED: &str = include_str!("fixtures/failed-report.yaml");

    #[test]
    fn an_unreachable_server_is_named_with_its_reason() {
        let failure = failure(UNREACHABLE).unwrap().unwrap();
        let lines: Vec<&str> = failure.lines().collect();
        assert_eq!(lines.len(), MAX_FAILURE_LINES, "{failure}");
        assert!(lines[0].starts_with("Connection to https://127.0.0.1:1/puppet/v3 failed"));
        assert!(lines[0].contains("Connection refused"), "{failure}");
        // The node request, then the catalog request, each refused; then the file sync.
        assert!(lines[1].contains("Connection refused"), "{failure}");
        assert_eq!(lines[2], "No more routes to fileserver");
        // Warnings ("Unable to fetch my node definition") are not errors.
        assert!(!failure.contains("node definition"), "{failure}");
    }

    #[test]
    fn a_failed_resource_is_named() {
        let failure = failure(FAILED).unwrap().unwrap();
        assert_eq!(
            failure,
            "'/bin/false' returned 1 instead of one of [0]\n\
             change from 'notrun' to ['0'] failed: '/bin/false' returned 1 instead of one of [0]"
        );
    }

    #[test]
    fn the_same_message_twice_counts_once() {
        let twice = "logs:\n- level: err\n  message: boom\n- level: err\n  message: boom\n- level: :err\n  message: |-\n    bang\n    Wrapped exception:\n    bang\n";
        assert_eq!(failure(twice).unwrap().unwrap(), "boom\nbang");
    }

    #[test]
    fn a_report_without_errors_has_no_failure() {
        let quiet = "--- !ruby/object:Puppet::Transaction::Report\nhost: c1\nlogs:\n- level: notice\n  message: Applied catalog in 0.01 seconds\n";
        assert_eq!(failure(quiet).unwrap(), None);
        assert_eq!(failure("").unwrap(), None);
    }

    #[test]
    fn garbage_is_an_error_not_a_failure() {
        let error = failure("logs: [unclosed").unwrap_err();
        assert!(error.contains(REPORT_FILE), "{error}");
    }

    // Written by Puppet 8.10 against Puppet Server 8.7 (Debian 13), as an agent daemon's
    // run (no `--test`, which turns `usecacheonfailure` off); see fixtures/README.md.
    const CACHED_500: &str = include_str!("fixtures/puppet-8-cached-catalog-500-report.yaml");
    const CACHED_503: &str = include_str!("fixtures/puppet-8-503-cached-catalog-report.yaml");
    const CACHED_TIMEOUT: &str =
        include_str!("fixtures/puppet-8-timeout-cached-catalog-report.yaml");
    const SERVER_ERROR: &str = include_str!("fixtures/puppet-8-server-error-report.yaml");
    const UNCHANGED_8: &str = include_str!("fixtures/puppet-8-unchanged-report.yaml");

    fn kinds(text: &str) -> Vec<FailureKind> {
        findings(text).unwrap().kinds.into_iter().collect()
    }

    /// The run Puppet calls `unchanged` after the server failed its catalog request: its
    /// report says the cached catalog was applied, and why.
    #[test]
    fn a_run_that_applied_its_cached_catalog_is_found_out_with_the_servers_error() {
        let found = findings(CACHED_500).unwrap();
        assert!(found.cached_catalog_on_failure);
        assert_eq!(
            kinds(CACHED_500),
            [FailureKind::CachedCatalog, FailureKind::ServerError]
        );
        let errors = found.errors.unwrap();
        assert!(
            errors
                .starts_with("Could not retrieve catalog from remote server: Error 500 on SERVER"),
            "{errors}"
        );
        // 2026-11-28T13:08:00.46Z: when that run began.
        assert_eq!(found.started, Some(1_795_871_280));
    }

    #[test]
    fn a_503_from_a_full_queue_and_a_read_timeout_are_named() {
        assert_eq!(
            kinds(CACHED_503),
            [FailureKind::CachedCatalog, FailureKind::ServerError]
        );
        let errors = findings(CACHED_503).unwrap().errors.unwrap();
        // The plugin sync's 503 is worded by its reason alone; the catalog's by its code.
        assert!(errors.starts_with("Service Unavailable\n"), "{errors}");
        assert!(errors.contains("Error 503 on SERVER"), "{errors}");
        assert_eq!(
            kinds(CACHED_TIMEOUT),
            [FailureKind::CachedCatalog, FailureKind::Timeout]
        );
        // Without the cache the run failed, and its report says so the same way.
        assert_eq!(kinds(SERVER_ERROR), [FailureKind::ServerError]);
        assert!(!findings(SERVER_ERROR).unwrap().cached_catalog_on_failure);
    }

    #[test]
    fn a_good_run_has_no_kind_and_no_error() {
        let found = findings(UNCHANGED_8).unwrap();
        assert_eq!(found.kinds.len(), 0);
        assert_eq!(found.errors, None);
        assert!(!found.cached_catalog_on_failure);
        assert!(found.started.is_some());
    }

    /// A node request the server failed is only a warning (the run goes on), and is still
    /// the server failing the run.
    #[test]
    fn a_warning_that_names_a_5xx_counts_and_is_no_error_line() {
        let text = "logs:\n- level: warning\n  message: 'Error 500 on SERVER: boom'\n";
        let found = findings(text).unwrap();
        assert_eq!(
            found.kinds.into_iter().collect::<Vec<_>>(),
            [FailureKind::ServerError]
        );
        assert_eq!(found.errors, None);
    }

    /// A resource whose own command was refused a connection is the catalog's failure,
    /// not the server's.
    #[test]
    fn a_resources_own_connection_error_is_no_server_failure() {
        let text = "logs:\n- level: err\n  message: 'curl: Connection refused'\n  source: /Stage[main]/Main/Exec[curl]/returns\n";
        let found = findings(text).unwrap();
        assert!(found.kinds.is_empty());
        assert_eq!(found.errors.as_deref(), Some("curl: Connection refused"));
    }

    /// Only the wanted entries are parsed: a large `resource_statuses` costs no parsing,
    /// and garbage in it does not make the report unreadable.
    #[test]
    fn only_the_wanted_top_level_entries_are_parsed() {
        let huge = format!(
            "{}resource_statuses:\n  x: [unclosed\n{}",
            &CACHED_500[..CACHED_500.find("metrics:").unwrap()],
            "  - line\n".repeat(100_000)
        );
        let wanted = wanted_entries(&huge);
        assert!(wanted.len() < CACHED_500.len(), "{}", wanted.len());
        assert!(wanted.starts_with("time: '2026-11-28T13:08:00"), "{wanted}");
        assert!(findings(&huge).unwrap().errors.is_some());
        // The whole real report: its logs, its time and its cached catalog status only.
        let wanted = wanted_entries(CACHED_500);
        let keys: Vec<&str> = wanted.lines().filter_map(top_level_key).collect();
        assert_eq!(keys, ["time", "logs", "cached_catalog_status"]);
    }

    #[test]
    fn a_report_is_paired_with_the_summary_of_its_own_run_only() {
        // A run that began at 5000 and took 12.5 s ended at 5012 or 5013.
        assert!(is_same_run(Some(5000), Some(5013), Some(12.5)));
        assert!(is_same_run(Some(5000), Some(5012), Some(12.5)));
        // The report there is the run before's (an interval earlier).
        assert!(!is_same_run(Some(5000 - 1800), Some(5013), Some(12.5)));
        // A report of a later run than the summary (written after it, read before it).
        assert!(!is_same_run(Some(5020), Some(5013), Some(12.5)));
        assert!(!is_same_run(None, Some(5013), Some(12.5)));
        assert!(!is_same_run(Some(5000), Some(5013), None));
        assert!(!is_same_run(Some(5000), Some(5013), Some(f64::NAN)));
        assert!(!is_same_run(
            Some(u64::MAX - 1),
            Some(1013),
            Some(f64::INFINITY)
        ));
    }

    #[test]
    fn aio_bases_look_under_opt_first() {
        assert_eq!(
            statedirs_for("/etc/puppetlabs/puppet"),
            [
                "/opt/puppetlabs/puppet/cache/state",
                "/var/cache/puppet/state"
            ]
        );
        assert_eq!(statedirs_for("/etc/puppet")[0], "/var/cache/puppet/state");
    }
}
