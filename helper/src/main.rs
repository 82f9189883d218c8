//! `clone-army`: parses the command line, checks it runs as root, dispatches to one
//! verb, and answers with exactly one JSON document on stdout.

mod base;
mod cli;
mod clone;
mod context;
mod error;
mod escape;
mod fsutil;
mod host;
mod lock;
mod mounts;
mod names;
mod output;
mod paths;
mod puppet_conf;
mod systemd;
mod units;

use clap::error::ErrorKind;
use clap::Parser;
use serde::Serialize;
use serde_json::Value;

use crate::cli::{BaseVerb, Cli, CloneVerb, Command};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::output::Envelope;
use crate::paths::Layout;
use crate::systemd::DbusSystemd;

fn main() {
    std::process::exit(run());
}

fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let rendered = e.render().to_string();
            eprint!("{rendered}");
            let message = rendered
                .lines()
                .next()
                .unwrap_or("invalid usage")
                .trim_start_matches("error: ")
                .to_owned();
            return fail(&Error::Usage(message));
        }
    };
    match dispatch(cli) {
        Ok(result) => {
            output::print(&Envelope::success(result));
            0
        }
        Err(e) => fail(&e),
    }
}

fn fail(error: &Error) -> i32 {
    eprintln!("clone-army: {error}");
    output::print(&Envelope::failure(error));
    error.exit_code()
}

fn dispatch(cli: Cli) -> Result<Value> {
    let euid = nix::unistd::geteuid();
    if !euid.is_root() {
        return Err(Error::NotRoot {
            euid: euid.as_raw(),
        });
    }
    let systemd = DbusSystemd::new();
    let ctx = Context::new(Layout::from_env(), &systemd);
    match cli.command {
        Command::Base { verb } => match verb {
            BaseVerb::Create(args) => json(base::create(
                &ctx,
                &base::BaseRequest {
                    name: args.name,
                    os: args.os,
                    release: args.release,
                    mirror: args.mirror,
                    puppet_source: args.puppet_source,
                    master: args.master,
                    pe_ca_cert: args.pe_ca_cert,
                },
            )),
            BaseVerb::List => json(base::list(&ctx)),
            BaseVerb::Remove { name } => json(base::remove(&ctx, &name)),
        },
        Command::Clone { verb } => match verb {
            CloneVerb::Create(args) => json(clone::create_with_secrets(
                &ctx,
                &clone::CloneRequest {
                    name: args.name,
                    base: args.base,
                    master: args.master,
                    certname: args.certname,
                    start: args.start,
                },
                &clone::SecretFiles {
                    root_password_hash_file: args.root_password_hash_file,
                    challenge_password_file: args.challenge_password_file,
                },
            )),
            CloneVerb::List => json(clone::list(&ctx)),
            CloneVerb::Start { names } => json(clone::start(&ctx, &names)),
            CloneVerb::Stop { names } => json(clone::stop(&ctx, &names)),
            CloneVerb::Remove { names } => json(clone::remove(&ctx, &names)),
            CloneVerb::Configure(args) => json(clone::configure(
                &ctx,
                &args.name,
                args.master.as_deref(),
                args.certname.as_deref(),
            )),
        },
    }
}

fn json<T: Serialize>(result: Result<T>) -> Result<Value> {
    serde_json::to_value(result?).map_err(|e| Error::Internal(e.to_string()))
}
