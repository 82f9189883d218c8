//! Answered by `ssl list` and `ssl forget`: the kept SSL directories.

use serde::{Deserialize, Serialize};

/// `ssl list`: the kept SSL directories (see README, "Certificates").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SslDirs {
    pub ssl_dirs: Vec<SslDir>,
}

/// One kept SSL directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SslDir {
    pub certname: String,
    pub path: String,
    /// The clone whose settings bind it; `null`: its clone was removed.
    pub clone: Option<String>,
}

/// `ssl forget`: the certnames whose kept SSL directory was removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SslForgotten {
    pub forgotten: Vec<String>,
    pub changed: bool,
}
