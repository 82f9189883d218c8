//! The report for people (`--format table`, [`table`]) and for node_exporter's textfile
//! collector (`--format prometheus`, [`prometheus`]). Both are written as they are, without
//! the JSON envelope; errors still come out as the envelope.

mod figures;
mod prometheus;
mod table;

pub use prometheus::{prometheus, TEXTFILE_MARKER};
pub use table::table;

/// Output format of `report` (`--format` takes these or `auto`: `cli::format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The JSON envelope, like every verb.
    Json,
    /// A table for people.
    Table,
    /// node_exporter textfile format.
    Prometheus,
    /// A recorded run's page (`--from`).
    Html,
}

impl Format {
    /// The formats of the live fleet's report.
    pub const LIVE: &'static [Format] = &[Format::Json, Format::Table, Format::Prometheus];
    /// The formats of a recorded run's report (`--from`).
    pub const RECORDED: &'static [Format] = &[Format::Json, Format::Table, Format::Html];
    /// The live formats printed as plain text, not in the JSON envelope.
    pub const TEXT: &'static [Format] = &[Format::Table, Format::Prometheus];

    /// The name on the command line (`--format NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Table => "table",
            Format::Prometheus => "prometheus",
            Format::Html => "html",
        }
    }

    /// The names of `formats`, for a message: "json, table or html".
    pub fn names(formats: &[Format]) -> String {
        let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
        match names.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::Format;

    #[test]
    fn a_list_of_formats_reads_as_a_sentence() {
        assert_eq!(Format::names(Format::LIVE), "json, table or prometheus");
        assert_eq!(Format::names(&[Format::Html]), "html");
        assert_eq!(Format::names(&[]), "");
    }

    #[test]
    fn each_format_is_named_as_the_command_line_names_it_and_listed_live_or_recorded() {
        for format in Format::value_variants() {
            let value = format.to_possible_value().unwrap();
            assert_eq!(format.name(), value.get_name());
            assert!(Format::LIVE.contains(format) || Format::RECORDED.contains(format));
        }
        assert!(Format::TEXT
            .iter()
            .all(|format| Format::LIVE.contains(format)));
    }
}
