//! Stale state: what a crash, a hand-removed directory or a hand-removed unit leaves
//! behind, found while listing, each with the one command line that fixes it; and a
//! setting a clone is given that is not one clone-army writes (its root can rewrite what
//! is bound into it), reported instead of its value.
//!
//! Only reported, never repaired here: listing must not change anything, and the fixes
//! remove data (an upper layer) or unmount, which a person or Puppet should decide on.

use std::collections::BTreeSet;
use std::path::Path;

use crate::protocol::answers::Problem;
pub use crate::protocol::answers::ProblemKind;
use crate::protocol::error::Result;
use crate::sys::fsutil::read_optional;
use crate::sys::mounts::parse_mounts;
use crate::sys::names::{validate_hostname, validate_name};
use crate::sys::paths::{Layout, MACHINES_DIR, STATE_DIR};
use crate::systemd::units::CloneMount;

/// Problems of one clone that has its mount unit: its base, upper or work dir is gone.
/// `server` and `certname` (from its puppet.conf) make the work-dir fix exact.
pub fn of_clone(
    layout: &Layout,
    mount: &CloneMount,
    server: Option<&str>,
    certname: Option<&str>,
) -> Vec<Problem> {
    let name = &mount.clone;
    let remove = format!("clone-army clone remove -- {}", shell_word(name));
    let missing = |dir: &str| !layout.fs(dir).is_dir();
    let mut problems = Vec::new();
    if missing(&mount.lowerdir) {
        problems.push(Problem {
            kind: ProblemKind::BaseMissing,
            message: format!(
                "clone {name:?}: its base {} is missing, so its overlay cannot be mounted; \
                 remove the clone (and create it again on an existing base)",
                mount.lowerdir
            ),
            fix: remove.clone(),
        });
    }
    if missing(&mount.upperdir) {
        problems.push(Problem {
            kind: ProblemKind::UpperDirMissing,
            message: format!(
                "clone {name:?}: its upper dir {} is missing (its own files, puppet.conf and \
                 certificates, are gone) and its overlay cannot be mounted; remove the clone \
                 and create it again",
                mount.upperdir
            ),
            fix: remove.clone(),
        });
    } else if missing(&mount.workdir) {
        // The upper layer is intact: creating the clone again recreates the work dir and
        // keeps everything else, when we know what to create it with.
        let recreate = match (server, certname) {
            (Some(server), Some(certname))
                if validate_name("clone", "name", name).is_ok()
                    && validate_hostname("server", server).is_ok()
                    && validate_hostname("certname", certname).is_ok() =>
            {
                Some(format!(
                    "clone-army clone create {name} --base {} --server {server} --certname {certname}",
                    shell_word(&mount.base())
                ))
            }
            _ => None,
        };
        problems.push(Problem {
            kind: ProblemKind::WorkDirMissing,
            message: format!(
                "clone {name:?}: its work dir {} is missing, so its overlay cannot be mounted; {}",
                mount.workdir,
                if recreate.is_some() {
                    "creating it again recreates the work dir and keeps its upper layer"
                } else {
                    "its puppet.conf does not say its server and certname, so remove it and create it again"
                }
            ),
            fix: recreate.unwrap_or(remove.clone()),
        });
    }
    // `clone create` links the clone into the fleet target right after writing its mount
    // unit, and `clone remove` unlinks it right before removing that unit: a mount unit
    // without the link is a create or remove that was killed in between. Providers
    // treat such a clone as not there yet, so the next apply creates it again (which
    // finishes it) or removes it.
    let link = layout.fs(layout.clone_enable_link(name));
    if link.symlink_metadata().is_err() {
        let finish = match (server, certname) {
            (Some(server), Some(certname))
                if validate_name("clone", "name", name).is_ok()
                    && validate_hostname("server", server).is_ok()
                    && validate_hostname("certname", certname).is_ok() =>
            {
                format!(
                    "clone-army clone create {name} --base {} --server {server} --certname {certname} --start",
                    shell_word(&mount.base())
                )
            }
            _ => remove.clone(),
        };
        problems.push(Problem {
            kind: ProblemKind::Incomplete,
            message: format!(
                "clone {name:?}: its mount unit is there but it is not part of the fleet target \
                 ({} is missing): a clone create or remove was killed half-way; creating it \
                 again finishes it, removing it removes what is left",
                layout.clone_enable_link(name).display()
            ),
            fix: finish,
        });
    }
    problems
}

