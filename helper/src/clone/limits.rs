//! Per-clone resource limits: a drop-in for the clone's service on the host,
//! `/etc/systemd/system/puppet-clone-army@<clone>.service.d/50-limits.conf`.
//!
//! Every value is checked against a strict pattern before it can reach the file, so no
//! input can add a line or a directive to a unit.

use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{remove_dropin, write_atomic};
use crate::sys::paths::Layout;
use crate::systemd::units::{header, read_ours, refuse_foreign};

/// The limits of one clone; `None` is systemd's default (the template's, for TasksMax).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    /// Bytes, or a number with a K, M, G or T suffix (systemd's base-1024 units).
    pub memory_max: Option<String>,
    /// Percent of one CPU, e.g. `50%`.
    pub cpu_quota: Option<String>,
    pub tasks_max: Option<u64>,
}

impl Limits {
    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }
}

/// What the command line asks: `None` keeps, `Some(None)` clears (the value `none`),
/// `Some(Some(v))` sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitsChange {
    pub memory_max: Option<Option<String>>,
    pub cpu_quota: Option<Option<String>>,
    pub tasks_max: Option<Option<u64>>,
}

impl LimitsChange {
    /// Validates the flags' raw values (`none` clears a limit).
    pub fn parse(
        memory_max: Option<&str>,
        cpu_quota: Option<&str>,
        tasks_max: Option<&str>,
    ) -> Result<Self> {
        Ok(LimitsChange {
            memory_max: memory_max.map(parse_memory_max).transpose()?,
            cpu_quota: cpu_quota.map(parse_cpu_quota).transpose()?,
            tasks_max: tasks_max.map(parse_tasks_max).transpose()?,
        })
    }

    pub fn applied_to(&self, current: Limits) -> Limits {
        Limits {
            memory_max: self.memory_max.clone().unwrap_or(current.memory_max),
            cpu_quota: self.cpu_quota.clone().unwrap_or(current.cpu_quota),
            tasks_max: self.tasks_max.unwrap_or(current.tasks_max),
        }
    }
}

/// `TasksMax=` at most: the kernel's largest `pid_max`.
pub const MAX_TASKS: u64 = 4_194_304;
/// `CPUQuota=` at most, in percent of one CPU (1000 CPUs).
pub const MAX_CPU_QUOTA_PERCENT: u64 = 100_000;
/// Digits of `MemoryMax=` before its suffix, at most.
pub const MAX_MEMORY_DIGITS: usize = 15;
/// `MemoryMax=`'s suffixes (base 1024); without one the number is bytes.
pub const MEMORY_SUFFIXES: [&str; 4] = ["K", "M", "G", "T"];
/// What every limit takes for "no limit".
pub const NO_LIMIT: &str = "none";

const MEMORY_ALLOWED: &str =
    "allowed: a positive number of bytes, optionally with a K, M, G or T suffix (e.g. 512M), or none";
const CPU_ALLOWED: &str = "allowed: 1% to 100000% (percent of one CPU, e.g. 50%), or none";
const TASKS_ALLOWED: &str = "allowed: 1 to 4194304, or none";

fn invalid(field: &'static str, value: &str, reason: &str) -> Error {
    Error::InvalidArgument {
        field,
        value: value.to_owned(),
        reason: reason.to_owned(),
    }
}

/// A positive decimal with at most `max_digits` digits and no leading zero.
fn positive_decimal(digits: &str, max_digits: usize) -> Option<u64> {
    if digits.is_empty()
        || digits.len() > max_digits
        || digits.starts_with('0')
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse().ok()
}

pub fn parse_memory_max(value: &str) -> Result<Option<String>> {
    if value == NO_LIMIT {
        return Ok(None);
    }
    let digits = MEMORY_SUFFIXES
        .iter()
        .find_map(|suffix| value.strip_suffix(suffix))
        .unwrap_or(value);
    positive_decimal(digits, MAX_MEMORY_DIGITS)
        .map(|_| Some(value.to_owned()))
        .ok_or_else(|| invalid("memory-max", value, MEMORY_ALLOWED))
}

pub fn parse_cpu_quota(value: &str) -> Result<Option<String>> {
    if value == NO_LIMIT {
        return Ok(None);
    }
    value
        .strip_suffix('%')
        .and_then(|digits| positive_decimal(digits, 6))
        .filter(|percent| *percent <= MAX_CPU_QUOTA_PERCENT)
        .map(|_| Some(value.to_owned()))
        .ok_or_else(|| invalid("cpu-quota", value, CPU_ALLOWED))
}

pub fn parse_tasks_max(value: &str) -> Result<Option<u64>> {
    if value == NO_LIMIT {
        return Ok(None);
    }
    positive_decimal(value, 7)
        .filter(|n| *n <= MAX_TASKS)
        .map(Some)
        .ok_or_else(|| invalid("tasks-max", value, TASKS_ALLOWED))
}

/// Host path of the clone's limits drop-in.
pub fn dropin_path(layout: &Layout, clone: &str) -> std::path::PathBuf {
    layout.service_dropin_dir(clone).join("50-limits.conf")
}

