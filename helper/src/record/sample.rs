//! One line of the timeline: what the fleet, the server, PuppetDB and the host did since
//! the previous line.
//!
//! The fleet's figures come from the same report the `report` verb makes; what a sample
//! adds is time: the runs that finished since the previous sample (a clone's last run is
//! new when its `last_run` is later than the one seen before, or, for a clone not seen
//! before, later than the previous sample), and the host's CPU share between the two.
//!
//! A new run is counted once its agent's report of it is read, since only the report
//! says whether the server failed a run its summary calls good (see
//! [`crate::report::failure`]): the agent writes it after the summary, once it has sent
//! it to the server. A run whose report has not come within [`REPORT_WAIT_SECONDS`] of
//! its end is counted on its summary alone.

use std::collections::BTreeMap;

use crate::protocol::answers::{
    Distribution, FailureKind, PuppetdbView, Report, ReportState, RunReportFile, RunStatus,
    ServerView,
};
use crate::protocol::record::{
    FleetSample, PuppetdbWindow, RunsSample, Sample, ServerWindow, TIMELINE_VERSION,
};
use crate::record::host::{self, HostReading};
use crate::record::server_window::{self};
use crate::record::shape::{self};

/// How long after a run's end a sample waits for the agent's report of it before counting
/// the run on its summary alone: the agent sends the report to the server before writing
/// it, and a server under load takes its time to take it (its report endpoint's times are
/// in the server's view); an agent that never writes it must not hold its runs back for
/// ever.
pub const REPORT_WAIT_SECONDS: u64 = 120;

/// A run that finished since the previous sample, as the sample counted it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    pub clone: String,
    pub status: RunStatus,
    pub total_time: Option<f64>,
    /// The part of `total_time` spent retrieving the catalog: what the server did, where
    /// the rest is mostly the agent's own work on the load host.
    pub config_retrieval_time: Option<f64>,
    /// Why it failed, by kind (empty when it did not).
    pub failure_kinds: Vec<FailureKind>,
    /// Its catalog's size in resources, and what its noop run would have changed, where
    /// its report said.
    pub resources: Option<u64>,
    pub would_change: Option<u64>,
}

/// A sample as its timeline line.
pub fn line(sample: &Sample) -> crate::protocol::error::Result<String> {
    serde_json::to_string(sample).map_err(|e| {
        crate::protocol::error::Error::Internal(format!("a sample does not serialize: {e}"))
    })
}

/// What a sample is taken against: the runs and the host reading seen last, and the
/// last answers of the server and PuppetDB (with their sample's time).
#[derive(Debug, Default)]
pub struct Sampler {
    last_runs: BTreeMap<String, u64>,
    previous_t: Option<u64>,
    previous_host: Option<HostReading>,
    previous_server: Option<(u64, ServerView)>,
    previous_puppetdb: Option<(u64, PuppetdbView)>,
    latest: Vec<NewRun>,
}

