//! `clone configure`: what the clone is given, and how a running clone keeps it.

use super::*;

#[test]
fn configure_writes_what_the_clone_is_given() {
    let f = Fixture::new();
    f.create("c1", false);
    let changed = configure(&f.ctx(), "c1", Some("new.example.com"), None).unwrap();
    assert!(changed.changed);
    assert_eq!(
        f.read("/var/lib/puppet-clone-army/c1-config/puppet.conf"),
        "[main]\nserver = new.example.com\ncertname = c1.load.example.com\nusecacheonfailure = false\n"
    );
    assert!(
        !configure(&f.ctx(), "c1", Some("new.example.com"), None)
            .unwrap()
            .changed
    );
    let changed = configure(&f.ctx(), "c1", None, Some("renamed.example.com")).unwrap();
    assert!(changed.changed);
    assert_eq!(
        f.read("/var/lib/puppet-clone-army/c1-config/hostname"),
        "renamed.example.com\n"
    );
    let listed = list(&f.ctx()).unwrap();
    assert_eq!(
        listed.clones[0].certname.as_deref(),
        Some("renamed.example.com")
    );
    assert_eq!(listed.clones[0].server.as_deref(), Some("new.example.com"));

    let error = configure(&f.ctx(), "nope", Some("m"), None).unwrap_err();
    assert_eq!(error.kind(), "not-found");
}

#[test]
fn configure_sets_the_server_port_alone_and_keeps_it() {
    let f = Fixture::new();
    f.create("c1", false);
    let port = |port| ConfigureRequest {
        name: "c1".into(),
        server_port: Some(port),
        ..Default::default()
    };
    assert!(
        crate::clone::configure(&f.ctx(), &port(8141))
            .unwrap()
            .changed
    );
    assert!(
        !crate::clone::configure(&f.ctx(), &port(8141))
            .unwrap()
            .changed
    );
    assert_eq!(list(&f.ctx()).unwrap().clones[0].server_port, Some(8141));
    // A new server keeps the port; a new port keeps the server.
    configure(&f.ctx(), "c1", Some("new.example.com"), None).unwrap();
    assert!(
        crate::clone::configure(&f.ctx(), &port(8140))
            .unwrap()
            .changed
    );
    let listed = list(&f.ctx()).unwrap();
    assert_eq!(listed.clones[0].server.as_deref(), Some("new.example.com"));
    assert_eq!(listed.clones[0].server_port, Some(8140));
}

/// A running clone holds its puppet.conf and hostname by their inodes (single-file
/// bind mounts): they are rewritten in place, never replaced, and nothing is written
/// through the clone's mount.
#[test]
fn configure_a_running_clone_keeps_the_bound_files_inodes() {
    use std::os::unix::fs::MetadataExt;
    let f = Fixture::new();
    f.create("c1", true);
    f.mount(&["c1"]);
    let conf = f.path("/var/lib/puppet-clone-army/c1-config/puppet.conf");
    let hostname = f.path("/var/lib/puppet-clone-army/c1-config/hostname");
    let inodes = (
        fs::metadata(&conf).unwrap().ino(),
        fs::metadata(&hostname).unwrap().ino(),
    );
    let changed = configure(
        &f.ctx(),
        "c1",
        Some("new.example.com"),
        Some("x.example.com"),
    )
    .unwrap();
    assert!(changed.changed);
    assert_eq!(
        puppet_conf_settings(&fs::read_to_string(&conf).unwrap()),
        (Some("new.example.com".into()), Some("x.example.com".into()))
    );
    assert_eq!(fs::read_to_string(&hostname).unwrap(), "x.example.com\n");
    assert_eq!(
        (
            fs::metadata(&conf).unwrap().ino(),
            fs::metadata(&hostname).unwrap().ino()
        ),
        inodes
    );
    assert!(!f.path("/var/lib/machines/c1/etc").exists());
}

/// A clone an older clone-army made runs its agent with Puppet's default
/// `usecacheonfailure = true`: a failed catalog request applies the cached catalog and
/// reads "unchanged". Its next configure, whatever it asks, holds it to the failure.
#[test]
fn an_older_clone_is_held_to_failing_on_a_failed_catalog_at_its_next_configure() {
    let f = Fixture::new();
    f.create("c1", false);
    let conf = f.path("/var/lib/puppet-clone-army/c1-config/puppet.conf");
    fs::write(
        &conf,
        "[main]\nserver = puppet.example.com\ncertname = c1.load.example.com\n",
    )
    .unwrap();
    let nothing_asked = ConfigureRequest {
        name: "c1".into(),
        ..Default::default()
    };
    assert!(
        crate::clone::configure(&f.ctx(), &nothing_asked)
            .unwrap()
            .changed
    );
    assert_eq!(
        fs::read_to_string(&conf).unwrap(),
        "[main]\nserver = puppet.example.com\ncertname = c1.load.example.com\nusecacheonfailure = false\n"
    );
    assert!(
        !crate::clone::configure(&f.ctx(), &nothing_asked)
            .unwrap()
            .changed
    );
}
