//! clone_army's helper: turns one systemd host into a fleet of `puppet-agent` clones, each
//! a `systemd-nspawn` container over an OverlayFS base, and answers the Puppet module in
//! JSON (docs/PROTOCOL.md). `main.rs` only calls [`cli::dispatch::run`]; everything is here.
//!
//! # Layers
//!
//! Each layer uses only the layers below it (`tests/layers.rs` checks this and that there
//! are no cycles):
//!
//! ```text
//!   cli                     the command line and its dispatch to the verbs
//!   schema                  the rules the Puppet side reads (`clone-army schema`)
//!   ramp                    a stepped load that finds where the server stops coping
//!   record                  the load run as a timeline of samples, and its page
//!   exec, report            verbs over a running fleet: bursts of commands, run reports
//!   base, clone             the domain: building bases; creating, shaping, starting clones
//!   twin                    real nodes' records read into the identities twins take
//!   inventory               what is on the host, read-only: clones, base.json, problems
//!   host                    the load host: OS, kernel limits and capacity, bus, SELinux
//!   context                 what every verb is given: the layout and a systemd
//!   systemd                 the manager over D-Bus, unit files, the test fakes
//!   sys                     files that never follow links, mounts, lock, paths, names
//!   protocol                the wire: answers, errors, timelines, baselines, the schema's
//!                           shape; uses nothing else
//! ```
//!
//! # Where things go
//!
//! - A new **run mode**: `clone/run_mode.rs` (its units, masks and read-back), its
//!   capacity cost in `host/limits.rs`; the Puppet face is `types/run_mode.pp` and the
//!   class's `run_mode`, both held to `clone-army schema` by the specs.
//! - A new **base OS**: `base/mod.rs` (`Os`, its family) and `base/builder/` (the build
//!   commands, one file per installer, with snapshots; where the agent comes from in
//!   `agent.rs`); the Puppet face is `clone_army_base`'s `os`, read from the schema.
//! - A new **report format**: a file in `report/render/` (and `Format` in its `mod.rs`);
//!   the Puppet face is the `clone_army::report` task's `format`.
//! - A new **table** for people: its rows next to the verb (`clone/list.rs`, `base/list.rs`,
//!   `exec/table.rs`), written with [`sys::table`], which escapes every cell; the verb's
//!   `--format` is [`cli::ListFormat`], read through [`mod@cli::format`] (its default, `auto`).
//! - **Progress** of a new long verb: the verb takes a [`sys::progress::Progress`] and
//!   reports its steps or its count; its arm in [`cli`] runs it inside
//!   [`cli::progress::showing`], which draws the status line when stderr is a terminal.
//! - A new **verb or flag**: its group's file in [`cli`] (a new group: a file with its
//!   `run`, and one arm in `cli/dispatch.rs`); the man page and the completions follow by
//!   themselves (`cli/docs.rs`).
//! - A new **field** in what the helper writes (an answer, a timeline's line, a ramp's
//!   baseline, `schema.json`): its type in [`protocol`] (`answers/` by verb, `record.rs`,
//!   `ramp.rs`, `schema.rs`), filled where the work is done; docs/PROTOCOL.md documents it.
//! - A new **rule** the Puppet side must share (a range, a name, a default): a constant
//!   where the helper checks it, exported by [`schema`]; Ruby reads `schema.json`.

pub mod base;
pub mod cli;
pub mod clone;
pub mod context;
pub mod exec;
pub mod host;
pub mod inventory;
pub mod protocol;
pub mod ramp;
pub mod record;
pub mod report;
pub mod schema;
pub mod sys;
pub mod systemd;
pub mod twin;
