//! Run modes: when the agent inside a clone runs, as unit files in the clone's config
//! dir (`systemd/`, which the clone sees at [`CLONE_UNITS_DIR`], ahead of its own
//! `/etc/systemd/system`; see [`super::config`]).
//!
//! - `daemon`: the distribution's `puppet.service` with `runinterval` (and
//!   `splay`/`splaylimit`) in puppet.conf's `[agent]`. Its first start is delayed by the
//!   clone's phase offset with a one-shot timer, see [`phase_timer`].
//! - `timer`: `puppet.service` masked (`puppet.service` → `/dev/null`) and
//!   `clone-army-agent.timer` starting the one-shot `clone-army-agent.service` at the
//!   offset and every interval after, so an idle clone holds no Ruby process.
//! - `manual`: `puppet.service` masked, no timer.
//! - `apply`: masterless. As `timer`, but `clone-army-agent.service` runs
//!   `puppet apply` on the apply source the host binds into the clone at
//!   [`APPLY_DIR`](super::config::APPLY_DIR) (see [`super::apply_source`]), so the
//!   clones put load on themselves (and on PuppetDB, where the source's puppet.conf
//!   settings send them there) without a compile server. The timer carries
//!   `X-CloneArmyRunMode=apply`, which is how the mode is read back.
//!
//! Switching modes removes the other modes' files and masks their timers (an older
//! clone-army wrote these units into the clone's own `/etc/systemd/system`, where they
//! stay; a mask in the unit directory that comes first keeps them from running). `clone
//! list` reads the mode back from these files; nothing else records it.
//!
//! Phasing: clone `i` of `N` starts its runs at an offset into each interval `T`
//! (counted from the clone's start), so the server sees an even stream of runs instead
//! of a herd at boot. [`Phasing`] is the rule that turns `i` into the offset, here and
//! nowhere else: `prefix-even` spreads every prefix of the fleet (clones `0..n`, for any
//! `n`) evenly, which is what a fleet started or grown step by step needs; `fleet-even`
//! (`i·T/N`) spreads only the whole fleet evenly, and is what a timer that names no rule
//! was written with.

use std::path::Path;

use clap::ValueEnum;

use super::config::{CloneConfig, Refused, CLONE_UNITS_DIR, UNITS_DIR};
use crate::clone::puppet_conf;
pub use crate::protocol::answers::{Phasing, RunMode};
use crate::protocol::error::{Error, Result};
use crate::systemd::units::{header, is_ours};

impl RunMode {
    pub fn name(self) -> &'static str {
        match self {
            RunMode::Daemon => "daemon",
            RunMode::Timer => "timer",
            RunMode::Manual => "manual",
            RunMode::Apply => "apply",
        }
    }
}

pub const DEFAULT_RUNINTERVAL: u64 = 1800;
pub const MIN_RUNINTERVAL: u64 = 60;
/// One week: longer intervals are not a load test any more.
pub const MAX_RUNINTERVAL: u64 = 7 * 86_400;
/// Clones per phase set; far beyond what one host runs.
pub const MAX_PHASE_COUNT: u32 = 100_000;
/// What `clone create` phases by when `--phasing` is not given.
pub const DEFAULT_PHASING: Phasing = Phasing::PrefixEven;
/// What a timer that names no rule (written before rules had names) was phased by.
pub const UNNAMED_PHASING: Phasing = Phasing::FleetEven;

impl Phasing {
    pub fn name(self) -> &'static str {
        match self {
            Phasing::PrefixEven => "prefix-even",
            Phasing::FleetEven => "fleet-even",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Phasing::value_variants()
            .iter()
            .copied()
            .find(|p| p.name() == name)
    }

    /// Seconds into each interval of `runinterval` seconds at which phase `index` of
    /// `count` runs, rounded down.
    ///
    /// `prefix-even` is `runinterval · vdc(index)`, where vdc is the base-2 van der
    /// Corput sequence: `index`'s binary digits mirrored behind the point (0, 1/2, 1/4,
    /// 3/4, 1/8, 5/8, ...). Each index halves one of the largest gaps the earlier ones
    /// left, so the first `n` offsets, for every `n`, leave gaps of `T/2^k` and
    /// `T/2^(k-1)` only (`2^(k-1) < n ≤ 2^k`): never more than twice the even gap `T/n`,
    /// never less than half of it. `count` plays no part, so a fleet that grows or
    /// shrinks keeps every clone's offset. `fleet-even` is `index · runinterval / count`.
    pub fn offset(self, runinterval: u64, index: u32, count: u32) -> u64 {
        // In u128: a run interval read back from a clone's units is any u64, and the
        // offset (below the interval) always fits back.
        let (numerator, denominator) = match self {
            Phasing::PrefixEven => radical_inverse(index),
            Phasing::FleetEven => (u64::from(index), u64::from(count.max(1))),
        };
        let offset = u128::from(runinterval) * u128::from(numerator) / u128::from(denominator);
        u64::try_from(offset).unwrap_or(runinterval)
    }
}

