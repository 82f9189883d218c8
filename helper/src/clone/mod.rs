//! Clones: an OverlayFS upper layer over a base, mounted by a mount unit, booted by
//! `puppet-clone-army@<clone>.service` with what the host gives it bound in read-only
//! (its config dir and `.nspawn` settings, see [`config`]).

pub mod agent_noop;
pub mod apply_source;
pub mod config;
mod configure;
mod create;
pub mod facts;
mod lifecycle;
pub mod limits;
mod list;
mod machines_dir;
pub mod migrate;
pub mod nspawn_settings;
pub mod puppet_conf;
mod remove;
#[cfg(test)]
mod ruby_fixtures;
pub mod run_mode;
pub mod secrets;
pub mod shape;
mod shared;
pub mod ssl;
pub mod stale_locks;
mod start;
#[cfg(test)]
mod tests;
pub mod twin;

pub use configure::{configure, ConfigureRequest};
pub use create::{create, create_many, CloneRequest};
pub use lifecycle::stop;
pub use list::{
    describe_named, list, statuses_without_systemd_failing, table as list_table, CloneStatus,
};
pub use remove::{remove, remove_with};
pub use secrets::SecretFiles;
#[cfg_attr(not(test), allow(unused_imports))]
pub use start::{start, ClonesStarted, MAX_RAMP_UP_SECONDS};

use crate::context::Context;
pub use crate::inventory::{confdir_of, discover, find};
use crate::protocol::error::{Error, Result};

/// One clone as `clone list` reports it.
pub fn describe_one(ctx: &Context, clone: &str) -> Result<crate::protocol::answers::CloneInfo> {
    describe_named(ctx, &[clone.to_owned()])?
        .pop()
        .ok_or_else(|| Error::Internal(format!("clone {clone:?} vanished")))
}
