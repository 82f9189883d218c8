//! `--format auto`, the default of every verb that answers either the JSON envelope or a
//! table: the table for a person at a terminal, the envelope for a program reading a pipe
//! or a file. A program that parses the answer names `--format json` all the same, so
//! that what it reads never depends on where its stdout goes.

use std::io::IsTerminal;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::ValueEnum;

/// The name of the default on the command line.
pub const AUTO: &str = "auto";

/// A verb's `--format`: `auto`, or one of the verb's own formats named (`F`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen<F> {
    Auto,
    Named(F),
}

impl<F> Chosen<F> {
    /// The format to answer in: the one named, or for `auto` `table` when stdout is a
    /// terminal and `json` otherwise.
    pub fn resolve(self, table: F, json: F) -> F {
        self.resolve_for(std::io::stdout().is_terminal(), table, json)
    }

    /// [`Chosen::resolve`] with the terminal test given: the one place `auto`'s rule is.
    fn resolve_for(self, terminal: bool, table: F, json: F) -> F {
        match self {
            Chosen::Named(format) => format,
            Chosen::Auto if terminal => table,
            Chosen::Auto => json,
        }
    }
}

/// The value parser of a `--format` over the formats `F`: `auto` first, then `F`'s names,
/// each with its help, so `--help`, the man page and the completions list them all.
pub fn parser<F>() -> impl TypedValueParser<Value = Chosen<F>>
where
    F: ValueEnum + Clone + Send + Sync + 'static,
{
    let auto = PossibleValue::new(AUTO)
        .help("a table when stdout is a terminal, json otherwise (the default)");
    let named = F::value_variants()
        .iter()
        .filter_map(ValueEnum::to_possible_value);
    PossibleValuesParser::new(std::iter::once(auto).chain(named)).map(|name| {
        // The parser admits only `auto` and `F`'s names, so a name `F` lacks is `auto`.
        F::value_variants()
            .iter()
            .find(|format| {
                format
                    .to_possible_value()
                    .is_some_and(|value| value.matches(&name, false))
            })
            .cloned()
            .map_or(Chosen::Auto, Chosen::Named)
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::ListFormat;

    #[derive(Debug, Parser)]
    struct Line {
        #[arg(long, value_parser = parser::<ListFormat>(), default_value = AUTO)]
        format: Chosen<ListFormat>,
    }

    fn parsed(args: &[&str]) -> Chosen<ListFormat> {
        Line::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .unwrap()
            .format
    }

    #[test]
    fn auto_is_the_default_and_each_format_is_taken_by_its_name() {
        assert_eq!(parsed(&[]), Chosen::Auto);
        assert_eq!(parsed(&["--format", "auto"]), Chosen::Auto);
        assert_eq!(
            parsed(&["--format", "json"]),
            Chosen::Named(ListFormat::Json)
        );
        assert_eq!(
            parsed(&["--format=table"]),
            Chosen::Named(ListFormat::Table)
        );
        let refused = Line::try_parse_from(["x", "--format", "yaml"]).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("[possible values: auto, json, table]"),
            "{refused}"
        );
    }

    #[test]
    fn auto_is_a_table_on_a_terminal_and_json_elsewhere_and_a_named_format_is_kept() {
        let auto = Chosen::<ListFormat>::Auto;
        assert_eq!(
            auto.resolve_for(true, ListFormat::Table, ListFormat::Json),
            ListFormat::Table
        );
        assert_eq!(
            auto.resolve_for(false, ListFormat::Table, ListFormat::Json),
            ListFormat::Json
        );
        for terminal in [true, false] {
            for format in [ListFormat::Json, ListFormat::Table] {
                assert_eq!(
                    Chosen::Named(format).resolve_for(
                        terminal,
                        ListFormat::Table,
                        ListFormat::Json
                    ),
                    format
                );
            }
        }
    }
}
