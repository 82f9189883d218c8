//! The command lines every installer is made of: a command inside the staging root, a
//! verified download on the host, paths into the root; and what a person is shown of one.

use std::path::Path;

use super::spec::Argv;

pub(super) fn argv(parts: &[&str]) -> Argv {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

pub(super) fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

/// `<staging>/<relative>` as a host path, for commands that run on the host.
pub(super) fn inside(staging: &Path, relative: &str) -> String {
    path_arg(&staging.join(relative.trim_start_matches('/')))
}

/// The installers whose first plain word (letters alone) is the subcommand that says
/// what a step does: `apt-get update`, `dnf install`, `zypper refresh`.
const WITH_SUBCOMMANDS: &[&str] = &["apt-get", "dnf", "zypper"];

/// A command as a build's step is named for people: its program (for a command inside
/// the staging root, [`in_root`], the one it runs there), with the subcommand of those
/// that have one ([`WITH_SUBCOMMANDS`]).
pub fn step_name(argv: &[String]) -> String {
    let command = match argv.iter().position(|a| a == "--") {
        Some(end) if argv.first().is_some_and(|p| p == "systemd-nspawn") => &argv[end + 1..],
        _ => argv,
    };
    let Some((program, args)) = command.split_first() else {
        return String::new();
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    let subcommand = WITH_SUBCOMMANDS
        .contains(&program)
        .then(|| {
            args.iter()
                .find(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_lowercase()))
        })
        .flatten();
    match subcommand {
        Some(word) => format!("{program} {word}"),
        None => program.to_owned(),
    }
}

/// A command run inside the staging root (not booted). `--register=no --keep-unit`: no
/// machined and no transient scope, so no system bus is needed (tried on this project's
/// machines, where systemd is not PID 1: without `--keep-unit` nspawn fails with
/// "Failed to open system bus").
pub(super) fn in_root(staging: &Path, command: &[&str]) -> Argv {
    let mut out = argv(&[
        "systemd-nspawn",
        "--quiet",
        "--register=no",
        "--keep-unit",
        "--resolv-conf=copy-host",
        "--setenv=DEBIAN_FRONTEND=noninteractive",
    ]);
    out.push(format!("--directory={}", path_arg(staging)));
    out.push("--".to_owned());
    out.extend(command.iter().map(|s| (*s).to_owned()));
    out
}

/// The removal, from the host, of a file inside the staging root (a download, once
/// installed): `rm -f`, so a file already gone is no failure.
pub(super) fn remove_inside(staging: &Path, relative: &str) -> Argv {
    let mut out = argv(&["rm", "-f", "--"]);
    out.push(inside(staging, relative));
    out
}

/// A download on the host: TLS verified (with `cacert` when given, else the host's CA
/// store), https only, also across redirects; fails on HTTP errors.
pub(super) fn fetch(url: &str, dest: &str, cacert: Option<&Path>) -> Argv {
    let mut out = argv(&[
        "curl",
        "--fail",
        "--silent",
        "--show-error",
        "--location",
        "--proto",
        "=https",
        "--proto-redir",
        "=https",
        "--tlsv1.2",
    ]);
    if let Some(cacert) = cacert {
        out.push("--cacert".to_owned());
        out.push(path_arg(cacert));
    }
    out.extend(["--output".to_owned(), dest.to_owned(), url.to_owned()]);
    out
}

/// Where a download lands inside the staging root: root's home, which commands run
/// inside it with systemd-nspawn see as the host left it (not /tmp, where nspawn mounts
/// a fresh tmpfs). Removed again before the base is finished.
pub(super) fn download_path(url: &str) -> String {
    format!("/root/{}", url.rsplit('/').next().unwrap_or("download"))
}
