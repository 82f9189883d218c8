//! The one aligned text table the helper writes for people (`report --format table`,
//! `clone list`, `base list` and `exec` with `--format table`).
//!
//! Every cell goes through [`visible`], so text a clone wrote (a name read from disk, a
//! command's output) cannot move the cursor or rewrite the terminal; and is cut at
//! [`MAX_CELL_CHARS`], so one such cell cannot pad every other row of its table out to
//! its width. Columns are as wide as their widest cell, two spaces apart, and no line has
//! trailing spaces.

use crate::sys::escape::visible;

/// What a table shows for a value it does not have.
pub const NONE: &str = "-";
/// The most characters a cell shows (as escaped); a longer one ends in `…`. Certnames
/// of a few dozen characters and the longest columns (a command's output line) fit.
pub const MAX_CELL_CHARS: usize = 100;

/// A header and rows of cells, rendered by [`Table::render`].
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are empty, extra cells are dropped, long ones are cut.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut row: Vec<String> = cells
            .into_iter()
            .take(self.header.len())
            .map(|c| truncate(&visible(c.as_ref()), MAX_CELL_CHARS))
            .collect();
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
    }

    /// The header line and one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for cells in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                line.push_str(cell);
                if i + 1 < cells.len() {
                    let pad = w.saturating_sub(cell.chars().count()) + 2;
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `text` cut to at most `max` characters, with `…` at the end when it was cut. Reads no
/// further into `text` than `max` characters.
pub fn truncate(text: &str, max: usize) -> String {
    if text.char_indices().nth(max).is_none() {
        return text.to_owned();
    }
    let end = text
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(text.len(), |(i, _)| i);
    format!("{}…", &text[..end])
}

/// An optional value as a cell: the value, or [`NONE`].
pub fn or_none<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| NONE.to_owned(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_lines_have_no_trailing_spaces() {
        let mut table = Table::new(&["NAME", "STATE", "NOTE"]);
        table.row(["clone10", "running", ""]);
        table.row(["c1", "stopped", "ok"]);
        table.row(["c2"]);
        assert_eq!(
            table.render(),
            "NAME     STATE    NOTE\nclone10  running\nc1       stopped  ok\nc2\n"
        );
    }

    #[test]
    fn control_characters_are_escaped_and_widths_count_what_is_shown() {
        let mut table = Table::new(&["NAME", "X"]);
        table.row(["a\u{1b}[2Jb", "1"]);
        table.row(["Zürich", "2"]);
        let text = table.render();
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert_eq!(text, "NAME       X\na\\x1b[2Jb  1\nZürich     2\n");
    }

    /// A clone (or the server) writes a cell of a MiB: the table stays as narrow as its
    /// cap, and says where it cut.
    #[test]
    fn a_cell_of_1_mib_is_cut_and_the_other_rows_stay_narrow() {
        let mut table = Table::new(&["NAME", "VERSION"]);
        table.row(["c1", "8.10.0"]);
        table.row(["c2", &"\u{1b}".repeat(1 << 20)]);
        let text = table.render();
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= "NAME".len() + 2 + MAX_CELL_CHARS, "{widest}");
        assert!(text.lines().nth(2).unwrap().ends_with('…'), "{text}");
        assert!(!text.contains('\u{1b}'));
        assert_eq!(text.lines().nth(1), Some("c1    8.10.0"));
    }

    #[test]
    fn truncation_and_missing_values() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abcd", 4), "abcd");
        assert_eq!(truncate("äöüß", 3), "äö…");
        assert_eq!(truncate("ab", 0), "…");
        assert_eq!(truncate("", 0), "");
        assert_eq!(or_none(None::<u32>), "-");
        assert_eq!(or_none(Some(3)), "3");
    }
}
