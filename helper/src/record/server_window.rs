//! What the server and PuppetDB did between two samples: the differences of their
//! counts, and where their gauges stood at the window's end.
//!
//! Puppet Server's counts are since it started and its means are decaying samples (see
//! [`crate::report::server`]), so a sample's own figures say little of its period; the
//! difference of two answers' counts says exactly how many requests, borrows, borrow
//! timeouts and queue-limit refusals there were in between. A server restarted in
//! between (its JVM's start time moved, or a count went back) counts from zero again: the
//! window's figures are then its counts since the restart, and `restarted` says so.
//!
//! [`WindowTotals`] adds windows up over a ramp's step, with the access log's request
//! times per endpoint ([`crate::record::access_log`]).

use std::collections::BTreeMap;

use crate::protocol::answers::{Figure, PuppetdbView, ServerView, P95_MIN_VALUES};
use crate::protocol::record::{
    AccessWindow, EndpointFigures, EndpointWindow, JrubyWindow, JvmWindow, PuppetdbWindow,
    RequestTimes, ServerFigures, ServerWindow,
};

fn count(figure: &Option<Figure>) -> Option<u64> {
    figure.as_ref().and_then(Figure::as_u64)
}

fn gauge(figure: &Option<Figure>) -> Option<f64> {
    figure
        .as_ref()
        .and_then(Figure::as_f64)
        .filter(|v| v.is_finite())
}

/// The difference of a count between two answers: the count itself after a restart
/// (counts start again from zero), `None` when either answer lacks it.
fn delta(before: Option<u64>, after: Option<u64>, restarted: bool) -> Option<u64> {
    let (before, after) = (before?, after?);
    Some(if restarted || after < before {
        after
    } else {
        after - before
    })
}

/// The counts a restart sets back to zero, from one answer.
fn counters(view: &ServerView) -> Vec<Option<u64>> {
    let jruby = view.jruby.as_ref();
    let j = |pick: fn(&crate::protocol::answers::JrubyMetrics) -> &Option<Figure>| {
        jruby.and_then(|j| count(pick(j)))
    };
    vec![
        view.all_requests.as_ref().and_then(|t| count(&t.count)),
        view.compile.as_ref().and_then(|t| count(&t.count)),
        j(|j| &j.borrow_count),
        j(|j| &j.borrow_timeout_count),
        j(|j| &j.requested_count),
        j(|j| &j.queue_limit_hit_count),
        view.jvm.as_ref().and_then(|v| count(&v.gc_count)),
    ]
}

/// Whether the server restarted between the answers `before` and `after`.
pub fn restarted(before: &ServerView, after: &ServerView) -> bool {
    let start = |v: &ServerView| v.jvm.as_ref().and_then(|j| count(&j.start_time_ms));
    if let (Some(a), Some(b)) = (start(before), start(after)) {
        if a != b {
            return true;
        }
    }
    counters(before)
        .into_iter()
        .zip(counters(after))
        .any(|(b, a)| matches!((b, a), (Some(b), Some(a)) if a < b))
}

/// The server between the answers `before` and `after`, `seconds` apart.
pub fn server(before: &ServerView, after: &ServerView, seconds: u64) -> ServerWindow {
    let restarted = restarted(before, after);
    let d = |b: Option<u64>, a: Option<u64>| delta(b, a, restarted);
    let timing_count =
        |t: &Option<crate::protocol::answers::Timing>| t.as_ref().and_then(|t| count(&t.count));
    let mut endpoints = BTreeMap::new();
    if let (Some(was), Some(now)) = (&before.endpoints, &after.endpoints) {
        for (name, timing) in now {
            // An endpoint without requests is not listed: it had none.
            let had = was.get(name).and_then(|t| count(&t.count)).or(Some(0));
            let Some(requests) = d(had, count(&timing.count)).filter(|n| *n > 0) else {
                continue;
            };
            endpoints.insert(
                name.clone(),
                EndpointWindow {
                    requests,
                    recent_mean_ms: gauge(&timing.mean_ms),
                },
            );
        }
    }
    let jruby = after.jruby.as_ref().map(|now| {
        let was = before.jruby.as_ref();
        let pair = |pick: fn(&crate::protocol::answers::JrubyMetrics) -> &Option<Figure>| {
            d(was.and_then(|w| count(pick(w))), count(pick(now)))
        };
        JrubyWindow {
            borrows: pair(|j| &j.borrow_count),
            borrow_timeouts: pair(|j| &j.borrow_timeout_count),
            borrow_retries: pair(|j| &j.borrow_retry_count),
            queue_limit_hits: pair(|j| &j.queue_limit_hit_count),
            instances: gauge(&now.num_jrubies),
            free: gauge(&now.num_free_jrubies),
            queued: gauge(&now.queued),
            recent_borrow_ms: gauge(&now.average_borrow_time_ms),
            recent_wait_ms: gauge(&now.average_wait_time_ms),
        }
    });
    let jvm = after.jvm.as_ref().map(|now| {
        let was = before.jvm.as_ref();
        let gc_ms = d(
            was.and_then(|w| count(&w.gc_time_ms)),
            count(&now.gc_time_ms),
        );
        JvmWindow {
            gc_ms,
            gc_share: gc_ms
                .filter(|_| seconds > 0)
                .map(|ms| ms as f64 / (seconds as f64 * 1000.0)),
            heap_used_bytes: count(&now.heap_used_bytes),
            heap_max_bytes: count(&now.heap_max_bytes),
            cpu_percent: gauge(&now.cpu_percent),
        }
    });
    ServerWindow {
        seconds,
        restarted,
        requests: d(
            timing_count(&before.all_requests),
            timing_count(&after.all_requests),
        ),
        endpoints,
        compiles: d(timing_count(&before.compile), timing_count(&after.compile)),
        jruby,
        jvm,
    }
}

