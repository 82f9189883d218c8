//! `twin list`: what a directory of nodes' records would give twins, read and checked
//! without making anything, so a user sees each node's twin before a fleet is made of
//! them (its OS, its role, its facts, and what it leaves out and why).

use std::collections::BTreeMap;
use std::path::Path;

use super::read::{each_in_dir, Read};
use crate::protocol::answers::{TwinEntry, TwinList, TwinSummary};
use crate::protocol::error::Result;

/// The role a node without `pp_role` is counted under.
pub const NO_ROLE: &str = "-";

pub fn list(dir: &Path) -> Result<TwinList> {
    let mut identities = Vec::new();
    each_in_dir(dir, |read| {
        identities.push(entry(read));
        Ok(())
    })?;
    Ok(answer(identities))
}

/// What the answer keeps of a node read: all but its facts, which it counts.
pub fn entry(read: Read) -> TwinEntry {
    TwinEntry {
        source: read.source,
        node: read.identity.node,
        environment: read.identity.environment,
        os: read.identity.os,
        facts: read.identity.facts.len(),
        extensions: read.identity.extensions,
        dropped: read.identity.dropped,
    }
}

/// The answer for the nodes' entries, counted by family and role.
pub fn answer(identities: Vec<TwinEntry>) -> TwinList {
    let mut by_os_family = BTreeMap::new();
    let mut by_role = BTreeMap::new();
    for entry in &identities {
        let family = entry
            .os
            .family
            .clone()
            .unwrap_or_else(|| NO_ROLE.to_owned());
        *by_os_family.entry(family).or_insert(0) += 1;
        let role = entry
            .extensions
            .get("pp_role")
            .cloned()
            .unwrap_or_else(|| NO_ROLE.to_owned());
        *by_role.entry(role).or_insert(0) += 1;
    }
    TwinList {
        summary: TwinSummary {
            nodes: identities.len(),
            by_os_family,
            by_role,
        },
        identities,
        imported_from: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_node_is_listed_with_its_twins_share_and_counted_by_family_and_role() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("estate.json"),
            r#"[{"certname": "web01.example.com", "environment": "production",
                 "facts": {"os": {"family": "Debian"}, "db_password": "x", "kernel": "Linux"},
                 "trusted": {"extensions": {"pp_role": "web"}}},
                {"certname": "db01.example.com", "facts": {"os": {"family": "RedHat"}}}]"#,
        )
        .unwrap();
        let answer = list(dir.path()).unwrap();
        assert_eq!(answer.summary.nodes, 2);
        assert_eq!(
            answer.summary.by_role,
            BTreeMap::from([("-".to_owned(), 1), ("web".to_owned(), 1)])
        );
        assert_eq!(
            answer.summary.by_os_family,
            BTreeMap::from([("Debian".to_owned(), 1), ("RedHat".to_owned(), 1)])
        );
        let web = &answer.identities[0];
        assert_eq!((web.source.as_str(), web.facts), ("estate.json#0", 2));
        assert_eq!(web.dropped[0].what, "db_password");
    }
}
