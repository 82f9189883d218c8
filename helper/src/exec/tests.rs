//! The burst against a temporary root, the recording systemd fake, and `sh` standing in
//! for `systemd-run` (there is no systemd to run it here).

use std::fs;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::*;
use crate::sys::paths::Layout;
use crate::systemd::RecordingSystemd;

struct Fixture {
    _dir: tempfile::TempDir,
    layout: Layout,
    systemd: RecordingSystemd,
}

impl Fixture {
    /// Clones `(name, running)` with their mount units on disk and states in the fake.
    fn new(clones: &[(&str, bool)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let unit_dir = dir.path().join("etc/systemd/system");
        fs::create_dir_all(&unit_dir).unwrap();
        let systemd = RecordingSystemd::default();
        for (name, running) in clones {
            fs::write(
                unit_dir.join(layout.mount_unit_name(name)),
                format!(
                    "# Managed by clone-army 0.0.0. Changes will be overwritten.\n\
                     [Mount]\nWhere=/var/lib/machines/{name}\n\
                     Options=lowerdir=/var/lib/puppet-clone-army/b,\
                     upperdir=/var/lib/puppet-clone-army/{name}-overlay,\
                     workdir=/var/lib/puppet-clone-army/{name}-workdir\n"
                ),
            )
            .unwrap();
            let state = if *running { "active" } else { "inactive" };
            systemd.set_state(&layout.service_unit_name(name), state);
        }
        Fixture {
            _dir: dir,
            layout,
            systemd,
        }
    }

    fn ctx(&self) -> Context<'_> {
        Context::new(self.layout.clone(), &self.systemd)
    }
}

/// Runs `sh -c SCRIPT <clone>` (so `$0` is the clone) and records what it was asked to do.
struct Sh {
    script: &'static str,
    runs: Mutex<Vec<String>>,
    stops: Mutex<Vec<String>>,
}

impl Sh {
    fn new(script: &'static str) -> Self {
        Sh {
            script,
            runs: Mutex::default(),
            stops: Mutex::default(),
        }
    }
}

impl Launcher for Sh {
    fn run_argv(&self, clone: &str) -> Vec<String> {
        self.runs.lock().unwrap().push(clone.to_owned());
        vec!["sh".into(), "-c".into(), self.script.into(), clone.into()]
    }

    fn stop_argv(&self, clone: &str) -> Vec<String> {
        self.stops.lock().unwrap().push(clone.to_owned());
        vec!["true".into()]
    }
}

fn request(clones: &[&str], concurrency: usize) -> ExecRequest {
    ExecRequest {
        clones: clones.iter().map(|c| (*c).to_owned()).collect(),
        all: false,
        concurrency,
        timeout_seconds: 60,
        command: vec!["puppet".into(), "agent".into(), "-t".into()],
    }
}

fn names(result: &ExecResult) -> Vec<&str> {
    result.clones.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn raw_exit_codes_output_and_stopped_clones_as_entries() {
    let f = Fixture::new(&[("c1", true), ("c2", false), ("c3", true)]);
    let sh = Sh::new(
        r#"case "$0" in c1) echo "changes applied in $0"; echo warn >&2; exit 2;; *) echo ok;; esac"#,
    );
    let result = exec_with(&f.ctx(), &request(&["c1", "c2", "c3"], 10), &sh).unwrap();
    assert_eq!(names(&result), ["c1", "c2", "c3"]);
    let [c1, c2, c3] = &result.clones[..] else {
        panic!("{result:?}")
    };
    // puppet agent -t's 2 ("changes applied") is reported as is, not interpreted.
    assert_eq!(c1.exit_code, Some(2));
    assert_eq!(c1.error, None);
    assert_eq!(c1.stdout_tail, "changes applied in c1\n");
    assert_eq!(c1.stderr_tail, "warn\n");
    assert_eq!(c2.exit_code, None);
    let problem = c2.error.as_ref().unwrap();
    assert_eq!(problem.kind, "not-running");
    assert!(
        problem.message.contains("clone-army clone start c2"),
        "{problem:?}"
    );
    assert_eq!(c3.exit_code, Some(0));
    let mut runs = sh.runs.lock().unwrap().clone();
    runs.sort();
    assert_eq!(runs, ["c1", "c3"], "a stopped clone is not run");

    let s = &result.summary;
    assert_eq!(
        (s.count, s.succeeded, s.failed, s.not_run, s.timed_out),
        (3, 1, 2, 1, 0)
    );
    assert!(s.p50_seconds.is_some() && s.max_seconds >= s.p95_seconds);
    assert_eq!(s.concurrency, 10);
    assert_eq!(result.command, ["puppet", "agent", "-t"]);
}

#[test]
fn at_most_n_commands_run_at_a_time() {
    let clones: Vec<(&str, bool)> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|c| (*c, true))
        .collect();
    let f = Fixture::new(&clones);
    let sh = Sh::new("sleep 0.5");
    let started = Instant::now();
    let result = exec_with(&f.ctx(), &request(&["a", "b", "c", "d", "e"], 2), &sh).unwrap();
    let elapsed = started.elapsed();
    // Five half-second commands two at a time take three rounds: not fewer (the limit
    // holds), and clearly less than five (they do run in parallel).
    assert!(elapsed >= Duration::from_millis(1500), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(2400), "{elapsed:?}");
    assert_eq!(result.summary.succeeded, 5);
    assert!(result.summary.wall_seconds >= 1.5);
    assert!(result.clones.iter().all(|c| c.seconds >= 0.5));
}

