//! The unit files the helper writes, and reading its own mount units back.
//!
//! Every file starts with the provenance header; a mount unit without it is not a clone
//! of ours and is never listed or touched.

use std::path::Path;

use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::read_optional;
use crate::sys::paths::{Layout, MACHINES_DIR, MULTI_USER_TARGET, STATE_DIR, TARGET};

pub const HEADER_PREFIX: &str = "# Managed by clone-army ";

/// The first line of every generated file.
pub fn header() -> String {
    format!(
        "{HEADER_PREFIX}{}. Changes will be overwritten.\n",
        env!("CARGO_PKG_VERSION")
    )
}

pub fn is_ours(content: &str) -> bool {
    content.starts_with(HEADER_PREFIX)
}

/// The text of the generated file at `path`; `None` when it is missing or not ours (a
/// file someone else wrote says nothing about what clone-army set).
pub fn read_ours(path: &Path) -> Result<Option<String>> {
    Ok(read_optional(path)?.filter(|text| is_ours(text)))
}

/// Refuses to write over or remove a file at `path` that clone-army did not write;
/// `what` names it in the error ("drop-in", ...).
pub fn refuse_foreign(path: &Path, what: &'static str) -> Result<()> {
    match read_optional(path)? {
        Some(text) if !is_ours(&text) => Err(Error::AlreadyExists {
            what,
            name: path.display().to_string(),
            detail: "it was not written by clone-army; not touching it".to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Set by a clone's credentials drop-in to nspawn's `--load-credential=` (the root
/// password), empty otherwise: the template's `ExecStart=` ends with it.
pub const CREDENTIALS_ENV_VAR: &str = "CLONE_ARMY_NSPAWN_CREDENTIALS";
/// Set by the SELinux drop-in to nspawn's `--selinux-context=`/`--selinux-apifs-context=`.
pub const SELINUX_ENV_VAR: &str = "CLONE_ARMY_NSPAWN_SELINUX";

/// `puppet-clone-army@.service`, modelled on systemd's own `systemd-nspawn@.service`.
///
/// Host network (no `--private-network`): clones reach a server on the host's loopback.
/// `resolv.conf` is copied into the clone's overlay at start; `/etc/hosts` and what the
/// host gives the clone are bound read-only by the clone's `.nspawn` settings (see
/// `clone::nspawn_settings`), so nothing is ever written into the shared base. The
/// command line binds nothing itself: nspawn ignores a settings file's binds when it does.
///
/// `RestartSec=5s`: after a crash of `systemd-nspawn` (SIGKILL) the old container's
/// processes and its machined registration can outlive it for a moment; restarting at
/// systemd's default 100 ms then fails with "Machine '`<clone>`' already exists" five times
/// within half a second and hits the start limit, so the clone stays down for good (seen
/// in the acceptance suite). Five seconds spaces the attempts out.
///
/// `ExecStopPost=` UnregisterMachine: a SIGKILLed nspawn never unregisters its machine,
/// and machined does not drop it either while the unit is only restarting (seen on
/// systemd 252: "Machine 'clone1' already exists" on every attempt, for good). After a
/// clean stop nspawn has unregistered already and the call fails harmlessly (`-`).
///
/// `$CLONE_ARMY_NSPAWN_CREDENTIALS` near the end of `ExecStart=`: a clone's
/// `--load-credential=`, set by a drop-in of its service (see `clone::nspawn_settings`).
///
/// `$CLONE_ARMY_NSPAWN_SELINUX` at the end of `ExecStart=`: the SELinux flags that
/// `clone-army host selinux` sets in a drop-in (see `host_selinux`); unset, systemd
/// expands it to no argument at all.
pub fn service_template() -> String {
    format!(
        "{header}\
[Unit]
Description=Puppet agent clone %i
Documentation=man:systemd-nspawn(1)
PartOf={TARGET}
Before={TARGET}
After=network.target
RequiresMountsFor={MACHINES_DIR}/%i

[Service]
ExecStart=/usr/bin/systemd-nspawn --quiet --keep-unit --boot --link-journal=try-guest --machine=%i --directory={MACHINES_DIR}/%i --resolv-conf=copy-host ${credentials} ${selinux}
KillMode=mixed
Type=notify
RestartForceExitStatus=133
SuccessExitStatus=133
Restart=on-failure
RestartSec=5s
ExecStopPost=-/usr/bin/busctl call --quiet org.freedesktop.machine1 /org/freedesktop/machine1 org.freedesktop.machine1.Manager UnregisterMachine s %i
Slice=machine.slice
Delegate=yes
TasksMax=16384

[Install]
WantedBy={TARGET}
",
        header = header(),
        credentials = CREDENTIALS_ENV_VAR,
        selinux = SELINUX_ENV_VAR,
    )
}

/// `puppet-clone-army.target`: the fleet, started at boot.
pub fn fleet_target() -> String {
    format!(
        "{header}\
[Unit]
Description=Fleet of puppet-agent clones

[Install]
WantedBy={MULTI_USER_TARGET}
",
        header = header()
    )
}

/// The OverlayFS mount of one clone's root. `StopWhenUnneeded=yes` unmounts it when the
/// clone's service (which pulls it in through `RequiresMountsFor=`) stops.
pub fn clone_mount(layout: &Layout, clone: &str, base: &str) -> String {
    format!(
        "{header}\
[Unit]
Description=OverlayFS root of puppet-agent clone {clone}
StopWhenUnneeded=yes
RequiresMountsFor={STATE_DIR}

[Mount]
What=overlay
Where={where_}
Type=overlay
Options=lowerdir={lower},upperdir={upper},workdir={work}
",
        header = header(),
        where_ = layout.machine_dir(clone).display(),
        lower = layout.base_dir(base).display(),
        upper = layout.upper_dir(clone).display(),
        work = layout.work_dir(clone).display(),
    )
}

/// What the helper reads back from one of its mount units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloneMount {
    pub clone: String,
    pub lowerdir: String,
    pub upperdir: String,
    pub workdir: String,
}

impl CloneMount {
    /// The base's name: the last component of `lowerdir`.
    pub fn base(&self) -> String {
        Path::new(&self.lowerdir)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Parses a mount unit written by [`clone_mount`]; `None` for any other file.
pub fn parse_clone_mount(content: &str) -> Option<CloneMount> {
    if !is_ours(content) {
        return None;
    }
    let mut where_ = None;
    let mut options = None;
    for line in content.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("Where=") {
            where_ = Some(v.trim());
        } else if let Some(v) = line.strip_prefix("Options=") {
            options = Some(v.trim());
        }
    }
    let clone = where_?
        .strip_prefix(MACHINES_DIR)?
        .strip_prefix('/')?
        .to_owned();
    // Only names clone-army could have written: a hand-edited `Where=/var/lib/machines/..`
    // must not become a clone whose paths leave the machines directory.
    if crate::sys::names::validate_name("clone", "name", &clone).is_err() {
        return None;
    }
    let mut mount = CloneMount {
        clone,
        lowerdir: String::new(),
        upperdir: String::new(),
        workdir: String::new(),
    };
    for option in options?.split(',') {
        match option.split_once('=') {
            Some(("lowerdir", v)) => mount.lowerdir = v.to_owned(),
            Some(("upperdir", v)) => mount.upperdir = v.to_owned(),
            Some(("workdir", v)) => mount.workdir = v.to_owned(),
            _ => {}
        }
    }
    (!mount.lowerdir.is_empty()).then_some(mount)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn without_version(text: String) -> String {
        text.replace(env!("CARGO_PKG_VERSION"), "[version]")
    }

    #[test]
    fn service_template_snapshot() {
        insta::assert_snapshot!(without_version(service_template()));
    }

    #[test]
    fn fleet_target_snapshot() {
        insta::assert_snapshot!(without_version(fleet_target()));
    }

    #[test]
    fn clone_mount_snapshot() {
        let layout = Layout::under("/ignored");
        insta::assert_snapshot!(without_version(clone_mount(
            &layout,
            "clone-1",
            "debian-12"
        )));
    }

    #[test]
    fn mount_unit_reads_back() {
        let layout = Layout::under("/");
        let parsed = parse_clone_mount(&clone_mount(&layout, "clone-1", "debian-12")).unwrap();
        assert_eq!(parsed.clone, "clone-1");
        assert_eq!(parsed.base(), "debian-12");
        assert_eq!(
            parsed.upperdir,
            "/var/lib/puppet-clone-army/clone-1-overlay"
        );
        assert_eq!(parsed.workdir, "/var/lib/puppet-clone-army/clone-1-workdir");
    }

    #[test]
    fn foreign_mount_units_are_not_clones() {
        let foreign = "[Mount]\nWhere=/var/lib/machines/x\nOptions=lowerdir=/a\n";
        assert_eq!(parse_clone_mount(foreign), None);
        let nested = format!(
            "{}[Mount]\nWhere=/var/lib/machines/x/y\nOptions=lowerdir=/a\n",
            header()
        );
        assert_eq!(parse_clone_mount(&nested), None);
    }
}

/// Unit files on disk may be edited by hand: reading them back must never panic, and
/// never yield a clone name that could leave `/var/lib/machines`.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// What a hand-edited `Where=` may name below the machines directory: about half
    /// are clone names, the others a path or no name at all.
    fn where_names() -> impl Strategy<Value = String> {
        "[a-z0-9./-]{0,12}"
    }

    /// Unit text: arbitrary, or a mount unit's lines (`Where=` and `Options=` as
    /// clone-army writes them or any text) among lines of any text. Arbitrary text alone
    /// is never a clone's mount, so the name check after reading back would go untested.
    fn unit_bodies() -> impl Strategy<Value = String> {
        let where_ = prop_oneof![
            4 => prop_oneof![where_names(), "[a-z0-9]{1,12}"]
                .prop_map(|name| format!("Where={MACHINES_DIR}/{name}")),
            1 => any::<String>().prop_map(|path| format!("Where={path}")),
        ];
        let options = prop_oneof![
            4 => "(,(upperdir|workdir|x)=[^,\n]{0,10}){0,3}"
                .prop_map(|rest| format!("Options=lowerdir=/l{rest}")),
            1 => any::<String>().prop_map(|options| format!("Options={options}")),
        ];
        let noise = proptest::collection::vec(any::<String>(), 0..3);
        prop_oneof![
            1 => any::<String>(),
            4 => (noise.clone(), where_, options, noise).prop_map(|(before, where_, options, after)| {
                format!("{}
[Mount]
{where_}
{options}
{}", before.join("
"), after.join("
"))
            }),
        ]
    }

    #[test]
    fn the_where_name_generator_gives_both_clone_names_and_others() {
        crate::sys::test_reach::assert_both_sides(
            "Where= names that are clone names",
            &where_names(),
            |name| crate::sys::names::validate_name("clone", "name", name).is_ok(),
            33,
        );
    }

    #[test]
    fn the_unit_text_generator_gives_both_clone_mounts_and_other_text() {
        crate::sys::test_reach::assert_both_sides(
            "unit texts read back as a clone's mount",
            &unit_bodies(),
            |body| parse_clone_mount(&format!("{HEADER_PREFIX}0.1.0.\n{body}")).is_some(),
            33,
        );
    }

    proptest! {
        // Every case is a unit clone-army could have written but for its `Where=`, so
        // each reaches the assertions: a name read back is one the helper accepts, and
        // a name it accepts is read back as written.
        #[test]
        fn read_back_names_stay_inside_the_machines_dir(
            body in "[^\n]{0,40}",
            name in where_names(),
        ) {
            let text = format!(
                "{HEADER_PREFIX}0.1.0.\n[Mount]\nWhere={MACHINES_DIR}/{name}\nOptions=lowerdir=/l\n# {body}\n"
            );
            let accepted = crate::sys::names::validate_name("clone", "name", &name).is_ok();
            match parse_clone_mount(&text) {
                Some(mount) => {
                    prop_assert!(accepted, "{:?} read back from {:?}", mount.clone, name);
                    prop_assert_eq!(mount.clone, name);
                }
                None => prop_assert!(!accepted, "{:?} is a name, yet not read back", name),
            }
        }

        /// Any text at all, as a whole unit or after a valid header: no panic, and no
        /// clone name that is not one.
        #[test]
        fn any_unit_text_reads_back_without_panicking(body in unit_bodies()) {
            for text in [body.clone(), format!("{HEADER_PREFIX}0.1.0.\n{body}")] {
                if let Some(mount) = parse_clone_mount(&text) {
                    prop_assert!(
                        crate::sys::names::validate_name("clone", "name", &mount.clone).is_ok(),
                        "{:?}",
                        mount.clone
                    );
                }
            }
        }
    }

    #[test]
    fn a_hand_edited_where_cannot_name_the_parent_dir() {
        for where_ in [
            "/var/lib/machines/..",
            "/var/lib/machines/.",
            "/var/lib/machines/A",
        ] {
            let text = format!("{HEADER_PREFIX}0.1.0.\n[Mount]\nWhere={where_}\nOptions=lowerdir=/l,upperdir=/u,workdir=/w\n");
            assert_eq!(parse_clone_mount(&text), None, "{where_}");
        }
    }
}
