//! External facts a clone is given (in its config dir's `facts.d/`, which the clone sees
//! at `/etc/facter/facts.d`; see [`super::config`]): per-clone facts from a JSON file, and
//! generated facts like Puppet's clamps load test (a fixed set of names, a share of them
//! changing value on every run), so PuppetDB and compiles see realistic churn.

use std::path::Path;

use serde_json::{Map, Value};

use super::config::{CloneConfig, Refused, FACTS_DIR};
use crate::protocol::error::{Error, Result};
use crate::sys::table::truncate;
use crate::systemd::units::header;

/// The facts file and the generated facts' script, by their names in the facts directory.
pub const FACTS_JSON: &str = "clone_army.json";
pub const GENERATED_SCRIPT: &str = "clone_army_generated";
/// Names are `clone_army_fact_0001` to `_9999`.
pub const MAX_GENERATED_FACTS: u32 = 9999;
/// The share of generated facts that change every run, at most (all of them).
pub const MAX_CHURN_PERCENT: u32 = 100;
/// The most a facts file holds: `--facts-file` as given, and the file clone-army writes
/// from it (which is what a clone's facts are read back from).
pub const MAX_FACTS_FILE_BYTES: u64 = 1024 * 1024;
pub const MAX_FACT_NAME: usize = 128;
pub const MAX_FACT_STRING: usize = 4096;

pub type Facts = Map<String, Value>;

fn invalid(field: &'static str, value: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::InvalidArgument {
        field,
        value: value.into(),
        reason: reason.into(),
    }
}

/// Reads and validates `--facts-file`: a JSON object of fact names (`[a-z0-9_]+`) to
/// flat string, number or boolean values. `{}` means no per-clone facts.
pub fn load(path: &Path) -> Result<Facts> {
    let shown = path.display().to_string();
    let metadata = std::fs::metadata(path)
        .map_err(|e| invalid("facts-file", &shown, format!("cannot read it: {e}")))?;
    if metadata.len() > MAX_FACTS_FILE_BYTES {
        return Err(invalid(
            "facts-file",
            &shown,
            format!("allowed: at most {MAX_FACTS_FILE_BYTES} bytes"),
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| invalid("facts-file", &shown, format!("cannot read it: {e}")))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        invalid(
            "facts-file",
            &shown,
            format!("not JSON ({e}); allowed: one JSON object"),
        )
    })?;
    validate(value).map_err(|reason| invalid("facts-file", &shown, reason))
}

/// The object, or why it is refused (saying what is allowed): flat facts with plain names
/// that, as clone-army writes them, take at most [`MAX_FACTS_FILE_BYTES`].
pub fn validate(value: Value) -> std::result::Result<Facts, String> {
    let Value::Object(facts) = value else {
        return Err("allowed: one JSON object of facts".to_owned());
    };
    for (name, value) in &facts {
        let name_ok = !name.is_empty()
            && name.len() <= MAX_FACT_NAME
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !name_ok {
            // A name is quoted as far as a name may go: it may be a clone's megabyte.
            return Err(format!(
                "fact name {:?} is invalid; allowed: 1 to {MAX_FACT_NAME} characters of a-z, 0-9 and '_'",
                truncate(name, MAX_FACT_NAME + 1)
            ));
        }
        match value {
            Value::String(s) if s.chars().count() <= MAX_FACT_STRING => {}
            Value::Number(_) | Value::Bool(_) => {}
            _ => {
                return Err(format!(
                    "fact {name:?} has an invalid value; allowed: a string of at most {MAX_FACT_STRING} characters, a number or a boolean"
                ))
            }
        }
    }
    let written = rendered(&facts).len() as u64;
    if written > MAX_FACTS_FILE_BYTES {
        return Err(format!(
            "the facts take {written} bytes as clone-army writes them; allowed: at most {MAX_FACTS_FILE_BYTES}"
        ));
    }
    Ok(facts)
}

/// The facts file as clone-army writes it. (A map of JSON values always serializes.)
fn rendered(facts: &Facts) -> String {
    let mut text = serde_json::to_string_pretty(facts).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes the facts file (removes it for no facts). Returns whether it changed.
pub fn apply_facts(config: &CloneConfig, facts: &Facts) -> Result<bool> {
    let name = format!("{FACTS_DIR}/{FACTS_JSON}");
    if facts.is_empty() {
        return config.remove_file(&name);
    }
    config.write(&name, &rendered(facts), 0o644)
}

/// Generated facts: how many, and the share (percent) that change on every run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Generated {
    pub count: u32,
    pub churn_percent: u32,
}

