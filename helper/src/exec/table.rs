//! `exec --format table`: the burst for people, one row per clone (its exit, its time and
//! the first line of what it printed), then the summary. What the commands printed is a
//! clone's text: the table writer escapes it.

use std::fmt::Write;

use crate::protocol::answers::{ExecEntry, ExecResult};
use crate::sys::escape::visible;
use crate::sys::table::{or_none, truncate, Table, NONE};

/// The output column keeps at most this many characters of the line (the JSON has 4 KiB).
const OUTPUT_WIDTH: usize = 100;

pub fn table(result: &ExecResult) -> String {
    let mut rows = Table::new(&["CLONE", "EXIT", "SECONDS", "OUTPUT"]);
    for entry in &result.clones {
        rows.row([
            entry.name.clone(),
            exit(entry),
            format!("{:.2}", entry.seconds),
            truncate(&output(entry), OUTPUT_WIDTH),
        ]);
    }
    let mut out = rows.render();
    let s = &result.summary;
    let command: Vec<String> = result
        .command
        .iter()
        .map(|a| visible(a).into_owned())
        .collect();
    let _ = writeln!(
        out,
        "\n{} in {} clones: {} succeeded, {} failed ({} not run, {} timed out)",
        command.join(" "),
        s.count,
        s.succeeded,
        s.failed,
        s.not_run,
        s.timed_out
    );
    let secs = |v: Option<f64>| or_none(v.map(|v| format!("{v:.2}")));
    let _ = writeln!(
        out,
        "seconds: p50 {}, p95 {}, max {}; wall {:.2}; concurrency {}, timeout {} s",
        secs(s.p50_seconds),
        match (s.p95_seconds, s.count - s.not_run) {
            (Some(v), _) => format!("{v:.2}"),
            (None, 0) => NONE.to_owned(),
            // Too few for a p95: the max beside it is the slow end.
            (None, ran) => format!("max({ran})"),
        },
        secs(s.max_seconds),
        s.wall_seconds,
        s.concurrency,
        s.timeout_seconds
    );
    out
}

/// The exit code; else why there is none (`timeout`, `killed`, `not-running`, ...).
fn exit(entry: &ExecEntry) -> String {
    match (&entry.exit_code, &entry.error, entry.signal) {
        (Some(code), _, _) => code.to_string(),
        (None, Some(problem), _) => problem.kind.to_string(),
        (None, None, Some(signal)) => format!("signal {signal}"),
        (None, None, None) => NONE.to_owned(),
    }
}

/// The first non-blank line of stdout, else of stderr (of the tails kept), else why the
/// command did not run to its end.
fn output(entry: &ExecEntry) -> String {
    let first = |text: &str| {
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_owned)
    };
    first(&entry.stdout_tail)
        .or_else(|| first(&entry.stderr_tail))
        .or_else(|| entry.error.as_ref().map(|p| p.message.clone()))
        .unwrap_or_else(|| NONE.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::answers::{ExecProblem, ExecProblemKind, ExecSummary};

    fn entry(
        name: &str,
        exit_code: Option<i32>,
        seconds: f64,
        stdout: &str,
        stderr: &str,
    ) -> ExecEntry {
        ExecEntry {
            name: name.to_owned(),
            exit_code,
            signal: None,
            seconds,
            timed_out: false,
            stdout_tail: stdout.to_owned(),
            stderr_tail: stderr.to_owned(),
            error: None,
        }
    }

    #[test]
    fn table_snapshot() {
        let mut timed_out = entry(
            "clone4",
            None,
            600.01,
            "Info: Using environment 'production'\n",
            "",
        );
        timed_out.signal = Some(9);
        timed_out.timed_out = true;
        timed_out.error = Some(ExecProblem {
            kind: ExecProblemKind::Timeout,
            message: "killed after 600 s and its transient unit was stopped".to_owned(),
        });
        let mut stopped = entry("clone5", None, 0.0, "", "");
        stopped.error = Some(ExecProblem {
            kind: ExecProblemKind::NotRunning,
            message: "clone5 is not running".to_owned(),
        });
        let result = ExecResult {
            command: vec!["puppet".to_owned(), "agent".to_owned(), "-t".to_owned()],
            clones: vec![
                entry(
                    "clone1",
                    Some(0),
                    3.214,
                    "\nInfo: Using environment 'production'\nNotice: Applied catalog in 0.01 seconds\n",
                    "",
                ),
                entry("clone2", Some(2), 4.5, "Notice: /Stage[main]/Main/File[/tmp/x]/ensure: created\n", ""),
                // A clone prints what it likes: escapes that would clear the screen or
                // retitle the terminal, and a line longer than the column.
                entry(
                    "clone3",
                    Some(1),
                    1.0,
                    "",
                    &format!("\u{1b}[2J\u{1b}]0;pwned\u{7}Error: {}\n", "x".repeat(200)),
                ),
                timed_out,
                stopped,
            ],
            summary: ExecSummary {
                count: 5,
                succeeded: 1,
                failed: 4,
                not_run: 1,
                timed_out: 1,
                p50_seconds: Some(3.21),
                p95_seconds: None,
                max_seconds: Some(600.01),
                wall_seconds: 600.2,
                concurrency: 10,
                timeout_seconds: 600,
            },
        };
        let text = table(&result);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        insta::assert_snapshot!(text);
    }
}
