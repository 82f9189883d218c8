//! Clones an older clone-army made: their settings were written into the clone's own
//! upper layer (puppet.conf, hostname, facts, run units under `/etc/systemd/system`) and
//! the apply source was bound by a drop-in that repeated nspawn's command line.
//!
//! Such a clone has no `.nspawn` settings of ours. Until it is moved over, `clone list`
//! reads its settings from its upper layer through [`crate::sys::confined`] (a file the
//! clone planted or made unreadable reads as missing); [`move_over`] writes its config
//! dir and `.nspawn` settings from what it reads there, validated, and removes the old
//! drop-in. Nothing in the clone is changed or removed: a running clone goes on with
//! what it has until its next start, and from then on what the host binds (puppet.conf,
//! hostname, the facts directory, the run units, which come before the clone's own
//! `/etc/systemd/system`) stands over the old files.

use std::path::PathBuf;

use super::config::{CloneConfig, SettingsSource};
use super::nspawn_settings::{self, NspawnSettings};
use super::{facts, run_mode};
use crate::protocol::error::Result;
use crate::sys::confined::CloneTree;
use crate::sys::fsutil::remove_dropin;
use crate::sys::paths::Layout;
use crate::systemd::units::read_ours;

/// Where an older clone-army kept run units inside the clone.
const UNIT_DIR_IN_CLONE: &str = "/etc/systemd/system";
/// Where it kept facts inside the clone.
const FACTS_DIR_IN_CLONE: &str = "/etc/facter/facts.d";
/// The most read of any one of its files.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The drop-in that bound the apply source before `.nspawn` settings did.
pub fn apply_source_dropin(layout: &Layout, clone: &str) -> PathBuf {
    layout.unit_path(&format!(
        "{}.d/60-apply-source.conf",
        layout.service_unit_name(clone)
    ))
}

/// Removes that drop-in (one clone-army did not write is left alone; without it, it
/// would keep nspawn from reading the clone's `.nspawn` binds). Returns whether it did.
pub fn remove_apply_source_dropin(layout: &Layout, clone: &str) -> Result<bool> {
    let path = layout.fs(apply_source_dropin(layout, clone));
    match read_ours(&path)? {
        Some(_) => remove_dropin(&path),
        None => Ok(false),
    }
}

/// A legacy clone's settings, read from its upper layer (and the old drop-in).
pub struct LegacySettings {
    tree: CloneTree,
    confdir: String,
    apply_source: Option<PathBuf>,
}

impl LegacySettings {
    pub fn open(layout: &Layout, clone: &str, confdir: &str) -> Result<Self> {
        let upper = layout.upper_dir(clone);
        let dropin = read_ours(&layout.fs(apply_source_dropin(layout, clone)))?;
        Ok(LegacySettings {
            tree: CloneTree::new(clone, layout.fs(&upper), upper),
            confdir: confdir.to_owned(),
            apply_source: dropin.as_deref().and_then(apply_source_of_dropin),
        })
    }

    /// A file of the clone, or `None` when it is missing or refused: a legacy clone is
    /// listed with what can be read safely.
    fn read(&self, path: &str) -> Option<String> {
        match self.tree.read_to_string(path, MAX_FILE_BYTES) {
            Ok(text) => text,
            Err(e) => {
                crate::protocol::warnings::warn(crate::sys::escape::visible(&e.to_string()));
                None
            }
        }
    }
}

/// `--bind-ro=SRC:/srv/clone-army-apply` on the drop-in's command line.
fn apply_source_of_dropin(text: &str) -> Option<PathBuf> {
    let suffix = format!(":{}", super::apply_source::APPLY_DIR);
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("ExecStart="))
        .flat_map(str::split_whitespace)
        .filter_map(|arg| {
            arg.strip_prefix("--bind-ro=")?
                .strip_suffix(suffix.as_str())
        })
        .next_back()
        .map(PathBuf::from)
}

impl SettingsSource for LegacySettings {
    fn puppet_conf(&self) -> Result<Option<String>> {
        Ok(self.read(&format!(
            "{}/puppet.conf",
            self.confdir.trim_end_matches('/')
        )))
    }

    fn unit(&self, name: &str) -> Result<Option<String>> {
        Ok(self.read(&format!("{UNIT_DIR_IN_CLONE}/{name}")))
    }

    fn unit_link(&self, name: &str) -> Result<Option<PathBuf>> {
        Ok(self
            .tree
            .read_link(&format!("{UNIT_DIR_IN_CLONE}/{name}"))
            .unwrap_or(None))
    }

    fn facts_file(&self, name: &str) -> Result<Option<String>> {
        Ok(self.read(&format!("{FACTS_DIR_IN_CLONE}/{name}")))
    }

    fn apply_source(&self) -> Result<Option<PathBuf>> {
        Ok(self.apply_source.clone())
    }
}

/// Gives a legacy clone its config dir and `.nspawn` settings, from what its upper layer
/// says: its puppet.conf as it is (the clone's own text, which only the clone reads;
/// at most [`MAX_FILE_BYTES`]), the hostname from its certname, the run mode and facts
/// as this helper would write them (values out of range fall back to defaults). Secrets
/// stay where they are, in the clone. Returns whether it moved anything.
pub fn move_over(layout: &Layout, clone: &str, confdir: &str) -> Result<bool> {
    let config = CloneConfig::of(layout, clone);
    if nspawn_settings::exists(&config)? {
        return Ok(false);
    }
    let legacy = LegacySettings::open(layout, clone, confdir)?;
    config.create()?;
    let conf = legacy.puppet_conf()?.unwrap_or_default();
    let certname = crate::clone::puppet_conf::parse(&conf)
        .certname
        .filter(|c| crate::sys::names::validate_hostname("certname", c).is_ok());
    config.write_bound(super::config::PUPPET_CONF, &conf, 0o644)?;
    let hostname = certname.unwrap_or_else(|| clone.to_owned());
    config.write_bound(super::config::HOSTNAME, &format!("{hostname}\n"), 0o644)?;
    if let Some(run) = run_mode::read_back(&legacy)?.settings() {
        let change = run_mode::RunChange {
            mode: Some(run.mode),
            runinterval: Some(run.runinterval),
            splay: Some(run.splay),
            phase: Some((run.phase_index, run.phase_count)),
            phasing: Some(run.phasing),
        };
        let run = match change.validate() {
            Ok(()) => run,
            Err(_) => run_mode::RunSettings {
                mode: run.mode,
                ..run_mode::RunSettings::default()
            },
        };
        run_mode::apply(&config, &run, run_mode::puppet_bin(confdir))?;
    }
    // Only what the rules take is read back: the rest is dropped, as a default.
    let read = facts::read_back(&legacy)?;
    facts::apply_facts(&config, &read.facts)?;
    if let Some(generated) = read.generated {
        facts::apply_generated(&config, &generated)?;
    }
    let apply_source = legacy
        .apply_source()?
        .filter(|source| super::apply_source::validate(layout, source).is_ok());
    nspawn_settings::write(
        &config,
        &NspawnSettings {
            confdir: confdir.to_owned(),
            root_password: false,
            challenge_password: false,
            apply_source,
            // It keeps its SSL directory in its upper layer (see `super::ssl`).
            ssl: None,
            hostname: nspawn_settings::read_hostname(&config)?,
        },
    )?;
    remove_apply_source_dropin(layout, clone)?;
    Ok(true)
}
