//! A clone's SSL directory: kept per certname outside the clone, bound read-write at the
//! agent's ssldir, kept by `clone remove` and removed (never followed) when forgotten.

use std::os::unix::fs::symlink;

use super::*;
use crate::inventory::bases::{AIO_PUPPET_SSLDIR, DISTRO_PUPPET_SSLDIR};

const SSL_DIR: &str = "/var/lib/puppet-clone-army/.ssl/c1.load.example.com";

fn names(list: &[crate::protocol::answers::SslDir]) -> Vec<(String, Option<String>)> {
    list.iter()
        .map(|d| (d.certname.clone(), d.clone.clone()))
        .collect()
}

#[test]
fn create_makes_the_certnames_dir_and_binds_it_read_write_at_the_agents_ssldir() {
    let f = Fixture::new();
    f.create("c1", false);
    let dir = f.path(SSL_DIR);
    assert!(dir.is_dir());
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&f.path("/var/lib/puppet-clone-army/.ssl")), 0o700);
    let settings = f.read("/etc/systemd/nspawn/c1.nspawn");
    assert!(
        settings.contains(&format!("\nBind={SSL_DIR}:{DISTRO_PUPPET_SSLDIR}\n")),
        "{settings}"
    );
    assert!(!settings.contains("BindReadOnly=/var/lib/puppet-clone-army/.ssl"));
    // Creating again changes nothing, and what the clone wrote in it stays.
    fs::write(dir.join("marker"), "key").unwrap();
    assert!(!f.create("c1", false).changed);
    assert_eq!(fs::read_to_string(dir.join("marker")).unwrap(), "key");
    let listed = crate::clone::ssl::list(&f.ctx()).unwrap().ssl_dirs;
    assert_eq!(
        names(&listed),
        [("c1.load.example.com".to_owned(), Some("c1".to_owned()))]
    );
    assert_eq!(listed[0].path, SSL_DIR);
}

#[test]
fn an_aio_base_gets_the_bind_at_the_aio_ssldir() {
    let layout = Layout::under("/ignored");
    let bind = crate::clone::ssl::SslBind::of(&layout, "c1.example.com", "/etc/puppetlabs/puppet/");
    assert_eq!(
        bind.line(),
        format!("Bind=/var/lib/puppet-clone-army/.ssl/c1.example.com:{AIO_PUPPET_SSLDIR}\n")
    );
    assert_eq!(
        crate::clone::ssl::SslBind::parse(&layout, &bind.line()),
        Some(bind)
    );
    // A bind of anything else is not taken for an SSL directory.
    for other in [
        "Bind=/srv/x:/var/lib/puppet/ssl\n",
        "Bind=/var/lib/puppet-clone-army/.ssl/a/b:/x\n",
        "Bind=/var/lib/puppet-clone-army/.ssl/..:/x\n",
        "BindReadOnly=/var/lib/puppet-clone-army/.ssl/c1:/x\n",
    ] {
        assert_eq!(
            crate::clone::ssl::SslBind::parse(&layout, other),
            None,
            "{other}"
        );
    }
}

#[test]
fn remove_keeps_the_dir_and_the_clone_made_again_gets_it_back() {
    let f = Fixture::new();
    f.create("c1", false);
    fs::write(f.path(SSL_DIR).join("marker"), "key").unwrap();
    let removed = remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert_eq!(removed.removed, ["c1"]);
    assert_eq!(
        fs::read_to_string(f.path(SSL_DIR).join("marker")).unwrap(),
        "key"
    );
    assert_eq!(
        names(&crate::clone::ssl::list(&f.ctx()).unwrap().ssl_dirs),
        [("c1.load.example.com".to_owned(), None)]
    );
    f.create("c1", false);
    assert!(f
        .read("/etc/systemd/nspawn/c1.nspawn")
        .contains(&format!("Bind={SSL_DIR}:")));
    assert_eq!(
        fs::read_to_string(f.path(SSL_DIR).join("marker")).unwrap(),
        "key"
    );
}