impl Sampler {
    /// The sample of `report` (made at `report.now`) and `reading`; `period` is the
    /// recorder's, which the first sample covers.
    pub fn sample(&mut self, report: &Report, reading: HostReading, period: u64) -> Sample {
        let t = report.now;
        let since = self.previous_t.unwrap_or(t.saturating_sub(period));
        let mut fleet = FleetSample {
            clones: report.clones.len(),
            running: 0,
            stopped: 0,
            unknown: 0,
            silent: 0,
            by_status: report.fleet.by_status.clone(),
        };
        let mut new_runs = Vec::new();
        for clone in &report.clones {
            match clone.state {
                ReportState::Running => fleet.running += 1,
                ReportState::Stopped => fleet.stopped += 1,
                ReportState::Unknown => fleet.unknown += 1,
            }
            fleet.silent += usize::from(clone.run.silent);
            let Some(last_run) = clone.run.last_run else {
                continue;
            };
            let seen = self.last_runs.get(&clone.name).copied().unwrap_or(since);
            if last_run > seen && waits_for_its_report(clone, t) {
                // Seen as it was: the run is new again in the next sample.
                self.last_runs.insert(clone.name.clone(), seen);
                continue;
            }
            if last_run > seen {
                new_runs.push(clone);
            }
            self.last_runs.insert(clone.name.clone(), last_run);
        }
        // Clones gone since: nothing to compare them with any more.
        self.last_runs
            .retain(|name, _| report.clones.iter().any(|c| &c.name == name));
        let mut by_status: BTreeMap<RunStatus, usize> =
            RunStatus::ALL.iter().map(|s| (*s, 0)).collect();
        for run in &new_runs {
            *by_status.entry(run.run.status).or_default() += 1;
        }
        let mut failed_by_kind: BTreeMap<FailureKind, usize> = BTreeMap::new();
        for kind in new_runs.iter().flat_map(|c| &c.failure_kinds) {
            *failed_by_kind.entry(*kind).or_default() += 1;
        }
        let runs = RunsSample {
            count: new_runs.len(),
            by_status,
            total_time: Distribution::of(new_runs.iter().filter_map(|c| c.run.total_time)),
            config_retrieval_time: Distribution::of(
                new_runs.iter().filter_map(|c| c.run.config_retrieval_time),
            ),
            failed_by_kind,
        };
        self.latest = new_runs
            .iter()
            .map(|c| NewRun {
                clone: c.name.clone(),
                status: c.run.status,
                total_time: c.run.total_time,
                config_retrieval_time: c.run.config_retrieval_time,
                failure_kinds: c.failure_kinds.clone(),
                resources: c.run.resources,
                would_change: c.run.would_change,
            })
            .collect();
        let host = host::sample(&reading, self.previous_host.as_ref());
        let covered = t.saturating_sub(since);
        let server_window = self.server_window(t, report.server.as_ref());
        let puppetdb_window = self.puppetdb_window(t, report.puppetdb.as_ref());
        self.previous_t = Some(t);
        self.previous_host = Some(reading);
        Sample {
            timeline: TIMELINE_VERSION,
            t,
            at: report.generated_at.clone(),
            period: covered,
            fleet,
            runs,
            server: report.server.clone().map(|mut s| {
                // The server's whole answer is kept out: the figures above are what
                // the timeline is for, and the answer is tens of KiB a sample.
                s.raw = None;
                s
            }),
            puppetdb: report.puppetdb.clone(),
            host,
            versions: Some(shape::of_report(report)),
            shape: None,
            step: None,
            server_window,
            puppetdb_window,
            access_log: None,
            groups: None,
        }
    }

    /// The server since its last answer, which `server` (when it answered) becomes.
    fn server_window(&mut self, t: u64, server: Option<&ServerView>) -> Option<ServerWindow> {
        let now = server.filter(|s| s.ok)?;
        let mut kept = now.clone();
        kept.raw = None;
        let before = self.previous_server.replace((t, kept))?;
        Some(server_window::server(
            &before.1,
            now,
            t.saturating_sub(before.0),
        ))
    }

    /// PuppetDB since its last answer, which `puppetdb` (when it answered) becomes.
    fn puppetdb_window(
        &mut self,
        t: u64,
        puppetdb: Option<&PuppetdbView>,
    ) -> Option<PuppetdbWindow> {
        let now = puppetdb.filter(|p| p.ok)?;
        let mut kept = now.clone();
        // What is kept is compared, not shown: the fleet's runs are not.
        kept.fleet = None;
        let before = self.previous_puppetdb.replace((t, kept))?;
        Some(server_window::puppetdb(
            &before.1,
            now,
            t.saturating_sub(before.0),
        ))
    }

    /// The runs the latest sample counted, each once.
    pub fn latest_runs(&self) -> &[NewRun] {
        &self.latest
    }
}

/// Whether a clone's new run is not counted yet at `now`: its report (which may fail a run
/// the summary calls good) is still to come, and it has not waited
/// [`REPORT_WAIT_SECONDS`] for it.
fn waits_for_its_report(clone: &crate::protocol::answers::CloneReport, now: u64) -> bool {
    let pending = matches!(
        clone.run_report,
        Some(RunReportFile::EarlierRun | RunReportFile::NotReadYet)
    );
    let ended = clone.run.last_run.unwrap_or(0);
    pending && now.saturating_sub(ended) < REPORT_WAIT_SECONDS
}

