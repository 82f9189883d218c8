//! `report`: every clone's last run and the fleet's figures, live (as JSON, a table or a
//! Prometheus textfile, printed or put in place with `--output`) or of a recorded run
//! (`--from`: its summary or its page).

use clap::Args;

use std::path::{Path, PathBuf};

use super::answer::{answer, fail, json, on_host, print_text};
use super::args::ViewArgs;
use super::format::{self, Chosen};
use crate::protocol::answers::{self, Envelope, Report};
use crate::protocol::error::Error;
use crate::protocol::warnings;
use crate::report::render::Format;
use crate::sys::clock::{Clock, SystemClock};
use crate::{record, report};

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub views: ViewArgs,
    /// Report a recorded run instead (a timeline `record` wrote, with its rotated files):
    /// its summary (json, table) or one self-contained page with its charts (html).
    #[arg(long, value_name = "TIMELINE", conflicts_with_all = ["server", "puppetdb"])]
    pub from: Option<PathBuf>,
    /// auto: a table on a terminal, json otherwise; json: the JSON envelope; table: for
    /// people; prometheus: node_exporter textfile; html: the page of a recorded run (with
    /// --from). Errors always come as the JSON envelope.
    #[arg(long, value_parser = format::parser::<Format>(), default_value = format::AUTO)]
    pub format: Chosen<Format>,
    /// With --format prometheus: write the textfile to this file (node_exporter's textfile
    /// directory) and answer the JSON envelope with its path; with --from --format html,
    /// the page. Written whole through a temporary file beside it renamed over it. Its
    /// directory must exist; only a missing file or one clone-army wrote of the same kind
    /// is replaced, never a symlink or any other file.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Group the clones' runs by what their twins stand in for: a trusted extension
    /// (pp_role, ...), node or environment; clones that are no twins are the group -.
    #[arg(long, value_name = "KEY", conflicts_with = "from")]
    pub group_by: Option<String>,
}

/// `report --from`: a recorded run's summary or page; reads only the timeline.
fn run_recorded_report(from: &Path, format: Format, output: Option<&Path>) -> i32 {
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
            return fail(&Error::Usage(format!(
                "--format prometheus is the live report's; a recorded run (--from) is {}",
                Format::names(Format::RECORDED)
            )))
        }
    }
    0
}

/// Runs `report`, which may answer in another format than JSON; its errors are still the
/// envelope. The process's exit code.
pub fn run(args: &ReportArgs) -> i32 {
    let format = args.format.resolve(Format::Table, Format::Json);
    if let Some(from) = &args.from {
        return run_recorded_report(from, format, args.output.as_deref());
    }
    if args.output.is_some() && format != Format::Prometheus {
        return fail(&Error::Usage(format!(
            "--output is where --format prometheus writes the textfile (and, with --from, \
             --format html the page); --format {} is printed",
            format.name()
        )));
    }
    let print: fn(&Report) = match format {
        Format::Html => {
            return fail(&Error::Usage(format!(
            "--format html is a recorded run's page: give --from TIMELINE; the live report is {}",
            Format::names(Format::LIVE)
        )))
        }
        Format::Json => {
            |report| answers::print(&Envelope::success(report).with_warnings(warnings::take()))
        }
        Format::Table => |report| print_text(&report::render::table(report)),
        Format::Prometheus => |report| print_text(&report::render::prometheus(report)),
    };
    let group_by = match args
        .group_by
        .as_deref()
        .map(report::groups::key)
        .transpose()
    {
        Ok(key) => key,
        Err(e) => return fail(&e),
    };
    let result = on_host(|ctx| {
        let request = args.views.clone().into_request();
        let mut report = report::report(ctx, &request, SystemClock::new().now())?;
        if let Some(key) = &group_by {
            report.groups = Some(report::groups::of(
                ctx,
                &report.clones,
                key,
                request.interval,
            )?);
        }
        Ok(report)
    });
    match (result, &args.output) {
        (Ok(report), Some(textfile)) => {
            answer(json(report::textfile::write_textfile(&report, textfile)))
        }
        (Ok(report), None) => {
            print(&report);
            0
        }
        (Err(e), _) => fail(&e),
    }
}
