//! The report for people (`--format table`) and for node_exporter's textfile collector
//! (`--format prometheus`). Both are written as they are, without the JSON envelope;
//! errors still come out as the envelope.

use std::fmt::Write;

use crate::protocol::answers::{
    CloneReport, FleetReport, PuppetdbCloneRun, PuppetdbFleet, Report, RunReport, UntrustedClaim,
    UntrustedProblem,
};
use crate::report::puppetdb::PuppetdbView;
use crate::report::server::{Figure, ServerView};
use crate::report::stats::Distribution;
use crate::report::summary::RunStatus;
use crate::sys::escape::visible;
use crate::sys::table::{or_none, Table};

/// Output format of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// The JSON envelope, like every verb.
    #[default]
    Json,
    /// A table for people.
    Table,
    /// node_exporter textfile format.
    Prometheus,
    /// A recorded run's page (`--from`).
    Html,
}

fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

fn whole<T: ToString>(value: Option<T>) -> String {
    or_none(value)
}

/// A duration for people: `42s`, `7m05s`, `3h02m`, `2d04h`.
/// A server figure rounded to a whole number, for people.
fn rounded(value: &Option<Figure>) -> String {
    value
        .as_ref()
        .and_then(Figure::as_f64)
        .map_or_else(|| "-".to_owned(), |v| format!("{}", v.round() as i64))
}

/// A server figure in milliseconds as seconds.
fn ms_to_s(value: &Option<Figure>) -> Option<f64> {
    value
        .as_ref()
        .and_then(Figure::as_f64)
        .map(|ms| ms / 1000.0)
}

fn float(value: &Option<Figure>) -> Option<f64> {
    value.as_ref().and_then(Figure::as_f64)
}

