//! The fleet as PuppetDB holds it: every clone of every load host, with its last run.
//!
//! Each load host's own agent sends PuppetDB its `clone_army` fact, which lists the host's
//! clones and their certnames (`clones.certnames`, see
//! `lib/puppet_x/clone_army/fleet_fact.rb`); every clone's agent sends its reports through
//! the server. So two PQL queries find a fleet that spans hosts, with nothing kept beside
//! PuppetDB: the facts named `clone_army`, then, per load host, the latest report of each
//! certname its fact lists. Both go as a POST to `/pdb/query/v4`.
//!
//! What comes back was written by the clones and the hosts, so it is read narrowly: a
//! load host and its clones only as far as [`crate::report::fleet_trust`] trusts them (a
//! certname is used only when it is a host name: it goes into a query), figures only from
//! the fields named here, statuses only those Puppet writes; strings are escaped where
//! they are shown. Every answer is read up to a size that fits what it holds.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::protocol::answers::{LoadHostRuns, PuppetdbCloneRun, PuppetdbFleet, RunReport};
use crate::report::fleet_trust::brief;
use crate::report::kept;
use crate::report::stats::{self, is_silent};
use crate::report::summary::RunStatus;
use crate::sys::time::parse_rfc3339;

pub use crate::report::fleet_trust::{load_hosts, LoadHost, LoadHosts, FACT};

/// PuppetDB's query endpoint, which takes PQL.
pub const QUERY_PATH: &str = "/pdb/query/v4";
/// The most of the facts query's answer read: a node's `clone_army` fact is some hundred
/// bytes, and some tens more for each clone a load host lists; this is room for a few
/// hundred thousand nodes.
pub const MAX_FACTS_BYTES: u64 = 64 * 1024 * 1024;
/// The most read of a reports query's answer for each certname it names: a latest
/// report's row (its metrics, its versions) is about 2 KiB.
pub const MAX_REPORT_ROW_BYTES: u64 = 16 * 1024;

/// The most of the answer to a reports query naming `certnames` certnames read.
pub fn max_reports_bytes(certnames: usize) -> u64 {
    (certnames as u64 + 1).saturating_mul(MAX_REPORT_ROW_BYTES)
}

/// Every node's `clone_army` fact (deactivated nodes are left out by PuppetDB).
pub fn hosts_query() -> String {
    format!("facts[certname, value] {{ name = \"{FACT}\" }}")
}

/// The latest report of each of `certnames`, which must be host names (checked by
/// [`crate::report::fleet_trust`]), so nothing in them can change the query.
pub fn reports_query(certnames: &[&str]) -> String {
    let quoted: Vec<String> = certnames.iter().map(|c| format!("\"{c}\"")).collect();
    format!(
        "reports[certname, status, noop, end_time, puppet_version, configuration_version, \
         metrics] {{ latest_report? = true and certname in [{}] }}",
        quoted.join(", ")
    )
}

/// The JSON body of a POST to [`QUERY_PATH`].
pub fn query_body(pql: &str) -> String {
    serde_json::json!({ "query": pql }).to_string()
}

/// One clone's last run from a report row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReportRun {
    pub status: Option<RunStatus>,
    /// The status as given, when it is none Puppet writes.
    pub unknown_status: Option<String>,
    pub noop: Option<bool>,
    pub end_time: Option<u64>,
    pub total_time: Option<f64>,
    pub config_retrieval_time: Option<f64>,
    pub failed_resources: Option<u64>,
    pub resources: Option<u64>,
    pub puppet_version: Option<String>,
    pub config_version: Option<String>,
    /// The resources out of sync in a noop run with pending changes.
    pub would_change: Option<u64>,
}

