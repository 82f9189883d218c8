//! `base list`: every complete base (a directory with base.json), with its clones; and
//! the list as a table for people ([`table`]).

use std::collections::BTreeMap;

use super::{read_metadata_in, BaseMetadata};
use crate::context::Context;
use crate::inventory::bases::complete_bases;
use crate::inventory::discover;
use crate::protocol::answers::{BaseInfo, BaseList, Problem, ProblemKind};
use crate::protocol::error::Result;
use crate::sys::escape::visible;
use crate::sys::paths::Layout;
use crate::sys::table::{truncate, Table, NONE};

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
                .filter(|p| p.kind == ProblemKind::BaseMissing),
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

/// `base list --format table`: one row per base (the agent's source; no version or size
/// is recorded for a base), then every problem with its fix.
pub fn table(list: &BaseList) -> String {
    let mut rows = Table::new(&[
        "BASE", "OS", "RELEASE", "PUPPET", "CREATED", "CLONES", "USED_BY",
    ]);
    for b in &list.bases {
        rows.row([
            b.name.clone(),
            b.os.clone(),
            b.release.clone(),
            b.puppet_source.clone(),
            b.created_at.clone(),
            b.clones.len().to_string(),
            if b.clones.is_empty() {
                NONE.to_owned()
            } else {
                truncate(&b.clones.join(","), USED_BY_WIDTH)
            },
        ]);
    }
    let mut out = rows.render();
    if !list.problems.is_empty() {
        out.push('\n');
        for problem in &list.problems {
            out.push_str(&format!(
                "{}: {}\n  fix: {}\n",
                visible(problem.kind.as_str()),
                visible(&problem.message),
                visible(&problem.fix)
            ));
        }
    }
    out
}

/// The clones a base's row names, at most this many characters (`base list` has them all).
const USED_BY_WIDTH: usize = 60;

#[cfg(test)]
mod tests {
    use super::*;

    fn base(name: &str, os: &str, release: &str, source: &str, clones: &[&str]) -> BaseInfo {
        BaseInfo {
            name: name.to_owned(),
            path: format!("/var/lib/puppet-clone-army/{name}"),
            os: os.to_owned(),
            release: release.to_owned(),
            puppet_source: source.to_owned(),
            puppet_confdir: "/etc/puppet".to_owned(),
            puppet_publicdir: "/var/cache/puppet/public".to_owned(),
            created_at: "2026-11-24T10:00:00Z".to_owned(),
            clones: clones.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    #[test]
    fn table_snapshot() {
        let many: Vec<String> = (1..=30).map(|i| format!("clone{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        // A base.json edited by hand (or by a clone's owner) is escaped too.
        let odd = base("odd", "debian\u{1b}[31m", "bookworm\r", "distro", &[]);
        let list = BaseList {
            bases: vec![
                base(
                    "debian-12",
                    "debian",
                    "bookworm",
                    "distro",
                    &["clone1", "clone2"],
                ),
                base("rocky-9", "rocky", "9", "openvox", &many),
                odd,
            ],
            problems: vec![Problem {
                kind: ProblemKind::BaseMissing,
                message: "clone7's base /var/lib/puppet-clone-army/gone is missing".to_owned(),
                fix: "clone-army clone remove clone7".to_owned(),
            }],
        };
        let text = table(&list);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        insta::assert_snapshot!(text);
    }
}
