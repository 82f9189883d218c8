//! `report --format prometheus`: node_exporter's textfile, in the exposition format's
//! conventions: a value that only grows while its source runs (a count since Puppet
//! Server or PuppetDB started) is a `counter` named `..._total`, for `rate()` and
//! `increase()`; a current level is a `gauge`; times are in seconds (`_seconds`); every
//! family has `# HELP` and `# TYPE`; label values of others' text are escaped.
//!
//! No figure here is a `summary`: a summary's `_sum` and `_count` are counters over every
//! observation, and neither is to be had honestly. The fleet's distributions are of the
//! clones' last runs now (their count falls when a clone goes), and the servers' means,
//! p95s and maxima are Dropwizard reservoirs (a decaying sample, see
//! [`crate::report::server`]) whose mean times the count sums nothing. So each quantile
//! is its own gauge, `..._p50_seconds`, `..._p95_seconds`, `..._max_seconds`.

use std::fmt::Write;

use crate::protocol::answers::{
    FleetReport, PuppetdbCloneRun, PuppetdbFleet, Report, RunReport, UntrustedClaim,
    UntrustedProblem, PROTOCOL_VERSION,
};
use crate::report::puppetdb::PuppetdbView;
use crate::report::server::ServerView;
use crate::report::stats::Distribution;
use crate::report::summary::RunStatus;
use crate::sys::escape::visible;

use super::figures::{float, ms_to_s};

/// The textfile's first line: a comment (the format reads a `#` line whose first word is
/// not `HELP` or `TYPE` as nothing), by which `--output` knows a file this helper wrote and
/// may replace.
pub const TEXTFILE_MARKER: &str = "# clone-army report --format prometheus: a node_exporter textfile; `--output` replaces only a file that begins so\n";

/// A label value in the exposition format: control characters (newlines too) made
/// visible as in a table, since clone names and PuppetDB's certnames are others' text and
/// the file is read by people too; then `\` and `"` escaped. No raw newline is left, so a
/// value never ends its line.
fn label(value: &str) -> String {
    visible(value).replace('\\', "\\\\").replace('"', "\\\"")
}

/// A `# HELP` text: `\` and newlines escaped as the format asks (the texts are this
/// file's own, so this only keeps a future one from breaking its line).
fn help_text(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value: Prometheus takes Go's float syntax; integers print as integers.
fn number(value: f64) -> String {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// A family's type, as `# TYPE` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A level now: it may go up and down.
    Gauge,
    /// A count since its source started: it only grows, and falls to zero only when the
    /// source restarts (which `rate()` takes as a reset). Its name ends in `_total`.
    Counter,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        }
    }
}

struct Family<'a> {
    out: &'a mut String,
    name: &'a str,
}

impl<'a> Family<'a> {
    fn start(out: &'a mut String, name: &'a str, kind: Kind, help: &str) -> Family<'a> {
        debug_assert_eq!(
            kind == Kind::Counter,
            name.ends_with("_total"),
            "{name}: a counter, and only a counter, ends in _total"
        );
        let _ = writeln!(out, "# HELP {name} {}", help_text(help));
        let _ = writeln!(out, "# TYPE {name} {}", kind.as_str());
        Family { out, name }
    }

    fn sample(&mut self, labels: &[(&str, &str)], value: f64) {
        let _ = write!(self.out, "{}", self.name);
        if !labels.is_empty() {
            let inner: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", label(v)))
                .collect();
            let _ = write!(self.out, "{{{}}}", inner.join(","));
        }
        let _ = writeln!(self.out, " {}", number(value));
    }
}

/// One family of one unlabelled sample, left out whole when the source did not give the
/// figure (a family without samples would say nothing either).
fn single(out: &mut String, name: &str, kind: Kind, help: &str, value: Option<f64>) {
    if let Some(v) = value {
        Family::start(out, name, kind, help).sample(&[], v);
    }
}