impl Generated {
    pub fn validate(count: Option<u32>, churn_percent: Option<u32>) -> Result<()> {
        if let Some(count) = count.filter(|c| *c > MAX_GENERATED_FACTS) {
            return Err(invalid(
                "generated-facts",
                count.to_string(),
                format!("allowed: 0 to {MAX_GENERATED_FACTS} (0: none)"),
            ));
        }
        if let Some(percent) = churn_percent.filter(|p| *p > MAX_CHURN_PERCENT) {
            return Err(invalid(
                "churn-percent",
                percent.to_string(),
                format!("allowed: 0 to {MAX_CHURN_PERCENT}"),
            ));
        }
        Ok(())
    }

    /// The facts that change every run: the first ceil(count·percent/100).
    pub fn churned(&self) -> u32 {
        (self.count * self.churn_percent).div_ceil(100)
    }
}

/// The external fact script. Only validated integers are substituted into it.
///
/// Churned facts carry the time and a random number, so they differ on every run;
/// stable ones are derived from the clone's hostname, so they differ between clones
/// and stay the same in each.
pub fn generated_script(generated: &Generated) -> String {
    format!(
        "#!/bin/sh
{header}\
# Generated external facts for load tests (like Puppet's clamps): {count} facts named
# clone_army_fact_0001 and up; the first {churn} change value on every run.
count={count}
# shellcheck disable=SC2034 # not used here: recorded for `clone-army clone list`
churn_percent={percent}
churn={churn}
seed=$(uname -n | cksum | cut -d ' ' -f 1)
now=$(date +%s)
nonce=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
exec awk -v count=\"$count\" -v churn=\"$churn\" -v seed=\"$seed\" -v now=\"$now\" -v nonce=\"$nonce\" 'BEGIN {{
    for (i = 1; i <= count; i++) {{
        if (i <= churn) printf \"clone_army_fact_%04d=%s-%s-%d\\n\", i, now, nonce, i
        else printf \"clone_army_fact_%04d=%d\\n\", i, (seed * 31 + i * 7919) % 1000000007
    }}
}}'
",
        header = header(),
        count = generated.count,
        percent = generated.churn_percent,
        churn = generated.churned(),
    )
}

/// Writes the script (mode 0755), or removes it for a count of 0.
pub fn apply_generated(config: &CloneConfig, generated: &Generated) -> Result<bool> {
    let name = format!("{FACTS_DIR}/{GENERATED_SCRIPT}");
    if generated.count == 0 {
        return config.remove_file(&name);
    }
    config.write(&name, &generated_script(generated), 0o755)
}

/// What the clone is given, read back with the rules it was written with: its facts
/// (`{}` when none), its generated facts (`None` when there is no script of ours), and what
/// is refused of either (a file the clone rewrote or a person edited).
#[derive(Debug, Default)]
pub struct ReadBack {
    pub facts: Facts,
    pub generated: Option<Generated>,
    pub refused: Vec<Refused>,
}

