//! Runs the built binary the way the providers do, and decodes its stdout back into
//! the protocol's own types (from the library), as a Rust caller would.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use serde::Deserialize;

use clone_army::protocol::answers::{
    BaseList, CloneList, Envelope, ErrorBody, Report, RunStatus, TextfileWritten,
};
use clone_army::protocol::ramp::RampLongest;

use common::run_in as run;

/// Exactly one JSON document, one line, on stdout.
fn envelope<T: for<'de> Deserialize<'de>>(output: &Output) -> Envelope<T> {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(stdout.ends_with('\n'), "{stdout:?}");
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    let envelope: Envelope<T> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(envelope.protocol, 2);
    envelope
}

fn failure(output: &Output) -> ErrorBody {
    let envelope: Envelope<serde_json::Value> = envelope(output);
    assert!(!envelope.ok);
    assert!(envelope.result.is_none());
    let error = envelope.error.expect("error body");
    assert!(!error.message.is_empty());
    error
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn exec_refuses_what_it_cannot_run() {
    let root = tempfile::tempdir().unwrap();
    // Usage: no clones chosen, no command, both --all and --clone, a command without `--`.
    for args in [
        &["exec", "--", "true"][..],
        &["exec", "--clone", "c1"],
        &["exec", "--all", "--clone", "c1", "--", "true"],
        &["exec", "--all", "true"],
        &["exec", "--all", "--concurrency", "many", "--", "true"],
    ] {
        common::refused_by_parser(&run(root.path(), args));
    }
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn exec_refuses_an_unknown_clone() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let output = run(root.path(), &["exec", "--clone", "nope", "--", "true"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(failure(&output).kind, "not-found");
    assert!(entries(root.path()).is_empty());
}

/// The rules need no root: a Puppet compile or a developer may ask for them anywhere.
#[test]
fn schema_answers_with_the_rules_as_any_user() {
    let root = tempfile::tempdir().unwrap();
    let output = run(root.path(), &["schema"]);
    assert_eq!(output.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["ok"], true);
    let schema = &answer["result"];
    assert_eq!(schema["ranges"]["runinterval"]["min"], 60);
    assert_eq!(schema["names"]["clone"]["max_length"], 64);
    assert!(schema["error_kinds"]
        .as_array()
        .unwrap()
        .contains(&"unsafe-path".into()));
    assert!(entries(root.path()).is_empty());
}

/// A baseline as `ramp run` writes it: steps of 10 clones, the p95 run time `p95 × step`.
fn baseline(label: &str, p95: f64, steps: u32, degraded_at: Option<u32>) -> String {
    let step = |n: u32| {
        let bad = degraded_at == Some(n);
        serde_json::json!({
            "step": n, "clones": 10 * n, "added": 10, "start_failed": [],
            "started_at": "2026-11-26T17:00:00Z", "t": 1_795_000_000 + 120 * u64::from(n),
            "seconds": 120, "samples": 12, "runs": 10 * n, "failed_runs": 0,
            "error_percent": 0.0, "runs_per_minute": 5.0 * f64::from(n),
            "total_time": {"count": 10 * n, "p50": p95 * f64::from(n) / 2.0,
                           "p95": p95 * f64::from(n), "max": p95 * f64::from(n)},
            "first_runs": {"runs": 0, "failed_runs": 0,
                           "total_time": {"count": 0, "p50": null, "p95": null, "max": null}},
            "jruby_wait_ms": null, "host_cpu_busy": 0.5,
            "within_bounds": !bad,
            "crossed": if bad { serde_json::json!([{"bound": "p95", "limit": 12.0, "value": p95 * f64::from(n)}]) } else { serde_json::json!([]) },
        })
    };
    serde_json::json!({
        "ramp": 1, "label": label, "started_at": "2026-11-26T17:00:00Z",
        "ended_at": "2026-11-26T17:10:00Z", "interval": 120, "step": 10, "settle": 120, "hold": 120,
        "bounds": {"p95_seconds": 12.0, "error_percent": null, "jruby_wait_ms": null},
        "running_before": 0, "server_version": "8.7.0",
        "steps": (1..=steps).map(step).collect::<Vec<_>>(),
        "verdict": {"ended_by": "degraded", "sustained": null, "first_degraded": null,
                    "summary": format!("{label} verdict")},
    })
    .to_string()
}

/// A baseline is read by anyone, alone or against another, as JSON or a table.
#[test]
fn ramp_report_shows_a_baseline_and_lays_two_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.json");
    let old = dir.path().join("old.json");
    std::fs::write(&new, baseline("tuned", 2.0, 3, None)).unwrap();
    std::fs::write(&old, baseline("stock", 5.0, 3, Some(3))).unwrap();
    let new_s = new.to_str().unwrap();
    let old_s = old.to_str().unwrap();

    let output = run(dir.path(), &["ramp", "report", new_s, "--against", old_s]);
    assert_eq!(output.status.code(), Some(0));
    let answer: Envelope<serde_json::Value> = envelope(&output);
    let rows = &answer.result.unwrap()["comparison"]["rows"];
    assert_eq!(rows[2]["clones"], 30);
    assert_eq!(rows[2]["p95_ratio"], 0.4);

    let output = run(dir.path(), &["ramp", "report", new_s, "--format", "table"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with(
            "ramp tuned: +10 clones every 240 s (settle 120 s, hold 120 s) at interval 120 s"
        ),
        "{text}"
    );
    // The verdict is the steps' under this helper's rules, not the one the file holds.
    assert!(!text.contains("tuned verdict"), "{text}");
    assert!(
        text.contains("sustained 30 agents at interval 120 s (15 runs/min); no bound crossed"),
        "{text}"
    );

    // Not a baseline: named by the flag it came through, exit 2.
    let output = run(
        dir.path(),
        &[
            "ramp",
            "report",
            new_s,
            "--against",
            new_s.trim_end_matches(".json"),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let error = failure(&output);
    assert_eq!(error.field.as_deref(), Some("against"));

    // Several baselines merge only when they keep their run times (format 2) and were
    // keyed to one start time: these keep none.
    let output = run(dir.path(), &["ramp", "report", new_s, old_s]);
    assert_eq!(output.status.code(), Some(2));
    let error = failure(&output);
    assert_eq!(error.field.as_deref(), Some("baseline"));
    assert!(error.message.contains("keeps no run times"), "{error:?}");
}

/// The figures of the ramp task's `ramp run` in `spec/tasks/ramp_spec.rb` (its files
/// aside, which no answer depends on): 25 clones a step at interval 1800 s.
const RAMP_TASK_ARGS: &[&str] = &[
    "--output",
    "/var/log/puppet-clone-army/stock.json",
    "--timeline",
    "/var/log/puppet-clone-army/stock.jsonl",
    "--interval",
    "1800",
    "--step",
    "25",
    "--max-p95",
    "30",
];

/// `text` is what `spec/fixtures/helper/generated/<name>.json` holds, the answer the Ruby
/// specs read (rewritten with CLONE_ARMY_WRITE_FIXTURES=1, as `clone::ruby_fixtures`'s).
fn ruby_fixture_is(name: &str, text: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../spec/fixtures/helper/generated")
        .join(format!("{name}.json"));
    if std::env::var_os("CLONE_ARMY_WRITE_FIXTURES").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    assert_eq!(
        std::fs::read(&path).ok().as_deref(),
        Some(text),
        "{} is not what the helper answers now; rewrite it with \
         CLONE_ARMY_WRITE_FIXTURES=1 cargo test --test cli ramp_longest",
        path.display()
    );
}

/// `ramp longest` answers from its arguments alone, as any user, and starts, reads and
/// writes nothing: the ramp task's time limit for a `ramp run` with them.
#[test]
fn ramp_longest_answers_from_the_arguments_alone_as_any_user() {
    let root = tempfile::tempdir().unwrap();
    let longest = |extra: &[&str]| {
        let mut args = vec!["ramp", "longest"];
        args.extend(RAMP_TASK_ARGS);
        args.extend(extra);
        run(root.path(), &args)
    };

    let output = longest(&["--max-clones", "100"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let answer: Envelope<RampLongest> = envelope(&output);
    // 4 coarse steps of 1800 + 7200 s, 5 levels of bisection settling 1800 s more, each of
    // the 9 late by up to an ordinary call's 900 s, and 900 s more.
    assert_eq!(
        answer.result,
        Some(RampLongest {
            steps: Some(9),
            seconds: Some(4 * 9000 + 5 * 10_800 + 10 * 900)
        })
    );
    ruby_fixture_is("ramp_longest", &output.stdout);

    // Without --max-clones the steps are as many as the stopped clones on the host.
    let output = longest(&[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let answer: Envelope<RampLongest> = envelope(&output);
    assert_eq!(answer.result, Some(RampLongest::default()));
    ruby_fixture_is("ramp_longest_unbounded", &output.stdout);

    // Refused as `ramp run` refuses it, naming the flag.
    let output = longest(&["--max-clones", "100", "--hold", "60"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = failure(&output);
    assert_eq!(error.kind, "invalid-argument");
    assert_eq!(error.field.as_deref(), Some("hold"));
    ruby_fixture_is("ramp_longest_refused", &output.stdout);

    assert!(entries(root.path()).is_empty());
}

#[test]
fn help_and_version_print_normally() {
    let root = tempfile::tempdir().unwrap();
    let output = run(root.path(), &["--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("clone"));
    let output = run(root.path(), &["--version"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("clone-army "));
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn bad_names_exit_2_and_create_nothing() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    for (args, kind, field) in [
        (
            &[
                "clone",
                "create",
                "../x",
                "--base",
                "b",
                "--server",
                "m",
                "--certname",
                "c",
            ][..],
            "invalid-name",
            "name",
        ),
        (
            &[
                "clone",
                "create",
                "c1",
                "--base",
                "B",
                "--server",
                "m",
                "--certname",
                "c",
            ],
            "invalid-name",
            "base",
        ),
        (
            &[
                "clone",
                "create",
                "c1",
                "--base",
                "b",
                "--server",
                "m x",
                "--certname",
                "c",
            ],
            "invalid-argument",
            "server",
        ),
        // The providers put `--` before names.
        (
            &[
                "clone",
                "create",
                "--base",
                "b",
                "--server",
                "m",
                "--certname",
                "c",
                "--",
                "-x",
            ],
            "invalid-name",
            "name",
        ),
        (
            &["clone", "remove", "--", "ok", "x/y"],
            "invalid-name",
            "name",
        ),
        (&["clone", "start", "Upper"], "invalid-name", "name"),
        (
            &["clone", "configure", "a\nb", "--server", "m"],
            "invalid-name",
            "name",
        ),
        (&["base", "create", ""], "invalid-name", "name"),
        (&["base", "remove", "../etc"], "invalid-name", "name"),
    ] {
        let output = run(root.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = failure(&output);
        assert_eq!(error.kind, kind, "{args:?}");
        assert_eq!(error.field.as_deref(), Some(field), "{args:?}");
    }
    assert!(
        entries(root.path()).is_empty(),
        "{:?}",
        entries(root.path())
    );
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn empty_root_lists_nothing_and_unknown_clones_are_not_found() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let output = run(root.path(), &["clone", "list"]);
    assert_eq!(output.status.code(), Some(0));
    let list: Envelope<CloneList> = envelope(&output);
    assert!(list.ok);
    assert!(list.result.unwrap().clones.is_empty());

    let output = run(root.path(), &["base", "list"]);
    assert_eq!(output.status.code(), Some(0));
    let list: Envelope<BaseList> = envelope(&output);
    assert!(list.result.unwrap().bases.is_empty());

    let output = run(root.path(), &["clone", "start", "nope"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(failure(&output).kind, "not-found");
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn unreachable_systemd_is_a_systemd_error_naming_the_bus() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let unit_dir = root.path().join("etc/systemd/system");
    std::fs::create_dir_all(&unit_dir).unwrap();
    std::fs::write(
        unit_dir.join("var-lib-machines-c1.mount"),
        "# Managed by clone-army 0.0.0. Changes will be overwritten.\n[Mount]\nWhere=/var/lib/machines/c1\nOptions=lowerdir=/var/lib/puppet-clone-army/b,upperdir=/u,workdir=/w\n",
    )
    .unwrap();
    let output = run(root.path(), &["clone", "stop", "c1"]);
    assert_eq!(output.status.code(), Some(1));
    let error = failure(&output);
    assert_eq!(error.kind, "systemd");
    assert!(
        error.message.contains("/nonexistent/clone-army-test"),
        "{}",
        error.message
    );
}

#[test]
#[ignore = "needs root, to drop to nobody with setpriv (util-linux); make test runs it"]
fn non_root_is_refused_for_every_verb() {
    common::require_root();
    assert!(
        Path::new("/usr/bin/setpriv").exists(),
        "this test needs /usr/bin/setpriv (util-linux)"
    );
    let root = tempfile::tempdir().unwrap();
    // A copy nobody can reach and run: the build's own directory may be private.
    let bin_dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(bin_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let helper = bin_dir.path().join("clone-army");
    std::fs::copy(env!("CARGO_BIN_EXE_clone-army"), &helper).unwrap();
    for args in [
        &["clone", "list"][..],
        &["base", "list"],
        &[
            "clone",
            "create",
            "c1",
            "--base",
            "b",
            "--server",
            "m",
            "--certname",
            "c",
        ],
        &["clone", "remove", "c1"],
        &["base", "create", "b1"],
    ] {
        let output = Command::new("/usr/bin/setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&helper)
            .args(args)
            .env("CLONE_ARMY_ROOT", root.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let error = failure(&output);
        assert_eq!(error.kind, "not-root", "{args:?}");
        assert!(error.message.contains("root"));
    }
    assert!(entries(root.path()).is_empty());
}

// --- report ---------------------------------------------------------------------------------

/// A root with two clones as `clone create` leaves them on disk (mount unit, upper layer),
/// one of which has run, written by hand so the test needs no systemd.
fn fake_fleet() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let units = root.path().join("etc/systemd/system");
    std::fs::create_dir_all(&units).unwrap();
    std::fs::create_dir_all(root.path().join("var/lib/puppet-clone-army/debian-12")).unwrap();
    for clone in ["army-1", "army-2"] {
        let escaped = clone.replace('-', "\\x2d");
        std::fs::write(
            units.join(format!("var-lib-machines-{escaped}.mount")),
            format!(
                "# Managed by clone-army 0.1.0. Changes will be overwritten.\n[Unit]\n\
                 Description=OverlayFS root of puppet-agent clone {clone}\n\n[Mount]\n\
                 What=overlay\nWhere=/var/lib/machines/{clone}\nType=overlay\n\
                 Options=lowerdir=/var/lib/puppet-clone-army/debian-12,\
                 upperdir=/var/lib/puppet-clone-army/{clone}-overlay,\
                 workdir=/var/lib/puppet-clone-army/{clone}-workdir\n"
            ),
        )
        .unwrap();
        std::fs::create_dir_all(root.path().join(format!(
            "var/lib/puppet-clone-army/{clone}-overlay/etc/puppet"
        )))
        .unwrap();
    }
    let public = root
        .path()
        .join("var/lib/puppet-clone-army/army-1-overlay/var/cache/puppet/public");
    std::fs::create_dir_all(&public).unwrap();
    std::fs::write(
        public.join("last_run_summary.yaml"),
        include_str!("../src/report/fixtures/failed.yaml"),
    )
    .unwrap();
    root
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn report_reads_the_fleet_without_systemd() {
    common::require_root();
    let root = fake_fleet();
    let output = run(root.path(), &["report", "--interval", "1800"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let envelope: Envelope<Report> = envelope(&output);
    assert!(envelope.ok);
    let report = envelope.result.unwrap();
    // No system bus in tests: states are unknown, the report still stands.
    assert!(!report.states_known);
    assert!(report
        .systemd_error
        .unwrap()
        .contains("/nonexistent/clone-army-test"));
    let clones: Vec<(&str, &str, &str)> = report
        .clones
        .iter()
        .map(|c| (c.name.as_str(), c.state.as_str(), c.run.status.as_str()))
        .collect();
    assert_eq!(
        clones,
        vec![
            ("army-1", "unknown", "failed"),
            ("army-2", "unknown", "never")
        ]
    );
    assert_eq!(report.clones[0].run.failed_resources, Some(1));
    assert!(report.clones[0].run.total_time.is_some());
    assert_eq!(report.fleet.clones, 2);
    assert_eq!(report.fleet.by_status[&RunStatus::Failed], 1);
    assert_eq!(report.fleet.by_status[&RunStatus::Never], 1);
    // Never run, but its mount unit was just written: not silent (yet).
    assert!(!report.fleet.silent.iter().any(|c| c == "army-2"));
    assert!(report.server.is_none());
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn report_table_and_prometheus_are_text() {
    common::require_root();
    let root = fake_fleet();
    let output = run(root.path(), &["report", "--format", "table"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("CLONE "), "{text}");
    assert!(text.contains("\narmy-1 "), "{text}");
    assert!(text.contains(
        "clones: 2 (failed 1, changed 0, would-change 0, unchanged 0, never 1, unreadable 0)"
    ));

    let output = run(root.path(), &["report", "--format", "prometheus"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("# TYPE clone_army_clone_last_run_seconds gauge\n"));
    assert!(text.contains("clone_army_clone_status{clone=\"army-1\",status=\"failed\"} 1\n"));
    assert!(text.contains("clone_army_fleet_clones 2\n"));
}

/// node_exporter reads its textfile directory at every scrape: `--output` puts the file
/// there in one rename, over an earlier textfile only.
#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn report_prometheus_output_puts_the_textfile_in_place() {
    common::require_root();
    let root = fake_fleet();
    let collector = tempfile::tempdir().unwrap();
    let textfile = collector.path().join("clone_army.prom");
    let args = [
        "report",
        "--format",
        "prometheus",
        "--output",
        textfile.to_str().unwrap(),
    ];
    for _ in 0..2 {
        let output = run(root.path(), &args);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let answer: Envelope<TextfileWritten> = envelope(&output);
        let result = answer.result.unwrap();
        assert_eq!(result.textfile, textfile.to_str().unwrap());
        let text = std::fs::read_to_string(&textfile).unwrap();
        assert_eq!(result.bytes, text.len());
        assert!(
            text.starts_with("# clone-army report --format prometheus"),
            "{text}"
        );
        assert!(text.contains("clone_army_fleet_clones 2\n"), "{text}");
    }
    let names: Vec<_> = std::fs::read_dir(collector.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");

    let foreign = collector.path().join("node.prom");
    std::fs::write(&foreign, "node_load1 3\n").unwrap();
    let output = run(
        root.path(),
        &[
            "report",
            "--format",
            "prometheus",
            "--output",
            foreign.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(failure(&output).field.as_deref(), Some("output"));
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "node_load1 3\n");
}

#[test]
fn report_output_of_json_or_table_is_refused_naming_what_it_is_for() {
    let root = tempfile::tempdir().unwrap();
    for format in ["json", "table"] {
        let output = run(
            root.path(),
            &["report", "--format", format, "--output", "/tmp/x.prom"],
        );
        assert_eq!(output.status.code(), Some(2), "{format}");
        let error = failure(&output);
        assert_eq!(error.kind, "usage");
        assert!(
            error.message.contains("--format prometheus"),
            "{}",
            error.message
        );
    }
}

#[test]
fn report_errors_are_the_json_envelope_in_every_format() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("missing.jsonl");
    let missing = missing.to_str().unwrap();
    for args in [
        &["report", "--format", "html"][..],
        &["report", "--from", missing, "--format", "prometheus"],
        &["report", "--from", missing, "--format", "table"],
        &["report", "--from", missing, "--format", "auto"],
    ] {
        let output = run(root.path(), args);
        assert_ne!(output.status.code(), Some(0), "{args:?}");
        assert!(!failure(&output).message.is_empty(), "{args:?}");
    }
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn a_format_of_the_other_report_is_refused_naming_the_formats_this_one_takes() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let timeline = root.path().join("timeline.jsonl");
    std::fs::write(&timeline, "").unwrap();
    let live = run(root.path(), &["report", "--format", "html"]);
    assert_eq!(live.status.code(), Some(2));
    let message = failure(&live).message;
    assert!(message.contains("json, table or prometheus"), "{message}");
    let recorded = run(
        root.path(),
        &[
            "report",
            "--from",
            timeline.to_str().unwrap(),
            "--format",
            "prometheus",
        ],
    );
    assert_eq!(recorded.status.code(), Some(2));
    let message = failure(&recorded).message;
    assert!(message.contains("json, table or html"), "{message}");
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn report_refusals_are_the_json_envelope_in_every_format() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    for format in ["json", "table", "prometheus"] {
        let output = run(
            root.path(),
            &["report", "--format", format, "--interval", "0"],
        );
        assert_eq!(output.status.code(), Some(2), "{format}");
        let error = failure(&output);
        assert_eq!(error.kind, "invalid-argument");
        assert_eq!(error.field.as_deref(), Some("interval"));
    }
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn report_with_a_server_that_does_not_answer_still_succeeds() {
    common::require_root();
    let root = fake_fleet();
    let ca = root.path().join("ca.pem");
    std::fs::write(&ca, include_str!("../src/report/fixtures/ca.pem")).unwrap();
    let output = run(
        root.path(),
        &[
            "report",
            "--server",
            "https://127.0.0.1:1",
            "--ca-cert",
            ca.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = envelope::<Report>(&output).result.unwrap();
    let server = report.server.unwrap();
    assert!(!server.ok);
    assert!(server.error.unwrap().contains("127.0.0.1:1"));
    assert_eq!(report.clones.len(), 2);
}

/// `openssl` in `dir` with `args` (split at spaces); false when it is missing or fails.
fn openssl(dir: &Path, args: &str) -> bool {
    Command::new("openssl")
        .args(args.split(' '))
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

const MAKE_CA: &str = concat!(
    "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=TestCA ",
    "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
);
const MAKE_SERVER_KEY: &str =
    "req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost";
const SIGN_SERVER_CERT: &str = concat!(
    "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem ",
    "-days 2 -extfile server.ext"
);

/// An HTTPS server (`openssl s_server -WWW`) for `localhost` with a certificate from a
/// throw-away CA, serving the Puppet Server 7 status fixture at the status path.
struct StatusServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for StatusServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn status_server(dir: &Path) -> Option<StatusServer> {
    https_server(
        dir,
        &[(
            "status/v1/services?level=debug",
            include_str!("../src/report/fixtures/puppetserver-7-status-debug.json"),
        )],
        false,
    )
}

/// Like PuppetDB: its status and command metrics (the PuppetDB 8 fixtures), and no
/// answer without a client certificate signed by the CA.
fn puppetdb_server(dir: &Path) -> Option<StatusServer> {
    https_server(
        dir,
        &[
            (
                "status/v1/services/puppetdb-status?level=debug",
                include_str!("../src/report/fixtures/puppetdb-8-status-debug.json"),
            ),
            (
                "metrics/v2/read/puppetlabs.puppetdb.mq%3Aname=global.processed",
                include_str!("../src/report/fixtures/puppetdb-8-processed.json"),
            ),
            (
                "metrics/v2/read/puppetlabs.puppetdb.mq%3Aname=global.processing-time",
                include_str!("../src/report/fixtures/puppetdb-8-processing-time.json"),
            ),
        ],
        true,
    )
}

/// Serves `files` (URL path without the leading `/`, content) over HTTPS for `localhost`,
/// its certificate from a throw-away CA in `dir` (`ca.pem`, `ca.key`); with
/// `client_certs`, the TLS handshake wants a client certificate that CA signed.
fn https_server(dir: &Path, files: &[(&str, &str)], client_certs: bool) -> Option<StatusServer> {
    let made = openssl(dir, MAKE_CA) && openssl(dir, MAKE_SERVER_KEY) && {
        std::fs::write(
            dir.join("server.ext"),
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(dir, SIGN_SERVER_CERT)
    };
    if !made {
        return None;
    }
    let www = dir.join("www");
    for (path, content) in files {
        let file = www.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, content).unwrap();
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut command = Command::new("openssl");
    command
        .args(["s_server", "-quiet", "-WWW", "-accept"])
        .arg(port.to_string())
        .args(["-cert", "../server.pem", "-key", "../server.key"]);
    if client_certs {
        command.args([
            "-Verify",
            "1",
            "-verify_return_error",
            "-CAfile",
            "../ca.pem",
        ]);
    }
    let child = command
        .current_dir(dir.join("www"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let server = StatusServer { child, port };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(server);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    None
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn report_asks_the_server_over_verified_tls() {
    common::require_root();
    let root = fake_fleet();
    let tls = tempfile::tempdir().unwrap();
    let server = status_server(tls.path())
        .expect("openssl could not make certificates or serve on loopback");
    let ca = tls.path().join("ca.pem");
    let ask = |url: String, ca: &Path| {
        let output = run(
            root.path(),
            &[
                "report",
                "--server",
                &url,
                "--ca-cert",
                ca.to_str().unwrap(),
            ],
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        // As the wire has it: the field names are part of the protocol.
        serde_json::to_value(envelope::<Report>(&output).result.unwrap().server.unwrap()).unwrap()
    };

    let view = ask(format!("localhost:{}", server.port), &ca);
    assert_eq!(view["ok"], serde_json::json!(true), "{view}");
    assert_eq!(view["http_status"], serde_json::json!(200));
    assert_eq!(view["jruby"]["num_jrubies"], serde_json::json!(2));
    assert_eq!(view["compile"]["mean_ms"], serde_json::json!(1181));
    assert!(view["raw"]["jruby-metrics"].is_object());

    // A name the certificate does not carry: refused.
    let view = ask(format!("https://127.0.0.1:{}", server.port), &ca);
    assert_eq!(view["ok"], serde_json::json!(false));
    assert!(
        view["error"].as_str().unwrap().contains("certificate"),
        "{view}"
    );

    // Another CA: refused.
    let other = tls.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    assert!(openssl(
        &other,
        "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=OtherCA"
    ));
    let view = ask(format!("localhost:{}", server.port), &other.join("ca.pem"));
    assert_eq!(view["ok"], serde_json::json!(false));
    assert!(
        view["error"].as_str().unwrap().contains("UnknownIssuer"),
        "{view}"
    );
}

/// A client certificate `NAME.pem` with key `NAME.key` in `out`, signed by the CA in `ca_dir`.
fn client_cert(ca_dir: &Path, out: &Path, name: &str) -> bool {
    std::fs::create_dir_all(out).unwrap();
    let csr = out.join(format!("{name}.csr"));
    let ext = out.join("client.ext");
    std::fs::write(&ext, "extendedKeyUsage=clientAuth\n").unwrap();
    let key = out.join(format!("{name}.key"));
    let pem = out.join(format!("{name}.pem"));
    let req = format!(
        "req -newkey rsa:2048 -nodes -keyout {} -out {} -subj /CN={name}",
        key.display(),
        csr.display()
    );
    let sign = format!(
        "x509 -req -in {} -CA ca.pem -CAkey ca.key -CAcreateserial -out {} -days 2 -extfile {}",
        csr.display(),
        pem.display(),
        ext.display()
    );
    openssl(ca_dir, &req) && openssl(ca_dir, &sign)
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn report_asks_puppetdb_with_the_host_agents_certificate() {
    common::require_root();
    let root = fake_fleet();
    let tls = tempfile::tempdir().unwrap();
    let server = puppetdb_server(tls.path()).expect("openssl could not make certificates or serve");
    // The host agent's ssldir (Debian's), as the helper finds it under CLONE_ARMY_ROOT.
    let ssl = root.path().join("var/lib/puppet/ssl");
    assert!(client_cert(
        tls.path(),
        &ssl.join("certs"),
        "load1.example.com"
    ));
    std::fs::create_dir_all(ssl.join("private_keys")).unwrap();
    std::fs::rename(
        ssl.join("certs/load1.example.com.key"),
        ssl.join("private_keys/load1.example.com.pem"),
    )
    .unwrap();
    std::fs::copy(tls.path().join("ca.pem"), ssl.join("certs/ca.pem")).unwrap();
    let ask = |extra: &[&str]| {
        let url = format!("localhost:{}", server.port);
        let mut args = vec!["report", "--puppetdb", url.as_str()];
        args.extend_from_slice(extra);
        let output = run(root.path(), &args);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        serde_json::to_value(
            envelope::<Report>(&output)
                .result
                .unwrap()
                .puppetdb
                .unwrap(),
        )
        .unwrap()
    };

    let view = ask(&[]);
    assert_eq!(view["ok"], serde_json::json!(true), "{view}");
    assert_eq!(view["error"], serde_json::Value::Null, "{view}");
    assert_eq!(view["metrics_error"], serde_json::Value::Null, "{view}");
    assert_eq!(
        view["client_cert"],
        serde_json::json!("/var/lib/puppet/ssl/certs/load1.example.com.pem")
    );
    assert_eq!(
        view["ca_cert"],
        serde_json::json!("/var/lib/puppet/ssl/certs/ca.pem")
    );
    assert_eq!(view["version"], serde_json::json!("8.4.1"));
    assert_eq!(view["queue_depth"], serde_json::json!(0));
    assert_eq!(view["commands"]["processed"], serde_json::json!(3));
    assert_eq!(
        view["commands"]["processing_max_ms"],
        serde_json::json!(901.572241)
    );

    // A certificate the CA did not sign, given by flag: PuppetDB (here, openssl) refuses it.
    let other = tls.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    assert!(openssl(
        &other,
        "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=OtherCA"
    ));
    assert!(client_cert(&other, &other, "stranger"));
    let cert = other.join("stranger.pem");
    let key = other.join("stranger.key");
    let view = ask(&[
        "--client-cert",
        cert.to_str().unwrap(),
        "--client-key",
        key.to_str().unwrap(),
    ]);
    assert_eq!(view["ok"], serde_json::json!(false), "{view}");
    assert_eq!(
        view["client_cert"],
        serde_json::json!(cert.to_str().unwrap())
    );
    assert!(
        view["error"]
            .as_str()
            .unwrap()
            .contains("GET https://localhost"),
        "{view}"
    );
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn secrets_never_show_in_the_answer_or_on_stderr() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let secrets = tempfile::tempdir().unwrap();
    let hash = secrets.path().join("hash");
    let password = secrets.path().join("password");
    std::fs::write(&hash, "$6$salt$SECRET-HASH:oops\n").unwrap();
    std::fs::write(&password, "SECRET-PASSWORD\n").unwrap();
    let output = run(
        root.path(),
        &[
            "clone",
            "create",
            "c1",
            "--base",
            "b",
            "--server",
            "puppet.example.com",
            "--certname",
            "c1.example.com",
            "--root-password-hash-file",
            hash.to_str().unwrap(),
            "--challenge-password-file",
            password.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stdout.contains("SECRET"), "{stdout}");
    assert!(!stderr.contains("SECRET"), "{stderr}");
    let error = failure(&output);
    assert_eq!(error.kind, "invalid-argument");
    assert_eq!(error.field.as_deref(), Some("root-password-hash-file"));
    assert!(error.message.contains(hash.to_str().unwrap()));
    assert!(entries(root.path()).is_empty());
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn base_create_refuses_unbuildable_combinations_before_touching_disk() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("etc")).unwrap();
    std::fs::write(
        root.path().join("etc/os-release"),
        "ID=debian\nVERSION_CODENAME=bookworm\n",
    )
    .unwrap();
    let before = entries(root.path());
    for (args, field) in [
        // No agent package in the distribution.
        (
            &["base", "create", "b1", "--os", "rocky", "--release", "9"][..],
            "puppet-source",
        ),
        (
            &[
                "base",
                "create",
                "b1",
                "--os",
                "rocky",
                "--release",
                "7",
                "--puppet-source",
                "openvox",
            ],
            "release",
        ),
        (
            &[
                "base",
                "create",
                "b1",
                "--os",
                "sles",
                "--release",
                "15.6",
                "--puppet-source",
                "puppet",
            ],
            "mirror",
        ),
        // PE without its primary server's CA: never an unverified download.
        (
            &[
                "base",
                "create",
                "b1",
                "--puppet-source",
                "pe",
                "--server",
                "pe.example.com",
            ],
            "pe-ca-cert",
        ),
        (
            &["base", "create", "b1", "--server", "pe.example.com"],
            "server",
        ),
    ] {
        let output = run(root.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = failure(&output);
        assert_eq!(error.kind, "invalid-argument", "{args:?}");
        assert_eq!(error.field.as_deref(), Some(field), "{args:?}");
    }
    assert_eq!(entries(root.path()), before);
}

// --- listings for people, the man page and the completions ---------------------------------

fn run_with_fake_systemd(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clone-army"))
        .args(args)
        .env("CLONE_ARMY_ROOT", root)
        .env(
            "CLONE_ARMY_SYSTEMD",
            format!("fake:{}", root.join("systemd.json").display()),
        )
        .output()
        .expect("run clone-army")
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn listings_answer_as_tables_and_their_errors_stay_the_envelope() {
    common::require_root();
    let root = fake_fleet();
    let output = run_with_fake_systemd(root.path(), &["clone", "list", "--format", "table"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "CLONE   STATE    BASE       RUN_MODE  CERTNAME  SERVER  PROBLEMS"
    );
    assert!(
        lines[1].starts_with("army-1  stopped  debian-12  -"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("army-2  stopped  debian-12  -"),
        "{text}"
    );

    // The default is still the envelope the providers read.
    let output = run_with_fake_systemd(root.path(), &["clone", "list"]);
    let list: Envelope<CloneList> = envelope(&output);
    assert_eq!(list.result.unwrap().clones.len(), 2);

    let output = run_with_fake_systemd(root.path(), &["base", "list", "--format", "table"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("BASE  OS  RELEASE  PUPPET  CREATED  CLONES  USED_BY\n"),
        "{text}"
    );

    // Without a systemd to ask, the table's failure is the JSON envelope, as ever.
    let output = run(root.path(), &["clone", "list", "--format", "table"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(failure(&output).kind, "systemd");

    let output = run_with_fake_systemd(
        root.path(),
        &["exec", "--format", "table", "--clone", "nope", "--", "true"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(failure(&output).kind, "not-found");
}

#[test]
fn a_listing_format_other_than_auto_json_or_table_is_refused_with_the_possible_values() {
    let root = tempfile::tempdir().unwrap();
    for args in [
        &["clone", "list", "--format", "prometheus"][..],
        &["base", "list", "--format", "yaml"],
        &["exec", "--all", "--format", "csv", "--", "true"],
        &["completions", "tcsh"],
    ] {
        let line = common::refused_by_parser(&run(root.path(), args));
        assert!(line.contains("possible values"), "{line}");
    }
}

#[test]
fn man_and_completions_print_text_for_anyone() {
    let root = tempfile::tempdir().unwrap();
    let output = run(root.path(), &["man"]);
    assert_eq!(output.status.code(), Some(0));
    let page = String::from_utf8(output.stdout).unwrap();
    assert!(page.contains("\n.TH clone-army 8 "), "{page}");
    for (shell, marker) in [
        ("bash", "complete -F _clone__army"),
        ("zsh", "#compdef clone-army"),
        ("fish", "complete -c clone-army"),
    ] {
        let output = run(root.path(), &["completions", shell]);
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(script.contains(marker), "{shell}");
    }
    assert!(entries(root.path()).is_empty());
}

/// `host docs` writes what `man` and `completions` print; `--check` fails until it has,
/// and again when a file changes; bash loads the completion it wrote.
#[test]
fn host_docs_installs_the_page_and_completions_and_checks_them() {
    let root = tempfile::tempdir().unwrap();
    let prefix = root.path().join("usr/local");
    let prefix_arg = prefix.to_str().unwrap();
    let check = ["host", "docs", "--check", "--prefix", prefix_arg];

    let output = run(root.path(), &check);
    assert_eq!(output.status.code(), Some(1));
    let error = failure(&output);
    assert_eq!(error.kind, "not-in-place");
    assert!(!prefix.exists());

    let output = run(root.path(), &["host", "docs", "--prefix", prefix_arg]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let answer: Envelope<serde_json::Value> = envelope(&output);
    let result = answer.result.unwrap();
    assert_eq!(result["changed"], true);
    let kinds: Vec<&str> = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "man",
            "bash-completion",
            "zsh-completion",
            "fish-completion"
        ]
    );

    let page = std::fs::read(prefix.join("share/man/man8/clone-army.8")).unwrap();
    assert_eq!(page, run(root.path(), &["man"]).stdout);
    let zsh = std::fs::read(prefix.join("share/zsh/site-functions/_clone-army")).unwrap();
    assert_eq!(zsh, run(root.path(), &["completions", "zsh"]).stdout);
    let fish =
        std::fs::read(prefix.join("share/fish/vendor_completions.d/clone-army.fish")).unwrap();
    assert_eq!(fish, run(root.path(), &["completions", "fish"]).stdout);
    let bash = prefix.join("share/bash-completion/completions/clone-army");
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!(". '{}' && complete -p clone-army", bash.display()))
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{loaded:?}");
    assert!(String::from_utf8_lossy(&loaded.stdout).contains("-F _clone__army"));

    let output = run(root.path(), &check);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let output = run(root.path(), &["host", "docs", "--prefix", prefix_arg]);
    let again: Envelope<serde_json::Value> = envelope(&output);
    assert_eq!(again.result.unwrap()["changed"], false);

    std::fs::write(&bash, "# edited by hand\n").unwrap();
    let output = run(root.path(), &check);
    assert_eq!(output.status.code(), Some(1));
    let error = failure(&output);
    assert!(error
        .message
        .contains("bash-completion/completions/clone-army"));
    assert!(!error.message.contains("man8"), "{}", error.message);

    let output = run(root.path(), &["host", "docs", "--prefix", "relative/dir"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(failure(&output).field.as_deref(), Some("prefix"));
}

#[test]
#[ignore = "needs root (the helper refuses to run otherwise); make test runs it"]
fn a_recorded_run_becomes_a_page_on_disk_and_the_answer_names_it() {
    common::require_root();
    let root = tempfile::tempdir().unwrap();
    let timeline = root.path().join("run.jsonl");
    let timeline_arg = timeline.to_str().unwrap();
    let recorded = run(
        root.path(),
        &[
            "record",
            "--output",
            timeline_arg,
            "--every",
            "1",
            "--samples",
            "2",
        ],
    );
    assert_eq!(recorded.status.code(), Some(0), "{recorded:?}");

    let page = root.path().join("pages/run.html");
    let page_arg = page.to_str().unwrap();
    // A summary is printed, never written: the refusal leaves nothing behind.
    let refused = run(
        root.path(),
        &[
            "report",
            "--from",
            timeline_arg,
            "--format",
            "table",
            "--output",
            page_arg,
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    let error = failure(&refused);
    assert_eq!(error.kind, "usage");
    assert!(error.message.contains("--output"), "{}", error.message);
    assert!(!page.exists());

    // Nor is a page's missing directory made: the refusal names output.
    let html_args = [
        "report",
        "--from",
        timeline_arg,
        "--format",
        "html",
        "--output",
        page_arg,
    ];
    let refused = run(root.path(), &html_args);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let error = failure(&refused);
    assert_eq!(error.field.as_deref(), Some("output"), "{}", error.message);
    assert!(
        error.message.contains("does not exist"),
        "{}",
        error.message
    );
    assert!(!page.parent().unwrap().exists());

    std::fs::create_dir(page.parent().unwrap()).unwrap();
    let written = run(root.path(), &html_args);
    assert_eq!(written.status.code(), Some(0), "{written:?}");
    let answer: Envelope<serde_json::Value> = envelope(&written);
    let result = answer.result.unwrap();
    assert_eq!(result["page"], page_arg);
    assert_eq!(result["samples"], 2);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(result["bytes"], html.len());
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert!(html.contains("id=\"runs-per-minute\""), "{html}");
}