/// `index`'s base-2 radical inverse as the fraction `numerator / denominator`, the
/// denominator the power of two just above `index` (1 for 0): 6 = 110b → 0.011b = 3/8.
fn radical_inverse(index: u32) -> (u64, u64) {
    let digits = u32::BITS - index.leading_zeros();
    let mirrored = if digits == 0 {
        0
    } else {
        index.reverse_bits() >> (u32::BITS - digits)
    };
    (u64::from(mirrored), 1u64 << digits)
}

// The run units, by their names in a unit directory.
/// The agent's `puppet.service`, as the distribution ships it (at [`PUPPET_UNIT_FILE`]).
pub const PUPPET_SERVICE: &str = "puppet.service";
pub const PUPPET_SERVICE_WANTS: &str = "multi-user.target.wants/puppet.service";
pub const PUPPET_UNIT_FILE: &str = "/lib/systemd/system/puppet.service";
pub const AGENT_TIMER: &str = "clone-army-agent.timer";
pub const AGENT_SERVICE: &str = "clone-army-agent.service";
pub const AGENT_TIMER_LINK: &str = "timers.target.wants/clone-army-agent.timer";
pub const PHASE_TIMER: &str = "clone-army-agent-phase.timer";
pub const PHASE_SERVICE: &str = "clone-army-agent-phase.service";
pub const PHASE_TIMER_LINK: &str = "timers.target.wants/clone-army-agent-phase.timer";
pub const PHASE_DROPIN: &str = "puppet.service.d/50-clone-army-phase.conf";
/// What a mask points at.
const MASKED: &str = "/dev/null";
/// Exists (on the clone's /run, so only until its next boot) once the phase offset elapsed.
pub const PHASE_FLAG: &str = "/run/clone-army-agent-phase-elapsed";

/// A clone's complete run settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSettings {
    pub mode: RunMode,
    pub runinterval: u64,
    pub splay: u64,
    pub phase_index: u32,
    pub phase_count: u32,
    pub phasing: Phasing,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            mode: RunMode::Daemon,
            runinterval: DEFAULT_RUNINTERVAL,
            splay: 0,
            phase_index: 0,
            phase_count: 1,
            phasing: DEFAULT_PHASING,
        }
    }
}

impl RunSettings {
    /// Seconds into each interval at which this clone runs, by its [`Phasing`].
    pub fn offset(&self) -> u64 {
        self.phasing
            .offset(self.runinterval, self.phase_index, self.phase_count)
    }
}

/// What the command line asks to change; `None` keeps the current (or default) value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunChange {
    pub mode: Option<RunMode>,
    pub runinterval: Option<u64>,
    pub splay: Option<u64>,
    /// Index and count come together (clap requires both).
    pub phase: Option<(u32, u32)>,
    pub phasing: Option<Phasing>,
}

impl RunChange {
    pub fn is_empty(&self) -> bool {
        *self == RunChange::default()
    }

    /// Refuses values out of range before anything is touched.
    pub fn validate(&self) -> Result<()> {
        if let Some(t) = self.runinterval {
            if !(MIN_RUNINTERVAL..=MAX_RUNINTERVAL).contains(&t) {
                return Err(Error::InvalidArgument {
                    field: "runinterval",
                    value: t.to_string(),
                    reason: format!("allowed: {MIN_RUNINTERVAL} to {MAX_RUNINTERVAL} seconds"),
                });
            }
        }
        if let Some(s) = self.splay {
            if s > MAX_RUNINTERVAL {
                return Err(Error::InvalidArgument {
                    field: "splay",
                    value: s.to_string(),
                    reason: format!("allowed: 0 to {MAX_RUNINTERVAL} seconds"),
                });
            }
        }
        if let Some((index, count)) = self.phase {
            if count == 0 || count > MAX_PHASE_COUNT {
                return Err(Error::InvalidArgument {
                    field: "phase-count",
                    value: count.to_string(),
                    reason: format!("allowed: 1 to {MAX_PHASE_COUNT}"),
                });
            }
            if index >= count {
                return Err(Error::InvalidArgument {
                    field: "phase-index",
                    value: index.to_string(),
                    reason: format!("allowed: 0 to {} (below --phase-count {count})", count - 1),
                });
            }
        }
        Ok(())
    }

