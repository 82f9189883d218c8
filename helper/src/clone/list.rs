//! `clone list`: the mount units on disk, each clone's settings from its config dir, and
//! the services' states from one ListUnitsByPatterns call; and the list as a table for
//! people ([`table`]).

use std::collections::BTreeMap;

use super::config::CloneConfig;
use super::{discover, find};
use crate::clone::puppet_conf;
use crate::context::Context;
use crate::inventory::problems;
use crate::protocol::answers::{CloneInfo, CloneList, CloneState, Problem};
use crate::protocol::error::Result;
use crate::sys::escape::visible;
use crate::sys::mounts::MountTable;
use crate::sys::table::{or_none, Table, NONE};
use crate::systemd::units::CloneMount;
use crate::systemd::SystemdError;

pub const SERVICE_PATTERN: &str = "puppet-clone-army@*.service";

pub fn list(ctx: &Context) -> Result<CloneList> {
    let clones = describe(ctx, discover(&ctx.layout)?)?;
    let owned = clones.iter().map(|c| c.name.clone()).collect();
    let problems = problems::orphan_mounts(&ctx.layout, &owned)?;
    Ok(CloneList { clones, problems })
}

/// The named clones as `clone list` reports them, in the order given (one systemd call).
pub fn describe_named(ctx: &Context, names: &[String]) -> Result<Vec<CloneInfo>> {
    let mounts = names
        .iter()
        .map(|name| find(&ctx.layout, name))
        .collect::<Result<Vec<_>>>()?;
    describe(ctx, mounts)
}

fn describe(ctx: &Context, mounts: Vec<CloneMount>) -> Result<Vec<CloneInfo>> {
    if mounts.is_empty() {
        return Ok(Vec::new());
    }
    let states = ctx.systemd.unit_states(&[SERVICE_PATTERN.to_owned()])?;
    describe_with_states(ctx, mounts, &states)
}

/// What a reader that watches the fleet needs of a clone, read from the unit states and
/// the mount table alone: none of the clone's own files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloneStatus {
    pub name: String,
    pub base: String,
    pub state: CloneState,
    pub mounted: bool,
}

/// Every clone's [`CloneStatus`], where a systemd that cannot be asked is no error: the
/// clones' states then mean nothing, and the systemd error is returned beside them. For
/// read-only readers such as `report` and `record`, which must work where there is no
/// system bus and run often.
pub fn statuses_without_systemd_failing(
    ctx: &Context,
    mounts: &[CloneMount],
) -> Result<(Vec<CloneStatus>, Option<SystemdError>)> {
    if mounts.is_empty() {
        return Ok((Vec::new(), None));
    }
    let (states, error) = match ctx.systemd.unit_states(&[SERVICE_PATTERN.to_owned()]) {
        Ok(states) => (states, None),
        Err(e) => (BTreeMap::new(), Some(e)),
    };
    let layout = &ctx.layout;
    let table = MountTable::read(layout)?;
    let statuses = mounts
        .iter()
        .map(|mount| CloneStatus {
            name: mount.clone.clone(),
            base: mount.base(),
            state: state_of(ctx, &mount.clone, &states),
            mounted: table.is_mounted(&layout.machine_dir(&mount.clone)),
        })
        .collect();
    Ok((statuses, error))
}

/// The clone's state from its service unit's; a unit systemd does not list is stopped.
fn state_of(ctx: &Context, clone: &str, states: &BTreeMap<String, String>) -> CloneState {
    states
        .get(&ctx.layout.service_unit_name(clone))
        .map(|s| CloneState::from_active_state(s))
        .unwrap_or(CloneState::Stopped)
}

fn describe_with_states(
    ctx: &Context,
    mounts: Vec<CloneMount>,
    states: &BTreeMap<String, String>,
) -> Result<Vec<CloneInfo>> {
    let layout = &ctx.layout;
    let table = MountTable::read(layout)?;
    let mut clones = Vec::with_capacity(mounts.len());
    for mount in mounts {
        let base = mount.base();
        let source = CloneConfig::of(layout, &mount.clone);
        // What the clone is given is read back with the rules it was written with:
        // anything else is a problem of the clone, not a value of it.
        let (settings, mut refused) = source
            .puppet_conf()?
            .as_deref()
            .map(puppet_conf::read_back)
            .unwrap_or_default();
        let (shape, refused_shape) = super::shape::describe(layout, &mount.clone, &source)?;
        refused.extend(refused_shape);
        drop(source);
        let unit = layout.service_unit_name(&mount.clone);
        let state = state_of(ctx, &mount.clone, states);
        let mut problems = problems::of_clone(
            layout,
            &mount,
            settings.server.as_deref(),
            settings.certname.as_deref(),
        );
        problems.extend(
            refused
                .iter()
                .map(|r| problems::config_invalid(&mount.clone, &r.file, r.setting, &r.reason)),
        );
        clones.push(CloneInfo {
            problems,
            mounted: table.is_mounted(&layout.machine_dir(&mount.clone)),
            name: mount.clone,
            base,
            server: settings.server,
            server_port: settings.server_port,
            certname: settings.certname,
            state,
            unit,
            shape,
        });
    }
    Ok(clones)
}

