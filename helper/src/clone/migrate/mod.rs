//! What an earlier fleet left on the host, taken over by this one under the lock before
//! anything writes the template or a clone: a fleet of `sharpie-clone_army` 0.2.1
//! ([`old_fleet`]). A migration uses the clone verbs' pieces; no verb but the ones that
//! write (`clone create`, `clone configure`) uses a migration.

pub mod old_fleet;