#[test]
fn a_command_that_runs_too_long_is_killed_and_its_unit_stopped() {
    let f = Fixture::new(&[("c1", true), ("c2", true)]);
    let sh = Sh::new(r#"[ "$0" = c2 ] && exit 0; echo begun; exec sleep 30"#);
    let mut req = request(&["c1", "c2"], 2);
    req.timeout_seconds = 1;
    let started = Instant::now();
    let result = exec_with(&f.ctx(), &req, &sh).unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let c1 = &result.clones[0];
    assert!(c1.timed_out);
    assert_eq!(c1.exit_code, None);
    assert_eq!(c1.stdout_tail, "begun\n");
    assert_eq!(c1.error.as_ref().unwrap().kind, "timeout");
    assert!(c1.seconds >= 1.0);
    assert_eq!(*sh.stops.lock().unwrap(), ["c1"]);
    assert_eq!(result.clones[1].exit_code, Some(0));
    assert_eq!(result.summary.timed_out, 1);
    assert_eq!(result.summary.failed, 1);
}

#[test]
fn all_means_every_clone_by_name_and_duplicates_run_once() {
    let f = Fixture::new(&[("b", true), ("a", true), ("c", false)]);
    let sh = Sh::new("true");
    let mut req = request(&[], 3);
    req.all = true;
    let result = exec_with(&f.ctx(), &req, &sh).unwrap();
    assert_eq!(names(&result), ["a", "b", "c"]);
    assert_eq!(result.summary.not_run, 1);

    let result = exec_with(&f.ctx(), &request(&["b", "a", "b"], 3), &sh).unwrap();
    assert_eq!(names(&result), ["b", "a"]);
}

#[test]
fn no_clones_is_an_empty_burst() {
    let f = Fixture::new(&[]);
    let mut req = request(&[], 3);
    req.all = true;
    let result = exec_with(&f.ctx(), &req, &Sh::new("true")).unwrap();
    assert!(result.clones.is_empty());
    assert_eq!(result.summary.count, 0);
    assert_eq!(result.summary.p50_seconds, None);
}

#[test]
fn bad_requests_are_refused_before_anything_runs() {
    let f = Fixture::new(&[("c1", true)]);
    let sh = Sh::new("true");
    let unknown = exec_with(&f.ctx(), &request(&["c1", "nope"], 2), &sh).unwrap_err();
    assert_eq!(unknown.kind(), "not-found");
    assert!(unknown.to_string().contains("nope"));

    let cases: Vec<(ExecRequest, &str, Option<&str>, &str)> = vec![
        (
            request(&["c1"], 0),
            "invalid-argument",
            Some("concurrency"),
            "1 to 1000",
        ),
        (
            ExecRequest {
                timeout_seconds: 0,
                ..request(&["c1"], 2)
            },
            "invalid-argument",
            Some("timeout"),
            "1 to 86400",
        ),
        (
            ExecRequest {
                command: Vec::new(),
                ..request(&["c1"], 2)
            },
            "invalid-argument",
            Some("command"),
            "after `--`",
        ),
        (
            request(&["../c1"], 2),
            "invalid-name",
            Some("clone"),
            "a-z, 0-9",
        ),
        (request(&[], 2), "usage", None, "--all"),
    ];
    for (req, kind, field, allowed) in cases {
        let error = exec_with(&f.ctx(), &req, &sh).unwrap_err();
        assert_eq!(error.kind(), kind, "{req:?}");
        assert_eq!(error.field(), field, "{req:?}");
        let message = error.to_string();
        if let Some(field) = field {
            assert!(message.contains(field), "{message}");
        }
        assert!(message.contains(allowed), "{message}");
    }
    assert!(sh.runs.lock().unwrap().is_empty());
}

#[test]
fn protocol_md_names_every_exec_problem_kind() {
    let protocol = include_str!("../../../docs/PROTOCOL.md");
    let sentence = protocol
        .split("- `error`: `null` when the command ran to its end")
        .nth(1)
        .and_then(|rest| rest.split("\n- ").next())
        .unwrap();
    let documented: Vec<&str> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| *word != "kind" && *word != "systemd-run")
        .collect();
    let kinds: Vec<&str> = ExecProblemKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(documented, kinds);
}
