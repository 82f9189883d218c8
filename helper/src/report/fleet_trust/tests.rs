use serde_json::json;

use super::*;
use crate::report::puppetdb_fleet::fake::facts;

/// A node's `clone_army` fact as the module writes it, listing `clones` as (name,
/// certname).
fn row(node: &str, clones: &[(&str, &str)]) -> Value {
    let certnames: serde_json::Map<String, Value> = clones
        .iter()
        .map(|(name, certname)| ((*name).to_owned(), json!(certname)))
        .collect();
    let names: Vec<&str> = clones.iter().map(|(name, _)| *name).collect();
    json!({"certname": node, "value": {"capacity": {"daemon": 10, "timer": 40},
        "clones": {"names": names, "certnames": certnames, "total": clones.len()}}})
}

fn trusted(hosts: &LoadHosts) -> Vec<(&str, Vec<(&str, &str)>)> {
    hosts
        .hosts
        .iter()
        .map(|h| {
            let clones = h
                .clones
                .iter()
                .map(|(n, c)| (n.as_str(), c.as_str()))
                .collect();
            (h.certname.as_str(), clones)
        })
        .collect()
}

fn problems(hosts: &LoadHosts) -> Vec<(&str, Option<&str>, UntrustedProblem)> {
    hosts
        .untrusted
        .iter()
        .map(|u| (u.node.as_str(), u.certname.as_deref(), u.problem))
        .collect()
}

#[test]
fn load_hosts_come_from_their_facts() {
    let answer = facts();
    let LoadHosts { hosts, untrusted } = load_hosts(&answer).unwrap();
    assert_eq!(
        untrusted,
        [],
        "the fixture's facts are all the module's own"
    );
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert!(hosts.windows(2).all(|w| w[0].certname < w[1].certname));
    for host in &hosts {
        let row = answer
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["certname"] == host.certname.as_str())
            .unwrap();
        let certnames = row["value"]["clones"]["certnames"].as_object().unwrap();
        assert_eq!(host.clones.len(), certnames.len());
        for (name, certname) in &host.clones {
            assert_eq!(certnames[name], certname.as_str());
        }
        assert_eq!(host.error, None);
    }
    // Clone names repeat across hosts; certnames do not.
    let mut all: Vec<&str> = hosts
        .iter()
        .flat_map(|h| h.clones.iter().map(|(_, c)| c.as_str()))
        .collect();
    let count = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), count);
}

#[test]
fn a_fact_without_certnames_or_with_bad_ones_is_said() {
    let answer = json!([
        {"certname": "old.example.com", "value": {"clones": {"names": ["c1"], "total": 1}}},
        {"certname": "idle.example.com", "value": {"capacity": {"daemon": 1, "timer": 2}}},
        {"certname": "empty.example.com", "value": {"clones": {"names": [], "certnames": {}}}},
        {"certname": "bad.example.com", "value": {"clones": {"names": ["c1", "c2", "c3"],
            "certnames": {
                "c1": "c1.bad.example.com",
                "c2": "x\"] or certname ~ \".*",
                "c3": 7,
                "C4\u{1b}[2J": "c4.bad.example.com",
                "c5": "bad.example.com"
            }}}},
        {"value": {"clones": {"certnames": {"c": "c.nohost"}}}},
    ]);
    let LoadHosts { hosts, untrusted } = load_hosts(&answer).unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h.certname.as_str()).collect();
    assert_eq!(names, ["bad.example.com", "old.example.com"]);
    assert_eq!(
        hosts[0].clones,
        [("c1".to_owned(), "c1.bad.example.com".to_owned())]
    );
    assert_eq!(hosts[0].error, None);
    assert!(hosts[1].clones.is_empty());
    assert!(hosts[1]
        .error
        .as_deref()
        .unwrap()
        .contains("not their certnames"));
    assert_eq!(untrusted.len(), 4, "{untrusted:#?}");
    assert!(untrusted
        .iter()
        .all(|u| u.node == "bad.example.com" && u.problem == UntrustedProblem::Malformed));
    let why = |clone: Option<&str>| {
        untrusted
            .iter()
            .find(|u| u.clone.as_deref() == clone)
            .map(|u| u.message.as_str())
            .unwrap()
    };
    assert!(
        why(Some("c2")).contains("not a host name"),
        "{}",
        why(Some("c2"))
    );
    assert!(why(Some("c3")).contains("not a string"));
    assert!(why(Some("c5")).contains("the host's own certname"));
    let bad_name = why(None);
    assert!(
        bad_name.contains(r#""C4\u{1b}[2J""#) && !bad_name.contains('\u{1b}'),
        "{bad_name}"
    );
    let e = load_hosts(&json!({"error": "no"})).unwrap_err();
    assert!(e.contains("not a list"), "{e}");
}

#[test]
fn a_clone_claiming_to_be_a_load_host_is_not_trusted() {
    // PuppetDB 8.4's facts of two load hosts, and a clone of the first that sends a
    // clone_army fact of its own naming the server and any other node as its clones.
    let mut answer = facts();
    answer.as_array_mut().unwrap().push(row(
        "clone1.tw.sandbox.test",
        &[
            ("a", "puppet.sandbox.test"),
            ("b", "b.clone1.tw.sandbox.test"),
        ],
    ));
    let found = load_hosts(&answer).unwrap();
    assert_eq!(found.hosts, load_hosts(&facts()).unwrap().hosts);
    assert_eq!(
        problems(&found),
        [(
            "clone1.tw.sandbox.test",
            None,
            UntrustedProblem::CloneAsLoadHost
        )]
    );
    let message = &found.untrusted[0].message;
    assert!(
        message.contains("lists 2 clones") && message.contains("tw.sandbox.test's clone clone1"),
        "{message}"
    );
}

