//! `twin import`: the real nodes' records twins are made from, taken into the state
//! directory (`.twins/`, root's alone: an estate's facts are its inventory), one file a
//! node named by its certname, so that a fleet's twins are made from a set that does not
//! change under them, and the class can name each clone's node.
//!
//! The set is replaced whole: the new one is written beside the old and renamed over it,
//! so a reader sees the old set or the new one. Each file holds what a twin takes, in
//! PuppetDB's inventory form, so that reading it back gives the same identity.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{json, Value};

use super::read::{read_dir, Read};
use super::Identity;
use crate::context::Context;
use crate::protocol::answers::TwinList;
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{create_dir_all, remove_dir_all, write_atomic};

/// How long the PuppetDB query of `twin import --puppetdb` may take in all: an
/// inventory of thousands of nodes is tens of megabytes.
pub const QUERY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// The longest certname a node's file can be named by (`<certname>.json` within a file
/// name's 255 bytes).
pub const MAX_NODE_NAME: usize = 250;

/// Takes every node of `dir` (as `twin list` reads it) into the state directory,
/// replacing the set there; what was taken, as `twin list` answers.
pub fn import(ctx: &Context, dir: &Path) -> Result<TwinList> {
    import_reads(ctx, read_dir(dir)?, "facts-dir")
}

/// Takes the nodes of a PuppetDB query's answer (an array of inventory or factset
/// records) into the state directory, as [`import`] does a directory's.
pub fn import_answer(ctx: &Context, answer: &Value, query: &str) -> Result<TwinList> {
    let refused = |reason: String| Error::InvalidArgument {
        field: "query",
        value: query.to_owned(),
        reason,
    };
    if !answer.is_array() {
        return Err(refused(
            "its answer is not an array of records; allowed: an inventory or factsets query"
                .to_owned(),
        ));
    }
    let identities = super::document::identities(answer).map_err(refused)?;
    let reads = identities
        .into_iter()
        .enumerate()
        .map(|(index, identity)| Read {
            source: format!("puppetdb#{index}"),
            identity,
        })
        .collect();
    import_reads(ctx, reads, "query")
}

/// The nodes read, each checked, written as the imported set.
fn import_reads(ctx: &Context, reads: Vec<Read>, field: &'static str) -> Result<TwinList> {
    if reads.is_empty() {
        return Err(Error::InvalidArgument {
            field,
            value: String::new(),
            reason: "it gave no node; allowed: at least one node's record".to_owned(),
        });
    }
    let mut seen = BTreeSet::new();
    for read in &reads {
        let refused = |reason: String| Error::InvalidArgument {
            field,
            value: read.source.clone(),
            reason,
        };
        if read.identity.node.len() > MAX_NODE_NAME {
            return Err(refused(format!(
                "its node's certname is longer than {MAX_NODE_NAME} characters; allowed: at most that"
            )));
        }
        if !seen.insert(read.identity.node.to_ascii_lowercase()) {
            return Err(refused(format!(
                "a second record of node {:?}; allowed: one record a node",
                read.identity.node
            )));
        }
    }
    let _lock = ctx.lock()?;
    let layout = &ctx.layout;
    let twins = layout.fs(layout.twins_dir());
    let staging = twins.with_file_name(".twins.new");
    let old = twins.with_file_name(".twins.old");
    remove_dir_all(&staging)?;
    remove_dir_all(&old)?;
    create_dir_all(&staging, 0o700)?;
    for read in &reads {
        let text = format!("{}\n", record(&read.identity));
        write_atomic(
            &staging.join(format!("{}.json", read.identity.node)),
            text.as_bytes(),
            0o600,
        )?;
    }
    if twins.exists() {
        std::fs::rename(&twins, &old).map_err(|e| Error::io("move aside", &twins, e))?;
    }
    std::fs::rename(&staging, &twins).map_err(|e| Error::io("put in place", &staging, e))?;
    remove_dir_all(&old)?;
    Ok(super::list::answer(reads))
}

/// What a twin takes of a node, as a PuppetDB inventory record.
pub fn record(identity: &Identity) -> Value {
    json!({
        "certname": identity.node,
        "environment": identity.environment,
        "facts": identity.facts,
        "trusted": { "extensions": identity.extensions },
    })
}