/// What a clone wrote in its SSL directory is removed as it is: a symlink to a host
/// directory goes, the host directory stays.
#[test]
fn forgetting_removes_the_dir_without_following_what_the_clone_put_there() {
    let f = Fixture::new();
    f.create("c1", false);
    f.create("c2", false);
    let host_dir = f.root().join("host-secrets");
    fs::create_dir_all(&host_dir).unwrap();
    fs::write(host_dir.join("keep"), "host").unwrap();
    for name in ["c1", "c2"] {
        let dir = f.path(&format!(
            "/var/lib/puppet-clone-army/.ssl/{name}.load.example.com"
        ));
        fs::create_dir_all(dir.join("private_keys")).unwrap();
        symlink(&host_dir, dir.join("private_keys/evil")).unwrap();
        symlink(&host_dir, dir.join("certs")).unwrap();
    }

    // In use: refused, nothing removed.
    let error =
        crate::clone::ssl::forget(&f.ctx(), &["c1.load.example.com".to_owned()]).unwrap_err();
    assert_eq!(error.kind(), "invalid-argument");
    assert!(error.to_string().contains("clone c1 uses it"), "{error}");
    assert!(f.path(SSL_DIR).is_dir());
    // Bad certnames: refused before anything.
    for bad in ["..", "a/b", ".ssl", ""] {
        let error = crate::clone::ssl::forget(&f.ctx(), &[bad.to_owned()]).unwrap_err();
        assert_eq!(error.kind(), "invalid-argument", "{bad}");
    }

    // clone remove --forget-ssl
    remove_with(&f.ctx(), &["c1".to_owned()], true).unwrap();
    assert!(!f.path(SSL_DIR).exists());
    assert_eq!(fs::read_to_string(host_dir.join("keep")).unwrap(), "host");

    // ssl forget, once the clone is gone.
    remove(&f.ctx(), &["c2".to_owned()]).unwrap();
    let forgotten = crate::clone::ssl::forget(
        &f.ctx(),
        &[
            "c2.load.example.com".to_owned(),
            "c9.load.example.com".to_owned(),
        ],
    )
    .unwrap();
    assert_eq!(forgotten.forgotten, ["c2.load.example.com"]);
    assert!(forgotten.changed);
    assert!(crate::clone::ssl::list(&f.ctx())
        .unwrap()
        .ssl_dirs
        .is_empty());
    assert_eq!(fs::read_to_string(host_dir.join("keep")).unwrap(), "host");
    assert!(
        !crate::clone::ssl::forget(&f.ctx(), &["c2.load.example.com".to_owned()])
            .unwrap()
            .changed
    );
}

