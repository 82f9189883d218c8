//! A clone's settings file for `systemd-nspawn`, `/etc/systemd/nspawn/<clone>.nspawn`:
//! what the host binds into the clone, read-only, and the credentials it passes.
//!
//! nspawn reads the file by the machine's name when the clone starts (files in
//! `/etc/systemd/nspawn` are trusted, so binds and credentials are honoured). The
//! template's command line binds nothing itself: nspawn ignores a settings file's binds
//! when the command line has any.
//!
//! Everything a clone is given from its config dir (see [`super::config`]) is bound here,
//! and with it the host's `/etc/hosts` (clones share the host's network and reach a server
//! on its loopback by the names there) and, in apply mode, the apply source.

use std::path::PathBuf;

use super::apply_source::APPLY_DIR;
use super::config::{
    CloneConfig, CLONE_FACTS_DIR, CLONE_UNITS_DIR, CSR_ATTRIBUTES, FACTS_DIR, HOSTNAME,
    PUPPET_CONF, ROOT_PASSWORD_CREDENTIAL, ROOT_PASSWORD_HASH, UNITS_DIR,
};
use crate::error::Result;
use crate::fsutil::{remove_file, write_atomic};
use crate::units::{header, read_ours, refuse_foreign};

/// What one clone's settings say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NspawnSettings {
    /// The base's puppet confdir, where puppet.conf and csr_attributes.yaml are bound.
    pub confdir: String,
    pub root_password: bool,
    pub challenge_password: bool,
    pub apply_source: Option<PathBuf>,
}

/// The file's text.
pub fn render(config: &CloneConfig, settings: &NspawnSettings) -> String {
    let confdir = settings.confdir.trim_end_matches('/');
    let bind = |name: &str, to: &str| {
        format!("BindReadOnly={}:{to}\n", config.system_path(name).display())
    };
    let mut exec = String::new();
    if settings.root_password {
        exec.push_str(&format!(
            "LoadCredential={ROOT_PASSWORD_CREDENTIAL}:{}\n",
            config.system_path(ROOT_PASSWORD_HASH).display()
        ));
    }
    let mut files = String::from("BindReadOnly=/etc/hosts\n");
    files.push_str(&bind(PUPPET_CONF, &format!("{confdir}/{PUPPET_CONF}")));
    files.push_str(&bind(HOSTNAME, "/etc/hostname"));
    files.push_str(&bind(FACTS_DIR, CLONE_FACTS_DIR));
    files.push_str(&bind(UNITS_DIR, CLONE_UNITS_DIR));
    if settings.challenge_password {
        files.push_str(&bind(
            CSR_ATTRIBUTES,
            &format!("{confdir}/{CSR_ATTRIBUTES}"),
        ));
    }
    if let Some(source) = &settings.apply_source {
        files.push_str(&format!("BindReadOnly={}:{APPLY_DIR}\n", source.display()));
    }
    let exec = if exec.is_empty() {
        String::new()
    } else {
        format!("[Exec]\n{exec}\n")
    };
    format!(
        "{header}\
# What the host gives clone {clone}, bound read-only (see clone-army's README, \"Security model\").
{exec}[Files]
{files}",
        header = header(),
        clone = config.clone,
    )
}

/// Writes the clone's settings file, refusing one clone-army did not write. Returns
/// whether it changed.
pub fn write(config: &CloneConfig, settings: &NspawnSettings) -> Result<bool> {
    refuse_foreign(&config.settings_file, "nspawn settings file")?;
    write_atomic(
        &config.settings_file,
        render(config, settings).as_bytes(),
        0o644,
    )
}

/// Removes the clone's settings file (one clone-army did not write is left alone).
pub fn remove(config: &CloneConfig) -> Result<bool> {
    match read_ours(&config.settings_file)? {
        Some(_) => remove_file(&config.settings_file),
        None => Ok(false),
    }
}

/// Whether the clone has a settings file of ours: a clone without one was made by an
/// older clone-army (see [`super::legacy`]).
pub fn exists(config: &CloneConfig) -> Result<bool> {
    Ok(read_ours(&config.settings_file)?.is_some())
}

/// The apply source the settings bind, if any.
pub fn read_apply_source(config: &CloneConfig) -> Result<Option<PathBuf>> {
    let Some(text) = read_ours(&config.settings_file)? else {
        return Ok(None);
    };
    let suffix = format!(":{APPLY_DIR}");
    Ok(text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("BindReadOnly="))
        .filter_map(|bind| bind.strip_suffix(suffix.as_str()))
        .next_back()
        .map(PathBuf::from))
}

/// The settings as they stand, for a change of some of them.
pub fn read(config: &CloneConfig, confdir: &str) -> Result<NspawnSettings> {
    Ok(NspawnSettings {
        confdir: confdir.to_owned(),
        root_password: config.exists(ROOT_PASSWORD_HASH),
        challenge_password: config.exists(CSR_ATTRIBUTES),
        apply_source: read_apply_source(config)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::Layout;

    fn settings() -> NspawnSettings {
        NspawnSettings {
            confdir: "/etc/puppet".into(),
            root_password: true,
            challenge_password: true,
            apply_source: Some(PathBuf::from("/srv/apply")),
        }
    }

    #[test]
    fn settings_snapshot() {
        let layout = Layout::under("/ignored");
        let config = CloneConfig::of(&layout, "clone-1");
        insta::assert_snapshot!(
            render(&config, &settings()).replace(env!("CARGO_PKG_VERSION"), "[version]")
        );
    }

    #[test]
    fn written_read_back_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let config = CloneConfig::of(&layout, "c1");
        assert!(!exists(&config).unwrap());
        assert!(write(&config, &settings()).unwrap());
        assert!(!write(&config, &settings()).unwrap());
        assert!(exists(&config).unwrap());
        assert_eq!(
            read_apply_source(&config).unwrap(),
            Some(PathBuf::from("/srv/apply"))
        );
        let plain = NspawnSettings {
            root_password: false,
            challenge_password: false,
            apply_source: None,
            ..settings()
        };
        assert!(write(&config, &plain).unwrap());
        let text = std::fs::read_to_string(&config.settings_file).unwrap();
        assert!(
            !text.contains("[Exec]") && !text.contains(APPLY_DIR),
            "{text}"
        );
        assert_eq!(read_apply_source(&config).unwrap(), None);
        assert!(remove(&config).unwrap());
        assert!(!remove(&config).unwrap());
    }

    #[test]
    fn a_foreign_settings_file_is_neither_replaced_nor_removed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let config = CloneConfig::of(&layout, "c1");
        std::fs::create_dir_all(config.settings_file.parent().unwrap()).unwrap();
        std::fs::write(&config.settings_file, "[Exec]\nBoot=yes\n").unwrap();
        assert_eq!(
            write(&config, &settings()).unwrap_err().kind(),
            "already-exists"
        );
        assert!(!remove(&config).unwrap());
        assert!(!exists(&config).unwrap());
        assert!(config.settings_file.exists());
    }
}
