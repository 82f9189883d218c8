//! Boot work a clone never needs, left out of every base so that each of a fleet's
//! boots costs less CPU: on a host booting a hundred clones at once, CPU is what a boot
//! waits for.
//!
//! **Update stamps.** systemd runs a handful of units only when `/usr` is newer than the
//! stamp file `/etc/.updated` or `/var/.updated` (`ConditionNeedsUpdate=`):
//! `ldconfig.service`, `systemd-sysusers.service`,
//! `systemd-journal-catalog-update.service`, `systemd-hwdb-update.service` and
//! `systemd-update-done.service`, which then writes the stamps (which of them a
//! distribution ships varies: Debian 12 has only sysusers). A freshly built root has
//! none, so every clone ran them all on its first boot, each in its own upper layer (on
//! Debian 13, a quarter of the CPU a clone's boot took), rebuilding what the package
//! manager had already built in the base (the linker cache, the journal's catalog, the
//! system users). The stamps are written as `systemd-update-done` writes them: the
//! file's modification time is `/usr`'s, and `TIMESTAMP_NSEC=` holds it for file
//! systems without nanosecond times. A clone whose `/usr` later changes has a newer
//! `/usr` than the stamps and runs the units again, as any host does after an upgrade.
//!
//! **Generators.** systemd runs every generator at each boot, each a program of its
//! own. Those in [`NEVER_IN_A_CLONE`] act only on a machine's own disks, firmware, boot
//! loader or kernel command line, none of which a container has; they are masked the
//! way systemd.generator(7) describes, a link to `/dev/null` in
//! `/etc/systemd/system-generators/`. Generators a user's base may rely on (fstab,
//! getty, rc-local, SysV scripts) still run.
//!
//! **Timers.** A distribution's housekeeping timers fire in every clone: a thousand
//! clones would each fetch package lists, upgrade packages, back up the package
//! database into their upper layer and rebuild the manual's index every day, at times
//! of their own, which is load the test did not ask for and the base's packages
//! drifting clone by clone. Those in [`HOUSEKEEPING_TIMERS`] are masked (a link to
//! `/dev/null` in `/etc/systemd/system/`); the clone's own upkeep (`logrotate`,
//! `systemd-tmpfiles-clean`) and the agent's timers stay.
//!
//! **Idle services.** Some units a host needs serve no one in a clone: nobody logs in
//! on its console or through a seat, and it has no huge pages or FUSE of its own to
//! mount. Those in [`IDLE_IN_A_CLONE`] are masked the same way. D-Bus stays:
//! `clone-army exec` and `systemctl --machine` reach a clone through it.
//!
//! **Static device nodes.** `systemd-nspawn` gives a clone its `/dev`, with the nodes a
//! container may have. The units in [`STATIC_DEV_NODES`] would create the static nodes
//! of the machine's kernel modules and packages in `/dev`; in a container they find
//! nothing to create (the kernel modules' list comes from `kmod-static-nodes.service`,
//! which a container skips), yet each still costs a process at every boot. They are
//! masked the same way.

use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{ensure_symlink, write_atomic};

/// Generators with nothing to do in a container: a clone has no disk of its own to
/// discover or unlock (gpt-auto, cryptsetup, veritysetup, integritysetup), no firmware,
/// TPM or boot loader (tpm2, bless-boot, hibernate-resume), and no kernel command line
/// of its own (debug, run): nspawn passes the clone's systemd no arguments. A clone
/// never boots into an offline update (system-update).
const NEVER_IN_A_CLONE: [&str; 10] = [
    "systemd-bless-boot-generator",
    "systemd-cryptsetup-generator",
    "systemd-debug-generator",
    "systemd-gpt-auto-generator",
    "systemd-hibernate-resume-generator",
    "systemd-integritysetup-generator",
    "systemd-run-generator",
    "systemd-system-update-generator",
    "systemd-tpm2-generator",
    "systemd-veritysetup-generator",
];

/// Timers that keep a machine's packages and disks, not a clone's: package lists and
/// upgrades (apt-daily, apt-daily-upgrade, dnf-makecache), the dpkg database backup,
/// the manual's index (man-db), filesystem scrubs and trims of disks a clone does not
/// have (e2scrub_all, fstrim), and Ubuntu's news fetched for the login banner
/// (motd-news).
const HOUSEKEEPING_TIMERS: [&str; 8] = [
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "dnf-makecache.timer",
    "dpkg-db-backup.timer",
    "e2scrub_all.timer",
    "fstrim.timer",
    "man-db.timer",
    "motd-news.timer",
];

