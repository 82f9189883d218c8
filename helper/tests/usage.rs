//! A command line the parser refuses runs no verb: nothing on stdout (there is no
//! answer), one line on stderr saying what was wrong and which `--help` to read, exit 2.
//! Errors of a verb that ran are still the JSON envelope (tests/cli.rs, tests/bad_input.rs).

mod common;

use common::{refused_by_parser, run_in as run};

#[test]
fn an_unknown_verb_an_unknown_flag_and_a_missing_argument_are_one_line_on_stderr() {
    let root = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            &["bogus"][..],
            "clone-army: unrecognized subcommand 'bogus'; see 'clone-army --help'",
        ),
        (
            &["clone", "explode", "c1"],
            "clone-army: unrecognized subcommand 'explode'; see 'clone-army clone --help'",
        ),
        (
            &["clone", "list", "--bogus"],
            "clone-army: unexpected argument '--bogus' found; see 'clone-army clone list --help'",
        ),
        (
            &["clone", "create", "c1", "--base", "b"],
            "clone-army: the following required arguments were not provided: \
             --certname <CERTNAME>; see 'clone-army clone create --help'",
        ),
    ] {
        assert_eq!(refused_by_parser(&run(root.path(), args)), says, "{args:?}");
    }
    assert!(std::fs::read_dir(root.path()).unwrap().next().is_none());
}

#[test]
fn every_kind_of_refused_command_line_is_one_line_on_stderr() {
    let root = tempfile::tempdir().unwrap();
    for args in [
        &["clone", "start"][..],
        &["base", "create", "b1", "--os", "plan9"],
        &["clone", "configure", "c1", "--phase-index", "1"],
        &["exec", "--all", "--clone", "c1", "--", "true"],
        &["exec", "--all", "--concurrency", "many", "--", "true"],
        &["report", "--format"],
        &["--bogus"],
    ] {
        refused_by_parser(&run(root.path(), args));
    }
}

/// A similar verb or flag, as clap suggests it, is on the same line.
#[test]
fn the_tip_for_a_typo_is_on_the_same_line() {
    let root = tempfile::tempdir().unwrap();
    let line = refused_by_parser(&run(root.path(), &["clone", "list", "--fromat", "json"]));
    assert!(
        line.contains("(a similar argument exists: '--format')"),
        "{line}"
    );
}

/// No verb at all: the verbs to choose from, as `--help` shows them, on stderr; still
/// nothing on stdout and exit 2.
#[test]
fn no_verb_prints_the_verbs_on_stderr() {
    let root = tempfile::tempdir().unwrap();
    for args in [&[][..], &["clone"]] {
        let output = run(root.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains("Usage: clone-army"), "{stderr}");
        assert!(stderr.contains("Commands:"), "{stderr}");
    }
}
