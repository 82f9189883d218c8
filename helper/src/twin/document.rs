//! The records of real nodes a twin can be made from, in the forms the estate gives them:
//!
//! - **PuppetDB's `inventory`** (a PQL `inventory[certname, environment, facts, trusted]
//!   { … }` answer, or one entry of it): `certname`, `environment`, `facts` as an object
//!   and `trusted` with its `extensions`;
//! - **PuppetDB's `factsets`**: `certname`, `environment` and `facts.data`, a list of
//!   `{name, value}`, whose `trusted` fact holds the extensions;
//! - **`puppet facts find --render-as json`**: `name` and `values`;
//! - **a bare facts object** (`puppet facts show`, `facter --json`, Debian's facterdb),
//!   named by its `clientcert`, `networking.fqdn`, `fqdn`, or (Facter 1.x) `hostname` and
//!   `domain` facts, with the extensions of
//!   a `trusted` fact where it has one.
//!
//! A JSON array holds records of the first two forms, one a node. What a record brings is
//! read into an [`Identity`] ([`identities`]); a record that names no node, names it
//! with something that is not a certname, or is of no form above is refused with the
//! reason, and so is an array of more than [`MAX_RECORDS`].

use serde_json::{Map, Value};

use super::{extensions, facts, Dropped, Identity, NodeOs};

/// The most records one document (an array) may hold.
pub const MAX_RECORDS: usize = 10_000;
/// An environment's name as Puppet allows it: `^[a-z0-9_]+$`, and at most this long.
pub const MAX_ENVIRONMENT: usize = 64;

/// The identities of every record in `document`, in order.
pub fn identities(document: &Value) -> Result<Vec<Identity>, String> {
    match document {
        Value::Array(records) if records.len() > MAX_RECORDS => Err(format!(
            "an array of {} records; allowed: at most {MAX_RECORDS}",
            records.len()
        )),
        Value::Array(records) => records
            .iter()
            .enumerate()
            .map(|(index, record)| match record {
                Value::Object(object) if object.contains_key("certname") => {
                    identity(object).map_err(|reason| format!("record {index}: {reason}"))
                }
                _ => Err(format!(
                    "record {index}: allowed in an array: PuppetDB inventory or factset records (objects with a certname)"
                )),
            })
            .collect(),
        Value::Object(object) => identity(object).map(|one| vec![one]),
        _ => Err("allowed: a JSON object (one node's record or facts) or an array of PuppetDB records".to_owned()),
    }
}

/// The fields one record of any form gives: node, environment, facts, extensions.
struct Record<'a> {
    node: Option<Value>,
    environment: Option<&'a Value>,
    facts: Map<String, Value>,
    extensions: Option<Value>,
}

/// One record read into an identity.
pub fn identity(object: &Map<String, Value>) -> Result<Identity, String> {
    let record = record(object)?;
    let node = match &record.node {
        Some(Value::String(name)) => name,
        Some(_) => return Err("its certname is not a string".to_owned()),
        None => {
            return Err(
                "it names no node: a record needs a certname (or name), bare facts a clientcert, networking.fqdn, fqdn or hostname"
                    .to_owned(),
            )
        }
    };
    if !super::is_node_name(node) {
        return Err(format!(
            "its certname {:?} is not one Puppet takes; allowed: {}",
            crate::sys::table::truncate(node, 80),
            super::NODE_RULE
        ));
    }
    let mut dropped = Vec::new();
    let environment = environment(record.environment, &mut dropped);
    let os = node_os(&record.facts);
    let extensions = match &record.extensions {
        Some(Value::Object(map)) => extensions::take(map, &mut dropped),
        Some(_) => {
            dropped.push(Dropped::new("trusted.extensions", "not an object"));
            Default::default()
        }
        None => Default::default(),
    };
    let facts = facts::take(&record.facts, &mut dropped)?;
    Ok(Identity {
        node: node.clone(),
        environment,
        os,
        facts,
        extensions,
        dropped,
    })
}

