//! `record --group-by KEY`: each sample's runs by the group of their clones, and the same
//! added up over a whole recording for its page.
//!
//! A clone's group is what `report --group-by` takes ([`crate::report::groups`]): the
//! value of the key in its twin record on the host, `-` when it has none. The recorder
//! looks it up in each sample for the clones that had a new run, and only for those:
//! a clone can be made again as the twin of another node while the recorder runs (a
//! reconfigured fleet, a ramp's steps), and a lookup per run is one small file read
//! beside the run summaries the sample reads anyway.
//!
//! The times a sample keeps per group merge exactly ([`Latencies`]), so a recording's
//! p50 and p95 per group are percentiles of its runs: exact below 128 ms, and above that
//! at most one histogram bucket (about 3 %) high, never low.

use std::collections::BTreeMap;

use crate::protocol::answers::{Distribution, RunStatus, P95_MIN_VALUES};
use crate::protocol::error::Result;
use crate::protocol::latency::Latencies;
use crate::protocol::record::{GroupRuns, GroupsSample, Sample};
use crate::record::sample::NewRun;
use crate::report::stats::nearest_rank_counted;

/// A time in seconds as the histograms count it, in whole milliseconds; none for what is
/// no time (negative, not finite).
fn as_ms(seconds: f64) -> Option<u64> {
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64)
}

/// The runs `runs` (one sample's) by the group `group_of` gives each run's clone, every
/// clone looked up once. `by` is the key, as [`crate::report::groups::key`] checked it.
pub fn of_sample(
    by: &str,
    runs: &[NewRun],
    mut group_of: impl FnMut(&str) -> Result<String>,
) -> Result<GroupsSample> {
    let mut looked_up: BTreeMap<&str, String> = BTreeMap::new();
    let mut members: BTreeMap<String, Vec<&NewRun>> = BTreeMap::new();
    for run in runs {
        if !looked_up.contains_key(run.clone.as_str()) {
            looked_up.insert(&run.clone, group_of(&run.clone)?);
        }
        members
            .entry(looked_up[run.clone.as_str()].clone())
            .or_default()
            .push(run);
    }
    let groups = members
        .into_iter()
        .map(|(value, runs)| (value, group_runs(&runs)))
        .collect();
    Ok(GroupsSample {
        by: by.to_owned(),
        groups,
    })
}

/// One group's figures of its runs in a sample.
fn group_runs(runs: &[&NewRun]) -> GroupRuns {
    let histogram = |pick: fn(&NewRun) -> Option<f64>| {
        let mut times = Latencies::default();
        for ms in runs.iter().filter_map(|r| pick(r)).filter_map(as_ms) {
            times.record(ms);
        }
        times
    };
    let mut resources: BTreeMap<u64, u64> = BTreeMap::new();
    for size in runs.iter().filter_map(|r| r.resources) {
        *resources.entry(size).or_default() += 1;
    }
    GroupRuns {
        runs: runs.len(),
        failed: runs
            .iter()
            .filter(|r| r.status == RunStatus::Failed)
            .count(),
        total_time: Distribution::of(runs.iter().filter_map(|r| r.total_time)),
        config_retrieval_time: Distribution::of(
            runs.iter().filter_map(|r| r.config_retrieval_time),
        ),
        total_time_ms: histogram(|r| r.total_time),
        config_retrieval_ms: histogram(|r| r.config_retrieval_time),
        resources,
        would_change: runs
            .iter()
            .filter_map(|r| r.would_change)
            .fold(0, u64::saturating_add),
    }
}

/// A group over a whole recording: every sample's runs of it added up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupTotals {
    pub runs: u64,
    pub failed: u64,
    pub total_time_ms: Latencies,
    pub config_retrieval_ms: Latencies,
    pub resources: BTreeMap<u64, u64>,
    pub would_change: u64,
}

/// A figure over a recording's runs of a group, in seconds: the p50, and the p95 where
/// at least [`P95_MIN_VALUES`] runs had the time (else the max, which is then the slow
/// end: `Tail`'s rule).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeFigures {
    pub count: u64,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub max: Option<f64>,
}

impl TimeFigures {
    fn of(times: &Latencies) -> Self {
        let seconds = |ms: Option<u64>| ms.map(|ms| ms as f64 / 1000.0);
        let count = times.count();
        TimeFigures {
            count,
            p50: seconds(times.percentile(50)),
            p95: seconds(times.percentile(95)).filter(|_| count >= P95_MIN_VALUES as u64),
            max: seconds(times.max_ms()),
        }
    }
}

