//! Why a clone's last run failed, from the agent's `last_run_report.yaml`.
//!
//! The summary (`summary.rs`) says *that* a run failed; the full report's `logs` say
//! *why*: a fleet whose clones cannot reach the server shows "Connection refused" there,
//! a catalog that does not compile shows the server's error. Puppet writes it to
//! `$statedir/last_run_report.yaml` (`lastrunreport`), in the clone's upper layer like the
//! summary. Its top level is tagged `!ruby/object:Puppet::Transaction::Report` and it
//! can be large (one entry per resource), so it is read only for clones whose summary
//! says `failed`, and only `logs` is kept: each entry's `level` and `message`.

use serde::Deserialize;

use super::kept;

/// `$statedir` of Debian's and Ubuntu's `puppet-agent` (`$vardir/state`).
pub const DISTRO_STATEDIR: &str = "/var/cache/puppet/state";
/// `$statedir` of Puppet's AIO `puppet-agent`.
pub const AIO_STATEDIR: &str = "/opt/puppetlabs/puppet/cache/state";
pub const REPORT_FILE: &str = "last_run_report.yaml";

/// At most this many error messages make a clone's `failure`.
pub const MAX_FAILURE_LINES: usize = 3;

/// The levels Puppet logs a failure at (`err` is what runs use; the rest for completeness).
const ERROR_LEVELS: &[&str] = &["err", "alert", "emerg", "crit"];

/// The report's directories to try for a base with this confdir, most likely first.
pub fn statedirs_for(confdir: &str) -> [&'static str; 2] {
    if confdir.trim_end_matches('/') == super::summary::AIO_CONFDIR {
        [AIO_STATEDIR, DISTRO_STATEDIR]
    } else {
        [DISTRO_STATEDIR, AIO_STATEDIR]
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawReport {
    #[serde(alias = ":logs")]
    logs: Option<Vec<RawLog>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawLog {
    #[serde(alias = ":level")]
    level: Option<String>,
    #[serde(alias = ":message")]
    message: Option<String>,
}

/// The first [`MAX_FAILURE_LINES`] distinct error messages of a report, each cut to its
/// first line (Puppet's "Wrapped exception:" continuations repeat the first) and to
/// [`kept::MAX_FAILURE_LINE_CHARS`], joined with newlines; `None` when the report logged
/// no error. An error says what was wrong with the file.
pub fn failure(text: &str) -> Result<Option<String>, String> {
    let raw: Option<RawReport> = super::yaml::from_str(text).map_err(|e| {
        let message = e.to_string();
        let first = message.lines().next().unwrap_or_default();
        kept::error(&format!("{REPORT_FILE} is not YAML Puppet wrote: {first}"))
    })?;
    let mut lines: Vec<String> = Vec::new();
    for log in raw.and_then(|r| r.logs).unwrap_or_default() {
        let level = log.level.as_deref().unwrap_or_default();
        if !ERROR_LEVELS.contains(&level.trim_start_matches(':')) {
            continue;
        }
        let Some(line) = log
            .message
            .as_deref()
            .and_then(|m| m.lines().map(str::trim).find(|l| !l.is_empty()))
        else {
            continue;
        };
        let line = kept::failure_line(line);
        if !lines.contains(&line) {
            lines.push(line);
        }
        if lines.len() == MAX_FAILURE_LINES {
            break;
        }
    }
    Ok((!lines.is_empty()).then(|| lines.join("\n")))
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

    #[test]
    fn aio_bases_look_under_opt_first() {
        assert_eq!(statedirs_for("/etc/puppetlabs/puppet")[0], AIO_STATEDIR);
        assert_eq!(statedirs_for("/etc/puppet")[0], DISTRO_STATEDIR);
    }
}
