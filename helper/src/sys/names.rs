//! Validation of every name that ends up in a path, a unit name or a config file, and
//! the ports a server is asked on.
//!
//! Names are checked before anything is touched on disk, so a bad name never creates
//! (or removes) a file.

use crate::protocol::error::{Error, Result};

/// Puppet Server's port where none is given: Puppet's own default `serverport`, for a
/// clone's puppet.conf without one, `report --server` as a bare host, a PE primary's
/// installer.
pub const DEFAULT_SERVER_PORT: u16 = 8140;
/// The ports a server can be asked on (0 is none).
pub const SERVER_PORTS: std::ops::RangeInclusive<u16> = 1..=u16::MAX;

pub const MAX_NAME_LEN: usize = 64;
pub const MAX_HOSTNAME_LEN: usize = 253;
/// The longest label (the part between dots) of a hostname, as DNS has it.
pub const MAX_LABEL_LEN: usize = 63;
/// The longest hostname the kernel keeps for a UTS namespace (`HOST_NAME_MAX`): a
/// certname may be longer than a machine's hostname can be.
pub const MAX_KERNEL_HOSTNAME_LEN: usize = 64;

/// What a refused name is told is allowed (docs/PROTOCOL.md, "Names").
pub const NAME_RULE: &str =
    "1 to 64 characters of a-z, 0-9 and '-', starting with a letter or digit";
/// What a refused server or certname is told is allowed.
pub const HOSTNAME_RULE: &str = "a hostname: labels of A-Z, a-z, 0-9 and '-' (not at either \
     end, 1 to 63 characters) separated by '.', at most 253 characters in all";

/// A clone or base name: `^[a-z0-9][a-z0-9-]*$`, 1 to 64 characters.
pub fn validate_name(what: &'static str, field: &'static str, name: &str) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidName {
        what,
        field,
        name: name.to_owned(),
        reason: format!("{reason}; allowed: {NAME_RULE}"),
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
        return Err(invalid(&format!("{bad:?} is not allowed")));
    }
    Ok(())
}

/// A base name: a name ([`validate_name`]) that does not end like a clone's directories
/// in the state directory (`-overlay`, `-workdir`, `-config`), so that no clone's upper
/// layer can be taken for a base, nor a base for a clone's directory.
pub fn validate_base_name(field: &'static str, name: &str) -> Result<()> {
    validate_name("base", field, name)?;
    match crate::sys::paths::CLONE_DIR_SUFFIXES
        .iter()
        .find(|suffix| name.ends_with(*suffix))
    {
        Some(suffix) => Err(Error::InvalidName {
            what: "base",
            field,
            name: name.to_owned(),
            reason: format!(
                "it ends in {suffix:?}, which names a clone's directory; allowed: {NAME_RULE}, \
                 not ending in {}",
                crate::sys::paths::CLONE_DIR_SUFFIXES.join(", ")
            ),
        }),
        None => Ok(()),
    }
}

/// Whether `name` could be a base's directory in the state directory (what `base list`
/// considers): a valid base name.
pub fn is_base_name(name: &str) -> bool {
    validate_base_name("name", name).is_ok()
}

/// A server or certname: DNS labels of `[A-Za-z0-9-]` separated by `.`, at most 253 characters.
pub fn validate_hostname(field: &'static str, value: &str) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidArgument {
        field,
        value: value.to_owned(),
        reason: format!("{reason}; allowed: {HOSTNAME_RULE}"),
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
        if label.len() > MAX_LABEL_LEN {
            return Err(invalid(&format!(
                "a label is longer than {MAX_LABEL_LEN} characters"
            )));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(invalid("a label starts or ends with '-'"));
        }
        if let Some(bad) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            return Err(invalid(&format!("{bad:?} is not allowed")));
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
                assert!(e.to_string().contains(NAME_RULE), "{e}");
            }
        }
    }

    #[test]
    fn base_names_never_end_like_a_clones_directories() {
        assert!(validate_base_name("name", "debian-12").is_ok());
        assert!(validate_base_name("name", "overlay").is_ok());
        for name in ["clone1-overlay", "clone1-workdir", "clone1-config"] {
            let error = validate_base_name("name", name).unwrap_err();
            assert_eq!(error.field(), Some("name"));
            assert!(
                error.to_string().contains("names a clone's directory"),
                "{error}"
            );
            assert!(!is_base_name(name));
        }
        assert!(!is_base_name(".staging-x"));
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
            let result = validate_hostname("server", value);
            assert_eq!(result.is_ok(), *ok, "{value:?}: {result:?}");
            if let Err(e) = result {
                assert_eq!(e.kind(), "invalid-argument");
                assert_eq!(e.field(), Some("server"));
                let message = e.to_string();
                assert!(message.starts_with("server "), "{message}");
                assert!(message.contains(HOSTNAME_RULE), "{message}");
            }
        }
    }
}