pub fn read_back(source: &CloneConfig) -> Result<ReadBack> {
    let mut read = ReadBack::default();
    let facts_file = format!("{FACTS_DIR}/{FACTS_JSON}");
    if let Some(text) = source.facts_file(FACTS_JSON)? {
        let facts = if text.len() as u64 > MAX_FACTS_FILE_BYTES {
            Err(format!(
                "it is {} bytes; allowed: at most {MAX_FACTS_FILE_BYTES}",
                text.len()
            ))
        } else {
            serde_json::from_str::<Value>(&text)
                .map_err(|e| format!("it is not JSON ({e})"))
                .and_then(validate)
        };
        match facts {
            Ok(facts) => read.facts = facts,
            Err(reason) => read.refused.push(Refused {
                file: facts_file,
                setting: "facts",
                reason,
            }),
        }
    }
    if let Some(text) = source.facts_file(GENERATED_SCRIPT)? {
        let ours = text
            .lines()
            .nth(1)
            .is_some_and(crate::systemd::units::is_ours);
        if ours {
            let get = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix('=')?.parse::<u32>().ok())
            };
            let script = format!("{FACTS_DIR}/{GENERATED_SCRIPT}");
            match (get("count"), get("churn_percent")) {
                (Some(count), Some(churn_percent)) => {
                    match Generated::validate(Some(count), Some(churn_percent)) {
                        Ok(()) => {
                            read.generated = Some(Generated {
                                count,
                                churn_percent,
                            })
                        }
                        Err(e) => read
                            .refused
                            .push(Refused::by(&script, "generated facts", e)),
                    }
                }
                _ => read.refused.push(Refused {
                    file: script,
                    setting: "generated facts",
                    reason: "its count= or churn_percent= is not a number".to_owned(),
                }),
            }
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::process::Command;

    #[test]
    fn facts_are_flat_with_plain_names() {
        assert!(validate(json!({"role": "web", "tier": 3, "canary": true, "x_1": 1.5})).is_ok());
        for bad in [
            json!([1]),
            json!("x"),
            json!({"Role": "x"}),
            json!({"a-b": "x"}),
            json!({"": "x"}),
            json!({"a": {"b": 1}}),
            json!({"a": [1]}),
            json!({"a": null}),
        ] {
            assert!(validate(bad.clone()).is_err(), "{bad}");
        }
        let message = validate(json!({"a.b": 1})).unwrap_err();
        assert!(message.contains("allowed: "), "{message}");
    }

    /// The facts file is read back with the rule it is written with: facts that would
    /// take more than a facts file as clone-army writes them are refused on the way in,
    /// and a name is never quoted past a name's length.
    #[test]
    fn facts_are_at_most_a_facts_file_as_written() {
        let many = |n: usize| -> Value {
            Value::Object(
                (0..n)
                    .map(|i| (format!("f_{i}"), "v".repeat(4000).into()))
                    .collect(),
            )
        };
        assert!(validate(many(200)).is_ok());
        let refused = validate(many(300)).unwrap_err();
        assert!(refused.contains("allowed: at most 1048576"), "{refused}");
        let long = validate(json!({"A".repeat(1 << 20): 1})).unwrap_err();
        assert!(long.len() < 400, "{}", long.len());
    }

    #[test]
    fn the_churned_share_rounds_up() {
        let g = |count, churn_percent| Generated {
            count,
            churn_percent,
        };
        assert_eq!(g(500, 15).churned(), 75);
        assert_eq!(g(10, 25).churned(), 3);
        assert_eq!(g(3, 1).churned(), 1);
        assert_eq!(g(10, 0).churned(), 0);
        assert_eq!(g(9999, 100).churned(), 9999);
        assert!(Generated::validate(Some(10_000), None).is_err());
        assert!(Generated::validate(None, Some(101)).is_err());
        assert!(Generated::validate(Some(9999), Some(100)).is_ok());
    }

    fn run_script(path: &Path) -> Vec<(String, String)> {
        let output = Command::new("sh").arg(path).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (k, v) = l.split_once('=').unwrap();
                (k.to_owned(), v.to_owned())
            })
            .collect()
    }

    #[test]
    fn generated_facts_churn_the_first_share_and_keep_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("clone_army_generated");
        let generated = Generated {
            count: 10,
            churn_percent: 25,
        };
        std::fs::write(&script, generated_script(&generated)).unwrap();
        let first = run_script(&script);
        let second = run_script(&script);
        let names: Vec<&str> = first.iter().map(|(k, _)| k.as_str()).collect();
        let expected: Vec<String> = (1..=10)
            .map(|i| format!("clone_army_fact_{i:04}"))
            .collect();
        assert_eq!(names, expected);
        assert_eq!(
            second.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            first.iter().map(|(k, _)| k).collect::<Vec<_>>()
        );
        for i in 0..10 {
            assert!(!first[i].1.is_empty());
            if i < 3 {
                assert_ne!(first[i].1, second[i].1, "fact {} should churn", first[i].0);
            } else {
                assert_eq!(
                    first[i].1, second[i].1,
                    "fact {} should be stable",
                    first[i].0
                );
            }
        }
    }

    #[test]
    fn generated_script_passes_shellcheck() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("clone_army_generated");
        std::fs::write(
            &script,
            generated_script(&Generated {
                count: 5,
                churn_percent: 40,
            }),
        )
        .unwrap();
        let output = Command::new("shellcheck")
            .arg("-s")
            .arg("sh")
            .arg(&script)
            .output()
            .expect("this test needs shellcheck (make deps installs it)");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }

    #[test]
    fn generated_script_snapshot_and_read_back() {
        let generated = Generated {
            count: 500,
            churn_percent: 15,
        };
        let script = generated_script(&generated);
        insta::assert_snapshot!(script.replace(env!("CARGO_PKG_VERSION"), "[version]"));
        let dir = tempfile::tempdir().unwrap();
        let config = CloneConfig::of(&crate::sys::paths::Layout::under(dir.path()), "c1");
        config.create().unwrap();
        assert!(apply_generated(&config, &generated).unwrap());
        assert!(apply_facts(
            &config,
            &[("role".to_owned(), "web".into())].into_iter().collect()
        )
        .unwrap());
        let read = read_back(&config).unwrap();
        assert_eq!(read.generated, Some(generated));
        assert_eq!(read.facts["role"], "web");
        assert!(read.refused.is_empty());
    }
}
