//! What is mounted, from `/proc/self/mountinfo`.
//!
//! Only the mount points are needed (is this clone's root mounted? is anything under a
//! directory we are about to remove?), so a few lines of parsing serve better than a
//! dependency: `libmount` pulls in an old `nix`, `procfs` much more than this.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::protocol::error::Result;
use crate::sys::fsutil::read_optional;
use crate::sys::paths::Layout;

/// The mount points listed in a mountinfo text (field 5, octal escapes undone).
pub fn parse_mount_points(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape(field)))
        .collect()
}

/// One line of mountinfo, as far as stale-state checks need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub point: PathBuf,
    pub fstype: String,
    /// The file system's own options (for overlay: `lowerdir=...,upperdir=...`).
    pub super_options: String,
}

impl MountEntry {
    /// The value of `key=` in the super options (overlay's `lowerdir`, `upperdir`).
    pub fn super_option(&self, key: &str) -> Option<String> {
        self.super_options.split(',').find_map(|option| {
            option
                .strip_prefix(key)
                .and_then(|rest| rest.strip_prefix('='))
                .map(unescape)
        })
    }
}

/// Every mount in a mountinfo text: the mount point (field 5) and, after the ` - `
/// separator, the file-system type and super options.
pub fn parse_mounts(mountinfo: &str) -> Vec<MountEntry> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let point = left.split(' ').nth(4)?;
            let mut right = right.split(' ');
            let fstype = right.next()?.to_owned();
            let super_options = right.nth(1).unwrap_or_default().to_owned();
            Some(MountEntry {
                point: PathBuf::from(unescape(point)),
                fstype,
                super_options,
            })
        })
        .collect()
}

fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            let digits = std::str::from_utf8(&bytes[i + 1..i + 4]).unwrap_or("");
            if let Ok(value) = u8::from_str_radix(digits, 8) {
                out.push(value);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The current mount table of the system (under the layout's root in tests).
pub struct MountTable {
    points: Vec<PathBuf>,
    /// The same, to tell a mount point in one lookup: a fleet's table has a line per clone.
    set: HashSet<PathBuf>,
}

impl MountTable {
    pub fn read(layout: &Layout) -> Result<Self> {
        let text = read_optional(&layout.fs(layout.mountinfo()))?.unwrap_or_default();
        Ok(MountTable::of(parse_mount_points(&text)))
    }

    fn of(points: Vec<PathBuf>) -> Self {
        MountTable {
            set: points.iter().cloned().collect(),
            points,
        }
    }

    /// Whether `path` itself is a mount point.
    pub fn is_mounted(&self, path: &Path) -> bool {
        self.set.contains(path)
    }

    /// The first mount point at or below `path`.
    pub fn mounted_at_or_below(&self, path: &Path) -> Option<&Path> {
        self.points
            .iter()
            .find(|p| p.starts_with(path))
            .map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
60 22 0:50 / /var/lib/machines/clone1 rw,relatime shared:30 - overlay overlay rw,lowerdir=/var/lib/puppet-clone-army/debian-12,upperdir=/var/lib/puppet-clone-army/clone1-overlay,workdir=/var/lib/puppet-clone-army/clone1-workdir
61 22 0:51 / /mnt/with\\040space rw - tmpfs tmpfs rw
";

    #[test]
    fn mounts_with_type_and_super_options() {
        let mounts = parse_mounts(SAMPLE);
        assert_eq!(mounts.len(), 3);
        assert_eq!(mounts[1].point, PathBuf::from("/var/lib/machines/clone1"));
        assert_eq!(mounts[1].fstype, "overlay");
        assert_eq!(
            mounts[1].super_option("upperdir").as_deref(),
            Some("/var/lib/puppet-clone-army/clone1-overlay")
        );
        assert_eq!(mounts[1].super_option("upper"), None);
        assert_eq!(mounts[2].point, PathBuf::from("/mnt/with space"));
        assert_eq!(mounts[2].fstype, "tmpfs");
    }

    #[test]
    fn mount_points() {
        let points = parse_mount_points(SAMPLE);
        assert_eq!(
            points,
            vec![
                PathBuf::from("/"),
                PathBuf::from("/var/lib/machines/clone1"),
                PathBuf::from("/mnt/with space"),
            ]
        );
        let table = MountTable::of(points);
        assert!(table.is_mounted(Path::new("/var/lib/machines/clone1")));
        assert!(!table.is_mounted(Path::new("/var/lib/machines/clone2")));
        assert_eq!(
            table.mounted_at_or_below(Path::new("/var/lib/machines")),
            Some(Path::new("/var/lib/machines/clone1"))
        );
        assert_eq!(
            table.mounted_at_or_below(Path::new("/var/lib/puppet-clone-army")),
            None
        );
    }
}

/// mountinfo comes from the kernel, but the parser must not trust its shape.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Any text, and lines of any text cut into mountinfo's fields around a ` - `: text
    /// alone almost never has the fields of a mount, so the options would go unread.
    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            (
                prop::collection::vec(any::<String>(), 5..8),
                prop::collection::vec(any::<String>(), 1..4),
            )
                .prop_map(|(left, right)| format!(
                    "{} - {}",
                    left.join(" "),
                    right.join(" ")
                )),
        ]
    }

    /// A line shaped like mountinfo's, each field any text (escapes cut short, a
    /// separator missing or doubled, options without `=`, overlay's options with any
    /// value).
    fn mountinfo_line() -> impl Strategy<Value = String> {
        // Half the options are an upperdir, so that mounts with and without one both come.
        let option = prop_oneof![
            "upperdir=[a-z/\\\\0-9]{0,12}",
            prop_oneof![
                "(lowerdir|workdir)=[a-z/\\\\0-9]{0,12}",
                "[a-z=/\\\\0-9]{0,12}"
            ],
        ];
        (
            "[0-9]{1,3} [0-9]{1,3} [0-9:]{1,5} [^ \n]{1,8}",
            "[^ \n]{1,16}",
            "[^\n]{0,12}",
            "( - )?",
            "[a-z]{0,8} [^ \n]{0,8}",
            prop::collection::vec(option, 0..3),
        )
            .prop_map(|(head, point, optional, sep, source, options)| {
                format!(
                    "{head} {point} rw {optional}{sep}{source} {}\n",
                    options.join(",")
                )
            })
    }

    #[test]
    fn the_text_generator_gives_both_mounts_and_other_text() {
        crate::sys::test_reach::assert_both_sides(
            "texts with a mount",
            &any_text(),
            |text| !parse_mounts(text).is_empty(),
            33,
        );
    }

    #[test]
    fn the_mountinfo_line_generator_gives_lines_with_and_without_an_upperdir() {
        use crate::sys::test_reach::assert_reaches;
        let upperdir = |line: &String| {
            parse_mounts(line)
                .iter()
                .any(|m| m.super_option("upperdir").is_some())
        };
        assert_reaches(
            "lines that are no mount",
            &mountinfo_line(),
            |line| parse_mounts(line).is_empty(),
            15,
        );
        assert_reaches(
            "mounts without an upperdir",
            &mountinfo_line(),
            |line| !parse_mounts(line).is_empty() && !upperdir(line),
            15,
        );
        assert_reaches("mounts with an upperdir", &mountinfo_line(), upperdir, 15);
    }

    proptest! {
        #[test]
        fn any_text_parses_without_panicking(text in any_text()) {
            let _ = parse_mount_points(&text);
            for mount in parse_mounts(&text) {
                let _ = mount.super_option("upperdir");
            }
        }

        /// Lines shaped like mountinfo's: every line with a separator and a point is a
        /// mount, and none panics.
        #[test]
        fn mountinfo_shaped_lines_parse_without_panicking(
            lines in prop::collection::vec(mountinfo_line(), 0..8)
        ) {
            let text: String = lines.concat();
            let points = parse_mount_points(&text);
            prop_assert_eq!(points.len(), lines.len());
            for mount in parse_mounts(&text) {
                let _ = mount.super_option("upperdir");
                let _ = mount.super_option("lowerdir");
            }
        }

        #[test]
        fn escaped_points_round_trip(point in "/[a-z ]{1,20}(/[a-z\\\\ ]{1,10}){0,3}") {
            let escaped = point.replace('\\', "\\134").replace(' ', "\\040");
            let line = format!("1 0 0:1 / {escaped} rw - overlay overlay rw,upperdir={escaped}\n");
            let mounts = parse_mounts(&line);
            prop_assert_eq!(mounts.len(), 1);
            prop_assert_eq!(&mounts[0].point, &PathBuf::from(&point));
            prop_assert_eq!(mounts[0].super_option("upperdir"), Some(point.clone()));
        }
    }
}
