//! A clone's load shape: run mode, limits and facts, as `clone create` and
//! `clone configure` take them and `clone list` reads them back.
//!
//! `create` gives the whole shape (an absent flag means its default: daemon mode, 1800 s,
//! no splay, phase 0 of 1 prefix-even, no limits, no facts); `configure` changes only what its flags
//! name. Every value is validated before the lock is taken or anything is written.

use std::path::{Path, PathBuf};

use super::agent_noop;
use super::apply_source;
use super::config::{CloneConfig, Refused};
use super::facts::{self, Facts, Generated};
use super::limits::{self, Limits, LimitsChange};
use super::nspawn_settings::NspawnSettings;
use super::run_mode::{self, RunChange, RunMode, RunSettings};
use crate::protocol::answers::CloneShape;
use crate::protocol::error::Result;
use crate::sys::paths::Layout;

/// The flags as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShapeRequest {
    pub run_mode: Option<RunMode>,
    pub runinterval: Option<u64>,
    pub splay: Option<u64>,
    pub phase_index: Option<u32>,
    pub phase_count: Option<u32>,
    pub phasing: Option<run_mode::Phasing>,
    pub memory_max: Option<String>,
    pub cpu_quota: Option<String>,
    pub tasks_max: Option<String>,
    pub facts_file: Option<PathBuf>,
    pub generated_facts: Option<u32>,
    pub churn_percent: Option<u32>,
    pub apply_source: Option<PathBuf>,
    pub agent_noop: Option<bool>,
}

/// The flags, validated (the facts file read and checked).
#[derive(Debug, Clone, Default)]
pub struct ShapeChange {
    pub run: RunChange,
    pub limits: LimitsChange,
    pub facts: Option<Facts>,
    pub generated_facts: Option<u32>,
    pub churn_percent: Option<u32>,
    /// `--apply-source`, checked (an existing directory with manifests/).
    pub apply_source: Option<PathBuf>,
    pub agent_noop: Option<bool>,
}

impl ShapeRequest {
    /// Checks every flag; `layout` is where host paths (the apply source) are looked up.
    pub fn validate(&self, layout: &Layout) -> Result<ShapeChange> {
        let phase = match (self.phase_index, self.phase_count) {
            (None, None) => None,
            (index, count) => Some((index.unwrap_or(0), count.unwrap_or(1))),
        };
        let run = RunChange {
            mode: self.run_mode,
            runinterval: self.runinterval,
            splay: self.splay,
            phase,
            phasing: self.phasing,
        };
        run.validate()?;
        let limits = LimitsChange::parse(
            self.memory_max.as_deref(),
            self.cpu_quota.as_deref(),
            self.tasks_max.as_deref(),
        )?;
        Generated::validate(self.generated_facts, self.churn_percent)?;
        let facts = self.facts_file.as_deref().map(facts::load).transpose()?;
        let apply_source = self
            .apply_source
            .as_deref()
            .map(|path| apply_source::validate(layout, path))
            .transpose()?;
        if let (Some(source), Some(mode)) = (&apply_source, self.run_mode) {
            if mode != RunMode::Apply {
                return Err(apply_source_refused(source, Some(mode)));
            }
        }
        Ok(ShapeChange {
            run,
            limits,
            facts,
            generated_facts: self.generated_facts,
            churn_percent: self.churn_percent,
            apply_source,
            agent_noop: self.agent_noop,
        })
    }
}

/// `--apply-source` for a clone that is not (and is not being put) in apply mode.
pub fn apply_source_refused(source: &Path, mode: Option<RunMode>) -> crate::protocol::error::Error {
    crate::protocol::error::Error::InvalidArgument {
        field: "apply-source",
        value: source.display().to_string(),
        reason: format!(
            "only for run mode apply (add --run-mode apply); the run mode is {}",
            mode.map_or("unset", RunMode::name)
        ),
    }
}

/// What a clone's files say now (its upper layer as a host path, its puppet.conf text).
pub struct Current {
    pub run: Option<RunSettings>,
    pub limits: Limits,
    pub generated: Option<Generated>,
    pub agent_noop: bool,
}

impl Current {
    pub fn read(layout: &Layout, clone: &str, source: &CloneConfig) -> Result<Self> {
        Ok(Current {
            run: run_mode::read_back(source)?.settings(),
            limits: limits::read(layout, clone)?,
            generated: facts::read_back(source)?.generated,
            agent_noop: source
                .puppet_conf()?
                .as_deref()
                .is_some_and(agent_noop::read),
        })
    }

    /// For `create`: every unset value at its default.
    pub fn defaults() -> Self {
        Current {
            run: Some(RunSettings::default()),
            limits: Limits::default(),
            generated: None,
            agent_noop: false,
        }
    }
}

