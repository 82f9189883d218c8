//! A fleet that `sharpie-clone_army` 0.2.1 made, replaced by this one.
//!
//! 0.2.1 wrote the same unit names without clone-army's provenance header:
//! `puppet-clone-army@.service`, `puppet-clone-army.target` (enabled in `machines.target`)
//! and, per clone `<c>`, `var-lib-machines-<c>.mount` (an OverlayFS over the base
//! `/var/lib/puppet-clone-army/el-7`, enabled `RequiredBy=puppet-clone-army@<c>.service`)
//! with the upper and work dirs `<c>-overlay`/`<c>-workdir`. Its clones are EL7 with a
//! PE agent, so they are not adopted: this fleet builds its own base and clones.
//!
//! [`replace`] runs under the lock before anything writes the template or a clone
//! (`clone create`, `clone configure`), so the class needs no extra step. In order, each
//! step a warning in the answer:
//!
//! 1. the old clones' services are stopped, then their mount units (systemd unmounts);
//!    a clone still mounted stops the whole migration before anything is moved;
//! 2. each clone's upper and work dir, then the old base, are *renamed* (same file
//!    system, nothing copied, nothing deleted) into [`ASIDE_DIR`];
//! 3. each old mount unit is kept there as a copy under `units/`, then its enable link
//!    and the unit removed, and its empty mount point too;
//! 4. the old template and target are kept there the same way and replaced by this
//!    fleet's (the target's `machines.target` link removed), then one daemon-reload.
//!
//! A helper killed on the way leaves the old mount units or template (removed or
//! replaced last) for the next call, which does what is left: a dir already moved is
//! skipped, a unit already kept is kept once. Nothing is ever moved over
//! something in [`ASIDE_DIR`]: a name taken there (a second migration) is an error that
//! names it, with nothing moved. A second call on a migrated host finds nothing and does
//! nothing.
//!
//! The upper layers are the clones' own ground: the only file read there is
//! `etc/hostname` (the old certname, for the warning), through [`CloneTree`], and the
//! dirs themselves are renamed whole, never walked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::clone::lifecycle::{reset_failed, stop_all};
use crate::context::Context;
use crate::protocol::error::{Error, Result};
use crate::protocol::warnings::warn;
use crate::sys::confined::CloneTree;
use crate::sys::faults;
use crate::sys::fsutil::{create_dir_all, read_optional, remove_file, write_atomic};
use crate::sys::mounts::MountTable;
use crate::sys::names::{is_base_name, validate_hostname, validate_name};
use crate::sys::paths::{Layout, MACHINES_DIR, SERVICE_TEMPLATE, STATE_DIR, TARGET, UNIT_DIR};
use crate::systemd::units::is_ours;

/// Where the old fleet's data and unit files go: in the state directory, so that the
/// dirs are renamed on their own file system. Not a valid base or clone name, so never
/// listed as either.
pub const ASIDE_DIR: &str = "/var/lib/puppet-clone-army/sharpie-clone_army-0.2.1";
/// The old unit files, kept in [`ASIDE_DIR`].
pub const ASIDE_UNITS: &str = "units";
/// The target 0.2.1 enabled its fleet target in.
const OLD_WANTED_BY: &str = "machines.target";
/// The most read of an old unit file.
const MAX_UNIT_BYTES: u64 = 64 * 1024;
/// The most read of an old clone's `etc/hostname`: a certname (a host name, at most
/// [`crate::sys::names::MAX_HOSTNAME_LEN`] characters) and its line end; anything longer is no certname.
const MAX_HOSTNAME_BYTES: u64 = 256;

/// One clone of the old fleet, from its mount unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OldClone {
    pub name: String,
    /// The base's directory name in the state directory (`el-7`).
    pub base: String,
    /// The mount unit's text, kept as it was.
    pub unit_text: String,
}

