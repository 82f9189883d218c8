//! What the report made of each clone's agent files, kept between the reports of one
//! process: the recorder takes one every few seconds, and in that time few of a large
//! fleet's agents have written a new summary. A file still the same (its
//! [`FileIdentity`], taken through the confined descriptor like the read itself) is not
//! read and parsed again; any other is, with every check the confined reader makes.
//!
//! How often a file changes and how large it is (up to the read caps) is the clone's
//! choice: one that rewrites a 32 MiB report every sample would have every sample read
//! and parse it again, and a fleet of them would have a sample take minutes. So a cache
//! for samples reads at most [`PARSE_BUDGET_BYTES`] of changed files a sample, over the
//! whole fleet, in turns:
//!
//! - the budget is what one clone's files may hold (a summary and a report at their
//!   caps): the clone whose turn it is is always read whole, and a whole fleet cannot make
//!   a sample parse more than one clone could on its own;
//! - an honest fleet's changes fit many times over: agents write a summary (about 1 KiB)
//!   and a report (some KiB; a few MiB for catalogs of thousands of resources) once a
//!   run, and runs are a minute or more apart;
//! - a sample begins with the clone first postponed in the sample before, then goes on in
//!   name order, around: each postponed clone comes first within as many samples as
//!   clones were postponed before it, and a small file that fits in what is left is read
//!   in the same sample;
//! - a clone not read keeps what was made of its version before; one that has none says
//!   it is not read yet.
//!
//! One report alone (the `report` verb) reads each file once, so it has no budget.

use std::collections::BTreeMap;

use crate::protocol::error::Error;
use crate::sys::confined::{CloneTree, FileIdentity, Fresh};

use super::last_report::RunFindings;
use super::summary::LastRun;
use super::{MAX_REPORT_BYTES, MAX_SUMMARY_BYTES};

/// The most bytes of the fleet's changed agent files a sample reads and parses.
pub const PARSE_BUDGET_BYTES: u64 = MAX_SUMMARY_BYTES + MAX_REPORT_BYTES;

/// The file found (its path in the tree) and what was made of it, or why it could not be
/// read; `None` when it is in none of the places looked at.
pub type Found<T> = Option<(String, Result<T, Error>)>;

/// One file as read last: where it was (one of the places the agent may keep it), which
/// version, and what the report made of it.
#[derive(Debug, Clone)]
struct Known<T> {
    relative: String,
    identity: FileIdentity,
    value: T,
}

/// What was made of a clone's `last_run_report.yaml`.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportReading {
    /// What it says of its run.
    Found(RunFindings),
    /// It is not a report Puppet wrote: why.
    Garbage(String),
    /// It changed, and its turn to be read has not come yet (see the module's budget).
    NotReadYet,
}

/// Per clone: its last run from the summary, and what its report says of its run.
#[derive(Debug)]
pub struct RunCache {
    summaries: BTreeMap<String, Known<Result<LastRun, String>>>,
    reports: BTreeMap<String, Known<ReportReading>>,
    /// `None`: one report, which reads every file once.
    budget: Option<ParseBudget>,
}

/// A cache for samples, with [`PARSE_BUDGET_BYTES`] a sample.
impl Default for RunCache {
    fn default() -> Self {
        RunCache::with_parse_budget(PARSE_BUDGET_BYTES)
    }
}

/// What is left of a sample's budget, and whose turn comes first.
#[derive(Debug)]
struct ParseBudget {
    per_sample: u64,
    left: u64,
    /// The clone this sample reads first: the first one postponed in the sample before.
    first: Option<String>,
    first_postponed: Option<String>,
}

impl ParseBudget {
    /// How much of a changed file of `size` bytes the clone may have read: all of it when
    /// it fits in what is left, else nothing (and the clone comes first next time, unless
    /// another was postponed before it).
    fn afford(&mut self, clone: &str, size: u64) -> Option<u64> {
        if size <= self.left {
            self.left -= size;
            return Some(size);
        }
        self.first_postponed.get_or_insert_with(|| clone.to_owned());
        None
    }
}

/// What a clone with a changed file and nothing read before has in its place.
pub fn not_read_yet() -> String {
    format!(
        "changed, not read yet: the fleet's agent files changed by more than a sample reads \
         ({} MiB); this clone's turn comes in a later sample",
        PARSE_BUDGET_BYTES >> 20
    )
}

