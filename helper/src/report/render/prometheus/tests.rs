//! The textfile against the exposition format's conventions, read back with a small
//! parser of the format (families, `# TYPE`, label values with their escapes).

use std::collections::BTreeMap;

use super::*;
use crate::report::tests::sample_with_server;

/// One sample line read back: the metric name, its labels unescaped, its value.
#[derive(Debug, PartialEq)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

/// A family as `# TYPE` declares it, with its samples.
#[derive(Debug, Default)]
struct Parsed {
    kind: String,
    help: String,
    samples: Vec<Sample>,
}

/// Reads a sample line as the format's grammar has it: `name`, optionally `{k="v",...}`
/// with `\\`, `\"` and `\n` escapes in values, a space, a value. Panics on anything else.
fn sample_line(line: &str) -> Sample {
    let name_end = line
        .find(['{', ' '])
        .unwrap_or_else(|| panic!("no value: {line:?}"));
    let name = &line[..name_end];
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
        "not a snake_case name: {line:?}"
    );
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(inner) = rest.strip_prefix('{') {
        let mut chars = inner.char_indices();
        loop {
            let key_start = chars.clone().next().unwrap().0;
            let (eq, _) = chars.find(|(_, c)| *c == '=').expect("a label's =");
            let key = inner[key_start..eq].to_owned();
            assert_eq!(chars.next().map(|(_, c)| c), Some('"'), "{line:?}");
            let mut value = String::new();
            loop {
                match chars.next().expect("a label value's end").1 {
                    '\\' => match chars.next().expect("an escape").1 {
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        'n' => value.push('\n'),
                        other => panic!("escape \\{other} in {line:?}"),
                    },
                    '"' => break,
                    '\n' => panic!("a raw newline in {line:?}"),
                    c => value.push(c),
                }
            }
            labels.push((key, value));
            match chars.next() {
                Some((_, ',')) => continue,
                Some((end, '}')) => {
                    rest = &inner[end + 1..];
                    break;
                }
                other => panic!("{other:?} after a label in {line:?}"),
            }
        }
    }
    let value = rest
        .strip_prefix(' ')
        .unwrap_or_else(|| panic!("no space before the value: {line:?}"));
    Sample {
        name: name.to_owned(),
        labels,
        value: value
            .parse()
            .unwrap_or_else(|e| panic!("{value:?} in {line:?}: {e}")),
    }
}

/// The whole file by family; every sample belongs to the family its `# TYPE` last named
/// (no `summary` or `histogram` here, so its name is the family's).
fn parse(text: &str) -> BTreeMap<String, Parsed> {
    let mut lines = text.lines();
    assert_eq!(
        lines.next().map(|l| format!("{l}\n")).as_deref(),
        Some(TEXTFILE_MARKER)
    );
    let mut families: BTreeMap<String, Parsed> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut help: Option<(String, String)> = None;
    for line in lines {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, text) = rest.split_once(' ').unwrap();
            assert!(!text.trim().is_empty(), "{name} has no help");
            help = Some((name.to_owned(), text.to_owned()));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            let (help_name, help_text) = help.take().expect("# HELP before # TYPE");
            assert_eq!(help_name, name);
            let family = families.entry(name.to_owned()).or_default();
            assert!(family.kind.is_empty(), "{name} declared twice");
            family.kind = kind.to_owned();
            family.help = help_text;
            current = Some(name.to_owned());
        } else {
            assert!(!line.starts_with('#'), "a stray comment: {line:?}");
            let sample = sample_line(line);
            let family = current.as_ref().expect("a sample before any # TYPE");
            assert_eq!(&sample.name, family, "a sample outside its family");
            families.get_mut(family).unwrap().samples.push(sample);
        }
    }
    families
}

#[test]
fn every_family_is_a_gauge_or_a_counter_and_only_counters_end_in_total() {
    let families = parse(&prometheus(&sample_with_server()));
    assert!(families.len() > 40, "{}", families.len());
    for (name, family) in &families {
        assert!(name.starts_with("clone_army_"), "{name}");
        match family.kind.as_str() {
            "counter" => assert!(name.ends_with("_total"), "{name}"),
            "gauge" => assert!(!name.ends_with("_total"), "{name}"),
            other => panic!("{name} is a {other}"),
        }
    }
}

