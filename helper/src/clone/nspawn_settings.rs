//! A clone's settings file for `systemd-nspawn`, `/etc/systemd/nspawn/<clone>.nspawn`:
//! what the host binds into the clone, read-only, and the clone's SSL directory, bound
//! read-write (see [`super::ssl`]), the environment of the clone's init
//! ([`INIT_ENVIRONMENT`]) and its hostname ([`NspawnSettings::hostname`]); and the
//! credentials drop-in that passes the root password hash.
//!
//! nspawn reads the file by the machine's name when the clone starts (files in
//! `/etc/systemd/nspawn` are trusted, so binds are honoured). The template's command
//! line binds nothing itself: nspawn ignores a settings file's binds when the command
//! line has any.
//!
//! The credential goes on the command line instead, through
//! `$CLONE_ARMY_NSPAWN_CREDENTIALS` at the end of the template's `ExecStart=`, which a
//! drop-in of the clone's service sets ([`credentials_dropin`]): systemd 252's nspawn
//! passed no credential given as `LoadCredential=` in the settings file (tried here:
//! nothing reached the clone), and `--load-credential=` on the command line does.
//!
//! Everything a clone is given from its config dir (see [`super::config`]) is bound here,
//! and with it the host's `/etc/hosts` (clones share the host's network and reach a server
//! on its loopback by the names there) and, in apply mode, the apply source.

use std::path::PathBuf;

use super::config::{
    CloneConfig, APPLY_DIR, CLONE_FACTS_DIR, CLONE_UNITS_DIR, CSR_ATTRIBUTES, FACTS_DIR, HOSTNAME,
    PUPPET_CONF, ROOT_PASSWORD_CREDENTIAL, ROOT_PASSWORD_HASH, UNITS_DIR,
};
use super::ssl::SslBind;
use crate::protocol::error::Result;
use crate::sys::fsutil::{remove_dropin, remove_file, write_atomic};
use crate::sys::names::{validate_hostname, MAX_KERNEL_HOSTNAME_LEN};
use crate::sys::paths::Layout;
use crate::systemd::units::{header, read_ours, refuse_foreign};

/// The environment the clone's init is given. `SYSTEMD_SECCOMP=0` tells the clone's
/// systemd not to put system-call filters of its own on the clone's services: each
/// filter is a BPF program the host's kernel keeps while the service runs and frees when
/// the clone stops (journald's alone are more than a dozen, in every clone). nspawn's
/// filter on the whole container is not affected: the variable reaches the container's
/// init only, never nspawn itself, and every process in the clone stays under it.
pub const INIT_ENVIRONMENT: &str = "SYSTEMD_SECCOMP=0";

/// What one clone's settings say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NspawnSettings {
    /// The base's puppet confdir, where puppet.conf and csr_attributes.yaml are bound.
    pub confdir: String,
    pub root_password: bool,
    pub challenge_password: bool,
    pub apply_source: Option<PathBuf>,
    /// The clone's kept SSL directory; `None` for a clone that keeps its own in its upper
    /// layer (made before SSL directories were kept).
    pub ssl: Option<SslBind>,
    /// The hostname nspawn gives the container as it starts: the one the clone's
    /// `/etc/hostname` says, so the clone's systemd finds it set already and does not
    /// set it again. Every change of a hostname, in any UTS namespace, wakes each
    /// process on the machine that polls `/proc/sys/kernel/hostname`, and every running
    /// clone's journald does: one change a boot instead of two halves what a boot costs
    /// the clones already running. `None` when the clone's hostname file holds no
    /// hostname, or one longer than the kernel takes (nspawn then names the container
    /// after the machine, as before, and the clone's systemd fails to set it).
    pub hostname: Option<String>,
}

/// The file's text.
pub fn render(config: &CloneConfig, settings: &NspawnSettings) -> String {
    let confdir = settings.confdir.trim_end_matches('/');
    let bind = |name: &str, to: &str| {
        format!("BindReadOnly={}:{to}\n", config.system_path(name).display())
    };
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
    if let Some(ssl) = &settings.ssl {
        files.push_str(&ssl.line());
    }
    let hostname = settings
        .hostname
        .as_ref()
        .map(|name| format!("Hostname={name}\n"))
        .unwrap_or_default();
    format!(
        "{header}\
# What the host gives clone {clone}, bound read-only, and its SSL directory, bound read-write;
# its services run under the container's system-call filter only
# (see clone-army's README, \"Security model\" and \"Certificates\").
[Exec]
Environment={INIT_ENVIRONMENT}
{hostname}
[Files]
{files}",
        header = header(),
        clone = config.clone,
    )
}

