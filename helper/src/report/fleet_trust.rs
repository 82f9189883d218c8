//! The load hosts PuppetDB's `clone_army` facts name, and which of their claims to trust.
//!
//! A fact is whatever its node's agent sent, and a clone's agent runs as root in a clone
//! whose catalog the server under test writes: it can send a `clone_army` fact of its own
//! that lists any certnames as its clones, so as to appear as a load host, to show
//! another node's runs as a clone's, or to take another host's clones. So the facts are
//! read against the module's own convention (a clone's certname is
//! `<clone>.<host certname>`) and against each other:
//!
//! - a node that is itself a clone is no load host, whatever its fact lists: its certname
//!   is `<name>.<certname of a node with a fleet>`, or a load host's fact declares it
//!   (declarations of nodes that are clones by the convention do not count, so that a
//!   clone cannot make its own host a clone by declaring it);
//! - a load host's clone is trusted when its certname is `<clone>.<host certname>`, or
//!   when no other claim names the same certname; a certname claimed twice goes to the
//!   claim that is the convention, or to none;
//! - a clone name that is none, a certname that is no host name (it goes into a query)
//!   or the host's own certname is malformed.
//!
//! What is not trusted is not asked for, and is said: each such claim is an
//! [`UntrustedClaim`] of the answer, never silently dropped.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::protocol::answers::{UntrustedClaim, UntrustedProblem};
use crate::sys::names::{validate_hostname, validate_name, HOSTNAME_RULE, NAME_RULE};

/// The fact the module's load hosts report.
pub const FACT: &str = "clone_army";
/// The most of a malformed name or certname an error quotes.
const MAX_QUOTED: usize = 80;

/// A load host whose fact is trusted, with the clones of it that are.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadHost {
    pub certname: String,
    /// (clone name, certname), sorted by name.
    pub clones: Vec<(String, String)>,
    /// Why its clones cannot be listed, when its fact does not say their certnames.
    pub error: Option<String>,
}

/// The trusted load hosts, sorted by certname, and every claim that is not trusted,
/// sorted by node and clone.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadHosts {
    pub hosts: Vec<LoadHost>,
    pub untrusted: Vec<UntrustedClaim>,
}

/// A node's fact as far as it claims a fleet.
struct Fact<'a> {
    node: &'a str,
    /// How many clones `clones.names` lists.
    names: usize,
    /// `clones.certnames`, when the fact has it: clone name → certname as given.
    certnames: Option<&'a serde_json::Map<String, Value>>,
}

impl<'a> Fact<'a> {
    /// The row's fact, when it claims clones: certnames, or (a module before certnames
    /// were listed) clone names alone. A fact that lists none claims nothing.
    fn of_row(row: &'a Value) -> Option<Self> {
        let node = row.get("certname")?.as_str()?;
        let clones = row.get("value")?.get("clones")?;
        let names = clones
            .get("names")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let certnames = clones.get("certnames").and_then(Value::as_object);
        let claims = match certnames {
            Some(listed) => !listed.is_empty(),
            None => names > 0,
        };
        claims.then_some(Fact {
            node,
            names,
            certnames,
        })
    }

    /// The certnames it declares, whatever they are.
    fn declared(&self) -> impl Iterator<Item = &'a str> {
        self.certnames
            .into_iter()
            .flat_map(|listed| listed.values().filter_map(Value::as_str))
    }

    fn clone_count(&self) -> usize {
        self.certnames.map_or(self.names, |listed| listed.len())
    }
}

/// Certnames compare as DNS names do, without regard to case.
fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

fn is_clone_name(name: &str) -> bool {
    validate_name("clone", "name", name).is_ok()
}

/// `text` quoted, escaped and shortened, for a message about a malformed entry.
fn quoted(text: &str) -> String {
    let shown: String = text.chars().take(MAX_QUOTED).collect();
    if shown.len() < text.len() {
        format!("{shown:?}...")
    } else {
        format!("{shown:?}")
    }
}

/// Why a node with a fleet is itself a clone: the host whose clone it is, and how.
enum CloneOf {
    /// Its certname is `<name>.<host certname>`.
    Convention { host: usize, name: String },
    /// These hosts' facts declare it.
    Declared { hosts: Vec<usize> },
}

/// One trusted host's claim of one clone.
struct Claim<'a> {
    host: usize,
    clone: &'a str,
    certname: &'a str,
    convention: bool,
}

