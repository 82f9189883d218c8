//! The agent's lock files a clone's previous boot left behind, removed before any agent
//! starts.
//!
//! Puppet keeps two PID lock files on disk: the SSL bootstrap's `$ssldir/ssl.lock` and
//! the run's `$statedir/agent_catalog_run.lock`. Both live in the clone's upper layer, so
//! a clone stopped while its agent held one (a fleet shrunk right after it grew, say)
//! boots again with the lock in place. Puppet deletes a stale lock only when no process
//! with its PID runs, or that process is not a Ruby running puppet; a container's PIDs
//! come out much the same on every boot, so the recorded PID is often the new puppet
//! daemon's own. Then every forked run and every `puppet agent -t` exits with "Another
//! puppet instance is already running" and the clone never reports again. No agent runs
//! in a clone before its boot reaches [`STALE_LOCKS_SERVICE`], so anything there is stale.

use super::config::{CloneConfig, CLONE_UNITS_DIR, UNITS_DIR};
use super::run_mode::{AGENT_SERVICE, PUPPET_SERVICE};
use crate::inventory::bases::{AIO_AGENT, DISTRO_AGENT};
use crate::protocol::error::Result;
use crate::systemd::units::header;

pub const STALE_LOCKS_SERVICE: &str = "clone-army-stale-locks.service";
const STALE_LOCKS_LINK: &str = "sysinit.target.wants/clone-army-stale-locks.service";

/// The lock files of Debian's and Ubuntu's `puppet-agent` and of the all-in-one
/// packages, in their `ssldir` and `statedir`: a base holds one of the two, and `rm -f`
/// passes over the other.
pub fn lock_files() -> Vec<String> {
    [DISTRO_AGENT, AIO_AGENT]
        .iter()
        .flat_map(|agent| {
            [
                format!("{}/ssl.lock", agent.ssldir),
                format!("{}/agent_catalog_run.lock", agent.statedir),
            ]
        })
        .collect()
}

/// Runs once per boot, before the agent's units (whichever the run mode enables) and
/// before the user's first `clone-army exec` could reach the clone.
pub fn stale_locks_service() -> String {
    format!(
        "{header}\
[Unit]
Description=Remove Puppet agent locks left by the clone's previous boot
DefaultDependencies=no
After=local-fs.target
Before=sysinit.target {puppet} {agent}

[Service]
Type=oneshot
ExecStart=/bin/rm -f -- {files}
",
        header = header(),
        puppet = PUPPET_SERVICE,
        agent = AGENT_SERVICE,
        files = lock_files().join(" "),
    )
}

/// Puts the unit and its link into the clone's config. Returns whether anything changed.
pub fn apply(config: &CloneConfig) -> Result<bool> {
    let mut changed = config.write(
        &format!("{UNITS_DIR}/{STALE_LOCKS_SERVICE}"),
        &stale_locks_service(),
        0o644,
    )?;
    changed |= config.link(
        &format!("{UNITS_DIR}/{STALE_LOCKS_LINK}"),
        &format!("{CLONE_UNITS_DIR}/{STALE_LOCKS_SERVICE}"),
    )?;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_every_lock_file_and_runs_before_the_agent_units() {
        let unit = stale_locks_service();
        assert!(
            unit.contains(
                "\nExecStart=/bin/rm -f -- /var/lib/puppet/ssl/ssl.lock \
                 /var/cache/puppet/state/agent_catalog_run.lock /etc/puppetlabs/puppet/ssl/ssl.lock \
                 /opt/puppetlabs/puppet/cache/state/agent_catalog_run.lock\n"
            ),
            "{unit}"
        );
        let before = unit
            .lines()
            .find_map(|line| line.strip_prefix("Before="))
            .unwrap();
        for agent_unit in [PUPPET_SERVICE, AGENT_SERVICE] {
            assert!(before.split(' ').any(|u| u == agent_unit), "{before}");
        }
    }
}