/// A setting of what a clone is given (`setting` in `file` of its config dir) that is not
/// one `clone create` or `clone configure` writes, refused for `reason`. Its value is never
/// quoted: a clone's root can rewrite what is bound into it, with megabytes of anything.
pub fn config_invalid(clone: &str, file: &str, setting: &str, reason: &str) -> Problem {
    Problem {
        kind: ProblemKind::ConfigInvalid,
        message: format!(
            "clone {clone:?}: its {setting} in {file} is not one clone-army writes ({reason}), \
             so it is left out; its root may have rewritten it, or a person did. \
             `clone-army clone configure` writes it again; a clone whose root rewrote it is \
             best removed and made again"
        ),
        fix: format!("clone-army clone remove -- {}", shell_word(clone)),
    }
}

/// Overlay mounts of clone-army's (upper or lower dir under the state dir) at
/// `/var/lib/machines/<name>` for which no clone-army mount unit exists: `owned` holds the
/// names of the clones that have one. Other mounts there belong to other tools.
pub fn orphan_mounts(layout: &Layout, owned: &BTreeSet<String>) -> Result<Vec<Problem>> {
    let text = read_optional(&layout.fs(layout.mountinfo()))?.unwrap_or_default();
    let state_prefix = format!("{STATE_DIR}/");
    let mut problems = Vec::new();
    for mount in parse_mounts(&text) {
        if mount.fstype != "overlay" || mount.point.parent() != Some(Path::new(MACHINES_DIR)) {
            continue;
        }
        let upperdir = mount.super_option("upperdir").unwrap_or_default();
        let lowerdir = mount.super_option("lowerdir").unwrap_or_default();
        if !upperdir.starts_with(&state_prefix) && !lowerdir.starts_with(&state_prefix) {
            continue;
        }
        let Some(name) = mount
            .point
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            continue;
        };
        if owned.contains(&name) {
            continue;
        }
        let point = mount.point.display().to_string();
        let mut fix = format!("umount -- {}", shell_word(&point));
        // Its leftover dirs go with `clone remove`, when they are the ones it would remove.
        if validate_name("clone", "name", &name).is_ok()
            && Path::new(&upperdir) == layout.upper_dir(&name)
        {
            fix.push_str(&format!(" && clone-army clone remove -- {name}"));
        }
        problems.push(Problem {
            kind: ProblemKind::OrphanMount,
            message: format!(
                "{point} is a clone-army overlay (upperdir {upperdir}) that no mount unit owns, \
                 left over from a crash or a removed unit; it keeps its base busy"
            ),
            fix,
        });
    }
    Ok(problems)
}

/// A word as a POSIX shell reads it back unchanged: as is when it is plain, else in single
/// quotes. The fixes are for people to paste, and names from disk are not trusted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_md_documents_every_problem_kind() {
        let protocol = include_str!("../../../docs/PROTOCOL.md");
        let table = protocol
            .split("| kind | where | when | fix |")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap();
        let mut documented: Vec<&str> = table
            .lines()
            .skip(2)
            .map(|row| row.split(" | ").next().unwrap())
            .map(|cell| cell.trim_start_matches("| ").trim_matches('`'))
            .collect();
        documented.sort_unstable();
        let mut kinds: Vec<&str> = ProblemKind::ALL.iter().map(|kind| kind.as_str()).collect();
        kinds.sort_unstable();
        assert_eq!(documented, kinds);
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("/var/lib/machines/c1"), "/var/lib/machines/c1");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's;rm"), r"'it'\''s;rm'");
        assert_eq!(shell_word(""), "''");
    }
}