pub fn render(limits: &Limits) -> String {
    let mut text = header();
    text.push_str("[Service]\n");
    if let Some(v) = &limits.memory_max {
        text.push_str(&format!("MemoryMax={v}\n"));
    }
    if let Some(v) = &limits.cpu_quota {
        text.push_str(&format!("CPUQuota={v}\n"));
    }
    if let Some(v) = limits.tasks_max {
        text.push_str(&format!("TasksMax={v}\n"));
    }
    text
}

/// The limits as the drop-in on disk says (none when it is missing or not ours). Values
/// are re-validated, so a hand edit shows up as an unset limit rather than as garbage.
pub fn read(layout: &Layout, clone: &str) -> Result<Limits> {
    let Some(text) = read_ours(&layout.fs(dropin_path(layout, clone)))? else {
        return Ok(Limits::default());
    };
    let mut limits = Limits::default();
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        match key {
            "MemoryMax" => limits.memory_max = parse_memory_max(value).ok().flatten(),
            "CPUQuota" => limits.cpu_quota = parse_cpu_quota(value).ok().flatten(),
            "TasksMax" => limits.tasks_max = parse_tasks_max(value).ok().flatten(),
            _ => {}
        }
    }
    Ok(limits)
}

/// Writes the drop-in, or removes it (and its directory, when empty) when no limit is
/// set. A file there that clone-army did not write is refused. Returns whether it changed.
pub fn apply(layout: &Layout, clone: &str, limits: &Limits) -> Result<bool> {
    let path = layout.fs(dropin_path(layout, clone));
    refuse_foreign(&path, "drop-in")?;
    if limits.is_empty() {
        return remove(layout, clone);
    }
    write_atomic(&path, render(limits).as_bytes(), 0o644)
}

/// Removes the drop-in and its directory when that is left empty.
pub fn remove(layout: &Layout, clone: &str) -> Result<bool> {
    remove_dropin(&layout.fs(dropin_path(layout, clone)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_name_the_limits_the_checks_use() {
        assert!(CPU_ALLOWED.contains(&format!("{MAX_CPU_QUOTA_PERCENT}%")));
        assert!(TASKS_ALLOWED.contains(&format!("1 to {MAX_TASKS},")));
        assert!(parse_tasks_max(&MAX_TASKS.to_string()).is_ok());
        assert!(parse_tasks_max(&(MAX_TASKS + 1).to_string()).is_err());
        assert!(parse_cpu_quota(&format!("{}%", MAX_CPU_QUOTA_PERCENT + 1)).is_err());
    }

    #[test]
    fn values_are_validated_strictly() {
        for ok in ["512M", "1073741824", "2G", "1T", "none"] {
            assert!(parse_memory_max(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "0",
            "512m",
            "512MB",
            "-1",
            "1G\nExecStart=/bin/sh",
            "05M",
            "M",
            "1.5G",
            " 1G",
        ] {
            assert!(parse_memory_max(bad).is_err(), "{bad:?}");
        }
        for ok in ["50%", "1%", "200%", "100000%", "none"] {
            assert!(parse_cpu_quota(ok).is_ok(), "{ok}");
        }
        for bad in ["50", "0%", "100001%", "50%%", "5 0%", "%", "50%\n"] {
            assert!(parse_cpu_quota(bad).is_err(), "{bad:?}");
        }
        for ok in ["1", "4096", "4194304", "none"] {
            assert!(parse_tasks_max(ok).is_ok(), "{ok}");
        }
        for bad in ["0", "4194305", "infinity", "-5", "12k", ""] {
            assert!(parse_tasks_max(bad).is_err(), "{bad:?}");
        }
        match parse_cpu_quota("50") {
            Err(Error::InvalidArgument { field, reason, .. }) => {
                assert_eq!(field, "cpu-quota");
                assert!(reason.starts_with("allowed: "), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dropin_snapshot() {
        let limits = Limits {
            memory_max: Some("512M".into()),
            cpu_quota: Some("50%".into()),
            tasks_max: Some(4096),
        };
        insta::assert_snapshot!(render(&limits).replace(env!("CARGO_PKG_VERSION"), "[version]"));
    }

    #[test]
    fn written_read_back_and_removed_when_all_unset() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let limits = Limits {
            memory_max: Some("512M".into()),
            cpu_quota: None,
            tasks_max: Some(100),
        };
        assert!(apply(&layout, "c1", &limits).unwrap());
        assert!(!apply(&layout, "c1", &limits).unwrap());
        assert_eq!(read(&layout, "c1").unwrap(), limits);
        let path = layout.fs(dropin_path(&layout, "c1"));
        assert!(path.ends_with("etc/systemd/system/puppet-clone-army@c1.service.d/50-limits.conf"));
        assert!(apply(&layout, "c1", &Limits::default()).unwrap());
        assert!(!path.exists());
        assert!(!path.parent().unwrap().exists());
        assert_eq!(read(&layout, "c1").unwrap(), Limits::default());
        assert!(!apply(&layout, "c1", &Limits::default()).unwrap());
    }
}
