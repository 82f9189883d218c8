//! What every base needs once its installer is done, whatever built it.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use crate::base::fact_cache::fact_cache;
use crate::base::lean_boot::lean_boot;
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{ensure_symlink, read_optional, remove_dir_all, write_atomic};
use crate::systemd::units::header;

/// Where AIO agents (PE's included) look for the CA certificate; `install.bash` finds the
/// CA here and the clones' agents verify the server with it from their first run.
pub const AIO_LOCAL_CA: &str = "/etc/puppetlabs/puppet/ssl/certs/ca.pem";

/// What every base needs, whatever built it:
/// - root directory 0755 (a 0700 root makes dbus inside the clone fail with EACCES),
/// - an empty `/etc/machine-id`, so each clone gets its own at boot,
/// - no root password,
/// - no agent SSL state (each clone gets its own key and certificate); only a CA
///   certificate the build put at the AIO agent's `localcacert` on purpose (PE) is kept,
/// - the agent service enabled, so each clone runs the agent daemon,
/// - journald bounded (see [`JOURNALD_DROPIN`]),
/// - Facter's fact cache on for the facts no running clone can change (see [`fact_cache`]),
/// - no boot work a clone never needs: `/etc` and `/var` stamped current with `/usr`,
///   generators for disks, firmware and boot loaders masked (see [`lean_boot`]).
pub fn finish_rootfs(rootfs: &Path) -> Result<()> {
    fs::set_permissions(rootfs, fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io("set the mode of", rootfs, e))?;
    write_atomic(&rootfs.join("etc/machine-id"), b"", 0o444)?;
    lock_root_password(&rootfs.join("etc/shadow"))?;
    remove_dir_all(&rootfs.join("var/lib/puppet/ssl"))?;
    let aio_ca = rootfs.join(AIO_LOCAL_CA.trim_start_matches('/'));
    let kept_ca = read_optional(&aio_ca)?;
    remove_dir_all(&rootfs.join("etc/puppetlabs/puppet/ssl"))?;
    if let Some(ca) = kept_ca {
        write_atomic(&aio_ca, ca.as_bytes(), 0o644)?;
    }
    enable_agent_service(rootfs)?;
    write_atomic(
        &rootfs.join(JOURNALD_DROPIN),
        journald_dropin().as_bytes(),
        0o644,
    )?;
    fact_cache(rootfs)?;
    lean_boot(rootfs)
}

/// Every clone runs its own journald, which keeps a persistent journal in the clone's
/// upper layer. Its default cap is 10 % of the file system, up to 4 GiB, for each
/// clone: a fleet of hundreds left running for days would fill the disk with logs no
/// one reads (and each journal starts at 8 MiB). A drop-in beside the distribution's
/// `journald.conf` (left untouched) caps each clone at 8 MiB on disk, in files of 2 MiB
/// (the oldest go first), and at 4 MiB in `/run` (memory) before the journal moves to
/// disk at boot.
pub const JOURNALD_DROPIN: &str = "etc/systemd/journald.conf.d/50-clone-army.conf";

fn journald_dropin() -> String {
    format!(
        "{}[Journal]\nSystemMaxUse=8M\nSystemMaxFileSize=2M\nRuntimeMaxUse=4M\n",
        header()
    )
}

/// Makes sure root's password field is locked (`*` or starting with `!`).
fn lock_root_password(shadow: &Path) -> Result<()> {
    let Some(text) = read_optional(shadow)? else {
        return Ok(());
    };
    let mut changed = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut fields: Vec<&str> = line.split(':').collect();
            if fields.first() == Some(&"root") && fields.len() > 1 {
                let password = fields[1];
                if password != "*" && !password.starts_with('!') {
                    fields[1] = "*";
                    changed = true;
                }
            }
            fields.join(":")
        })
        .collect();
    if changed {
        // Keep the distribution's mode and owner: 0640 root:shadow on Debian, 0000 on RHEL.
        let meta = fs::metadata(shadow).map_err(|e| Error::io("inspect", shadow, e))?;
        write_atomic(
            shadow,
            (lines.join("\n") + "\n").as_bytes(),
            meta.mode() & 0o7777,
        )?;
        std::os::unix::fs::chown(shadow, Some(meta.uid()), Some(meta.gid()))
            .map_err(|e| Error::io("set the owner of", shadow, e))?;
    }
    Ok(())
}

/// `puppet.service` enabled the way `systemctl enable` would: a symlink in the
/// `.wants` directory of its `WantedBy=` target.
fn enable_agent_service(rootfs: &Path) -> Result<()> {
    let candidates = [
        "/lib/systemd/system/puppet.service",
        "/usr/lib/systemd/system/puppet.service",
    ];
    let Some(unit) = candidates
        .iter()
        .find(|c| rootfs.join(c.trim_start_matches('/')).is_file())
    else {
        return Err(Error::CommandFailed {
            program: "base build".to_owned(),
            detail: "the base has no puppet.service: was the agent package installed?".to_owned(),
            output: None,
        });
    };
    let text = read_optional(&rootfs.join(unit.trim_start_matches('/')))?.unwrap_or_default();
    let wanted_by = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("WantedBy="))
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or("multi-user.target")
        .to_owned();
    let link = rootfs
        .join("etc/systemd/system")
        .join(format!("{wanted_by}.wants"))
        .join("puppet.service");
    ensure_symlink(&link, Path::new(unit))?;
    Ok(())
}
