//! The man page and the shell completions, made from [`Cli`]'s own definition so they
//! cannot drift from the command line: `clone-army man`, `clone-army completions SHELL`,
//! and the documents `clone-army host docs` installs.

use clap::CommandFactory;

use super::{Cli, CompletionShell};
use crate::protocol::answers::DocKind;

/// The program's name in the page and the completions.
const BIN: &str = "clone-army";

/// The command line as the documents show it: no `help` subcommand (every verb has
/// `--help`), bin names set on every subcommand (`clone-army clone list`).
fn command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true).bin_name(BIN);
    cmd.build();
    cmd
}

/// Leaf verbs, depth first in the order the command line declares them.
fn leaves(cmd: &clap::Command, out: &mut Vec<clap::Command>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.has_subcommands() {
            leaves(sub, out);
        } else {
            out.push(sub.clone());
        }
    }
}

/// The string register roff's `\*(Aq` (an apostrophe) needs; clap_mangen starts every
/// fragment it renders with it, the page needs it once.
const PREAMBLE: [&str; 2] = [".ie \\n(.g .ds Aq \\(aq", ".el .ds Aq '"];

/// A section clap_mangen rendered, without the preamble and, with `heading` false,
/// without its `.SH` heading (a verb's section goes under the verb's own `.SS`).
fn fragment(heading: bool, render: impl Fn(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = render(&mut buf);
    String::from_utf8_lossy(&buf)
        .lines()
        .filter(|l| !PREAMBLE.contains(l) && (heading || !l.starts_with(".SH ")))
        .map(|l| format!("{l}\n"))
        .collect()
}

const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
The verb did what was asked (for \fBexec\fR: the burst ran; each command's exit is in the answer).
.TP
\fB1\fR
It failed; the JSON envelope on stdout says why (\fBerror.kind\fR, \fBerror.message\fR).
.TP
\fB2\fR
Bad input or usage: an argument out of range or of the wrong form, named in \fBerror.field\fR.
A command line the parser refuses (an unknown verb or flag, a missing argument, a value
outside a flag's set) runs no verb: one line on stderr says why, nothing goes to stdout.
.SH OUTPUT
Every verb answers with one JSON document on stdout (the protocol: \fIdocs/PROTOCOL.md\fR in the
clone_army module, where the Puppet Server or \fBpuppet module install\fR put it), also on
failure; warnings and progress go to stderr, where \fBbase create\fR, \fBclone start\fR and
\fBclone create\-many\fR show a status line only when it is a terminal (nothing otherwise).
\fBclone list\fR, \fBbase list\fR, \fBexec\fR,
\fBreport\fR and \fBramp report\fR take \fB\-\-format auto|json|table\fR (\fBreport\fR also
\fBprometheus\fR, for monitoring): \fBauto\fR, the default, is a table when stdout is a terminal
and the JSON document otherwise; scripts that parse the answer pass \fB\-\-format json\fR.
\fBman\fR and \fBcompletions\fR print their text. Errors of a verb that ran are always the
envelope.
.SH FILES
.TP
\fI/var/lib/puppet\-clone\-army\fR
Base images and the clones' overlay layers.
.TP
\fI/var/lib/machines/<clone>\fR
Each clone's mounted root.
.TP
\fI/etc/systemd/system/puppet\-clone\-army@.service\fR
The clones' service template; \fBpuppet\-clone\-army.target\fR starts and stops the fleet.
.SH "SEE ALSO"
\fBsystemd\-nspawn\fR(1), \fBmachinectl\fR(1), \fBsystemctl\fR(1), \fBpuppet\-agent\fR(8)
"#;

/// The roff man page, section 8: the program, then every verb with its synopsis and
/// options, the exit status, the output and the files.
pub fn man_page() -> Vec<u8> {
    let cmd = command();
    let man = clap_mangen::Man::new(cmd.clone())
        .section("8")
        .manual("System Administration");
    let mut page: String = PREAMBLE.iter().map(|l| format!("{l}\n")).collect();
    for render in [
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
    ] {
        page.push_str(&fragment(true, |w| render(&man, w)));
    }
    page.push_str(".SH COMMANDS\n");
    let mut verbs = Vec::new();
    leaves(&cmd, &mut verbs);
    for verb in verbs {
        let name = verb.get_bin_name().unwrap_or(verb.get_name()).to_owned();
        page.push_str(&format!(".SS \"{}\"\n", name.replace('-', "\\-")));
        let man = clap_mangen::Man::new(verb);
        page.push_str(&fragment(false, |w| man.render_description_section(w)));
        page.push_str(".PP\n");
        page.push_str(&fragment(false, |w| man.render_synopsis_section(w)));
        page.push_str(&fragment(false, |w| man.render_options_section(w)));
    }
    page.push_str(EXIT_STATUS);
    page.push_str(&fragment(true, |w| man.render_version_section(w)));
    page.into_bytes()
}

/// The completion script for `shell`.
pub fn completion(shell: CompletionShell) -> Vec<u8> {
    let shell = match shell {
        CompletionShell::Bash => clap_complete::Shell::Bash,
        CompletionShell::Zsh => clap_complete::Shell::Zsh,
        CompletionShell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN, &mut buf);
    buf
}

/// What `host docs` installs, each with its exact content.
pub fn documents() -> Vec<(DocKind, Vec<u8>)> {
    DocKind::ALL
        .iter()
        .map(|&kind| {
            let content = match kind {
                DocKind::Man => man_page(),
                DocKind::BashCompletion => completion(CompletionShell::Bash),
                DocKind::ZshCompletion => completion(CompletionShell::Zsh),
                DocKind::FishCompletion => completion(CompletionShell::Fish),
            };
            (kind, content)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn the_man_page_is_section_8_and_documents_every_verb() {
        let page = text(man_page());
        assert!(page.contains("\n.TH clone-army 8 "), "{}", &page[..120]);
        // One preamble, at the top; then the title.
        assert_eq!(page.matches(".ds Aq").count(), 2);
        let mut verbs = Vec::new();
        leaves(&command(), &mut verbs);
        assert!(verbs.len() > 10);
        for verb in &verbs {
            let name = verb.get_bin_name().unwrap().replace('-', "\\-");
            assert!(
                page.contains(&format!(".SS \"{name}\"\n")),
                "{name} missing"
            );
        }
        for flag in [
            "\\-\\-format",
            "\\-\\-prefix",
            "\\-\\-ramp\\-up",
            "\\-\\-run\\-mode",
        ] {
            assert!(page.contains(flag), "{flag} missing");
        }
        assert!(page.contains(".SH \"EXIT STATUS\""));
        // Generated, not written: the same page twice (no date, nothing random).
        assert_eq!(page, text(man_page()));
    }

    #[test]
    fn completions_know_the_verbs_and_their_values() {
        let bash = text(completion(CompletionShell::Bash));
        assert!(
            bash.contains("complete -F _clone__army"),
            "no complete line"
        );
        for word in ["selinux", "docs", "completions", "--format", "json table"] {
            assert!(bash.contains(word), "bash: {word} missing");
        }
        let zsh = text(completion(CompletionShell::Zsh));
        assert!(zsh.starts_with("#compdef clone-army"));
        let fish = text(completion(CompletionShell::Fish));
        assert!(fish.contains("complete -c clone-army"));
    }

    #[test]
    fn host_docs_installs_the_page_and_the_bash_zsh_and_fish_scripts() {
        let documents = documents();
        let kinds: Vec<DocKind> = documents.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, DocKind::ALL);
        assert_eq!(documents[0].1, man_page());
        assert_eq!(documents[2].1, completion(CompletionShell::Zsh));
        assert_eq!(documents[3].1, completion(CompletionShell::Fish));
    }
}
