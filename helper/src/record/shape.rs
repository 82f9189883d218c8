//! What the recorded fleet was: how its clones run (mode, interval, phasing, noop) and
//! which versions of the agent, the server and PuppetDB it ran against, for the page's
//! header. The shape is read from `clone list` (the clones' config on the host) when
//! [`ShapeSchedule`] says, the versions from the report every sample is made of.

use std::collections::BTreeMap;

use crate::protocol::answers::{CloneInfo, Report};
use crate::protocol::record::{FleetShape, Versions};

/// At most this many seconds between two samples with the shape while the clones stay the
/// same ones: a run mode or an interval changed in place shows within it.
pub const SHAPE_EVERY_SECONDS: u64 = 300;

/// Which samples carry the shape: the first, the first after the clones changed (the
/// fleet grew or shrank: their names are not those of the last shape), and one at least
/// every [`SHAPE_EVERY_SECONDS`]. Reading it means every clone's config, which costs
/// more than the rest of a sample.
#[derive(Debug, Default)]
pub struct ShapeSchedule {
    last: Option<(u64, Vec<String>)>,
}

impl ShapeSchedule {
    /// Whether the sample at `now` of these clones carries the shape; if so, it is
    /// counted as taken.
    pub fn take_if_due(&mut self, now: u64, clones: Vec<String>) -> bool {
        let due = match &self.last {
            None => true,
            Some((at, names)) => *names != clones || now >= at + SHAPE_EVERY_SECONDS,
        };
        if due {
            self.last = Some((now, clones));
        }
        due
    }
}

pub fn of_clones(clones: &[CloneInfo]) -> FleetShape {
    let mut shape = FleetShape {
        clones: clones.len(),
        ..FleetShape::default()
    };
    for clone in clones {
        let mode = clone.shape.run_mode.map_or("none", |m| m.name());
        *shape.run_modes.entry(mode.to_owned()).or_default() += 1;
        if let Some(interval) = clone.shape.runinterval {
            *shape.runintervals.entry(interval).or_default() += 1;
        }
        shape.phased += usize::from(clone.shape.phase_count.is_some_and(|n| n > 1));
        shape.agent_noop += usize::from(clone.shape.agent_noop);
    }
    shape
}

pub fn of_report(report: &Report) -> Versions {
    let mut agent = BTreeMap::new();
    for clone in &report.clones {
        if let Some(version) = &clone.run.puppet_version {
            *agent.entry(version.clone()).or_default() += 1;
        }
    }
    Versions {
        agent,
        server: report.server.as_ref().and_then(|s| s.version.clone()),
        puppetdb: report.puppetdb.as_ref().and_then(|p| p.version.clone()),
    }
}

/// `{a: 2, b: 1}` as "a 2, b 1", most first; "-" for none.
pub fn counted<K: std::fmt::Display>(counts: &BTreeMap<K, usize>) -> String {
    let mut entries: Vec<(&K, &usize)> = counts.iter().collect();
    entries.sort_by(|a, b| b.1.cmp(a.1));
    if entries.is_empty() {
        return "-".to_owned();
    }
    entries
        .iter()
        .map(|(k, n)| format!("{k} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_comes_first_then_when_the_clones_change_or_the_time_is_up() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut schedule = ShapeSchedule::default();
        assert!(schedule.take_if_due(1000, names(&["clone1"])));
        assert!(!schedule.take_if_due(1010, names(&["clone1"])));
        assert!(schedule.take_if_due(1020, names(&["clone1", "clone2"])));
        assert!(!schedule.take_if_due(1030, names(&["clone1", "clone2"])));
        assert!(schedule.take_if_due(1040, names(&["clone2"])));
        assert!(!schedule.take_if_due(1040 + SHAPE_EVERY_SECONDS - 1, names(&["clone2"])));
        assert!(schedule.take_if_due(1040 + SHAPE_EVERY_SECONDS, names(&["clone2"])));
    }
    use crate::clone::run_mode::RunMode;
    use crate::protocol::answers::{CloneShape, CloneState};

    fn clone(
        name: &str,
        mode: Option<RunMode>,
        interval: Option<u64>,
        count: u32,
        noop: bool,
    ) -> CloneInfo {
        CloneInfo {
            name: name.to_owned(),
            base: "debian-13".to_owned(),
            server: Some("puppet".to_owned()),
            server_port: None,
            certname: Some(format!("{name}.load1")),
            state: CloneState::Running,
            unit: format!("puppet-clone-army@{name}.service"),
            mounted: true,
            problems: Vec::new(),
            shape: CloneShape {
                run_mode: mode,
                runinterval: interval,
                phase_count: Some(count),
                agent_noop: noop,
                ..CloneShape::default()
            },
        }
    }

    #[test]
    fn the_fleet_is_counted_by_each_setting() {
        let shape = of_clones(&[
            clone("c1", Some(RunMode::Timer), Some(1800), 3, true),
            clone("c2", Some(RunMode::Timer), Some(1800), 3, true),
            clone("c3", Some(RunMode::Manual), None, 1, false),
            clone("c4", None, None, 1, false),
        ]);
        assert_eq!(shape.clones, 4);
        assert_eq!(
            shape.run_modes,
            BTreeMap::from([
                ("timer".to_owned(), 2),
                ("manual".to_owned(), 1),
                ("none".to_owned(), 1)
            ])
        );
        assert_eq!(shape.runintervals, BTreeMap::from([(1800, 2)]));
        assert_eq!((shape.phased, shape.agent_noop), (2, 2));
        assert_eq!(counted(&shape.run_modes), "timer (2), manual (1), none (1)");
        assert_eq!(counted(&BTreeMap::<u64, usize>::new()), "-");
    }
}
