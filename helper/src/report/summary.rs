//! An agent's `last_run_summary.yaml`, read from a clone's upper layer.
//!
//! Puppet writes it with `YAML.dump(report.raw_summary)` (lib/puppet/transaction/report.rb,
//! lib/puppet/configurer.rb `save_last_run_summary`): plain string keys, sections
//! `version`, `application`, `resources`, `time`, `changes`, `events`. Which keys a
//! section holds depends on the run (`time` has one key per resource type evaluated;
//! a run that never got a catalog has no `config_retrieval` or `catalog_application`
//! and a null `version.config`), so every section and key is optional and unknown keys
//! are ignored. Keys written as Ruby symbols (`:time:`) are accepted too.

use std::collections::BTreeMap;

pub use crate::protocol::answers::RunStatus;
use serde::Deserialize;

use super::kept;
use crate::inventory::bases::agent_dirs_for;

pub const SUMMARY_FILE: &str = "last_run_summary.yaml";

/// The summary's directories to try for a base with this confdir, most likely first:
/// the `$publicdir`s, then the `$statedir`s, where agents before Puppet 7 (Debian 11's
/// 5.5, say) wrote it.
pub fn summary_dirs_for(confdir: &str) -> [&'static str; 4] {
    let [own, other] = agent_dirs_for(confdir);
    [own.publicdir, other.publicdir, own.statedir, other.statedir]
}

impl RunStatus {
    pub const ALL: [RunStatus; 6] = [
        RunStatus::Failed,
        RunStatus::Changed,
        RunStatus::WouldChange,
        RunStatus::Unchanged,
        RunStatus::Never,
        RunStatus::Unreadable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Failed => "failed",
            RunStatus::Changed => "changed",
            RunStatus::WouldChange => "would-change",
            RunStatus::Unchanged => "unchanged",
            RunStatus::Never => "never",
            RunStatus::Unreadable => "unreadable",
        }
    }

    /// A run that applied (or, in noop, evaluated) its catalog without failing: a
    /// check-in.
    pub fn is_success(self) -> bool {
        matches!(
            self,
            RunStatus::Changed | RunStatus::WouldChange | RunStatus::Unchanged
        )
    }
}

/// What the report takes from one summary.
#[derive(Debug, Clone, PartialEq)]
pub struct LastRun {
    pub status: RunStatus,
    /// `time.total`, seconds.
    pub total_time: Option<f64>,
    /// `time.config_retrieval`, seconds (absent when no catalog was retrieved).
    pub config_retrieval_time: Option<f64>,
    /// `time.last_run`, seconds since the epoch.
    pub last_run: Option<u64>,
    /// `resources.failed`.
    pub failed_resources: Option<u64>,
    /// `resources.total`: the catalog's size.
    pub resources: Option<u64>,
    /// `version.puppet`, cut to [`kept::MAX_VERSION_CHARS`].
    pub puppet_version: Option<String>,
    /// `version.config` (an integer timestamp by default, any string with
    /// `config_version`), cut as the Puppet version.
    pub config_version: Option<String>,
    /// `resources.out_of_sync` of a noop run (one with `events.noop`).
    pub would_change: Option<u64>,
}

/// A YAML scalar as Ruby dumps it: an integer, a float, a string, a boolean or null.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Scalar {
    fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(f) if f.is_finite() => Some(*f),
            Scalar::Text(t) => t.trim().parse().ok().filter(|f: &f64| f.is_finite()),
            _ => None,
        }
    }

    fn as_u64(&self) -> Option<u64> {
        match self {
            Scalar::Int(i) => u64::try_from(*i).ok(),
            other => other
                .as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64),
        }
    }

    fn as_text(&self) -> Option<String> {
        match self {
            Scalar::Int(i) => Some(i.to_string()),
            Scalar::Float(f) => Some(f.to_string()),
            Scalar::Bool(b) => Some(b.to_string()),
            Scalar::Text(t) if t.is_empty() => None,
            Scalar::Text(t) => Some(t.clone()),
        }
    }
}

