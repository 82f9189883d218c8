//! `clone create-many FILE`: each line of FILE is one `clone create`'s arguments, a JSON
//! array of strings, parsed by the same definition as the verb's own command line, so a
//! batch takes exactly what `clone create` takes.

use std::path::Path;

use clap::Parser;

use super::args::CloneCreateArgs;
use crate::cli::usage::usage_message;
use crate::clone::CloneRequest;
use crate::protocol::error::{Error, Result};

/// The most read of a batch file: a line is well under 1 KiB, and a fleet of thousands
/// of clones stays far below.
pub const MAX_BATCH_BYTES: u64 = 16 * 1024 * 1024;

/// The requests in `file`, in its order; blank lines are skipped. A line that is not a
/// JSON array of strings, or not a valid `clone create`, fails them all with its number.
pub fn requests(file: &Path) -> Result<Vec<CloneRequest>> {
    let text = read(file)?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| request(i + 1, line))
        .collect()
}

fn read(file: &Path) -> Result<String> {
    use std::io::Read;
    let opened = std::fs::File::open(file).map_err(|e| Error::io("read", file, e))?;
    let mut text = String::new();
    opened
        .take(MAX_BATCH_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::io("read", file, e))?;
    if text.len() as u64 > MAX_BATCH_BYTES {
        return Err(Error::InvalidArgument {
            field: "file",
            value: file.display().to_string(),
            reason: format!("a batch file holds at most {MAX_BATCH_BYTES} bytes"),
        });
    }
    Ok(text)
}

fn request(number: usize, line: &str) -> Result<CloneRequest> {
    let invalid = |reason: String| Error::InvalidArgument {
        field: "file",
        value: format!("line {number}"),
        reason,
    };
    let args: Vec<String> = serde_json::from_str(line).map_err(|e| {
        invalid(format!(
            "each line is one `clone create`'s arguments as a JSON array of strings: {e}"
        ))
    })?;
    let argv = std::iter::once(CreateLine::ARGV0.to_owned()).chain(args);
    let line = CreateLine::try_parse_from(argv)
        .map_err(|e| invalid(usage_message(&e.render().to_string())))?;
    Ok(line.args.into_request())
}

// One line of a batch, parsed as `clone-army clone create` parses its command line (and
// named so, so that its errors read the same). Not a doc comment: clap would make it the
// command's `about`, which `clone create`'s own (on its arguments) must be.
#[derive(Debug, Parser)]
struct CreateLine {
    #[command(flatten)]
    args: CloneCreateArgs,
}

impl CreateLine {
    /// What clap names the command in its usage: the verb a line stands for.
    const ARGV0: &'static str = "clone-army clone create";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(text: &str) -> Result<Vec<CloneRequest>> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("batch.jsonl");
        std::fs::write(&file, text).unwrap();
        requests(&file)
    }

    #[test]
    fn each_line_is_a_clone_create() {
        let requests = batch(concat!(
            r#"["clone1", "--base", "debian-12", "--server", "puppet", "--certname", "c1.load"]"#,
            "\n\n",
            r#"["clone2", "--base", "debian-12", "--server", "puppet", "--certname", "c2.load", "--run-mode", "timer", "--runinterval", "600"]"#,
            "\n",
        ))
        .unwrap();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].name, "clone1");
        assert_eq!(requests[0].certname, "c1.load");
        let shape = requests[1].shape.as_ref().unwrap();
        assert_eq!(shape.run_mode, Some(crate::clone::run_mode::RunMode::Timer));
        assert_eq!(shape.runinterval, Some(600));
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let good = r#"["clone1", "--base", "b", "--server", "s", "--certname", "c"]"#;
        let not_json = batch(&format!("{good}\nclone2 --base b\n")).unwrap_err();
        assert_eq!(not_json.field(), Some("file"));
        assert!(not_json.to_string().contains("line 2"), "{not_json}");
        assert!(
            not_json.to_string().contains("JSON array of strings"),
            "{not_json}"
        );

        let bad_flag = batch(&format!("{good}\n{good}\n[\"clone3\", \"--bogus\"]\n")).unwrap_err();
        assert!(bad_flag.to_string().contains("line 3"), "{bad_flag}");
        assert!(bad_flag.to_string().contains("--bogus"), "{bad_flag}");

        let bad_value = batch(
            r#"["c", "--base", "b", "--server", "s", "--certname", "c", "--run-mode", "cron"]"#,
        )
        .unwrap_err();
        assert!(
            bad_value
                .to_string()
                .contains("possible values: daemon, timer, manual, apply"),
            "{bad_value}"
        );
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let missing = requests(Path::new("/nonexistent/batch.jsonl")).unwrap_err();
        assert!(
            missing.to_string().contains("/nonexistent/batch.jsonl"),
            "{missing}"
        );
    }
}
