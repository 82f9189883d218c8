//! From a parsed command line to one answer: the verb group it names runs it (the root
//! check is theirs: the rules, the documents and what reads only its own inputs need
//! none), and exactly one JSON document is printed on stdout (or, for `report --format
//! table|prometheus`, the listings' `--format table` (`auto` on a terminal), `man` and
//! `completions`, their text), with the exit code docs/PROTOCOL.md gives for the outcome.
//! Errors of a verb that ran are always the JSON envelope; a command line the parser
//! refuses runs no verb and gets one line on stderr ([`usage`]).

use clap::error::ErrorKind;
use clap::Parser;

use super::answer::{answer, print_bytes};
use super::{
    base, clone, docs, exec, host, progress, ramp, record, report, ssl, twin, usage, Cli, Command,
};
use crate::protocol::answers::{self, Envelope};
use crate::protocol::warnings;
use crate::schema;

/// Parses the command line, runs the verb and prints its answer; the process's exit code.
pub fn run() -> i32 {
    warnings::say_through(progress::say);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let args: Vec<String> = std::env::args_os()
                .skip(1)
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect();
            return usage::refuse(&e, &args);
        }
    };
    match cli.command {
        Command::Base { verb } => answer(base::run(verb)),
        Command::Clone { verb } => answer(clone::run(verb)),
        Command::Exec(args) => answer(exec::run(args)),
        Command::Host { verb } => answer(host::run(verb, docs::documents)),
        Command::Ssl { verb } => answer(ssl::run(verb)),
        Command::Report(args) => report::run(&args),
        Command::Record(args) => answer(record::run(args)),
        Command::Ramp { verb } => answer(ramp::run(verb)),
        Command::Twin { verb } => answer(twin::run(verb)),
        // Rules and documents only: nothing on the host is read, so anyone may ask.
        Command::Schema => {
            answers::print(&Envelope::success(schema::schema()));
            0
        }
        Command::Man => {
            print_bytes(&docs::man_page());
            0
        }
        Command::Completions { shell } => {
            print_bytes(&docs::completion(shell));
            0
        }
    }
}
