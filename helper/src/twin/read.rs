//! A directory of nodes' records, as the caller names it (`--facts-dir`): every
//! `*.json` file in it, in name order, read as the caller's other files are
//! ([`HostFile`]: a symlink, a FIFO or a device in its place is refused, never followed
//! or waited on; at most [`MAX_FILE_BYTES`] of each is read).
//!
//! The directory is taken whole or not at all: one file that is not a record of a form
//! [`super::document`] reads refuses the call, naming the file and why, so no fleet of
//! twins is made from part of what the user meant.

use std::ffi::OsString;
use std::path::Path;

use super::{document, Identity};
use crate::protocol::error::{Error, Result};
use crate::sys::confined::HostFile;

/// The most a record file may hold.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most record files a directory may hold.
pub const MAX_FILES: usize = 10_000;
/// The most nodes all its files may bring together.
pub const MAX_NODES: usize = 10_000;
/// The most all its files may take together.
pub const MAX_DIR_BYTES: u64 = 1024 * 1024 * 1024;
/// What a refused directory is told it may hold.
pub const DIR_RULE: &str = "a directory of *.json files, each one node's record or facts (PuppetDB inventory or factsets, \
     puppet facts) or an array of PuppetDB records";

const FIELD: &str = "facts-dir";

/// The one node's record in the file `path` (`--twin-file`), read as a record file of
/// a directory is; a file of more or fewer than one node is refused.
pub fn read_one(field: &'static str, path: &Path) -> Result<Identity> {
    let refused = |reason: String| Error::InvalidArgument {
        field,
        value: path.display().to_string(),
        reason,
    };
    let file = HostFile::at(path).map_err(|e| e.into_error(field, path))?;
    let bytes = file
        .read(MAX_FILE_BYTES + 1)
        .map_err(|e| e.into_error(field, path))?
        .ok_or_else(|| refused("there is no such file".to_owned()))?;
    let identities = parse(&bytes).map_err(refused)?;
    match <[Identity; 1]>::try_from(identities) {
        Ok([one]) => Ok(one),
        Err(many) => Err(refused(format!(
            "it holds {} nodes; allowed: one node's record or facts",
            many.len()
        ))),
    }
}

/// A record file's nodes, or why it is refused.
fn parse(bytes: &[u8]) -> std::result::Result<Vec<Identity>, String> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "it is larger than {MAX_FILE_BYTES} bytes; allowed: at most that"
        ));
    }
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("not JSON ({e}); allowed: {DIR_RULE}"))?;
    document::identities(&value)
}

/// One node read from a file: where from, and the identity.
#[derive(Debug)]
pub struct Read {
    pub source: String,
    pub identity: Identity,
}

/// Every node of every record file in `dir`, in file name order, each handed to `take`
/// as it is read, so that no more than one file's nodes are held at a time; the first
/// error (a file refused, or `take`'s) ends the walk. The files read take at most
/// [`MAX_DIR_BYTES`] in all and hold at most [`MAX_NODES`] nodes.
pub fn each_in_dir(dir: &Path, take: impl FnMut(Read) -> Result<()>) -> Result<()> {
    each_within(dir, MAX_DIR_BYTES, take)
}

