//! Whose limit the knee is: the load host's or the server's.
//!
//! The rule, in one place. At the first step past the bounds the load host gave first
//! when
//!
//! - its CPU was near saturation: busy at least [`LOAD_HOST_CPU_SATURATED`] of the time,
//!   or
//! - its agents were starved: the runs' own time (outside catalog retrieval, see
//!   [`super::run_times::agent_time`]) grew at least [`AGENT_TIME_INFLATION`] times from
//!   the lightest step within bounds, and more than catalog retrieval grew. A server
//!   that gives first slows the retrieval (compiling, queueing for a JRuby); a load host
//!   that gives first slows everything its agents do themselves, and the retrieval
//!   barely. This is read only where the load host's CPU figure cannot say it had
//!   room: without one, or counted over every CPU, a server's among them. The runs' own
//!   time also holds their other requests to the server (plugins, files, the report):
//!   where the load host's own CPUs (`--load-host-cpus`) had room, a longer own time
//!   is time spent waiting on the server, not starving.
//!
//! Otherwise the server gave first, as far as the load host's figures can tell; without
//! them it is not known. The load host's CPU is the CPUs the ramp was told are its own
//! (`--load-host-cpus`, [`super::host_cpus`]) or else every CPU: a server pinned to other
//! CPUs of the same machine does not make its load host look saturated. Medians are compared, not tails: a handful of slow runs do not
//! move them.

use super::step::one_decimal;
use crate::protocol::ramp::{GaveFirst, Limit, StepResult};

/// The share of the load host's cores busy at which it is saturated.
pub const LOAD_HOST_CPU_SATURATED: f64 = 0.9;

/// How many times the runs' own time must grow for the agents to count as starved.
pub const AGENT_TIME_INFLATION: f64 = 1.5;

/// Whose limit `degraded` (the first step past the bounds) shows, against `reference`,
/// the lightest step within bounds (none when the first step already crossed); the
/// steps' `host_cpu_busy` counted `host_cpus` (`None`: every CPU).
pub fn whose(
    degraded: &StepResult,
    reference: Option<&StepResult>,
    host_cpus: Option<&str>,
) -> Limit {
    let growth = |pick: fn(&StepResult) -> Option<f64>| {
        let (now, then) = (pick(degraded)?, pick(reference?)?);
        (then > 0.0).then(|| now / then)
    };
    let agent = growth(|s| s.agent_time.p50);
    let retrieval = growth(|s| s.config_retrieval_time.p50);
    let cpu = degraded.host_cpu_busy;
    let percent = |v: f64| format!("{} %", one_decimal(Some(v * 100.0)));
    let times = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}×"));
    let from = reference.map_or(0, |r| r.clones);
    // "CPU", or "CPU (CPUs 2-3)" when only those were counted.
    let cpu_name = match host_cpus {
        Some(list) => format!("CPU (CPUs {list})"),
        None => "CPU".to_owned(),
    };
    let (gave_first, reason) = if let Some(busy) = cpu.filter(|b| *b >= LOAD_HOST_CPU_SATURATED) {
        (
            GaveFirst::LoadHost,
            format!(
                "the load host's {cpu_name} was {} busy (saturated from {})",
                percent(busy),
                percent(LOAD_HOST_CPU_SATURATED)
            ),
        )
    } else if let Some(a) = agent.filter(|a| {
        *a >= AGENT_TIME_INFLATION
            && retrieval.is_none_or(|r| *a > r)
            && (cpu.is_none() || host_cpus.is_none())
    }) {
        (
            GaveFirst::LoadHost,
            format!(
                "the runs' own time grew {} from {from} clones while catalog retrieval grew {}: the agents were starved on the load host",
                times(Some(a)),
                times(retrieval)
            ),
        )
    } else if cpu.is_some() || agent.is_some() {
        let mut room = Vec::new();
        if let Some(busy) = cpu {
            room.push(format!("{cpu_name} {} busy", percent(busy)));
        }
        if agent.is_some() {
            // Its own CPUs had room, so a grown own time waited on the server.
            let waited = host_cpus.is_some()
                && cpu.is_some()
                && agent.is_some_and(|a| a >= AGENT_TIME_INFLATION);
            room.push(format!(
                "runs' own time {} from {from} clones, catalog retrieval {}{}",
                times(agent),
                times(retrieval),
                if waited {
                    ": outside catalog retrieval they waited on the server"
                } else {
                    ""
                }
            ));
        }
        (
            GaveFirst::Server,
            format!("the load host had room ({})", room.join("; ")),
        )
    } else {
        (
            GaveFirst::Unknown,
            "no load host CPU or run times to tell whose limit it was".to_owned(),
        )
    };
    Limit {
        gave_first,
        host_cpu_busy: cpu,
        host_cpus: host_cpus.map(str::to_owned),
        agent_time_growth: agent,
        retrieval_growth: retrieval,
        reason,
    }
}
