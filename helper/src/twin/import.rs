//! `twin import`: the real nodes' records twins are made from, taken into the state
//! directory (`.twins/`, root's alone: an estate's facts are its inventory), one file a
//! node named by its certname, so that a fleet's twins are made from a set that does not
//! change under them, and the class can name each clone's node.
//!
//! The set is replaced whole: the new one is written beside the old and renamed over it,
//! so a reader sees the old set or the new one. Each file holds what a twin takes, in
//! PuppetDB's inventory form, so that reading it back gives the same identity.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::list::{answer, entry};
use super::read::{each_in_dir, Read};
use super::Identity;
use crate::context::Context;
use crate::protocol::answers::{ImportSource, TwinEntry, TwinList};
use crate::protocol::error::{Error, Result};
use crate::sys::fsutil::{create_dir_all, read_optional, remove_dir_all, write_atomic};

/// How long the PuppetDB query of `twin import --puppetdb` may take in all: an
/// inventory of thousands of nodes is tens of megabytes.
/// In the set's directory: what it was imported from, as JSON. A hidden file, so no
/// reader takes it for a node's record.
const SOURCE_FILE: &str = ".source";

/// The most of [`SOURCE_FILE`] read back: a path and a query.
const MAX_SOURCE_BYTES: usize = 1 << 20;

pub const QUERY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// Takes every node of `dir` (as `twin list` reads it) into the state directory,
/// replacing the set there; what was taken, as `twin list` answers.
pub fn import(ctx: &Context, dir: &Path) -> Result<TwinList> {
    let _lock = ctx.lock()?;
    let source = ImportSource {
        facts_dir: Some(dir.display().to_string()),
        puppetdb: None,
        query: None,
    };
    let mut set = NewSet::begin(ctx, "facts-dir", source)?;
    let walked = each_in_dir(dir, |read| set.take(read));
    set.finish(walked)
}

/// Takes the nodes of a PuppetDB query's answer (an array of inventory or factset
/// records) into the state directory, as [`import`] does a directory's.
pub fn import_answer(
    ctx: &Context,
    answer: &Value,
    puppetdb: &str,
    query: &str,
) -> Result<TwinList> {
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
    let _lock = ctx.lock()?;
    let source = ImportSource {
        facts_dir: None,
        puppetdb: Some(puppetdb.to_owned()),
        query: Some(query.to_owned()),
    };
    let mut set = NewSet::begin(ctx, "query", source)?;
    let walked = identities
        .into_iter()
        .enumerate()
        .try_for_each(|(index, identity)| {
            set.take(Read {
                source: format!("puppetdb#{index}"),
                identity,
            })
        });
    set.finish(walked)
}

/// The set being imported: written node by node beside the imported one, put in its
/// place whole when every node was taken, removed otherwise.
struct NewSet {
    twins: PathBuf,
    staging: PathBuf,
    field: &'static str,
    seen: BTreeSet<String>,
    entries: Vec<TwinEntry>,
    source: ImportSource,
}

impl NewSet {
    /// Under the caller's lock: the staging directory, empty.
    fn begin(ctx: &Context, field: &'static str, source: ImportSource) -> Result<NewSet> {
        let twins = ctx.layout.fs(ctx.layout.twins_dir());
        let staging = twins.with_file_name(".twins.new");
        remove_dir_all(&staging)?;
        create_dir_all(&staging, 0o700)?;
        Ok(NewSet {
            twins,
            staging,
            field,
            seen: BTreeSet::new(),
            entries: Vec::new(),
            source,
        })
    }

    /// One node, checked and written.
    fn take(&mut self, read: Read) -> Result<()> {
        let refused = |reason: String| Error::InvalidArgument {
            field: self.field,
            value: read.source.clone(),
            reason,
        };
        let node = &read.identity.node;
        if !self.seen.insert(node.to_ascii_lowercase()) {
            return Err(refused(format!(
                "a second record of node {node:?}; allowed: one record a node"
            )));
        }
        let text = format!("{}\n", record(&read.identity));
        write_atomic(
            &self.staging.join(format!("{node}.json")),
            text.as_bytes(),
            0o600,
        )?;
        self.entries.push(entry(read));
        Ok(())
    }