/// The load hosts in the answer to the facts query, and what is not trusted.
pub fn load_hosts(answer: &Value) -> Result<LoadHosts, String> {
    let rows = answer.as_array().ok_or_else(|| {
        format!(
            "the facts query answered something not a list: {}",
            brief(answer)
        )
    })?;
    let mut untrusted = Vec::new();
    // PuppetDB holds one fact of a name per node; a second row for a node is not read.
    let mut by_node: BTreeMap<String, usize> = BTreeMap::new();
    let mut facts: Vec<Fact> = Vec::new();
    for fact in rows.iter().filter_map(Fact::of_row) {
        // A node's certname goes into the reports query and the answer like its clones'.
        if validate_hostname("certname", fact.node).is_err() {
            untrusted.push(UntrustedClaim {
                node: quoted(fact.node),
                clone: None,
                certname: None,
                problem: UntrustedProblem::Malformed,
                message: format!(
                    "a node whose certname is not a host name (allowed: {HOSTNAME_RULE}) \
                     sent a {FACT} fact; it is not read"
                ),
            });
            continue;
        }
        if by_node.contains_key(&key(fact.node)) {
            untrusted.push(UntrustedClaim {
                node: fact.node.to_owned(),
                clone: None,
                certname: None,
                problem: UntrustedProblem::Malformed,
                message: format!(
                    "a second {FACT} fact of this node in the answer; only the first is read"
                ),
            });
            continue;
        }
        by_node.insert(key(fact.node), facts.len());
        facts.push(fact);
    }

    // Clones by the convention first: that cannot be claimed, only named so.
    let mut clone_of: Vec<Option<CloneOf>> = facts
        .iter()
        .enumerate()
        .map(|(i, fact)| {
            let (name, parent) = fact.node.split_once('.')?;
            let host = *by_node.get(&key(parent))?;
            (host != i && is_clone_name(name)).then(|| CloneOf::Convention {
                host,
                name: name.to_owned(),
            })
        })
        .collect();
    // Then the nodes the others declare; only nodes that are no clone by the convention
    // declare anything.
    let mut declared_by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (h, fact) in facts.iter().enumerate() {
        if clone_of[h].is_some() {
            continue;
        }
        for certname in fact.declared() {
            match by_node.get(&key(certname)) {
                Some(&n) if n != h && clone_of[n].is_none() => {
                    declared_by.entry(n).or_default().push(h)
                }
                _ => {}
            }
        }
    }
    for (n, mut hosts) in declared_by {
        hosts.sort_unstable();
        hosts.dedup();
        clone_of[n] = Some(CloneOf::Declared { hosts });
    }

    let mut claims: Vec<Claim> = Vec::new();
    for (i, fact) in facts.iter().enumerate() {
        if let Some(how) = &clone_of[i] {
            untrusted.push(clone_as_load_host(&facts, fact, how));
            continue;
        }
        let Some(listed) = fact.certnames else {
            continue;
        };
        for (clone, certname) in listed {
            match malformed(fact.node, clone, certname) {
                Some(claim) => untrusted.push(claim),
                None => {
                    let certname = certname.as_str().unwrap_or_default();
                    claims.push(Claim {
                        host: i,
                        clone,
                        certname,
                        convention: key(certname) == key(&format!("{clone}.{}", fact.node)),
                    });
                }
            }
        }
    }

    let mut by_certname: BTreeMap<String, Vec<&Claim>> = BTreeMap::new();
    for claim in &claims {
        by_certname
            .entry(key(claim.certname))
            .or_default()
            .push(claim);
    }
    let mut trusted: BTreeMap<usize, Vec<(String, String)>> = BTreeMap::new();
    for same in by_certname.values() {
        let by_convention: Vec<&Claim> = same.iter().copied().filter(|c| c.convention).collect();
        let winner = match (same.as_slice(), by_convention.as_slice()) {
            ([only], _) => Some(*only),
            (_, [holder]) => Some(*holder),
            _ => None,
        };
        for claim in same {
            if winner.is_some_and(|w| std::ptr::eq(w, *claim)) {
                trusted
                    .entry(claim.host)
                    .or_default()
                    .push((claim.clone.to_owned(), claim.certname.to_owned()));
            } else {
                untrusted.push(claimed_twice(&facts, claim, same, winner));
            }
        }
    }

    let mut hosts: Vec<LoadHost> = facts
        .iter()
        .enumerate()
        .filter(|(i, _)| clone_of[*i].is_none())
        .map(|(i, fact)| {
            let mut clones = trusted.remove(&i).unwrap_or_default();
            clones.sort();
            LoadHost {
                certname: fact.node.to_owned(),
                clones,
                error: fact.certnames.is_none().then(|| {
                    format!(
                        "its {FACT} fact lists {} clones but not their certnames \
                         (the module on that host predates clones.certnames)",
                        fact.names
                    )
                }),
            }
        })
        .collect();
    hosts.sort_by(|a, b| a.certname.cmp(&b.certname));
    untrusted.sort_by(|a, b| (&a.node, &a.clone).cmp(&(&b.node, &b.clone)));
    Ok(LoadHosts { hosts, untrusted })
}

