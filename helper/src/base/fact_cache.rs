//! Facter's own fact cache, on in every base for the facts a running clone cannot
//! change, so that each agent run costs the clone less CPU while the server gets the
//! same facts.
//!
//! **Why.** An agent run in a clone spends about a third of its CPU resolving facts, and
//! most of that on one fact: `augeas.version`, which Facter reads by opening Augeas,
//! which loads every lens it has (about 0.5 CPU-s of a 2.2 CPU-s run on Debian 13).
//! The kernel and processor facts cost less, yet are the host's and cannot change while
//! a clone runs. Facter caches whole fact groups for a time to
//! live (`facts.ttls` in `facter.conf`): a cached fact is read from a JSON file in the
//! clone and sent to the server as before, so the server sees the same facts, values
//! and requests. No resolver is blocked: a blocked fact would vanish from the upload.
//!
//! **What is never cached.** Facts that differ clone by clone or move while a clone
//! runs: hostname and networking, SSH keys, uptime, memory and swap, mounts and file
//! systems, load, time zone, path, identity, and every custom and external fact.
//!
//! **When the cache goes.** The cache lives in the clone's own upper layer (each clone
//! writes its own at its first run; the base holds none), and
//! - every boot of a clone removes it (a `tmpfiles.d` rule), so a host whose kernel or
//!   hardware changed (which takes a reboot of the host, and so of every clone) is seen
//!   anew;
//! - on bases with dpkg, every dpkg run removes it (dpkg's `post-invoke`, which apt's
//!   runs pass through), so a catalog that upgrades Augeas reports the new version at
//!   the next run. Only there are [`PACKAGE_GROUPS`] cached: RPM has no
//!   such hook a base can set by a file, so on RPM bases those groups are resolved at
//!   every run as before;
//! - the time to live, [`TTL`], bounds it if both were somehow missed.
//!
//! Distribution Facter (Debian's) reads `/etc/facter/facter.conf` and caches under
//! `/var/cache/facter/facts`; the AIO agents (Puppet's, OpenVox's, PE's) read
//! `/etc/puppetlabs/facter/facter.conf` and cache under
//! `/opt/puppetlabs/facter/cache/cached_facts`. A base gets both files: the agent it
//! holds reads one, and the other is never read.

use std::path::Path;

use crate::protocol::error::Result;
use crate::sys::fsutil::{remove_dir_all, write_atomic};
use crate::systemd::units::header;

/// Where distribution and AIO Facter read their config, relative to the root.
pub const FACTER_CONFS: [&str; 2] = [
    "etc/facter/facter.conf",
    "etc/puppetlabs/facter/facter.conf",
];

/// Where distribution and AIO Facter keep cached fact groups.
pub const CACHE_DIRS: [&str; 2] = [
    "/var/cache/facter/facts",
    "/opt/puppetlabs/facter/cache/cached_facts",
];

/// The `tmpfiles.d` rule that removes the cache at each boot of a clone.
pub const CACHE_TMPFILES: &str = "etc/tmpfiles.d/clone-army-facter-cache.conf";

/// dpkg's config directory, whose presence says the base has dpkg.
const DPKG_CONFIG_DIR: &str = "etc/dpkg/dpkg.cfg.d";

/// The dpkg config that removes the cache after every dpkg run.
pub const CACHE_DPKG_HOOK: &str = "etc/dpkg/dpkg.cfg.d/clone-army-facter-cache";

/// Fact groups (Facter's names, the same in Facter 4.3 and 4.10) whose source is the
/// host's kernel or hardware, which no clone can change while it runs.
///
/// Only groups whose every fact has a value in a clone: Facter drops a group's cache
/// file when a fact it looks up is missing from it, and resolves and writes the group
/// again at every run. `operating system`, `hypervisors` and `virtualization` did so in
/// Debian 13's clones (facts without a value in a container), which costs more than
/// it saves; each costs under 0.05 CPU-s resolved.
pub const HOST_GROUPS: [&str; 2] = ["kernel", "processor"];

/// Fact groups that change only when packages do (the Augeas library): cached only where
/// every package change removes the cache.
pub const PACKAGE_GROUPS: [&str; 1] = ["augeas"];

/// How long a cached group lives at most, in Facter's duration syntax.
pub const TTL: &str = "1 days";