fn per_clone(
    out: &mut String,
    report: &Report,
    name: &str,
    help: &str,
    value: impl Fn(&RunReport) -> Option<f64>,
) {
    let mut family = Family::start(out, name, Kind::Gauge, help);
    for c in &report.clones {
        if let Some(v) = value(&c.run) {
            family.sample(&[("clone", c.name.as_str())], v);
        }
    }
}

/// The three gauges of a distribution, `<stem>_p50_seconds`, `<stem>_p95_seconds` and
/// `<stem>_max_seconds`, each with a sample per item (labelled by `labels`) that has the
/// figure: a p95 of fewer than [`crate::report::stats::P95_MIN_VALUES`] values is none,
/// so it is left out rather than passing the maximum off as a percentile.
fn distribution_gauges<T>(
    out: &mut String,
    stem: &str,
    what: &str,
    items: &[T],
    labels: impl Fn(&T) -> Vec<(&str, &str)>,
    pick: impl Fn(&T) -> &Distribution,
) {
    type Figure = fn(&Distribution) -> Option<f64>;
    let figures: [(&str, &str, Figure); 3] = [
        ("p50", "Median (nearest rank)", |d| d.p50),
        (
            "p95",
            "95th percentile (nearest rank; none below 20 values)",
            |d| d.p95,
        ),
        ("max", "Maximum", |d| d.max),
    ];
    for (suffix, figure, value) in figures {
        let name = format!("{stem}_{suffix}_seconds");
        let help = format!("{figure} of {what}, seconds.");
        let mut family = Family::start(out, &name, Kind::Gauge, &help);
        for item in items {
            if let Some(v) = value(pick(item)) {
                family.sample(&labels(item), v);
            }
        }
    }
}

/// What built the file: the helper's version and the protocol of its JSON answers, as
/// an info metric (always 1) to join on or alert on a mixed fleet.
fn build_info(out: &mut String) {
    let protocol = PROTOCOL_VERSION.to_string();
    Family::start(
        out,
        "clone_army_build_info",
        Kind::Gauge,
        "The clone-army helper that wrote this file: its version and its JSON protocol; always 1.",
    )
    .sample(
        &[
            ("version", env!("CARGO_PKG_VERSION")),
            ("protocol", protocol.as_str()),
        ],
        1.0,
    );
}

