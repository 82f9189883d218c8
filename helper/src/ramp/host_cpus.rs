//! The load host's own CPUs (`--load-host-cpus`).
//!
//! Where the clones run on CPUs of their own and other work (in the lab: the Puppet
//! Server, PuppetDB and PostgreSQL) on the others, the load host's CPU is the clones'
//! CPUs: a server that keeps its own CPUs busy is not a load host out of CPU. A step's
//! `host_cpu_busy`, and with it the whose-limit rule ([`super::limit`]), is then the mean
//! busy share of the listed CPUs only; without a list, of every CPU, as the samples'
//! `cpu_busy` has it.

use std::fmt;
use std::str::FromStr;

use crate::protocol::error::{Error, Result};
use crate::protocol::record::HostSample;
use crate::record::host::{busy_of, MAX_CPUS};

/// The highest CPU number a list may name: the samples keep at most [`MAX_CPUS`] CPUs
/// apart, so a CPU above it could never be counted.
pub const MAX_CPU: u32 = MAX_CPUS as u32 - 1;

/// CPUs by number, written as the kernel writes CPU lists (`1`, `2-3,5`); each once, in
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<u32>);

impl CpuList {
    pub fn cpus(&self) -> &[u32] {
        &self.0
    }

    /// The list of `cpus`, as a host's samples name them.
    pub fn of(cpus: &[u32]) -> CpuList {
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        CpuList(cpus)
    }
}

impl FromStr for CpuList {
    type Err = String;

    /// Numbers from 0 to [`MAX_CPU`] and ranges `a-b` of them (a ≤ b), separated by
    /// commas; nothing else (no spaces, no empty item, no `a-b:stride`).
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let allowed = || {
            format!(
                "a CPU list: CPU numbers 0 to {MAX_CPU} and ranges of them, separated by commas (1, 2-3,5)"
            )
        };
        let number = |digits: &str| -> Option<u32> {
            if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            digits.parse().ok().filter(|n| *n <= MAX_CPU)
        };
        // A set as wide as the CPUs a list may name: a list repeating itself stays small.
        let mut named = vec![false; MAX_CPUS];
        for item in text.split(',') {
            let (from, to) = match item.split_once('-') {
                Some((from, to)) => (number(from), number(to)),
                None => (number(item), number(item)),
            };
            match (from, to) {
                (Some(from), Some(to)) if from <= to => {
                    for cpu in from..=to {
                        named[cpu as usize] = true;
                    }
                }
                _ => return Err(allowed()),
            }
        }
        Ok(CpuList(
            (0..=MAX_CPU).filter(|cpu| named[*cpu as usize]).collect(),
        ))
    }
}

impl fmt::Display for CpuList {
    /// Runs of consecutive CPUs as ranges: `2-3,5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items = Vec::new();
        let mut cpus = self.0.iter().copied().peekable();
        while let Some(from) = cpus.next() {
            let mut to = from;
            while cpus.peek() == Some(&(to + 1)) {
                to += 1;
                cpus.next();
            }
            items.push(if from == to {
                from.to_string()
            } else {
                format!("{from}-{to}")
            });
        }
        write!(f, "{}", items.join(","))
    }
}

/// The load host's CPU busy share in a sample: of `cpus` when the ramp was given them,
/// else of every CPU. `None` when the sample has no such figure (the first sample, or
/// none of the CPUs).
pub fn busy(cpus: Option<&CpuList>, host: &HostSample) -> Option<f64> {
    match cpus {
        Some(list) => busy_of(host, list.cpus()),
        None => host.cpu_busy,
    }
}

/// Refuses a list naming a CPU the host does not have (`host`: the CPUs its `/proc/stat`
/// lists), before the ramp starts anything: its share could never be counted.
pub fn check_on_host(list: &CpuList, host: &[u32]) -> Result<()> {
    let reason = if host.is_empty() {
        "this host's CPUs could not be read from /proc/stat".to_owned()
    } else if let Some(cpu) = list.cpus().iter().find(|cpu| !host.contains(cpu)) {
        format!(
            "this host has no CPU {cpu}: its CPUs are {}",
            CpuList::of(host)
        )
    } else {
        return Ok(());
    };
    Err(Error::InvalidArgument {
        field: "load-host-cpus",
        value: list.to_string(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> Vec<u32> {
        text.parse::<CpuList>().unwrap().cpus().to_vec()
    }

    #[test]
    fn a_cpu_list_is_numbers_and_ranges_of_them() {
        assert_eq!(list("1"), [1]);
        assert_eq!(list("2-3,5"), [2, 3, 5]);
        // Overlapping, repeated and out of order: each CPU once, in order.
        assert_eq!(list("5,2-3,3,0-1"), [0, 1, 2, 3, 5]);
        assert_eq!(list("1023"), [1023]);
        assert_eq!(list("7-7"), [7]);
        assert_eq!(
            "0-3,8,10-11".parse::<CpuList>().unwrap().to_string(),
            "0-3,8,10-11"
        );
        assert_eq!(CpuList::of(&[3, 1, 2, 9]).to_string(), "1-3,9");
    }

    #[test]
    fn anything_else_is_refused_saying_what_a_cpu_list_is() {
        for bad in [
            "", ",", "1,", ",1", "3-1", "-1", "1-", "1--2", " 1", "1 ,2", "a", "0x1", "+1", "1024",
            "0-1024", "99999", "1-3:2", "１",
        ] {
            let e = bad.parse::<CpuList>().unwrap_err();
            assert!(
                e.starts_with("a CPU list: CPU numbers 0 to 1023"),
                "{bad:?}: {e}"
            );
        }
        // However long, a list is held in a set of at most MAX_CPUS.
        let long = vec!["0-1023"; 10_000].join(",");
        assert_eq!(list(&long).len(), MAX_CPUS);
    }

    /// The server pinned to CPU 0 and busy, the clones on CPU 1 with room: counted on
    /// CPU 1 alone, the load host has room; over both, it looks half busy.
    #[test]
    fn the_load_hosts_busy_share_is_of_its_own_cpus_when_they_are_named() {
        let host = HostSample {
            load1: None,
            mem_total_bytes: None,
            mem_available_bytes: None,
            cpu_busy: Some(0.5),
            cpus_busy: vec![(0, 0.95), (1, 0.05)],
        };
        assert_eq!(busy(None, &host), Some(0.5));
        assert_eq!(busy(Some(&"1".parse().unwrap()), &host), Some(0.05));
        assert_eq!(busy(Some(&"0-1".parse().unwrap()), &host), Some(0.5));
        // A CPU the sample does not have gives no figure, not a zero.
        assert_eq!(busy(Some(&"7".parse().unwrap()), &host), None);
    }

    #[test]
    fn a_cpu_the_host_does_not_have_is_refused_naming_the_field() {
        let two: CpuList = "2".parse().unwrap();
        assert!(check_on_host(&two, &[0, 1, 2, 3]).is_ok());
        let e = check_on_host(&two, &[0, 1]).unwrap_err();
        assert_eq!(e.kind(), "invalid-argument");
        assert_eq!(
            e.to_string(),
            r#"load-host-cpus "2" is invalid: this host has no CPU 2: its CPUs are 0-1"#
        );
        let e = check_on_host(&two, &[]).unwrap_err();
        assert!(
            e.to_string().ends_with("could not be read from /proc/stat"),
            "{e}"
        );
    }
}