fn record(object: &Map<String, Value>) -> Result<Record<'_>, String> {
    let extensions_of =
        |trusted: Option<&Value>| trusted.and_then(|t| t.get("extensions")).cloned();
    if object.contains_key("certname") {
        let facts = match object.get("facts") {
            Some(Value::Object(facts)) => match facts.get("data") {
                Some(Value::Array(data)) => factset_data(data)?,
                _ => facts.clone(),
            },
            _ => return Err("a record with a certname needs facts: an object (inventory) or {data: [...]} (factsets)".to_owned()),
        };
        // An inventory record has its own trusted; a factset's is one of its facts.
        let extensions = extensions_of(object.get("trusted").or_else(|| facts.get("trusted")));
        return Ok(Record {
            node: object.get("certname").cloned(),
            environment: object.get("environment"),
            facts,
            extensions,
        });
    }
    if let (Some(name), Some(Value::Object(values))) = (object.get("name"), object.get("values")) {
        return Ok(Record {
            node: Some(name.clone()),
            environment: values.get("environment"),
            facts: values.clone(),
            extensions: extensions_of(values.get("trusted")),
        });
    }
    let node = object
        .get("clientcert")
        .or_else(|| object.get("networking").and_then(|n| n.get("fqdn")))
        .or_else(|| object.get("fqdn"))
        .cloned()
        .or_else(|| legacy_name(object));
    Ok(Record {
        node,
        environment: object.get("environment"),
        facts: object.clone(),
        extensions: extensions_of(object.get("trusted")),
    })
}

/// The node's name in the oldest records (Facter 1.x), which have no `fqdn`: `hostname`
/// and `domain` joined, or `hostname` alone.
fn legacy_name(facts: &Map<String, Value>) -> Option<Value> {
    let hostname = facts.get("hostname")?.as_str()?;
    Some(Value::String(
        match facts.get("domain").and_then(Value::as_str) {
            Some(domain) if !domain.is_empty() => format!("{hostname}.{domain}"),
            _ => hostname.to_owned(),
        },
    ))
}

/// A factset's `data`, a list of `{name, value}`, as a facts object.
fn factset_data(data: &[Value]) -> Result<Map<String, Value>, String> {
    if data.len() > facts::MAX_FACTS * 2 {
        return Err(format!(
            "facts.data has {} entries; allowed: at most {}",
            data.len(),
            facts::MAX_FACTS * 2
        ));
    }
    let mut out = Map::new();
    for entry in data {
        match (entry.get("name"), entry.get("value")) {
            (Some(Value::String(name)), Some(value)) => {
                out.insert(name.clone(), value.clone());
            }
            _ => {
                return Err(
                    "facts.data holds an entry that is not {name: string, value}".to_owned(),
                )
            }
        }
    }
    Ok(out)
}

