//! Secrets a clone can be given: a root password (as a crypt(3) hash, for `machinectl
//! login`) and a CSR challenge password (for policy-based autosigning).
//!
//! Both are read from files, never from arguments, so they never show in `ps`. They are
//! written only into the clone's view (its upper layer, or through its mounted overlay),
//! never into the shared base, and never appear in the JSON answer, in error messages or
//! on stderr: [`Secret`] has no `Display` and a redacting `Debug`, and every error names
//! the file, not its content.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::CloneView;
use crate::error::{Error, Result};
use crate::fsutil::create_dir_like;
use crate::units::header;

/// The OID of PKCS#9 challengePassword, the CSR attribute Puppet's policy-based
/// autosigning hands to the policy executable.
pub const CHALLENGE_PASSWORD_OID: &str = "1.2.840.113549.1.9.7";
const SHADOW: &str = "/etc/shadow";
/// csr_attributes.yaml: readable by root (the agent) and its group only.
const CSR_ATTRIBUTES_MODE: u32 = 0o640;

/// A secret value. Deliberately no `Display`, `Serialize` or revealing `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    fn expose(&self) -> &str {
        &self.0
    }
}

/// What `clone create` was given, read and validated before anything is touched on disk.
#[derive(Debug, Clone, Default)]
pub struct CloneSecrets {
    pub root_password_hash: Option<Secret>,
    pub challenge_password: Option<Secret>,
}

/// Where the secrets are; `None` leaves the clone's current ones alone.
#[derive(Debug, Clone, Default)]
pub struct SecretFiles {
    pub root_password_hash_file: Option<PathBuf>,
    pub challenge_password_file: Option<PathBuf>,
}

impl SecretFiles {
    pub fn read(&self) -> Result<CloneSecrets> {
        Ok(CloneSecrets {
            root_password_hash: self
                .root_password_hash_file
                .as_deref()
                .map(read_root_password_hash)
                .transpose()?,
            challenge_password: self
                .challenge_password_file
                .as_deref()
                .map(read_challenge_password)
                .transpose()?,
        })
    }
}

/// Longer is not a secret of ours (and `/dev/zero` must not exhaust memory).
const MAX_SECRET_FILE: u64 = 4096;

/// The file's content without one trailing newline (`echo ... > file` adds one).
fn read_secret_file(field: &'static str, path: &Path) -> Result<String> {
    let refuse = |reason: String| Error::InvalidArgument {
        field,
        value: path.display().to_string(),
        reason,
    };
    let mut text = String::new();
    fs::File::open(path)
        .and_then(|f| f.take(MAX_SECRET_FILE + 1).read_to_string(&mut text))
        .map_err(|e| refuse(format!("cannot read it as text: {}", e.kind())))?;
    if text.len() as u64 > MAX_SECRET_FILE {
        return Err(refuse(format!("it is longer than {MAX_SECRET_FILE} bytes")));
    }
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(text)
}

/// A crypt(3) hash: `$id$...` (`$6$` SHA-512, `$y$` yescrypt, ...), printable ASCII, no
/// `:` (the shadow field separator), no whitespace or newline.
pub fn read_root_password_hash(path: &Path) -> Result<Secret> {
    const FIELD: &str = "root-password-hash-file";
    let text = read_secret_file(FIELD, path)?;
    let looks_like_crypt = text
        .strip_prefix('$')
        .and_then(|rest| rest.split_once('$'))
        .is_some_and(|(id, rest)| {
            !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric()) && !rest.is_empty()
        })
        && text.chars().all(|c| c.is_ascii_graphic() && c != ':');
    if looks_like_crypt {
        Ok(Secret(text))
    } else {
        Err(Error::InvalidArgument {
            field: FIELD,
            value: path.display().to_string(),
            reason: "expected one crypt(3) hash such as the output of `openssl passwd -6` \
                     ($id$...), with no ':', space or newline (the content is not shown)"
                .to_owned(),
        })
    }
}

