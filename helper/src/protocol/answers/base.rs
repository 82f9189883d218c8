//! Answered by `base create`, `base list` and `base remove`.

use serde::{Deserialize, Serialize};

use super::clone::Problem;

/// `base create`: the base as `base list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseCreated {
    pub base: BaseInfo,
    pub changed: bool,
}

/// `base list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseList {
    pub bases: Vec<BaseInfo>,
    /// Stale state around the bases: overlay mounts no unit owns (they keep a base busy),
    /// clones whose base is gone.
    #[serde(default)]
    pub problems: Vec<Problem>,
}

/// One base as `base list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseInfo {
    pub name: String,
    pub path: String,
    pub os: String,
    pub release: String,
    pub puppet_source: String,
    pub puppet_confdir: String,
    /// Where the clones' agents write their run summaries (`last_run_summary.yaml`).
    #[serde(default)]
    pub puppet_publicdir: String,
    pub created_at: String,
    pub clones: Vec<String>,
}

/// `base remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseRemoved {
    pub name: String,
    pub changed: bool,
}