/// Turns Facter's fact cache on in `rootfs` for the groups above, with the rules that
/// remove it, and removes any cache the build itself left, so that no clone starts with
/// the base's values.
pub fn fact_cache(rootfs: &Path) -> Result<()> {
    let has_dpkg = rootfs.join(DPKG_CONFIG_DIR).is_dir();
    let conf = format!("{}{}", header(), facter_conf(has_dpkg));
    for path in FACTER_CONFS {
        write_atomic(&rootfs.join(path), conf.as_bytes(), 0o644)?;
    }
    let tmpfiles = format!("{}{}", header(), tmpfiles_rule());
    write_atomic(&rootfs.join(CACHE_TMPFILES), tmpfiles.as_bytes(), 0o644)?;
    if has_dpkg {
        let hook = format!("{}{}", header(), dpkg_hook());
        write_atomic(&rootfs.join(CACHE_DPKG_HOOK), hook.as_bytes(), 0o644)?;
    }
    for dir in CACHE_DIRS {
        remove_dir_all(&rootfs.join(dir.trim_start_matches('/')))?;
    }
    Ok(())
}

/// `facter.conf` (HOCON) with a time to live for each cached group.
fn facter_conf(has_dpkg: bool) -> String {
    let groups = HOST_GROUPS
        .iter()
        .chain(if has_dpkg { &PACKAGE_GROUPS[..] } else { &[] });
    let ttls: String = groups
        .map(|group| format!("        {{ \"{group}\" : {TTL} }},\n"))
        .collect();
    format!(
        "# Facts no running clone can change are cached, each clone its own, removed at\n\
         # each boot{}. Every fact still reaches the server.\n\
         facts : {{\n    ttls : [\n{ttls}    ]\n}}\n",
        if has_dpkg {
            " and after each dpkg run"
        } else {
            ""
        }
    )
}

/// `R`: removed, recursively, at boot (`systemd-tmpfiles --remove --boot`); Facter makes
/// the directory again when it next writes the cache.
fn tmpfiles_rule() -> String {
    let lines: String = CACHE_DIRS.iter().map(|dir| format!("R {dir}\n")).collect();
    format!("# Facter's fact cache lives for one boot of a clone.\n{lines}")
}

/// dpkg runs `post-invoke` with the shell after each of its runs.
fn dpkg_hook() -> String {
    format!(
        "# A package change may change cached facts (Augeas's version).\n\
         post-invoke=rm -rf {}\n",
        CACHE_DIRS.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn without_header(text: &str) -> &str {
        let (first, rest) = text.split_once('\n').unwrap();
        assert!(crate::systemd::units::is_ours(first), "{first}");
        rest
    }

    #[test]
    fn a_dpkg_base_caches_host_and_package_groups() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(DPKG_CONFIG_DIR)).unwrap();

        fact_cache(root).unwrap();

        let conf = fs::read_to_string(root.join(FACTER_CONFS[0])).unwrap();
        assert_eq!(
            fs::read_to_string(root.join(FACTER_CONFS[1])).unwrap(),
            conf
        );
        insta::assert_snapshot!("facter_conf_dpkg", without_header(&conf));
        let hook = fs::read_to_string(root.join(CACHE_DPKG_HOOK)).unwrap();
        insta::assert_snapshot!("dpkg_hook", without_header(&hook));
        let tmpfiles = fs::read_to_string(root.join(CACHE_TMPFILES)).unwrap();
        insta::assert_snapshot!("tmpfiles_rule", without_header(&tmpfiles));
    }

    #[test]
    fn an_rpm_base_caches_only_host_groups() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();

        fact_cache(root).unwrap();

        let conf = fs::read_to_string(root.join(FACTER_CONFS[1])).unwrap();
        insta::assert_snapshot!("facter_conf_rpm", without_header(&conf));
        for group in PACKAGE_GROUPS {
            assert!(!conf.contains(group), "{conf}");
        }
        assert!(!root.join(CACHE_DPKG_HOOK).exists());
        assert!(root.join(CACHE_TMPFILES).is_file());
    }

    #[test]
    fn no_group_that_differs_per_clone_or_moves_is_cached() {
        // Facter's groups whose facts differ clone by clone (hostname, keys) or change
        // while a clone runs (free memory, mounts, uptime): caching one would send the
        // server a value the clone no longer has. And one Facter writes again at every
        // run in a clone (see HOST_GROUPS).
        let moving = [
            "networking",
            "ssh",
            "operating system",
            "memory",
            "file system",
            "disks",
            "uptime",
            "load_average",
            "timezone",
            "path",
            "id",
        ];
        let conf = facter_conf(true);
        for group in moving {
            assert!(!conf.contains(&format!("\"{group}\"")), "{group} in {conf}");
        }
    }

    #[test]
    fn a_cache_left_in_the_base_by_its_build_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for cache in CACHE_DIRS {
            let cache = root.join(cache.trim_start_matches('/'));
            fs::create_dir_all(&cache).unwrap();
            fs::write(cache.join("operating system"), "{}").unwrap();
        }

        fact_cache(root).unwrap();

        for cache in CACHE_DIRS {
            assert!(
                !root.join(cache.trim_start_matches('/')).exists(),
                "{cache}"
            );
        }
    }
}