/// The values read from the servers that only grow while they run, and nothing else.
#[test]
fn the_servers_counts_since_start_are_the_counters() {
    let families = parse(&prometheus(&sample_with_server()));
    let counters: Vec<&str> = families
        .iter()
        .filter(|(_, f)| f.kind == "counter")
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        counters,
        [
            "clone_army_puppetdb_commands_processed_total",
            "clone_army_server_catalog_requests_total",
            "clone_army_server_compiles_total",
            "clone_army_server_jruby_borrow_timeouts_total",
            "clone_army_server_jruby_borrows_total",
        ]
    );
    let borrows = &families["clone_army_server_jruby_borrows_total"].samples;
    assert_eq!(borrows[0].value, 214.0);
    assert!(families["clone_army_server_jruby_borrows_total"]
        .help
        .contains("since Puppet Server started"));
}

#[test]
fn times_are_in_seconds_and_say_so() {
    let families = parse(&prometheus(&sample_with_server()));
    // A family is in seconds exactly when its name says so.
    for (name, family) in &families {
        assert_eq!(
            name.ends_with("_seconds"),
            family.help.contains("seconds"),
            "{name}: {}",
            family.help
        );
    }
    // Puppet Server's compile mean of 1181 ms.
    assert_eq!(
        families["clone_army_server_compile_mean_seconds"].samples[0].value,
        1.181
    );
}

#[test]
fn build_info_names_the_version_and_the_protocol() {
    let text = prometheus(&sample_with_server());
    let line = format!(
        "clone_army_build_info{{version=\"{}\",protocol=\"{PROTOCOL_VERSION}\"}} 1\n",
        env!("CARGO_PKG_VERSION")
    );
    assert!(text.contains(&line), "{text}");
    assert_eq!(parse(&text)["clone_army_build_info"].kind, "gauge");
}

/// Quantiles are gauges of their own: no `quantile` label, which Prometheus reserves for
/// a summary's samples.
#[test]
fn a_distribution_is_three_gauges_and_a_p95_needs_20_values() {
    let families = parse(&prometheus(&sample_with_server()));
    assert!(families
        .values()
        .flat_map(|f| &f.samples)
        .all(|s| s.labels.iter().all(|(k, _)| k != "quantile")));
    // The sample's 5 run times: a median and a max, no p95.
    let run = |figure: &str| {
        let family = &families[&format!("clone_army_fleet_run_{figure}_seconds")];
        assert_eq!(family.kind, "gauge");
        family.samples.iter().map(|s| s.value).collect::<Vec<_>>()
    };
    assert_eq!(run("p50"), [0.032521726]);
    assert_eq!(run("p95"), Vec::<f64>::new());
    assert_eq!(run("max"), [2.268126647]);

    let mut report = sample_with_server();
    report.fleet.total_time = Distribution::of((1..=20).map(f64::from));
    let families = parse(&prometheus(&report));
    let p95 = &families["clone_army_fleet_run_p95_seconds"].samples;
    assert_eq!(p95.len(), 1);
    assert_eq!(p95[0].value, 19.0);
    // Per load host, labelled by host.
    let hosts = &families["clone_army_puppetdb_fleet_run_max_seconds"].samples;
    assert_eq!(hosts.len(), 2);
    assert_eq!(hosts[0].labels[0].0, "host");
}

/// A clone name or a certname that tries to end its line, close its labels or add a
/// sample: each stays one label value, its control characters made visible.
#[test]
fn hostile_label_values_stay_inside_their_quotes() {
    let hostile = "evil\"} 1\nclone_army_fake{x=\"\\\"} 2\r\u{1b}[2J";
    let mut report = sample_with_server();
    report.clones[0].name = hostile.to_owned();
    let fleet = report.puppetdb.as_mut().unwrap().fleet.as_mut().unwrap();
    fleet.hosts[0].clones[0].certname = hostile.to_owned();
    fleet.hosts[1].host = hostile.to_owned();
    let text = prometheus(&report);
    assert!(!text.contains("\nclone_army_fake"), "{text}");
    let families = parse(&text);
    assert!(!families.contains_key("clone_army_fake"));
    let shown = visible(hostile).into_owned();
    assert!(!shown.contains('\n'));
    let values: Vec<&str> = families
        .values()
        .flat_map(|f| &f.samples)
        .flat_map(|s| &s.labels)
        .filter(|(_, v)| v.starts_with("evil"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert!(values.len() > 10, "{values:?}");
    assert!(values.iter().all(|v| *v == shown), "{values:?}");
    let run = &families["clone_army_clone_last_run_seconds"].samples[0];
    assert_eq!(run.labels, [("clone".to_owned(), shown.clone())]);
}

#[test]
fn label_values_and_help_are_escaped() {
    assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\\\x0ad");
    assert_eq!(help_text("a\\b\nc"), "a\\\\b\\nc");
}

#[test]
fn numbers() {
    assert_eq!(number(3.0), "3");
    assert_eq!(number(0.25), "0.25");
}
