//! The command line, as docs/PROTOCOL.md documents it ([`Cli`]), one file per verb group with
//! its arguments and its `run` ([`base`], [`clone`], [`exec`], [`host`], [`ssl`],
//! [`report`], [`record`], [`ramp`], [`twin`]), their dispatch ([`dispatch`]), what a verb answers
//! ([`answer`]) and in which `--format` ([`mod@format`]), where a long verb's progress goes
//! ([`progress`]: a status line on a terminal, nothing otherwise), what a refused command line gets
//! ([`usage`]), the examples `--help` shows ([`examples`]), and the man page and shell
//! completions made from it ([`docs`]).

pub mod answer;
pub mod args;
pub mod base;
pub mod clone;
pub mod dispatch;
pub mod docs;
pub mod examples;
pub mod exec;
pub mod format;
pub mod host;
pub mod progress;
pub mod ramp;
pub mod record;
pub mod report;
pub mod ssl;
pub mod twin;
pub mod usage;

use clap::{Parser, Subcommand};

pub use args::{ListArgs, ListFormat, ViewArgs};
use base::BaseVerb;
use clone::CloneVerb;
use exec::ExecArgs;
use host::HostVerb;
use ramp::RampVerb;
use record::RecordArgs;
use report::ReportArgs;
use ssl::SslVerb;
use twin::TwinVerb;

