//! A clone made a twin of a real node (`clone create --twin-file`): it keeps its own
//! certname and hostname, and takes the node's
//!
//! - facts, as the external facts file [`TWIN_FACTS`] in its facts directory, which win
//!   over its own core facts, with [`TWIN_OF_FACT`] naming the node it stands in for;
//! - environment, in puppet.conf's `[agent]`;
//! - trusted extensions, as extension requests in its `csr_attributes.yaml` (see
//!   [`super::secrets::csr_attributes`]), which the CA copies into its certificate: they
//!   reach `$trusted['extensions']` with its first certificate, so a twin is made with a
//!   certname of its own that has none kept (see [`super::ssl`]).
//!
//! Refused before anything is written: a twin that would take its node's certname (it
//! would be the node to the server, PuppetDB and the CA), and a twin whose node's OS
//! family is not its base's (its catalog's providers would fail at every run).

use std::collections::BTreeMap;

use serde_json::Value;

use super::config::{CloneConfig, FACTS_DIR};
use super::puppet_conf;
use crate::inventory::bases::BaseMetadata;
use crate::inventory::os::{Family, Os};
use crate::protocol::error::{Error, Result};
use crate::twin::Identity;

/// The twin's facts file, by its name in the facts directory.
pub const TWIN_FACTS: &str = "clone_army_twin.json";
/// The fact that names the node a twin stands in for.
pub const TWIN_OF_FACT: &str = "clone_army_twin_of";
/// Who a twin stands in for, kept in its config dir beside what it is given: its node's
/// certname, environment and extensions, as JSON, for `clone list` and the report's
/// groups (the facts file names the node too, but is too large to read at every
/// listing). Host-only: not bound into the clone.
pub const TWIN_RECORD: &str = "twin.json";
/// The most of a twin record read back.
const MAX_RECORD_BYTES: usize = 64 * 1024;
/// The flag a twin's record is given by.
pub const FIELD: &str = "twin-file";

/// The OS family of a base, from its base.json.
pub fn base_family(base: &BaseMetadata) -> Result<Family> {
    Os::from_id(&base.os)
        .map(Os::family)
        .ok_or_else(|| Error::InvalidArgument {
            field: FIELD,
            value: base.name.clone(),
            reason: format!(
                "the base's OS {:?} is none clone-army builds, so no twin can be matched to it",
                base.os
            ),
        })
}

/// Whether a clone named `certname` on a base of `family` may be a twin of `identity`.
pub fn check(identity: &Identity, certname: &str, family: Family) -> Result<()> {
    let refused = |reason: String| Error::InvalidArgument {
        field: FIELD,
        value: identity.node.clone(),
        reason,
    };
    if identity.node.eq_ignore_ascii_case(certname) {
        return Err(refused(format!(
            "the twin's certname {certname:?} is its node's: a twin never takes a real node's certname; \
             allowed: any other certname"
        )));
    }
    let wanted = family.os_family_fact();
    match identity.os.family.as_deref() {
        Some(family) if family == wanted => Ok(()),
        Some(family) => Err(refused(format!(
            "the node's os.family is {family:?} and the base's is {wanted:?}: its catalog would fail on \
             the base's providers; allowed: a base of the node's family"
        ))),
        None => Err(refused(format!(
            "the node's record has no os.family, by which a twin is matched to a base; allowed: a record \
             whose os.family is the base's ({wanted})"
        ))),
    }
}

/// Whether a clone that is the twin of `was` (none: of no node) and has the certname
/// `own` may become the twin of `identity` under the certname `named`. A certificate
/// holds the extensions it was requested with, and the clone keeps its certificate for
/// as long as it keeps its certname: a twin of another node under the same certname
/// would go on showing the server its old node's `pp_role`.
pub fn check_new_node(
    was: Option<&TwinRecord>,
    identity: &Identity,
    own: &str,
    named: &str,
) -> Result<()> {
    match was {
        Some(was) if was.node != identity.node && own.eq_ignore_ascii_case(named) => {
            Err(Error::InvalidArgument {
                field: FIELD,
                value: identity.node.clone(),
                reason: format!(
                    "the clone is the twin of {:?} under the certname {own:?}, whose certificate \
                     holds that node's extensions; allowed: the twin of another node with a new \
                     certname (--certname)",
                    was.node
                ),
            })
        }
        _ => Ok(()),
    }
}

/// puppet.conf with the node's environment in `[agent]` (left as it is without one).
pub fn puppet_conf_with(conf: &str, identity: &Identity) -> String {
    match &identity.environment {
        Some(environment) => {
            puppet_conf::set_in_section(conf, "agent", &[("environment", Some(environment))])
        }
        None => conf.to_owned(),
    }
}

