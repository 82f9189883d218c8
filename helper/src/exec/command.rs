//! The command line that runs one burst command inside one clone.
//!
//! A pure function, so the exact argv is snapshot-tested: the user's command goes after
//! `--` as separate arguments, never through a shell, whatever characters it holds.

/// The transient unit's name inside the clone. Unique per helper process, so two bursts
/// at once (from two `clone-army exec`s) never collide in one clone.
pub fn transient_unit(helper_pid: u32) -> String {
    format!("clone-army-exec-{helper_pid}.service")
}

/// `systemd-run --machine=<clone> --unit=<unit> --wait --pipe --quiet --collect -- COMMAND...`
///
/// - `--wait --pipe`: block until the command ends, with its stdin/stdout/stderr connected
///   to ours, and exit with its exit status;
/// - `--quiet`: no "Running as unit" chatter mixed into the command's output;
/// - `--collect`: the transient unit is garbage-collected even when it failed, so the
///   next burst can reuse the name and failed units do not pile up in the clone;
/// - `--unit`: a known name, so a command that outlives its timeout can be stopped.
pub fn systemd_run_argv(clone: &str, unit: &str, command: &[String]) -> Vec<String> {
    let mut argv = vec![
        "systemd-run".to_owned(),
        format!("--machine={clone}"),
        format!("--unit={unit}"),
        "--wait".to_owned(),
        "--pipe".to_owned(),
        "--quiet".to_owned(),
        "--collect".to_owned(),
        "--".to_owned(),
    ];
    argv.extend(command.iter().cloned());
    argv
}

/// `systemctl --machine=<clone> --no-block stop -- <unit>`: stops a command that outlived
/// its timeout (killing `systemd-run` alone would leave it running in the clone).
pub fn stop_transient_argv(clone: &str, unit: &str) -> Vec<String> {
    vec![
        "systemctl".to_owned(),
        format!("--machine={clone}"),
        "--no-block".to_owned(),
        "stop".to_owned(),
        "--".to_owned(),
        unit.to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn systemd_run_argv_snapshot() {
        let unit = transient_unit(4242);
        insta::assert_debug_snapshot!(systemd_run_argv(
            "clone1",
            &unit,
            &strings(&["puppet", "agent", "-t"])
        ));
    }

    #[test]
    fn the_command_is_passed_verbatim_after_the_separator() {
        // Shell syntax and option-looking words stay single, literal arguments.
        let command = strings(&["sh", "-c", "echo $HOSTNAME; exit 3", "--machine=other"]);
        let argv = systemd_run_argv("c1", &transient_unit(1), &command);
        let separator = argv.iter().position(|a| a == "--").unwrap();
        assert_eq!(argv[separator + 1..], command[..]);
        assert_eq!(
            argv.iter().filter(|a| a.starts_with("--machine=")).count(),
            2,
            "only ours before the separator, the user's after it"
        );
        assert_eq!(argv[1], "--machine=c1");
    }

    #[test]
    fn stop_argv_snapshot() {
        insta::assert_debug_snapshot!(stop_transient_argv("clone1", &transient_unit(4242)));
    }
}
