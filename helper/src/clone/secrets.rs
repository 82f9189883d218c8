//! Secrets a clone can be given: a root password (as a crypt(3) hash, for `machinectl
//! login`) and a CSR challenge password (for policy-based autosigning).
//!
//! Both are read from files, never from arguments, so they never show in `ps`. They are
//! kept in the clone's config dir on the host, in files of mode 0600, never in the
//! shared base, and never appear in the JSON answer, in error messages or on stderr:
//! [`Secret`] has no `Display` and a redacting `Debug`, and every error names the file,
//! not its content.
//!
//! - The challenge password: `csr_attributes.yaml`, bound read-only into the clone.
//! - The root password hash: passed to the clone as the systemd credential
//!   [`ROOT_PASSWORD_CREDENTIAL`]; [`ROOT_PASSWORD_SERVICE`] in the clone's run units sets
//!   root's password from it at every boot (with `chpasswd -e`), so the host never writes
//!   the clone's `/etc/shadow`.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::config::{
    CloneConfig, CLONE_UNITS_DIR, CSR_ATTRIBUTES, ROOT_PASSWORD_CREDENTIAL, ROOT_PASSWORD_HASH,
    UNITS_DIR,
};
use crate::protocol::error::{Error, Result};
use crate::systemd::units::header;

/// The OID of PKCS#9 challengePassword, the CSR attribute Puppet's policy-based
/// autosigning hands to the policy executable.
pub const CHALLENGE_PASSWORD_OID: &str = "1.2.840.113549.1.9.7";
/// Secrets are root's alone, on the host and in the clone.
const SECRET_MODE: u32 = 0o600;
/// The unit that sets root's password in the clone, by its name in a unit directory.
pub const ROOT_PASSWORD_SERVICE: &str = "clone-army-root-password.service";
const ROOT_PASSWORD_SERVICE_LINK: &str = "multi-user.target.wants/clone-army-root-password.service";

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

/// The crypt(3) schemes a root password hash may be of: MD5, bcrypt, SHA-256, SHA-512,
/// scrypt, yescrypt (Debian's default) and gost-yescrypt. A locked password (`!`, `*`) is
/// no hash.
pub const CRYPT_SCHEMES: &[&str] = &["1", "2a", "2b", "2x", "2y", "5", "6", "7", "y", "gy"];

/// The crypt hash rule as an anchored pattern, for the Puppet side: `$<scheme>$`, then its
/// parameters and salt (printable ASCII but `:`, the shadow field separator), then `$` and
/// the hash in crypt's own alphabet. [`is_crypt_hash`] is the same rule.
pub fn crypt_hash_pattern() -> String {
    format!(
        "^\\$({})\\$[!-9;-~]+\\$[./0-9A-Za-z]+$",
        CRYPT_SCHEMES.join("|")
    )
}

/// One crypt(3) hash by [`crypt_hash_pattern`]'s rule: no space, newline, `:` or
/// character outside printable ASCII anywhere.
pub fn is_crypt_hash(text: &str) -> bool {
    let Some((scheme, rest)) = text.strip_prefix('$').and_then(|t| t.split_once('$')) else {
        return false;
    };
    let Some((params, hash)) = rest.rsplit_once('$') else {
        return false;
    };
    CRYPT_SCHEMES.contains(&scheme)
        && !params.is_empty()
        && params.chars().all(|c| c.is_ascii_graphic() && c != ':')
        && !hash.is_empty()
        && hash
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '/')
}

/// A root password hash file: one crypt(3) hash ([`is_crypt_hash`]).
pub fn read_root_password_hash(path: &Path) -> Result<Secret> {
    const FIELD: &str = "root-password-hash-file";
    let text = read_secret_file(FIELD, path)?;
    if is_crypt_hash(&text) {
        Ok(Secret(text))
    } else {
        Err(Error::InvalidArgument {
            field: FIELD,
            value: path.display().to_string(),
            reason: format!(
                "expected one crypt(3) hash such as the output of `openssl passwd -6` \
                 ($<scheme>$<salt>$<hash>, scheme one of {}), with no ':', space or newline \
                 (the content is not shown)",
                CRYPT_SCHEMES.join(", ")
            ),
        })
    }
}

