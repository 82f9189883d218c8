//! From a parsed command line to one answer: the root check, one verb, and exactly one
//! JSON document on stdout (or, for `report --format table|prometheus`, the listings'
//! `--format table`, `man` and `completions`, their text); the exit code PROTOCOL.md
//! gives for the outcome. Errors are always the JSON envelope.

use clap::error::ErrorKind;
use clap::Parser;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

use super::{
    docs, usage_message, BaseVerb, Cli, CloneVerb, Command, HostVerb, ListFormat, RampVerb,
    ReportArgs, SslVerb,
};
use crate::context::Context;
use crate::protocol::answers;
use crate::protocol::answers::Envelope;
use crate::protocol::error::{Error, Result};
use crate::protocol::warnings;
use crate::report::render::Format;
use crate::sys::escape;
use crate::sys::paths::Layout;
use crate::systemd::fake_file;
use crate::{base, clone, exec, host, ramp, record, report, schema};

/// Parses the command line, runs the verb and prints its answer; the process's exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let rendered = e.render().to_string();
            eprint!("{rendered}");
            return fail(&Error::Usage(usage_message(&rendered)));
        }
    };
    if let Command::Report(args) = &cli.command {
        return run_report(args);
    }
    // Rules and documents only: nothing on the host is read, so anyone may ask.
    match &cli.command {
        Command::Schema => {
            answers::print(&Envelope::success(schema::schema()));
            return 0;
        }
        Command::Man => {
            print_bytes(&docs::man_page());
            return 0;
        }
        Command::Completions { shell } => {
            print_bytes(&docs::completion(*shell));
            return 0;
        }
        // Reads only the baselines it is given.
        Command::Ramp {
            verb: RampVerb::Report(args),
        } => {
            return answer(listing(
                ramp::baseline::report(&args.baseline, args.against.as_deref()),
                args.format,
                ramp::baseline::table,
            ))
        }
        // Writes where it is told (a packaging root, say); the file system says who may.
        Command::Host {
            verb: HostVerb::Docs(args),
        } => {
            return answer(
                host::docs::install(&args.prefix, &docs::documents(), args.check)
                    .and_then(|installed| json(Ok(installed))),
            )
        }
        _ => {}
    }
    answer(dispatch(cli))
}

/// What a verb answers on success: the envelope's result, or text for people.
enum Answer {
    Json(Value),
    Text(String),
}

fn answer(result: Result<Answer>) -> i32 {
    match result {
        Ok(Answer::Json(result)) => {
            answers::print(&Envelope::success(result).with_warnings(warnings::take()));
            0
        }
        Ok(Answer::Text(text)) => {
            print_text(&text);
            0
        }
        Err(e) => fail(&e),
    }
}

/// `report --from`: a recorded run's summary or page; reads only the timeline.
fn run_recorded_report(from: &std::path::Path, format: Format, output: Option<&Path>) -> i32 {
    if output.is_some() && format != Format::Html {
        return fail(&Error::Usage(
            "--output is where --format html writes the page; a summary (json, table) is printed"
                .to_owned(),
        ));
    }
    let recording = match record::read::read(from) {
        Ok(recording) => recording,
        Err(e) => return fail(&e),
    };
    match (format, output) {
        (Format::Html, Some(page)) => {
            return answer(json(record::html::write_page(&recording, page)));
        }
        (Format::Json, _) => answers::print(
            &Envelope::success(record::html::summary(&recording)).with_warnings(warnings::take()),
        ),
        (Format::Html, None) => print_text(&record::html::page(&recording)),
        (Format::Table, _) => print_text(&record::html::summary_table(&recording)),
        (Format::Prometheus, _) => {
            return fail(&Error::Usage(
                "--format prometheus is the live report's; a recorded run is json, table or html"
                    .to_owned(),
            ))
        }
    }
    0
}

/// `report` may answer in another format than JSON; its errors are still the envelope.
fn run_report(args: &ReportArgs) -> i32 {
    if let Some(from) = &args.from {
        return run_recorded_report(from, args.format, args.output.as_deref());
    }
    if args.format == Format::Html {
        return fail(&Error::Usage(
            "--format html is a recorded run's page: give --from TIMELINE".to_owned(),
        ));
    }
    let result = check_root().and_then(|()| {
        let systemd = fake_file::from_env()?;
        let ctx = Context::new(Layout::from_env(), systemd.as_ref());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        report::report(&ctx, &args.views.clone().into_request(), now)
    });
    match result {
        Ok(report) => {
            match args.format {
                Format::Json => {
                    answers::print(&Envelope::success(report).with_warnings(warnings::take()))
                }
                Format::Table => print_text(&report::render::table(&report)),
                Format::Prometheus => print_text(&report::render::prometheus(&report)),
                Format::Html => unreachable!("refused above"),
            }
            0
        }
        Err(e) => fail(&e),
    }
}

fn print_text(text: &str) {
    print_bytes(text.as_bytes());
}

fn print_bytes(bytes: &[u8]) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(bytes);
    let _ = stdout.flush();
}

fn check_root() -> Result<()> {
    let euid = nix::unistd::geteuid();
    if euid.is_root() {
        Ok(())
    } else {
        Err(Error::NotRoot {
            euid: euid.as_raw(),
        })
    }
}