#[derive(Debug, Parser)]
#[command(
    name = "clone-army",
    version,
    about = "Runs a fleet of puppet-agent clones as systemd-nspawn containers over OverlayFS.",
    long_about = "Runs a fleet of puppet-agent clones as systemd-nspawn containers over OverlayFS.\n\
                  Answers with one JSON document on stdout (see the module's docs/PROTOCOL.md), or a table for people\n\
                  where a verb has one and stdout is a terminal. Warnings and progress go to stderr; base create,\n\
                  clone start and clone create-many show theirs as a status line only when stderr is a terminal.",
    after_help = examples::PROGRAM
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size of the largest variant (clone create with its shape
// flags) costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Base images the clones' overlays sit on.
    Base {
        #[command(subcommand)]
        verb: BaseVerb,
    },
    /// Clones: overlay, mount unit, service.
    Clone {
        #[command(subcommand)]
        verb: CloneVerb,
    },
    /// Run a command in running clones, N at a time (a burst), and report each exit.
    Exec(ExecArgs),
    /// The host: kernel limits a large fleet needs, and its capacity for clones.
    Host {
        #[command(subcommand)]
        verb: HostVerb,
    },
    /// The clones' SSL directories, kept per certname outside the clones.
    Ssl {
        #[command(subcommand)]
        verb: SslVerb,
    },
    /// Every clone's last run, the fleet's figures and, with --server and --puppetdb, the
    /// server's and PuppetDB's views (PuppetDB's with every load host's clones).
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Sample the fleet, the server's and PuppetDB's views and the host every few seconds
    /// into a timeline of JSON lines, until a duration, a count or SIGTERM.
    #[command(after_help = examples::RECORD)]
    Record(RecordArgs),
    /// A stepped load: start stopped clones a step at a time until the runs cross a bound,
    /// and keep every step's figures in a baseline file; say how long one can take; or
    /// report such a file.
    Ramp {
        #[command(subcommand)]
        verb: RampVerb,
    },
    /// Real nodes' records, read into what the twins that stand in for them take.
    Twin {
        #[command(subcommand)]
        verb: TwinVerb,
    },
    /// The rules the helper applies (names, ranges, defaults, capacity, kinds); needs no root.
    Schema,
    /// Print the shell completion script (not JSON); needs no root.
    Completions {
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// Print the man page, roff, section 8 (not JSON); needs no root.
    Man,
}

/// The shells `completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

#[cfg(test)]
mod tests {
    use super::usage::usage_message;
    use super::*;
    use clap::CommandFactory;

    fn usage_of(args: &[&str]) -> String {
        let error = Cli::try_parse_from(args).unwrap_err();
        usage_message(&error.render().to_string())
    }

    #[test]
    fn usage_messages_name_the_argument_and_what_is_allowed() {
        assert_eq!(
            usage_of(&["clone-army", "base", "create", "b", "--os", "windows"]),
            "invalid value 'windows' for '--os <OS>' [possible values: debian, ubuntu, rhel, rocky, almalinux, centos, sles, opensuse]"
        );
        let unknown = usage_of(&["clone-army", "clone", "list", "--bogus"]);
        assert!(
            unknown
                .starts_with("unexpected argument '--bogus' found; Usage: clone-army clone list"),
            "{unknown}"
        );
        let missing = usage_of(&["clone-army", "clone", "create", "c1", "--base", "b"]);
        assert!(
            missing.starts_with(
                "the following required arguments were not provided: --certname <CERTNAME>; Usage: "
            ),
            "{missing}"
        );
    }

    #[test]
    fn server_port_is_a_port_on_create_and_configure() {
        let create = |port: &str| {
            let args = [
                "clone-army",
                "clone",
                "create",
                "c1",
                "--base",
                "b",
                "--server",
                "m",
                "--server-port",
                port,
                "--certname",
                "c",
            ];
            Cli::try_parse_from(args).map(|cli| match cli.command {
                Command::Clone {
                    verb: CloneVerb::Create(a),
                } => a.server_port,
                other => panic!("{other:?}"),
            })
        };
        assert_eq!(create("8141").unwrap(), Some(8141));
        assert_eq!(create("65535").unwrap(), Some(65535));
        for bad in ["0", "65536", "http"] {
            let error = usage_message(&create(bad).unwrap_err().render().to_string());
            assert!(
                error.starts_with(&format!("invalid value '{bad}' for '--server-port <PORT>'")),
                "{error}"
            );
        }
        let configure = Cli::try_parse_from([
            "clone-army",
            "clone",
            "configure",
            "c1",
            "--server-port",
            "8142",
        ])
        .unwrap();
        match configure.command {
            Command::Clone {
                verb: CloneVerb::Configure(a),
            } => assert_eq!(a.server_port, Some(8142)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shape_flags_parse_on_create_and_configure() {
        let cli = Cli::try_parse_from([
            "clone-army",
            "clone",
            "create",
            "c1",
            "--base",
            "b",
            "--server",
            "m",
            "--certname",
            "c",
            "--run-mode",
            "timer",
            "--runinterval",
            "900",
            "--splay",
            "5",
            "--phase-index",
            "2",
            "--phase-count",
            "8",
            "--memory-max",
            "512M",
            "--cpu-quota",
            "50%",
            "--tasks-max",
            "256",
            "--facts-file",
            "/f.json",
            "--generated-facts",
            "500",
            "--churn-percent",
            "15",
        ])
        .unwrap();
        let Command::Clone {
            verb: CloneVerb::Create(args),
        } = cli.command
        else {
            panic!("not a clone create");
        };
        let request = args.shape.into_request();
        assert_eq!(
            request.run_mode,
            Some(crate::clone::run_mode::RunMode::Timer)
        );
        assert_eq!(
            (request.phase_index, request.phase_count),
            (Some(2), Some(8))
        );
        assert_eq!(request.cpu_quota.as_deref(), Some("50%"));
        assert_eq!(request.churn_percent, Some(15));

        let configure =
            Cli::try_parse_from(["clone-army", "clone", "configure", "c1", "--splay", "0"]);
        assert!(configure.is_ok());
        assert_eq!(
            usage_of(&[
                "clone-army",
                "clone",
                "configure",
                "c1",
                "--run-mode",
                "cron"
            ]),
            "invalid value 'cron' for '--run-mode <MODE>' [possible values: daemon, timer, manual, apply]"
        );
        let lonely = usage_of(&[
            "clone-army",
            "clone",
            "configure",
            "c1",
            "--phase-index",
            "1",
        ]);
        assert!(
            lonely.starts_with(
                "the following required arguments were not provided: --phase-count <N>"
            ),
            "{lonely}"
        );
    }

    #[test]
    fn master_is_taken_for_server_where_a_server_is_given() {
        let server_of = |args: &[&str]| match Cli::try_parse_from(args).unwrap().command {
            Command::Clone {
                verb: CloneVerb::Create(a),
            } => a.server,
            Command::Clone {
                verb: CloneVerb::Configure(a),
            } => a.server,
            Command::Base {
                verb: BaseVerb::Create(a),
            } => a.server,
            other => panic!("{other:?}"),
        };
        let create = ["clone-army", "clone", "create", "c1", "--base", "b"];
        let old = [
            &create[..],
            &["--master", "m.example.com", "--certname", "c"],
        ]
        .concat();
        assert_eq!(server_of(&old).as_deref(), Some("m.example.com"));
        let configure = ["clone-army", "clone", "configure", "c1", "--master", "m"];
        assert_eq!(server_of(&configure).as_deref(), Some("m"));
        let base = [
            "clone-army",
            "base",
            "create",
            "b",
            "--master",
            "pe.example.com",
        ];
        assert_eq!(server_of(&base).as_deref(), Some("pe.example.com"));
        let mut cli = Cli::command();
        let create = cli.find_subcommand_mut("clone").unwrap();
        let help = create
            .find_subcommand_mut("create")
            .unwrap()
            .render_long_help();
        let help = help.to_string();
        assert!(help.contains("--server"), "{help}");
        assert!(
            !help.contains("--master <"),
            "the old word stays out of --help: {help}"
        );
    }

    /// A batch line is parsed apart from the whole command line, and is refused in the
    /// words `clone create` refuses the same arguments with.
    #[test]
    fn a_batch_line_is_refused_as_clone_create_refuses_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("batch.jsonl");
        for args in [
            &["c1", "--bogus"][..],
            &["c1", "--base", "b"],
            &["c1", "--base", "b", "--certname", "c", "--run-mode", "cron"],
            &["c1", "--base", "b", "--certname", "c", "--server-port", "0"],
            &[],
            &["--help"],
            &["--version"],
        ] {
            std::fs::write(&file, serde_json::to_string(args).unwrap()).unwrap();
            let refused = clone::create_many::requests(&file).unwrap_err();
            let argv = [&["clone-army", "clone", "create"][..], args].concat();
            assert_eq!(
                refused.to_string(),
                format!("file \"line 1\" is invalid: {}", usage_of(&argv)),
                "{args:?}"
            );
        }
    }

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}

/// Whatever the command line, parsing ends in a value or an error that becomes one line
/// of `message` (never a panic, never an empty or multi-line message).
#[cfg(test)]
mod properties {
    use super::usage::usage_message;
    use super::*;
    use proptest::prelude::*;

    fn words() -> impl Strategy<Value = Vec<String>> {
        let word = prop_oneof![
            Just("clone".to_owned()),
            Just("base".to_owned()),
            Just("exec".to_owned()),
            Just("create".to_owned()),
            Just("--".to_owned()),
            Just("--all".to_owned()),
            Just("--clone".to_owned()),
            Just("--concurrency".to_owned()),
            Just("--os".to_owned()),
            Just("--base".to_owned()),
            "-{0,2}[a-z0-9=]{0,8}",
            any::<String>(),
        ];
        proptest::collection::vec(word, 0..8)
    }

    /// Every verb's words (`clone create`, not `clone` alone) with the long options it takes, read from the
    /// parser itself, so that a new verb is generated without anyone adding it here.
    fn verbs() -> Vec<(Vec<String>, Vec<String>)> {
        fn walk(
            command: &clap::Command,
            path: Vec<String>,
            out: &mut Vec<(Vec<String>, Vec<String>)>,
        ) {
            let options = command
                .get_arguments()
                .filter_map(clap::Arg::get_long)
                .map(|long| format!("--{long}"))
                .collect();
            if !command.has_subcommands() {
                out.push((path.clone(), options));
            }
            for sub in command.get_subcommands() {
                let mut path = path.clone();
                path.push(sub.get_name().to_owned());
                walk(sub, path, out);
            }
        }
        let mut out = Vec::new();
        walk(
            &<Cli as clap::CommandFactory>::command(),
            Vec::new(),
            &mut out,
        );
        out
    }

    /// Command lines: arbitrary words, and a verb followed by its own options and plain
    /// values. Arbitrary words are almost never a command line, so the parsed side would
    /// go untested.
    fn command_lines() -> impl Strategy<Value = Vec<String>> {
        let verb = prop::sample::select(verbs()).prop_flat_map(|(path, options)| {
            let values =
                ["c1", "debian-12", "1", "puppet.example.com", "/tmp/x"].map(str::to_owned);
            // An option with a value after it, or a value alone (a positional argument).
            let words: Vec<Vec<String>> = options
                .iter()
                .flat_map(|option| {
                    values
                        .iter()
                        .map(move |value| vec![option.clone(), value.clone()])
                })
                .chain(values.iter().map(|value| vec![value.clone()]))
                .collect();
            proptest::collection::vec(prop::sample::select(words), 0..2)
                .prop_map(move |rest| [path.clone(), rest.concat()].concat())
        });
        prop_oneof![1 => words(), 3 => verb]
    }

    fn parses(args: &[String]) -> bool {
        Cli::try_parse_from(std::iter::once("clone-army").chain(args.iter().map(String::as_str)))
            .is_ok()
    }

    #[test]
    fn the_command_line_generator_gives_both_parsed_and_refused_lines() {
        crate::sys::test_reach::assert_both_sides(
            "command lines that parse",
            &command_lines(),
            |args| parses(args),
            20,
        );
    }

    proptest! {
        #[test]
        fn any_command_line_parses_or_explains_itself(args in command_lines()) {
            let argv = std::iter::once("clone-army".to_owned()).chain(args);
            if let Err(error) = Cli::try_parse_from(argv) {
                let message = usage_message(&error.render().to_string());
                prop_assert!(!message.trim().is_empty());
                // One line in the envelope, even when a value had newlines in it.
                prop_assert!(!message.contains('\n'), "{:?}", message);
            }
        }
    }
}