/// A challenge password at most: what a CSR's `challengePassword` attribute holds.
pub const MAX_CHALLENGE_PASSWORD_BYTES: usize = 255;

/// Any printable text on one line, at most [`MAX_CHALLENGE_PASSWORD_BYTES`].
pub fn read_challenge_password(path: &Path) -> Result<Secret> {
    const FIELD: &str = "challenge-password-file";
    let text = read_secret_file(FIELD, path)?;
    if !text.is_empty()
        && text.len() <= MAX_CHALLENGE_PASSWORD_BYTES
        && !text.chars().any(char::is_control)
    {
        Ok(Secret(text))
    } else {
        Err(Error::InvalidArgument {
            field: FIELD,
            value: path.display().to_string(),
            reason: format!(
                "expected one line of 1 to {MAX_CHALLENGE_PASSWORD_BYTES} bytes without control \
                 characters (the content is not shown)"
            ),
        })
    }
}

/// The clone's unit that sets root's password from the credential at every boot.
///
/// `chpasswd -e` takes `root:<hash>` on stdin, so the hash is never an argument. Only a
/// validated crypt(3) hash (printable, no `:` or whitespace) is ever in the credential.
/// Without the credential (or with an empty one) the unit fails and sets nothing: an
/// empty hash would be root without a password. In the unit file `$$` and `%%` are a
/// literal `$` and `%`.
pub fn root_password_service() -> String {
    format!(
        "{header}\
[Unit]
Description=Set root's password from the hash the host passes (clone-army)
Before=systemd-logind.service systemd-user-sessions.service

[Service]
Type=oneshot
RemainAfterExit=yes
LoadCredential={ROOT_PASSWORD_CREDENTIAL}
ExecStart=/bin/sh -c 'hash=$$(cat \"$$CREDENTIALS_DIRECTORY/{ROOT_PASSWORD_CREDENTIAL}\") && [ -n \"$$hash\" ] && printf \"root:%%s\\n\" \"$$hash\" | chpasswd -e'

[Install]
WantedBy=multi-user.target
",
        header = header(),
    )
}

/// A YAML double-quoted string of `text` (printable: the callers refuse control
/// characters).
fn yaml_quoted(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// `csr_attributes.yaml`: the challenge password (an attribute of the request) and a
/// twin's extension requests (which the CA copies into the certificate), each value a
/// YAML double-quoted string; `None` when there is neither.
pub fn csr_attributes(
    password: Option<&Secret>,
    extensions: &BTreeMap<String, String>,
) -> Option<String> {
    if password.is_none() && extensions.is_empty() {
        return None;
    }
    let mut yaml = format!("{}---\n", header());
    if let Some(password) = password {
        yaml.push_str(&format!(
            "custom_attributes:\n  {CHALLENGE_PASSWORD_OID}: {}\n",
            yaml_quoted(password.expose())
        ));
    }
    if !extensions.is_empty() {
        yaml.push_str("extension_requests:\n");
        for (name, value) in extensions {
            yaml.push_str(&format!(
                "  {}: {}\n",
                yaml_quoted(name),
                yaml_quoted(value)
            ));
        }
    }
    Some(yaml)
}

/// The challenge password of a `csr_attributes.yaml` as [`csr_attributes`] writes it;
/// none when the file holds none (or a line this helper did not write).
fn challenge_password_in(yaml: &str) -> Option<Secret> {
    let quoted = yaml
        .lines()
        .find_map(|line| line.strip_prefix(&format!("  {CHALLENGE_PASSWORD_OID}: \"")))?
        .strip_suffix('"')?;
    unquoted(quoted).map(Secret)
}

/// The inside of a YAML double-quoted string as [`yaml_quoted`] writes it, unescaped;
/// none for one it did not write (a bare quote inside, a trailing backslash).
fn unquoted(quoted: &str) -> Option<String> {
    let mut text = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?),
            '"' => return None,
            c => text.push(c),
        }
    }
    Some(text)
}