    pub fn applied_to(&self, current: RunSettings) -> RunSettings {
        let (phase_index, phase_count) = self
            .phase
            .unwrap_or((current.phase_index, current.phase_count));
        RunSettings {
            mode: self.mode.unwrap_or(current.mode),
            runinterval: self.runinterval.unwrap_or(current.runinterval),
            splay: self.splay.unwrap_or(current.splay),
            phase_index,
            phase_count,
            phasing: self.phasing.unwrap_or(current.phasing),
        }
    }
}

/// The run settings as read back from a clone's upper layer (all `None` when the clone
/// has none of clone-army's run files: made before run modes existed, or by hand).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunReadBack {
    pub run_mode: Option<RunMode>,
    pub runinterval: Option<u64>,
    pub splay: Option<u64>,
    pub phase_index: Option<u32>,
    pub phase_count: Option<u32>,
    pub phasing: Option<Phasing>,
}

impl RunReadBack {
    pub fn settings(&self) -> Option<RunSettings> {
        let defaults = RunSettings::default();
        Some(RunSettings {
            mode: self.run_mode?,
            runinterval: self.runinterval.unwrap_or(defaults.runinterval),
            splay: self.splay.unwrap_or(defaults.splay),
            phase_index: self.phase_index.unwrap_or(defaults.phase_index),
            phase_count: self.phase_count.unwrap_or(defaults.phase_count),
            phasing: self.phasing.unwrap_or(defaults.phasing),
        })
    }
}

/// The most runs of `n` evenly phased clones the tests let any `window` seconds hold:
/// twice the even share `n · window / interval`, the share rounded up to whole runs and
/// taken as at least one run. A window holds runs whole, so up to one run per window
/// (n ≤ 150 at 1800 s, n ≤ 10 at 120 s, with 12 s windows) the even share is one run and
/// the bound two: two clones may run within `window` seconds of each other, never three.
/// Rounding the share up keeps the bound at twice a number a window can hold (at 120 s,
/// 25 clones are 2.5 runs a window: the bound is 6).
#[cfg(test)]
pub(crate) fn even_share_bound(n: u64, interval: u64, window: u64) -> usize {
    2 * (n * window).div_ceil(interval).max(1) as usize
}

/// The agent binary in a base whose puppet.conf lives in `confdir`: Puppet's AIO
/// packages keep both under /opt and /etc/puppetlabs, Debian's and Ubuntu's in /usr/bin.
pub fn puppet_bin(confdir: &str) -> &'static str {
    if confdir.starts_with("/etc/puppetlabs") {
        "/opt/puppetlabs/bin/puppet"
    } else {
        "/usr/bin/puppet"
    }
}

/// puppet.conf with `[agent]` as the mode wants it: the daemon's `runinterval` and
/// `splay`/`splaylimit`; nothing of ours in the other modes (other keys are kept).
pub fn puppet_conf_with(content: &str, settings: &RunSettings) -> String {
    let runinterval = settings.runinterval.to_string();
    let splaylimit = settings.splay.to_string();
    let daemon = settings.mode == RunMode::Daemon;
    let splay = daemon && settings.splay > 0;
    puppet_conf::set_in_section(
        content,
        "agent",
        &[
            ("runinterval", daemon.then_some(runinterval.as_str())),
            ("splay", splay.then_some("true")),
            ("splaylimit", splay.then_some(splaylimit.as_str())),
        ],
    )
}

