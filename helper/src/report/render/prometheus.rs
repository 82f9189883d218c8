//! `report --format prometheus`: node_exporter's textfile, per-clone gauges, fleet
//! gauges, and the server's and PuppetDB's figures; label values of others' text escaped.

use std::fmt::Write;

use crate::protocol::answers::{
    FleetReport, PuppetdbCloneRun, PuppetdbFleet, Report, RunReport, UntrustedClaim,
    UntrustedProblem,
};
use crate::report::puppetdb::PuppetdbView;
use crate::report::server::ServerView;
use crate::report::stats::Distribution;
use crate::report::summary::RunStatus;
use crate::sys::escape::visible;

use super::figures::{float, ms_to_s};

/// A label value in the exposition format: control characters (newlines too) made
/// visible as in a table, since clone names and PuppetDB's certnames are others' text and
/// the file is read by people too; then `\` and `"` escaped.
fn label(value: &str) -> String {
    visible(value).replace('\\', "\\\\").replace('"', "\\\"")
}

/// A sample value: Prometheus takes Go's float syntax; integers print as integers.
fn number(value: f64) -> String {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

struct Family<'a> {
    out: &'a mut String,
}

impl Family<'_> {
    fn start<'o>(out: &'o mut String, name: &str, kind: &str, help: &str) -> Family<'o> {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        Family { out }
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        let _ = write!(self.out, "{name}");
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

fn per_clone(
    out: &mut String,
    report: &Report,
    name: &str,
    help: &str,
    value: impl Fn(&RunReport) -> Option<f64>,
) {
    let mut family = Family::start(out, name, "gauge", help);
    for c in &report.clones {
        if let Some(v) = value(&c.run) {
            family.sample(name, &[("clone", c.name.as_str())], v);
        }
    }
}

fn quantiles(out: &mut String, name: &str, help: &str, d: &Distribution) {
    let mut family = Family::start(out, name, "gauge", help);
    quantile_samples(&mut family, name, &[], d);
}

/// A distribution's p50, p95 and max as samples labelled `quantile` (and `labels`).
fn quantile_samples(family: &mut Family, name: &str, labels: &[(&str, &str)], d: &Distribution) {
    for (q, v) in [("0.5", d.p50), ("0.95", d.p95), ("1", d.max)] {
        if let Some(v) = v {
            let mut all = labels.to_vec();
            all.push(("quantile", q));
            family.sample(name, &all, v);
        }
    }
}

/// The node_exporter textfile: per-clone gauges, fleet gauges, and the server's figures.
pub fn prometheus(report: &Report) -> String {
    let mut out = String::new();
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
        let name = "clone_army_clone_status";
        let mut family = Family::start(
            &mut out,
            name,
            "gauge",
            "Status of the clone's last Puppet run: 1 for the status it has, 0 for the others.",
        );
        for c in &report.clones {
            for status in RunStatus::ALL {
                let value = if c.run.status == status { 1.0 } else { 0.0 };
                family.sample(
                    name,
                    &[("clone", c.name.as_str()), ("status", status.as_str())],
                    value,
                );
            }
        }
    }
    let fleet = &report.fleet;
    {
        let name = "clone_army_fleet_clones";
        let mut family = Family::start(&mut out, name, "gauge", "Clones on this host.");
        family.sample(name, &[], fleet.clones as f64);
    }
    {
        let name = "clone_army_fleet_clones_by_status";
        let mut family = Family::start(
            &mut out,
            name,
            "gauge",
            "Clones by the status of their last Puppet run.",
        );
        for (status, n) in &fleet.by_status {
            family.sample(name, &[("status", status.as_str())], *n as f64);
        }
    }
    quantiles(
        &mut out,
        "clone_army_fleet_run_seconds",
        "Nearest-rank quantiles of the clones' last run durations, seconds (quantile 1 is the max).",
        &fleet.total_time,
    );
    quantiles(
        &mut out,
        "clone_army_fleet_config_retrieval_seconds",
        "Nearest-rank quantiles of the clones' last catalog retrieval times, seconds (quantile 1 is the max).",
        &fleet.config_retrieval_time,
    );
    {
        let name = "clone_army_fleet_silent_clones";
        let mut family = Family::start(
            &mut out,
            name,
            "gauge",
            "Clones that have not reported for more than two run intervals.",
        );
        family.sample(name, &[], fleet.silent.len() as f64);
    }
    if let Some(server) = &report.server {
        server_metrics(&mut out, server);
    }
    if let Some(puppetdb) = &report.puppetdb {
        puppetdb_metrics(&mut out, puppetdb);
    }
    {
        let name = "clone_army_report_timestamp_seconds";
        let mut family = Family::start(
            &mut out,
            name,
            "gauge",
            "When clone-army made this report, seconds since the epoch.",
        );
        family.sample(name, &[], report.now as f64);
    }
    out
}

