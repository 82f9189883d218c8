//! A node's facts, as its twin is given them: as external facts, which win over the
//! clone's own core facts, so that `os`, `networking` and the estate's custom facts are
//! the node's when the server compiles.
//!
//! Left out, each with its reason:
//!
//! - the facts Puppet's agent sets itself (`clientcert`, `clientversion`, `clientnoop`,
//!   `puppetversion`, `agent_specified_environment`, `implementation`), the server's
//!   (`server_facts`, `trusted`: a twin's trusted data comes from its own certificate), a
//!   record's own bookkeeping (names starting with `_`) and clone_army's facts
//!   (`clone_army*`), which the clone sets;
//! - every key, at any depth, whose name says it holds a secret ([`SECRET_WORDS`]), and
//!   the cloud metadata facts that carry credentials ([`SECRET_FACTS`]);
//! - names Facter's external facts cannot carry, and values nested deeper or longer than
//!   a fact plausibly is ([`MAX_DEPTH`], [`MAX_STRING_BYTES`]).
//!
//! The facts taken, as JSON, are at most [`MAX_FACTS_BYTES`]: a record over it is refused.

use serde_json::{Map, Value};

use super::Dropped;

/// Facts Puppet's agent or server sets, which a twin keeps its own of.
pub const AGENT_FACTS: [&str; 8] = [
    "clientcert",
    "clientversion",
    "clientnoop",
    "puppetversion",
    "agent_specified_environment",
    "implementation",
    "server_facts",
    "trusted",
];
/// clone_army's own facts (the clone's `clone_army_*` and the load host's `clone_army`).
pub const OWN_PREFIX: &str = "clone_army";
/// A key whose name holds one of these (in any case) is taken for a secret.
pub const SECRET_WORDS: [&str; 8] = [
    "password",
    "passwd",
    "secret",
    "token",
    "credential",
    "private_key",
    "privatekey",
    "api_key",
];
/// Cloud metadata facts, which carry instance credentials and user data.
pub const SECRET_FACTS: [&str; 5] = [
    "ec2_metadata",
    "ec2_userdata",
    "gce",
    "az_metadata",
    "cloud_metadata",
];
/// The deepest a value nests (a structured fact's levels).
pub const MAX_DEPTH: usize = 32;
/// The longest string a fact value holds, in bytes.
pub const MAX_STRING_BYTES: usize = 64 * 1024;
/// The longest fact name.
pub const MAX_NAME: usize = 128;
/// The most facts one node's record may bring.
pub const MAX_FACTS: usize = 10_000;
/// The facts taken, as the twin's external facts file holds them.
pub const MAX_FACTS_BYTES: usize = 4 * 1024 * 1024;

/// The facts a twin is given from a node's, with what was left out added to `dropped`;
/// an error when what is left is still more than [`MAX_FACTS_BYTES`].
pub fn take(
    facts: &Map<String, Value>,
    dropped: &mut Vec<Dropped>,
) -> Result<Map<String, Value>, String> {
    let mut taken = Map::new();
    for (name, value) in facts {
        let shown = crate::sys::table::truncate(name, MAX_NAME + 1);
        if taken.len() == MAX_FACTS {
            dropped.push(Dropped::new(shown, "more facts than a twin takes (10000)"));
            continue;
        }
        if let Some(reason) = refused_name(name) {
            dropped.push(Dropped::new(shown, reason));
            continue;
        }
        if let Some(value) = cleaned(value, name, 1, dropped) {
            taken.insert(name.clone(), value);
        }
    }
    let bytes = serde_json::to_vec(&taken).map_or(usize::MAX, |text| text.len());
    if bytes > MAX_FACTS_BYTES {
        return Err(format!(
            "its facts take {bytes} bytes as a twin's facts file; allowed: at most {MAX_FACTS_BYTES}"
        ));
    }
    Ok(taken)
}

/// Why a top-level fact is not taken, or None.
fn refused_name(name: &str) -> Option<&'static str> {
    if AGENT_FACTS.contains(&name) {
        return Some("set by the twin's own agent or server");
    }
    if name.starts_with('_') {
        return Some("the record's own bookkeeping");
    }
    if name.starts_with(OWN_PREFIX) {
        return Some("clone_army's own fact, which the clone sets");
    }
    if SECRET_FACTS.contains(&name) {
        return Some("cloud metadata, which carries credentials");
    }
    if is_secret(name) {
        return Some("its name says it holds a secret");
    }
    // Printable ASCII: real nodes' legacy facts have spaces and colons in their names
    // (`ipaddress_Local Area Connection`, `ec2_..._macs_02:85:e9:..._mac`).
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && name.bytes().all(|b| (b' '..=b'~').contains(&b));
    (!valid).then_some(
        "not a fact name: 1 to 128 printable ASCII characters, not starting or ending with a space",
    )
}

fn is_secret(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| lower.contains(word))
}

/// The value with every secret-named key taken out at any depth (each one recorded at
/// its dotted path), or None when the value as a whole is refused.
fn cleaned(value: &Value, path: &str, depth: usize, dropped: &mut Vec<Dropped>) -> Option<Value> {
    if depth > MAX_DEPTH {
        dropped.push(Dropped::new(
            shown(path),
            "nested deeper than a fact goes (32 levels)",
        ));
        return None;
    }
    match value {
        Value::String(text) if text.len() > MAX_STRING_BYTES => {
            dropped.push(Dropped::new(
                shown(path),
                "a string longer than a fact holds (64 KiB)",
            ));
            None
        }
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, inner) in map {
                let inner_path = format!("{path}.{key}");
                if is_secret(key) {
                    dropped.push(Dropped::new(
                        shown(&inner_path),
                        "its name says it holds a secret",
                    ));
                    continue;
                }
                if let Some(inner) = cleaned(inner, &inner_path, depth + 1, dropped) {
                    out.insert(key.clone(), inner);
                }
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (index, inner) in items.iter().enumerate() {
                out.extend(cleaned(
                    inner,
                    &format!("{path}.{index}"),
                    depth + 1,
                    dropped,
                ));
            }
            Some(Value::Array(out))
        }
        other => Some(other.clone()),
    }
}

