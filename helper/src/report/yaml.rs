//! The one way the helper parses YAML an agent wrote in a clone (run summaries and
//! reports): with a parser budget that grows with the text, so that what a clone's root
//! writes there costs the host memory in proportion to its size.
//!
//! YAML's anchors and aliases let a few hundred bytes stand for millions of nodes (nested
//! lists of aliases of aliases). The parser's own default budget stops such a document
//! only after about a million events, some tens of MiB for one file, and the recorder reads
//! every clone's files every few seconds. A document Puppet writes has about one event per
//! ten bytes and no aliases worth the name, so the budget here allows one event per two
//! bytes (what the tersest YAML without aliases needs) and few aliases.

use serde::Deserialize;

/// Events a document may always have, however short: the sections of an empty summary.
const BASE_EVENTS: usize = 1_000;
/// Aliases a document may use: Ruby's YAML writer makes one for an object written twice,
/// which Puppet's reports seldom hold.
const MAX_ALIASES: usize = 1_000;

/// The parser's events allowed for a text of `bytes` bytes.
pub fn events_allowed(bytes: usize) -> usize {
    BASE_EVENTS + bytes / 2
}

/// Parses `text` within the budget above; a document over it is an error like any other
/// that is not YAML Puppet wrote.
pub fn from_str<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, serde_saphyr::Error> {
    let events = events_allowed(text.len());
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = events;
    budget.max_nodes = events;
    budget.max_aliases = MAX_ALIASES;
    budget.max_anchors = MAX_ALIASES;
    budget.max_recorded_anchor_events = events;
    budget.max_recorded_anchor_bytes = text.len();
    budget.max_total_scalar_bytes = text.len();
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    serde_saphyr::from_str_with_options(text, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nested lists of aliases: each level nine times the one before.
    fn alias_bomb(levels: usize) -> String {
        let mut yaml = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..=levels {
            let p = level - 1;
            yaml.push_str(&format!(
                "a{level}: &a{level} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        yaml
    }

    /// Sixty thousand nodes from 300 bytes: within the parser's own default budget, and
    /// refused by this one.
    #[test]
    fn an_alias_bomb_is_refused_by_the_budget() {
        let bomb = alias_bomb(4);
        assert!(serde_saphyr::from_str::<serde_json::Value>(&bomb).is_ok());
        let parsed: Result<serde_json::Value, _> = from_str(&bomb);
        let error = parsed.unwrap_err().to_string();
        assert!(error.to_lowercase().contains("budget"), "{error}");
    }

    #[test]
    fn what_puppet_writes_fits_the_budget() {
        for fixture in [
            include_str!("fixtures/failed-report.yaml"),
            include_str!("fixtures/unreachable-report.yaml"),
            include_str!("fixtures/changed.yaml"),
            include_str!("fixtures/unreachable.yaml"),
        ] {
            let parsed: Result<serde_json::Value, _> = from_str(fixture);
            assert!(parsed.is_ok(), "{:?}", parsed.err());
        }
        // A few aliases, as Ruby's writer makes for an object written twice, are fine.
        let shared = "tags: &t [a, b]\nagain: *t\nthird: *t\n";
        assert!(from_str::<serde_json::Value>(shared).is_ok());
    }
}