/// A section: metric name to value (all scalars in what Puppet writes).
type Section = BTreeMap<String, Option<Scalar>>;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawSummary {
    #[serde(alias = ":version")]
    version: Option<Section>,
    #[serde(alias = ":resources")]
    resources: Option<Section>,
    #[serde(alias = ":time")]
    time: Option<Section>,
    #[serde(alias = ":changes")]
    changes: Option<Section>,
    #[serde(alias = ":events")]
    events: Option<Section>,
}

fn get<'a>(section: &'a Option<Section>, key: &str) -> Option<&'a Scalar> {
    let section = section.as_ref()?;
    section
        .get(key)
        .or_else(|| section.get(&format!(":{key}")))
        .and_then(Option::as_ref)
}

/// Parses a summary's text. An error names what was wrong, for the clone's `error`.
pub fn parse(text: &str) -> Result<LastRun, String> {
    // The parser's message ends with a snippet of the input over several lines; the
    // first line (position and reason) is what fits a clone's `error`.
    let raw: Option<RawSummary> = super::yaml::from_str(text).map_err(|e| {
        let message = e.to_string();
        let first = message.lines().next().unwrap_or_default();
        kept::error(&format!(
            "not YAML Puppet wrote: {}",
            first.trim_start_matches("error: ")
        ))
    })?;
    // An empty document is no summary Puppet wrote.
    let raw = raw.ok_or_else(|| "the file is empty".to_owned())?;
    if raw.version.is_none() && raw.time.is_none() && raw.resources.is_none() {
        return Err("no version, time or resources section: not a run summary".to_owned());
    }
    let count = |section: &Option<Section>, key: &str| get(section, key).and_then(Scalar::as_u64);
    let failed_resources = count(&raw.resources, "failed");
    let failed_to_restart = count(&raw.resources, "failed_to_restart");
    let failed_events = count(&raw.events, "failure");
    let changes = count(&raw.changes, "total");
    // Puppet counts each event by its status: a noop run's pending changes are `noop`
    // events, and the resources they are on are out of sync.
    let noop_events = count(&raw.events, "noop").unwrap_or(0);
    let would_change =
        (noop_events > 0).then(|| count(&raw.resources, "out_of_sync").unwrap_or(noop_events));
    let version = |key: &str| get(&raw.version, key).and_then(Scalar::as_text);
    let config_version = version("config").as_deref().map(kept::version);
    let catalog_applied = config_version.is_some()
        && (get(&raw.time, "catalog_application").is_some()
            || count(&raw.resources, "total").unwrap_or(0) > 0);
    let status = if !catalog_applied
        || failed_resources.unwrap_or(0) > 0
        || failed_to_restart.unwrap_or(0) > 0
        || failed_events.unwrap_or(0) > 0
    {
        RunStatus::Failed
    } else if changes.unwrap_or(0) > 0 {
        RunStatus::Changed
    } else if would_change.is_some() {
        RunStatus::WouldChange
    } else {
        RunStatus::Unchanged
    };
    Ok(LastRun {
        status,
        total_time: get(&raw.time, "total").and_then(Scalar::as_f64),
        config_retrieval_time: get(&raw.time, "config_retrieval").and_then(Scalar::as_f64),
        last_run: get(&raw.time, "last_run").and_then(Scalar::as_u64),
        failed_resources,
        resources: count(&raw.resources, "total"),
        puppet_version: version("puppet").as_deref().map(kept::version),
        config_version,
        would_change,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Written by Puppet 7.23 (Debian 12): `puppet apply` of an empty manifest, of a file and
    // a notify, of a failing exec with a dependent file; and `puppet agent -t` against a
    // server port nobody listens on. See fixtures/README.md.
    const UNCHANGED: &str = include_str!("fixtures/unchanged.yaml");
    const CHANGED: &str = include_str!("fixtures/changed.yaml");
    const FAILED: &str = include_str!("fixtures/failed.yaml");
    const UNREACHABLE: &str = include_str!("fixtures/unreachable.yaml");
    const NOOP: &str = include_str!("fixtures/noop.yaml");

    #[test]
    fn a_noop_run_with_pending_changes_would_change_its_out_of_sync_resources() {
        let run = parse(NOOP).unwrap();
        assert_eq!(run.status, RunStatus::WouldChange);
        assert_eq!(run.would_change, Some(2));
        // The catalog's size: the two files and what Puppet adds to every catalog.
        assert_eq!(run.resources, Some(9));
        assert!(run.status.is_success());
        // A real run's summary has no noop events: nothing would change there.
        assert_eq!(parse(CHANGED).unwrap().would_change, None);
        assert_eq!(parse(UNCHANGED).unwrap().would_change, None);
    }

    #[test]
    fn unchanged_run() {
        let run = parse(UNCHANGED).unwrap();
        assert_eq!(run.status, RunStatus::Unchanged);
        assert_eq!(run.total_time, Some(0.008328689));
        assert_eq!(run.config_retrieval_time, Some(0.087896084));
        assert_eq!(run.last_run, Some(1795318947));
        assert_eq!(run.failed_resources, Some(0));
        assert_eq!(run.puppet_version.as_deref(), Some("7.23.0"));
        assert_eq!(run.config_version.as_deref(), Some("1795318947"));
    }

    #[test]
    fn changed_run() {
        let run = parse(CHANGED).unwrap();
        assert_eq!(run.status, RunStatus::Changed);
        assert_eq!(run.failed_resources, Some(0));
        assert_eq!(run.last_run, Some(1795318958));
    }

    #[test]
    fn failed_run() {
        let run = parse(FAILED).unwrap();
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(run.failed_resources, Some(1));
        assert_eq!(run.config_retrieval_time, Some(0.256178936));
    }

    #[test]
    fn run_that_could_not_reach_the_server_failed() {
        let run = parse(UNREACHABLE).unwrap();
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(run.config_version, None);
        assert_eq!(run.config_retrieval_time, None);
        assert_eq!(run.total_time, Some(2.268126647));
        assert_eq!(run.failed_resources, Some(0));
        assert_eq!(run.last_run, Some(1795318974));
    }

    #[test]
    fn tolerates_missing_sections_unknown_keys_and_symbol_keys() {
        let run = parse(
            "---\n:version:\n  :config: abc123\n  :puppet: '8.10.0'\n:time:\n  :total: 12\n  \
             :last_run: 1795318000\n:resources:\n  :total: 3\n  :failed: 0\nfuture_section:\n  \
             nested:\n    - 1\n",
        )
        .unwrap();
        assert_eq!(run.status, RunStatus::Unchanged);
        assert_eq!(run.config_version.as_deref(), Some("abc123"));
        assert_eq!(run.puppet_version.as_deref(), Some("8.10.0"));
        assert_eq!(run.total_time, Some(12.0));
        assert_eq!(run.config_retrieval_time, None);
        assert_eq!(run.failed_resources, Some(0));
    }

    #[test]
    fn failed_events_or_restarts_fail_the_run() {
        let text = UNCHANGED.replace("  failure: 0", "  failure: 2");
        assert_eq!(parse(&text).unwrap().status, RunStatus::Failed);
        let text = UNCHANGED.replace("failed_to_restart: 0", "failed_to_restart: 1");
        assert_eq!(parse(&text).unwrap().status, RunStatus::Failed);
    }

    #[test]
    fn garbage_is_an_error_not_a_run() {
        assert!(parse("").is_err());
        assert!(parse("just a string\n").is_err());
        assert!(parse("version: [1, 2\n").is_err());
        assert!(parse("other: 1\n").is_err());
    }

    #[test]
    fn publicdir_follows_the_confdir() {
        assert_eq!(
            summary_dirs_for("/etc/puppet"),
            [
                "/var/cache/puppet/public",
                "/opt/puppetlabs/puppet/public",
                "/var/cache/puppet/state",
                "/opt/puppetlabs/puppet/cache/state"
            ]
        );
        assert_eq!(
            summary_dirs_for("/etc/puppetlabs/puppet/")[0],
            "/opt/puppetlabs/puppet/public"
        );
    }
}