/// Writes the mode's unit files and links into the clone's config and removes the other
/// modes'. puppet.conf is [`puppet_conf_with`]'s business. Returns whether anything
/// changed.
pub fn apply(config: &CloneConfig, settings: &RunSettings, puppet_bin: &str) -> Result<bool> {
    let unit = |name: &str| format!("{UNITS_DIR}/{name}");
    let in_clone = |name: &str| format!("{CLONE_UNITS_DIR}/{name}");
    let mut changed = false;
    let timer_files = [AGENT_TIMER_LINK, AGENT_SERVICE];
    let phase_files = [PHASE_TIMER_LINK, PHASE_SERVICE, PHASE_DROPIN];
    match settings.mode {
        RunMode::Daemon => {
            // Named here, so that a mask the clone's root left in its own
            // /etc/systemd/system cannot hold the daemon back.
            changed |= config.link(&unit(PUPPET_SERVICE), PUPPET_UNIT_FILE)?;
            changed |= config.link(&unit(PUPPET_SERVICE_WANTS), PUPPET_UNIT_FILE)?;
            changed |= config.write(&unit(PHASE_SERVICE), &phase_service(), 0o644)?;
            changed |= config.write(&unit(PHASE_TIMER), &phase_timer(settings), 0o644)?;
            changed |= config.write(&unit(PHASE_DROPIN), &phase_dropin(), 0o644)?;
            changed |= config.link(&unit(PHASE_TIMER_LINK), &in_clone(PHASE_TIMER))?;
            for name in timer_files {
                changed |= config.remove_file(&unit(name))?;
            }
            changed |= config.link(&unit(AGENT_TIMER), MASKED)?;
        }
        RunMode::Timer | RunMode::Apply => {
            changed |= config.link(&unit(PUPPET_SERVICE), MASKED)?;
            changed |= config.remove_file(&unit(PUPPET_SERVICE_WANTS))?;
            for name in phase_files {
                changed |= config.remove_file(&unit(name))?;
            }
            changed |= config.link(&unit(PHASE_TIMER), MASKED)?;
            let service = if settings.mode == RunMode::Apply {
                apply_service(puppet_bin, settings)
            } else {
                agent_service(puppet_bin, settings)
            };
            changed |= config.write(&unit(AGENT_SERVICE), &service, 0o644)?;
            changed |= config.write(&unit(AGENT_TIMER), &agent_timer(settings), 0o644)?;
            changed |= config.link(&unit(AGENT_TIMER_LINK), &in_clone(AGENT_TIMER))?;
        }
        RunMode::Manual => {
            changed |= config.link(&unit(PUPPET_SERVICE), MASKED)?;
            changed |= config.remove_file(&unit(PUPPET_SERVICE_WANTS))?;
            for name in phase_files.into_iter().chain(timer_files) {
                changed |= config.remove_file(&unit(name))?;
            }
            changed |= config.link(&unit(PHASE_TIMER), MASKED)?;
            changed |= config.link(&unit(AGENT_TIMER), MASKED)?;
        }
    }
    Ok(changed)
}

/// Timer mode: one agent run, then the process is gone. A run still going after one
/// interval is stopped (`RuntimeMaxSec=`), so a hung run cannot hold back all later ones.
///
/// `Type=exec`, not `Type=oneshot`: a oneshot service is `activating` for the whole run,
/// with its start job pending, and PID 1 sends a job-progress signal on the bus every
/// second for every pending job; at 500 clones that swamped machined. An exec service is
/// `active` once puppet is running and has no job left. The timer still never overlaps
/// runs: it does not start a unit that is already active. And its `OnUnitActiveSec=`
/// counts from the start of a run, so the runs keep their phase instead of drifting by
/// each run's length.
pub fn agent_service(puppet_bin: &str, settings: &RunSettings) -> String {
    format!(
        "{header}\
[Unit]
Description=One Puppet agent run (clone-army timer mode)
After=network.target

[Service]
Type=exec
ExecStart={puppet_bin} agent --onetime --no-daemonize --verbose
RuntimeMaxSec={timeout}
",
        header = header(),
        timeout = settings.runinterval,
    )
}

/// Apply mode: one masterless `puppet apply` of the apply source's `manifests/`
/// directory with its `modules/`, then the process is gone.
///
/// `--reports=none`: no report processor runs, so nothing is stored in the clone or sent
/// anywhere (Puppet's default `store` would keep a report file per run in the clone's
/// layer); the run summary (`last_run_summary.yaml`) is still written, so
/// `clone-army report` sees these runs. Puppet's apply sends nothing to a server unless
/// the clone's puppet.conf asks for PuppetDB (`storeconfigs_backend`, `route_file`)
/// or `--reports` names `puppetdb`/`http`.
/// `ConditionPathExists=`: without a bound source (a clone not yet restarted after
/// switching, or no `--apply-source`) a run is skipped, not failed.
/// `Type=exec` with `RuntimeMaxSec=`, for the reasons given at [`agent_service`].
pub fn apply_service(puppet_bin: &str, settings: &RunSettings) -> String {
    format!(
        "{header}\
[Unit]
Description=One masterless Puppet apply run (clone-army apply mode)
After=network.target
ConditionPathExists={dir}/manifests

[Service]
Type=exec
ExecStart={puppet_bin} apply --reports=none --modulepath={dir}/modules {dir}/manifests
RuntimeMaxSec={timeout}
",
        header = header(),
        dir = super::config::APPLY_DIR,
        timeout = settings.runinterval,
    )
}

