//! `report --group-by KEY`: the clones' last runs grouped by what their twins stand in
//! for, so that the report says which kind of node costs the server most: per group the
//! fleet's figures (run time, config retrieval, statuses), the catalogs' sizes and the
//! changes noop runs would have made.
//!
//! A clone's group is read on the host, never from the clone: from its twin record
//! (`clone::twin::TwinRecord`) an extension (`pp_role`, or any the twins take), `node` or
//! `environment`; from its twin's facts file a fact (`facts.os.family`); or an extension a
//! clone that is no twin asks for itself (`clone create --extension`). Clones without the
//! value are `-`.

use std::collections::BTreeMap;

use crate::clone::config::CloneConfig;
use crate::clone::twin;
use crate::context::Context;
use crate::protocol::answers::{CloneReport, Distribution, ReportGroup, ReportGroups};
use crate::protocol::error::{Error, Result};
use crate::report::stats;

/// The group of a clone without the value.
pub const NONE: &str = "-";
/// What a group key may be besides an extension's name.
pub const RECORD_KEYS: [&str; 2] = ["node", "environment"];
/// A fact of the twins' nodes as a group key: `facts.` and its dotted path.
pub const FACT_PREFIX: &str = "facts.";
/// The most labels of a fact's path, and characters of one.
const FACT_PATH_LABELS: usize = 8;
const FACT_LABEL_CHARS: usize = 64;
/// The most characters of a group's value; a longer one is cut.
const MAX_VALUE_CHARS: usize = 256;

/// What [`key`] takes, for people: the refusal's and the schema's words.
pub const KEY_RULE: &str = "node, environment, a trusted extension a twin takes (pp_role, pp_environment, ... or 1.3.6.1.4.1.34380.1.2.N), or a fact of the twins' nodes as facts.<name>[.<key>...] (facts.os.family; names of A-Z, a-z, 0-9, '_' and '-', up to 8 of 64 characters)";

/// What [`key`] takes as a pattern, for the Puppet side (`clone-army schema`): the record
/// keys, Puppet's registered extensions but the secret one by name and by OID, and dotted
/// OIDs of the private arc (whose length, at most 64 characters after the arc, the
/// helper checks).
pub fn key_pattern() -> String {
    use crate::twin::extensions::{PRIVATE_ARC, REGISTERED, REGISTERED_ARC, SECRET};
    let dotted = |arc: &str| arc.replace('.', "\\.");
    let takes = REGISTERED.iter().filter(|(name, _)| *name != SECRET);
    let names: Vec<&str> = takes.clone().map(|(name, _)| *name).collect();
    let numbers: Vec<String> = takes.map(|(_, n)| n.to_string()).collect();
    let label = format!("[A-Za-z0-9_-]{{1,{FACT_LABEL_CHARS}}}");
    format!(
        "^({}|{}|{}({})|{}[0-9]{{1,9}}(\\.[0-9]{{1,9}})*|{}{label}(\\.{label}){{0,{}}})$",
        RECORD_KEYS.join("|"),
        names.join("|"),
        dotted(REGISTERED_ARC),
        numbers.join("|"),
        dotted(PRIVATE_ARC),
        dotted(FACT_PREFIX),
        FACT_PATH_LABELS - 1,
    )
}

/// `key` as the twin records hold it (a registered extension's OID becomes its name), or
/// the refusal naming what is allowed.
pub fn key(key: &str) -> Result<String> {
    if RECORD_KEYS.contains(&key) {
        return Ok(key.to_owned());
    }
    if let Some(path) = key.strip_prefix(FACT_PREFIX) {
        return if fact_path(path).is_some() {
            Ok(key.to_owned())
        } else {
            Err(Error::InvalidArgument {
                field: "group-by",
                value: crate::sys::table::truncate(key, 80),
                reason: format!("not a fact's path; allowed: {KEY_RULE}"),
            })
        };
    }
    crate::twin::extensions::canonical(key).map_err(|why| Error::InvalidArgument {
        field: "group-by",
        value: key.to_owned(),
        reason: format!("{why}; allowed: {KEY_RULE}"),
    })
}

/// The group of `clone` by `key` (checked by [`key`]): the value its twin record holds,
/// else, for an extension, the one its certificate request asks for (a clone made with
/// `--extension`); [`NONE`] without either.
pub fn group_of(ctx: &Context, clone: &str, key: &str) -> Result<String> {
    let config = CloneConfig::of(&ctx.layout, clone);
    if let Some(path) = key.strip_prefix(FACT_PREFIX).and_then(fact_path) {
        return twin_fact(&config, &path);
    }
    if let Some(value) = twin::read_back(&config)?
        .as_ref()
        .and_then(|r| r.value(key))
    {
        return Ok(value.to_owned());
    }
    if RECORD_KEYS.contains(&key) {
        return Ok(NONE.to_owned());
    }
    Ok(crate::clone::secrets::extension_requests(&config)?
        .remove(key)
        .unwrap_or_else(|| NONE.to_owned()))
}

/// A fact's dotted path as its labels, or none when it breaks the rule.
fn fact_path(path: &str) -> Option<Vec<&str>> {
    let labels: Vec<&str> = path.split('.').collect();
    let fits = |label: &&str| {
        (1..=FACT_LABEL_CHARS).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    (labels.len() <= FACT_PATH_LABELS && labels.iter().all(fits)).then_some(labels)
}

/// The value at `path` in the twin's facts file (its node's facts): a string, number or
/// boolean, cut to [`MAX_VALUE_CHARS`]; [`NONE`] for a clone that is no twin, a file that
/// is not JSON, or a path that leads to nothing or to a structure.
fn twin_fact(config: &CloneConfig, path: &[&str]) -> Result<String> {
    let file = format!("{}/{}", crate::clone::config::FACTS_DIR, twin::TWIN_FACTS);
    let Some(text) = config.read(&file)? else {
        return Ok(NONE.to_owned());
    };
    let Ok(facts) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(NONE.to_owned());
    };
    let value = path.iter().try_fold(&facts, |at, label| at.get(label));
    Ok(match value {
        Some(serde_json::Value::String(text)) if !text.is_empty() => {
            crate::sys::table::truncate(text, MAX_VALUE_CHARS)
        }
        Some(value @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => {
            value.to_string()
        }
        _ => NONE.to_owned(),
    })
}

/// The clones' runs grouped by `key` (checked by [`key`]), a group a value in order.
pub fn of(ctx: &Context, clones: &[CloneReport], key: &str, interval: u64) -> Result<ReportGroups> {
    let mut by_value: BTreeMap<String, Vec<&CloneReport>> = BTreeMap::new();
    for clone in clones {
        by_value
            .entry(group_of(ctx, &clone.name, key)?)
            .or_default()
            .push(clone);
    }
    let groups = by_value
        .into_iter()
        .map(|(value, members)| ReportGroup {
            value,
            fleet: stats::fleet(members.iter().map(|c| (c.name.as_str(), &c.run)), interval),
            resources: Distribution::of(
                members
                    .iter()
                    .filter_map(|c| c.run.resources.map(|r| r as f64)),
            ),
            would_change: members.iter().filter_map(|c| c.run.would_change).sum(),
        })
        .collect();
    Ok(ReportGroups {
        by: key.to_owned(),
        groups,
    })
}