fn age(value: Option<u64>) -> String {
    match value {
        None => "-".to_owned(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        Some(s) if s < 86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        Some(s) => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

fn distribution_line(name: &str, d: &Distribution) -> String {
    format!(
        "{name}: p50 {} s, p95 {}, max {} s (over {} clones)",
        seconds(d.p50),
        d.p95_cell(|v| format!("{} s", seconds(Some(v)))),
        seconds(d.max),
        d.count
    )
}

/// One row per clone, then the fleet's lines, then the server's.
pub fn table(report: &Report) -> String {
    let mut clones = Table::new(&[&["CLONE", "STATE", "STATUS"][..], &RUN_COLUMNS].concat());
    for c in &report.clones {
        clones.row(row(c));
    }
    let mut out = clones.render();
    out.push('\n');
    fleet_lines(&mut out, "", &report.fleet);
    for clone in &report.clones {
        if let Some(failure) = &clone.failure {
            let first = failure.lines().next().unwrap_or_default();
            let kinds: Vec<&str> = clone.failure_kinds.iter().map(|k| k.as_str()).collect();
            let why = if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            };
            let _ = writeln!(
                out,
                "{} failed{why}: {}",
                visible(&clone.name),
                visible(first)
            );
        }
    }
    if let Some(error) = &report.systemd_error {
        let _ = writeln!(out, "states unknown: {}", visible(error));
    }
    if let Some(server) = &report.server {
        server_lines(&mut out, server);
    }
    if let Some(puppetdb) = &report.puppetdb {
        puppetdb_lines(&mut out, puppetdb);
    }
    let _ = writeln!(out, "generated at {}", report.generated_at);
    out
}

/// The fleet's counts, run time and config retrieval distributions and silent clones, one
/// per line, each line starting with `indent`.
fn fleet_lines(out: &mut String, indent: &str, fleet: &FleetReport) {
    let counts: Vec<String> = fleet
        .by_status
        .iter()
        .map(|(status, n)| format!("{} {n}", status.as_str()))
        .collect();
    let _ = writeln!(
        out,
        "{indent}clones: {} ({})",
        fleet.clones,
        counts.join(", ")
    );
    let _ = writeln!(
        out,
        "{indent}{}",
        distribution_line("run time", &fleet.total_time)
    );
    let _ = writeln!(
        out,
        "{indent}{}",
        distribution_line("config retrieval", &fleet.config_retrieval_time)
    );
    let _ = writeln!(
        out,
        "{indent}silent for more than {} s: {}",
        fleet.silent_after,
        if fleet.silent.is_empty() {
            "none".to_owned()
        } else {
            visible(&fleet.silent.join(", ")).into_owned()
        }
    );
}

/// The columns a clone's last run fills, read from the clone or from PuppetDB alike.
const RUN_COLUMNS: [&str; 8] = [
    "TOTAL_S",
    "CONFIG_S",
    "AGE",
    "RESOURCES",
    "FAILED",
    "PUPPET",
    "CONFIG",
    "SILENT",
];

/// A clone's last run in [`RUN_COLUMNS`].
fn run_cells(run: &RunReport) -> [String; 8] {
    [
        seconds(run.total_time),
        seconds(run.config_retrieval_time),
        age(run.age),
        whole(run.resources),
        whole(run.failed_resources),
        whole(run.puppet_version.as_deref()),
        whole(run.config_version.as_deref()),
        if run.silent { "yes" } else { "no" }.to_owned(),
    ]
}

/// The STATUS column: a noop run's says how many resources it would change.
fn status_cell(run: &RunReport) -> String {
    match run.would_change {
        Some(n) if run.status == RunStatus::WouldChange => format!("{} ({n})", run.status.as_str()),
        _ => run.status.as_str().to_owned(),
    }
}

fn row(c: &CloneReport) -> Vec<String> {
    let mut row = vec![
        c.name.clone(),
        c.state.as_str().to_owned(),
        status_cell(&c.run),
    ];
    row.extend(run_cells(&c.run));
    row
}

/// The server's lines. Its service names and states are its own text: escaped like a
/// clone's.
fn server_lines(out: &mut String, server: &ServerView) {
    let _ = writeln!(out, "server: {}", visible(&server.url));
    if let Some(error) = &server.error {
        let _ = writeln!(out, "  error: {}", visible(error));
        return;
    }
    if let Some(status) = server.http_status {
        let not_running: Vec<String> = server
            .states
            .iter()
            .filter(|(_, s)| s.as_str() != "running")
            .map(|(n, s)| format!("{} {}", visible(n), visible(s)))
            .collect();
        let _ = writeln!(
            out,
            "  HTTP {status}; services not running: {}",
            if not_running.is_empty() {
                "none".to_owned()
            } else {
                not_running.join(", ")
            }
        );
    }
    if let Some(j) = &server.jruby {
        let _ = writeln!(
            out,
            "  jrubies: {} free of {}, {} waiting; borrows {}, timeouts {}, refused by the queue limit {}; average borrow {} ms, wait {} ms",
            rounded(&j.num_free_jrubies),
            rounded(&j.num_jrubies),
            rounded(&j.queued),
            rounded(&j.borrow_count),
            rounded(&j.borrow_timeout_count),
            rounded(&j.queue_limit_hit_count),
            rounded(&j.average_borrow_time_ms),
            rounded(&j.average_wait_time_ms),
        );
    }
    if let Some(endpoints) = server.endpoints.as_ref().filter(|e| !e.is_empty()) {
        let each: Vec<String> = endpoints
            .iter()
            .map(|(name, t)| {
                format!(
                    "{} {} ({} ms)",
                    visible(name),
                    rounded(&t.count),
                    rounded(&t.mean_ms)
                )
            })
            .collect();
        let _ = writeln!(out, "  requests (recent mean): {}", each.join(", "));
    }
    if let Some(jvm) = &server.jvm {
        let mib = |v: &Option<Figure>| {
            float(v).map_or_else(
                || "-".to_owned(),
                |b| format!("{}", (b / 1048576.0).round()),
            )
        };
        let _ = writeln!(
            out,
            "  jvm: heap {} of {} MiB; {} collections, {} s; cpu {} %",
            mib(&jvm.heap_used_bytes),
            mib(&jvm.heap_max_bytes),
            rounded(&jvm.gc_count),
            seconds(ms_to_s(&jvm.gc_time_ms)),
            rounded(&jvm.cpu_percent),
        );
    }
    for (name, timing) in [
        ("compile", &server.compile),
        ("catalog requests", &server.catalog_requests),
        ("all requests", &server.all_requests),
    ] {
        if let Some(t) = timing {
            let _ = writeln!(
                out,
                "  {name}: {}, mean {} ms",
                rounded(&t.count),
                rounded(&t.mean_ms),
            );
        }
    }
}

fn puppetdb_lines(out: &mut String, puppetdb: &PuppetdbView) {
    let _ = writeln!(out, "puppetdb: {}", visible(&puppetdb.url));
    if let Some(error) = &puppetdb.error {
        let _ = writeln!(out, "  error: {}", visible(error));
        return;
    }
    let _ = writeln!(
        out,
        "  {} {}; queue depth {}",
        visible(puppetdb.version.as_deref().unwrap_or("-")),
        visible(puppetdb.state.as_deref().unwrap_or("-")),
        rounded(&puppetdb.queue_depth),
    );
    if let Some(c) = &puppetdb.commands {
        let _ = writeln!(
            out,
            "  commands: {} processed, {}/s over the last minute; processing mean {} ms, p95 {} ms, max {} ms",
            rounded(&c.processed),
            seconds(float(&c.processed_per_second)),
            rounded(&c.processing_mean_ms),
            rounded(&c.processing_p95_ms),
            rounded(&c.processing_max_ms),
        );
    }
    if let Some(error) = &puppetdb.metrics_error {
        let _ = writeln!(out, "  metrics: {}", visible(error));
    }
    if let Some(error) = &puppetdb.fleet_error {
        let _ = writeln!(out, "  fleet: {}", visible(error));
    }
    if let Some(fleet) = &puppetdb.fleet {
        puppetdb_fleet_lines(out, fleet);
    }
}

/// Every load host's clones as PuppetDB holds them: one row per clone, the fleet's lines
/// over all hosts, then each host's.
fn puppetdb_fleet_lines(out: &mut String, fleet: &PuppetdbFleet) {
    let hosts = fleet.hosts.len();
    let _ = writeln!(
        out,
        "  fleet in PuppetDB: {hosts} load host{}, {} clones",
        if hosts == 1 { "" } else { "s" },
        fleet.fleet.clones
    );
    if fleet.hosts.is_empty() {
        untrusted_lines(out, &fleet.untrusted);
        return;
    }
    let mut table = Table::new(
        &[
            &["HOST", "CLONE", "CERTNAME", "STATUS", "NOOP"][..],
            &RUN_COLUMNS,
        ]
        .concat(),
    );
    for host in &fleet.hosts {
        for c in &host.clones {
            let mut row = vec![
                host.host.clone(),
                c.name.clone(),
                c.certname.clone(),
                status_cell(&c.run),
                whole(c.noop.map(|n| if n { "yes" } else { "no" })),
            ];
            row.extend(run_cells(&c.run));
            table.row(row);
        }
    }
    for line in table.render().lines() {
        let _ = writeln!(out, "  {line}");
    }
    fleet_lines(out, "  ", &fleet.fleet);
    for host in &fleet.hosts {
        let _ = writeln!(out, "  load host {}:", visible(&host.host));
        fleet_lines(out, "    ", &host.fleet);
        if let Some(error) = &host.error {
            let _ = writeln!(out, "    error: {}", visible(error));
        }
        for c in &host.clones {
            if let Some(error) = &c.error {
                let _ = writeln!(out, "    {}: {}", visible(&c.certname), visible(error));
            }
        }
    }
    untrusted_lines(out, &fleet.untrusted);
}

/// What the nodes' facts claim that is not trusted, one line a claim: the node, the
/// problem, why.
fn untrusted_lines(out: &mut String, untrusted: &[UntrustedClaim]) {
    if untrusted.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  not trusted, so not asked for: {} claim{} of clone_army facts",
        untrusted.len(),
        if untrusted.len() == 1 { "" } else { "s" }
    );
    for claim in untrusted {
        let _ = writeln!(
            out,
            "    {} ({}): {}",
            visible(&claim.node),
            claim.problem.as_str(),
            visible(&claim.message)
        );
    }
}

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
    fn numbers_and_ages() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(age(Some(59)), "59s");
        assert_eq!(age(Some(425)), "7m05s");
        assert_eq!(age(Some(10_920)), "3h02m");
        assert_eq!(age(Some(187_200)), "2d04h");
        assert_eq!(age(None), "-");
    }
}