/// Units that start at every boot and then only wait for someone a clone never has:
/// logind tracks users and seats (no one logs in to a clone: `machinectl shell` and
/// `clone-army exec` start their own units, and the Debian bases have no
/// `pam_systemd` to ask logind for a session), the console getty prompts on a console
/// nobody reads, and the two mounts serve huge pages and FUSE, which a clone's agent
/// uses neither of. logind was the costliest unit of a clone's boot after journald.
const IDLE_IN_A_CLONE: [&str; 4] = [
    "console-getty.service",
    "dev-hugepages.mount",
    "sys-fs-fuse-connections.mount",
    "systemd-logind.service",
];

/// The services that create static device nodes in `/dev` at boot (the early one is the
/// newer: Debian 12's systemd has only the other).
const STATIC_DEV_NODES: [&str; 2] = [
    "systemd-tmpfiles-setup-dev-early.service",
    "systemd-tmpfiles-setup-dev.service",
];

/// Where distributions install generators (every supported one has a merged or
/// `/usr/lib`-based layout).
const GENERATORS: &str = "usr/lib/systemd/system-generators";

/// Where a link to `/dev/null` masks a generator.
const MASKED_GENERATORS: &str = "etc/systemd/system-generators";

/// Where packages install units (merged or `/usr/lib`-based, as for generators).
const UNITS: &str = "usr/lib/systemd/system";

/// Where a link to `/dev/null` masks a unit.
const MASKED_UNITS: &str = "etc/systemd/system";

/// Leaves the boot work above out of `rootfs`. Runs last among the finishing steps: the
/// stamps carry `/usr`'s time, and nothing here or before writes directly in `/usr`.
pub fn lean_boot(rootfs: &Path) -> Result<()> {
    mask_present(rootfs, &NEVER_IN_A_CLONE, GENERATORS, MASKED_GENERATORS)?;
    mask_present(rootfs, &HOUSEKEEPING_TIMERS, UNITS, MASKED_UNITS)?;
    mask_present(rootfs, &IDLE_IN_A_CLONE, UNITS, MASKED_UNITS)?;
    mask_present(rootfs, &STATIC_DEV_NODES, UNITS, MASKED_UNITS)?;
    write_update_stamps(rootfs)
}

/// Masks those of `names` the base has in `installed`, with a link in `masks` (a mask
/// for something the base lacks would only puzzle whoever looks).
fn mask_present(rootfs: &Path, names: &[&str], installed: &str, masks: &str) -> Result<()> {
    for name in names {
        if rootfs.join(installed).join(name).exists() {
            ensure_symlink(&rootfs.join(masks).join(name), Path::new("/dev/null"))?;
        }
    }
    Ok(())
}

/// The directories systemd keeps a stamp in, relative to the root.
const STAMPED: [&str; 2] = ["etc", "var"];

/// systemd rewrites a stamp after each update, so the file is not clone-army's to
/// manage: it only says who wrote the first one.
const STAMP_COMMENT: &str =
    "# Written by clone-army when the base was built: /etc and /var are current\n\
# with /usr. systemd-update-done.service(8) rewrites it after /usr changes.\n";

/// Writes `etc/.updated` and `var/.updated` in `rootfs` with the time of its `usr`.
fn write_update_stamps(rootfs: &Path) -> Result<()> {
    let usr = rootfs.join("usr");
    let usr_time = fs::symlink_metadata(&usr)
        .and_then(|m| m.modified())
        .map_err(|e| Error::io("read the modification time of", &usr, e))?;
    let nsec = nanoseconds_since_epoch(usr_time, &usr)?;
    let content = format!("{STAMP_COMMENT}TIMESTAMP_NSEC={nsec}\n");
    for dir in STAMPED {
        let stamp = rootfs.join(dir).join(".updated");
        write_atomic(&stamp, content.as_bytes(), 0o644)?;
        fs::File::options()
            .write(true)
            .open(&stamp)
            .and_then(|f| f.set_modified(usr_time))
            .map_err(|e| Error::io("set the modification time of", &stamp, e))?;
    }
    Ok(())
}