/// The node_exporter textfile: the marker, what built it, per-clone gauges, fleet gauges,
/// and the server's and PuppetDB's figures.
pub fn prometheus(report: &Report) -> String {
    let mut out = String::from(TEXTFILE_MARKER);
    build_info(&mut out);
    per_clone(
        &mut out,
        report,
        "clone_army_clone_last_run_seconds",
        "Duration of the clone's last Puppet run (time.total), seconds.",
        |c| c.total_time,
    );
    per_clone(
        &mut out,
        report,
        "clone_army_clone_config_retrieval_seconds",
        "Catalog retrieval time of the clone's last Puppet run, seconds.",
        |c| c.config_retrieval_time,
    );
    per_clone(
        &mut out,
        report,
        "clone_army_clone_last_run_timestamp_seconds",
        "When the clone's last Puppet run ended, seconds since the epoch.",
        |c| c.last_run.map(|t| t as f64),
    );
    per_clone(
        &mut out,
        report,
        "clone_army_clone_last_run_age_seconds",
        "Age of the clone's last Puppet run when the report was made, seconds.",
        |c| c.age.map(|t| t as f64),
    );
    per_clone(
        &mut out,
        report,
        "clone_army_clone_failed_resources",
        "Resources that failed in the clone's last Puppet run.",
        |c| c.failed_resources.map(|n| n as f64),
    );
    per_clone(
        &mut out,
        report,
        "clone_army_clone_catalog_resources",
        "Resources in the catalog of the clone's last Puppet run (resources.total).",
        |c| c.resources.map(|n| n as f64),
    );
    per_clone(
        &mut out,
        report,
        "clone_army_clone_would_change_resources",
        "Resources out of sync in the clone's last run, a noop run, that a real run would change.",
        |c| c.would_change.map(|n| n as f64),
    );
    per_clone(
        &mut out,
        report,
        "clone_army_clone_silent",
        "1 when the clone has not reported for more than two run intervals.",
        |c| Some(if c.silent { 1.0 } else { 0.0 }),
    );
    {
        let mut family = Family::start(
            &mut out,
            "clone_army_clone_status",
            Kind::Gauge,
            "Status of the clone's last Puppet run: 1 for the status it has, 0 for the others.",
        );
        for c in &report.clones {
            for status in RunStatus::ALL {
                let value = if c.run.status == status { 1.0 } else { 0.0 };
                family.sample(
                    &[("clone", c.name.as_str()), ("status", status.as_str())],
                    value,
                );
            }
        }
    }
    let fleet = &report.fleet;
    single(
        &mut out,
        "clone_army_fleet_clones",
        Kind::Gauge,
        "Clones on this host.",
        Some(fleet.clones as f64),
    );
    {
        let mut family = Family::start(
            &mut out,
            "clone_army_fleet_clones_by_status",
            Kind::Gauge,
            "Clones by the status of their last Puppet run.",
        );
        for (status, n) in &fleet.by_status {
            family.sample(&[("status", status.as_str())], *n as f64);
        }
    }
    let fleets = std::slice::from_ref(fleet);
    distribution_gauges(
        &mut out,
        "clone_army_fleet_run",
        "the clones' last run durations",
        fleets,
        |_| Vec::new(),
        |f| &f.total_time,
    );
    distribution_gauges(
        &mut out,
        "clone_army_fleet_config_retrieval",
        "the clones' last catalog retrieval times",
        fleets,
        |_| Vec::new(),
        |f| &f.config_retrieval_time,
    );
    single(
        &mut out,
        "clone_army_fleet_silent_clones",
        Kind::Gauge,
        "Clones that have not reported for more than two run intervals.",
        Some(fleet.silent.len() as f64),
    );
    if let Some(server) = &report.server {
        server_metrics(&mut out, server);
    }
    if let Some(puppetdb) = &report.puppetdb {
        puppetdb_metrics(&mut out, puppetdb);
    }
    single(
        &mut out,
        "clone_army_report_timestamp_seconds",
        Kind::Gauge,
        "When clone-army made this report, seconds since the epoch.",
        Some(report.now as f64),
    );
    out
}

/// Puppet Server's figures. Its counts are since it started (counters); its means are
/// of Dropwizard's decaying reservoir, about the last five minutes (gauges).
fn server_metrics(out: &mut String, server: &ServerView) {
    single(
        out,
        "clone_army_server_up",
        Kind::Gauge,
        "1 when Puppet Server's status API answered with JSON.",
        Some(if server.ok { 1.0 } else { 0.0 }),
    );
    if let Some(j) = &server.jruby {
        single(
            out,
            "clone_army_server_jrubies",
            Kind::Gauge,
            "JRuby instances in Puppet Server's pool.",
            float(&j.num_jrubies),
        );
        single(
            out,
            "clone_army_server_free_jrubies",
            Kind::Gauge,
            "Free JRuby instances in Puppet Server's pool.",
            float(&j.num_free_jrubies),
        );
        single(
            out,
            "clone_army_server_jruby_borrows_total",
            Kind::Counter,
            "JRuby borrows since Puppet Server started (borrow-count).",
            float(&j.borrow_count),
        );
        single(
            out,
            "clone_army_server_jruby_borrow_timeouts_total",
            Kind::Counter,
            "JRuby borrows that timed out since Puppet Server started (borrow-timeout-count).",
            float(&j.borrow_timeout_count),
        );
        single(
            out,
            "clone_army_server_jruby_average_borrow_seconds",
            Kind::Gauge,
            "Average time a JRuby instance is borrowed, over Puppet Server's decaying sample (about the last five minutes), seconds.",
            ms_to_s(&j.average_borrow_time_ms),
        );
        single(
            out,
            "clone_army_server_jruby_average_wait_seconds",
            Kind::Gauge,
            "Average wait for a JRuby instance, over Puppet Server's decaying sample (about the last five minutes), seconds.",
            ms_to_s(&j.average_wait_time_ms),
        );
    }
    if let Some(t) = &server.compile {
        single(
            out,
            "clone_army_server_compiles_total",
            Kind::Counter,
            "Catalog compiles since Puppet Server started.",
            float(&t.count),
        );
        single(
            out,
            "clone_army_server_compile_mean_seconds",
            Kind::Gauge,
            "Mean catalog compile time over Puppet Server's decaying sample (about the last five minutes), seconds.",
            ms_to_s(&t.mean_ms),
        );
    }
    if let Some(t) = &server.catalog_requests {
        single(
            out,
            "clone_army_server_catalog_requests_total",
            Kind::Counter,
            "Catalog requests since Puppet Server started.",
            float(&t.count),
        );
        single(
            out,
            "clone_army_server_catalog_request_mean_seconds",
            Kind::Gauge,
            "Mean catalog request time over Puppet Server's decaying sample (about the last five minutes), seconds.",
            ms_to_s(&t.mean_ms),
        );
    }
}