/// The runs in the answer to [`reports_query`], by certname.
pub fn report_runs(answer: &Value) -> Result<BTreeMap<String, ReportRun>, String> {
    let rows = answer.as_array().ok_or_else(|| {
        format!(
            "the reports query answered something not a list: {}",
            brief(answer)
        )
    })?;
    let mut runs = BTreeMap::new();
    for row in rows {
        let Some(certname) = row.get("certname").and_then(Value::as_str) else {
            continue;
        };
        let text = |key: &str| row.get(key).and_then(Value::as_str);
        let status = text("status").map(kept::service);
        let metric = |category: &str, name: &str| -> Option<f64> {
            row.get("metrics")?
                .get("data")?
                .as_array()?
                .iter()
                .find(|m| {
                    m.get("category").and_then(Value::as_str) == Some(category)
                        && m.get("name").and_then(Value::as_str) == Some(name)
                })?
                .get("value")?
                .as_f64()
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        // A noop run Puppet calls `unchanged` has its pending changes as `noop` events.
        let noop_events = metric("events", "noop").unwrap_or(0.0);
        let would_change = (noop_events > 0.0)
            .then(|| metric("resources", "out_of_sync").unwrap_or(noop_events) as u64);
        let known = match status.as_deref().and_then(puppet_status) {
            Some(RunStatus::Unchanged) if would_change.is_some() => Some(RunStatus::WouldChange),
            known => known,
        };
        runs.insert(
            certname.to_owned(),
            ReportRun {
                status: known,
                unknown_status: if known.is_none() { status } else { None },
                noop: row.get("noop").and_then(Value::as_bool),
                end_time: text("end_time").and_then(parse_rfc3339),
                total_time: metric("time", "total"),
                config_retrieval_time: metric("time", "config_retrieval"),
                failed_resources: metric("resources", "failed").map(|v| v as u64),
                resources: metric("resources", "total").map(|v| v as u64),
                puppet_version: text("puppet_version").map(kept::version),
                config_version: text("configuration_version").map(kept::version),
                would_change,
            },
        );
    }
    Ok(runs)
}

/// The statuses a Puppet report has.
fn puppet_status(status: &str) -> Option<RunStatus> {
    match status {
        "changed" => Some(RunStatus::Changed),
        "unchanged" => Some(RunStatus::Unchanged),
        "failed" => Some(RunStatus::Failed),
        _ => None,
    }
}

/// A host's clones with the runs found for them: one row per clone its fact lists.
pub fn host_runs(
    host: &LoadHost,
    runs: &BTreeMap<String, ReportRun>,
    now: u64,
    interval: u64,
) -> Vec<PuppetdbCloneRun> {
    host.clones
        .iter()
        .map(|(name, certname)| {
            let run = runs.get(certname);
            let last_run = run.and_then(|r| r.end_time);
            let age = last_run.map(|t| now.saturating_sub(t));
            let (status, error) = match run {
                None => (RunStatus::Never, None),
                Some(ReportRun {
                    status: Some(status),
                    ..
                }) => (*status, None),
                Some(r) => (
                    RunStatus::Unreadable,
                    Some(format!(
                        "its report's status {:?} is none Puppet writes",
                        r.unknown_status.as_deref().unwrap_or_default()
                    )),
                ),
            };
            PuppetdbCloneRun {
                name: name.clone(),
                certname: certname.clone(),
                run: RunReport {
                    status,
                    succeeded: status.is_success(),
                    last_run,
                    age,
                    total_time: run.and_then(|r| r.total_time),
                    config_retrieval_time: run.and_then(|r| r.config_retrieval_time),
                    failed_resources: run.and_then(|r| r.failed_resources),
                    resources: run.and_then(|r| r.resources),
                    puppet_version: run.and_then(|r| r.puppet_version.clone()),
                    config_version: run.and_then(|r| r.config_version.clone()),
                    // When a clone was made is not in PuppetDB: one that never reported
                    // is `never`, not silent.
                    silent: is_silent(age, None, interval),
                    would_change: run.and_then(|r| r.would_change),
                },
                noop: run.and_then(|r| r.noop),
                error,
            }
        })
        .collect()
}

fn figures(clone: &PuppetdbCloneRun) -> (&str, &RunReport) {
    (&clone.certname, &clone.run)
}

/// The fleet across load hosts. `query` POSTs one PQL query and gives its JSON answer,
/// read up to the size given; a host whose reports query fails keeps its clones, as
/// `never`, with the error.
pub fn fleet(
    query: impl Fn(&str, u64) -> Result<Value, String>,
    now: u64,
    interval: u64,
) -> Result<PuppetdbFleet, String> {
    let LoadHosts { hosts, untrusted } = load_hosts(&query(&hosts_query(), MAX_FACTS_BYTES)?)?;
    let mut out = Vec::with_capacity(hosts.len());
    for host in &hosts {
        let mut error = host.error.clone();
        let runs = if host.clones.is_empty() {
            BTreeMap::new()
        } else {
            let certnames: Vec<&str> = host.clones.iter().map(|(_, c)| c.as_str()).collect();
            let limit = max_reports_bytes(certnames.len());
            match query(&reports_query(&certnames), limit).and_then(|a| report_runs(&a)) {
                Ok(runs) => runs,
                Err(e) => {
                    error = Some(match error {
                        Some(before) => format!("{before}; {e}"),
                        None => e,
                    });
                    BTreeMap::new()
                }
            }
        };
        let clones = host_runs(host, &runs, now, interval);
        out.push(LoadHostRuns {
            host: host.certname.clone(),
            fleet: stats::fleet(clones.iter().map(figures), interval),
            clones,
            error,
        });
    }
    Ok(PuppetdbFleet {
        fleet: stats::fleet(
            out.iter().flat_map(|h| h.clones.iter().map(figures)),
            interval,
        ),
        hosts: out,
        untrusted,
    })
}

/// PuppetDB as the tests ask it: its 8.4 answers to the two queries (fixtures/README.md),
/// the reports narrowed to the certnames a query names, as PuppetDB narrows them.
#[cfg(test)]
pub(crate) mod fake {
    use serde_json::Value;

    pub fn facts() -> Value {
        serde_json::from_str(include_str!("fixtures/puppetdb-8-clone-army-facts.json")).unwrap()
    }

    pub fn reports() -> Value {
        serde_json::from_str(include_str!("fixtures/puppetdb-8-latest-reports.json")).unwrap()
    }

    /// The answer to `pql` (read whole, whatever the limit).
    pub fn answer(pql: &str, _max_body: u64) -> Result<Value, String> {
        if pql == super::hosts_query() {
            return Ok(facts());
        }
        let rows: Vec<Value> = reports()
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| pql.contains(&format!("\"{}\"", r["certname"].as_str().unwrap())))
            .cloned()
            .collect();
        Ok(Value::Array(rows))
    }
}

#[cfg(test)]
mod tests;
