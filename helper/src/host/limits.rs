//! Kernel limits a large fleet needs, and the host's capacity for clones.
//!
//! Every booted clone runs its own systemd, journald, logind and dbus, and they take
//! inotify instances and watches, kernel keys and tasks from the host's per-user (root)
//! and system-wide budgets. Measured (README, "Kernel limits"): with the default
//! `fs.inotify.max_user_instances = 128` only about 20 of 150 clones booted (the rest died
//! with "Failed to allocate manager object: Too many open files"); with 8192 instances
//! and 1048576 watches, 500 of 500 booted. Published nspawn fleets stopped at about
//! 100-120 containers on tasks (`kernel.pid_max`, systemd issue 7879), open files and
//! inotify (systemd issue 17992) and kernel keys (`kernel.keys.maxkeys`/`maxbytes`,
//! "Disk quota exceeded" when joining a session keyring, sysbox issue 332).
//!
//! These budgets are per user, and without user namespaces a clone's users are the
//! host's: the `messagebus` dbus-daemon of every clone is one host uid, so 500 clones
//! share one uid's inotify instances and kernel-key quota (`kernel.keys.maxkeys`
//! applies to every uid but root, which has `root_maxkeys`).
//!
//! `clone create` and `clone start` make sure `/etc/sysctl.d/60-puppet-clone-army.conf`
//! holds the values (so they survive a reboot) and raise the running kernel's values
//! through `/proc/sys` where they are lower. Never lowering: a value already higher is
//! kept, in the kernel and in the file. Where `/proc/sys` is read-only (inside a
//! container, e.g. a sandbox host) the verb does not fail: each limit it could not apply
//! is a warning on stderr and an entry with `applied: false` in the result, so the
//! caller learns why clones beyond the cap will not boot instead of guessing later.

use std::path::{Path, PathBuf};

pub use crate::protocol::answers::{Capacity, HostReport, LimitStatus};
use crate::sys::fsutil::{read_optional, write_atomic};
use crate::sys::paths::Layout;
use crate::systemd::units::{header, is_ours};

pub const SYSCTL_FILE: &str = "/etc/sysctl.d/60-puppet-clone-army.conf";
pub const PROC_SYS: &str = "/proc/sys";
pub const MEMINFO: &str = "/proc/meminfo";

/// One kernel limit: its sysctl name, the value a large fleet needs, and about how much
/// of it one booted clone takes (an estimate, for saying which fleet size a lower value caps).
pub struct KernelLimit {
    pub name: &'static str,
    pub wanted: u64,
    pub per_clone: u64,
}

pub const LIMITS: &[KernelLimit] = &[
    // 128 held about 20 booted clones here: about 6 per clone.
    KernelLimit {
        name: "fs.inotify.max_user_instances",
        wanted: 8192,
        per_clone: 6,
    },
    KernelLimit {
        name: "fs.inotify.max_user_watches",
        wanted: 1_048_576,
        per_clone: 1000,
    },
    // Each service systemd starts in a clone gets its own session keyring.
    KernelLimit {
        name: "kernel.keys.maxkeys",
        wanted: 5000,
        per_clone: 10,
    },
    KernelLimit {
        name: "kernel.keys.maxbytes",
        wanted: 5_000_000,
        per_clone: 10_000,
    },
    // 500 idle clones were 2571 processes here; an agent run adds its Ruby threads.
    KernelLimit {
        name: "kernel.pid_max",
        wanted: 4_194_304,
        per_clone: 32,
    },
    KernelLimit {
        name: "fs.file-max",
        wanted: 1_048_576,
        per_clone: 500,
    },
];

/// `/proc/sys/fs/inotify/max_user_instances` for `fs.inotify.max_user_instances`.
pub fn proc_path(name: &str) -> PathBuf {
    Path::new(PROC_SYS).join(name.replace('.', "/"))
}

fn read_value(path: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    text.split_whitespace()
        .next()
        .and_then(|v| v.parse::<u64>().ok())
        .ok_or_else(|| format!("not a number: {:?}", text.trim()))
}

/// Reads every limit without changing anything.
pub fn read(layout: &Layout) -> Vec<LimitStatus> {
    LIMITS
        .iter()
        .map(|limit| {
            let path = layout.fs(proc_path(limit.name));
            match read_value(&path) {
                Ok(current) => status(limit, Some(current), current >= limit.wanted, None),
                Err(e) => status(
                    limit,
                    None,
                    false,
                    Some(format!("cannot read {}: {e}", path.display())),
                ),
            }
        })
        .collect()
}

fn status(
    limit: &KernelLimit,
    current: Option<u64>,
    applied: bool,
    error: Option<String>,
) -> LimitStatus {
    LimitStatus {
        name: limit.name.to_owned(),
        current,
        wanted: limit.wanted,
        applied,
        caps_clones: current
            .filter(|&c| c < limit.wanted)
            .map(|c| c / limit.per_clone),
        error,
    }
}