/// PuppetDB's figures: its processed commands are a meter's count since it started (a
/// counter), its rate and processing times a meter's and a timer's current figures.
fn puppetdb_metrics(out: &mut String, puppetdb: &PuppetdbView) {
    single(
        out,
        "clone_army_puppetdb_up",
        Kind::Gauge,
        "1 when PuppetDB's status API answered with JSON.",
        Some(if puppetdb.ok { 1.0 } else { 0.0 }),
    );
    single(
        out,
        "clone_army_puppetdb_queue_depth",
        Kind::Gauge,
        "Commands PuppetDB has received and not yet processed.",
        float(&puppetdb.queue_depth),
    );
    if let Some(c) = &puppetdb.commands {
        single(
            out,
            "clone_army_puppetdb_commands_processed_total",
            Kind::Counter,
            "Commands PuppetDB processed since it started.",
            float(&c.processed),
        );
        single(
            out,
            "clone_army_puppetdb_commands_per_second",
            Kind::Gauge,
            "Commands PuppetDB processed per second, PuppetDB's own one-minute rate.",
            float(&c.processed_per_second),
        );
        single(
            out,
            "clone_army_puppetdb_command_processing_mean_seconds",
            Kind::Gauge,
            "Mean time PuppetDB took to process a command, over its decaying sample, seconds.",
            ms_to_s(&c.processing_mean_ms),
        );
        single(
            out,
            "clone_army_puppetdb_command_processing_p95_seconds",
            Kind::Gauge,
            "95th percentile of PuppetDB's command processing time, over its decaying sample, seconds.",
            ms_to_s(&c.processing_p95_ms),
        );
        single(
            out,
            "clone_army_puppetdb_command_processing_max_seconds",
            Kind::Gauge,
            "Longest command processing time in PuppetDB's decaying sample, seconds.",
            ms_to_s(&c.processing_max_ms),
        );
    }
    if let Some(fleet) = &puppetdb.fleet {
        puppetdb_fleet_metrics(out, fleet);
        untrusted_metrics(out, &fleet.untrusted);
    }
}

