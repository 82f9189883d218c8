//! A node's trusted extensions, as its twin asks for them in its certificate request.
//!
//! Puppet's CA copies the extension requests of `csr_attributes.yaml` into the agent's
//! certificate, and the server shows them as `$trusted['extensions']`, by which much of
//! an estate is classified (`pp_role`, `pp_environment`). A twin asks for its node's, with
//! three exceptions:
//!
//! - the **authorization** extensions (Puppet's arc `1.3.6.1.4.1.34380.1.3`:
//!   `pp_authorization`, `pp_auth_role`, `pp_cli_auth`) grant a certificate access to the
//!   server's own APIs; no twin gets them;
//! - **`pp_preshared_key`** is a secret by its name and purpose;
//! - a name Puppet does not know (one from the estate's `custom_trusted_oid_mapping`)
//!   cannot be asked for without that mapping: it is left out, and its OID works instead.
//!
//! A record shows an extension by its short name where the server knows one and by its
//! dotted OID otherwise; a registered OID is given back its short name, so that one
//! extension has one key.
//!
//! A clone that is no twin may ask for extensions too (`clone create --extension
//! pp_role=web`), by the same rules: a fleet classified by `$trusted['extensions']`
//! without a real node to stand in for.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Dropped;
use crate::protocol::error::{Error, Result};

/// The flag a clone that is no twin is given its extension requests by.
pub const FIELD: &str = "extension";

/// Puppet's registered extensions (`1.3.6.1.4.1.34380.1.1.N`) by short name, as Puppet's
/// and Puppet Server's OID tables list them.
pub const REGISTERED: [(&str, u32); 26] = [
    ("pp_uuid", 1),
    ("pp_instance_id", 2),
    ("pp_image_name", 3),
    ("pp_preshared_key", 4),
    ("pp_cost_center", 5),
    ("pp_product", 6),
    ("pp_project", 7),
    ("pp_application", 8),
    ("pp_service", 9),
    ("pp_employee", 10),
    ("pp_created_by", 11),
    ("pp_environment", 12),
    ("pp_role", 13),
    ("pp_software_version", 14),
    ("pp_department", 15),
    ("pp_cluster", 16),
    ("pp_provisioner", 17),
    ("pp_region", 18),
    ("pp_datacenter", 19),
    ("pp_zone", 20),
    ("pp_network", 21),
    ("pp_securitypolicy", 22),
    ("pp_cloudplatform", 23),
    ("pp_apptier", 24),
    ("pp_hostname", 25),
    ("pp_owner", 26),
];

/// The arcs under Puppet's OID: registered, private (the estate's own), authorization.
pub const REGISTERED_ARC: &str = "1.3.6.1.4.1.34380.1.1.";
pub const PRIVATE_ARC: &str = "1.3.6.1.4.1.34380.1.2.";
pub const AUTHORIZATION_ARC: &str = "1.3.6.1.4.1.34380.1.3.";
/// The short names of the authorization arc, which records show instead of the OID.
pub const AUTHORIZATION_NAMES: [&str; 3] = ["pp_authorization", "pp_auth_role", "pp_cli_auth"];
/// The one registered extension a twin never asks for.
pub const SECRET: &str = "pp_preshared_key";
/// The longest extension value a twin asks for, in characters.
pub const MAX_VALUE_CHARS: usize = 1024;
/// The most extensions one node's record may bring.
pub const MAX_EXTENSIONS: usize = 64;

/// The extensions a twin asks for, from a record's `trusted.extensions`, with what was
/// left out added to `dropped`.
pub fn take(
    extensions: &Map<String, Value>,
    dropped: &mut Vec<Dropped>,
) -> BTreeMap<String, String> {
    let mut taken = BTreeMap::new();
    for (key, value) in extensions {
        let shown = format!(
            "trusted.extensions.{}",
            crate::sys::table::truncate(key, 80)
        );
        if taken.len() == MAX_EXTENSIONS {
            dropped.push(Dropped::new(
                shown,
                "more extensions than a twin takes (64)",
            ));
            continue;
        }
        let name = match canonical(key) {
            Ok(name) => name,
            Err(reason) => {
                dropped.push(Dropped::new(shown, reason));
                continue;
            }
        };
        match value {
            Value::String(text) if acceptable_value(text) => {
                taken.insert(name, text.clone());
            }
            _ => dropped.push(Dropped::new(
                shown,
                "its value is not a string of 1 to 1024 printable characters",
            )),
        }
    }
    taken
}