/// Timer and apply modes: the first run at the phase offset after the clone's start (so
/// within one interval of it), then one every interval, each delayed by up to `splay` at
/// random. `X-CloneArmyRunMode=` tells the two modes apart when read back.
pub fn agent_timer(settings: &RunSettings) -> String {
    format!(
        "{header}\
[Unit]
Description=Puppet {what} runs every {t} s, phase {i} of {n}, {phasing} (clone-army {mode} mode)

[Timer]
OnActiveSec={offset}
OnUnitActiveSec={t}
RandomizedDelaySec={splay}
AccuracySec=1s
Unit=clone-army-agent.service
X-CloneArmyPhaseIndex={i}
X-CloneArmyPhaseCount={n}
X-CloneArmyPhasing={phasing}
X-CloneArmyRunMode={mode}

[Install]
WantedBy=timers.target
",
        header = header(),
        what = if settings.mode == RunMode::Apply {
            "apply"
        } else {
            "agent"
        },
        mode = settings.mode.name(),
        t = settings.runinterval,
        i = settings.phase_index,
        n = settings.phase_count,
        phasing = settings.phasing.name(),
        offset = settings.offset(),
        splay = settings.splay,
    )
}

/// Daemon mode: starts `puppet.service` once, at the phase offset after boot.
///
/// Why a timer and not `ExecStartPre=/bin/sleep <offset>` in puppet.service: a sleeping
/// ExecStartPre keeps the service `activating`, multi-user.target waits for it, so the
/// clone's boot (and with it `systemd-nspawn`'s READY, and `clone start`) would not finish
/// for up to a whole interval, and the default start timeout would kill it at 90 s.
/// The base enables puppet.service at boot; [`phase_dropin`] lets that start pass only
/// once this timer has fired, so the daemon's first run (and so all later ones) is phased.
pub fn phase_timer(settings: &RunSettings) -> String {
    format!(
        "{header}\
[Unit]
Description=Start the Puppet agent daemon {offset} s after boot, phase {i} of {n}, {phasing} (clone-army)

[Timer]
OnActiveSec={offset}
AccuracySec=1s
Unit=clone-army-agent-phase.service
X-CloneArmyPhaseIndex={i}
X-CloneArmyPhaseCount={n}
X-CloneArmyPhasing={phasing}

[Install]
WantedBy=timers.target
",
        header = header(),
        i = settings.phase_index,
        n = settings.phase_count,
        phasing = settings.phasing.name(),
        offset = settings.offset(),
    )
}

pub fn phase_service() -> String {
    format!(
        "{header}\
[Unit]
Description=Start the Puppet agent daemon at this clone's phase (clone-army)

[Service]
Type=oneshot
ExecStart=/bin/touch {PHASE_FLAG}
ExecStart=/bin/systemctl --no-block start puppet.service
",
        header = header(),
    )
}

/// Holds back the boot-time start of puppet.service until the phase timer fired.
pub fn phase_dropin() -> String {
    format!(
        "{header}\
[Unit]
ConditionPathExists={PHASE_FLAG}
",
        header = header(),
    )
}

