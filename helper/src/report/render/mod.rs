//! The report for people (`--format table`, [`table`]) and for node_exporter's textfile
//! collector (`--format prometheus`, [`prometheus`]). Both are written as they are, without
//! the JSON envelope; errors still come out as the envelope.

mod figures;
mod prometheus;
mod table;

pub use prometheus::prometheus;
pub use table::table;

/// Output format of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// The JSON envelope, like every verb.
    #[default]
    Json,
    /// A table for people.
    Table,
    /// node_exporter textfile format.
    Prometheus,
    /// A recorded run's page (`--from`).
    Html,
}