/// Reports as the recorder's tests make them: clones with a last run or none, and the
/// fleet figured from them as the report does.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::protocol::answers::{CloneReport, Report, ReportState, RunReport, RunStatus};

    /// A clone with its last run as (end, status, total time); retrieval takes half.
    pub fn clone(
        name: &str,
        state: ReportState,
        run: Option<(u64, RunStatus, f64)>,
    ) -> CloneReport {
        CloneReport {
            name: name.to_owned(),
            base: "debian-13".to_owned(),
            state,
            mounted: true,
            run: RunReport {
                status: run.map_or(RunStatus::Never, |r| r.1),
                succeeded: run.is_some_and(|r| r.1.is_success()),
                last_run: run.map(|r| r.0),
                total_time: run.map(|r| r.2),
                config_retrieval_time: run.map(|r| r.2 / 2.0),
                ..RunReport::never()
            },
            summary: None,
            error: None,
            failure: None,
            failure_kinds: Vec::new(),
            run_report: None,
        }
    }

    /// A report at `now` of `clones`, with the fleet figured from them.
    pub fn report(now: u64, clones: Vec<CloneReport>) -> Report {
        let fleet =
            crate::report::stats::fleet(clones.iter().map(|c| (c.name.as_str(), &c.run)), 1800);
        Report {
            now,
            generated_at: crate::sys::time::rfc3339_utc(now),
            interval: 1800,
            states_known: true,
            systemd_error: None,
            clones,
            fleet,
            server: None,
            puppetdb: None,
            groups: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{clone, report};
    use super::*;
    use crate::record::host::CpuTimes;

    fn reading(busy: u64, total: u64) -> HostReading {
        HostReading {
            load1: Some(0.5),
            mem_total_bytes: Some(1 << 30),
            mem_available_bytes: Some(1 << 29),
            cpu: Some(CpuTimes { busy, total }),
            ..Default::default()
        }
    }

    #[test]
    fn runs_are_counted_once_in_the_sample_after_they_finish() {
        use ReportState::*;
        use RunStatus::*;
        let mut sampler = Sampler::default();
        // At 1000: c1 ran at 995 (within the first period of 10 s), c2 at 900 (before it).
        let first = sampler.sample(
            &report(
                1000,
                vec![
                    clone("c1", Running, Some((995, Changed, 4.0))),
                    clone("c2", Running, Some((900, Unchanged, 2.0))),
                    clone("c3", Stopped, None),
                ],
            ),
            reading(100, 1000),
            10,
        );
        assert_eq!(first.period, 10);
        assert_eq!(first.runs.count, 1);
        assert_eq!(first.runs.by_status[&Changed], 1);
        assert_eq!(first.runs.total_time.max, Some(4.0));
        assert_eq!(
            (first.fleet.clones, first.fleet.running, first.fleet.stopped),
            (3, 2, 1)
        );
        assert_eq!(first.fleet.by_status[&Never], 1);
        assert_eq!(first.host.cpu_busy, None);
        // At 1010: c2 ran again at 1004 and failed; c1 did not run; c4 is new and ran.
        let second = sampler.sample(
            &report(
                1010,
                vec![
                    clone("c1", Running, Some((995, Changed, 4.0))),
                    clone("c2", Running, Some((1004, Failed, 6.0))),
                    clone("c4", Running, Some((1008, Unchanged, 3.0))),
                ],
            ),
            reading(150, 1200),
            10,
        );
        assert_eq!(second.period, 10);
        assert_eq!(second.runs.count, 2);
        assert_eq!(second.runs.by_status[&Failed], 1);
        assert_eq!(second.runs.by_status[&Unchanged], 1);
        assert_eq!(second.runs.by_status[&Changed], 0);
        assert_eq!(second.runs.total_time.count, 2);
        assert_eq!(second.runs.total_time.max, Some(6.0));
        assert_eq!(second.runs.config_retrieval_time.max, Some(3.0));
        assert_eq!(second.host.cpu_busy, Some(0.25));
        // At 1030, nothing new.
        let third = sampler.sample(
            &report(1030, vec![clone("c2", Running, Some((1004, Failed, 6.0)))]),
            reading(150, 1400),
            10,
        );
        assert_eq!((third.period, third.runs.count), (20, 0));
        assert_eq!(third.runs.total_time.count, 0);
        assert_eq!(third.host.cpu_busy, Some(0.0));
    }

    /// A clone whose last run is `run`, and what became of its report of it.
    fn reported(
        run: (u64, RunStatus, f64),
        file: RunReportFile,
        kinds: &[FailureKind],
    ) -> crate::protocol::answers::CloneReport {
        let mut c = clone("c1", ReportState::Running, Some(run));
        c.run_report = Some(file);
        c.failure_kinds = kinds.to_vec();
        c
    }

    /// Puppet called the run `unchanged` (it applied its cached catalog after a 503); the
    /// sample that sees its summary first, before the agent has written its report, must
    /// not count it so: it counts it, failed and why, once the report is read.
    #[test]
    fn a_run_is_counted_once_its_report_says_whether_the_server_failed_it() {
        use RunStatus::*;
        let mut sampler = Sampler::default();
        let summary_only = reported((995, Unchanged, 4.0), RunReportFile::EarlierRun, &[]);
        let first = sampler.sample(&report(1000, vec![summary_only]), reading(1, 2), 10);
        assert_eq!(first.runs.count, 0);
        let kinds = [FailureKind::CachedCatalog, FailureKind::ServerError];
        let judged = reported((995, Failed, 4.0), RunReportFile::Read, &kinds);
        let second = sampler.sample(&report(1010, vec![judged.clone()]), reading(1, 2), 10);
        assert_eq!(second.runs.count, 1);
        assert_eq!(second.runs.by_status[&Failed], 1);
        assert_eq!(second.runs.by_status[&Unchanged], 0);
        assert_eq!(
            second.runs.failed_by_kind,
            BTreeMap::from([
                (FailureKind::CachedCatalog, 1),
                (FailureKind::ServerError, 1)
            ])
        );
        assert_eq!(sampler.latest_runs()[0].failure_kinds, kinds);
        let third = sampler.sample(&report(1020, vec![judged]), reading(1, 2), 10);
        assert_eq!(third.runs.count, 0);
    }

    /// An agent that never writes its report (`report = false` writes none, and one that
    /// cannot send it may take long) has its run counted on its summary after the wait.
    #[test]
    fn a_run_whose_report_never_comes_is_counted_after_the_wait() {
        let mut sampler = Sampler::default();
        let run = (995, RunStatus::Unchanged, 4.0);
        let waiting = reported(run, RunReportFile::EarlierRun, &[]);
        for t in (1000..995 + REPORT_WAIT_SECONDS).step_by(10) {
            let sample = sampler.sample(&report(t, vec![waiting.clone()]), reading(1, 2), 10);
            assert_eq!(sample.runs.count, 0, "at {t}");
        }
        let t = 995 + REPORT_WAIT_SECONDS;
        let late = sampler.sample(&report(t, vec![waiting.clone()]), reading(1, 2), 10);
        assert_eq!(late.runs.by_status[&RunStatus::Unchanged], 1);
        // No report file at all: nothing to wait for.
        let mut sampler = Sampler::default();
        let none = reported(run, RunReportFile::Missing, &[]);
        let sample = sampler.sample(&report(1000, vec![none]), reading(1, 2), 10);
        assert_eq!(sample.runs.count, 1);
    }

    #[test]
    fn a_sample_is_one_json_line_that_reads_back() {
        let mut sampler = Sampler::default();
        let sample = sampler.sample(&report(1000, vec![]), reading(1, 2), 10);
        let line = serde_json::to_string(&sample).unwrap();
        assert!(!line.contains('\n'));
        assert!(line.starts_with(r#"{"timeline":1,"t":1000,"#), "{line}");
        let back: Sample = serde_json::from_str(&line).unwrap();
        assert_eq!(back, sample);
    }
}