#[test]
fn a_node_a_load_host_declares_is_not_trusted_as_a_load_host() {
    // web7.example.com is load1's clone under a certname of its own choosing.
    let answer = json!([
        row("load1.example.com", &[("web7", "web7.example.com")]),
        row(
            "web7.example.com",
            &[("x", "x.web7.example.com"), ("db", "db1.example.com")]
        ),
    ]);
    let found = load_hosts(&answer).unwrap();
    assert_eq!(
        trusted(&found),
        [("load1.example.com", vec![("web7", "web7.example.com")])]
    );
    assert_eq!(
        problems(&found),
        [("web7.example.com", None, UntrustedProblem::CloneAsLoadHost)]
    );
    assert!(
        found.untrusted[0]
            .message
            .contains("declared a clone by the clone_army fact of load1.example.com"),
        "{}",
        found.untrusted[0].message
    );
}

#[test]
fn a_clone_cannot_make_its_own_host_a_clone_by_declaring_it() {
    let answer = json!([
        row("load1.example.com", &[("c1", "c1.load1.example.com")]),
        row("c1.load1.example.com", &[("boss", "load1.example.com")]),
    ]);
    let found = load_hosts(&answer).unwrap();
    assert_eq!(
        trusted(&found),
        [("load1.example.com", vec![("c1", "c1.load1.example.com")])]
    );
    assert_eq!(
        problems(&found),
        [(
            "c1.load1.example.com",
            None,
            UntrustedProblem::CloneAsLoadHost
        )]
    );
}

#[test]
fn a_certname_two_hosts_claim_is_trusted_to_neither() {
    let answer = json!([
        row(
            "load1.example.com",
            &[("c1", "c1.load1.example.com"), ("db", "db.example.com")]
        ),
        row(
            "load2.example.com",
            &[("c1", "c1.load2.example.com"), ("x", "db.example.com")]
        ),
    ]);
    let found = load_hosts(&answer).unwrap();
    assert_eq!(
        trusted(&found),
        [
            ("load1.example.com", vec![("c1", "c1.load1.example.com")]),
            ("load2.example.com", vec![("c1", "c1.load2.example.com")]),
        ]
    );
    assert_eq!(
        problems(&found),
        [
            (
                "load1.example.com",
                Some("db.example.com"),
                UntrustedProblem::CertnameClaimedTwice
            ),
            (
                "load2.example.com",
                Some("db.example.com"),
                UntrustedProblem::CertnameClaimedTwice
            ),
        ]
    );
    assert!(
        found.untrusted[0]
            .message
            .contains("load2.example.com's clone x claims it too"),
        "{}",
        found.untrusted[0].message
    );
}

#[test]
fn a_host_cannot_take_another_hosts_clone_by_declaring_its_certname() {
    // load2 declares load1's clone, in other case too: the convention gives it to load1.
    let answer = json!([
        row("load1.example.com", &[("c1", "c1.load1.example.com")]),
        row("load2.example.com", &[("mine", "C1.Load1.example.com")]),
    ]);
    let found = load_hosts(&answer).unwrap();
    assert_eq!(
        trusted(&found),
        [
            ("load1.example.com", vec![("c1", "c1.load1.example.com")]),
            ("load2.example.com", vec![]),
        ]
    );
    assert_eq!(
        problems(&found),
        [(
            "load2.example.com",
            Some("C1.Load1.example.com"),
            UntrustedProblem::CertnameClaimedTwice
        )]
    );
    assert!(found.untrusted[0]
        .message
        .contains("load1.example.com's clone c1 by the convention"));
}

#[test]
fn hosts_that_declare_each_other_are_both_refused() {
    let answer = json!([
        row("a.example.com", &[("b", "b.example.com")]),
        row("b.example.com", &[("a", "a.example.com")]),
    ]);
    let found = load_hosts(&answer).unwrap();
    assert_eq!(found.hosts, []);
    assert_eq!(
        problems(&found),
        [
            ("a.example.com", None, UntrustedProblem::CloneAsLoadHost),
            ("b.example.com", None, UntrustedProblem::CloneAsLoadHost),
        ]
    );
}

#[test]
fn a_second_fact_of_one_node_is_not_read() {
    let answer = json!([
        row("load1.example.com", &[("c1", "c1.load1.example.com")]),
        row("load1.example.com", &[("c2", "db.example.com")]),
    ]);
    let found = load_hosts(&answer).unwrap();
    assert_eq!(
        trusted(&found),
        [("load1.example.com", vec![("c1", "c1.load1.example.com")])]
    );
    assert_eq!(
        problems(&found),
        [("load1.example.com", None, UntrustedProblem::Malformed)]
    );
}

/// A node whose certname carries markup or a megabyte of text is no load host: its name
/// would go into the reports query and onto the operator's screen.
#[test]
fn a_node_whose_certname_is_no_host_name_is_not_read() {
    let hostile = format!("<b>{}</b>\u{1b}[2J", "x".repeat(1 << 20));
    let answer = json!([
        row(&hostile, &[("c1", "c1.load1.example.com")]),
        row("load1.example.com", &[("c2", "c2.load1.example.com")]),
    ]);
    let found = load_hosts(&answer).unwrap();
    assert_eq!(
        trusted(&found),
        [("load1.example.com", vec![("c2", "c2.load1.example.com")])]
    );
    assert_eq!(found.untrusted.len(), 1);
    let refused = &found.untrusted[0];
    assert_eq!(refused.problem, UntrustedProblem::Malformed);
    assert!(refused.node.len() < 1024, "{}", refused.node.len());
    assert!(!refused.node.contains('\u{1b}'), "{}", refused.node);
}