/// Reads the mode back from the clone's run units and puppet.conf.
pub fn read_back(source: &CloneConfig) -> Result<RunReadBack> {
    let masked = source.unit_link(PUPPET_SERVICE)?.as_deref() == Some(Path::new(MASKED));
    let timer = source.unit(AGENT_TIMER)?.filter(|t| is_ours(t));
    let phase = source.unit(PHASE_TIMER)?.filter(|t| is_ours(t));
    let phase_of = |text: &str| {
        (
            unit_key(text, "X-CloneArmyPhaseIndex"),
            unit_key(text, "X-CloneArmyPhaseCount"),
        )
    };
    // A timer without the key was written before rules had names, by the only rule
    // there was; a value this helper does not know is no rule it can name.
    let phasing_of = |text: &str| match unit_value(text, "X-CloneArmyPhasing") {
        None => Some(UNNAMED_PHASING),
        Some(name) => Phasing::from_name(name),
    };
    Ok(match (masked, timer, phase) {
        (true, Some(timer), _) => {
            let (phase_index, phase_count) = phase_of(&timer);
            // Timers written before apply mode existed have no marker: timer mode.
            let mode = match unit_value(&timer, "X-CloneArmyRunMode") {
                Some("apply") => RunMode::Apply,
                _ => RunMode::Timer,
            };
            RunReadBack {
                run_mode: Some(mode),
                runinterval: unit_key(&timer, "OnUnitActiveSec"),
                splay: unit_key(&timer, "RandomizedDelaySec"),
                phase_index: phase_index.and_then(|v| u32::try_from(v).ok()),
                phase_count: phase_count.and_then(|v| u32::try_from(v).ok()),
                phasing: phasing_of(&timer),
            }
        }
        (true, None, _) => RunReadBack {
            run_mode: Some(RunMode::Manual),
            ..RunReadBack::default()
        },
        (false, _, Some(phase)) => {
            let puppet_conf = source.puppet_conf()?;
            let agent = puppet_conf
                .as_deref()
                .map(|c| puppet_conf::section(c, "agent"))
                .unwrap_or_default();
            let get = |key: &str| {
                agent
                    .iter()
                    .rev()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.as_str())
            };
            let splay = match get("splay") {
                Some("true") => get("splaylimit").and_then(|v| v.parse().ok()),
                _ => Some(0),
            };
            let (phase_index, phase_count) = phase_of(&phase);
            RunReadBack {
                run_mode: Some(RunMode::Daemon),
                runinterval: get("runinterval").and_then(|v| v.parse().ok()),
                splay,
                phase_index: phase_index.and_then(|v| u32::try_from(v).ok()),
                phase_count: phase_count.and_then(|v| u32::try_from(v).ok()),
                phasing: phasing_of(&phase),
            }
        }
        (false, _, None) => RunReadBack::default(),
    })
}

/// The run settings read back, held to the ranges `clone create` writes them in: a value
/// outside them (a clone's root can rewrite its bound run units and puppet.conf) is left
/// out and named as refused, as puppet.conf's and the facts' are.
pub fn checked(read: RunReadBack) -> (RunReadBack, Vec<Refused>) {
    let mut read = read;
    let mut refused = Vec::new();
    let file = match read.run_mode {
        Some(RunMode::Daemon) => "run units and puppet.conf",
        _ => "run units",
    };
    let mut refuse = |setting: &'static str, change: RunChange| match change.validate() {
        Ok(()) => true,
        Err(e) => {
            refused.push(Refused::by(file, setting, e));
            false
        }
    };
    if let Some(t) = read.runinterval {
        if !refuse(
            "runinterval",
            RunChange {
                runinterval: Some(t),
                ..RunChange::default()
            },
        ) {
            read.runinterval = None;
        }
    }
    if let Some(s) = read.splay {
        if !refuse(
            "splay",
            RunChange {
                splay: Some(s),
                ..RunChange::default()
            },
        ) {
            read.splay = None;
        }
    }
    if let (Some(index), Some(count)) = (read.phase_index, read.phase_count) {
        if !refuse(
            "phase",
            RunChange {
                phase: Some((index, count)),
                ..RunChange::default()
            },
        ) {
            read.phase_index = None;
            read.phase_count = None;
        }
    }
    (read, refused)
}

/// An integer-valued `Key=` of a unit file (the last one wins, as in systemd).
fn unit_key(text: &str, key: &str) -> Option<u64> {
    unit_value(text, key).and_then(|v| v.parse().ok())
}