/// The one key of an extension a twin may ask for (a registered OID becomes its short
/// name), or why it may not.
pub fn canonical(key: &str) -> Result<String, &'static str> {
    if AUTHORIZATION_NAMES.contains(&key) || key.starts_with(AUTHORIZATION_ARC) {
        return Err("an authorization extension: it grants access to the server's APIs");
    }
    if let Some(number) = key.strip_prefix(REGISTERED_ARC) {
        return match REGISTERED.iter().find(|(_, n)| n.to_string() == number) {
            Some((name, _)) => canonical(name),
            None => Err("a registered OID Puppet has no name for"),
        };
    }
    if key == SECRET {
        return Err("the pre-shared key: a secret");
    }
    if REGISTERED.iter().any(|(name, _)| *name == key) {
        return Ok(key.to_owned());
    }
    if let Some(rest) = key.strip_prefix(PRIVATE_ARC) {
        let dotted = !rest.is_empty()
            && rest.len() <= 64
            && rest.split('.').all(|arc| {
                !arc.is_empty() && arc.len() <= 9 && arc.bytes().all(|b| b.is_ascii_digit())
            });
        return if dotted {
            Ok(key.to_owned())
        } else {
            Err("not a dotted OID")
        };
    }
    Err("a name Puppet does not know (the estate's own mapping): give its OID")
}

/// `--extension NAME=VALUE` flags as the extension requests a clone asks for, each by the
/// rules a twin's follow; refused whole, naming the flag, on the first that breaks them.
pub fn requested(flags: &[String]) -> Result<BTreeMap<String, String>> {
    let refused = |flag: &str, reason: String| Error::InvalidArgument {
        field: FIELD,
        value: crate::sys::table::truncate(flag, 80),
        reason,
    };
    if flags.len() > MAX_EXTENSIONS {
        return Err(refused(
            &flags[MAX_EXTENSIONS],
            format!("at most {MAX_EXTENSIONS} extensions a clone"),
        ));
    }
    let mut taken = BTreeMap::new();
    for flag in flags {
        let Some((key, value)) = flag.split_once('=') else {
            return Err(refused(
                flag,
                "give it as NAME=VALUE, e.g. pp_role=web".to_owned(),
            ));
        };
        let name = canonical(key).map_err(|why| {
            refused(
                flag,
                format!("{why}; allowed: a registered name (pp_role, pp_environment, ...) but pp_preshared_key and the authorization ones, or a private OID 1.3.6.1.4.1.34380.1.2.N"),
            )
        })?;
        if !acceptable_value(value) {
            return Err(refused(
                flag,
                format!("the value must be 1 to {MAX_VALUE_CHARS} printable characters"),
            ));
        }
        if taken.insert(name.clone(), value.to_owned()).is_some() {
            return Err(refused(flag, format!("{name} is given twice")));
        }
    }
    Ok(taken)
}

