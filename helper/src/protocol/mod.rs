//! The wire: every answer the helper prints ([`answers`]), every error it can fail
//! with ([`error`]), the closed sets of kinds they name ([`kinds`]) and the warnings it
//! carries ([`warnings`]), as PROTOCOL.md documents them; and the files it writes for
//! people and programs to read back: the recorder's timeline ([`record`], its request
//! times in [`latency`]) and a ramp's baseline ([`ramp`]). The bottom layer: it uses nothing else in the crate, and
//! everything else speaks through it.

pub mod answers;
pub mod error;
pub mod kinds;
pub mod latency;
pub mod ramp;
pub mod record;
pub mod warnings;
