//! `clone-army`, the helper of the clone_army Puppet module. Everything is in the
//! library ([`clone_army`]; its crate documentation maps the modules); this only runs
//! the command line.

fn main() {
    std::process::exit(clone_army::cli::dispatch::run());
}
