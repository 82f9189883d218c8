//! A clone made a twin of a real node: its facts, environment and extension requests in
//! what the clone is given, and the twins that are refused before anything is written.

use super::*;

const WEB01: &str = r#"{"certname": "web01.prod.example.com", "environment": "production",
    "facts": {"os": {"family": "Debian", "name": "Debian", "release": {"major": "12"}},
              "role_fact": "web", "db_password": "SECRET"},
    "trusted": {"extensions": {"pp_role": "web", "pp_preshared_key": "SECRET"}}}"#;

fn twin_request(name: &str, dir: &Path, record: &str) -> CloneRequest {
    let file = dir.join(format!("{name}.json"));
    fs::write(&file, record).unwrap();
    CloneRequest {
        twin_file: Some(file),
        ..request(name)
    }
}

#[test]
fn a_twin_takes_its_nodes_facts_environment_and_extensions_never_its_secrets() {
    let f = Fixture::new();
    let records = tempfile::tempdir().unwrap();
    let created = create(&f.ctx(), &twin_request("c1", records.path(), WEB01)).unwrap();
    assert!(created.changed);
    assert!(
        !created.challenge_password,
        "extension requests are no challenge password"
    );

    let config = "/var/lib/puppet-clone-army/c1-config";
    let facts: serde_json::Value =
        serde_json::from_str(&f.read(&format!("{config}/facts.d/clone_army_twin.json"))).unwrap();
    assert_eq!(facts["role_fact"], "web");
    assert_eq!(facts["clone_army_twin_of"], "web01.prod.example.com");
    assert!(facts.get("db_password").is_none());

    let csr = f.read(&format!("{config}/csr_attributes.yaml"));
    assert!(
        csr.ends_with("---\nextension_requests:\n  \"pp_role\": \"web\"\n"),
        "{csr}"
    );
    assert!(f.read("/etc/systemd/nspawn/c1.nspawn").contains(&format!(
        "\nBindReadOnly={config}/csr_attributes.yaml:/etc/puppet/csr_attributes.yaml\n"
    )));

    let conf = f.read(&format!("{config}/puppet.conf"));
    assert!(conf.contains("\nenvironment = production\n"), "{conf}");
    assert!(conf.contains("certname = c1.load.example.com"), "{conf}");
    for file in [&conf, &csr] {
        assert!(!file.contains("SECRET"));
    }

    // Made again as no twin: the node's facts go.
    create(&f.ctx(), &request("c1")).unwrap();
    assert!(!f
        .path(&format!("{config}/facts.d/clone_army_twin.json"))
        .exists());
}

#[test]
fn twins_that_would_be_their_node_or_of_another_family_are_refused_untouched() {
    let f = Fixture::new();
    let records = tempfile::tempdir().unwrap();
    let same = CloneRequest {
        certname: "web01.prod.example.com".into(),
        ..twin_request("c1", records.path(), WEB01)
    };
    let redhat = WEB01.replace("\"Debian\", \"name\"", "\"RedHat\", \"name\"");
    let cases = [
        (same, "never takes a real node's certname"),
        (
            twin_request("c2", records.path(), &redhat),
            "the base's is \"Debian\"",
        ),
        (twin_request("c3", records.path(), "[]"), "it holds 0 nodes"),
    ];
    f.assert_refused_untouched("twin-file", cases);
}

#[test]
fn configure_makes_a_clone_the_twin_of_another_node_keeping_its_challenge_password() {
    let f = Fixture::new();
    let records = tempfile::tempdir().unwrap();
    fs::write(records.path().join("password"), "pw\n").unwrap();
    let with_password = CloneRequest {
        secret_files: crate::clone::SecretFiles {
            root_password_hash_file: None,
            challenge_password_file: Some(records.path().join("password")),
        },
        ..twin_request("c1", records.path(), WEB01)
    };
    create(&f.ctx(), &with_password).unwrap();
    let db01 = WEB01
        .replace("web01.prod", "db01.prod")
        .replace("\"pp_role\": \"web\"", "\"pp_role\": \"db\"")
        .replace("\"production\"", "\"staging\"");
    fs::write(records.path().join("db01.json"), &db01).unwrap();
    let request = |certname: &str| crate::clone::ConfigureRequest {
        name: "c1".into(),
        certname: Some(certname.into()),
        twin_file: Some(records.path().join("db01.json")),
        ..Default::default()
    };
    let changed = crate::clone::configure(&f.ctx(), &request("c1.db01.load.example.com")).unwrap();
    assert!(changed.changed);
    assert_eq!(
        changed.clone.shape.twin_of.as_deref(),
        Some("db01.prod.example.com")
    );

    let config = "/var/lib/puppet-clone-army/c1-config";
    let csr = f.read(&format!("{config}/csr_attributes.yaml"));
    assert!(csr.contains("  1.2.840.113549.1.9.7: \"pw\"\n"), "{csr}");
    assert!(
        csr.ends_with("extension_requests:\n  \"pp_role\": \"db\"\n"),
        "{csr}"
    );
    let conf = f.read(&format!("{config}/puppet.conf"));
    assert!(
        conf.contains("\nenvironment = staging\n") && !conf.contains("production"),
        "{conf}"
    );

    // The node's own certname is refused, whether asked for or already the clone's.
    let error = crate::clone::configure(&f.ctx(), &request("db01.prod.example.com")).unwrap_err();
    assert_eq!(error.field(), Some("twin-file"));
    assert!(f
        .read(&format!("{config}/puppet.conf"))
        .contains("certname = c1.db01.load.example.com"));
}

#[test]
fn a_twin_of_another_node_under_its_old_certname_is_refused_untouched() {
    let f = Fixture::new();
    let records = tempfile::tempdir().unwrap();
    create(&f.ctx(), &twin_request("c1", records.path(), WEB01)).unwrap();
    let db01 = WEB01
        .replace("web01.prod", "db01.prod")
        .replace("\"pp_role\": \"web\"", "\"pp_role\": \"db\"");
    fs::write(records.path().join("db01.json"), &db01).unwrap();
    let config = "/var/lib/puppet-clone-army/c1-config";
    let before = f.read(&format!("{config}/csr_attributes.yaml"));

    // Its certificate holds web01's pp_role: db01's twin needs another certname.
    let keeping = crate::clone::ConfigureRequest {
        name: "c1".into(),
        twin_file: Some(records.path().join("db01.json")),
        ..Default::default()
    };
    let error = crate::clone::configure(&f.ctx(), &keeping).unwrap_err();
    assert_eq!(error.field(), Some("twin-file"));
    assert!(
        error.to_string().contains("web01.prod.example.com"),
        "{error}"
    );
    assert_eq!(f.read(&format!("{config}/csr_attributes.yaml")), before);

    // The same node again keeps its certname.
    let again = crate::clone::ConfigureRequest {
        twin_file: Some(records.path().join("c1.json")),
        ..keeping
    };
    crate::clone::configure(&f.ctx(), &again).unwrap();
}