pub use crate::systemd::units::CREDENTIALS_ENV_VAR;

/// The drop-in of the clone's service that sets [`CREDENTIALS_ENV_VAR`].
pub fn credentials_dropin(layout: &Layout, clone: &str) -> PathBuf {
    layout.service_dropin_dir(clone).join("40-credentials.conf")
}

/// The drop-in's text: only clone-army's own paths and names go into it.
pub fn render_credentials(config: &CloneConfig) -> String {
    format!(
        "{header}\
[Service]
Environment={CREDENTIALS_ENV_VAR}=--load-credential={ROOT_PASSWORD_CREDENTIAL}:{hash}
",
        header = header(),
        hash = config.system_path(ROOT_PASSWORD_HASH).display(),
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

/// Writes (with a root password) or removes the clone's credentials drop-in. Returns
/// whether it changed: then systemd must reload.
pub fn write_credentials(
    layout: &Layout,
    config: &CloneConfig,
    root_password: bool,
) -> Result<bool> {
    let path = layout.fs(credentials_dropin(layout, &config.clone));
    refuse_foreign(&path, "drop-in")?;
    if root_password {
        write_atomic(&path, render_credentials(config).as_bytes(), 0o644)
    } else {
        remove_dropin(&path)
    }
}

/// Removes the clone's settings file and credentials drop-in (files clone-army did not
/// write are left alone). Returns whether it removed anything.
pub fn remove(layout: &Layout, config: &CloneConfig) -> Result<bool> {
    let mut removed = match read_ours(&config.settings_file)? {
        Some(_) => remove_file(&config.settings_file)?,
        None => false,
    };
    let dropin = layout.fs(credentials_dropin(layout, &config.clone));
    if read_ours(&dropin)?.is_some() {
        removed |= remove_dropin(&dropin)?;
    }
    Ok(removed)
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

/// The SSL directory the settings bind, if any.
pub fn read_ssl(layout: &Layout, config: &CloneConfig) -> Result<Option<SslBind>> {
    Ok(read_ours(&config.settings_file)?.and_then(|text| SslBind::parse(layout, &text)))
}

/// The hostname the clone's hostname file gives, when it is one the kernel can set. The
/// file is bound into the clone, so it is read as the clone may have left it: anything
/// but a valid hostname is no hostname.
pub fn read_hostname(config: &CloneConfig) -> Result<Option<String>> {
    Ok(config
        .read(HOSTNAME)?
        .map(|text| text.trim().to_owned())
        .filter(|name| {
            name.len() <= MAX_KERNEL_HOSTNAME_LEN && validate_hostname("hostname", name).is_ok()
        }))
}

/// The settings as they stand, for a change of some of them.
pub fn read(layout: &Layout, config: &CloneConfig, confdir: &str) -> Result<NspawnSettings> {
    Ok(NspawnSettings {
        confdir: confdir.to_owned(),
        root_password: config.exists(ROOT_PASSWORD_HASH),
        challenge_password: config.exists(CSR_ATTRIBUTES),
        apply_source: read_apply_source(config)?,
        ssl: read_ssl(layout, config)?,
        hostname: read_hostname(config)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::paths::Layout;

    fn settings() -> NspawnSettings {
        NspawnSettings {
            confdir: "/etc/puppet".into(),
            root_password: true,
            challenge_password: true,
            apply_source: Some(PathBuf::from("/srv/apply")),
            ssl: Some(SslBind::of(
                &Layout::under("/ignored"),
                "clone-1.example.com",
                "/etc/puppet",
            )),
            hostname: Some("clone-1.example.com".into()),
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
    fn the_clones_init_alone_is_told_to_add_no_filters() {
        let layout = Layout::under("/ignored");
        let config = CloneConfig::of(&layout, "clone-1");
        assert!(render(&config, &settings()).contains("[Exec]\nEnvironment=SYSTEMD_SECCOMP=0\n"));
        // Set on the template's service, it would reach nspawn and drop the container's own
        // filter too.
        assert!(!crate::systemd::units::service_template().contains("SYSTEMD_SECCOMP"));
    }

    #[test]
    fn nspawn_sets_the_hostname_the_clones_hostname_file_gives() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let config = CloneConfig::of(&layout, "c1");
        assert_eq!(read_hostname(&config).unwrap(), None);
        let too_long_for_the_kernel = format!("{}.{}", "a".repeat(32), "b".repeat(32));
        for unusable in ["", "a b", "a\nHostname=b", "-a", &too_long_for_the_kernel] {
            config.write_bound(HOSTNAME, unusable, 0o644).unwrap();
            assert_eq!(read_hostname(&config).unwrap(), None, "{unusable:?}");
        }
        // A clone that put a link in place of the file points at nothing the helper reads.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "elsewhere.example.com\n").unwrap();
        let file = layout.fs(layout.config_dir("c1")).join(HOSTNAME);
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        assert_eq!(read_hostname(&config).unwrap(), None);
        std::fs::remove_file(&file).unwrap();
        let longest = format!("{}.{}", "a".repeat(31), "b".repeat(32));
        config.write_bound(HOSTNAME, &longest, 0o644).unwrap();
        assert_eq!(read_hostname(&config).unwrap(), Some(longest));
        config
            .write_bound(HOSTNAME, "c1.example.com\n", 0o644)
            .unwrap();
        assert_eq!(
            read_hostname(&config).unwrap().as_deref(),
            Some("c1.example.com")
        );
        let text = render(&config, &read(&layout, &config, "/etc/puppet").unwrap());
        assert!(
            text.contains(
                "[Exec]\nEnvironment=SYSTEMD_SECCOMP=0\nHostname=c1.example.com\n\n[Files]\n"
            ),
            "{text}"
        );
        let none = NspawnSettings {
            hostname: None,
            ..settings()
        };
        assert!(render(&config, &none).contains("SYSTEMD_SECCOMP=0\n\n[Files]\n"));
    }

    #[test]
    fn the_credential_goes_on_the_templates_command_line() {
        let layout = Layout::under("/ignored");
        let config = CloneConfig::of(&layout, "clone-1");
        assert!(render_credentials(&config).ends_with(
            "[Service]\nEnvironment=CLONE_ARMY_NSPAWN_CREDENTIALS=--load-credential=clone-army.root-password-hash:/var/lib/puppet-clone-army/clone-1-config/root-password-hash\n"
        ));
        assert!(crate::systemd::units::service_template()
            .contains(&format!(" ${CREDENTIALS_ENV_VAR} ")));
        assert!(!render(&config, &settings()).contains("Credential"));
    }

    #[test]
    fn written_read_back_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let config = CloneConfig::of(&layout, "c1");
        assert!(!config.settings_file.exists());
        assert!(write(&config, &settings()).unwrap());
        assert!(!write(&config, &settings()).unwrap());
        assert!(read_ours(&config.settings_file).unwrap().is_some());
        assert_eq!(
            read_apply_source(&config).unwrap(),
            Some(PathBuf::from("/srv/apply"))
        );
        let plain = NspawnSettings {
            root_password: false,
            challenge_password: false,
            apply_source: None,
            ssl: None,
            ..settings()
        };
        assert!(write(&config, &plain).unwrap());
        let text = std::fs::read_to_string(&config.settings_file).unwrap();
        assert!(
            !text.contains("Credential") && !text.contains(APPLY_DIR),
            "{text}"
        );
        assert_eq!(read_apply_source(&config).unwrap(), None);
        assert_eq!(read_ssl(&layout, &config).unwrap(), None);
        assert!(write(&config, &settings()).unwrap());
        assert_eq!(
            read_ssl(&layout, &config).unwrap(),
            Some(SslBind::of(&layout, "clone-1.example.com", "/etc/puppet"))
        );
        assert!(write_credentials(&layout, &config, true).unwrap());
        assert!(!write_credentials(&layout, &config, true).unwrap());
        assert!(remove(&layout, &config).unwrap());
        assert!(!remove(&layout, &config).unwrap());
        assert!(!layout.fs(credentials_dropin(&layout, "c1")).exists());
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
        assert!(!remove(&layout, &config).unwrap());
        assert!(read_ours(&config.settings_file).unwrap().is_none());
        assert!(config.settings_file.exists());
    }
}