/// `clone list --format table`: one row per clone, then every problem with its fix.
pub fn table(list: &CloneList) -> String {
    let mut rows = Table::new(&[
        "CLONE", "STATE", "BASE", "RUN_MODE", "CERTNAME", "SERVER", "PROBLEMS",
    ]);
    for c in &list.clones {
        let problems: Vec<&str> = c.problems.iter().map(|p| p.kind.as_str()).collect();
        rows.row([
            c.name.clone(),
            match c.state {
                CloneState::Running => "running",
                CloneState::Stopped => "stopped",
            }
            .to_owned(),
            c.base.clone(),
            or_none(c.shape.run_mode.and_then(|m| {
                clap::ValueEnum::to_possible_value(&m).map(|v| v.get_name().to_owned())
            })),
            or_none(c.certname.as_deref()),
            or_none(c.server.as_ref().map(|server| match c.server_port {
                Some(port) => format!("{server}:{port}"),
                None => server.clone(),
            })),
            if problems.is_empty() {
                NONE.to_owned()
            } else {
                problems.join(",")
            },
        ]);
    }
    let mut out = rows.render();
    let problems: Vec<(Option<&str>, &Problem)> = list
        .clones
        .iter()
        .flat_map(|c| c.problems.iter().map(move |p| (Some(c.name.as_str()), p)))
        .chain(list.problems.iter().map(|p| (None, p)))
        .collect();
    if !problems.is_empty() {
        out.push('\n');
        for (clone, problem) in problems {
            let who = clone.map_or_else(String::new, |c| format!("{}: ", visible(c)));
            out.push_str(&format!(
                "{who}{}: {}\n  fix: {}\n",
                visible(problem.kind.as_str()),
                visible(&problem.message),
                visible(&problem.fix)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::answers::{CloneShape, ProblemKind, RunMode};

    fn clone(name: &str, state: CloneState, run_mode: Option<RunMode>) -> CloneInfo {
        CloneInfo {
            name: name.to_owned(),
            base: "debian-12".to_owned(),
            server: Some("puppet.example.com".to_owned()),
            server_port: None,
            certname: Some(format!("{name}.loadhost.example.com")),
            state,
            unit: format!("puppet-clone-army@{name}.service"),
            mounted: state == CloneState::Running,
            problems: Vec::new(),
            shape: CloneShape {
                run_mode,
                ..CloneShape::default()
            },
        }
    }

    #[test]
    fn table_snapshot() {
        let mut broken = clone("clone3", CloneState::Stopped, None);
        broken.server = None;
        // What a clone wrote in its own puppet.conf reaches the table escaped.
        broken.certname = Some("evil\u{1b}]0;owned\u{7}\u{1b}[2J".to_owned());
        broken.problems = vec![Problem {
            kind: ProblemKind::UpperDirMissing,
            message: "/var/lib/puppet-clone-army/clone3-overlay/upper is missing".to_owned(),
            fix: "clone-army clone remove clone3".to_owned(),
        }];
        // A clone with a port shows it with the server.
        let mut on_port = clone("clone2", CloneState::Running, Some(RunMode::Timer));
        on_port.server_port = Some(8141);
        let list = CloneList {
            clones: vec![
                clone("clone1", CloneState::Running, Some(RunMode::Daemon)),
                on_port,
                broken,
            ],
            problems: vec![Problem {
                kind: ProblemKind::OrphanMount,
                message: "/var/lib/machines/gone is an overlay mount no clone owns".to_owned(),
                fix: "umount /var/lib/machines/gone".to_owned(),
            }],
        };
        let text = table(&list);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn an_empty_list_is_a_header() {
        assert_eq!(
            table(&CloneList {
                clones: Vec::new(),
                problems: Vec::new()
            }),
            "CLONE  STATE  BASE  RUN_MODE  CERTNAME  SERVER  PROBLEMS\n"
        );
    }
}
