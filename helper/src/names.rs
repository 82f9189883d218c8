//! Validation of every name that ends up in a path, a unit name or a config file.
//!
//! Names are checked before anything is touched on disk, so a bad name never creates
//! (or removes) a file.

use crate::error::{Error, Result};

pub const MAX_NAME_LEN: usize = 64;
pub const MAX_HOSTNAME_LEN: usize = 253;

/// A clone or base name: `^[a-z0-9][a-z0-9-]*$`, 1 to 64 characters.
pub fn validate_name(what: &'static str, field: &'static str, name: &str) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidName {
        what,
        field,
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(invalid("it is empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(invalid(&format!(
            "it is longer than {MAX_NAME_LEN} characters"
        )));
    }
    if name.starts_with('-') {
        return Err(invalid("it must start with a lower-case letter or a digit"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(invalid(&format!(
            "{bad:?} is not allowed; use lower-case letters, digits and '-'"
        )));
    }
    Ok(())
}

/// A master or certname: DNS labels of `[A-Za-z0-9-]` separated by `.`, at most 253 characters.
pub fn validate_hostname(field: &'static str, value: &str) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidArgument {
        field,
        value: value.to_owned(),
        reason: reason.to_owned(),
    };
    if value.is_empty() {
        return Err(invalid("it is empty"));
    }
    if value.len() > MAX_HOSTNAME_LEN {
        return Err(invalid(&format!(
            "it is longer than {MAX_HOSTNAME_LEN} characters"
        )));
    }
    for label in value.split('.') {
        if label.is_empty() {
            return Err(invalid(
                "it has an empty label (leading, trailing or double '.')",
            ));
        }
        if label.len() > 63 {
            return Err(invalid("a label is longer than 63 characters"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(invalid("a label starts or ends with '-'"));
        }
        if let Some(bad) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            return Err(invalid(&format!("{bad:?} is not allowed in a hostname")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let long_ok = "a".repeat(64);
        let too_long = "a".repeat(65);
        let table: &[(&str, bool)] = &[
            ("clone1", true),
            ("clone-1", true),
            ("1", true),
            ("debian-12", true),
            (&long_ok, true),
            ("", false),
            (&too_long, false),
            ("../x", false),
            ("x/y", false),
            ("x\ny", false),
            ("clone\n", false),
            ("Clone1", false),
            ("-clone", false),
            ("clone_1", false),
            ("clone.1", false),
            ("clone 1", false),
            (".staging-x", false),
            ("klön", false),
        ];
        for (name, ok) in table {
            let result = validate_name("clone", "name", name);
            assert_eq!(result.is_ok(), *ok, "{name:?}: {result:?}");
            if let Err(e) = result {
                assert_eq!(e.kind(), "invalid-name");
                assert_eq!(e.field(), Some("name"));
            }
        }
    }

    #[test]
    fn hostnames() {
        let long_label = "a".repeat(64);
        let too_long = ["a"; 127].join(".") + ".ab";
        let table: &[(&str, bool)] = &[
            ("puppet", true),
            ("puppet.example.com", true),
            ("Clone-1.Load-Host.example", true),
            ("10.0.0.1", true),
            ("", false),
            ("puppet.", false),
            (".puppet", false),
            ("a..b", false),
            ("-a.b", false),
            ("a-.b", false),
            ("a_b", false),
            ("a b", false),
            ("a\nb", false),
            ("--server=x", false),
            (&long_label, false),
            (&too_long, false),
        ];
        for (value, ok) in table {
            let result = validate_hostname("master", value);
            assert_eq!(result.is_ok(), *ok, "{value:?}: {result:?}");
            if let Err(e) = result {
                assert_eq!(e.kind(), "invalid-argument");
                assert_eq!(e.field(), Some("master"));
            }
        }
    }
}
