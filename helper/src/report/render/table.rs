//! `report --format table`: one row per clone, then the fleet's lines, then the
//! server's and PuppetDB's; every cell of others' text escaped.

use std::fmt::Write;

use crate::protocol::answers::{
    CloneReport, FleetReport, PuppetdbFleet, Report, ReportGroups, RunReport, UntrustedClaim,
};
use crate::report::puppetdb::PuppetdbView;
use crate::report::server::{Figure, ServerView};
use crate::report::stats::Distribution;
use crate::report::summary::RunStatus;
use crate::sys::escape::visible;
use crate::sys::table::{or_none, Table};

use super::figures::{float, ms_to_s};

fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

fn whole<T: ToString>(value: Option<T>) -> String {
    or_none(value)
}

/// A server figure rounded to a whole number, for people.
fn rounded(value: &Option<Figure>) -> String {
    value
        .as_ref()
        .and_then(Figure::as_f64)
        .map_or_else(|| "-".to_owned(), |v| format!("{}", v.round() as i64))
}

/// A duration for people: `42s`, `7m05s`, `3h02m`, `2d04h`.
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
    if let Some(groups) = &report.groups {
        group_lines(&mut out, groups);
    }
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

/// Each group's fleet lines, its catalogs' sizes and what its noop runs would change,
/// under its value (a twin's, escaped: it came from the estate's records).
fn group_lines(out: &mut String, groups: &ReportGroups) {
    for group in &groups.groups {
        let _ = writeln!(out, "{}={}:", visible(&groups.by), visible(&group.value));
        fleet_lines(out, "  ", &group.fleet);
        let r = &group.resources;
        let _ = writeln!(
            out,
            "  catalog resources: p50 {}, max {} (over {} clones); would change {}",
            r.p50.map_or("-".to_owned(), |v| format!("{v:.0}")),
            r.max.map_or("-".to_owned(), |v| format!("{v:.0}")),
            r.count,
            group.would_change
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(age(Some(59)), "59s");
        assert_eq!(age(Some(425)), "7m05s");
        assert_eq!(age(Some(10_920)), "3h02m");
        assert_eq!(age(Some(187_200)), "2d04h");
        assert_eq!(age(None), "-");
    }
}