impl RunCache {
    /// A cache for one report: every changed file is read.
    pub fn for_one_report() -> Self {
        RunCache {
            summaries: BTreeMap::new(),
            reports: BTreeMap::new(),
            budget: None,
        }
    }

    /// A cache for samples that reads at most `bytes` of changed files a sample.
    pub fn with_parse_budget(bytes: u64) -> Self {
        RunCache {
            budget: Some(ParseBudget {
                per_sample: bytes,
                left: bytes,
                first: None,
                first_postponed: None,
            }),
            ..RunCache::for_one_report()
        }
    }

    /// Begins a sample: the budget is whole again, and the clone first postponed in the
    /// sample before reads first.
    pub fn begin_sample(&mut self) {
        if let Some(budget) = &mut self.budget {
            budget.left = budget.per_sample;
            budget.first = budget.first_postponed.take();
        }
    }

    /// The order in which this sample reads the clones `names` (their indices): from the
    /// one whose turn it is, around.
    pub fn reading_order(&self, names: &[&str]) -> Vec<usize> {
        let first = self
            .budget
            .as_ref()
            .and_then(|b| b.first.as_deref())
            .and_then(|first| names.iter().position(|n| *n == first))
            .unwrap_or(0);
        (first..names.len()).chain(0..first).collect()
    }

    /// The summary at the first of `candidates` there is: its path in the tree, and what
    /// `parse` made of it (now or when this version was read); `None` when there is none.
    pub fn summary(
        &mut self,
        tree: &CloneTree,
        clone: &str,
        candidates: impl IntoIterator<Item = String>,
        limit: u64,
        parse: impl FnOnce(&str) -> Result<LastRun, String>,
    ) -> Found<Result<LastRun, String>> {
        let unread = || Err(not_read_yet());
        let known = &mut self.summaries;
        read_cached(
            known,
            &mut self.budget,
            tree,
            clone,
            candidates,
            limit,
            parse,
            unread,
        )
    }

    /// As [`RunCache::summary`], for the agent's full report of its last run.
    pub fn run_report(
        &mut self,
        tree: &CloneTree,
        clone: &str,
        candidates: impl IntoIterator<Item = String>,
        limit: u64,
        explain: impl FnOnce(&str) -> ReportReading,
    ) -> Found<ReportReading> {
        let unread = || ReportReading::NotReadYet;
        let known = &mut self.reports;
        read_cached(
            known,
            &mut self.budget,
            tree,
            clone,
            candidates,
            limit,
            explain,
            unread,
        )
    }

    /// Forgets the clones not in `names` (removed since).
    pub fn keep_only(&mut self, names: &[&str]) {
        self.summaries.retain(|c, _| names.contains(&c.as_str()));
        self.reports.retain(|c, _| names.contains(&c.as_str()));
    }

    /// The bytes of text kept for every clone: what the cache costs for the recorder's
    /// whole life.
    #[cfg(test)]
    pub fn kept_text_bytes(&self) -> usize {
        let text = |t: &Option<String>| t.as_ref().map_or(0, String::len);
        let summaries = self.summaries.values().map(|k| {
            k.relative.len()
                + match &k.value {
                    Ok(run) => text(&run.puppet_version) + text(&run.config_version),
                    Err(e) => e.len(),
                }
        });
        let reports = self.reports.values().map(|k| {
            k.relative.len()
                + match &k.value {
                    ReportReading::Found(found) => found.kept_bytes(),
                    ReportReading::Garbage(e) => e.len(),
                    ReportReading::NotReadYet => 0,
                }
        });
        summaries.chain(reports).sum()
    }
}

