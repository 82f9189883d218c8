//! `base list`: every complete base (a directory with base.json), with its clones.

use std::collections::BTreeMap;

use super::{read_metadata_in, BaseMetadata};
use crate::context::Context;
use crate::inventory::bases::complete_bases;
use crate::inventory::discover;
use crate::protocol::answers::{BaseInfo, BaseList, Problem};
use crate::protocol::error::Result;
use crate::sys::paths::Layout;

pub fn list(ctx: &Context) -> Result<BaseList> {
    let layout = &ctx.layout;
    let mut clones_by_lowerdir = clones_by_lowerdir(layout)?;
    let problems = problems(layout)?;
    let bases = complete_bases(layout)?
        .into_iter()
        .map(|(name, metadata)| describe(layout, &name, metadata, &mut clones_by_lowerdir))
        .collect();
    Ok(BaseList { bases, problems })
}

/// Overlay mounts no unit owns (they keep a base busy), and clones whose base is gone
/// (listed under no base).
fn problems(layout: &Layout) -> Result<Vec<Problem>> {
    let mounts = discover(layout)?;
    let owned = mounts.iter().map(|m| m.clone.clone()).collect();
    let mut found = crate::inventory::problems::orphan_mounts(layout, &owned)?;
    for mount in &mounts {
        found.extend(
            crate::inventory::problems::of_clone(layout, mount, None, None)
                .into_iter()
                .filter(|p| p.kind == "base-missing"),
        );
    }
    Ok(found)
}

/// One base as `base list` reports it; `None` when there is no complete base of that name.
pub fn info(layout: &Layout, name: &str) -> Result<Option<BaseInfo>> {
    let Some(metadata) = read_metadata_in(&layout.fs(layout.base_dir(name)))? else {
        return Ok(None);
    };
    let mut clones = clones_by_lowerdir(layout)?;
    Ok(Some(describe(layout, name, metadata, &mut clones)))
}

fn clones_by_lowerdir(layout: &Layout) -> Result<BTreeMap<String, Vec<String>>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for mount in discover(layout)? {
        map.entry(mount.lowerdir.clone())
            .or_default()
            .push(mount.clone);
    }
    Ok(map)
}

fn describe(
    layout: &Layout,
    name: &str,
    metadata: BaseMetadata,
    clones_by_lowerdir: &mut BTreeMap<String, Vec<String>>,
) -> BaseInfo {
    let path = layout.base_dir(name).display().to_string();
    let clones = clones_by_lowerdir.remove(&path).unwrap_or_default();
    let puppet_publicdir = metadata.publicdir();
    BaseInfo {
        puppet_publicdir,
        name: name.to_owned(),
        path,
        os: metadata.os,
        release: metadata.release,
        puppet_source: metadata.puppet_source,
        puppet_confdir: metadata.puppet_confdir,
        created_at: metadata.created_at,
        clones,
    }
}
