//! The crate's layers (see the map in src/lib.rs): a module may use only its own layer's
//! modules and the layers below, and the top-level modules use each other without
//! cycles. Read from the `crate::` paths in the sources, so a new `use` that climbs a
//! layer fails here, naming the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom first; modules in one entry are peers of one layer.
const LAYERS: &[&[&str]] = &[
    &["protocol"],
    &["sys"],
    &["systemd"],
    &["context"],
    &["host"],
    &["inventory"],
    &["base", "clone"],
    &["exec", "report"],
    &["record"],
    &["ramp"],
    &["schema"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`clone/create.rs` → `clone`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_owned()
}

/// Every top-level module named after `crate::` in `text`, also inside `use crate::{a, b}`.
fn crate_references(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        // `clone_army::crate::` cannot occur; `$crate::` (macros) is not ours.
        if text[..at].ends_with('$') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for part in inner.split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// Each breach as "file uses module (layer) from module (layer)".
fn breaches(edges: &[(String, String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (file, from, to) in edges {
        let (Some(own), Some(used)) = (layer_of(from), layer_of(to)) else {
            found.push(format!(
                "{file}: {from} -> {to}: a module missing from LAYERS"
            ));
            continue;
        };
        // A test module may set a scene with its peers (a clone test needs a base).
        let test_only = file.ends_with("tests.rs") || file.contains("/tests/");
        let peer_in_a_test = used == own && test_only;
        if used > own || (used == own && from != to && !peer_in_a_test) {
            found.push(format!(
                "{file}: {from} (layer {own}) uses {to} (layer {used}), which is not below it"
            ));
        }
    }
    found
}

/// A cycle among the modules, as a path, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut found = path[start..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_uses_a_layer_above_its_own_and_there_are_no_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(&src, file);
        if from == "main" || from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for to in crate_references(&text) {
            if to != from {
                graph.entry(from.clone()).or_default().insert(to.clone());
            }
            let name = file.strip_prefix(&src).unwrap().display().to_string();
            edges.push((name, from.clone(), to));
        }
    }
    let found = breaches(&edges);
    assert!(found.is_empty(), "layer breaches:\n{}", found.join("\n"));
    assert_eq!(cycle(&graph), None);
    // The graph, for whoever reads the test's output (`cargo test -- --nocapture`).
    for (from, to) in &graph {
        println!(
            "{from} -> {}",
            to.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
}

#[test]
fn the_checker_finds_breaches_and_cycles() {
    assert_eq!(
        crate_references(
            "use crate::{sys::paths, protocol::error};\nlet x = crate::host::os::f();"
        ),
        ["host", "protocol", "sys"].map(String::from).into()
    );
    let edge = |from: &str, to: &str| ("f.rs".to_owned(), from.to_owned(), to.to_owned());
    assert!(breaches(&[edge("clone", "sys"), edge("clone", "clone")]).is_empty());
    assert_eq!(breaches(&[edge("sys", "clone")]).len(), 1);
    assert_eq!(breaches(&[edge("base", "clone")]).len(), 1);
    let test_edge = (
        "clone/tests.rs".to_owned(),
        "clone".to_owned(),
        "base".to_owned(),
    );
    assert!(breaches(&[test_edge]).is_empty());
    assert_eq!(breaches(&[edge("nowhere", "sys")]).len(), 1);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), ["b".to_owned()].into()),
        ("b".to_owned(), ["a".to_owned()].into()),
    ]
    .into();
    assert_eq!(
        cycle(&graph),
        Some(["a", "b", "a"].map(String::from).to_vec())
    );
}