/// What of an old fleet is on the host.
#[derive(Debug, Default)]
pub struct OldFleet {
    pub clones: Vec<OldClone>,
    /// The text of a template, target clone-army did not write.
    pub template: Option<String>,
    pub target: Option<String>,
}

impl OldFleet {
    pub fn is_empty(&self) -> bool {
        self.clones.is_empty() && self.template.is_none() && self.target.is_none()
    }
}

/// A 0.2.1 mount unit: no header, `What=`/`Type=overlay`, `Where=` a clone's mount
/// point whose escaped name is the file's name, and options naming exactly that
/// clone's upper and work dir and a base directly in the state directory. Anything
/// else (a person's own overlay, a hand-edited unit) is not touched.
pub fn parse_old_mount(layout: &Layout, file_name: &str, text: &str) -> Option<OldClone> {
    if is_ours(text) {
        return None;
    }
    let (mut what, mut type_, mut where_, mut options) = (None, None, None, None);
    for line in text.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix("What=") {
            what = Some(v.trim());
        } else if let Some(v) = line.strip_prefix("Type=") {
            type_ = Some(v.trim());
        } else if let Some(v) = line.strip_prefix("Where=") {
            where_ = Some(v.trim());
        } else if let Some(v) = line.strip_prefix("Options=") {
            options = Some(v.trim());
        }
    }
    if what? != "overlay" || type_? != "overlay" {
        return None;
    }
    let name = where_?.strip_prefix(MACHINES_DIR)?.strip_prefix('/')?;
    validate_name("clone", "name", name).ok()?;
    if layout.mount_unit_name(name) != file_name {
        return None;
    }
    let (mut lower, mut upper, mut work) = (None, None, None);
    for option in options?.split(',') {
        match option.split_once('=')? {
            ("lowerdir", v) => lower = Some(v),
            ("upperdir", v) => upper = Some(v),
            ("workdir", v) => work = Some(v),
            _ => return None,
        }
    }
    let base = Path::new(lower?).strip_prefix(STATE_DIR).ok()?.to_str()?;
    let ours = |dir: PathBuf| dir.to_str().map(str::to_owned);
    if !is_base_name(base)
        || Some(upper?.to_owned()) != ours(layout.upper_dir(name))
        || Some(work?.to_owned()) != ours(layout.work_dir(name))
    {
        return None;
    }
    Some(OldClone {
        name: name.to_owned(),
        base: base.to_owned(),
        unit_text: text.to_owned(),
    })
}

/// Reads what of an old fleet is on the host; changes nothing.
pub fn find(layout: &Layout) -> Result<OldFleet> {
    let unit_dir = layout.fs(UNIT_DIR);
    let mut fleet = OldFleet::default();
    let entries = match std::fs::read_dir(&unit_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(fleet),
        Err(e) => return Err(Error::io("read", unit_dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", &unit_dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !regular || !name.starts_with("var-lib-machines-") || !name.ends_with(".mount") {
            continue;
        }
        if let Some(text) = read_unit(&entry.path())? {
            fleet.clones.extend(parse_old_mount(layout, &name, &text));
        }
    }
    fleet.clones.sort_by(|a, b| a.name.cmp(&b.name));
    let foreign = |unit: &str| -> Result<Option<String>> {
        Ok(read_unit(&layout.fs(layout.unit_path(unit)))?.filter(|t| !is_ours(t)))
    };
    fleet.template = foreign(SERVICE_TEMPLATE)?;
    fleet.target = foreign(TARGET)?;
    Ok(fleet)
}

/// A regular unit file, at most [`MAX_UNIT_BYTES`]; `None` when missing or not a file.
fn read_unit(path: &Path) -> Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_UNIT_BYTES => read_optional(path),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("inspect", path, e)),
    }
}

