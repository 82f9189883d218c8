//! A step's run times as the baseline keeps them, so that the baselines of several load
//! hosts that stepped together merge into percentiles of all their runs, not an average
//! of each host's percentiles (which is no percentile at all).

use crate::protocol::ramp::RunTimes;
use crate::record::sample::NewRun;

/// The most run times a step keeps. Beyond it, an even sample of them in the order they
/// finished is kept (every k-th), and `complete` says the merge is taken over that
/// sample: a step of 20 000 runs is far beyond any fleet one host runs in a window.
pub const MAX_RUN_TIMES: usize = 20_000;

impl RunTimes {
    /// The times of `runs` and `first_runs` that have them (finite ones), bounded.
    pub fn of(runs: &[NewRun], first_runs: &[NewRun]) -> Self {
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
        let mut kept: Vec<(f64, Option<f64>)> = runs
            .iter()
            .filter_map(|r| Some((finite(r.total_time)?, finite(r.config_retrieval_time))))
            .collect();
        let mut first: Vec<f64> = first_runs
            .iter()
            .filter_map(|r| finite(r.total_time))
            .collect();
        let complete = kept.len() + first.len() <= MAX_RUN_TIMES;
        if !complete {
            let room_first = first.len().min(MAX_RUN_TIMES / 10);
            first = every_kth(first, room_first);
            kept = every_kth(kept, MAX_RUN_TIMES - room_first);
        }
        RunTimes {
            complete,
            runs: kept,
            first_runs: first,
        }
    }

    /// Each run's total time.
    pub fn totals(&self) -> impl Iterator<Item = f64> + '_ {
        self.runs.iter().map(|r| r.0)
    }

    /// Each run's catalog retrieval time, where it had one.
    pub fn retrievals(&self) -> impl Iterator<Item = f64> + '_ {
        self.runs.iter().filter_map(|r| r.1)
    }

    /// Each run's time outside catalog retrieval (see [`agent_time`]).
    pub fn agent_times(&self) -> impl Iterator<Item = f64> + '_ {
        self.runs.iter().filter_map(|r| agent_time(r.0, r.1))
    }
}

/// A run's time outside its catalog retrieval: the agent's own work on the load host
/// (facts, applying the catalog) and its other requests. When the load host is starved
/// this grows while the retrieval, which is mostly the server's, does not.
pub fn agent_time(total: f64, retrieval: Option<f64>) -> Option<f64> {
    retrieval.map(|r| (total - r).max(0.0))
}

/// At most `keep` of `values`, evenly spaced through them, in their order.
fn every_kth<T: Copy>(values: Vec<T>, keep: usize) -> Vec<T> {
    if values.len() <= keep {
        return values;
    }
    if keep == 0 {
        return Vec::new();
    }
    let n = values.len();
    (0..keep).map(|i| values[i * n / keep]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::answers::RunStatus;

    fn run(total: f64, retrieval: Option<f64>) -> NewRun {
        NewRun {
            clone: "clone1".to_owned(),
            status: RunStatus::Unchanged,
            total_time: Some(total),
            config_retrieval_time: retrieval,
            failure_kinds: Vec::new(),
            resources: None,
            would_change: None,
        }
    }

    #[test]
    fn the_times_kept_are_bounded_and_say_when_they_are_a_sample() {
        let runs: Vec<NewRun> = (0..MAX_RUN_TIMES + 5)
            .map(|i| run(i as f64, None))
            .collect();
        let kept = RunTimes::of(&runs, &[run(35.0, None)]);
        assert!(!kept.complete);
        assert!(kept.runs.len() + kept.first_runs.len() <= MAX_RUN_TIMES);
        assert_eq!(kept.first_runs, [35.0]);
        // The sample spans the runs, from the first to near the last.
        assert_eq!(kept.runs[0].0, 0.0);
        assert!(kept.runs.last().unwrap().0 > (MAX_RUN_TIMES - 5) as f64);

        let few = RunTimes::of(&[run(4.0, Some(1.5)), run(f64::NAN, None)], &[]);
        assert!(few.complete);
        assert_eq!(few.runs, [(4.0, Some(1.5))]);
        assert_eq!(few.agent_times().collect::<Vec<_>>(), [2.5]);
    }
}