/// Whether Puppet takes `name` for an environment's.
pub fn is_environment(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_ENVIRONMENT
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The record's environment when Puppet would take its name; otherwise none, noted.
fn environment(value: Option<&Value>, dropped: &mut Vec<Dropped>) -> Option<String> {
    let value = value?;
    let valid = value.as_str().filter(|name| is_environment(name));
    if valid.is_none() {
        dropped.push(Dropped::new(
            "environment",
            "not an environment name: 1 to 64 characters of a-z, 0-9 and '_'",
        ));
    }
    valid.map(str::to_owned)
}

/// The OS a base is matched by: the structured `os` fact, or the legacy facts of older
/// records. Only short, plain strings are taken.
fn node_os(facts: &Map<String, Value>) -> NodeOs {
    let structured = |path: &[&str]| -> Option<String> {
        let mut at = facts.get(path[0])?;
        for key in &path[1..] {
            at = at.get(key)?;
        }
        plain(at)
    };
    let legacy = |name: &str| facts.get(name).and_then(plain);
    NodeOs {
        family: structured(&["os", "family"]).or_else(|| legacy("osfamily")),
        name: structured(&["os", "name"]).or_else(|| legacy("operatingsystem")),
        release_major: structured(&["os", "release", "major"])
            .or_else(|| legacy("operatingsystemmajrelease")),
    }
}

fn plain(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        _ => return None,
    };
    let ok = !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._- ".contains(&b));
    ok.then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn os(family: &str, name: &str, major: &str) -> Value {
        json!({"family": family, "name": name, "release": {"major": major, "full": format!("{major}.1")}})
    }

    #[test]
    fn an_inventory_answer_gives_each_nodes_facts_environment_and_extensions() {
        let answer = json!([
            {"certname": "web01.prod.example.com", "environment": "production",
             "facts": {"os": os("Debian", "Debian", "12"), "kernel": "Linux"},
             "trusted": {"certname": "web01.prod.example.com", "extensions": {"pp_role": "web"}}},
            {"certname": "db01.prod.example.com", "environment": "production",
             "facts": {"os": os("RedHat", "Rocky", "9")},
             "trusted": {"extensions": {"pp_role": "db", "pp_preshared_key": "k"}}},
        ]);
        let twins = identities(&answer).unwrap();
        assert_eq!(twins.len(), 2);
        assert_eq!(twins[0].node, "web01.prod.example.com");
        assert_eq!(twins[0].environment.as_deref(), Some("production"));
        assert_eq!(twins[0].extensions["pp_role"], "web");
        assert_eq!(twins[0].os.family.as_deref(), Some("Debian"));
        assert_eq!(twins[0].os.release_major.as_deref(), Some("12"));
        assert_eq!(twins[1].os.name.as_deref(), Some("Rocky"));
        assert_eq!(twins[1].extensions.len(), 1);
        assert_eq!(
            twins[1].dropped[0].what,
            "trusted.extensions.pp_preshared_key"
        );
    }

    #[test]
    fn a_factset_gives_its_facts_from_data_and_its_extensions_from_the_trusted_fact() {
        let factset = json!({
            "certname": "web02.prod.example.com", "environment": "staging",
            "facts": {"data": [
                {"name": "os", "value": os("Debian", "Debian", "13")},
                {"name": "trusted", "value": {"extensions": {"1.3.6.1.4.1.34380.1.1.13": "web"}}},
                {"name": "custom_app", "value": "shop"},
            ], "href": "/pdb/query/v4/factsets/web02/facts"},
        });
        let twin = &identities(&factset).unwrap()[0];
        assert_eq!(twin.environment.as_deref(), Some("staging"));
        assert_eq!(twin.extensions["pp_role"], "web");
        assert_eq!(twin.facts.keys().collect::<Vec<_>>(), ["custom_app", "os"]);
        assert_eq!(
            twin.dropped,
            vec![Dropped::new(
                "trusted",
                "set by the twin's own agent or server"
            )]
        );
    }

    #[test]
    fn puppet_facts_find_and_bare_facts_are_named_by_their_node() {
        let found = json!({"name": "app01.example.com", "values": {"os": os("Debian", "Ubuntu", "24.04"), "environment": "dev"}});
        let twin = &identities(&found).unwrap()[0];
        assert_eq!(
            (twin.node.as_str(), twin.environment.as_deref()),
            ("app01.example.com", Some("dev"))
        );
        let bare = json!({"networking": {"fqdn": "foo.example.com"}, "osfamily": "RedHat", "operatingsystem": "CentOS",
                          "operatingsystemmajrelease": 7});
        let twin = &identities(&bare).unwrap()[0];
        assert_eq!(twin.node, "foo.example.com");
        assert_eq!(
            twin.os,
            NodeOs {
                family: Some("RedHat".into()),
                name: Some("CentOS".into()),
                release_major: Some("7".into())
            }
        );
    }

    #[test]
    fn records_without_a_node_or_with_a_hostile_one_are_refused_saying_why() {
        let cases = [
            (json!({"kernel": "Linux"}), "names no node"),
            (
                json!({"certname": "../../etc", "facts": {}}),
                "not one Puppet takes",
            ),
            (
                json!({"certname": "Web01.example.com", "facts": {}}),
                "not one Puppet takes",
            ),
            (json!({"certname": 7, "facts": {}}), "not a string"),
            (json!({"certname": "a.example.com"}), "needs facts"),
            (
                json!([{"kernel": "Linux"}]),
                "record 0: allowed in an array",
            ),
            (
                json!([{"certname": "a", "facts": {"data": [{"value": 1}]}}]),
                "record 0: facts.data",
            ),
            (json!("facts"), "allowed: a JSON object"),
        ];
        for (document, expected) in cases {
            let message = identities(&document).unwrap_err();
            assert!(message.contains(expected), "{document}: {message}");
        }
    }

    #[test]
    fn the_oldest_records_are_named_by_hostname_and_domain_and_certnames_may_hold_underscores() {
        let node = |facts: Value| identities(&facts).unwrap().remove(0).node;
        assert_eq!(
            node(json!({"hostname": "old", "domain": "example.com"})),
            "old.example.com"
        );
        assert_eq!(node(json!({"hostname": "old"})), "old");
        assert_eq!(
            node(json!({"fqdn": "pcs-6-x86_64.example.com"})),
            "pcs-6-x86_64.example.com"
        );
    }

    #[test]
    fn an_environment_puppet_would_not_take_is_left_out_and_noted() {
        let twin = &identities(
            &json!({"certname": "a.example.com", "environment": "../prod", "facts": {}}),
        )
        .unwrap()[0];
        assert_eq!(twin.environment, None);
        assert_eq!(twin.dropped[0].what, "environment");
    }

    #[test]
    fn an_array_holds_at_most_the_most_records() {
        let records = vec![json!({"certname": "a.example.com", "facts": {}}); MAX_RECORDS + 1];
        let message = identities(&Value::Array(records)).unwrap_err();
        assert!(message.contains("allowed: at most 10000"), "{message}");
    }
}
