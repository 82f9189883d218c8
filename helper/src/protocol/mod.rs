//! The wire: what the helper writes for its callers to read. Every answer it prints
//! ([`answers`]), every error it can fail with ([`error`]), the closed sets of kinds they
//! name ([`kinds`]) and the warnings it carries ([`warnings`]), as docs/PROTOCOL.md documents
//! them; the files it writes to be read back: the recorder's timeline ([`record`], its
//! request times in [`latency`]) and a ramp's baseline ([`ramp`]); and the rules the
//! Puppet side reads ([`schema`]). The bottom layer: it uses nothing else in the crate,
//! and everything else speaks through it.

pub mod answers;
pub mod error;
pub mod kinds;
pub mod latency;
pub mod ramp;
pub mod record;
pub mod schema;
pub mod warnings;