/// The resolved changes for one clone: `None` leaves that part alone.
pub struct Plan {
    pub run: Option<RunSettings>,
    pub limits: Option<Limits>,
    pub facts: Option<Facts>,
    pub generated: Option<Generated>,
    /// The apply-source drop-in: `Some(Some(dir))` binds `dir`, `Some(None)` removes the
    /// drop-in, `None` leaves it.
    pub apply_source: Option<Option<PathBuf>>,
    /// The agent in noop or not; `None` leaves puppet.conf's setting.
    pub agent_noop: Option<bool>,
}

impl ShapeChange {
    /// `full` (create): every part is set, unset flags taking [`Current::defaults`].
    /// Otherwise (configure) only the parts whose flags were given.
    ///
    /// The apply source goes with apply mode only: given in another mode it is refused,
    /// and it is dropped when a clone leaves apply mode.
    pub fn plan(&self, current: Current, full: bool) -> Result<Plan> {
        let run_current = current.run.unwrap_or_default();
        let run = (full || !self.run.is_empty()).then(|| self.run.applied_to(run_current));
        let mode = run.or(current.run).map(|r| r.mode);
        let apply_source = match (&self.apply_source, mode) {
            (Some(source), Some(RunMode::Apply)) => Some(Some(source.clone())),
            (Some(source), mode) => return Err(apply_source_refused(source, mode)),
            (None, Some(RunMode::Apply)) => None,
            (None, _) if run.is_some() => Some(None),
            (None, _) => None,
        };
        let generated_given = self.generated_facts.is_some() || self.churn_percent.is_some();
        let limits_given = self.limits != LimitsChange::default();
        let current_generated = current.generated.unwrap_or_default();
        Ok(Plan {
            run,
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
            apply_source,
            agent_noop: self.agent_noop.or(full.then_some(current.agent_noop)),
        })
    }
}

impl Plan {
    /// puppet.conf as the plan wants it.
    pub fn puppet_conf(&self, conf: String) -> String {
        let conf = match &self.run {
            Some(run) => run_mode::puppet_conf_with(&conf, run),
            None => conf,
        };
        match self.agent_noop {
            Some(noop) => agent_noop::puppet_conf_with(&conf, noop),
            None => conf,
        }
    }

    /// The run units and facts, in what the clone is given. Returns whether anything
    /// changed.
    pub fn apply_to_config(&self, config: &CloneConfig, confdir: &str) -> Result<bool> {
        let mut changed = false;
        if let Some(run) = &self.run {
            changed |= run_mode::apply(config, run, run_mode::puppet_bin(confdir))?;
        }
        if let Some(facts) = &self.facts {
            changed |= facts::apply_facts(config, facts)?;
        }
        if let Some(generated) = &self.generated {
            changed |= facts::apply_generated(config, generated)?;
        }
        Ok(changed)
    }

    /// The clone's `.nspawn` settings with this plan's apply source (the current one
    /// when the plan leaves it).
    pub fn nspawn_settings(&self, current: NspawnSettings) -> NspawnSettings {
        match &self.apply_source {
            Some(source) => NspawnSettings {
                apply_source: source.clone(),
                ..current
            },
            None => current,
        }
    }

    /// The limits, in a drop-in for the clone's service on the host. Returns whether it
    /// changed (a daemon-reload is due).
    pub fn apply_on_host(&self, layout: &Layout, clone: &str) -> Result<bool> {
        match &self.limits {
            Some(limits) => limits::apply(layout, clone, limits),
            None => Ok(false),
        }
    }
}

/// The shape `clone list` reports, read from the files alone, and what of them was
/// refused (see [`Refused`]).
pub fn describe(
    layout: &Layout,
    clone: &str,
    source: &CloneConfig,
) -> Result<(CloneShape, Vec<Refused>)> {
    let (run, mut refused) = run_mode::checked(run_mode::read_back(source)?);
    let limits = limits::read(layout, clone)?;
    let facts::ReadBack {
        facts,
        generated,
        refused: facts_refused,
    } = facts::read_back(source)?;
    refused.extend(facts_refused);
    let shape = CloneShape {
        run_mode: run.run_mode,
        runinterval: run.runinterval,
        splay: run.splay,
        phase_index: run.phase_index,
        phase_count: run.phase_count,
        phasing: run.phasing,
        memory_max: limits.memory_max,
        cpu_quota: limits.cpu_quota,
        tasks_max: limits.tasks_max,
        facts,
        generated_facts: generated.map_or(0, |g| g.count),
        churn_percent: generated.map(|g| g.churn_percent),
        apply_source: super::nspawn_settings::read_apply_source(source)?
            .map(|p| p.display().to_string()),
        agent_noop: source
            .puppet_conf()?
            .as_deref()
            .is_some_and(agent_noop::read),
        twin_of: super::twin::read_back(source)?.map(|record| record.node),
    };
    Ok((shape, refused))
}