/// The sysctl.d file: each limit at the higher of what a fleet needs and what the
/// kernel has now, so that the file never lowers a value at the next boot.
pub fn sysctl_file(current: &[LimitStatus]) -> String {
    let mut text = header();
    text.push_str(
        "# Kernel limits for a large fleet of puppet-agent clones (systemd-nspawn);\n\
         # never lower than what the host had when clone-army wrote this file.\n",
    );
    for limit in LIMITS {
        let had = current
            .iter()
            .find(|s| s.name == limit.name)
            .and_then(|s| s.current)
            .unwrap_or(0);
        text.push_str(&format!("{} = {}\n", limit.name, limit.wanted.max(had)));
    }
    text
}

/// Writes the sysctl.d file and raises the running kernel's values where lower. Never
/// fails: what could not be done is a warning on stderr and in the answer.
pub fn ensure(layout: &Layout) -> Vec<LimitStatus> {
    let mut statuses = read(layout);
    let file = layout.fs(SYSCTL_FILE);
    let file_error = match read_optional(&file) {
        Ok(Some(text)) if !is_ours(&text) => Some(format!(
            "{} exists and was not written by clone-army; left as it is",
            file.display()
        )),
        Ok(_) => write_atomic(&file, sysctl_file(&statuses).as_bytes(), 0o644)
            .err()
            .map(|e| e.to_string()),
        Err(e) => Some(e.to_string()),
    };
    if let Some(error) = file_error {
        crate::protocol::warnings::warn(format!(
            "kernel limits will not persist across a reboot: {error}"
        ));
    }
    for (limit, status) in LIMITS.iter().zip(statuses.iter_mut()) {
        let Some(current) = status.current else {
            continue;
        };
        if current >= limit.wanted {
            continue;
        }
        let path = layout.fs(proc_path(limit.name));
        match std::fs::write(&path, format!("{}\n", limit.wanted)) {
            Ok(()) => {
                status.applied = read_value(&path).is_ok_and(|v| v >= limit.wanted);
                if !status.applied {
                    status.error = Some(format!("{} did not take the value", path.display()));
                }
            }
            Err(e) => status.error = Some(format!("cannot write {}: {e}", path.display())),
        }
    }
    for status in statuses.iter().filter(|s| !s.applied) {
        crate::protocol::warnings::warn(warning(status));
    }
    statuses
}

/// One line naming the limit, its current and needed value and the fleet size it caps.
pub fn warning(status: &LimitStatus) -> String {
    let current = status
        .current
        .map_or_else(|| "unknown".to_owned(), |c| c.to_string());
    let caps = status.caps_clones.map_or_else(String::new, |n| {
        format!("; it holds about {n} booted clones")
    });
    format!(
        "kernel limit {} is {current}, a large fleet needs {}{caps}; raise it on the host \
         (sysctl -w {}={}): {}",
        status.name,
        status.wanted,
        status.name,
        status.wanted,
        status.error.as_deref().unwrap_or("not applied"),
    )
}

// --- capacity --------------------------------------------------------------------------------

const MIB: u64 = 1024 * 1024;
/// Memory kept for the host itself: the OS and the host's own Puppet agent.
pub const RESERVE_BYTES: u64 = 2 * 1024 * MIB;
/// What one clone costs, per run mode; `clone-army schema` gives these to the Puppet side
/// (the `clone_army` fact). The figures come from measurements (README, "Measured
/// here"): an idle agent daemon in a clone is about 58-68 MB PSS, a booted clone without
/// it (systemd, journald, dbus, logind) about 9 MB, its systemd-nspawn supervisor about
/// 2.7 MB, and one agent run peaks at about 100 MB. A daemon clone is given its peak,
/// since every clone may run at once; a timer clone its idle size and a share of a run.
pub const DAEMON_COST_BYTES: u64 = 100 * MIB;
pub const TIMER_COST_BYTES: u64 = 20 * MIB;

/// The CPU one agent run takes in a clone, in CPU-seconds: the median the benchmark
/// measured for the module's own workload (2.3–2.4 CPU-s, rounded up). A role with
/// hundreds of resources costs more; the class takes the figure as a parameter.
pub const CPU_SECONDS_PER_RUN: f64 = 2.5;
/// The share of the host's cores the fleet's periodic runs may take by default: the
/// rest is the clones' systemd, the nspawn supervisors and the host's own work, so
/// that run times measure the server, not a saturated load host.
pub const DEFAULT_CPU_SHARE_PERCENT: u64 = 75;

/// floor((MemTotal − 2 GiB) / cost), the formula of the `clone_army` fact.
pub fn capacity(total_bytes: u64) -> Capacity {
    let usable = total_bytes.saturating_sub(RESERVE_BYTES);
    Capacity {
        daemon: usable / DAEMON_COST_BYTES,
        timer: usable / TIMER_COST_BYTES,
    }
}

/// `MemTotal` of a meminfo text, in bytes.
pub fn parse_mem_total(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemTotal:")?;
        let mut words = rest.split_whitespace();
        let value: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") | None => Some(value * 1024),
            _ => None,
        }
    })
}