/// PuppetDB between the answers `before` and `after`, `seconds` apart.
pub fn puppetdb(before: &PuppetdbView, after: &PuppetdbView, seconds: u64) -> PuppetdbWindow {
    let processed = |v: &PuppetdbView| v.commands.as_ref().and_then(|c| count(&c.processed));
    let (was, now) = (processed(before), processed(after));
    let restarted = matches!((was, now), (Some(b), Some(a)) if a < b);
    PuppetdbWindow {
        seconds,
        restarted,
        processed: delta(was, now, restarted),
        queue_depth: gauge(&after.queue_depth),
        recent_processing_ms: after
            .commands
            .as_ref()
            .and_then(|c| gauge(&c.processing_mean_ms)),
    }
}

/// Windows added up over a ramp's step.
#[derive(Debug, Clone, Default)]
pub struct WindowTotals {
    seconds: u64,
    restarted: bool,
    requests: BTreeMap<String, u64>,
    recent_mean_ms: BTreeMap<String, f64>,
    times: BTreeMap<String, RequestTimes>,
    borrow_timeouts: Option<u64>,
    queue_limit_hits: Option<u64>,
    queued_max: Option<f64>,
    gc_ms: Option<u64>,
    heap_used_max: Option<u64>,
    cpu: Vec<f64>,
    puppetdb_queue_max: Option<f64>,
    puppetdb_processed: Option<u64>,
    access_requests: u64,
    access_skipped: u64,
}

fn add(total: &mut Option<u64>, value: Option<u64>) {
    if let Some(v) = value {
        *total = Some(total.unwrap_or(0).saturating_add(v));
    }
}

fn most<T: PartialOrd + Copy>(total: &mut Option<T>, value: Option<T>) {
    if let Some(v) = value {
        if total.is_none_or(|t| v > t) {
            *total = Some(v);
        }
    }
}

impl WindowTotals {
    /// Adds a sample's windows.
    pub fn add(
        &mut self,
        server: Option<&ServerWindow>,
        puppetdb: Option<&PuppetdbWindow>,
        access: Option<&AccessWindow>,
    ) {
        if let Some(w) = server {
            self.seconds += w.seconds;
            self.restarted |= w.restarted;
            for (name, e) in &w.endpoints {
                let n = self.requests.entry(name.clone()).or_default();
                *n = n.saturating_add(e.requests);
                if let Some(mean) = e.recent_mean_ms {
                    self.recent_mean_ms.insert(name.clone(), mean);
                }
            }
            if let Some(j) = &w.jruby {
                add(&mut self.borrow_timeouts, j.borrow_timeouts);
                add(&mut self.queue_limit_hits, j.queue_limit_hits);
                most(&mut self.queued_max, j.queued);
            }
            if let Some(jvm) = &w.jvm {
                add(&mut self.gc_ms, jvm.gc_ms);
                most(&mut self.heap_used_max, jvm.heap_used_bytes);
                self.cpu.extend(jvm.cpu_percent);
            }
        }
        if let Some(p) = puppetdb {
            most(&mut self.puppetdb_queue_max, p.queue_depth);
            add(&mut self.puppetdb_processed, p.processed);
        }
        if let Some(a) = access {
            self.access_requests = self.access_requests.saturating_add(a.requests);
            self.access_skipped = self.access_skipped.saturating_add(a.skipped);
            for (name, times) in &a.endpoints {
                self.times.entry(name.clone()).or_default().merge(times);
            }
        }
    }

    /// The step's figures.
    pub fn figures(&self) -> ServerFigures {
        let names: std::collections::BTreeSet<&String> =
            self.requests.keys().chain(self.times.keys()).collect();
        let endpoints = names
            .into_iter()
            .map(|name| {
                let logged = self.times.get(name);
                let figures = EndpointFigures {
                    requests: self.requests.get(name).copied(),
                    recent_mean_ms: self.recent_mean_ms.get(name).copied(),
                    logged: logged.map(|t| t.requests),
                    server_errors: logged.map(|t| t.server_errors),
                    mean_ms: logged.and_then(|t| t.times.mean_ms()),
                    p50_ms: logged.and_then(|t| t.times.percentile(50)),
                    // The one p95 rule: no p95 of fewer values than it takes to have one.
                    p95_ms: logged
                        .filter(|t| t.requests >= P95_MIN_VALUES as u64)
                        .and_then(|t| t.times.percentile(95)),
                    max_ms: logged.and_then(|t| t.times.max_ms()),
                };
                (name.clone(), figures)
            })
            .collect();
        ServerFigures {
            seconds: self.seconds,
            restarted: self.restarted,
            endpoints,
            borrow_timeouts: self.borrow_timeouts,
            queue_limit_hits: self.queue_limit_hits,
            jruby_queued_max: self.queued_max,
            gc_share: self
                .gc_ms
                .filter(|_| self.seconds > 0)
                .map(|ms| ms as f64 / (self.seconds as f64 * 1000.0)),
            heap_used_max_bytes: self.heap_used_max,
            cpu_percent: (!self.cpu.is_empty())
                .then(|| self.cpu.iter().sum::<f64>() / self.cpu.len() as f64),
            puppetdb_queue_max: self.puppetdb_queue_max,
            puppetdb_processed: self.puppetdb_processed,
            access_log_requests: self.access_requests,
            access_log_skipped: self.access_skipped,
        }
    }
}

#[cfg(test)]
mod tests;