impl GroupTotals {
    fn add(&mut self, runs: &GroupRuns) {
        self.runs = self.runs.saturating_add(runs.runs as u64);
        self.failed = self.failed.saturating_add(runs.failed as u64);
        self.total_time_ms.merge(&runs.total_time_ms);
        self.config_retrieval_ms.merge(&runs.config_retrieval_ms);
        for (size, n) in &runs.resources {
            let count = self.resources.entry(*size).or_default();
            *count = count.saturating_add(*n);
        }
        self.would_change = self.would_change.saturating_add(runs.would_change);
    }

    pub fn total_time(&self) -> TimeFigures {
        TimeFigures::of(&self.total_time_ms)
    }

    pub fn config_retrieval_time(&self) -> TimeFigures {
        TimeFigures::of(&self.config_retrieval_ms)
    }

    /// The median catalog size of the runs that gave one.
    pub fn resources_median(&self) -> Option<u64> {
        nearest_rank_counted(&self.resources, 50)
    }
}

/// A recording's groups: the key they are by, and each group's totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordingGroups {
    pub by: String,
    pub groups: BTreeMap<String, GroupTotals>,
}

impl RecordingGroups {
    /// The groups of `samples` added up; none when no sample has groups. The key is the
    /// latest sample's (a recorder started again with another key makes one timeline of
    /// two keys: its groups are then the values of both, which the page says).
    pub fn of(samples: &[Sample]) -> Option<RecordingGroups> {
        let mut recording: Option<RecordingGroups> = None;
        let mut keys: Vec<&str> = Vec::new();
        for grouped in samples.iter().filter_map(|s| s.groups.as_ref()) {
            if !keys.contains(&grouped.by.as_str()) {
                keys.push(&grouped.by);
            }
            let totals = recording.get_or_insert_with(RecordingGroups::default);
            for (value, runs) in &grouped.groups {
                totals.groups.entry(value.clone()).or_default().add(runs);
            }
        }
        let mut recording = recording?;
        recording.by = keys.join(", ");
        Some(recording)
    }

