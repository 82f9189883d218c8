//! A command line the parser refuses (an unknown verb or flag, a missing argument, a value
//! out of its set): no verb ran, so there is no answer and nothing goes to stdout. A
//! person gets one line on stderr, clap's error with what is allowed and where to read
//! more, and the exit code of bad usage. The same error read as one line is also the
//! `message` of a `clone create-many` line the parser refused ([`usage_message`]).

use clap::error::ErrorKind;
use clap::CommandFactory;

use super::Cli;
use crate::protocol::error::EXIT_USAGE;
use crate::sys::escape;

/// Reports a command line clap refused on stderr; the process's exit code. `args` are the
/// arguments after the program's name.
pub fn refuse(error: &clap::Error, args: &[String]) -> i32 {
    let rendered = error.render().to_string();
    if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // `clone-army` or `clone-army clone` alone: the verbs to choose from, as clap
        // shows them, is the most useful thing to print.
        eprint!("{rendered}");
    } else {
        eprintln!("{}", stderr_line(&rendered, &verb_of(args)));
    }
    EXIT_USAGE
}

/// The program's name, as the line and the verbs begin with it.
const BIN: &str = "clone-army";

/// clap's rendered error, read apart: what it says (a line of its own, or an indented
/// line such as the possible values joined to the line before it), its tips (a similar
/// verb or flag) and the usage of the verb it refused.
struct Sections {
    said: Vec<String>,
    tips: Vec<String>,
    usage: Option<String>,
}

fn sections(rendered: &str) -> Sections {
    let mut sections = Sections {
        said: Vec::new(),
        tips: Vec::new(),
        usage: None,
    };
    // Where an indented line goes: the last line said, or the usage after it.
    let mut in_usage = false;
    for raw in rendered.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with("For more information") {
            continue;
        }
        if let Some(tip) = line.strip_prefix("tip:") {
            sections.tips.push(tip.trim().to_owned());
            continue;
        }
        if !raw.starts_with(' ') {
            in_usage = line.starts_with("Usage:");
            let line = line.strip_prefix("error: ").unwrap_or(line).to_owned();
            if in_usage {
                sections.usage = Some(line);
            } else {
                sections.said.push(line);
            }
            continue;
        }
        let last = if in_usage {
            sections.usage.as_mut()
        } else {
            sections.said.last_mut()
        };
        match last {
            Some(last) => {
                let separator = if last.ends_with('>') || last.ends_with(']') {
                    ", "
                } else {
                    " "
                };
                last.push_str(separator);
                last.push_str(line);
            }
            None => sections.said.push(line.to_owned()),
        }
    }
    sections
}

/// clap's rendered error as one line for the envelope's `message`: the error itself
/// with what is allowed (clap puts possible values, missing arguments and the usage on
/// lines of their own), without the tips and the pointer to `--help`.
pub fn usage_message(rendered: &str) -> String {
    let Sections { said, usage, .. } = sections(rendered);
    let parts: Vec<String> = said.into_iter().chain(usage).collect();
    if parts.is_empty() {
        "invalid usage".to_owned()
    } else {
        parts.join("; ")
    }
}

/// The verb the command line names as far as it names one (`clone list --bogus` names
/// `clone-army clone list`), whose `--help` says what it takes.
fn verb_of(args: &[String]) -> String {
    let mut command = Cli::command();
    let mut words = vec![BIN.to_owned()];
    for arg in args {
        let Some(sub) = command.find_subcommand(arg).cloned() else {
            break;
        };
        words.push(sub.get_name().to_owned());
        command = sub;
    }
    words.join(" ")
}

/// clap's rendered error as the one line on stderr: `clone-army: ` and what it says, its
/// tip, and the `--help` of `verb` to read; control characters in it made visible.
fn stderr_line(rendered: &str, verb: &str) -> String {
    let Sections { said, tips, .. } = sections(rendered);
    let mut line = format!(
        "{BIN}: {}",
        if said.is_empty() {
            "invalid usage".to_owned()
        } else {
            said.join("; ")
        }
    );
    for tip in tips {
        line.push_str(&format!(" ({tip})"));
    }
    line.push_str(&format!("; see '{verb} --help'"));
    escape::visible(&line).into_owned()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn line_of(args: &[&str]) -> String {
        let error =
            Cli::try_parse_from(std::iter::once(BIN).chain(args.iter().copied())).unwrap_err();
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        stderr_line(&error.render().to_string(), &verb_of(&args))
    }

    #[test]
    fn a_refused_command_line_is_one_line_with_the_help_to_read() {
        assert_eq!(
            line_of(&["bogus"]),
            "clone-army: unrecognized subcommand 'bogus'; see 'clone-army --help'"
        );
        assert_eq!(
            line_of(&["bse"]),
            "clone-army: unrecognized subcommand 'bse' (a similar subcommand exists: 'base'); \
             see 'clone-army --help'"
        );
        assert_eq!(
            line_of(&["clone", "list", "--bogus"]),
            "clone-army: unexpected argument '--bogus' found; see 'clone-army clone list --help'"
        );
        assert_eq!(
            line_of(&["clone", "create", "c1", "--base", "b"]),
            "clone-army: the following required arguments were not provided: \
             --certname <CERTNAME>; see 'clone-army clone create --help'"
        );
        assert_eq!(
            line_of(&["base", "create", "b", "--os", "windows"]),
            "clone-army: invalid value 'windows' for '--os <OS>' [possible values: debian, \
             ubuntu, rhel, rocky, almalinux, centos, sles, opensuse]; \
             see 'clone-army base create --help'"
        );
    }

    #[test]
    fn a_value_with_control_characters_reaches_the_terminal_as_one_line_without_them() {
        let line = line_of(&["clone", "list", "--format", "a\nb\x07\x1b[2J\u{9b}c\td"]);
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.starts_with("clone-army: invalid value 'a"), "{line}");
    }

    #[test]
    fn the_verb_is_as_far_as_the_command_line_names_one() {
        let verb =
            |args: &[&str]| verb_of(&args.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>());
        assert_eq!(verb(&["exec", "--all", "true"]), "clone-army exec");
        assert_eq!(verb(&["clone", "lst"]), "clone-army clone");
        assert_eq!(
            verb(&["ramp", "report", "report"]),
            "clone-army ramp report"
        );
        assert_eq!(verb(&["--bogus", "clone"]), "clone-army");
        assert_eq!(verb(&[]), "clone-army");
    }
}