/// The imported nodes, for `twin list` without a directory: none before an import.
pub fn imported(ctx: &Context) -> Result<Vec<Read>> {
    let twins = ctx.layout.fs(ctx.layout.twins_dir());
    if !twins.is_dir() {
        return Ok(Vec::new());
    }
    read_dir(&twins)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::paths::Layout;
    use crate::systemd::RecordingSystemd;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn records(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn the_nodes_are_taken_one_file_each_root_only_and_read_back_the_same() {
        let root = tempfile::tempdir().unwrap();
        let systemd = RecordingSystemd::default();
        let ctx = Context::new(Layout::under(root.path()), &systemd);
        let source = records(&[(
            "estate.json",
            r#"[{"certname": "web01.example.com", "environment": "production",
                 "facts": {"os": {"family": "Debian"}, "api_token": "x"},
                 "trusted": {"extensions": {"pp_role": "web"}}},
                {"certname": "db01.example.com", "facts": {"os": {"family": "RedHat"}}}]"#,
        )]);
        let answer = import(&ctx, source.path()).unwrap();
        assert_eq!(answer.summary.nodes, 2);
        assert_eq!(answer.identities[0].dropped[0].what, "api_token");

        let twins = root.path().join("var/lib/puppet-clone-army/.twins");
        assert_eq!(
            fs::metadata(&twins).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let web = twins.join("web01.example.com.json");
        assert_eq!(
            fs::metadata(&web).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let again = super::super::read::read_one("twin-file", &web).unwrap();
        assert_eq!(again.extensions["pp_role"], "web");
        assert_eq!(again.environment.as_deref(), Some("production"));
        assert!(again.dropped.is_empty(), "{:?}", again.dropped);
        let listed = imported(&ctx).unwrap();
        assert_eq!(listed.len(), 2);

        // A new import replaces the set whole.
        let next = records(&[("one.json", r#"{"clientcert": "app01.example.com"}"#)]);
        import(&ctx, next.path()).unwrap();
        let names: Vec<String> = fs::read_dir(&twins)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["app01.example.com.json"]);
    }

    #[test]
    fn two_records_of_one_node_are_refused_and_the_imported_set_is_kept() {
        let root = tempfile::tempdir().unwrap();
        let systemd = RecordingSystemd::default();
        let ctx = Context::new(Layout::under(root.path()), &systemd);
        import(
            &ctx,
            records(&[("a.json", r#"{"clientcert": "a.example.com"}"#)]).path(),
        )
        .unwrap();
        let twice = records(&[
            ("1.json", r#"{"clientcert": "web.example.com"}"#),
            ("2.json", r#"{"clientcert": "WEB.example.com"}"#),
        ]);
        let error = import(&ctx, twice.path()).unwrap_err();
        assert_eq!(error.field(), Some("facts-dir"));
        assert!(
            error.to_string().contains("a second record of node"),
            "{error}"
        );
        assert_eq!(imported(&ctx).unwrap()[0].identity.node, "a.example.com");
    }

    #[test]
    fn a_puppetdb_answer_is_imported_as_a_directory_is_and_anything_else_refused() {
        let root = tempfile::tempdir().unwrap();
        let systemd = RecordingSystemd::default();
        let ctx = Context::new(Layout::under(root.path()), &systemd);
        let answer = serde_json::json!([
            {"certname": "web01.example.com", "environment": "production",
             "facts": {"os": {"family": "Debian"}}, "trusted": {"extensions": {"pp_role": "web"}}},
        ]);
        let list = import_answer(&ctx, &answer, "inventory[] {}").unwrap();
        assert_eq!(list.identities[0].source, "puppetdb#0");
        assert_eq!(
            imported(&ctx).unwrap()[0].identity.extensions["pp_role"],
            "web"
        );
        for (bad, expected) in [
            (serde_json::json!({"error": "x"}), "not an array"),
            (serde_json::json!([]), "gave no node"),
            (
                serde_json::json!([{"certname": "x.example.com"}]),
                "needs facts",
            ),
        ] {
            let error = import_answer(&ctx, &bad, "q").unwrap_err();
            assert_eq!(error.field(), Some("query"), "{error}");
            assert!(error.to_string().contains(expected), "{error}");
        }
        assert_eq!(imported(&ctx).unwrap().len(), 1);
    }

    #[test]
    fn nothing_is_imported_before_an_import() {
        let root = tempfile::tempdir().unwrap();
        let systemd = RecordingSystemd::default();
        let ctx = Context::new(Layout::under(root.path()), &systemd);
        assert!(imported(&ctx).unwrap().is_empty());
    }
}