pub fn report(layout: &Layout) -> HostReport {
    let meminfo = layout.fs(MEMINFO);
    let (total, memory_error) = match std::fs::read_to_string(&meminfo) {
        Ok(text) => match parse_mem_total(&text) {
            Some(total) => (Some(total), None),
            None => (None, Some(format!("no MemTotal in {}", meminfo.display()))),
        },
        Err(e) => (
            None,
            Some(format!("cannot read {}: {e}", meminfo.display())),
        ),
    };
    let sysctl_file_present = matches!(
        read_optional(&layout.fs(SYSCTL_FILE)),
        Ok(Some(text)) if is_ours(&text)
    );
    HostReport {
        limits: read(layout),
        sysctl_file: SYSCTL_FILE.to_owned(),
        sysctl_file_present,
        dbus_file: crate::host::bus::DBUS_DROPIN.to_owned(),
        dbus_file_present: crate::host::bus::present(layout),
        memory_total_bytes: total,
        capacity: total.map(capacity),
        memory_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_tree(values: &[(&str, u64)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, value) in values {
            let path = dir.path().join(proc_path(name).strip_prefix("/").unwrap());
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("{value}\n")).unwrap();
        }
        dir
    }

    fn value(dir: &Path, name: &str) -> u64 {
        read_value(&dir.join(proc_path(name).strip_prefix("/").unwrap())).unwrap()
    }

    #[test]
    fn raises_low_limits_and_keeps_higher_ones() {
        let dir = proc_tree(&[
            ("fs.inotify.max_user_instances", 128),
            ("fs.inotify.max_user_watches", 2_000_000),
            ("kernel.keys.maxkeys", 200),
            ("kernel.keys.maxbytes", 20000),
            ("kernel.pid_max", 4_194_304),
            ("fs.file-max", 9_223_372_036_854_775_807),
        ]);
        let layout = Layout::under(dir.path());
        let statuses = ensure(&layout);
        assert!(statuses.iter().all(|s| s.applied && s.error.is_none()));
        assert_eq!(value(dir.path(), "fs.inotify.max_user_instances"), 8192);
        assert_eq!(value(dir.path(), "fs.inotify.max_user_watches"), 2_000_000);
        assert_eq!(value(dir.path(), "kernel.keys.maxkeys"), 5000);
        let first = &statuses[0];
        assert_eq!(first.current, Some(128));
        assert_eq!(first.caps_clones, Some(21));
        let file = std::fs::read_to_string(dir.path().join(&SYSCTL_FILE[1..])).unwrap();
        assert!(is_ours(&file), "{file}");
        assert!(file.contains("\nfs.inotify.max_user_instances = 8192\n"));
        // Never lower in the file either.
        assert!(file.contains("\nfs.inotify.max_user_watches = 2000000\n"));
        assert!(file.contains("\nfs.file-max = 9223372036854775807\n"));
        // Again: nothing to raise.
        let again = ensure(&layout);
        assert!(again.iter().all(|s| s.applied && s.caps_clones.is_none()));
    }

    #[test]
    fn read_only_proc_sys_warns_instead_of_failing() {
        let dir = proc_tree(&[("fs.inotify.max_user_instances", 128)]);
        // A directory in place of the file: writing fails as on a read-only /proc/sys,
        // even for root, who ignores file modes.
        let blocked = dir.path().join("proc/sys/kernel/keys/maxkeys");
        std::fs::create_dir_all(&blocked).unwrap();
        let layout = Layout::under(dir.path());
        let statuses = ensure(&layout);
        let inotify = &statuses[0];
        assert!(inotify.applied);
        let keys = statuses
            .iter()
            .find(|s| s.name == "kernel.keys.maxkeys")
            .unwrap();
        assert!(!keys.applied);
        assert_eq!(keys.current, None);
        assert!(keys.error.as_deref().unwrap().contains("maxkeys"));
        let line = warning(&LimitStatus {
            name: "fs.inotify.max_user_instances".to_owned(),
            current: Some(128),
            wanted: 8192,
            applied: false,
            caps_clones: Some(21),
            error: Some("cannot write /proc/sys/fs/inotify/max_user_instances: Read-only file system (os error 30)".to_owned()),
        });
        assert!(
            line.contains("is 128, a large fleet needs 8192; it holds about 21 booted clones"),
            "{line}"
        );
        assert!(line.contains("Read-only file system"), "{line}");
    }

    #[test]
    fn a_foreign_sysctl_file_is_left_alone() {
        let dir = proc_tree(&[("kernel.pid_max", 32768)]);
        let file = dir.path().join(&SYSCTL_FILE[1..]);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "kernel.pid_max = 99999\n").unwrap();
        ensure(&Layout::under(dir.path()));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "kernel.pid_max = 99999\n"
        );
    }

    #[test]
    fn capacity_is_the_facts_formula() {
        let gib = 1024 * MIB;
        assert_eq!(
            capacity(24 * gib),
            Capacity {
                daemon: 225,
                timer: 1126
            }
        );
        assert_eq!(
            capacity(gib),
            Capacity {
                daemon: 0,
                timer: 0
            }
        );
        assert_eq!(
            parse_mem_total("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24_576_000 * 1024)
        );
        assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
    }
}