#[allow(clippy::too_many_arguments)]
fn read_cached<T: Clone>(
    known: &mut BTreeMap<String, Known<T>>,
    budget: &mut Option<ParseBudget>,
    tree: &CloneTree,
    clone: &str,
    candidates: impl IntoIterator<Item = String>,
    limit: u64,
    make: impl FnOnce(&str) -> T,
    unread: impl FnOnce() -> T,
) -> Found<T> {
    for relative in candidates {
        let seen = known
            .get(clone)
            .filter(|k| k.relative == relative)
            .map(|k| k.identity);
        let afford = |size| match budget.as_mut() {
            Some(budget) => budget.afford(clone, size),
            None => Some(limit),
        };
        match tree.read_to_string_if_changed(&relative, limit, seen.as_ref(), afford) {
            Ok(Fresh::Missing) => continue,
            Ok(Fresh::Unchanged) => {
                let value = known.get(clone).map(|k| k.value.clone())?;
                return Some((relative, Ok(value)));
            }
            // Until its turn, what was made of the version before stands.
            Ok(Fresh::Postponed) => {
                let before = known
                    .get(clone)
                    .filter(|k| k.relative == relative)
                    .map(|k| k.value.clone());
                return Some((relative, Ok(before.unwrap_or_else(unread))));
            }
            Ok(Fresh::Read { identity, content }) => {
                let value = make(&content);
                known.insert(
                    clone.to_owned(),
                    Known {
                        relative: relative.clone(),
                        identity,
                        value: value.clone(),
                    },
                );
                return Some((relative, Ok(value)));
            }
            Err(e) => {
                known.remove(clone);
                return Some((relative, Err(e)));
            }
        }
    }
    known.remove(clone);
    None
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::time::Duration;

    use super::*;
    use crate::report::summary::parse;

    const SUMMARY: &str = "var/cache/puppet/public/last_run_summary.yaml";
    const OTHER: &str = "opt/puppetlabs/puppet/public/last_run_summary.yaml";

    fn candidates() -> Vec<String> {
        vec![SUMMARY.to_owned(), OTHER.to_owned()]
    }

    fn run(last_run: u64) -> String {
        include_str!("fixtures/unchanged.yaml").replace("1795318947", &last_run.to_string())
    }

    /// One clone's upper layer with a cache over it, counting the summaries parsed.
    struct Scene {
        _dir: tempfile::TempDir,
        upper: std::path::PathBuf,
        tree: CloneTree,
        cache: RunCache,
        parses: Cell<u32>,
    }

    impl Scene {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let upper = dir.path().join("upper");
            Scene {
                tree: CloneTree::new("clone1", upper.clone(), upper.clone()),
                upper,
                _dir: dir,
                cache: RunCache::default(),
                parses: Cell::new(0),
            }
        }

        fn write(&self, relative: &str, text: &str) {
            let path = self.upper.join(relative);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }

        /// The clone's summary through the cache.
        fn read(&mut self) -> Found<Result<LastRun, String>> {
            let parses = &self.parses;
            let counting = |text: &str| {
                parses.set(parses.get() + 1);
                parse(text)
            };
            self.cache
                .summary(&self.tree, "clone1", candidates(), 1 << 20, counting)
        }
    }

    fn last_run(read: Found<Result<LastRun, String>>) -> Option<u64> {
        read.unwrap().1.unwrap().unwrap().last_run
    }

    #[test]
    fn a_summary_is_parsed_again_only_when_its_file_changed() {
        let mut scene = Scene::new();
        assert!(scene.read().is_none());

        scene.write(SUMMARY, &run(1000));
        assert_eq!(last_run(scene.read()), Some(1000));
        assert_eq!(last_run(scene.read()), Some(1000));
        assert_eq!(scene.parses.get(), 1);

        // A new run, as the agent writes it: a new file renamed over the old one.
        scene.write("new.yaml", &run(2000));
        fs::rename(scene.upper.join("new.yaml"), scene.upper.join(SUMMARY)).unwrap();
        assert_eq!(last_run(scene.read()), Some(2000));
        assert_eq!(scene.parses.get(), 2);
    }

    #[test]
    fn a_file_rewritten_in_place_with_its_old_size_and_time_is_read_again() {
        let mut scene = Scene::new();
        scene.write(SUMMARY, &run(1000));
        let file = scene.upper.join(SUMMARY);
        let modified = fs::metadata(&file).unwrap().modified().unwrap();
        assert_eq!(last_run(scene.read()), Some(1000));
        // The change time has a coarse clock: let it move on.
        std::thread::sleep(Duration::from_millis(50));
        fs::write(&file, run(3000)).unwrap();
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(last_run(scene.read()), Some(3000));
        assert_eq!(scene.parses.get(), 2);
    }

    #[test]
    fn a_summary_that_moved_gone_or_planted_is_not_taken_from_the_cache() {
        let mut scene = Scene::new();
        scene.write(OTHER, &run(1000));
        assert_eq!(last_run(scene.read()), Some(1000));

        // The same file now also at the first place looked at: that one is read.
        scene.write(SUMMARY, &run(1500));
        let (relative, _) = scene.read().unwrap();
        assert_eq!(relative, SUMMARY);
        assert_eq!(scene.parses.get(), 2);

        // Replaced by a symlink to the host: refused, and forgotten.
        fs::remove_file(scene.upper.join(SUMMARY)).unwrap();
        symlink("/etc/shadow", scene.upper.join(SUMMARY)).unwrap();
        let refused = scene.read().unwrap().1.unwrap_err();
        assert!(refused.to_string().contains("symlink"), "{refused}");

        // Gone from both places: no run, whatever was read before.
        fs::remove_file(scene.upper.join(SUMMARY)).unwrap();
        fs::remove_file(scene.upper.join(OTHER)).unwrap();
        assert!(scene.read().is_none());
        assert_eq!(scene.parses.get(), 2);
    }

    #[test]
    fn removed_clones_are_forgotten() {
        let mut scene = Scene::new();
        scene.write(SUMMARY, &run(1000));
        scene.read();
        scene.cache.keep_only(&["clone2"]);
        scene.read();
        assert_eq!(scene.parses.get(), 2);
    }

    const REPORT: &str = "var/cache/puppet/state/last_run_report.yaml";

    /// Clones that rewrite a report of 6 KiB every sample, three of them: 18 KiB changed
    /// a sample, for a cache that reads 10 KiB a sample. And one honest clone whose
    /// small report changes every sample too.
    #[test]
    fn clones_rewriting_large_reports_every_sample_are_read_within_the_budget_in_turns() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["c1", "c2", "c3", "honest"];
        let trees: Vec<CloneTree> = names
            .iter()
            .map(|name| {
                let upper = dir.path().join(name);
                CloneTree::new(name, upper.clone(), upper)
            })
            .collect();
        let budget = 10 * 1024;
        let mut cache = RunCache::with_parse_budget(budget);
        let mut reads: BTreeMap<&str, u32> = BTreeMap::new();
        let mut failures: Vec<BTreeMap<&str, String>> = Vec::new();
        let said_of = |reading: ReportReading| match reading {
            ReportReading::Found(found) => found.errors.unwrap(),
            ReportReading::Garbage(e) => e,
            ReportReading::NotReadYet => "not read yet".to_owned(),
        };
        for sample in 0..6 {
            for name in names {
                // As the agent writes it: a new file renamed over the old one.
                let size = if name == "honest" { 100 } else { 6 * 1024 };
                let path = dir.path().join(name).join(REPORT);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path.with_extension("new"), format!("{sample:<size$}")).unwrap();
                fs::rename(path.with_extension("new"), &path).unwrap();
            }
            cache.begin_sample();
            let parsed = Cell::new(0);
            let mut said = BTreeMap::new();
            for i in cache.reading_order(&names) {
                let explain = |text: &str| {
                    parsed.set(parsed.get() + text.len() as u64);
                    *reads.entry(names[i]).or_default() += 1;
                    ReportReading::Found(RunFindings {
                        errors: Some(text.trim().to_owned()),
                        ..RunFindings::default()
                    })
                };
                let found =
                    cache.run_report(&trees[i], names[i], [REPORT.to_owned()], 1 << 20, explain);
                said.insert(names[i], said_of(found.unwrap().1.unwrap()));
            }
            assert!(parsed.get() <= budget, "sample {sample}: {}", parsed.get());
            failures.push(said);
        }
        // Each large one had its turn every third sample; the small one fitted every time.
        assert_eq!(
            reads,
            BTreeMap::from([("c1", 2), ("c2", 2), ("c3", 2), ("honest", 6)])
        );
        // Until its turn, a clone keeps what was read of it before; one never read says so.
        assert_eq!(failures[0]["c1"], "0");
        assert!(
            failures[0]["c2"].contains("not read yet"),
            "{:?}",
            failures[0]
        );
        assert_eq!(failures[1]["c2"], "1");
        assert_eq!(failures[1]["c1"], "0");
        assert_eq!(failures[3]["c1"], "3");
        assert_eq!(failures[5]["honest"], "5");
    }

    /// A single report reads every file, whatever its size.
    #[test]
    fn one_report_has_no_budget() {
        let mut scene = Scene::new();
        scene.cache = RunCache::for_one_report();
        scene.cache.begin_sample();
        scene.write(SUMMARY, &run(1000));
        assert_eq!(last_run(scene.read()), Some(1000));
        assert_eq!(scene.cache.reading_order(&["a", "b"]), vec![0, 1]);
    }
}