/// The value of a unit file's `Key=` (the last one wins, as in systemd).
fn unit_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix(key)?.strip_prefix('='))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn without_version(text: String) -> String {
        text.replace(env!("CARGO_PKG_VERSION"), "[version]")
    }

    fn phased() -> RunSettings {
        RunSettings {
            mode: RunMode::Timer,
            runinterval: 1800,
            splay: 30,
            phase_index: 3,
            phase_count: 10,
            phasing: Phasing::PrefixEven,
        }
    }

    #[test]
    fn offsets_follow_the_rule_the_clone_is_phased_by() {
        let offsets =
            |phasing: Phasing| -> Vec<u64> { (0..8).map(|i| phasing.offset(1600, i, 8)).collect() };
        assert_eq!(
            offsets(Phasing::PrefixEven),
            [0, 800, 400, 1200, 200, 1000, 600, 1400]
        );
        assert_eq!(
            offsets(Phasing::FleetEven),
            [0, 200, 400, 600, 800, 1000, 1200, 1400]
        );
        // The count plays no part in prefix-even, and offsets are rounded down.
        assert_eq!(Phasing::PrefixEven.offset(1800, 3, 4), 1350);
        assert_eq!(Phasing::PrefixEven.offset(1800, 3, 99_999), 1350);
        assert_eq!(Phasing::PrefixEven.offset(1800, 6, 10), 675);
        assert_eq!(Phasing::FleetEven.offset(1800, 3, 10), 540);
        let last = MAX_PHASE_COUNT - 1;
        assert!(
            Phasing::PrefixEven.offset(MAX_RUNINTERVAL, last, MAX_PHASE_COUNT) < MAX_RUNINTERVAL
        );
        assert_eq!(Phasing::PrefixEven.offset(u64::MAX, 1, 2), u64::MAX / 2);
        assert_eq!(
            Phasing::FleetEven.offset(u64::MAX, 3, 4),
            u64::MAX / 4 * 3 + 2
        );
        assert_eq!(phased().offset(), 1350);
        assert_eq!(RunSettings::default().offset(), 0);
    }

    /// Runs per `window` seconds at their worst, over the whole cycle of `interval`: the
    /// most offsets any window `[a, a + window)` holds, `a` anywhere, a window that passes
    /// the interval's end going on at its start (the runs repeat every interval).
    struct Busiest {
        interval: u64,
        window: u64,
        /// Offsets in each window, by the second it opens at.
        in_window: Vec<usize>,
        most: usize,
    }

    impl Busiest {
        fn new(interval: u64, window: u64) -> Self {
            Busiest {
                interval,
                window,
                in_window: vec![0; interval as usize],
                most: 0,
            }
        }

        /// One more run at `offset`: the windows opening up to `window - 1` s before it
        /// hold it.
        fn add(&mut self, offset: u64) {
            for back in 0..self.window {
                let opens = (offset + self.interval - back % self.interval) % self.interval;
                let held = &mut self.in_window[opens as usize];
                *held += 1;
                self.most = self.most.max(*held);
            }
        }
    }

    /// For every fleet of 1 to 1000 clones and every prefix of it (clones 0 to n-1,
    /// as a ramp or a wave of starts runs them), the busiest 12 s of the interval and
    /// its bound where it is passed first.
    fn first_bunched_prefix(phasing: Phasing, interval: u64) -> Option<(u32, u32, usize, usize)> {
        const WINDOW: u64 = 12;
        for fleet in 1..=1000u32 {
            let mut busiest = Busiest::new(interval, WINDOW);
            for index in 0..fleet {
                busiest.add(phasing.offset(interval, index, fleet));
                let n = u64::from(index) + 1;
                let bound = even_share_bound(n, interval, WINDOW);
                if busiest.most > bound {
                    return Some((fleet, index + 1, busiest.most, bound));
                }
            }
        }
        None
    }

    #[test]
    fn every_prefix_of_a_prefix_even_fleet_runs_evenly_at_1800_and_120_s() {
        for interval in [1800, 120] {
            assert_eq!(
                first_bunched_prefix(Phasing::PrefixEven, interval),
                None,
                "at {interval} s"
            );
        }
    }

    /// The same check on `i·T/N`: the first clones of a large fleet run seconds apart.
    #[test]
    fn the_first_clones_of_a_fleet_even_fleet_run_in_a_bunch() {
        // The first 3 of 21 clones at 120 s run at 0, 5 and 11 s: three runs in 12 s
        // where two are the bound (and the even share one); so do the first 3 of 301
        // at 1800 s.
        assert_eq!(
            first_bunched_prefix(Phasing::FleetEven, 120),
            Some((21, 3, 3, 2))
        );
        assert_eq!(
            first_bunched_prefix(Phasing::FleetEven, 1800),
            Some((301, 3, 3, 2))
        );
    }

    #[test]
    fn the_busiest_window_wraps_around_the_interval() {
        let mut busiest = Busiest::new(120, 12);
        for offset in [115, 119, 3] {
            busiest.add(offset);
        }
        assert_eq!(busiest.most, 3);
        busiest.add(60);
        assert_eq!(busiest.most, 3);
        assert_eq!(even_share_bound(1, 1800, 12), 2);
        assert_eq!(even_share_bound(150, 1800, 12), 2);
        assert_eq!(even_share_bound(151, 1800, 12), 4);
        assert_eq!(even_share_bound(25, 120, 12), 6);
    }

    #[test]
    fn agent_timer_snapshot() {
        insta::assert_snapshot!(without_version(agent_timer(&phased())));
    }

    #[test]
    fn apply_units_snapshot() {
        let apply = RunSettings {
            mode: RunMode::Apply,
            ..phased()
        };
        insta::assert_snapshot!(without_version(format!(
            "--- {AGENT_TIMER}\n{}--- {AGENT_SERVICE}\n{}",
            agent_timer(&apply),
            apply_service("/usr/bin/puppet", &apply)
        )));
    }

    #[test]
    fn agent_service_snapshot() {
        insta::assert_snapshot!(without_version(agent_service("/usr/bin/puppet", &phased())));
    }

    #[test]
    fn phase_units_snapshot() {
        let daemon = RunSettings {
            mode: RunMode::Daemon,
            ..phased()
        };
        insta::assert_snapshot!(without_version(format!(
            "--- {PHASE_TIMER}\n{}--- {PHASE_SERVICE}\n{}--- {PHASE_DROPIN}\n{}",
            phase_timer(&daemon),
            phase_service(),
            phase_dropin()
        )));
    }

    /// systemd's own parser on the generated units: an unknown or misspelt key, a bad
    /// value or a missing unit shows up as output.
    #[test]
    fn generated_units_pass_systemd_analyze_verify() {
        let version = std::process::Command::new("systemd-analyze")
            .arg("--version")
            .output()
            .expect(
                "this test needs systemd-analyze (Debian package systemd; make deps installs it)",
            );
        assert!(version.status.success());
        let dir = tempfile::tempdir().unwrap();
        let limits = crate::clone::limits::Limits {
            memory_max: Some("512M".into()),
            cpu_quota: Some("50%".into()),
            tasks_max: Some(4096),
        };
        let daemon = RunSettings {
            mode: RunMode::Daemon,
            ..phased()
        };
        let units = [
            ("clone-army-agent.timer", agent_timer(&phased())),
            // An executable that exists on any test host stands in for puppet.
            (
                "clone-army-agent.service",
                agent_service("/bin/true", &phased()),
            ),
            (
                "clone-army-apply.service",
                apply_service("/bin/true", &phased()),
            ),
            ("clone-army-agent-phase.timer", phase_timer(&daemon)),
            ("clone-army-agent-phase.service", phase_service()),
            (
                "clone-army-root-password.service",
                crate::clone::secrets::root_password_service(),
            ),
            (
                "clone-army-stale-locks.service",
                crate::clone::stale_locks::stale_locks_service(),
            ),
            (
                "limits-test.service",
                format!(
                    "[Service]\nExecStart=/bin/true\n{}",
                    crate::clone::limits::render(&limits).replace("[Service]\n", "")
                ),
            ),
        ];
        let mut args = vec!["verify".to_owned(), "--man=no".to_owned()];
        for (name, text) in &units {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            args.push(path.display().to_string());
        }
        let output = std::process::Command::new("systemd-analyze")
            .args(&args)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && said.trim().is_empty(), "{said}");
    }

    #[test]
    fn puppet_conf_carries_the_daemon_settings_only() {
        let conf = puppet_conf::render(Some("m"), None, "c");
        let daemon = RunSettings {
            mode: RunMode::Daemon,
            ..phased()
        };
        let with = puppet_conf_with(&conf, &daemon);
        assert_eq!(
            puppet_conf::section(&with, "agent"),
            [
                ("runinterval", "1800"),
                ("splay", "true"),
                ("splaylimit", "30")
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        assert_eq!(puppet_conf_with(&with, &phased()), conf);
    }

    #[test]
    fn out_of_range_values_are_refused_naming_the_flag() {
        let refused = |change: RunChange| match change.validate() {
            Err(Error::InvalidArgument { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refused(RunChange {
                runinterval: Some(59),
                ..RunChange::default()
            }),
            "runinterval"
        );
        assert_eq!(
            refused(RunChange {
                phase: Some((4, 4)),
                ..RunChange::default()
            }),
            "phase-index"
        );
        assert_eq!(
            refused(RunChange {
                phase: Some((0, 0)),
                ..RunChange::default()
            }),
            "phase-count"
        );
        assert!(RunChange {
            runinterval: Some(60),
            phase: Some((3, 4)),
            ..RunChange::default()
        }
        .validate()
        .is_ok());
    }
}