/// Any printable text on one line, at most 255 bytes.
pub fn read_challenge_password(path: &Path) -> Result<Secret> {
    const FIELD: &str = "challenge-password-file";
    let text = read_secret_file(FIELD, path)?;
    if !text.is_empty() && text.len() <= 255 && !text.chars().any(char::is_control) {
        Ok(Secret(text))
    } else {
        Err(Error::InvalidArgument {
            field: FIELD,
            value: path.display().to_string(),
            reason: "expected one line of 1 to 255 bytes without control characters \
                     (the content is not shown)"
                .to_owned(),
        })
    }
}

/// `shadow` with root's password field set to `hash` (a root line is added if missing).
pub fn shadow_with_root_hash(shadow: &str, hash: &Secret) -> String {
    let mut found = false;
    let mut lines: Vec<String> = shadow
        .lines()
        .map(|line| {
            let mut fields: Vec<&str> = line.split(':').collect();
            if fields.first() == Some(&"root") && fields.len() > 1 {
                fields[1] = hash.expose();
                found = true;
            }
            fields.join(":")
        })
        .collect();
    if !found {
        lines.insert(0, format!("root:{}:0:0:99999:7:::", hash.expose()));
    }
    lines.join("\n") + "\n"
}

/// Whether root has a usable password in this shadow (a hash, not `*`, `!...` or empty).
pub fn root_password_in(shadow: &str) -> bool {
    shadow.lines().any(|line| {
        let mut fields = line.split(':');
        fields.next() == Some("root") && fields.next().is_some_and(|p| p.starts_with('$'))
    })
}

/// `csr_attributes.yaml` with the challenge password as a YAML double-quoted string.
pub fn csr_attributes(password: &Secret) -> String {
    let mut quoted = String::with_capacity(password.expose().len() + 2);
    for c in password.expose().chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c => quoted.push(c),
        }
    }
    format!(
        "{}---\ncustom_attributes:\n  {CHALLENGE_PASSWORD_OID}: \"{quoted}\"\n",
        header()
    )
}

fn csr_attributes_path(confdir: &str) -> String {
    format!("{}/csr_attributes.yaml", confdir.trim_end_matches('/'))
}

/// What the clone has now, for the answer: whether, never what.
pub fn report(view: &CloneView, confdir: &str) -> Result<(bool, bool)> {
    let root_password = view.read(SHADOW)?.is_some_and(|s| root_password_in(&s));
    let challenge_password = view
        .read(&csr_attributes_path(confdir))?
        .is_some_and(|s| s.contains(CHALLENGE_PASSWORD_OID));
    Ok((root_password, challenge_password))
}

/// Writes the given secrets into the clone's view. Returns whether anything changed.
pub fn apply(view: &CloneView, confdir: &str, secrets: &CloneSecrets) -> Result<bool> {
    let mut changed = false;
    if let Some(hash) = &secrets.root_password_hash {
        // The base's shadow decides mode and owner (0640 root:shadow on Debian).
        let base_shadow = view.base_root.join(SHADOW.trim_start_matches('/'));
        let meta = fs::metadata(&base_shadow).map_err(|e| Error::io("inspect", &base_shadow, e))?;
        let current = view
            .read(SHADOW)?
            .ok_or_else(|| Error::io("read", &base_shadow, ErrorKind::NotFound.into()))?;
        changed |= view.write_private(
            SHADOW,
            &shadow_with_root_hash(&current, hash),
            meta.mode() & 0o7777,
            (meta.uid(), meta.gid()),
        )?;
    }
    if let Some(password) = &secrets.challenge_password {
        changed |= view.write_private(
            &csr_attributes_path(confdir),
            &csr_attributes(password),
            CSR_ATTRIBUTES_MODE,
            (0, 0),
        )?;
    }
    Ok(changed)
}