fn nanoseconds_since_epoch(time: SystemTime, path: &Path) -> Result<u128> {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .map_err(|_| {
            Error::Internal(format!(
                "{} is dated before 1970; the base's clock was wrong when it was built",
                path.display()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    #[test]
    fn stamps_carry_the_time_of_usr() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["usr", "etc", "var"] {
            fs::create_dir(root.join(d)).unwrap();
        }
        // A time with nanoseconds, as the build leaves it, set after /usr's last entry.
        let usr_time = UNIX_EPOCH + Duration::new(1_795_739_199, 823_072_063);
        fs::File::open(root.join("usr"))
            .unwrap()
            .set_modified(usr_time)
            .unwrap();

        lean_boot(root).unwrap();

        for d in STAMPED {
            let stamp = root.join(d).join(".updated");
            let text = fs::read_to_string(&stamp).unwrap();
            assert_eq!(
                text,
                format!("{STAMP_COMMENT}TIMESTAMP_NSEC=1795739199823072063\n")
            );
            let meta = fs::metadata(&stamp).unwrap();
            assert_eq!(meta.modified().unwrap(), usr_time, "{}", stamp.display());
            assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
        }
        // Writing the stamps left /usr's own time alone.
        assert_eq!(
            fs::metadata(root.join("usr")).unwrap().modified().unwrap(),
            usr_time
        );
    }

    /// Each entry of `dir` by name, with where it links to (`None`: not a link), sorted.
    fn entries(dir: &Path) -> Vec<(String, Option<std::path::PathBuf>)> {
        let mut found: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    fs::read_link(e.path()).ok(),
                )
            })
            .collect();
        found.sort();
        found
    }

    fn masked(name: &str) -> (String, Option<std::path::PathBuf>) {
        (name.to_owned(), Some("/dev/null".into()))
    }

    #[test]
    fn only_the_generators_the_base_has_and_a_clone_never_needs_are_masked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let generators = root.join(GENERATORS);
        fs::create_dir_all(&generators).unwrap();
        fs::create_dir(root.join("etc")).unwrap();
        fs::create_dir(root.join("var")).unwrap();
        for g in [
            "systemd-gpt-auto-generator",
            "systemd-tpm2-generator",
            "systemd-fstab-generator",
            "systemd-getty-generator",
            "systemd-sysv-generator",
        ] {
            fs::write(generators.join(g), "").unwrap();
        }

        lean_boot(root).unwrap();

        assert_eq!(
            entries(&root.join(MASKED_GENERATORS)),
            [
                masked("systemd-gpt-auto-generator"),
                masked("systemd-tpm2-generator"),
            ]
        );
        // Masking wrote nothing in /usr, so the stamps still carry its time.
        let usr_time = fs::metadata(root.join("usr")).unwrap().modified().unwrap();
        let stamp_time = fs::metadata(root.join("etc/.updated"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(stamp_time, usr_time);
    }

    /// A root with `usr`, `etc/systemd/system` and `var`, and the given units installed.
    fn root_with_units(units: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(UNITS)).unwrap();
        fs::create_dir_all(root.join(MASKED_UNITS)).unwrap();
        fs::create_dir(root.join("var")).unwrap();
        for unit in units {
            fs::write(root.join(UNITS).join(unit), "[Unit]\n").unwrap();
        }
        dir
    }

    #[test]
    fn only_the_housekeeping_timers_the_base_has_are_masked() {
        let dir = root_with_units(&[
            "apt-daily.timer",
            "apt-daily-upgrade.timer",
            "dpkg-db-backup.timer",
            "logrotate.timer",
            "systemd-tmpfiles-clean.timer",
        ]);
        let root = dir.path();
        // A unit the base's own packages or its admin put in /etc stays as it is.
        fs::write(root.join(MASKED_UNITS).join("local.timer"), "[Timer]\n").unwrap();

        lean_boot(root).unwrap();

        assert_eq!(
            entries(&root.join(MASKED_UNITS)),
            [
                masked("apt-daily-upgrade.timer"),
                masked("apt-daily.timer"),
                masked("dpkg-db-backup.timer"),
                ("local.timer".to_owned(), None),
            ]
        );
        // Building the same base again changes nothing.
        lean_boot(root).unwrap();
        assert_eq!(fs::read_dir(root.join(MASKED_UNITS)).unwrap().count(), 4);
    }

    #[test]
    fn idle_units_and_static_device_nodes_are_masked_but_not_the_bus() {
        let dir = root_with_units(&[
            "console-getty.service",
            "dbus.service",
            "dev-hugepages.mount",
            "systemd-journald.service",
            "systemd-logind.service",
            "systemd-tmpfiles-setup-dev.service",
            "systemd-tmpfiles-setup.service",
        ]);
        let root = dir.path();

        lean_boot(root).unwrap();

        // The base has no FUSE mount unit and no early device-node service (an older
        // systemd), so none is masked; the tmpfiles setup outside /dev still runs.
        assert_eq!(
            entries(&root.join(MASKED_UNITS)),
            [
                masked("console-getty.service"),
                masked("dev-hugepages.mount"),
                masked("systemd-logind.service"),
                masked("systemd-tmpfiles-setup-dev.service"),
            ]
        );
    }

    #[test]
    fn a_root_without_usr_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("etc")).unwrap();
        let error = lean_boot(dir.path()).unwrap_err().to_string();
        assert!(error.contains("usr"), "{error}");
        assert!(!dir.path().join("etc/.updated").exists());
    }
}
