//! The server's figures as numbers, as both formats print them.

use crate::report::server::Figure;

/// A server figure in milliseconds as seconds.
pub fn ms_to_s(value: &Option<Figure>) -> Option<f64> {
    value
        .as_ref()
        .and_then(Figure::as_f64)
        .map(|ms| ms / 1000.0)
}

/// A server figure as a number.
pub fn float(value: &Option<Figure>) -> Option<f64> {
    value.as_ref().and_then(Figure::as_f64)
}