/// The extension requests the clone's `csr_attributes.yaml` asks for, as
/// [`csr_attributes`] writes them (a twin's or its own, `--extension`): what its first
/// certificate under its certname was asked with. Lines this helper did not write, and
/// extensions a twin may not ask for, are left out.
pub fn extension_requests(config: &CloneConfig) -> Result<BTreeMap<String, String>> {
    let Some(yaml) = config.read(CSR_ATTRIBUTES)? else {
        return Ok(BTreeMap::new());
    };
    let mut requests = BTreeMap::new();
    let section = yaml
        .lines()
        .skip_while(|line| *line != "extension_requests:")
        .skip(1);
    for line in section.take_while(|line| line.starts_with("  ")) {
        let Some((name, value)) = line
            .strip_prefix("  \"")
            .and_then(|rest| rest.strip_suffix('"'))
            .and_then(|rest| rest.split_once("\": \""))
        else {
            continue;
        };
        if let (Some(name), Some(value)) = (unquoted(name), unquoted(value)) {
            if crate::twin::extensions::canonical(&name).as_deref() == Ok(name.as_str()) {
                requests.insert(name, value);
            }
        }
    }
    Ok(requests)
}

/// `csr_attributes.yaml` with these extension requests (a twin's, for `clone configure`),
/// keeping the challenge password the file holds. Returns whether it changed.
pub fn rewrite_extensions(
    config: &CloneConfig,
    extensions: &BTreeMap<String, String>,
) -> Result<bool> {
    let password = config
        .read(CSR_ATTRIBUTES)?
        .as_deref()
        .and_then(challenge_password_in);
    match csr_attributes(password.as_ref(), extensions) {
        Some(yaml) => config.write_bound(CSR_ATTRIBUTES, &yaml, SECRET_MODE),
        None => config.remove_file(CSR_ATTRIBUTES),
    }
}

/// What the clone has now, for the answer: whether, never what.
pub fn report(config: &CloneConfig) -> Result<(bool, bool)> {
    let challenge = config
        .read(CSR_ATTRIBUTES)?
        .is_some_and(|yaml| yaml.contains(CHALLENGE_PASSWORD_OID));
    Ok((config.exists(ROOT_PASSWORD_HASH), challenge))
}

