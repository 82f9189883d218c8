//! A clone that is no twin, given extension requests of its own: the CA copies them into
//! its certificate, so a fleet is classified by `$trusted['extensions']` as the estate is.

use super::*;
use crate::clone::config::CloneConfig;

fn with_extensions(name: &str, flags: &[&str]) -> CloneRequest {
    CloneRequest {
        extensions: flags.iter().map(|f| (*f).to_owned()).collect(),
        ..request(name)
    }
}

#[test]
fn extension_flags_become_the_clones_extension_requests_bound_into_it() {
    let f = Fixture::new();
    let created = create(
        &f.ctx(),
        &with_extensions(
            "c1",
            &["pp_role=web", "1.3.6.1.4.1.34380.1.1.12=production"],
        ),
    )
    .unwrap();
    assert!(created.changed);
    assert!(!created.challenge_password);
    let config = "/var/lib/puppet-clone-army/c1-config";
    let csr = f.read(&format!("{config}/csr_attributes.yaml"));
    assert!(
        csr.ends_with(
            "---\nextension_requests:\n  \"pp_environment\": \"production\"\n  \"pp_role\": \"web\"\n"
        ),
        "{csr}"
    );
    assert!(f.read("/etc/systemd/nspawn/c1.nspawn").contains(&format!(
        "\nBindReadOnly={config}/csr_attributes.yaml:/etc/puppet/csr_attributes.yaml\n"
    )));
    assert!(!f.path(&format!("{config}/twin.json")).exists(), "no twin");
}

#[test]
fn bad_extension_flags_and_flags_beside_a_twin_file_are_refused_untouched() {
    let f = Fixture::new();
    let records = tempfile::tempdir().unwrap();
    let twin_file = records.path().join("web01.json");
    fs::write(
        &twin_file,
        r#"{"certname": "web01.prod.example.com",
            "facts": {"os": {"family": "Debian", "name": "Debian", "release": {"major": "12"}}},
            "trusted": {"extensions": {"pp_role": "web"}}}"#,
    )
    .unwrap();
    let cases = [
        (
            with_extensions("c1", &["pp_auth_role=compiler"]),
            "authorization",
        ),
        (with_extensions("c2", &["pp_role"]), "NAME=VALUE"),
        (
            CloneRequest {
                twin_file: Some(twin_file),
                ..with_extensions("c3", &["pp_role=db"])
            },
            "not both",
        ),
    ];
    f.assert_refused_untouched("extension", cases);
}

#[test]
fn a_clones_own_extensions_are_read_back_from_its_certificate_request() {
    let f = Fixture::new();
    create(
        &f.ctx(),
        &with_extensions("c1", &["pp_role=web \"front\"", "pp_zone=eu-1"]),
    )
    .unwrap();
    create(&f.ctx(), &request("c2")).unwrap();
    let config = CloneConfig::of(&f.ctx().layout, "c1");
    let requests = crate::clone::secrets::extension_requests(&config).unwrap();
    assert_eq!(requests["pp_role"], "web \"front\"");
    assert_eq!(requests["pp_zone"], "eu-1");
    let plain = CloneConfig::of(&f.ctx().layout, "c2");
    assert!(crate::clone::secrets::extension_requests(&plain)
        .unwrap()
        .is_empty());
}

#[test]
fn lines_the_helper_did_not_write_are_no_extension_requests() {
    let f = Fixture::new();
    create(&f.ctx(), &request("c1")).unwrap();
    let config = "/var/lib/puppet-clone-army/c1-config";
    fs::write(
        f.path(&format!("{config}/csr_attributes.yaml")),
        "---\nextension_requests:\n  \"pp_role\": \"web\"\n  pp_zone: bare\n  \"pp_preshared_key\": \"s\"\n  \"pp_owner\": \"a\"b\"\n  \"pp_region\": \"eu\"\nother:\n  \"pp_cluster\": \"c\"\n",
    )
    .unwrap();
    let requests =
        crate::clone::secrets::extension_requests(&CloneConfig::of(&f.ctx().layout, "c1")).unwrap();
    assert_eq!(
        requests,
        std::collections::BTreeMap::from([
            ("pp_region".to_owned(), "eu".to_owned()),
            ("pp_role".to_owned(), "web".to_owned()),
        ])
    );
}