    /// The set in place of the imported one when `walked` went well and gave a node;
    /// otherwise the staging directory goes and the imported set stays.
    fn finish(self, walked: Result<()>) -> Result<TwinList> {
        let checked = walked.and_then(|()| {
            if self.entries.is_empty() {
                return Err(Error::InvalidArgument {
                    field: self.field,
                    value: String::new(),
                    reason: "it gave no node; allowed: at least one node's record".to_owned(),
                });
            }
            Ok(())
        });
        let recorded = checked.and_then(|()| {
            let text = serde_json::to_string(&self.source)
                .map_err(|e| Error::Internal(format!("the import's source as JSON: {e}")))?;
            write_atomic(&self.staging.join(SOURCE_FILE), text.as_bytes(), 0o600)
        });
        if let Err(e) = recorded {
            remove_dir_all(&self.staging)?;
            return Err(e);
        }
        let old = self.twins.with_file_name(".twins.old");
        remove_dir_all(&old)?;
        if self.twins.exists() {
            std::fs::rename(&self.twins, &old)
                .map_err(|e| Error::io("move aside", &self.twins, e))?;
        }
        std::fs::rename(&self.staging, &self.twins)
            .map_err(|e| Error::io("put in place", &self.staging, e))?;
        remove_dir_all(&old)?;
        Ok(TwinList {
            imported_from: Some(self.source),
            ..answer(self.entries)
        })
    }
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
pub fn imported(ctx: &Context) -> Result<TwinList> {
    let twins = ctx.layout.fs(ctx.layout.twins_dir());
    if !twins.is_dir() {
        return Ok(answer(Vec::new()));
    }
    Ok(TwinList {
        imported_from: imported_from(&twins)?,
        ..super::list::list(&twins)?
    })
}

/// What the set in `twins` (root's alone, as the helper made it) was imported from;
/// none for a set whose record is missing or not one this helper writes.
fn imported_from(twins: &Path) -> Result<Option<ImportSource>> {
    let text = read_optional(&twins.join(SOURCE_FILE))?;
    Ok(text
        .filter(|text| text.len() <= MAX_SOURCE_BYTES)
        .and_then(|text| serde_json::from_str(&text).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::paths::Layout;
    use crate::systemd::RecordingSystemd;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use crate::twin::read::tests::dir_with as records;

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
        assert_eq!(listed.summary.nodes, 2);
        let from = listed.imported_from.unwrap();
        assert_eq!(
            from.facts_dir.as_deref(),
            Some(source.path().to_str().unwrap())
        );
        assert_eq!(answer.imported_from, Some(from));

        // A new import replaces the set whole.
        let next = records(&[("one.json", r#"{"clientcert": "app01.example.com"}"#)]);
        import(&ctx, next.path()).unwrap();
        let mut names: Vec<String> = fs::read_dir(&twins)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [".source", "app01.example.com.json"]);
        // A set whose record of its source is gone reads as one of no known source.
        fs::remove_file(twins.join(".source")).unwrap();
        assert_eq!(imported(&ctx).unwrap().imported_from, None);
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
            ("2.json", r#"{"clientcert": "web.example.com"}"#),
        ]);
        let error = import(&ctx, twice.path()).unwrap_err();
        assert_eq!(error.field(), Some("facts-dir"));
        assert!(
            error.to_string().contains("a second record of node"),
            "{error}"
        );
        assert_eq!(imported(&ctx).unwrap().identities[0].node, "a.example.com");
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
        let list = import_answer(&ctx, &answer, "https://db:8081", "inventory[] {}").unwrap();
        assert_eq!(list.identities[0].source, "puppetdb#0");
        let source = ImportSource {
            facts_dir: None,
            puppetdb: Some("https://db:8081".into()),
            query: Some("inventory[] {}".into()),
        };
        assert_eq!(list.imported_from.as_ref(), Some(&source));
        assert_eq!(imported(&ctx).unwrap().imported_from, Some(source));
        assert_eq!(
            imported(&ctx).unwrap().identities[0].extensions["pp_role"],
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
            let error = import_answer(&ctx, &bad, "db", "q").unwrap_err();
            assert_eq!(error.field(), Some("query"), "{error}");
            assert!(error.to_string().contains(expected), "{error}");
        }
        assert_eq!(imported(&ctx).unwrap().summary.nodes, 1);
    }

    #[test]
    fn nothing_is_imported_before_an_import() {
        let root = tempfile::tempdir().unwrap();
        let systemd = RecordingSystemd::default();
        let ctx = Context::new(Layout::under(root.path()), &systemd);
        assert_eq!(imported(&ctx).unwrap().summary.nodes, 0);
    }
}