fn fail(error: &Error) -> i32 {
    eprintln!("clone-army: {}", escape::visible(&error.to_string()));
    answers::print(&Envelope::failure(error).with_warnings(warnings::take()));
    error.exit_code()
}

fn dispatch(cli: Cli) -> Result<Answer> {
    check_root()?;
    let systemd = fake_file::from_env()?;
    let ctx = Context::new(Layout::from_env(), systemd.as_ref());
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
                    server: args.server,
                    pe_ca_cert: args.pe_ca_cert,
                },
            )),
            BaseVerb::List(args) => listing(base::list(&ctx), args.format, base::list_table),
            BaseVerb::Remove { name } => json(base::remove(&ctx, &name)),
        },
        Command::Clone { verb } => match verb {
            CloneVerb::Create(args) => json(clone::create(&ctx, &args.into_request())),
            CloneVerb::CreateMany { file } => json(
                super::create_many::requests(&file)
                    .and_then(|requests| clone::create_many(&ctx, &requests)),
            ),
            CloneVerb::List(args) => listing(clone::list(&ctx), args.format, clone::list_table),
            CloneVerb::Start { ramp_up, names } => json(clone::start(&ctx, &names, ramp_up)),
            CloneVerb::Stop { names } => json(clone::stop(&ctx, &names)),
            CloneVerb::Remove { names, forget_ssl } => {
                json(clone::remove_with(&ctx, &names, forget_ssl))
            }
            CloneVerb::CheckApplySource { name } => {
                json(clone::apply_source::check(&ctx.layout, &name))
            }
            CloneVerb::Configure(args) => json(clone::configure(
                &ctx,
                &clone::ConfigureRequest {
                    name: args.name,
                    server: args.server,
                    server_port: args.server_port,
                    certname: args.certname,
                    shape: args.shape.into_request(),
                },
            )),
        },
        Command::Exec(args) => listing(
            exec::exec(
                &ctx,
                &exec::ExecRequest {
                    clones: args.clones,
                    all: args.all,
                    concurrency: args.concurrency,
                    timeout_seconds: args.timeout,
                    command: args.command,
                },
            ),
            args.format,
            exec::table,
        ),
        Command::Ssl { verb } => match verb {
            SslVerb::List => json(clone::ssl::list(&ctx)),
            SslVerb::Forget { certnames } => json(clone::ssl::forget(&ctx, &certnames)),
        },
        Command::Host { verb } => match verb {
            HostVerb::Limits => json(Ok(host::limits::report(&ctx.layout))),
            HostVerb::Selinux(args) => json(host::selinux::apply(
                &ctx,
                &host::selinux::SelinuxRequest {
                    context: &args.context,
                    apifs_context: &args.apifs_context,
                    check: args.check,
                },
            )),
            HostVerb::Docs(_) => Err(Error::Internal(
                "host docs reached the dispatcher".to_owned(),
            )),
        },
        Command::Record(args) => {
            record::stop_on_signals()?;
            json(record::record(
                &ctx,
                &record::RecordRequest {
                    output: args.output,
                    every: args.every,
                    duration: args.duration,
                    samples: args.samples,
                    max_bytes: args.max_bytes,
                    keep: args.keep,
                    report: args.views.into_request(),
                    access_log: args.access_log,
                },
                &record::SystemClock,
                &record::STOP,
            ))
        }
        Command::Ramp { verb } => match verb {
            RampVerb::Run(args) => {
                record::stop_on_signals()?;
                // Refused before anything is started, like the request's own fields.
                let access_log = args
                    .access_log
                    .as_deref()
                    .map(record::access_log::AccessLog::open)
                    .transpose()?;
                let request = args.into_request()?;
                let mut fleet = ramp::HostFleet::new(&ctx, &request).reading(access_log);
                json(ramp::ramp(
                    &mut fleet,
                    &request,
                    &record::SystemClock,
                    &record::STOP,
                ))
            }
            RampVerb::Report(_) => Err(Error::Internal(
                "ramp report reached the dispatcher".to_owned(),
            )),
        },
        // Answered by `run_report`, which may print other formats than the envelope.
        Command::Report(_) => Err(Error::Internal(
            "report reached the JSON dispatcher".to_owned(),
        )),
        // Answered before the root check: they read nothing on the host.
        Command::Schema => json(Ok(schema::schema())),
        Command::Man | Command::Completions { .. } => Err(Error::Internal(
            "a verb answered before the root check reached the dispatcher".to_owned(),
        )),
    }
}

fn json<T: Serialize>(result: Result<T>) -> Result<Answer> {
    serde_json::to_value(result?)
        .map(Answer::Json)
        .map_err(|e| Error::Internal(e.to_string()))
}

/// A listing as the envelope or, with `--format table`, as the table for people.
fn listing<T: Serialize>(
    result: Result<T>,
    format: ListFormat,
    table: fn(&T) -> String,
) -> Result<Answer> {
    match format {
        ListFormat::Json => json(result),
        ListFormat::Table => result.map(|list| Answer::Text(table(&list))),
    }
}
