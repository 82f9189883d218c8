//! `clone-army host selinux`: the SELinux labels every clone's `systemd-nspawn` runs with,
//! on hosts where SELinux is enforcing (RHEL family).
//!
//! Under an enforcing policy, nspawn started by systemd would run the container's processes
//! in its own domain, which the policy does not let boot a systemd; container-selinux
//! provides the domain and file type made for containers (`container_t`,
//! `container_file_t`). nspawn takes them as `--selinux-context=` (the processes) and
//! `--selinux-apifs-context=` (the API file systems it mounts: /proc, /sys, /dev, /run).
//!
//! The clone template's `ExecStart=` ends in `$CLONE_ARMY_NSPAWN_SELINUX`: systemd
//! replaces an unbraced `$VAR` that stands as a word of its own by the variable's value
//! split at whitespace, and by no argument at all when it is unset. This verb sets it in a
//! drop-in of the template, `puppet-clone-army@.service.d/60-selinux.conf` (60: after the
//! per-clone `50-limits.conf`, and a different name, so neither hides the other), so every
//! clone gets the flags at its next start and hosts without SELinux run the template as is.
//! The file contexts of `/var/lib/puppet-clone-army` and the `container_manage_cgroup`
//! boolean (systemd in `container_t` needs it) are the Puppet class
//! `clone_army::selinux`'s part (semanage, restorecon, selboolean).
//!
//! Untested on this project's machines: they have no SELinux (no selinuxfs, no
//! `/sys/fs/selinux`). The unit tests pin the exact drop-in and the checks.

use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::protocol::answers::SelinuxDropin;
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{read_optional, write_atomic};
use crate::sys::paths::SERVICE_TEMPLATE;
use crate::systemd::units::header;

pub use crate::systemd::units::SELINUX_ENV_VAR as ENV_VAR;
/// The drop-in's file name in the template's `.d` directory.
pub const DROPIN_NAME: &str = "60-selinux.conf";
/// container-selinux's domain for container processes.
pub const DEFAULT_CONTEXT: &str = "system_u:system_r:container_t:s0";
/// container-selinux's type for container files, for the API file systems nspawn mounts.
pub const DEFAULT_APIFS_CONTEXT: &str = "system_u:object_r:container_file_t:s0";
/// Exists when the kernel has SELinux enabled (selinuxfs mounted).
pub const SELINUXFS_ENFORCE: &str = "/sys/fs/selinux/enforce";

const CONTEXT_ALLOWED: &str = "allowed: an SELinux context user:role:type[:level], e.g. \
     system_u:system_r:container_t:s0 (letters, digits, _ . , - and :, no spaces or quotes)";

/// The drop-in's system path.
pub fn dropin_path() -> PathBuf {
    Path::new(crate::sys::paths::UNIT_DIR)
        .join(format!("{SERVICE_TEMPLATE}.d"))
        .join(DROPIN_NAME)
}

/// `user:role:type` and an optional MLS/MCS level (`s0`, `s0:c1,c2`, `s0-s0:c0.c1023`).
/// Nothing that could end the `Environment=` value, start a new line or be expanded by
/// systemd (`"`, `\`, `$`, `%`, whitespace) can pass.
pub fn validate_context(field: &'static str, value: &str) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidArgument {
        field,
        value: value.to_owned(),
        reason: format!("{reason}; {CONTEXT_ALLOWED}"),
    };
    if value.len() > 255 {
        return Err(invalid("longer than 255 characters"));
    }
    let mut parts = value.splitn(4, ':');
    for part in ["user", "role", "type"] {
        match parts.next() {
            Some(p)
                if !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {}
            _ => return Err(invalid(&format!("no valid SELinux {part}"))),
        }
    }
    if let Some(level) = parts.next() {
        let ok = !level.is_empty()
            && level
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.,:-".contains(&b));
        if !ok {
            return Err(invalid("no valid SELinux level after the type"));
        }
    }
    Ok(())
}

