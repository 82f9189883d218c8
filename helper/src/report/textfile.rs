//! `report --format prometheus --output FILE`: the textfile put in place in one rename.
//! node_exporter's textfile collector reads its directory at every scrape; a file
//! written in place could be read half-written, and a file renamed in by hand from
//! another directory could cross a filesystem and stop being one rename.

use std::path::Path;

use crate::protocol::answers::{Report, TextfileWritten};
use crate::protocol::error::Result;
use crate::report::render::{prometheus, TEXTFILE_MARKER};
use crate::sys::output_file;

/// Writes `report`'s textfile to `path` as [`output_file::replace_own`] does: only over
/// nothing or a textfile this helper wrote, never through a symlink.
pub fn write_textfile(report: &Report, path: &Path) -> Result<TextfileWritten> {
    let text = prometheus(report);
    output_file::replace_own(path, TEXTFILE_MARKER, "textfile", text.as_bytes())?;
    Ok(TextfileWritten {
        textfile: path.display().to_string(),
        bytes: text.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_with_server;

    #[test]
    fn the_textfile_is_the_rendered_report_and_replaces_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clone_army.prom");
        let mut report = sample_with_server();
        write_textfile(&report, &path).unwrap();
        report.now += 60;
        let written = write_textfile(&report, &path).unwrap();
        let on_disk = std::fs::read_to_string(&path).unwrap();
        assert_eq!(on_disk, prometheus(&report));
        assert_eq!(
            written,
            TextfileWritten {
                textfile: path.display().to_string(),
                bytes: on_disk.len(),
            }
        );
    }
}