fn acceptable_value(text: &str) -> bool {
    let chars = text.chars().count();
    (1..=MAX_VALUE_CHARS).contains(&chars) && !text.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn taken(value: Value) -> (BTreeMap<String, String>, Vec<Dropped>) {
        let mut dropped = Vec::new();
        let map = value.as_object().unwrap().clone();
        (take(&map, &mut dropped), dropped)
    }

    fn flags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn extension_flags_are_taken_by_a_twins_rules_a_registered_oid_by_its_name() {
        let taken = requested(&flags(&[
            "pp_role=web",
            "1.3.6.1.4.1.34380.1.1.12=production",
            "1.3.6.1.4.1.34380.1.2.7=rack=4",
        ]))
        .unwrap();
        assert_eq!(
            taken,
            BTreeMap::from([
                ("pp_role".to_owned(), "web".to_owned()),
                ("pp_environment".to_owned(), "production".to_owned()),
                ("1.3.6.1.4.1.34380.1.2.7".to_owned(), "rack=4".to_owned()),
            ])
        );
        assert!(requested(&[]).unwrap().is_empty());
    }

    #[test]
    fn extension_flags_that_break_a_rule_are_refused_naming_the_flag_and_what_is_allowed() {
        for (flag, says) in [
            ("pp_role", "NAME=VALUE"),
            ("pp_auth_role=compiler", "authorization"),
            ("pp_preshared_key=s3cret", "secret"),
            ("my_custom=x", "allowed: a registered name"),
            ("pp_role=", "1 to 1024 printable"),
            ("pp_role=a\nb", "printable"),
        ] {
            let err = requested(&[flag.to_owned()]).unwrap_err().to_string();
            assert!(
                err.contains("extension") && err.contains(says),
                "{flag}: {err}"
            );
        }
        let twice = requested(&flags(&["pp_role=web", "1.3.6.1.4.1.34380.1.1.13=db"]));
        assert!(twice
            .unwrap_err()
            .to_string()
            .contains("pp_role is given twice"));
        let many: Vec<String> = (0..=MAX_EXTENSIONS)
            .map(|i| format!("1.3.6.1.4.1.34380.1.2.{i}=x"))
            .collect();
        assert!(requested(&many)
            .unwrap_err()
            .to_string()
            .contains("at most 64"));
    }

    #[test]
    fn registered_names_and_private_oids_are_taken_a_registered_oid_by_its_name() {
        let (ext, dropped) = taken(json!({
            "pp_role": "web",
            "1.3.6.1.4.1.34380.1.1.12": "production",
            "1.3.6.1.4.1.34380.1.2.7": "rack 4",
        }));
        assert_eq!(
            ext,
            BTreeMap::from([
                ("pp_role".to_owned(), "web".to_owned()),
                ("pp_environment".to_owned(), "production".to_owned()),
                ("1.3.6.1.4.1.34380.1.2.7".to_owned(), "rack 4".to_owned()),
            ])
        );
        assert!(dropped.is_empty(), "{dropped:?}");
    }

    #[test]
    fn authorization_extensions_and_the_preshared_key_are_never_taken() {
        let (ext, dropped) = taken(json!({
            "pp_authorization": "puppetserver",
            "pp_auth_role": "compiler",
            "pp_cli_auth": "true",
            "1.3.6.1.4.1.34380.1.3.39": "true",
            "pp_preshared_key": "s3cret",
            "1.3.6.1.4.1.34380.1.1.4": "s3cret",
        }));
        assert!(ext.is_empty(), "{ext:?}");
        assert_eq!(dropped.len(), 6);
        assert!(dropped
            .iter()
            .all(|d| d.reason.contains("authorization") || d.reason.contains("secret")));
    }

    #[test]
    fn unknown_names_bad_oids_and_bad_values_are_left_out_with_a_reason() {
        let (ext, dropped) = taken(json!({
            "my_custom": "x",
            "1.3.6.1.4.1.34380.1.1.99": "x",
            "1.3.6.1.4.1.34380.1.2.1..2": "x",
            "pp_zone": "",
            "pp_region": "eu\nwest",
            "pp_owner": 7,
            "pp_apptier": "x".repeat(MAX_VALUE_CHARS + 1),
        }));
        assert!(ext.is_empty(), "{ext:?}");
        let reasons: Vec<&str> = dropped.iter().map(|d| d.reason.as_str()).collect();
        assert_eq!(dropped.len(), 7, "{reasons:?}");
        assert!(reasons.iter().any(|r| r.contains("give its OID")));
        assert!(reasons.iter().any(|r| r.contains("no name for")));
        assert!(reasons.iter().any(|r| r.contains("not a dotted OID")));
    }

    #[test]
    fn a_record_brings_at_most_the_most_extensions_a_twin_takes() {
        let many: Map<String, Value> = (0..MAX_EXTENSIONS + 5)
            .map(|i| (format!("{PRIVATE_ARC}{i}"), json!("v")))
            .collect();
        let (ext, dropped) = taken(Value::Object(many));
        assert_eq!(ext.len(), MAX_EXTENSIONS);
        assert_eq!(dropped.len(), 5);
    }
}