/// The twin's facts file: the node's facts and [`TWIN_OF_FACT`].
pub fn facts_file(identity: &Identity) -> String {
    let mut facts = identity.facts.clone();
    facts.insert(
        TWIN_OF_FACT.to_owned(),
        Value::String(identity.node.clone()),
    );
    // A map of JSON values always serializes.
    let mut text = serde_json::to_string_pretty(&facts).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes the twin's facts file and the record of its node. Returns whether either
/// changed.
pub fn apply(config: &CloneConfig, identity: &Identity) -> Result<bool> {
    let facts = config.write(
        &format!("{FACTS_DIR}/{TWIN_FACTS}"),
        &facts_file(identity),
        0o644,
    )?;
    let record = serde_json::json!({
        "node": identity.node,
        "environment": identity.environment,
        "extensions": identity.extensions,
    });
    let node = config.write(TWIN_RECORD, &format!("{record}\n"), 0o644)?;
    Ok(facts || node)
}

/// Who a clone is the twin of, as its config dir records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TwinRecord {
    pub node: String,
    pub environment: Option<String>,
    pub extensions: BTreeMap<String, String>,
}

impl TwinRecord {
    /// The value the report groups by `key`: an extension's (`pp_role`), or `node` or
    /// `environment`; none when the twin has no such value.
    pub fn value(&self, key: &str) -> Option<&str> {
        match key {
            "node" => Some(&self.node),
            "environment" => self.environment.as_deref(),
            _ => self.extensions.get(key).map(String::as_str),
        }
    }
}

/// The clone's twin record; none for a clone that is no twin, or whose record is not
/// one this helper writes (too large, not JSON, a node that is not a certname).
pub fn read_back(config: &CloneConfig) -> Result<Option<TwinRecord>> {
    let Some(text) = config.read(TWIN_RECORD)? else {
        return Ok(None);
    };
    if text.len() > MAX_RECORD_BYTES {
        return Ok(None);
    }
    let Ok(value) = serde_json::from_str::<Value>(&text) else {
        return Ok(None);
    };
    let Some(node) = value.get("node").and_then(Value::as_str) else {
        return Ok(None);
    };
    if !crate::twin::is_node_name(node) {
        return Ok(None);
    }
    let extensions = value
        .get("extensions")
        .and_then(Value::as_object)
        .map(|map| crate::twin::extensions::take(map, &mut Vec::new()))
        .unwrap_or_default();
    let environment = value
        .get("environment")
        .and_then(Value::as_str)
        .filter(|env| crate::twin::document::is_environment(env))
        .map(str::to_owned);
    Ok(Some(TwinRecord {
        node: node.to_owned(),
        environment,
        extensions,
    }))
}

/// Removes a twin's facts file from a clone made again as no twin. Returns whether it
/// was there.
pub fn clear(config: &CloneConfig) -> Result<bool> {
    let facts = config.remove_file(&format!("{FACTS_DIR}/{TWIN_FACTS}"))?;
    let node = config.remove_file(TWIN_RECORD)?;
    Ok(facts || node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn identity(record: Value) -> Identity {
        crate::twin::document::identities(&record)
            .unwrap()
            .remove(0)
    }

    fn web01() -> Identity {
        identity(json!({
            "certname": "web01.prod.example.com", "environment": "production",
            "facts": {"os": {"family": "Debian", "name": "Debian", "release": {"major": "12"}}, "role_fact": "web"},
            "trusted": {"extensions": {"pp_role": "web"}},
        }))
    }

    #[test]
    fn a_twin_never_takes_its_nodes_certname() {
        let error = check(&web01(), "WEB01.prod.example.com", Family::Debian).unwrap_err();
        assert_eq!(error.field(), Some(FIELD));
        assert!(
            error
                .to_string()
                .contains("never takes a real node's certname"),
            "{error}"
        );
        check(&web01(), "clone1.load1.example.com", Family::Debian).unwrap();
    }

    #[test]
    fn a_twin_is_refused_a_base_of_another_family_or_none_known() {
        let error = check(&web01(), "clone1.load1", Family::Rhel).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("\"Debian\" and the base's is \"RedHat\""),
            "{error}"
        );
        let no_os = identity(json!({"certname": "x.example.com", "facts": {}}));
        let error = check(&no_os, "clone1.load1", Family::Debian).unwrap_err();
        assert!(error.to_string().contains("no os.family"), "{error}");
    }

    #[test]
    fn the_nodes_facts_and_whom_it_stands_in_for_go_in_its_facts_file() {
        let written: Value = serde_json::from_str(&facts_file(&web01())).unwrap();
        assert_eq!(written["role_fact"], "web");
        assert_eq!(written["os"]["release"]["major"], "12");
        assert_eq!(written[TWIN_OF_FACT], "web01.prod.example.com");
    }

    #[test]
    fn the_nodes_environment_goes_in_the_agent_section() {
        let conf = puppet_conf::render(Some("puppet"), None, "clone1.load1");
        let twin = puppet_conf_with(&conf, &web01());
        assert_eq!(
            puppet_conf::section(&twin, "agent")
                .iter()
                .find(|(k, _)| k == "environment")
                .map(|(_, v)| v.as_str()),
            Some("production")
        );
        let no_env = identity(json!({"certname": "x.example.com", "facts": {}}));
        assert_eq!(puppet_conf_with(&conf, &no_env), conf);
    }
}