fn server_metrics(out: &mut String, server: &ServerView) {
    {
        let name = "clone_army_server_up";
        let mut family = Family::start(
            out,
            name,
            "gauge",
            "1 when Puppet Server's status API answered with JSON.",
        );
        family.sample(name, &[], if server.ok { 1.0 } else { 0.0 });
    }
    let mut gauge = |name: &str, help: &str, value: Option<f64>| {
        if let Some(v) = value {
            Family::start(out, name, "gauge", help).sample(name, &[], v);
        }
    };
    if let Some(j) = &server.jruby {
        gauge(
            "clone_army_server_jrubies",
            "JRuby instances in Puppet Server's pool.",
            float(&j.num_jrubies),
        );
        gauge(
            "clone_army_server_free_jrubies",
            "Free JRuby instances in Puppet Server's pool.",
            float(&j.num_free_jrubies),
        );
        gauge(
            "clone_army_server_jruby_borrows",
            "JRuby borrows since Puppet Server started.",
            float(&j.borrow_count),
        );
        gauge(
            "clone_army_server_jruby_borrow_timeouts",
            "JRuby borrows that timed out since Puppet Server started.",
            float(&j.borrow_timeout_count),
        );
        gauge(
            "clone_army_server_jruby_average_borrow_seconds",
            "Average time a JRuby instance is borrowed, seconds.",
            ms_to_s(&j.average_borrow_time_ms),
        );
        gauge(
            "clone_army_server_jruby_average_wait_seconds",
            "Average wait for a JRuby instance, seconds.",
            ms_to_s(&j.average_wait_time_ms),
        );
    }
    if let Some(t) = &server.compile {
        gauge(
            "clone_army_server_compiles",
            "Catalog compiles since Puppet Server started.",
            float(&t.count),
        );
        gauge(
            "clone_army_server_compile_mean_seconds",
            "Mean catalog compile time since Puppet Server started, seconds.",
            ms_to_s(&t.mean_ms),
        );
    }
    if let Some(t) = &server.catalog_requests {
        gauge(
            "clone_army_server_catalog_requests",
            "Catalog requests since Puppet Server started.",
            float(&t.count),
        );
        gauge(
            "clone_army_server_catalog_request_mean_seconds",
            "Mean catalog request time since Puppet Server started, seconds.",
            ms_to_s(&t.mean_ms),
        );
    }
}

