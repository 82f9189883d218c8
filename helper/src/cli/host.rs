//! `host`: the load host's kernel limits and capacity, SELinux for the clones, and the
//! man page and completions installed under a prefix.

use clap::{Args, Subcommand};

use std::path::PathBuf;

use super::answer::{json, on_host, Answer};
use crate::host;
use crate::protocol::answers::DocKind;
use crate::protocol::error::Result;

/// Runs a `host` verb; `host docs` writes where it is told (a packaging root, say), so the
/// file system says who may, and it needs no root. `documents` makes the man page and the
/// completions, which are made from the whole command line (this group's verbs too), so
/// the dispatch hands them in.
pub fn run(verb: HostVerb, documents: fn() -> Vec<(DocKind, Vec<u8>)>) -> Result<Answer> {
    match verb {
        HostVerb::Docs(args) => json(host::docs::install(&args.prefix, &documents(), args.check)),
        HostVerb::Limits => on_host(|ctx| json(Ok(host::limits::report(&ctx.layout)))),
        HostVerb::Selinux(args) => on_host(|ctx| {
            json(host::selinux::apply(
                ctx,
                &host::selinux::SelinuxRequest {
                    context: &args.context,
                    apifs_context: &args.apifs_context,
                    check: args.check,
                },
            ))
        }),
    }
}

#[derive(Debug, Subcommand)]
pub enum HostVerb {
    /// Report the kernel limits and the memory bound of the capacity for clones (read-only).
    Limits,
    /// Run every clone's systemd-nspawn with SELinux labels (hosts with SELinux enforcing):
    /// a drop-in for the clone template; with --check, only say whether it is in place.
    Selinux(HostSelinuxArgs),
    /// Install the man page and the bash, zsh and fish completions under a prefix; with --check,
    /// only say whether they are there and current.
    Docs(HostDocsArgs),
}

#[derive(Debug, Args)]
pub struct HostDocsArgs {
    /// Where share/man/man8, share/bash-completion/completions, share/zsh/site-functions and
    /// share/fish/vendor_completions.d are.
    #[arg(long, value_name = "DIR", default_value = crate::host::docs::DEFAULT_PREFIX)]
    pub prefix: PathBuf,
    /// Change nothing; fail with kind not-in-place unless every file is there and current.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Args)]
pub struct HostSelinuxArgs {
    /// The clones' processes' context (systemd-nspawn --selinux-context).
    #[arg(long, value_name = "CTX", default_value = crate::host::selinux::DEFAULT_CONTEXT)]
    pub context: String,
    /// The context of the API file systems nspawn mounts (--selinux-apifs-context).
    #[arg(long, value_name = "CTX", default_value = crate::host::selinux::DEFAULT_APIFS_CONTEXT)]
    pub apifs_context: String,
    /// Change nothing; fail with kind not-in-place unless the drop-in is exactly this.
    #[arg(long)]
    pub check: bool,
}
