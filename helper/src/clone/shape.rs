//! A clone's load shape: run mode, limits and facts, as `clone create` and
//! `clone configure` take them and `clone list` reads them back.
//!
//! `create` gives the whole shape (an absent flag means its default: daemon mode, 1800 s,
//! no splay, phase 0 of 1, no limits, no facts); `configure` changes only what its flags
//! name. Every value is validated before the lock is taken or anything is written.

use std::path::{Path, PathBuf};

use super::facts::{self, Facts, Generated};
use super::limits::{self, Limits, LimitsChange};
use super::run_mode::{self, RunChange, RunMode, RunSettings};
use super::CloneView;
use crate::error::Result;
use crate::output::CloneShape;
use crate::paths::Layout;

/// The flags as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShapeRequest {
    pub run_mode: Option<RunMode>,
    pub runinterval: Option<u64>,
    pub splay: Option<u64>,
    pub phase_index: Option<u32>,
    pub phase_count: Option<u32>,
    pub memory_max: Option<String>,
    pub cpu_quota: Option<String>,
    pub tasks_max: Option<String>,
    pub facts_file: Option<PathBuf>,
    pub generated_facts: Option<u32>,
    pub churn_percent: Option<u32>,
}

/// The flags, validated (the facts file read and checked).
#[derive(Debug, Clone, Default)]
pub struct ShapeChange {
    pub run: RunChange,
    pub limits: LimitsChange,
    pub facts: Option<Facts>,
    pub generated_facts: Option<u32>,
    pub churn_percent: Option<u32>,
}

impl ShapeRequest {
    pub fn validate(&self) -> Result<ShapeChange> {
        let phase = match (self.phase_index, self.phase_count) {
            (None, None) => None,
            (index, count) => Some((index.unwrap_or(0), count.unwrap_or(1))),
        };
        let run = RunChange {
            mode: self.run_mode,
            runinterval: self.runinterval,
            splay: self.splay,
            phase,
        };
        run.validate()?;
        let limits = LimitsChange::parse(
            self.memory_max.as_deref(),
            self.cpu_quota.as_deref(),
            self.tasks_max.as_deref(),
        )?;
        Generated::validate(self.generated_facts, self.churn_percent)?;
        let facts = self.facts_file.as_deref().map(facts::load).transpose()?;
        Ok(ShapeChange {
            run,
            limits,
            facts,
            generated_facts: self.generated_facts,
            churn_percent: self.churn_percent,
        })
    }
}

/// What a clone's files say now (its upper layer as a host path, its puppet.conf text).
pub struct Current {
    pub run: Option<RunSettings>,
    pub limits: Limits,
    pub generated: Option<Generated>,
}

impl Current {
    pub fn read(layout: &Layout, clone: &str, upper: &Path, conf: Option<&str>) -> Result<Self> {
        Ok(Current {
            run: run_mode::read_back(upper, conf)?.settings(),
            limits: limits::read(layout, clone)?,
            generated: facts::read_back(upper)?.1,
        })
    }

    /// For `create`: every unset value at its default.
    pub fn defaults() -> Self {
        Current {
            run: Some(RunSettings::default()),
            limits: Limits::default(),
            generated: None,
        }
    }
}

/// The resolved changes for one clone: `None` leaves that part alone.
pub struct Plan {
    pub run: Option<RunSettings>,
    pub limits: Option<Limits>,
    pub facts: Option<Facts>,
    pub generated: Option<Generated>,
}

impl ShapeChange {
    /// `full` (create): every part is set, unset flags taking [`Current::defaults`].
    /// Otherwise (configure) only the parts whose flags were given.
    pub fn plan(&self, current: Current, full: bool) -> Plan {
        let run_current = current.run.unwrap_or_default();
        let generated_given = self.generated_facts.is_some() || self.churn_percent.is_some();
        let limits_given = self.limits != LimitsChange::default();
        let current_generated = current.generated.unwrap_or_default();
        Plan {
            run: (full || !self.run.is_empty()).then(|| self.run.applied_to(run_current)),
            limits: (full || limits_given).then(|| self.limits.applied_to(current.limits)),
            facts: match (&self.facts, full) {
                (Some(facts), _) => Some(facts.clone()),
                (None, true) => Some(Facts::new()),
                (None, false) => None,
            },
            generated: (full || generated_given).then(|| Generated {
                count: self.generated_facts.unwrap_or(current_generated.count),
                churn_percent: self
                    .churn_percent
                    .unwrap_or(current_generated.churn_percent),
            }),
        }
    }
}

impl Plan {
    /// puppet.conf as the plan wants it.
    pub fn puppet_conf(&self, conf: String) -> String {
        match &self.run {
            Some(run) => run_mode::puppet_conf_with(&conf, run),
            None => conf,
        }
    }

    /// Writes the clone's own files (units, facts). Returns whether anything changed.
    pub fn apply_in_clone(&self, view: &CloneView, confdir: &str) -> Result<bool> {
        let mut changed = false;
        if let Some(run) = &self.run {
            changed |= run_mode::apply(view, run, run_mode::puppet_bin(confdir))?;
        }
        if let Some(facts) = &self.facts {
            changed |= facts::apply_facts(view, facts)?;
        }
        if let Some(generated) = &self.generated {
            changed |= facts::apply_generated(view, generated)?;
        }
        Ok(changed)
    }

    /// Writes the host's limits drop-in. Returns whether it changed (daemon-reload due).
    pub fn apply_on_host(&self, layout: &Layout, clone: &str) -> Result<bool> {
        match &self.limits {
            Some(limits) => limits::apply(layout, clone, limits),
            None => Ok(false),
        }
    }
}

/// The shape `clone list` reports, read from the files alone.
pub fn describe(
    layout: &Layout,
    clone: &str,
    upper: &Path,
    conf: Option<&str>,
) -> Result<CloneShape> {
    let run = run_mode::read_back(upper, conf)?;
    let limits = limits::read(layout, clone)?;
    let (facts, generated) = facts::read_back(upper)?;
    Ok(CloneShape {
        run_mode: run.run_mode,
        runinterval: run.runinterval,
        splay: run.splay,
        phase_index: run.phase_index,
        phase_count: run.phase_count,
        memory_max: limits.memory_max,
        cpu_quota: limits.cpu_quota,
        tasks_max: limits.tasks_max,
        facts,
        generated_facts: generated.map_or(0, |g| g.count),
        churn_percent: generated.map(|g| g.churn_percent),
    })
}