/// Replaces an old fleet (see the module's text). Returns whether it found one. Called
/// under the lock.
pub fn replace(ctx: &Context) -> Result<bool> {
    let layout = &ctx.layout;
    let fleet = find(layout)?;
    if fleet.is_empty() {
        return Ok(false);
    }
    let names: Vec<&str> = fleet.clones.iter().map(|c| c.name.as_str()).collect();
    warn(format!(
        "found units of sharpie-clone_army 0.2.1 (clones: {}); replacing that fleet, its \
         data and unit files are kept in {ASIDE_DIR}",
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    ));
    crate::sys::reload::begin(layout)?;
    stop(ctx, &fleet.clones)?;
    faults::after("old-fleet:stopped");

    let aside = PathBuf::from(ASIDE_DIR);
    create_dir_all(&layout.fs(&aside), 0o700)?;
    // Every rename checked before the first, so a name taken in ASIDE_DIR moves nothing.
    let mut moves = Vec::new();
    for clone in &fleet.clones {
        moves.push(layout.upper_dir(&clone.name));
        moves.push(layout.work_dir(&clone.name));
    }
    let in_use: BTreeSet<String> = crate::inventory::discover(layout)?
        .iter()
        .map(|m| m.base())
        .collect();
    let bases: BTreeSet<&str> = fleet.clones.iter().map(|c| c.base.as_str()).collect();
    for base in bases {
        // A base of this fleet (its base.json) or one its clones use stays.
        if in_use.contains(base) || crate::inventory::bases::read_metadata(layout, base)?.is_some()
        {
            continue;
        }
        moves.push(layout.base_dir(base));
    }
    let moves: Vec<(PathBuf, PathBuf)> = moves
        .into_iter()
        .filter(|from| std::fs::symlink_metadata(layout.fs(from)).is_ok())
        .map(|from| {
            let to = aside.join(from.file_name().unwrap_or_default());
            (from, to)
        })
        .collect();
    for (_, to) in &moves {
        refuse_taken(layout, to)?;
    }
    let certnames: Vec<(String, Option<String>)> = fleet
        .clones
        .iter()
        .map(|c| (c.name.clone(), old_certname(layout, &c.name)))
        .collect();
    // Before the upper layers go aside: each old clone's key and certificate, which the
    // CA holds under its certname, become the new clone's of that name.
    let mut adopted = Vec::new();
    for (clone, certname) in certnames.iter().filter_map(|(c, n)| Some((c, n.as_ref()?))) {
        if crate::clone::ssl::adopt_from_upper(layout, clone, certname)? {
            warn(format!(
                "kept the certificate and key of clone {clone} of sharpie-clone_army 0.2.1 \
                 as {}: the new {clone} uses them under the same certname",
                layout.ssl_dir(certname).display()
            ));
            adopted.push(clone.clone());
        }
    }
    faults::after("old-fleet:certificates-kept");
    for (from, to) in &moves {
        rename_aside(layout, from, to)?;
        warn(format!(
            "moved {} to {} (sharpie-clone_army 0.2.1)",
            from.display(),
            to.display()
        ));
        faults::after("old-fleet:first-dir-moved");
    }
    faults::after("old-fleet:dirs-moved");
    for (clone, certname) in certnames
        .iter()
        .filter(|(c, _)| !adopted.contains(c))
        .filter_map(|(c, n)| Some((c, n.as_ref()?)))
    {
        warn(format!(
            "clone {clone} of sharpie-clone_army 0.2.1 had the certname {certname}: the new \
             {clone} asks for a certificate under the same name, which a CA that holds the \
             old one refuses (unless it allows duplicate certs); clean it there \
             (puppetserver ca clean --certname {certname})"
        ));
    }

    let units_aside = aside.join(ASIDE_UNITS);
    for clone in &fleet.clones {
        let unit = layout.mount_unit_name(&clone.name);
        let kept = units_aside.join(&unit);
        keep_copy(layout, &kept, &clone.unit_text)?;
        let requires = layout.unit_path(&format!(
            "{}.requires",
            layout.service_unit_name(&clone.name)
        ));
        remove_file(&layout.fs(requires.join(&unit)))?;
        let _ = std::fs::remove_dir(layout.fs(&requires));
        remove_file(&layout.fs(layout.unit_path(&unit)))?;
        // The empty mount point; one that holds anything stays.
        let _ = std::fs::remove_dir(layout.fs(layout.machine_dir(&clone.name)));
        warn(format!(
            "removed the mount unit {unit} of sharpie-clone_army 0.2.1 (kept as {})",
            kept.display()
        ));
        faults::after("old-fleet:first-mount-unit-removed");
    }
    faults::after("old-fleet:mount-units-removed");
    for (unit, text) in [(SERVICE_TEMPLATE, &fleet.template), (TARGET, &fleet.target)] {
        let Some(text) = text else { continue };
        let kept = units_aside.join(unit);
        keep_copy(layout, &kept, text)?;
        warn(format!(
            "replaced {} of sharpie-clone_army 0.2.1 by clone-army's (kept as {})",
            layout.unit_path(unit).display(),
            kept.display()
        ));
    }
    if fleet.target.is_some() {
        remove_file(&layout.fs(layout.wants_dir(OLD_WANTED_BY).join(TARGET)))?;
    }
    crate::clone::shared::write_units(layout)?;
    faults::after("old-fleet:shared-units-written");
    ctx.systemd.daemon_reload()?;
    crate::sys::reload::done(layout)?;
    faults::after("old-fleet:daemon-reloaded");
    Ok(true)
}