/// [`each_in_dir`] with the bound on all the files' bytes given.
fn each_within(dir: &Path, max_bytes: u64, mut take: impl FnMut(Read) -> Result<()>) -> Result<()> {
    let refused = |value: &str, reason: String| Error::InvalidArgument {
        field: FIELD,
        value: value.to_owned(),
        reason,
    };
    let shown = dir.display().to_string();
    // HostFile opens the directory of the file it is given: a name inside it, never read,
    // gives the directory itself, whose entries are then opened through its descriptor.
    let anchor = HostFile::at(&dir.join("_")).map_err(|e| e.into_error(FIELD, dir))?;
    let mut names: Vec<OsString> = anchor
        .names_beside()
        .map_err(|e| e.into_error(FIELD, dir))?
        .into_iter()
        .filter(|name| {
            let bytes = name.as_encoded_bytes();
            bytes.ends_with(b".json") && !bytes.starts_with(b".")
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(refused(
            &shown,
            format!("it holds no *.json file; allowed: {DIR_RULE}"),
        ));
    }
    if names.len() > MAX_FILES {
        return Err(refused(
            &shown,
            format!(
                "it holds {} *.json files; allowed: at most {MAX_FILES}",
                names.len()
            ),
        ));
    }
    let mut nodes = 0;
    let mut bytes_read: u64 = 0;
    for name in names {
        let file = anchor
            .sibling(&name)
            .map_err(|e| e.into_error(FIELD, dir))?;
        let path = file.path().display().to_string();
        let bytes = file
            .read(MAX_FILE_BYTES + 1)
            .map_err(|e| e.into_error(FIELD, file.path()))?
            .ok_or_else(|| {
                refused(
                    &path,
                    "it went away while the directory was read".to_owned(),
                )
            })?;
        bytes_read += bytes.len() as u64;
        if bytes_read > max_bytes {
            return Err(refused(
                &shown,
                format!("its files take more than {max_bytes} bytes; allowed: at most that in all"),
            ));
        }
        let identities = parse(&bytes).map_err(|reason| refused(&path, reason))?;
        drop(bytes);
        let many = identities.len() > 1;
        for (index, identity) in identities.into_iter().enumerate() {
            nodes += 1;
            if nodes > MAX_NODES {
                return Err(refused(
                    &shown,
                    format!("its files hold more than {MAX_NODES} nodes; allowed: at most that"),
                ));
            }
            let source = name.to_string_lossy();
            let source = if many {
                format!("{source}#{index}")
            } else {
                source.into_owned()
            };
            take(Read { source, identity })?;
        }
    }
    Ok(())
}

/// Every node of `dir`, held together (for the tests).
#[cfg(test)]
pub fn read_dir(dir: &Path) -> Result<Vec<Read>> {
    let mut nodes = Vec::new();
    each_in_dir(dir, |read| {
        nodes.push(read);
        Ok(())
    })?;
    Ok(nodes)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::fs;

    /// A directory of record files, as a user gives one.
    pub(crate) fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn every_json_file_is_read_in_name_order_each_record_of_an_array_apart() {
        let dir = dir_with(&[
            (
                "b.json",
                r#"{"clientcert": "b.example.com", "kernel": "Linux"}"#,
            ),
            (
                "a.json",
                r#"[{"certname": "a1.example.com", "facts": {}}, {"certname": "a2.example.com", "facts": {}}]"#,
            ),
            ("notes.txt", "not read"),
            (".hidden.json", "not read"),
        ]);
        let read = read_dir(dir.path()).unwrap();
        let seen: Vec<(&str, &str)> = read
            .iter()
            .map(|r| (r.source.as_str(), r.identity.node.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("a.json#0", "a1.example.com"),
                ("a.json#1", "a2.example.com"),
                ("b.json", "b.example.com")
            ]
        );
    }

    #[test]
    fn one_file_that_is_not_a_record_refuses_the_directory_naming_it() {
        let dir = dir_with(&[
            ("good.json", r#"{"clientcert": "g.example.com"}"#),
            ("worse.json", "{not json"),
        ]);
        let message = read_dir(dir.path()).unwrap_err().to_string();
        assert!(
            message.contains("worse.json") && message.contains("not JSON"),
            "{message}"
        );
    }

    #[test]
    fn a_symlink_or_a_fifo_in_place_of_a_file_is_refused_not_followed() {
        let dir = dir_with(&[]);
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link.json")).unwrap();
        let message = read_dir(dir.path()).unwrap_err().to_string();
        assert!(message.contains("link.json"), "{message}");
        fs::remove_file(dir.path().join("link.json")).unwrap();
        nix::unistd::mkfifo(
            &dir.path().join("pipe.json"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let message = read_dir(dir.path()).unwrap_err().to_string();
        assert!(message.contains("pipe.json"), "{message}");
    }

    #[test]
    fn one_twin_file_gives_one_node_and_refuses_more_or_none() {
        let dir = dir_with(&[
            ("one.json", r#"{"clientcert": "one.example.com"}"#),
            (
                "two.json",
                r#"[{"certname": "a.example.com", "facts": {}}, {"certname": "b.example.com", "facts": {}}]"#,
            ),
        ]);
        assert_eq!(
            read_one("twin-file", &dir.path().join("one.json"))
                .unwrap()
                .node,
            "one.example.com"
        );
        let error = read_one("twin-file", &dir.path().join("two.json")).unwrap_err();
        assert_eq!(error.field(), Some("twin-file"));
        assert!(error.to_string().contains("it holds 2 nodes"), "{error}");
        let error = read_one("twin-file", &dir.path().join("none.json")).unwrap_err();
        assert!(error.to_string().contains("no such file"), "{error}");
    }

    #[test]
    fn the_files_read_are_bounded_in_all_and_the_walk_ends_at_the_first_refusal() {
        let dir = dir_with(&[
            ("a.json", r#"{"clientcert": "a.example.com"}"#),
            ("b.json", r#"{"clientcert": "b.example.com"}"#),
        ]);
        let mut taken = Vec::new();
        let error = each_within(dir.path(), 40, |read| {
            taken.push(read.identity.node);
            Ok(())
        })
        .unwrap_err();
        assert!(
            error.to_string().contains("take more than 40 bytes"),
            "{error}"
        );
        assert_eq!(taken, ["a.example.com"]);
    }

    #[test]
    fn an_empty_or_missing_directory_is_refused_saying_what_it_may_hold() {
        let dir = dir_with(&[("readme.md", "x")]);
        let message = read_dir(dir.path()).unwrap_err().to_string();
        assert!(
            message.contains("holds no *.json file") && message.contains(DIR_RULE),
            "{message}"
        );
        assert!(read_dir(&dir.path().join("missing")).is_err());
    }
}
