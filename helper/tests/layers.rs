//! The crate's layers (see the map in src/lib.rs): a module may use only its own layer's
//! modules and the layers below, and the top-level modules use each other without
//! cycles; nor do the files of any one folder (`clone/config.rs` and `clone/ssl.rs`, or
//! `clone/migrate/` and `clone/shared.rs`), a folder's `mod.rs` being the folder itself.
//! Read from the `crate::` paths in the sources (doc links included) and, inside a
//! folder, from the code's `crate::`, `super::` and `self::` paths, so a new `use` that
//! climbs a layer or closes a circle fails here, naming the files.

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
    &["twin"],
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

/// A file's module path (`clone/migrate/old_fleet.rs` → `clone::migrate::old_fleet`,
/// `clone/mod.rs` → `clone`).
fn module_path(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// The identifiers that start each part of `text` after a path's `::`: `config::X` gives
/// `config`, `{config::{A, B}, ssl}` gives `config` and `ssl`.
fn first_segments(text: &str) -> Vec<String> {
    let ident = |t: &str| -> String {
        t.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = text.strip_prefix('{') else {
        return vec![ident(text)];
    };
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                parts.push(ident(&group[start..at]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(ident(&group[start..at]));
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// Every module path `text` names, resolved from the module `at`: `crate::a::b` as
/// `a::b`, `super::x` as `at`'s parent's `x`, `self::x` as `at`'s `x`. Only the path up
/// to the first segment after the prefix (and a group's first segments) is resolved:
/// enough to tell which module of a folder is used.
fn module_references(text: &str, at: &[String]) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for prefix in ["crate::", "super::", "self::"] {
        for (start, _) in text.match_indices(prefix) {
            let before = text[..start].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == '$' || c == ':') {
                continue;
            }
            let mut base: Vec<String> = match prefix {
                "crate::" => Vec::new(),
                "self::" => at.to_vec(),
                _ => at[..at.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = &text[start + prefix.len()..];
            // `super::super::x`, `crate::clone::config::X`: walk the plain segments.
            loop {
                if let Some(more) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = more;
                    continue;
                }
                let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
                if name.is_empty() || !rest[name.len()..].starts_with("::") {
                    break;
                }
                base.push(name.clone());
                rest = &rest[name.len() + 2..];
            }
            let tails = first_segments(rest);
            if tails.is_empty() && !base.is_empty() {
                found.insert(base.clone());
            }
            for tail in tails {
                let mut path = base.clone();
                if !tail.is_empty() {
                    path.push(tail);
                }
                if !path.is_empty() {
                    found.insert(path);
                }
            }
        }
    }
    found
}

/// The code of a module outside its inline tests (`#[cfg(test)] mod tests`, at the end
/// of a file): a test may set a scene with the folder's other modules, as with peers.
fn outside_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests {")
        .map_or(text, |at| &text[..at])
}

/// Each folder's graph of its own modules (a file, or a subfolder as a whole), from the
/// code of every file below it; a folder's `mod.rs` is the folder, not one of its
/// modules, and its tests (`tests.rs`, `tests/`, inline) are left out.
fn folder_graphs(
    src: &Path,
    files: &[PathBuf],
) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let paths: Vec<Vec<String>> = files
        .iter()
        .map(|f| module_path(f.strip_prefix(src).unwrap()))
        .collect();
    // The modules of each folder (by the folder's module path).
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for path in &paths {
        for depth in 1..path.len() {
            children
                .entry(path[..depth].to_vec())
                .or_default()
                .insert(path[depth].clone());
        }
    }
    for (file, at) in files.iter().zip(&paths) {
        if at.iter().any(|m| m == "tests") {
            continue;
        }
        // Code only: a doc link to a module above in the folder is no circle.
        let text: String = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .map(|line| format!("{line}\n"))
            .collect();
        for used in module_references(outside_tests(&text), at) {
            for depth in 1..at.len() {
                let folder = &at[..depth];
                let (from, Some(siblings)) = (&at[depth], children.get(folder)) else {
                    continue;
                };
                if used.len() > depth
                    && used[..depth] == *folder
                    && used[depth] != *from
                    && siblings.contains(&used[depth])
                {
                    graphs
                        .entry(folder.join("/"))
                        .or_default()
                        .entry(from.clone())
                        .or_default()
                        .insert(used[depth].clone());
                }
            }
        }
    }
    graphs
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
    let folders = folder_graphs(&src, &files);
    // The graphs, for whoever reads the test's output (`cargo test -- --nocapture`).
    for (from, to) in &graph {
        println!(
            "{from} -> {}",
            to.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    for (folder, graph) in &folders {
        println!("\n{folder}/");
        for (from, to) in graph {
            println!(
                "  {from} -> {}",
                to.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    let circles: Vec<String> = folders
        .iter()
        .filter_map(|(folder, graph)| Some(format!("{folder}/: {}", cycle(graph)?.join(" -> "))))
        .collect();
    assert!(
        circles.is_empty(),
        "cycles inside a folder:\n{}",
        circles.join("\n")
    );
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

    // A circle inside a folder: `clone/a.rs` uses `super::b`, `clone/b.rs` uses
    // `crate::clone::{a, c}` (a doc link counts for nothing); `clone/mod.rs` using both
    // is the folder itself, and `clone/sub/x.rs` names its own folder's modules.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    for (file, text) in [
        ("clone/mod.rs", "pub mod a;\npub mod b;\nuse self::a::X;\n"),
        ("clone/a.rs", "use super::b::Y;\n"),
        (
            "clone/b.rs",
            "/// See [`super::d`].\nuse crate::clone::{a, c::{X, Y}};\n",
        ),
        ("clone/d.rs", "use super::b;\n"),
        (
            "clone/c.rs",
            "use super::a;\n#[cfg(test)]\nmod tests {\n    use crate::clone::d;\n}\n",
        ),
        ("clone/tests.rs", "use super::{a, d};\n"),
        ("clone/sub/mod.rs", "mod x;\n"),
        ("clone/sub/x.rs", "use super::y;\nuse super::super::c;\n"),
        ("clone/sub/y.rs", ""),
    ] {
        let path = src.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let graphs = folder_graphs(src, &files);
    let edges = |folder: &str| -> Vec<String> {
        graphs[folder]
            .iter()
            .flat_map(|(from, to)| to.iter().map(move |to| format!("{from}->{to}")))
            .collect()
    };
    assert_eq!(
        edges("clone"),
        ["a->b", "b->a", "b->c", "c->a", "d->b", "sub->c"]
    );
    assert_eq!(edges("clone/sub"), ["x->y"]);
    assert_eq!(
        cycle(&graphs["clone"]),
        Some(["a", "b", "a"].map(String::from).to_vec())
    );
    assert_eq!(cycle(&graphs["clone/sub"]), None);
}