/// Stops every old clone's service, then its mount unit, and checks that nothing of
/// them is mounted any more.
fn stop(ctx: &Context, clones: &[OldClone]) -> Result<()> {
    if clones.is_empty() {
        return Ok(());
    }
    let layout = &ctx.layout;
    let services: Vec<String> = clones
        .iter()
        .map(|c| layout.service_unit_name(&c.name))
        .collect();
    stop_all(ctx, &services)?;
    let mounts: Vec<String> = clones
        .iter()
        .map(|c| layout.mount_unit_name(&c.name))
        .collect();
    stop_all(ctx, &mounts)?;
    for unit in services.iter().chain(&mounts) {
        reset_failed(ctx, unit)?;
    }
    let table = MountTable::read(layout)?;
    for clone in clones {
        for dir in [
            layout.machine_dir(&clone.name),
            layout.upper_dir(&clone.name),
            layout.work_dir(&clone.name),
        ] {
            if let Some(point) = table.mounted_at_or_below(&dir) {
                return Err(Error::StillMounted {
                    what: "sharpie-clone_army 0.2.1 clone",
                    name: clone.name.clone(),
                    path: point.to_owned(),
                });
            }
        }
    }
    warn(format!(
        "stopped the clones of sharpie-clone_army 0.2.1 ({} and {})",
        services.join(", "),
        mounts.join(", ")
    ));
    Ok(())
}

/// The certname an old clone had (its `etc/hostname`), when it reads as one: the upper
/// layer is the clone's, read through [`CloneTree`] (a planted link reads as missing).
fn old_certname(layout: &Layout, clone: &str) -> Option<String> {
    let upper = layout.upper_dir(clone);
    let tree = CloneTree::new(clone, layout.fs(&upper), upper);
    let text = tree
        .read_to_string("etc/hostname", MAX_HOSTNAME_BYTES)
        .ok()??;
    let name = text.trim();
    validate_hostname("certname", name).ok()?;
    Some(name.to_owned())
}

/// Refuses a destination that exists: nothing in [`ASIDE_DIR`] is ever replaced.
fn refuse_taken(layout: &Layout, to: &Path) -> Result<()> {
    match std::fs::symlink_metadata(layout.fs(to)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("inspect", layout.fs(to), e)),
        Ok(_) => Err(Error::AlreadyExists {
            what: "path",
            name: to.display().to_string(),
            detail: "it holds data of an earlier migration from sharpie-clone_army 0.2.1; \
                     move it elsewhere (or delete it once checked), then apply again"
                .to_owned(),
        }),
    }
}