/// Each load host's fleet from PuppetDB (labelled `host`), and each clone's last run
/// (labelled `host`, `clone` and `certname`).
fn puppetdb_fleet_metrics(out: &mut String, fleet: &PuppetdbFleet) {
    let hosts = &fleet.hosts;
    let per_host =
        |out: &mut String, name: &str, help: &str, value: &dyn Fn(&FleetReport) -> f64| {
            let mut family = Family::start(out, name, Kind::Gauge, help);
            for h in hosts {
                family.sample(&[("host", h.host.as_str())], value(&h.fleet));
            }
        };
    per_host(
        out,
        "clone_army_puppetdb_fleet_clones",
        "Clones the load host's clone_army fact lists in PuppetDB.",
        &|f| f.clones as f64,
    );
    per_host(
        out,
        "clone_army_puppetdb_fleet_silent_clones",
        "The load host's clones whose latest report in PuppetDB is older than two run intervals.",
        &|f| f.silent.len() as f64,
    );
    {
        let mut family = Family::start(
            out,
            "clone_army_puppetdb_fleet_clones_by_status",
            Kind::Gauge,
            "The load host's clones by the status of their latest report in PuppetDB.",
        );
        for h in hosts {
            for (status, n) in &h.fleet.by_status {
                family.sample(
                    &[("host", h.host.as_str()), ("status", status.as_str())],
                    *n as f64,
                );
            }
        }
    }
    distribution_gauges(
        out,
        "clone_army_puppetdb_fleet_run",
        "the load host's clones' latest run durations in PuppetDB",
        hosts,
        |h| vec![("host", h.host.as_str())],
        |h| &h.fleet.total_time,
    );
    distribution_gauges(
        out,
        "clone_army_puppetdb_fleet_config_retrieval",
        "the load host's clones' latest catalog retrieval times in PuppetDB",
        hosts,
        |h| vec![("host", h.host.as_str())],
        |h| &h.fleet.config_retrieval_time,
    );
    let per_clone =
        |out: &mut String, name: &str, help: &str, value: &dyn Fn(&RunReport) -> Option<f64>| {
            let mut family = Family::start(out, name, Kind::Gauge, help);
            for h in hosts {
                for c in &h.clones {
                    if let Some(v) = value(&c.run) {
                        family.sample(&clone_labels(&h.host, c), v);
                    }
                }
            }
        };
    per_clone(
        out,
        "clone_army_puppetdb_clone_last_run_seconds",
        "Duration of the clone's latest run in PuppetDB (time total), seconds.",
        &|c| c.total_time,
    );
    per_clone(
        out,
        "clone_army_puppetdb_clone_would_change_resources",
        "Resources out of sync in the clone's latest run in PuppetDB, a noop run, that a real run would change.",
        &|c| c.would_change.map(|n| n as f64),
    );
    per_clone(
        out,
        "clone_army_puppetdb_clone_last_run_age_seconds",
        "Age of the clone's latest report in PuppetDB when the report was made, seconds.",
        &|c| c.age.map(|a| a as f64),
    );
    {
        let mut family = Family::start(
            out,
            "clone_army_puppetdb_clone_status",
            Kind::Gauge,
            "Status of the clone's latest report in PuppetDB: 1 for the status it has, 0 for the others.",
        );
        for h in hosts {
            for c in &h.clones {
                for status in RunStatus::ALL {
                    let mut labels = clone_labels(&h.host, c);
                    labels.push(("status", status.as_str()));
                    family.sample(&labels, if c.run.status == status { 1.0 } else { 0.0 });
                }
            }
        }
    }
}

/// The claims of nodes' facts not trusted, by problem (every problem, 0 included, so that
/// an alert can watch one).
fn untrusted_metrics(out: &mut String, untrusted: &[UntrustedClaim]) {
    let mut family = Family::start(
        out,
        "clone_army_puppetdb_fleet_untrusted_claims",
        Kind::Gauge,
        "Claims of nodes' clone_army facts in PuppetDB not trusted, so not asked for, by problem.",
    );
    for problem in UntrustedProblem::ALL {
        let n = untrusted.iter().filter(|c| c.problem == problem).count();
        family.sample(&[("problem", problem.as_str())], n as f64);
    }
}

fn clone_labels<'a>(host: &'a str, c: &'a PuppetdbCloneRun) -> Vec<(&'a str, &'a str)> {
    vec![
        ("host", host),
        ("clone", c.name.as_str()),
        ("certname", c.certname.as_str()),
    ]
}

#[cfg(test)]
mod tests;
