//! Low-level host plumbing with no knowledge of clones or bases: file writes that never
//! follow a link ([`fsutil`], [`confined`], [`output_file`]), mounts, the lock, the on-disk layout
//! ([`paths`]), names, escaping for terminals and the tables people read ([`table`]), fault injection points, leftovers of
//! killed runs, time and the [`clock`], how far long work has come ([`progress`], shown or not as
//! the command line decides), and whether a host directory is root's alone all the way up
//! ([`trusted`]).

pub mod clock;
pub mod confined;
pub mod escape;
pub mod faults;
pub mod fsutil;
pub mod leftovers;
pub mod lock;
pub mod mounts;
pub mod names;
pub mod output_file;
pub mod paths;
pub mod progress;
pub mod reload;
pub mod table;
pub mod temp_names;
#[cfg(test)]
pub mod test_clock;
#[cfg(test)]
pub mod test_reach;
pub mod time;
pub mod trusted;