/// The drop-in's exact content.
pub fn dropin(context: &str, apifs_context: &str) -> String {
    format!(
        "{header}\
# SELinux labels for systemd-nspawn (clone-army host selinux): container-selinux's domain
# for the clones' processes and its file type for the API file systems nspawn mounts.
[Service]
Environment=\"{ENV_VAR}=--selinux-context={context} --selinux-apifs-context={apifs_context}\"
",
        header = header()
    )
}

pub struct SelinuxRequest<'a> {
    pub context: &'a str,
    pub apifs_context: &'a str,
    pub check: bool,
}

/// Writes the drop-in (and reloads systemd when it changed), or with `check` only says
/// whether it is in place: `not-in-place` when it is missing or different.
pub fn apply(ctx: &Context, request: &SelinuxRequest) -> Result<SelinuxDropin> {
    validate_context("context", request.context)?;
    validate_context("apifs-context", request.apifs_context)?;
    let layout = &ctx.layout;
    let path = dropin_path();
    let wanted = dropin(request.context, request.apifs_context);
    let answer = |changed| SelinuxDropin {
        dropin: path.display().to_string(),
        context: request.context.to_owned(),
        apifs_context: request.apifs_context.to_owned(),
        changed,
    };

    if request.check {
        return match read_optional(&layout.fs(&path))? {
            Some(current) if current == wanted => Ok(answer(false)),
            Some(_) => Err(Error::NotInPlace {
                what: path.display().to_string(),
                detail: format!(
                    "it does not set {ENV_VAR} to --selinux-context={} --selinux-apifs-context={}",
                    request.context, request.apifs_context
                ),
            }),
            None => Err(Error::NotInPlace {
                what: path.display().to_string(),
                detail: "it does not exist".to_owned(),
            }),
        };
    }

    // nspawn fails every clone's start when asked for a label the kernel cannot set.
    if !layout.fs(SELINUXFS_ENFORCE).exists() {
        return Err(Error::Unsupported {
            what: "host selinux".to_owned(),
            detail: format!(
                "SELinux is not enabled on this host ({SELINUXFS_ENFORCE} does not exist); \
                 without it systemd-nspawn cannot run clones with SELinux labels"
            ),
        });
    }

    let _lock = ctx.lock()?;
    let pending = crate::sys::reload::begin(layout)?;
    let changed = write_atomic(&layout.fs(&path), wanted.as_bytes(), 0o644)?;
    if changed || pending {
        ctx.systemd.daemon_reload()?;
    }
    crate::sys::reload::done(layout)?;
    Ok(answer(changed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::paths::Layout;
    use crate::systemd::RecordingSystemd;

    fn with_selinux(enforce: bool) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if enforce {
            let path = dir.path().join("sys/fs/selinux");
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(path.join("enforce"), "1").unwrap();
        }
        dir
    }

    fn request(check: bool) -> SelinuxRequest<'static> {
        SelinuxRequest {
            context: DEFAULT_CONTEXT,
            apifs_context: DEFAULT_APIFS_CONTEXT,
            check,
        }
    }

    #[test]
    fn the_dropin_sets_the_variable_execstart_expands() {
        let text = dropin(DEFAULT_CONTEXT, DEFAULT_APIFS_CONTEXT);
        let body = text.split_once('\n').unwrap().1;
        assert_eq!(
            body,
            "# SELinux labels for systemd-nspawn (clone-army host selinux): container-selinux's domain\n\
             # for the clones' processes and its file type for the API file systems nspawn mounts.\n\
             [Service]\n\
             Environment=\"CLONE_ARMY_NSPAWN_SELINUX=--selinux-context=system_u:system_r:container_t:s0 \
             --selinux-apifs-context=system_u:object_r:container_file_t:s0\"\n"
        );
        assert!(crate::systemd::units::is_ours(&text));
        assert!(crate::systemd::units::service_template().contains(&format!(" ${ENV_VAR}\n")));
        assert_eq!(
            dropin_path(),
            Path::new("/etc/systemd/system/puppet-clone-army@.service.d/60-selinux.conf")
        );
    }

    #[test]
    fn contexts_are_checked_before_anything_is_written() {
        for good in [
            DEFAULT_CONTEXT,
            DEFAULT_APIFS_CONTEXT,
            "system_u:system_r:container_t:s0:c1,c2",
            "system_u:system_r:spc_t:s0-s0:c0.c1023",
            "unconfined_u:unconfined_r:unconfined_t",
        ] {
            validate_context("context", good).unwrap();
        }
        for bad in [
            "",
            "container_t",
            "system_u:system_r",
            "system_u::container_t:s0",
            "system_u:system_r:container_t:",
            "system_u:system_r:container_t:s0 --bind=/",
            "system_u:system_r:container_t:s0\"\nExecStart=/bin/sh",
            "system_u:system_r:container_t:$HOME",
            "system_u:system_r:container_t:%i",
            "system_u:system_r:container_t:s0\\",
        ] {
            let err = validate_context("apifs-context", bad).unwrap_err();
            assert_eq!(err.kind(), "invalid-argument", "{bad:?}");
            assert_eq!(err.field(), Some("apifs-context"));
            assert!(err.to_string().contains("allowed: an SELinux context"));
        }
        let dir = with_selinux(true);
        let systemd = RecordingSystemd::default();
        let ctx = Context::new(Layout::under(dir.path()), &systemd);
        let err = apply(
            &ctx,
            &SelinuxRequest {
                context: "system_u:system_r:container_t:s0 x",
                ..request(false)
            },
        )
        .unwrap_err();
        assert_eq!(err.field(), Some("context"));
        assert!(!Layout::under(dir.path()).fs(dropin_path()).exists());
        assert!(systemd.calls().is_empty());
    }

    #[test]
    fn writes_once_reloads_once_and_then_checks_in_place() {
        let dir = with_selinux(true);
        let systemd = RecordingSystemd::default();
        let layout = Layout::under(dir.path());
        let ctx = Context::new(layout.clone(), &systemd);

        let err = apply(&ctx, &request(true)).unwrap_err();
        assert_eq!(err.kind(), "not-in-place");
        assert_eq!(err.exit_code(), 1);
        assert!(err.to_string().contains("does not exist"), "{err}");

        let first = apply(&ctx, &request(false)).unwrap();
        assert!(first.changed);
        assert_eq!(systemd.calls(), ["daemon_reload"]);
        let written = std::fs::read_to_string(layout.fs(dropin_path())).unwrap();
        assert_eq!(written, dropin(DEFAULT_CONTEXT, DEFAULT_APIFS_CONTEXT));

        let again = apply(&ctx, &request(false)).unwrap();
        assert!(!again.changed);
        assert_eq!(
            systemd.calls(),
            ["daemon_reload"],
            "no reload without a change"
        );
        assert!(!apply(&ctx, &request(true)).unwrap().changed);

        // Another level is a different drop-in: --check says so, a write replaces it.
        let other = SelinuxRequest {
            context: "system_u:system_r:container_t:s0:c1,c2",
            ..request(true)
        };
        let err = apply(&ctx, &other).unwrap_err();
        assert_eq!(err.kind(), "not-in-place");
        assert!(err.to_string().contains("s0:c1,c2"), "{err}");
        assert!(
            apply(
                &ctx,
                &SelinuxRequest {
                    check: false,
                    ..other
                }
            )
            .unwrap()
            .changed
        );
        assert_eq!(systemd.calls(), ["daemon_reload", "daemon_reload"]);
    }

    #[test]
    fn refuses_to_write_without_selinux_but_checks() {
        let dir = with_selinux(false);
        let systemd = RecordingSystemd::default();
        let ctx = Context::new(Layout::under(dir.path()), &systemd);
        let err = apply(&ctx, &request(false)).unwrap_err();
        assert_eq!(err.kind(), "unsupported");
        assert!(err.to_string().contains("/sys/fs/selinux/enforce"), "{err}");
        assert!(!Layout::under(dir.path()).fs(dropin_path()).exists());
        assert!(systemd.calls().is_empty());
        assert_eq!(
            apply(&ctx, &request(true)).unwrap_err().kind(),
            "not-in-place"
        );
    }
}