/// The refusal of a whole fact whose node is itself a clone.
fn clone_as_load_host(facts: &[Fact], fact: &Fact, how: &CloneOf) -> UntrustedClaim {
    let why = match how {
        CloneOf::Convention { host, name } => format!(
            "{} is {}'s clone {name} by its certname (<clone>.<host certname>)",
            fact.node, facts[*host].node
        ),
        CloneOf::Declared { hosts } => format!(
            "{} is declared a clone by the {FACT} fact of {}",
            fact.node,
            hosts
                .iter()
                .map(|h| facts[*h].node)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    UntrustedClaim {
        node: fact.node.to_owned(),
        clone: None,
        certname: None,
        problem: UntrustedProblem::CloneAsLoadHost,
        message: format!(
            "its {FACT} fact lists {} clones, but {why}: a clone is no load host, so none of \
             them is trusted",
            fact.clone_count()
        ),
    }
}

/// Why a listed clone cannot be one, if it cannot.
fn malformed(node: &str, clone: &str, certname: &Value) -> Option<UntrustedClaim> {
    let refused = |clone: Option<&str>, certname: Option<&str>, why: String| UntrustedClaim {
        node: node.to_owned(),
        clone: clone.map(str::to_owned),
        certname: certname.map(str::to_owned),
        problem: UntrustedProblem::Malformed,
        message: why,
    };
    if !is_clone_name(clone) {
        return Some(refused(
            None,
            None,
            format!(
                "its {FACT} fact lists a clone {} whose name is none a clone has (allowed: \
                 {NAME_RULE})",
                quoted(clone)
            ),
        ));
    }
    let Some(text) = certname.as_str() else {
        return Some(refused(
            Some(clone),
            None,
            format!("its {FACT} fact gives the clone {clone} a certname that is not a string"),
        ));
    };
    if validate_hostname("certname", text).is_err() {
        return Some(refused(
            Some(clone),
            None,
            format!(
                "its {FACT} fact gives the clone {clone} the certname {}, which is not a \
                 host name (allowed: {HOSTNAME_RULE})",
                quoted(text)
            ),
        ));
    }
    if key(text) == key(node) {
        return Some(refused(
            Some(clone),
            Some(text),
            format!("its {FACT} fact gives the clone {clone} the host's own certname"),
        ));
    }
    None
}

/// The refusal of a claim another claim of the same certname stands against.
fn claimed_twice(
    facts: &[Fact],
    claim: &Claim,
    same: &[&Claim],
    winner: Option<&Claim>,
) -> UntrustedClaim {
    let whose = |c: &Claim| format!("{}'s clone {}", facts[c.host].node, c.clone);
    let why = match winner {
        Some(holder) => format!(
            "it is {} by the convention <clone>.<host certname>",
            whose(holder)
        ),
        None => {
            let others: BTreeSet<String> = same
                .iter()
                .filter(|c| !std::ptr::eq(**c, claim))
                .map(|c| whose(c))
                .collect();
            let verb = if others.len() == 1 { "claims" } else { "claim" };
            format!(
                "{} {verb} it too, and no claim is <clone>.<host certname>: it is trusted \
                 to none",
                others.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    };
    UntrustedClaim {
        node: facts[claim.host].node.to_owned(),
        clone: Some(claim.clone.to_owned()),
        certname: Some(claim.certname.to_owned()),
        problem: UntrustedProblem::CertnameClaimedTwice,
        message: format!(
            "its {FACT} fact gives the clone {} the certname {}, but {why}",
            claim.clone, claim.certname
        ),
    }
}

/// The start of an unexpected answer, for an error message.
pub fn brief(answer: &Value) -> String {
    let text = answer.to_string();
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text,
    }
}

#[cfg(test)]
mod tests;
