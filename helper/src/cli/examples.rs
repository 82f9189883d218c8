//! The examples `--help` shows after the options (clap's `after_help`) for the program and
//! its main verbs. Each line that begins with `clone-army` is a whole command line, with
//! no quoting and nothing for a shell to do, and a test parses every one of them with the
//! parser itself, so an example that no longer parses fails the build's tests. A `#`
//! starts a comment to the end of the line.

pub const PROGRAM: &str = "\
Examples:
  clone-army base create debian-12
  clone-army clone create clone1 --base debian-12 --server puppet.example.com --certname clone1.load1.example.com --start
  clone-army clone list                   # a table on a terminal, JSON in a pipe
  clone-army report --server puppet.example.com";

pub const BASE_CREATE: &str = "\
Examples:
  clone-army base create debian-12                    # the host's OS and release
  clone-army base create rocky-9 --os rocky --release 9
  clone-army base create jammy --os ubuntu --release jammy --mirror http://archive.ubuntu.com/ubuntu";

pub const CLONE_CREATE: &str = "\
Examples:
  clone-army clone create clone1 --base debian-12 --server puppet.example.com --certname clone1.load1.example.com --start
  clone-army clone create clone2 --base debian-12 --server puppet.example.com --certname clone2.load1.example.com --run-mode timer --runinterval 900 --splay 60
  clone-army clone create lab1 --base debian-12 --certname lab1.example.com --run-mode apply --apply-source /srv/site";

pub const CLONE_CREATE_MANY: &str = "\
Examples:
  clone-army clone create-many /root/clones.jsonl
  # one clone a line of the file, e.g.
  # [\"clone3\", \"--base\", \"debian-12\", \"--server\", \"puppet.example.com\", \"--certname\", \"clone3.example.com\"]";

pub const CLONE_LIST: &str = "\
Examples:
  clone-army clone list                   # a table on a terminal, JSON in a pipe
  clone-army clone list --format json     # the envelope, whatever stdout is
  clone-army clone list --format table";

pub const REPORT: &str = "\
Examples:
  clone-army report                       # a table on a terminal, JSON in a pipe
  clone-army report --server puppet.example.com --puppetdb puppetdb.example.com
  clone-army report --format prometheus
  clone-army report --from /var/log/puppet-clone-army/timeline.jsonl --format html --output /root/run.html";

pub const RECORD: &str = "\
Examples:
  clone-army record --output /var/tmp/run.jsonl --duration 3600
  clone-army record --output /var/tmp/run.jsonl --server puppet.example.com --puppetdb puppetdb.example.com
  clone-army report --from /var/tmp/run.jsonl --format html --output /var/tmp/run.html";

pub const RAMP_RUN: &str = "\
Examples:
  clone-army ramp run --output /var/tmp/ramp.json --step 10 --max-p95 60 --server puppet.example.com
  clone-army ramp run --output /var/tmp/ramp.json --step 20 --max-error-rate 1 --timeline /var/tmp/ramp.jsonl
  clone-army ramp report /var/tmp/ramp.json";

pub const RAMP_LONGEST: &str = "\
Examples:
  clone-army ramp longest --output /var/tmp/ramp.json --step 25 --max-clones 500 --interval 1800 --max-p95 30
  clone-army ramp longest --output /var/tmp/ramp.json --step 10 --max-clones 40 --repeat 3 --max-p95 60";

pub const TWIN_IMPORT: &str = "\
Examples:
  clone-army twin list --facts-dir /root/nodes     # what each node's twin would take
  clone-army twin import --facts-dir /root/nodes
  clone-army twin list                             # the imported set";

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::cli::Cli;

    /// The command lines of an `after_help`: its lines that begin with `clone-army`, each
    /// without its comment, as words.
    fn command_lines(text: &str) -> Vec<Vec<String>> {
        text.lines()
            .map(|line| line.split('#').next().unwrap_or_default().trim())
            .filter(|line| line.starts_with("clone-army "))
            .map(|line| line.split_whitespace().map(str::to_owned).collect())
            .collect()
    }

    /// Every `after_help` of the program and its verbs, by the verb's words.
    fn after_helps() -> Vec<(String, String)> {
        fn walk(command: &clap::Command, path: String, out: &mut Vec<(String, String)>) {
            if let Some(text) = command.get_after_help() {
                out.push((path.clone(), text.to_string()));
            }
            for sub in command.get_subcommands() {
                walk(sub, format!("{path} {}", sub.get_name()), out);
            }
        }
        let mut out = Vec::new();
        walk(&Cli::command(), "clone-army".to_owned(), &mut out);
        out
    }

    #[test]
    fn every_example_parses() {
        let mut parsed = 0;
        for (verb, text) in after_helps() {
            for line in command_lines(&text) {
                assert!(
                    line.iter()
                        .all(|word| !word.contains(['\'', '"', '$', '|', '>'])),
                    "{verb}: {line:?} needs a shell"
                );
                if let Err(error) = Cli::try_parse_from(&line) {
                    panic!("{verb}: the example {line:?} does not parse: {error}");
                }
                parsed += 1;
            }
        }
        assert!(parsed >= 20, "{parsed} examples");
    }

    #[test]
    fn the_program_and_its_main_verbs_show_two_to_four_examples_of_themselves() {
        let shown = after_helps();
        for verb in [
            "clone-army",
            "clone-army base create",
            "clone-army clone create",
            "clone-army clone create-many",
            "clone-army clone list",
            "clone-army report",
            "clone-army record",
            "clone-army ramp run",
            "clone-army twin import",
        ] {
            let text = &shown
                .iter()
                .find(|(path, _)| path == verb)
                .unwrap_or_else(|| panic!("{verb} has no examples"))
                .1;
            assert!(text.starts_with("Examples:\n"), "{verb}: {text}");
            let lines = command_lines(text);
            assert!((1..=4).contains(&lines.len()), "{verb}: {lines:?}");
            // Each verb's own examples begin with it (the program's with any verb).
            assert!(
                lines.iter().any(|line| line.join(" ").starts_with(verb)),
                "{verb}: {lines:?}"
            );
            assert!(text.lines().count() <= 5, "{verb}: {text}");
        }
    }

    /// The batch line `clone create-many`'s example shows is one `clone create` takes.
    #[test]
    fn the_create_many_line_shown_is_a_clone_create() {
        let line = CLONE_CREATE_MANY
            .lines()
            .find_map(|line| line.trim().strip_prefix("# ["))
            .unwrap();
        let args: Vec<String> = serde_json::from_str(&format!("[{line}")).unwrap();
        let argv = ["clone-army", "clone", "create"]
            .into_iter()
            .map(str::to_owned)
            .chain(args);
        Cli::try_parse_from(argv).unwrap();
    }
}