    /// The group values by their runs over the recording, most first (ties by value).
    pub fn largest_first(&self) -> Vec<&str> {
        let mut values: Vec<(&str, u64)> = self
            .groups
            .iter()
            .map(|(value, totals)| (value.as_str(), totals.runs))
            .collect();
        values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        values.into_iter().map(|(value, _)| value).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error::Error;

    fn run(clone: &str, status: RunStatus, total: f64) -> NewRun {
        NewRun {
            clone: clone.to_owned(),
            status,
            total_time: Some(total),
            config_retrieval_time: Some(total / 2.0),
            failure_kinds: Vec::new(),
            resources: Some(100 + total as u64),
            would_change: Some(1),
        }
    }

    /// Clones of two roles and a plain clone (no twin: `-`), one of which ran twice in
    /// the sample; each clone is looked up once.
    #[test]
    fn a_samples_runs_are_figured_per_group() {
        use RunStatus::*;
        let runs = [
            run("web1", Changed, 4.0),
            run("web2", Failed, 6.0),
            run("db1", Unchanged, 10.0),
            run("plain", Unchanged, 2.0),
            run("web1", Unchanged, 5.0),
        ];
        let mut asked = Vec::new();
        let sample = of_sample("pp_role", &runs, |clone| {
            asked.push(clone.to_owned());
            Ok(match clone {
                "web1" | "web2" => "web",
                "db1" => "db",
                _ => "-",
            }
            .to_owned())
        })
        .unwrap();
        assert_eq!(asked, ["web1", "web2", "db1", "plain"]);
        assert_eq!(sample.by, "pp_role");
        let values: Vec<&str> = sample.groups.keys().map(String::as_str).collect();
        assert_eq!(values, ["-", "db", "web"]);
        let web = &sample.groups["web"];
        assert_eq!((web.runs, web.failed), (3, 1));
        assert_eq!(web.total_time.count, 3);
        assert_eq!(web.total_time.p50, Some(5.0));
        assert_eq!(web.total_time.max, Some(6.0));
        assert_eq!(web.total_time.p95, None, "3 runs have no p95");
        assert_eq!(web.config_retrieval_time.max, Some(3.0));
        assert_eq!(web.total_time_ms.count(), 3);
        assert_eq!(web.total_time_ms.max_ms(), Some(6000));
        assert_eq!(web.config_retrieval_ms.max_ms(), Some(3000));
        assert_eq!(
            web.resources,
            BTreeMap::from([(104, 1), (105, 1), (106, 1)])
        );
        assert_eq!(web.would_change, 3);
        let plain = &sample.groups["-"];
        assert_eq!((plain.runs, plain.failed), (1, 0));
        assert_eq!(plain.total_time.max, Some(2.0));
        assert_eq!(sample.groups["db"].resources, BTreeMap::from([(110, 1)]));
    }

    #[test]
    fn a_run_without_its_reports_figures_counts_without_them() {
        let mut bare = run("c1", RunStatus::Failed, f64::NAN);
        (
            bare.config_retrieval_time,
            bare.resources,
            bare.would_change,
        ) = (None, None, None);
        let sample = of_sample("node", &[bare], |_| Ok("-".to_owned())).unwrap();
        let group = &sample.groups["-"];
        assert_eq!((group.runs, group.failed), (1, 1));
        assert_eq!(group.total_time.count, 0);
        assert_eq!(group.total_time_ms.count(), 0);
        assert!(group.resources.is_empty());
        assert_eq!(group.would_change, 0);
    }

    #[test]
    fn a_lookup_that_fails_fails_the_sample() {
        let runs = [run("c1", RunStatus::Changed, 1.0)];
        let failed = of_sample("pp_role", &runs, |_| Err(Error::Internal("no".into())));
        assert!(failed.is_err());
    }

    /// 30 runs over three samples: the recording's p95 is the runs', which no sample's
    /// figures give (no sample has 20 runs).
    #[test]
    fn a_recordings_groups_are_its_runs_added_up() {
        let sample_of = |times: &[f64]| {
            let runs: Vec<NewRun> = times
                .iter()
                .map(|t| run("c1", RunStatus::Changed, *t))
                .collect();
            let mut sample = crate::record::sample::Sampler::default().sample(
                &crate::record::sample::fixtures::report(1000, vec![]),
                Default::default(),
                10,
            );
            sample.groups = Some(of_sample("pp_role", &runs, |_| Ok("web".into())).unwrap());
            sample
        };
        let samples = [
            sample_of(&(1..=10).map(f64::from).collect::<Vec<_>>()),
            sample_of(&(11..=20).map(f64::from).collect::<Vec<_>>()),
            sample_of(&(21..=30).map(f64::from).collect::<Vec<_>>()),
        ];
        assert!(samples
            .iter()
            .all(|s| s.groups.as_ref().unwrap().groups["web"]
                .total_time
                .p95
                .is_none()));
        let recording = RecordingGroups::of(&samples).unwrap();
        assert_eq!(recording.by, "pp_role");
        let web = &recording.groups["web"];
        assert_eq!((web.runs, web.failed, web.would_change), (30, 0, 30));
        let times = web.total_time();
        assert_eq!(times.count, 30);
        // Nearest rank of 1..=30 s: p50 the 15th, p95 the 29th, within a bucket above.
        assert!(
            (15.0..=15.0 * 1.04).contains(&times.p50.unwrap()),
            "{times:?}"
        );
        assert!(
            (29.0..=29.0 * 1.04).contains(&times.p95.unwrap()),
            "{times:?}"
        );
        assert_eq!(times.max, Some(30.0));
        assert_eq!(web.resources_median(), Some(115));
        // Fewer than 20 runs: no p95.
        let few = RecordingGroups::of(&samples[..1]).unwrap();
        assert_eq!(few.groups["web"].total_time().p95, None);
        assert_eq!(few.groups["web"].total_time().max, Some(10.0));
        // No sample with groups: no groups.
        let mut plain = samples[0].clone();
        plain.groups = None;
        assert_eq!(RecordingGroups::of(&[plain]), None);
    }

    #[test]
    fn the_largest_groups_come_first() {
        let mut recording = RecordingGroups::default();
        for (value, runs) in [("a", 1), ("b", 5), ("c", 5), ("d", 2)] {
            recording.groups.insert(
                value.to_owned(),
                GroupTotals {
                    runs,
                    ..GroupTotals::default()
                },
            );
        }
        assert_eq!(recording.largest_first(), ["b", "c", "d", "a"]);
    }
}