/// A path as a drop notes it: at most 200 characters of it.
fn shown(path: &str) -> String {
    crate::sys::table::truncate(path, 200)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn taken(value: Value) -> (Result<Map<String, Value>, String>, Vec<Dropped>) {
        let mut dropped = Vec::new();
        let facts = value.as_object().unwrap().clone();
        (take(&facts, &mut dropped), dropped)
    }

    fn reasons_for<'a>(dropped: &'a [Dropped], what: &str) -> Vec<&'a str> {
        dropped
            .iter()
            .filter(|d| d.what == what)
            .map(|d| d.reason.as_str())
            .collect()
    }

    #[test]
    fn the_nodes_facts_are_taken_as_they_are_structured_ones_too() {
        let facts = json!({
            "os": {"family": "Debian", "name": "Debian", "release": {"major": "12", "full": "12.8"}},
            "networking": {"fqdn": "web01.prod.example.com", "interfaces": {"eth0": {"ip": "10.0.0.5"}}},
            "role_fact": "web",
            "mountpoints": ["/", "/var"],
            "is_virtual": true,
            "processorcount": 4,
        });
        let (result, dropped) = taken(facts.clone());
        assert_eq!(Value::Object(result.unwrap()), facts);
        assert!(dropped.is_empty(), "{dropped:?}");
    }

    #[test]
    fn the_agents_own_facts_bookkeeping_and_clone_armys_are_left_to_the_clone() {
        let (result, dropped) = taken(json!({
            "clientcert": "web01", "puppetversion": "8.10.0", "trusted": {"certname": "web01"},
            "server_facts": {}, "_timestamp": "2026", "clone_army_fact_0001": "x", "clone_army": {},
            "kernel": "Linux",
        }));
        assert_eq!(result.unwrap().keys().collect::<Vec<_>>(), ["kernel"]);
        assert_eq!(dropped.len(), 7);
        assert_eq!(
            reasons_for(&dropped, "clientcert"),
            ["set by the twin's own agent or server"]
        );
        assert_eq!(
            reasons_for(&dropped, "_timestamp"),
            ["the record's own bookkeeping"]
        );
    }

    #[test]
    fn secrets_are_left_out_by_name_at_any_depth_and_cloud_metadata_whole() {
        let (result, dropped) = taken(json!({
            "db_password": "hunter2",
            "ec2_metadata": {"iam": {"info": "x"}},
            "app": {"name": "shop", "settings": {"API_KEY": "abc", "port": 8080}, "list": [{"token": "t", "n": 1}]},
        }));
        assert_eq!(
            Value::Object(result.unwrap()),
            json!({"app": {"name": "shop", "settings": {"port": 8080}, "list": [{"n": 1}]}})
        );
        assert_eq!(
            reasons_for(&dropped, "db_password"),
            ["its name says it holds a secret"]
        );
        assert_eq!(
            reasons_for(&dropped, "ec2_metadata"),
            ["cloud metadata, which carries credentials"]
        );
        assert_eq!(
            reasons_for(&dropped, "app.settings.API_KEY"),
            ["its name says it holds a secret"]
        );
        assert_eq!(
            reasons_for(&dropped, "app.list.0.token"),
            ["its name says it holds a secret"]
        );
    }

    #[test]
    fn bad_names_deep_values_and_long_strings_are_left_out() {
        let mut deep = json!("bottom");
        for _ in 0..MAX_DEPTH + 1 {
            deep = json!({ "d": deep });
        }
        let (result, dropped) = taken(json!({
            "bad\nname": 1,
            " padded ": 1,
            "ipaddress_Local Area Connection": "10.0.0.5",
            "": 1,
            "n".repeat(MAX_NAME + 1): 1,
            "deep": deep,
            "long": "x".repeat(MAX_STRING_BYTES + 1),
            "fine": "x".repeat(MAX_STRING_BYTES),
        }));
        let result = result.unwrap();
        assert!(result.contains_key("fine"));
        assert!(
            !result.contains_key("long")
                && !result.contains_key("bad\nname")
                && !result.contains_key(" padded ")
                && !result.contains_key("")
        );
        assert!(result.contains_key("ipaddress_Local Area Connection"));
        assert_eq!(
            reasons_for(&dropped, "long"),
            ["a string longer than a fact holds (64 KiB)"]
        );
        assert!(
            dropped.iter().any(|d| d.reason.contains("32 levels")),
            "{dropped:?}"
        );
        assert!(dropped
            .iter()
            .any(|d| d.reason.starts_with("not a fact name")));
    }

    #[test]
    fn a_record_whose_facts_stay_too_large_is_refused_saying_the_limit() {
        let big: Map<String, Value> = (0..80)
            .map(|i| (format!("f{i}"), json!("x".repeat(MAX_STRING_BYTES))))
            .collect();
        let (result, _) = taken(Value::Object(big));
        let message = result.unwrap_err();
        assert!(message.contains("allowed: at most 4194304"), "{message}");
    }

    #[test]
    fn a_record_brings_at_most_the_most_facts_a_twin_takes() {
        let many: Map<String, Value> = (0..MAX_FACTS + 3)
            .map(|i| (format!("f{i}"), json!(1)))
            .collect();
        let (result, dropped) = taken(Value::Object(many));
        assert_eq!(result.unwrap().len(), MAX_FACTS);
        assert_eq!(dropped.len(), 3);
    }
}
