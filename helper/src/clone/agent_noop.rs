//! A clone's agent in noop: `noop = true` in its puppet.conf, so the server compiles full
//! catalogs and the agent evaluates them without changing the clone.
//!
//! The setting goes into `[agent]` (read by `puppet agent`: the daemon, the timer's runs
//! and `clone-army exec puppet agent -t`) and `[user]` (read by `puppet apply`, apply
//! mode), whatever the run mode, so a change of run mode needs no change here. Off, the
//! key goes from both (other keys a person added stay).

use super::puppet_conf;

/// The sections that carry the setting.
const SECTIONS: [&str; 2] = ["agent", "user"];

/// puppet.conf with the clone's agents in noop (`true`) or not.
pub fn puppet_conf_with(content: &str, noop: bool) -> String {
    SECTIONS.iter().fold(content.to_owned(), |conf, section| {
        puppet_conf::set_in_section(&conf, section, &[("noop", noop.then_some("true"))])
    })
}

/// Whether puppet.conf puts the agent in noop (`noop = true` in `[agent]`, as Puppet
/// reads booleans: `true`, any case).
pub fn read(content: &str) -> bool {
    puppet_conf::section(content, "agent")
        .iter()
        .rev()
        .find(|(key, _)| key == "noop")
        .is_some_and(|(_, value)| value.eq_ignore_ascii_case("true"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_it_is_in_agent_and_user_and_off_it_is_gone_keeping_the_rest() {
        let conf = puppet_conf::render(Some("puppet"), None, "c1.load1");
        let on = puppet_conf_with(&conf, true);
        assert_eq!(
            on,
            "[main]\nserver = puppet\ncertname = c1.load1\nusecacheonfailure = false\n\n[agent]\nnoop = true\n\n[user]\nnoop = true\n"
        );
        assert!(read(&on));
        assert_eq!(
            puppet_conf_with(&on, true),
            on,
            "a second write changes nothing"
        );
        assert_eq!(puppet_conf_with(&on, false), conf);
        assert!(!read(&conf));

        // The daemon's schedule in [agent] stays, with noop beside it and without.
        let daemon = "[main]\nserver = puppet\n\n[agent]\nruninterval = 1800\n";
        let on = puppet_conf_with(daemon, true);
        assert!(
            on.contains("[agent]\nruninterval = 1800\nnoop = true\n"),
            "{on}"
        );
        assert_eq!(puppet_conf_with(&on, false), daemon);
    }

    #[test]
    fn a_person_s_false_or_mixed_case_is_read_as_puppet_reads_it() {
        assert!(!read("[agent]\nnoop = false\n"));
        assert!(read("[agent]\nnoop = TRUE\n"));
        assert!(
            !read("[main]\nnoop = true\n"),
            "only [agent] is ours to read"
        );
    }
}
