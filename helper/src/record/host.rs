//! The load host's own figures in a sample: load average, memory and CPU, from `/proc`.
//!
//! CPU use is a rate, so a reading keeps the kernel's cumulative counters and the sample
//! gives the busy share between two readings: of all CPUs, and of each. Where the Puppet
//! Server and the clones run on CPUs of their own (the lab pins them), each CPU's share
//! tells whose CPU was busy, which `/proc/stat`'s total cannot.

use std::path::PathBuf;

use crate::protocol::record::HostSample;

pub const LOADAVG: &str = "/proc/loadavg";
pub const STAT: &str = "/proc/stat";
pub use crate::host::limits::MEMINFO;

/// What the host said at one moment; a figure it would not give is `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostReading {
    pub load1: Option<f64>,
    pub mem_total_bytes: Option<u64>,
    pub mem_available_bytes: Option<u64>,
    pub cpu: Option<CpuTimes>,
    /// Each CPU's line (`cpu0`, `cpu1`, ...), by its number.
    pub cpus: Vec<(u32, CpuTimes)>,
}

/// The most CPUs a reading keeps apart: the file is the kernel's, but a sample line per
/// CPU must stay small on any host.
pub const MAX_CPUS: usize = 1024;

/// The `cpu` line of `/proc/stat`, in clock ticks since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// Every field but idle and iowait.
    pub busy: u64,
    pub total: u64,
}

/// Reads the three files through `open` (a host path to where the helper opens it).
pub fn read(open: impl Fn(&str) -> PathBuf) -> HostReading {
    let text = |path: &str| std::fs::read_to_string(open(path)).ok();
    let meminfo = text(MEMINFO);
    let stat = text(STAT);
    HostReading {
        load1: text(LOADAVG).as_deref().and_then(parse_load1),
        mem_total_bytes: meminfo
            .as_deref()
            .and_then(|m| meminfo_bytes(m, "MemTotal")),
        mem_available_bytes: meminfo
            .as_deref()
            .and_then(|m| meminfo_bytes(m, "MemAvailable")),
        cpu: stat.as_deref().and_then(parse_cpu),
        cpus: stat.as_deref().map(parse_cpus).unwrap_or_default(),
    }
}

/// The first field of `/proc/loadavg`.
pub fn parse_load1(loadavg: &str) -> Option<f64> {
    loadavg
        .split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
}

/// A `/proc/meminfo` field (`MemTotal:  24000000 kB`) in bytes.
pub fn meminfo_bytes(meminfo: &str, field: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let mut parts = rest.split_whitespace();
        let kib: u64 = parts.next()?.parse().ok()?;
        match parts.next() {
            Some("kB") => kib.checked_mul(1024),
            None => Some(kib),
            Some(_) => None,
        }
    })
}

/// The aggregate `cpu` line of `/proc/stat`: user nice system idle iowait irq softirq
/// steal (guest time is already in user).
pub fn parse_cpu(stat: &str) -> Option<CpuTimes> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    cpu_times(line.split_whitespace().skip(1))
}

/// Each CPU's line of `/proc/stat` (`cpu0 ...`), in the order the kernel lists them, at
/// most [`MAX_CPUS`]; a line that does not read is left out.
pub fn parse_cpus(stat: &str) -> Vec<(u32, CpuTimes)> {
    stat.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let number = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            Some((number, cpu_times(fields)?))
        })
        .take(MAX_CPUS)
        .collect()
}

/// The busy and total ticks of one `cpu` line's fields (after its name).
fn cpu_times<'a>(fields: impl Iterator<Item = &'a str>) -> Option<CpuTimes> {
    let fields: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if fields.len() < 4 {
        return None;
    }
    let total: u64 = fields.iter().sum();
    let idle = fields[3] + fields.get(4).copied().unwrap_or(0);
    Some(CpuTimes {
        busy: total - idle,
        total,
    })
}

/// The busy share between two readings of one counter; `None` when it went back (another
/// boot) or no time passed.
fn busy_share(now: CpuTimes, before: CpuTimes) -> Option<f64> {
    (now.total > before.total && now.busy >= before.busy)
        .then(|| (now.busy - before.busy) as f64 / (now.total - before.total) as f64)
}