/// A directory planted where the kept one goes (a symlink to a host directory) is never
/// bound nor followed: create refuses.
#[test]
fn a_symlink_in_place_of_the_kept_dir_is_refused() {
    let f = Fixture::new();
    let host_dir = f.root().join("host-dir");
    fs::create_dir_all(&host_dir).unwrap();
    fs::create_dir_all(f.path("/var/lib/puppet-clone-army/.ssl")).unwrap();
    symlink(&host_dir, f.path(SSL_DIR)).unwrap();
    let error = create(
        &f.ctx(),
        &CloneRequest {
            name: "c1".into(),
            base: "debian-12".into(),
            server: Some("puppet.example.com".into()),
            certname: "c1.load.example.com".into(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(error.kind(), "unsafe-path", "{error}");
    assert_eq!(mode(&host_dir), 0o755);
}

/// A clone made before SSL directories were kept (its own in its upper layer) is given no
/// bind, so it keeps its key; when removed, its directory moves to `.ssl/` as it is, and
/// the clone made again gets it.
#[test]
fn a_clone_with_its_ssl_dir_in_its_upper_layer_keeps_it_and_it_is_kept_on_remove() {
    let f = Fixture::new();
    let upper_ssl = f.path("/var/lib/puppet-clone-army/c1-overlay/var/lib/puppet/ssl");
    fs::create_dir_all(upper_ssl.join("private_keys")).unwrap();
    fs::write(upper_ssl.join("private_keys/c1.pem"), "old key").unwrap();
    f.create("c1", false);
    let settings = f.read("/etc/systemd/nspawn/c1.nspawn");
    assert!(!settings.contains("Bind="), "{settings}");
    assert!(!f.path(SSL_DIR).exists());
    assert_eq!(
        names(&crate::clone::ssl::list(&f.ctx()).unwrap().ssl_dirs),
        Vec::<(String, Option<String>)>::new()
    );

    remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert!(!f.path("/var/lib/puppet-clone-army/c1-overlay").exists());
    assert_eq!(
        fs::read_to_string(f.path(SSL_DIR).join("private_keys/c1.pem")).unwrap(),
        "old key"
    );
    f.create("c1", false);
    assert!(f
        .read("/etc/systemd/nspawn/c1.nspawn")
        .contains(&format!("Bind={SSL_DIR}:{DISTRO_PUPPET_SSLDIR}")));
}

/// A clone whose upper layer has a symlink where the agent's ssldir goes gets the bind
/// (nspawn resolves it inside the clone), and on remove nothing is moved.
#[test]
fn a_symlinked_ssldir_in_the_upper_layer_is_neither_kept_nor_followed() {
    let f = Fixture::new();
    let host_dir = f.root().join("host-dir");
    fs::create_dir_all(&host_dir).unwrap();
    let upper = f.path("/var/lib/puppet-clone-army/c1-overlay/var/lib/puppet");
    fs::create_dir_all(&upper).unwrap();
    symlink(&host_dir, upper.join("ssl")).unwrap();
    f.create("c1", false);
    assert!(f.read("/etc/systemd/nspawn/c1.nspawn").contains("Bind="));
    // Forget the kept dir by hand, as if made by an older helper, then remove.
    fs::remove_dir(f.path(SSL_DIR)).unwrap();
    fs::write(
        f.path("/etc/systemd/nspawn/c1.nspawn"),
        f.read("/etc/systemd/nspawn/c1.nspawn")
            .lines()
            .filter(|l| !l.starts_with("Bind="))
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert!(!f.path(SSL_DIR).exists());
    assert!(host_dir.is_dir());
}

#[test]
fn a_new_certname_gets_its_own_dir() {
    let f = Fixture::new();
    f.create("c1", false);
    configure(&f.ctx(), "c1", None, Some("renamed.example.com")).unwrap();
    assert!(f.read("/etc/systemd/nspawn/c1.nspawn").contains(
        "Bind=/var/lib/puppet-clone-army/.ssl/renamed.example.com:/var/lib/puppet/ssl\n"
    ));
    assert!(f
        .path("/var/lib/puppet-clone-army/.ssl/renamed.example.com")
        .is_dir());
    assert_eq!(
        names(&crate::clone::ssl::list(&f.ctx()).unwrap().ssl_dirs),
        [
            ("c1.load.example.com".to_owned(), None),
            ("renamed.example.com".to_owned(), Some("c1".to_owned()))
        ]
    );
}

/// A boot leaves the bind's mount point, the agent's ssldir, in the clone's upper layer:
/// a new certname keeps a bind all the same (its own kept directory), and never falls
/// back to an SSL directory in the upper layer, which removal would then have to judge
/// by what the clone says.
#[test]
fn a_certname_change_after_a_boot_keeps_the_ssl_bind() {
    let f = Fixture::new();
    f.create("c1", false);
    // What nspawn left in the upper layer when the clone booted with the bind.
    fs::create_dir_all(f.path("/var/lib/puppet-clone-army/c1-overlay/var/lib/puppet/ssl")).unwrap();
    configure(&f.ctx(), "c1", None, Some("renamed.example.com")).unwrap();
    let settings = f.read("/etc/systemd/nspawn/c1.nspawn");
    assert!(
        settings.contains(&format!(
            "\nBind=/var/lib/puppet-clone-army/.ssl/renamed.example.com:{DISTRO_PUPPET_SSLDIR}\n"
        )),
        "{settings}"
    );
    // The same for a clone made again under another certname.
    create(
        &f.ctx(),
        &CloneRequest {
            certname: "again.example.com".into(),
            ..request("c1")
        },
    )
    .unwrap();
    let settings = f.read("/etc/systemd/nspawn/c1.nspawn");
    assert!(
        settings.contains(&format!(
            "\nBind=/var/lib/puppet-clone-army/.ssl/again.example.com:{DISTRO_PUPPET_SSLDIR}\n"
        )),
        "{settings}"
    );
}

/// What a clone without a bind (its SSL directory in its upper layer) writes into its
/// puppet.conf, which its root can rewrite by remounting the bind read-write.
fn claim_certname(f: &Fixture, clone: &str, certname: &str) {
    let text = format!("[main]\nserver = puppet.example.com\ncertname = {certname}\n");
    for file in ["puppet.conf", "hostname"] {
        fs::write(
            f.path(&format!("/var/lib/puppet-clone-army/{clone}-config/{file}")),
            &text,
        )
        .unwrap();
    }
}

/// A clone made with its SSL directory in its upper layer (no bind).
fn create_unbound(f: &Fixture, clone: &str) {
    let upper_ssl = f.path(&format!(
        "/var/lib/puppet-clone-army/{clone}-overlay/var/lib/puppet/ssl"
    ));
    fs::create_dir_all(upper_ssl.join("private_keys")).unwrap();
    fs::write(upper_ssl.join(format!("private_keys/{clone}.pem")), clone).unwrap();
    f.create(clone, false);
    assert!(!f
        .read(&format!("/etc/systemd/nspawn/{clone}.nspawn"))
        .contains("Bind="));
}

#[test]
fn a_clone_that_claims_another_clones_certname_cannot_make_forget_ssl_remove_its_keys() {
    let f = Fixture::new();
    create_unbound(&f, "c1");
    f.create("c2", false);
    let victim = f.path("/var/lib/puppet-clone-army/.ssl/c2.load.example.com");
    fs::write(victim.join("marker"), "c2's key").unwrap();
    claim_certname(&f, "c1", "c2.load.example.com");
    remove_with(&f.ctx(), &["c1".to_owned()], true).unwrap();
    assert_eq!(
        fs::read_to_string(victim.join("marker")).unwrap(),
        "c2's key"
    );
    // Forgotten, c1's own SSL directory went with its upper layer: nothing was kept.
    assert_eq!(
        names(&crate::clone::ssl::list(&f.ctx()).unwrap().ssl_dirs),
        [("c2.load.example.com".to_owned(), Some("c2".to_owned()))]
    );
}

/// A clone that claims a certname no clone has yet would have its key and CA
/// certificate kept under that name, for the clone made later under it to trust.
#[test]
fn a_clone_that_claims_a_certname_no_one_uses_yet_cannot_plant_keys_for_it() {
    let f = Fixture::new();
    create_unbound(&f, "c1");
    claim_certname(&f, "c1", "c3.load.example.com");
    remove(&f.ctx(), &["c1".to_owned()]).unwrap();
    assert!(!f
        .path("/var/lib/puppet-clone-army/.ssl/c3.load.example.com")
        .exists());
    // Kept under the certname the helper gave it.
    assert_eq!(
        fs::read_to_string(f.path(&format!("{SSL_DIR}/private_keys/c1.pem"))).unwrap(),
        "c1"
    );
}

/// The record of which certname is the clone's is the helper's, in the clone's config
/// dir beside what is bound, never bound itself: the clone cannot reach it.
#[test]
fn the_certname_record_is_never_bound_into_the_clone() {
    let f = Fixture::new();
    f.create("c1", false);
    configure(&f.ctx(), "c1", None, Some("renamed.example.com")).unwrap();
    let record = f.read(&format!(
        "{CONFIG_C1}/{}",
        crate::clone::config::CERTNAME_RECORD
    ));
    assert_eq!(record, "renamed.example.com\n");
    let settings = f.read("/etc/systemd/nspawn/c1.nspawn");
    assert!(
        !settings.contains(crate::clone::config::CERTNAME_RECORD),
        "{settings}"
    );
}
