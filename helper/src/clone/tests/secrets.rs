//! Secrets: the root password hash and the challenge password stay on the host.

use super::*;
use crate::clone::SecretFiles;
use crate::protocol::answers::Envelope;

const HASH: &str = "$6$c2FsdA$SECRETHASHc2VjcmV0aGFzaA";
const PASSWORD: &str = "SECRET-challenge \"pw\"";

/// The base's shadow as Debian has it: root locked, 0640 root:shadow (gid 42).
fn base_shadow(f: &Fixture) -> PathBuf {
    let shadow = f.path("/var/lib/puppet-clone-army/debian-12/etc/shadow");
    fs::write(
        &shadow,
        "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
    )
    .unwrap();
    fs::set_permissions(&shadow, fs::Permissions::from_mode(0o640)).unwrap();
    if nix::unistd::geteuid().is_root() {
        std::os::unix::fs::chown(&shadow, Some(0), Some(42)).unwrap();
    }
    shadow
}

fn secret_files(dir: &Path, hash: &str, password: &str) -> SecretFiles {
    fs::write(dir.join("hash"), format!("{hash}\n")).unwrap();
    fs::write(dir.join("password"), format!("{password}\n")).unwrap();
    SecretFiles {
        root_password_hash_file: Some(dir.join("hash")),
        challenge_password_file: Some(dir.join("password")),
    }
}

use std::os::unix::fs::PermissionsExt;

#[test]
fn secrets_stay_on_the_host_and_never_reach_the_answer() {
    let f = Fixture::new();
    let shadow = base_shadow(&f);
    let base_before = fs::read_to_string(&shadow).unwrap();
    let secrets_dir = tempfile::tempdir().unwrap();
    let files = secret_files(secrets_dir.path(), HASH, PASSWORD);

    let result = create_with_secrets(&f.ctx(), &request("c1"), &files).unwrap();
    assert!(result.changed);
    assert!(result.root_password);
    assert!(result.challenge_password);
    let answer = serde_json::to_string(&Envelope::success(&result)).unwrap();
    assert!(answer.contains(r#""root_password":true"#), "{answer}");
    assert!(answer.contains(r#""challenge_password":true"#), "{answer}");
    assert!(!answer.contains("SECRET"), "{answer}");

    // Both in the config dir, root's alone; the hash reaches the clone as a
    // credential, the CSR attributes by a read-only bind.
    let config = "/var/lib/puppet-clone-army/c1-config";
    let hash = f.path(&format!("{config}/root-password-hash"));
    assert_eq!(fs::read_to_string(&hash).unwrap(), HASH);
    assert_eq!(mode(&hash), 0o600);
    let csr = f.path(&format!("{config}/csr_attributes.yaml"));
    assert_eq!(mode(&csr), 0o600);
    assert!(fs::read_to_string(&csr)
        .unwrap()
        .contains("  1.2.840.113549.1.9.7: \"SECRET-challenge \\\"pw\\\"\"\n"));
    let settings = f.read("/etc/systemd/nspawn/c1.nspawn");
    assert!(f
        .read("/etc/systemd/system/puppet-clone-army@c1.service.d/40-credentials.conf")
        .contains(&format!(
            "--load-credential=clone-army.root-password-hash:{config}/root-password-hash\n"
        )));
    assert!(settings.contains(&format!(
        "\nBindReadOnly={config}/csr_attributes.yaml:/etc/puppet/csr_attributes.yaml\n"
    )));
    assert!(!settings.contains("SECRET"));
    assert!(f
        .path(&format!(
            "{config}/systemd/multi-user.target.wants/clone-army-root-password.service"
        ))
        .is_symlink());

    // Neither the clone's tree nor the base is touched.
    assert_eq!(
        fs::read_dir(f.path("/var/lib/puppet-clone-army/c1-overlay"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(fs::read_to_string(&shadow).unwrap(), base_before);
    assert!(!f
        .path("/var/lib/puppet-clone-army/debian-12/etc/puppet/csr_attributes.yaml")
        .exists());

    // Again: nothing to do. Without the files: left as they are, still reported.
    let again = create_with_secrets(&f.ctx(), &request("c1"), &files).unwrap();
    assert!(!again.changed);
    let plain = create_with_secrets(&f.ctx(), &request("c1"), &SecretFiles::default()).unwrap();
    assert!(!plain.changed);
    assert!(plain.root_password && plain.challenge_password);

    // A clone without secrets says so, and its settings pass none.
    let other = create_with_secrets(&f.ctx(), &request("c2"), &SecretFiles::default()).unwrap();
    assert!(!other.root_password && !other.challenge_password);
    let settings = f.read("/etc/systemd/nspawn/c2.nspawn");
    assert!(!settings.contains("csr_attributes"));
    assert!(!f
        .path("/etc/systemd/system/puppet-clone-army@c2.service.d/40-credentials.conf")
        .exists());
}

#[test]
fn bad_secrets_are_refused_unseen_before_anything_is_touched() {
    let f = Fixture::new();
    base_shadow(&f);
    let secrets_dir = tempfile::tempdir().unwrap();
    for (hash, password, field) in [
        ("$6$SECRET:x", "SECRET-ok", "root-password-hash-file"),
        ("SECRET-plain-text", "SECRET-ok", "root-password-hash-file"),
        (HASH, "SECRET\nline two", "challenge-password-file"),
    ] {
        let files = secret_files(secrets_dir.path(), hash, password);
        let error = create_with_secrets(&f.ctx(), &request("c1"), &files).unwrap_err();
        assert_eq!(error.field(), Some(field));
        let answer = serde_json::to_string(&Envelope::failure(&error)).unwrap();
        assert!(!answer.contains("SECRET"), "{answer}");
        assert!(!f.path("/var/lib/puppet-clone-army/c1-overlay").exists());
        assert!(f.systemd.calls().is_empty());
    }
}
