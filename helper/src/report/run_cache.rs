//! What the report made of each clone's agent files, kept between the reports of one
//! process: the recorder takes one every few seconds, and in that time few of a large
//! fleet's agents have written a new summary. A file still the same (its
//! [`FileIdentity`], taken through the confined descriptor like the read itself) is not
//! read and parsed again; any other is, with every check the confined reader makes.

use std::collections::BTreeMap;

use crate::protocol::error::Error;
use crate::sys::confined::{CloneTree, FileIdentity, Fresh};

use super::summary::LastRun;

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

/// Per clone: its last run from the summary, and why a failed run failed from the report.
#[derive(Debug, Default)]
pub struct RunCache {
    summaries: BTreeMap<String, Known<Result<LastRun, String>>>,
    failures: BTreeMap<String, Known<Option<String>>>,
}

impl RunCache {
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
        read_cached(&mut self.summaries, tree, clone, candidates, limit, parse)
    }

    /// As [`RunCache::summary`], for the agent's full report of a failed run.
    pub fn failure(
        &mut self,
        tree: &CloneTree,
        clone: &str,
        candidates: impl IntoIterator<Item = String>,
        limit: u64,
        explain: impl FnOnce(&str) -> Option<String>,
    ) -> Found<Option<String>> {
        read_cached(&mut self.failures, tree, clone, candidates, limit, explain)
    }

    /// Forgets the clones not in `names` (removed since).
    pub fn keep_only(&mut self, names: &[&str]) {
        self.summaries.retain(|c, _| names.contains(&c.as_str()));
        self.failures.retain(|c, _| names.contains(&c.as_str()));
    }
}

fn read_cached<T: Clone>(
    known: &mut BTreeMap<String, Known<T>>,
    tree: &CloneTree,
    clone: &str,
    candidates: impl IntoIterator<Item = String>,
    limit: u64,
    make: impl FnOnce(&str) -> T,
) -> Found<T> {
    for relative in candidates {
        let seen = known
            .get(clone)
            .filter(|k| k.relative == relative)
            .map(|k| &k.identity);
        match tree.read_to_string_if_changed(&relative, limit, seen) {
            Ok(Fresh::Missing) => continue,
            Ok(Fresh::Unchanged) => {
                let value = known.get(clone).map(|k| k.value.clone())?;
                return Some((relative, Ok(value)));
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
}
