//! Real nodes' facts, as a twin reads them: every fact set of Debian's facterdb (the
//! package the Puppet specs' rspec-puppet-facts reads, Facter 1.6 to 4.x of many OSes),
//! each a bare facts object as `puppet facts show` or `facter --json` gives one. Each must
//! be read into one node with a certname Puppet takes, and what it gives a twin must hold
//! no secret-named key and no fact the agent sets: the rules tried on the estate's own
//! shapes, not only on the ones the unit tests make up.

use std::path::{Path, PathBuf};

use serde_json::Value;

use clone_army::twin::{document, facts, is_node_name};

/// Where Debian installs facterdb's fact sets (the gem's version in the path).
const GEMS: &str = "/usr/share/rubygems-integration/all/gems";
/// facterdb holds well over a thousand sets; far fewer means the wrong directory.
const AT_LEAST: usize = 1000;

fn fact_sets() -> Vec<PathBuf> {
    let gems =
        std::fs::read_dir(GEMS).unwrap_or_else(|e| panic!("{GEMS}: {e} (install ruby-facterdb)"));
    let mut dirs: Vec<PathBuf> = gems
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("facterdb-"))
        })
        .map(|path| path.join("facts"))
        .collect();
    dirs.sort();
    let dir = dirs
        .pop()
        .unwrap_or_else(|| panic!("no facterdb-*/facts under {GEMS} (install ruby-facterdb)"));
    let mut sets = Vec::new();
    collect(&dir, &mut sets);
    sets
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "facts") {
            out.push(path);
        }
    }
}

fn holds_secret_key(value: &Value) -> bool {
    let secret = |key: &str| {
        let lower = key.to_ascii_lowercase();
        facts::SECRET_WORDS.iter().any(|word| lower.contains(word))
    };
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| secret(k) || holds_secret_key(v)),
        Value::Array(items) => items.iter().any(holds_secret_key),
        _ => false,
    }
}

#[test]
#[ignore = "needs Debian's ruby-facterdb, which make test installs (ruby-rspec-puppet-facts)"]
fn every_facterdb_set_gives_one_twin_with_nothing_a_twin_must_not_take() {
    let sets = fact_sets();
    assert!(
        sets.len() >= AT_LEAST,
        "only {} fact sets found",
        sets.len()
    );
    let mut dropped_secrets = 0;
    for path in &sets {
        let text = std::fs::read_to_string(path).unwrap();
        let json: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let identities =
            document::identities(&json).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(identities.len(), 1, "{}", path.display());
        let twin = &identities[0];
        assert!(
            is_node_name(&twin.node),
            "{}: {:?}",
            path.display(),
            twin.node
        );
        assert!(
            !holds_secret_key(&Value::Object(twin.facts.clone())),
            "{}",
            path.display()
        );
        for fact in facts::AGENT_FACTS {
            assert!(!twin.facts.contains_key(fact), "{}: {fact}", path.display());
        }
        dropped_secrets += twin
            .dropped
            .iter()
            .filter(|d| d.reason.contains("secret"))
            .count();
    }
    // The sets hold real credentials facts (EC2's IAM role), which must have been left out.
    assert!(
        dropped_secrets > 0,
        "no secret-named fact was left out of {} sets",
        sets.len()
    );
}
