//! `base list`: every complete base (a directory with base.json), with its clones.

use std::collections::BTreeMap;

use super::{read_metadata_in, BaseMetadata};
use crate::clone::discover;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::output::{BaseInfo, BaseList};
use crate::paths::{Layout, STATE_DIR};

pub fn list(ctx: &Context) -> Result<BaseList> {
    let layout = &ctx.layout;
    let mut clones_by_lowerdir = clones_by_lowerdir(layout)?;
    let state_dir = layout.fs(STATE_DIR);
    let entries = match std::fs::read_dir(&state_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(BaseList { bases: Vec::new() })
        }
        Err(e) => return Err(Error::io("read", state_dir, e)),
    };
    let mut bases = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", &state_dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Staging dirs and the lock file start with a dot; upper and work dirs have no base.json.
        if name.starts_with('.') || !entry.path().is_dir() {
            continue;
        }
        let Some(metadata) = read_metadata_in(&entry.path())? else {
            continue;
        };
        bases.push(describe(layout, &name, metadata, &mut clones_by_lowerdir));
    }
    bases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(BaseList { bases })
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