/// Whatever the validators accept obeys the documented grammar, and whatever the grammar
/// allows they accept; every refusal names its field and what is allowed.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// `^[a-z0-9][a-z0-9-]*$`, 1 to 64 characters, checked independently of the validator.
    fn name_grammar(name: &str) -> bool {
        let bytes = name.as_bytes();
        (1..=MAX_NAME_LEN).contains(&bytes.len())
            && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    }

    fn hostname_grammar(value: &str) -> bool {
        (1..=MAX_HOSTNAME_LEN).contains(&value.len())
            && value.split('.').all(|label| {
                (1..=63).contains(&label.len())
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
    }

    /// Names of the grammar, built to it rather than found by chance.
    fn grammar_names() -> impl Strategy<Value = String> {
        "[a-z0-9][a-z0-9-]{0,63}"
    }

    /// Hostnames of the grammar: up to three labels, none starting or ending with '-'.
    fn grammar_hostnames() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?){0,2}"
    }

    /// Arbitrary text, text close to valid names (where the mistakes hide), and valid
    /// names, weighted so that both the acceptance and the refusal are checked often:
    /// arbitrary text alone is almost never a name.
    fn near_names() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => any::<String>(),
            1 => "[a-zA-Z0-9./_ \\-]{0,70}",
            1 => "[a-z0-9-]{0,70}",
            1 => "[a-z0-9][a-z0-9-]{0,62}[\\x00-\\x1f\\x7f/.A-Z\\u{e9}\\u{2028}]",
            2 => grammar_names(),
        ]
    }

    fn near_hostnames() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => any::<String>(),
            1 => "[a-zA-Z0-9.:/;_ \\-]{0,80}",
            1 => "([a-zA-Z0-9-]{1,70}\\.){0,5}[a-zA-Z0-9-]{0,70}",
            1 => "(a{63}\\.){3}a{60,64}",
            2 => grammar_hostnames(),
        ]
    }

    #[test]
    fn the_name_generator_gives_both_accepted_and_refused_names() {
        crate::sys::test_reach::assert_both_sides(
            "names accepted",
            &near_names(),
            |name| validate_name("clone", "name", name).is_ok(),
            33,
        );
    }

    #[test]
    fn the_hostname_generator_gives_both_accepted_and_refused_hostnames() {
        crate::sys::test_reach::assert_both_sides(
            "hostnames accepted",
            &near_hostnames(),
            |value| validate_hostname("server", value).is_ok(),
            33,
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn accepted_names_obey_the_grammar(name in near_names()) {
            match validate_name("clone", "name", &name) {
                Ok(()) => {
                    prop_assert!(name_grammar(&name), "{:?}", name);
                    prop_assert!(!name.contains('/') && !name.contains(".."));
                    prop_assert!(!name.chars().any(char::is_control));
                    prop_assert!(!name.chars().any(char::is_uppercase));
                    prop_assert!(name.len() <= 64);
                }
                Err(e) => {
                    prop_assert!(!name_grammar(&name), "{:?} refused: {}", name, e);
                    prop_assert_eq!(e.kind(), "invalid-name");
                    prop_assert_eq!(e.field(), Some("name"));
                    let message = e.to_string();
                    prop_assert!(message.starts_with("clone name "), "{}", message);
                    prop_assert!(message.contains(NAME_RULE), "{}", message);
                }
            }
        }

        #[test]
        fn names_of_the_grammar_are_accepted(name in grammar_names()) {
            prop_assert!(validate_name("base", "base", &name).is_ok(), "{:?}", name);
        }

        #[test]
        fn accepted_hostnames_obey_the_grammar(value in near_hostnames()) {
            match validate_hostname("server", &value) {
                Ok(()) => {
                    prop_assert!(hostname_grammar(&value), "{:?}", value);
                    prop_assert!(!value.chars().any(|c| c.is_control() || c.is_whitespace()));
                    prop_assert!(!value.contains(['/', ':', ';', '=', '\\']));
                }
                Err(e) => {
                    prop_assert!(!hostname_grammar(&value), "{:?} refused: {}", value, e);
                    prop_assert_eq!(e.kind(), "invalid-argument");
                    prop_assert_eq!(e.field(), Some("server"));
                    let message = e.to_string();
                    prop_assert!(message.starts_with("server "), "{}", message);
                    prop_assert!(message.contains(HOSTNAME_RULE), "{}", message);
                }
            }
        }

        #[test]
        fn hostnames_of_the_grammar_are_accepted(value in grammar_hostnames()) {
            prop_assert!(validate_hostname("certname", &value).is_ok(), "{:?}", value);
        }
    }
}
