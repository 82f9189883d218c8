//! Twins: clones that stand in for real nodes of the user's estate, so that the server
//! under test compiles the estate's own catalogs from the nodes' own facts, trusted
//! extensions and environments, not one catalog a thousand times.
//!
//! A node's record comes from the estate (a PuppetDB's `inventory` or `factsets`, or
//! `puppet facts` on the node), which is hostile ground like a clone: it may be any size
//! and shape, and it may carry secrets. This module reads one such record into an
//! [`Identity`] and nothing else: it touches no file and no clone. What it takes:
//!
//! - the node's **facts**, less those a twin must not carry ([`facts`]): the agent's own
//!   (`clientcert`, `puppetversion`, …, which the clone's agent sets), anything whose name
//!   says it is a secret, at any depth, and the facts no sane value is that large;
//! - its **trusted extensions** ([`extensions`]): Puppet's registered and private ones,
//!   for certificate extension requests, never the authorization ones or the pre-shared key;
//! - its **environment** and its **OS** (family, name, major release), by which a twin is
//!   matched to a base of the same family.
//!
//! What is left out is listed with the reason ([`Dropped`]), so a user sees how far the
//! twin is from its node. A twin never takes the node's certname: [`Identity::node`] is
//! the name it stands in for, not the name it is given.

pub mod document;
pub mod extensions;
pub mod facts;
pub mod import;
pub mod list;
pub mod read;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// One real node as a twin takes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Identity {
    /// The node's certname: what the twin stands in for, never its own name.
    pub node: String,
    /// The node's environment, when its record has a valid one.
    pub environment: Option<String>,
    /// The node's OS, read from its facts.
    pub os: NodeOs,
    /// The facts the twin is given, as external facts that win over its own.
    pub facts: Map<String, Value>,
    /// Trusted extensions, by Puppet's short name (`pp_role`) or dotted OID.
    pub extensions: BTreeMap<String, String>,
    /// What the record held that the twin does not take, and why.
    pub dropped: Vec<Dropped>,
}

pub use crate::protocol::answers::{Dropped, NodeOs};

/// What a node's certname may be, as Puppet's CA takes one: lower-case letters, digits,
/// `.`, `-` and `_` (estates have certnames a DNS name could not be, such as
/// `db_01.example.com`), not starting with `.` or `-`, at most this long. So it is also a
/// plain file name (the imported set names a node's file by it).
pub const MAX_NODE_NAME: usize = 250;
pub const NODE_RULE: &str =
    "a certname: 1 to 250 characters of a-z, 0-9, '.', '-' and '_', not starting with '.' or '-'";

/// Whether `name` is a node's certname by [`NODE_RULE`].
pub fn is_node_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NODE_NAME
        && !name.starts_with(['.', '-'])
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
}

impl Dropped {
    fn new(what: impl Into<String>, reason: &str) -> Self {
        Dropped {
            what: what.into(),
            reason: reason.to_owned(),
        }
    }
}
