//! `base list`: every complete base (a directory with base.json), with its clones.

use std::collections::BTreeMap;

use super::{read_metadata_in, BaseMetadata};
use crate::clone::discover;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::output::{BaseInfo, BaseList, Problem};
use crate::paths::{Layout, STATE_DIR};

pub fn list(ctx: &Context) -> Result<BaseList> {
    let layout = &ctx.layout;
    let mut clones_by_lowerdir = clones_by_lowerdir(layout)?;
    let problems = problems(layout)?;
    let state_dir = layout.fs(STATE_DIR);
    let entries = match std::fs::read_dir(&state_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(BaseList {
                bases: Vec::new(),
                problems,
            })
        }
        Err(e) => return Err(Error::io("read", state_dir, e)),
    };
    let mut bases = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", &state_dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Staging dirs and the lock file start with a dot; a clone's directories end in
        // `-overlay`, `-workdir` or `-config`, and its upper layer, which the clone writes,
        // may well hold a base.json: none of them is ever a base.
        if !crate::names::is_base_name(&name) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Some(metadata) = read_metadata_in(&entry.path())? else {
            continue;
        };
        bases.push(describe(layout, &name, metadata, &mut clones_by_lowerdir));
    }
    bases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(BaseList { bases, problems })
}

/// Overlay mounts no unit owns (they keep a base busy), and clones whose base is gone
/// (listed under no base).
fn problems(layout: &Layout) -> Result<Vec<Problem>> {
    let mounts = discover(layout)?;
    let owned = mounts.iter().map(|m| m.clone.clone()).collect();
    let mut found = crate::clone::problems::orphan_mounts(layout, &owned)?;
    for mount in &mounts {
        found.extend(
            crate::clone::problems::of_clone(layout, mount, None, None)
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