impl CloneView {
    /// Like [`CloneView::write`], with a given mode and owner, and a file that never exists
    /// with a wider mode than `mode`, not even empty. Returns whether it wrote.
    fn write_private(
        &self,
        path: &str,
        content: &str,
        mode: u32,
        (uid, gid): (u32, u32),
    ) -> Result<bool> {
        let relative = Path::new(path.trim_start_matches('/'));
        let target = match &self.mounted_root {
            Some(root) => {
                if let Some(parent) = relative.parent() {
                    crate::fsutil::create_dir_all(&root.join(parent), 0o755)?;
                }
                root.join(relative)
            }
            None => {
                let mut dir = self.upper_root.clone();
                let mut like = self.base_root.clone();
                for component in relative.parent().into_iter().flat_map(Path::components) {
                    dir.push(component);
                    like.push(component);
                    create_dir_like(&dir, &like)?;
                }
                self.upper_root.join(relative)
            }
        };
        if let Ok(meta) = fs::metadata(&target) {
            let same = meta.mode() & 0o7777 == mode
                && meta.uid() == uid
                && meta.gid() == gid
                && fs::read(&target).is_ok_and(|c| c == content.as_bytes());
            if same {
                return Ok(false);
            }
        }
        let dir = target
            .parent()
            .ok_or_else(|| Error::Internal(format!("{} has no parent", target.display())))?;
        let tmp = dir.join(format!(".clone-army-secret-{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        let written = (|| {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)
                .map_err(|e| Error::io("create", &tmp, e))?;
            std::os::unix::fs::fchown(&file, Some(uid), Some(gid))
                .map_err(|e| Error::io("set the owner of", &tmp, e))?;
            file.set_permissions(fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io("set the mode of", &tmp, e))?;
            file.write_all(content.as_bytes())
                .map_err(|e| Error::io("write", &tmp, e))?;
            file.sync_all().map_err(|e| Error::io("sync", &tmp, e))?;
            fs::rename(&tmp, &target).map_err(|e| Error::io("rename into place", &target, e))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written.map(|()| true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, content: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, content).unwrap();
        path
    }

    #[test]
    fn hashes_are_validated_without_showing_them() {
        let dir = tempfile::tempdir().unwrap();
        for good in [
            "$6$saltsalt$c2VjcmV0aGFzaA\n",
            "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7",
            "$6$rounds=5000$salt$hash",
        ] {
            let secret = read_root_password_hash(&file(dir.path(), "h", good)).unwrap();
            assert_eq!(secret.expose(), good.trim_end());
            assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        }
        for bad in [
            "hunter2-SECRET",
            "$6$SECRET:0:0",
            "$6$SECRET\nsecond line",
            "$6$SECRET with space",
            "$$SECRET",
            "$6$",
            "",
        ] {
            let path = file(dir.path(), "h", bad);
            let error = read_root_password_hash(&path).unwrap_err();
            assert_eq!(error.field(), Some("root-password-hash-file"));
            let shown = format!("{error} {:?}", error.causes());
            assert!(!shown.contains("SECRET"), "{shown}");
            assert!(shown.contains(&path.display().to_string()), "{shown}");
        }
        let error = read_root_password_hash(&dir.path().join("missing")).unwrap_err();
        assert_eq!(error.kind(), "invalid-argument");
        let error = read_root_password_hash(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(error.field(), Some("root-password-hash-file"));
    }

    #[test]
    fn challenge_passwords_are_validated_without_showing_them() {
        let dir = tempfile::tempdir().unwrap();
        let ok = read_challenge_password(&file(dir.path(), "p", "s3cr\"et\\x\n")).unwrap();
        assert_eq!(ok.expose(), "s3cr\"et\\x");
        for bad in ["", "SECRET\nSECRET", "SECRET\u{7}"] {
            let error = read_challenge_password(&file(dir.path(), "p", bad)).unwrap_err();
            assert_eq!(error.field(), Some("challenge-password-file"));
            assert!(!error.to_string().contains("SECRET"), "{error}");
        }
    }

    #[test]
    fn shadow_and_csr_attributes() {
        let hash = Secret("$6$s$h".into());
        let shadow = "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n";
        let updated = shadow_with_root_hash(shadow, &hash);
        assert_eq!(
            updated,
            "root:$6$s$h:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
        );
        assert!(root_password_in(&updated));
        assert!(!root_password_in(shadow));
        assert!(shadow_with_root_hash("daemon:*:1::::::\n", &hash).starts_with("root:$6$s$h:"));

        let yaml = csr_attributes(&Secret("pa\"ss\\word".into()));
        assert!(yaml.starts_with("# Managed by clone-army "));
        assert!(yaml
            .ends_with("---\ncustom_attributes:\n  1.2.840.113549.1.9.7: \"pa\\\"ss\\\\word\"\n"));
    }
}