/// The sample's host figures: this reading, with the CPU busy shares since `previous`.
pub fn sample(reading: &HostReading, previous: Option<&HostReading>) -> HostSample {
    let cpu_busy = match (reading.cpu, previous.and_then(|p| p.cpu)) {
        (Some(now), Some(before)) => busy_share(now, before),
        _ => None,
    };
    let cpus_busy = previous
        .map(|before| {
            reading
                .cpus
                .iter()
                .filter_map(|(cpu, now)| {
                    let (_, then) = before.cpus.iter().find(|(c, _)| c == cpu)?;
                    Some((*cpu, busy_share(*now, *then)?))
                })
                .collect()
        })
        .unwrap_or_default();
    HostSample {
        load1: reading.load1,
        mem_total_bytes: reading.mem_total_bytes,
        mem_available_bytes: reading.mem_available_bytes,
        cpu_busy,
        cpus_busy,
    }
}

/// The mean busy share of the CPUs in `cpus` in one sample; `None` when the sample has
/// none of them.
pub fn busy_of(sample: &HostSample, cpus: &[u32]) -> Option<f64> {
    let shares: Vec<f64> = sample
        .cpus_busy
        .iter()
        .filter(|(cpu, _)| cpus.contains(cpu))
        .map(|(_, share)| *share)
        .collect();
    (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_read() {
        assert_eq!(parse_load1("0.52 0.58 0.59 2/301 12345\n"), Some(0.52));
        assert_eq!(parse_load1(""), None);
        let meminfo =
            "MemTotal:       24568932 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(meminfo_bytes(meminfo, "MemTotal"), Some(24_568_932 * 1024));
        assert_eq!(
            meminfo_bytes(meminfo, "MemAvailable"),
            Some(20_000_000 * 1024)
        );
        assert_eq!(meminfo_bytes(meminfo, "Mem"), None);
        let stat = "cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 50 2 25 400 20 1 1 0 0 0\n";
        assert_eq!(
            parse_cpu(stat),
            Some(CpuTimes {
                busy: 160,
                total: 1000
            })
        );
        assert_eq!(parse_cpu("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_cpu("cpu  1 x 3 4\n"), None);
    }

    #[test]
    fn cpu_busy_is_the_share_between_two_readings() {
        let first = HostReading {
            cpu: Some(CpuTimes {
                busy: 160,
                total: 1000,
            }),
            ..Default::default()
        };
        let second = HostReading {
            cpu: Some(CpuTimes {
                busy: 210,
                total: 1200,
            }),
            ..Default::default()
        };
        assert_eq!(sample(&first, None).cpu_busy, None);
        assert_eq!(sample(&second, Some(&first)).cpu_busy, Some(0.25));
        // A counter that went back (another boot) gives no figure.
        assert_eq!(sample(&first, Some(&second)).cpu_busy, None);
    }

    /// With the server pinned to CPU 0 and the clones to CPU 1, each CPU's share says
    /// whose CPU was busy, where the total says only that half of all was.
    #[test]
    fn each_cpu_is_busy_on_its_own() {
        let first = "cpu  200 0 0 1800 0 0 0 0\ncpu0 100 0 0 900 0 0 0 0\ncpu1 100 0 0 900 0 0 0 0\nintr 1\n";
        let second = "cpu  400 0 0 2000 0 0 0 0\ncpu0 280 0 0 920 0 0 0 0\ncpu1 120 0 0 1080 0 0 0 0\nintr 2\n";
        let reading = |stat: &str| HostReading {
            cpu: parse_cpu(stat),
            cpus: parse_cpus(stat),
            ..Default::default()
        };
        let sampled = sample(&reading(second), Some(&reading(first)));
        assert_eq!(sampled.cpu_busy, Some(0.5));
        assert_eq!(sampled.cpus_busy, [(0, 0.9), (1, 0.1)]);
        assert_eq!(busy_of(&sampled, &[1]), Some(0.1));
        assert!((busy_of(&sampled, &[0, 1]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(busy_of(&sampled, &[7]), None);
        assert!(sample(&reading(second), None).cpus_busy.is_empty());
        assert_eq!(parse_cpus("cpux 1 2 3 4\ncpu3 1 2 3 4\ncpu4 a\n").len(), 1);
    }
}
