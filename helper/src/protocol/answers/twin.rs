//! `twin list`: the real nodes a directory of their records would give twins, each with
//! what its twin takes and what it leaves out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The nodes of a directory of records, in the order of their files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwinList {
    pub identities: Vec<TwinEntry>,
    pub summary: TwinSummary,
    /// Where the imported set was taken from (none for a directory listed as it is, and
    /// before any import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<ImportSource>,
}

/// What `twin import` was given: a directory, or a PuppetDB and its query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub puppetdb: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

/// One node, as its twin would take it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwinEntry {
    /// The file it came from (and the record's index in it, for an array).
    pub source: String,
    /// The node's certname, which its twin stands in for and never takes.
    pub node: String,
    pub environment: Option<String>,
    pub os: NodeOs,
    /// Trusted extensions its twin asks for, by short name or dotted OID.
    pub extensions: BTreeMap<String, String>,
    /// How many top-level facts its twin is given.
    pub facts: usize,
    pub dropped: Vec<Dropped>,
}

/// The OS facts a twin's base is matched by.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeOs {
    pub family: Option<String>,
    pub name: Option<String>,
    pub release_major: Option<String>,
}

/// Something of a node's record left out of its twin: a fact (a dotted path inside a
/// structured one), an extension, or the environment, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub what: String,
    pub reason: String,
}

/// The nodes counted by OS family and by `pp_role` (`-` for none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwinSummary {
    pub nodes: usize,
    pub by_os_family: BTreeMap<String, usize>,
    pub by_role: BTreeMap<String, usize>,
}
