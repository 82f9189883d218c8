//! `base remove`: only a base no clone uses.

use crate::context::Context;
use crate::inventory::discover;
use crate::protocol::answers::BaseRemoved;
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::remove_dir_all;
use crate::sys::mounts::MountTable;
use crate::sys::names::validate_base_name;

pub fn remove(ctx: &Context, name: &str) -> Result<BaseRemoved> {
    validate_base_name("name", name)?;
    let layout = &ctx.layout;
    let _lock = ctx.lock()?;
    let base_dir = layout.base_dir(name);
    let lowerdir = base_dir.display().to_string();
    let clones: Vec<String> = discover(layout)?
        .into_iter()
        .filter(|m| m.lowerdir == lowerdir)
        .map(|m| m.clone)
        .collect();
    if !clones.is_empty() {
        return Err(Error::BaseInUse {
            base: name.to_owned(),
            clones,
        });
    }
    if let Some(point) = MountTable::read(layout)?.mounted_at_or_below(&base_dir) {
        return Err(Error::StillMounted {
            what: "base",
            name: name.to_owned(),
            path: point.to_owned(),
        });
    }
    let mut changed = remove_dir_all(&layout.fs(&base_dir))?;
    changed |= remove_dir_all(&layout.fs(layout.staging_dir(name)))?;
    Ok(BaseRemoved {
        name: name.to_owned(),
        changed,
    })
}
