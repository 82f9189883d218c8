//! `clone-army host docs`: installs the man page and the shell completions under a
//! prefix (`/usr/local` unless told), where `man`, bash-completion, zsh and fish look for
//! them;
//! with `--check`, only says whether they are there and current, so the Puppet class can
//! run it as an `unless` and a new helper refreshes its own documentation.
//!
//! The texts come from the command line's definition (the `cli` layer makes them and
//! hands them over); this only knows where each goes and writes it atomically.

use std::path::{Path, PathBuf};

use crate::protocol::answers::{DocFile, DocKind, DocsInstalled};
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::write_atomic;

pub const DEFAULT_PREFIX: &str = "/usr/local";
/// Mode of every file written: documentation anyone may read.
const MODE: u32 = 0o644;

impl DocKind {
    /// Where it goes under the prefix: man(1)'s `man8`, bash-completion's on-demand
    /// directory (loaded on the first completion of `clone-army`), zsh's site functions,
    /// fish's vendor completions (fish looks in `fish/vendor_completions.d` under each
    /// of `$XDG_DATA_DIRS`, `/usr/local/share` and `/usr/share` by default).
    pub fn relative_path(self) -> &'static str {
        match self {
            DocKind::Man => "share/man/man8/clone-army.8",
            DocKind::BashCompletion => "share/bash-completion/completions/clone-army",
            DocKind::ZshCompletion => "share/zsh/site-functions/_clone-army",
            DocKind::FishCompletion => "share/fish/vendor_completions.d/clone-army.fish",
        }
    }
}

const PREFIX_ALLOWED: &str = "allowed: an absolute directory path without `..` or `.` components";

/// The prefix must be absolute and plain: no `.` or `..` (which would make the answer lie
/// about where files went), no control characters.
pub fn validate_prefix(prefix: &Path) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidArgument {
        field: "prefix",
        value: prefix.display().to_string(),
        reason: format!("{reason}; {PREFIX_ALLOWED}"),
    };
    if !prefix.is_absolute() {
        return Err(invalid("not an absolute path"));
    }
    let bytes = prefix.as_os_str().as_encoded_bytes();
    if bytes
        .split(|b| *b == b'/')
        .any(|segment| segment == b"." || segment == b"..")
        || bytes.iter().any(u8::is_ascii_control)
    {
        return Err(invalid("not a plain path"));
    }
    Ok(())
}

/// Writes each document under `prefix` (only those that differ), or with `check` writes
/// nothing and fails with `not-in-place` naming every file that is missing or different.
/// `documents` holds each kind's exact content.
pub fn install(
    prefix: &Path,
    documents: &[(DocKind, Vec<u8>)],
    check: bool,
) -> Result<DocsInstalled> {
    validate_prefix(prefix)?;
    let mut files = Vec::with_capacity(documents.len());
    let mut stale = Vec::new();
    for (kind, content) in documents {
        let path = prefix.join(kind.relative_path());
        let changed = if check {
            if !in_place(&path, content) {
                stale.push(path.display().to_string());
            }
            false
        } else {
            write_atomic(&path, content, MODE)?
        };
        files.push(DocFile {
            kind: *kind,
            path: path.display().to_string(),
            changed,
        });
    }
    if !stale.is_empty() {
        return Err(Error::NotInPlace {
            what: "the man page and shell completions".to_owned(),
            detail: format!(
                "missing or different: {}; run clone-army host docs --prefix {}",
                stale.join(", "),
                prefix.display()
            ),
        });
    }
    Ok(DocsInstalled {
        prefix: prefix.display().to_string(),
        changed: files.iter().any(|f| f.changed),
        files,
    })
}

/// The file is there with exactly this content and mode (what `write_atomic` would leave),
/// judged as `write_atomic` judges it.
fn in_place(path: &Path, content: &[u8]) -> bool {
    crate::sys::confined::host_file_holds(path, content, MODE)
}

/// The paths under `prefix`, for whoever documents or removes them.
pub fn paths(prefix: &Path) -> Vec<PathBuf> {
    DocKind::ALL
        .iter()
        .map(|k| prefix.join(k.relative_path()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn documents() -> Vec<(DocKind, Vec<u8>)> {
        vec![
            (DocKind::Man, b".TH clone-army 8\n".to_vec()),
            (
                DocKind::BashCompletion,
                b"complete -F _clone-army clone-army\n".to_vec(),
            ),
            (DocKind::ZshCompletion, b"#compdef clone-army\n".to_vec()),
            (
                DocKind::FishCompletion,
                b"complete -c clone-army -f\n".to_vec(),
            ),
        ]
    }

    fn not_in_place(result: Result<DocsInstalled>) -> String {
        match result {
            Err(e @ Error::NotInPlace { .. }) => e.to_string(),
            other => panic!("expected not-in-place, got {other:?}"),
        }
    }

    #[test]
    fn installs_once_then_checks_clean_and_finds_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("usr/local");
        let docs = documents();

        let message = not_in_place(install(&prefix, &docs, true));
        assert!(message.contains("share/man/man8/clone-army.8"), "{message}");
        assert!(!prefix.exists(), "--check wrote something");

        let first = install(&prefix, &docs, false).unwrap();
        assert!(first.changed);
        assert_eq!(first.files.len(), 4);
        assert!(first.files.iter().all(|f| f.changed));
        for path in paths(&prefix) {
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, 0o644, "{}", path.display());
        }
        assert_eq!(
            std::fs::read(prefix.join("share/zsh/site-functions/_clone-army")).unwrap(),
            b"#compdef clone-army\n"
        );
        assert_eq!(
            std::fs::read(prefix.join("share/fish/vendor_completions.d/clone-army.fish")).unwrap(),
            b"complete -c clone-army -f\n"
        );

        let again = install(&prefix, &docs, false).unwrap();
        assert!(!again.changed);
        assert!(!install(&prefix, &docs, true).unwrap().changed);

        // A newer helper's page differs: --check says so, naming only that file.
        let mut newer = documents();
        newer[0].1 = b".TH clone-army 8 \"clone-army 0.5.0\"\n".to_vec();
        let message = not_in_place(install(&prefix, &newer, true));
        assert!(message.contains("clone-army.8"), "{message}");
        assert!(!message.contains("_clone-army"), "{message}");
        let updated = install(&prefix, &newer, false).unwrap();
        let changed: Vec<DocKind> = updated
            .files
            .iter()
            .filter(|f| f.changed)
            .map(|f| f.kind)
            .collect();
        assert_eq!(changed, [DocKind::Man]);

        // A mode changed by hand is not in place either.
        let bash = prefix.join(DocKind::BashCompletion.relative_path());
        std::fs::set_permissions(&bash, std::fs::Permissions::from_mode(0o600)).unwrap();
        not_in_place(install(&prefix, &newer, true));
    }

    #[test]
    fn a_relative_or_climbing_prefix_is_refused_before_anything_is_written() {
        for bad in ["usr/local", "/usr/local/../../tmp", "/usr/./local"] {
            match install(Path::new(bad), &documents(), false) {
                Err(Error::InvalidArgument { field, reason, .. }) => {
                    assert_eq!(field, "prefix");
                    assert!(reason.contains("allowed: an absolute"), "{reason}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