/// Puts the given secrets and a twin's extension requests into the clone's config.
/// Returns whether anything changed.
pub fn apply(
    config: &CloneConfig,
    secrets: &CloneSecrets,
    extensions: &BTreeMap<String, String>,
) -> Result<bool> {
    let mut changed = false;
    if let Some(hash) = &secrets.root_password_hash {
        let unit = |name: &str| format!("{UNITS_DIR}/{name}");
        changed |= config.write(ROOT_PASSWORD_HASH, hash.expose(), SECRET_MODE)?;
        changed |= config.write(
            &unit(ROOT_PASSWORD_SERVICE),
            &root_password_service(),
            0o644,
        )?;
        changed |= config.link(
            &unit(ROOT_PASSWORD_SERVICE_LINK),
            &format!("{CLONE_UNITS_DIR}/{ROOT_PASSWORD_SERVICE}"),
        )?;
    }
    if let Some(yaml) = csr_attributes(secrets.challenge_password.as_ref(), extensions) {
        changed |= config.write_bound(CSR_ATTRIBUTES, &yaml, SECRET_MODE)?;
    }
    Ok(changed)
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
    fn secrets_are_kept_on_the_host_and_passed_on() {
        let dir = tempfile::tempdir().unwrap();
        let config = CloneConfig::of(&crate::sys::paths::Layout::under(dir.path()), "c1");
        config.create().unwrap();
        assert_eq!(report(&config).unwrap(), (false, false));
        let secrets = CloneSecrets {
            root_password_hash: Some(Secret("$6$s$h".into())),
            challenge_password: Some(Secret("pw".into())),
        };
        assert!(apply(&config, &secrets, &BTreeMap::new()).unwrap());
        assert!(!apply(&config, &secrets, &BTreeMap::new()).unwrap());
        assert_eq!(report(&config).unwrap(), (true, true));
        assert_eq!(config.read(ROOT_PASSWORD_HASH).unwrap().unwrap(), "$6$s$h");
        let mode = |name: &str| {
            use std::os::unix::fs::MetadataExt;
            let layout = crate::sys::paths::Layout::under(dir.path());
            fs::metadata(layout.fs(layout.config_dir("c1")).join(name))
                .unwrap()
                .mode()
                & 0o7777
        };
        assert_eq!(mode(ROOT_PASSWORD_HASH), 0o600);
        assert_eq!(mode(CSR_ATTRIBUTES), 0o600);
        assert_eq!(
            config.unit_link(ROOT_PASSWORD_SERVICE_LINK).unwrap(),
            Some(PathBuf::from(
                "/run/systemd/system.control/clone-army-root-password.service"
            ))
        );
    }

    #[test]
    fn root_password_service_snapshot() {
        insta::assert_snapshot!(
            root_password_service().replace(env!("CARGO_PKG_VERSION"), "[version]")
        );
    }

    #[test]
    fn csr_attributes_quote_the_password() {
        let yaml = csr_attributes(Some(&Secret("pa\"ss\\word".into())), &BTreeMap::new()).unwrap();
        assert!(yaml.starts_with("# Managed by clone-army "));
        assert!(yaml
            .ends_with("---\ncustom_attributes:\n  1.2.840.113549.1.9.7: \"pa\\\"ss\\\\word\"\n"));
    }

    #[test]
    fn the_challenge_password_is_read_back_from_what_was_written_and_kept_beside_new_extensions() {
        for password in ["pw", "pa\"ss\\word", "with: colon"] {
            let yaml = csr_attributes(Some(&Secret(password.into())), &BTreeMap::new()).unwrap();
            assert_eq!(challenge_password_in(&yaml).unwrap().expose(), password);
        }
        assert!(
            challenge_password_in("---\nextension_requests:\n  \"pp_role\": \"web\"\n").is_none()
        );
        let dir = tempfile::tempdir().unwrap();
        let config = CloneConfig::of(&crate::sys::paths::Layout::under(dir.path()), "c1");
        config.create().unwrap();
        let secrets = CloneSecrets {
            root_password_hash: None,
            challenge_password: Some(Secret("pw".into())),
        };
        apply(&config, &secrets, &BTreeMap::new()).unwrap();
        let web = BTreeMap::from([("pp_role".to_owned(), "web".to_owned())]);
        assert!(rewrite_extensions(&config, &web).unwrap());
        let yaml = config.read(CSR_ATTRIBUTES).unwrap().unwrap();
        assert!(
            yaml.contains("  1.2.840.113549.1.9.7: \"pw\"\n")
                && yaml.contains("  \"pp_role\": \"web\"\n"),
            "{yaml}"
        );
        assert!(!rewrite_extensions(&config, &web).unwrap());
    }

    #[test]
    fn csr_attributes_carry_a_twins_extension_requests_beside_the_password_or_alone() {
        let extensions = BTreeMap::from([
            ("pp_role".to_owned(), "web \"front\"".to_owned()),
            ("1.3.6.1.4.1.34380.1.2.1".to_owned(), "rack4".to_owned()),
        ]);
        let both = csr_attributes(Some(&Secret("pw".into())), &extensions).unwrap();
        assert!(both.ends_with(
            "---\ncustom_attributes:\n  1.2.840.113549.1.9.7: \"pw\"\n\
             extension_requests:\n  \"1.3.6.1.4.1.34380.1.2.1\": \"rack4\"\n  \"pp_role\": \"web \\\"front\\\"\"\n"
        ), "{both}");
        let alone = csr_attributes(None, &extensions).unwrap();
        assert!(
            !alone.contains("custom_attributes") && alone.contains("extension_requests:"),
            "{alone}"
        );
        assert_eq!(csr_attributes(None, &BTreeMap::new()), None);
    }
}