/// Renames a directory of the state directory into [`ASIDE_DIR`], never over anything
/// (`RENAME_NOREPLACE`), and only on its own file system (a rename never copies).
fn rename_aside(layout: &Layout, from: &Path, to: &Path) -> Result<()> {
    use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};
    let (from_fs, to_fs) = (layout.fs(from), layout.fs(to));
    renameat2(
        AT_FDCWD,
        &from_fs,
        AT_FDCWD,
        &to_fs,
        RenameFlags::RENAME_NOREPLACE,
    )
    .map_err(|e| Error::io("move aside (rename)", from_fs, e.into()))
}

/// Keeps an old unit file's text at `kept` (in [`ASIDE_DIR`]): written once, and the
/// same text again is fine; another text there is never replaced.
fn keep_copy(layout: &Layout, kept: &Path, text: &str) -> Result<()> {
    let path = layout.fs(kept);
    match read_unit(&path)? {
        Some(existing) if existing == text => Ok(()),
        None if std::fs::symlink_metadata(&path).is_err() => {
            write_atomic(&path, text.as_bytes(), 0o644).map(drop)
        }
        _ => refuse_taken(layout, kept),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD_MOUNT: &str = "[Unit]
PartOf=puppet-clone-army@clone1.service
Before=puppet-clone-army@clone1.service

[Mount]
What=overlay
Where=/var/lib/machines/clone1
Type=overlay
Options=lowerdir=/var/lib/puppet-clone-army/el-7,upperdir=/var/lib/puppet-clone-army/clone1-overlay,workdir=/var/lib/puppet-clone-army/clone1-workdir

[Install]
RequiredBy=puppet-clone-army@clone1.service
";

    #[test]
    fn an_old_mount_unit_names_its_clone_and_base() {
        let layout = Layout::under("/");
        let old = parse_old_mount(&layout, "var-lib-machines-clone1.mount", OLD_MOUNT).unwrap();
        assert_eq!((old.name.as_str(), old.base.as_str()), ("clone1", "el-7"));
    }

    #[test]
    fn anything_else_is_not_an_old_clone() {
        let layout = Layout::under("/");
        let file = "var-lib-machines-clone1.mount";
        let cases = [
            // Ours.
            format!("{}{OLD_MOUNT}", crate::systemd::units::header()),
            // A base outside the state directory, or below a subdirectory of it.
            OLD_MOUNT.replace(
                "lowerdir=/var/lib/puppet-clone-army/el-7",
                "lowerdir=/srv/el-7",
            ),
            OLD_MOUNT.replace("puppet-clone-army/el-7", "puppet-clone-army/x/el-7"),
            // Another clone's upper dir, or a work dir elsewhere.
            OLD_MOUNT.replace("clone1-overlay", "clone2-overlay"),
            OLD_MOUNT.replace(
                "workdir=/var/lib/puppet-clone-army/clone1-workdir",
                "workdir=/tmp/w",
            ),
            // A base that is a clone's dir, an option more, not an overlay.
            OLD_MOUNT.replace("/el-7,", "/clone2-overlay,"),
            OLD_MOUNT.replace("workdir=", "index=off,workdir="),
            OLD_MOUNT.replace("Type=overlay", "Type=ext4"),
            OLD_MOUNT.replace(
                "Where=/var/lib/machines/clone1",
                "Where=/var/lib/machines/..",
            ),
        ];
        for text in &cases {
            assert_eq!(parse_old_mount(&layout, file, text), None, "{text}");
        }
        // A file whose name is not the escaped mount point.
        assert_eq!(
            parse_old_mount(&layout, "var-lib-machines-clone2.mount", OLD_MOUNT),
            None
        );
    }
}