fn puppetdb_metrics(out: &mut String, puppetdb: &PuppetdbView) {
    {
        let name = "clone_army_puppetdb_up";
        let mut family = Family::start(
            out,
            name,
            "gauge",
            "1 when PuppetDB's status API answered with JSON.",
        );
        family.sample(name, &[], if puppetdb.ok { 1.0 } else { 0.0 });
    }
    let mut gauge = |name: &str, help: &str, value: Option<f64>| {
        if let Some(v) = value {
            Family::start(out, name, "gauge", help).sample(name, &[], v);
        }
    };
    gauge(
        "clone_army_puppetdb_queue_depth",
        "Commands PuppetDB has received and not yet processed.",
        float(&puppetdb.queue_depth),
    );
    if let Some(c) = &puppetdb.commands {
        gauge(
            "clone_army_puppetdb_commands_processed",
            "Commands PuppetDB processed since it started.",
            float(&c.processed),
        );
        gauge(
            "clone_army_puppetdb_commands_per_second",
            "Commands PuppetDB processed per second, over the last minute.",
            float(&c.processed_per_second),
        );
        gauge(
            "clone_army_puppetdb_command_processing_mean_seconds",
            "Mean time PuppetDB took to process a command since it started, seconds.",
            ms_to_s(&c.processing_mean_ms),
        );
        gauge(
            "clone_army_puppetdb_command_processing_p95_seconds",
            "95th percentile of PuppetDB's command processing time, seconds.",
            ms_to_s(&c.processing_p95_ms),
        );
        gauge(
            "clone_army_puppetdb_command_processing_max_seconds",
            "Longest command processing time PuppetDB holds, seconds.",
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
            let mut family = Family::start(out, name, "gauge", help);
            for h in hosts {
                family.sample(name, &[("host", h.host.as_str())], value(&h.fleet));
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
        let name = "clone_army_puppetdb_fleet_clones_by_status";
        let mut family = Family::start(
            out,
            name,
            "gauge",
            "The load host's clones by the status of their latest report in PuppetDB.",
        );
        for h in hosts {
            for (status, n) in &h.fleet.by_status {
                family.sample(
                    name,
                    &[("host", h.host.as_str()), ("status", status.as_str())],
                    *n as f64,
                );
            }
        }
    }
    for (name, help, pick) in [
        (
            "clone_army_puppetdb_fleet_run_seconds",
            "Nearest-rank quantiles of the load host's clones' latest run durations in PuppetDB, seconds (quantile 1 is the max).",
            (|f: &FleetReport| &f.total_time) as fn(&FleetReport) -> &Distribution,
        ),
        (
            "clone_army_puppetdb_fleet_config_retrieval_seconds",
            "Nearest-rank quantiles of the load host's clones' latest catalog retrieval times in PuppetDB, seconds (quantile 1 is the max).",
            |f: &FleetReport| &f.config_retrieval_time,
        ),
    ] {
        let mut family = Family::start(out, name, "gauge", help);
        for h in hosts {
            quantile_samples(&mut family, name, &[("host", h.host.as_str())], pick(&h.fleet));
        }
    }
    let per_clone =
        |out: &mut String, name: &str, help: &str, value: &dyn Fn(&RunReport) -> Option<f64>| {
            let mut family = Family::start(out, name, "gauge", help);
            for h in hosts {
                for c in &h.clones {
                    if let Some(v) = value(&c.run) {
                        family.sample(name, &clone_labels(&h.host, c), v);
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
        let name = "clone_army_puppetdb_clone_status";
        let mut family = Family::start(
            out,
            name,
            "gauge",
            "Status of the clone's latest report in PuppetDB: 1 for the status it has, 0 for the others.",
        );
        for h in hosts {
            for c in &h.clones {
                for status in RunStatus::ALL {
                    let mut labels = clone_labels(&h.host, c);
                    labels.push(("status", status.as_str()));
                    family.sample(
                        name,
                        &labels,
                        if c.run.status == status { 1.0 } else { 0.0 },
                    );
                }
            }
        }
    }
}

/// The claims of nodes' facts not trusted, by problem (every problem, 0 included, so that
/// an alert can watch one).
fn untrusted_metrics(out: &mut String, untrusted: &[UntrustedClaim]) {
    let name = "clone_army_puppetdb_fleet_untrusted_claims";
    let mut family = Family::start(
        out,
        name,
        "gauge",
        "Claims of nodes' clone_army facts in PuppetDB not trusted, so not asked for, by problem.",
    );
    for problem in UntrustedProblem::ALL {
        let n = untrusted.iter().filter(|c| c.problem == problem).count();
        family.sample(name, &[("problem", problem.as_str())], n as f64);
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
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\\\x0ad");
    }

    #[test]
    fn numbers() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.25), "0.25");
    }
}
