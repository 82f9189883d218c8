//! The clone's `puppet.conf`: `server`, `serverport` and `certname` in `[main]`, and
//! for an agent that asks a server, [`USE_CACHE_ON_FAILURE`].
//!
//! The helper writes exactly `[main]\nserver = M\ncertname = C\nusecacheonfailure = false\n`,
//! with `serverport = P` after the server when a port is given (`clone list` reads it
//! back); [`update`] keeps any other lines a person added.

use super::config::{Refused, PUPPET_CONF};
use crate::sys::names::validate_hostname;
pub use crate::sys::names::{DEFAULT_SERVER_PORT, SERVER_PORTS};

/// The setting every clone that asks a server is given in `[main]`, and its value.
///
/// Puppet's default (`true`) makes an agent whose catalog request fails (a 503 from a
/// server out of JRubies, a timeout, a compile error) apply the catalog it cached from an
/// earlier run, and its summary then says "unchanged": under load, failures would read as
/// check-ins, and a server answering 503 fast would even lower the run times. A load test
/// wants the failure. The `[agent]` section, which Puppet reads before `[main]`, can still
/// say otherwise for whoever wants the cache.
pub const USE_CACHE_ON_FAILURE: (&str, &str) = ("usecacheonfailure", "false");

/// The file as `clone create` writes it. Keep this format stable.
/// Without a server (apply mode), only the certname; without a port, Puppet's own
/// default ([`DEFAULT_SERVER_PORT`]) holds.
pub fn render(server: Option<&str>, server_port: Option<u16>, certname: &str) -> String {
    let mut text = String::from("[main]\n");
    if let Some(server) = server {
        text.push_str(&format!("server = {server}\n"));
        if let Some(port) = server_port {
            text.push_str(&format!("serverport = {port}\n"));
        }
    }
    text.push_str(&format!("certname = {certname}\n"));
    if server.is_some() {
        let (key, value) = USE_CACHE_ON_FAILURE;
        text.push_str(&format!("{key} = {value}\n"));
    }
    text
}

/// `server`, `serverport` and `certname` from `[main]` (or before any section, which
/// Puppet reads as main). The file is bound into the clone, whose root can rewrite it:
/// [`read_back`] takes only what `clone create` would write.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    pub server: Option<String>,
    pub server_port: Option<u16>,
    pub certname: Option<String>,
}

/// `server`, `serverport` and `certname` as `clone list` reports them: each only when it
/// is one `clone create` takes (a host name; a port of [`SERVER_PORTS`]), the others
/// refused with the rule's reason.
pub fn read_back(content: &str) -> (AgentSettings, Vec<Refused>) {
    let raw = raw_settings(content);
    let mut refused = Vec::new();
    let mut host = |setting: &'static str, value: Option<String>| {
        let value = value?;
        match validate_hostname(setting, &value) {
            Ok(()) => Some(value),
            Err(e) => {
                refused.push(Refused::by(PUPPET_CONF, setting, e));
                None
            }
        }
    };
    let server = host("server", raw.server);
    let certname = host("certname", raw.certname);
    let server_port = raw.server_port.and_then(|port| {
        let port = port.parse().ok().filter(|p| SERVER_PORTS.contains(p));
        if port.is_none() {
            refused.push(Refused {
                file: PUPPET_CONF.to_owned(),
                setting: "serverport",
                reason: format!(
                    "it is no port; allowed: {} to {}",
                    SERVER_PORTS.start(),
                    SERVER_PORTS.end()
                ),
            });
        }
        port
    });
    // In the order clone-army writes them.
    refused.sort_by_key(|r| {
        ["server", "serverport", "certname"]
            .iter()
            .position(|s| *s == r.setting)
    });
    (
        AgentSettings {
            server,
            server_port,
            certname,
        },
        refused,
    )
}

/// The three settings' values as they are written, not checked.
#[derive(Debug, Default)]
struct RawSettings {
    server: Option<String>,
    server_port: Option<String>,
    certname: Option<String>,
}

fn raw_settings(content: &str) -> RawSettings {
    let mut settings = RawSettings::default();
    let mut in_main = true;
    for line in content.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_main = line == "[main]";
            continue;
        }
        if !in_main || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            let value = Some(value.trim().to_owned());
            match key.trim() {
                "server" => settings.server = value,
                "serverport" => settings.server_port = value,
                "certname" => settings.certname = value,
                _ => {}
            }
        }
    }
    settings
}

/// The settings as they are written (a `serverport` that is no port read as none), for
/// readers that check what they use themselves; `clone list` reads with [`read_back`].
pub fn parse(content: &str) -> AgentSettings {
    let raw = raw_settings(content);
    AgentSettings {
        server: raw.server,
        server_port: raw
            .server_port
            .and_then(|p| p.parse().ok())
            .filter(|p| SERVER_PORTS.contains(p)),
        certname: raw.certname,
    }
}

/// Sets `server`, `serverport` and/or `certname` in `[main]`, keeping every other line;
/// a file that names a server (given or already there) also gets [`USE_CACHE_ON_FAILURE`],
/// so that a clone made before it was written has it from its next `clone configure`.
pub fn update(
    content: &str,
    server: Option<&str>,
    server_port: Option<u16>,
    certname: Option<&str>,
) -> String {
    let port = server_port.map(|p| p.to_string());
    let asks_a_server = server.is_some() || raw_settings(content).server.is_some();
    let (cache_key, cache_value) = USE_CACHE_ON_FAILURE;
    let wanted: Vec<(&str, &str)> = [
        ("server", server),
        ("serverport", port.as_deref()),
        ("certname", certname),
        (cache_key, asks_a_server.then_some(cache_value)),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect();
    let mut out: Vec<String> = Vec::new();
    let mut written: Vec<&str> = Vec::new();
    let mut section = String::from("main");
    let mut saw_main_header = false;
    let flush = |out: &mut Vec<String>, written: &mut Vec<&str>| {
        for (key, value) in &wanted {
            if !written.contains(key) {
                out.push(format!("{key} = {value}"));
                written.push(key);
            }
        }
    };
    for line in content.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            if section == "main" && saw_main_header {
                flush(&mut out, &mut written);
            }
            section = trimmed.trim_matches(|c| c == '[' || c == ']').to_owned();
            if section == "main" {
                saw_main_header = true;
            }
            out.push(line.to_owned());
            continue;
        }
        if section == "main" {
            if let Some((key, _)) = trimmed.split_once('=') {
                if let Some((k, v)) = wanted.iter().find(|(k, _)| *k == key.trim()) {
                    if !written.contains(k) {
                        out.push(format!("{k} = {v}"));
                        written.push(k);
                    }
                    continue;
                }
            }
        }
        out.push(line.to_owned());
    }
    if section == "main" && saw_main_header {
        flush(&mut out, &mut written);
    }
    if written.len() < wanted.len() {
        // No [main] section at all: put one first.
        let mut head = vec!["[main]".to_owned()];
        flush(&mut head, &mut written);
        if !out.is_empty() {
            head.push(String::new());
        }
        head.extend(out);
        out = head;
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The `key = value` settings of one section (`main` also takes lines before any header).
pub fn section(content: &str, name: &str) -> Vec<(String, String)> {
    let mut current = String::from("main");
    let mut settings = Vec::new();
    for line in content.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            current = line
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_owned();
            continue;
        }
        if current != name || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            settings.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    settings
}

/// Sets (`Some`) or removes (`None`) keys in section `name` (not `main`), keeping every
/// other line; a missing section is appended. A section left empty is removed.
pub fn set_in_section<'k>(content: &str, name: &str, keys: &[(&'k str, Option<&str>)]) -> String {
    let header = format!("[{name}]");
    let mut out: Vec<String> = Vec::new();
    let mut written: Vec<&'k str> = Vec::new();
    let mut in_section = false;
    let mut section_start = None;
    let flush = |out: &mut Vec<String>, written: &mut Vec<&'k str>| {
        for (key, value) in keys {
            if let (Some(value), false) = (value, written.contains(key)) {
                out.push(format!("{key} = {value}"));
                written.push(key);
            }
        }
    };
    for line in content.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            if in_section {
                flush(&mut out, &mut written);
            }
            in_section = trimmed == header;
            if in_section {
                section_start = Some(out.len());
            }
            out.push(line.to_owned());
            continue;
        }
        if in_section {
            if let Some((key, _)) = trimmed.split_once('=') {
                if let Some((k, v)) = keys.iter().find(|(k, _)| *k == key.trim()) {
                    if let (Some(v), false) = (v, written.contains(k)) {
                        out.push(format!("{k} = {v}"));
                        written.push(k);
                    }
                    continue;
                }
            }
        }
        out.push(line.to_owned());
    }
    if in_section {
        flush(&mut out, &mut written);
    }
    if section_start.is_none() && keys.iter().any(|(_, v)| v.is_some()) {
        if out.last().is_some_and(|l| !l.trim().is_empty()) {
            out.push(String::new());
        }
        section_start = Some(out.len());
        out.push(header.clone());
        flush(&mut out, &mut written);
    }
    // A section of ours with nothing left in it goes, with the blank line before it.
    if let Some(start) = section_start {
        let rest = &out[start + 1..];
        let end = rest
            .iter()
            .position(|l| l.trim().starts_with('['))
            .map_or(out.len(), |p| start + 1 + p);
        if out[start + 1..end].iter().all(|l| l.trim().is_empty()) {
            out.drain(start..end);
            if start > 0 && start == out.len() && out[start - 1].trim().is_empty() {
                out.pop();
            }
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_and_parse_round_trip() {
        let text = render(Some("puppet.example.com"), None, "c1.example.com");
        assert_eq!(
            text,
            "[main]\nserver = puppet.example.com\ncertname = c1.example.com\nusecacheonfailure = false\n"
        );
        let settings = parse(&text);
        assert_eq!(settings.server.as_deref(), Some("puppet.example.com"));
        assert_eq!(settings.server_port, None);
        assert_eq!(settings.certname.as_deref(), Some("c1.example.com"));

        let text = render(Some("puppet"), Some(8141), "c1");
        assert_eq!(
            text,
            "[main]\nserver = puppet\nserverport = 8141\ncertname = c1\nusecacheonfailure = false\n"
        );
        assert_eq!(parse(&text).server_port, Some(8141));
        assert_eq!(render(None, Some(8141), "c1"), "[main]\ncertname = c1\n");
    }

    /// An agent whose catalog request fails must not apply its cached catalog and call
    /// the run "unchanged": every clone that asks a server is told so; apply mode asks none.
    #[test]
    fn an_agent_clone_is_not_left_to_apply_its_cached_catalog_on_failure() {
        let text = render(Some("puppet"), None, "c1");
        assert_eq!(
            section(&text, "main").last(),
            Some(&("usecacheonfailure".to_owned(), "false".to_owned()))
        );
        assert!(!render(None, None, "c1").contains("usecacheonfailure"));
    }

    /// A clone made before the setting was written, or whose file a person set back to
    /// Puppet's default in `[main]`, is held to it again by the next update.
    #[test]
    fn an_older_clone_loses_its_cached_catalog_fallback_at_its_next_update() {
        let old = "[main]\nserver = puppet\ncertname = c1\n";
        assert_eq!(
            update(old, None, None, None),
            render(Some("puppet"), None, "c1")
        );
        let set_back = "[main]\nserver = puppet\ncertname = c1\nusecacheonfailure = true\n";
        assert_eq!(
            update(set_back, None, None, None),
            render(Some("puppet"), None, "c1")
        );
        // Apply mode names no server and is left as it is.
        let apply = render(None, None, "c1");
        assert_eq!(update(&apply, None, None, None), apply);
    }

    #[test]
    fn a_serverport_that_is_no_port_is_read_as_none() {
        for value in ["", "0", "-1", "65536", "8140x", "port"] {
            let text = format!("[main]\nserver = m\nserverport = {value}\n");
            assert_eq!(parse(&text).server_port, None, "{value:?}");
        }
        assert_eq!(parse("serverport=1\n").server_port, Some(1));
        assert_eq!(parse("serverport = 65535\n").server_port, Some(65535));
    }

    #[test]
    fn read_back_takes_only_what_create_writes() {
        let text = render(Some("puppet.example.com"), Some(8141), "c1.load");
        assert_eq!(read_back(&text), (parse(&text), Vec::new()));
        let huge = "x".repeat(1 << 20);
        let (settings, refused) = read_back(&format!(
            "server = a b\nserverport = 0\ncertname = {huge}\n"
        ));
        assert_eq!(settings, AgentSettings::default());
        let said: Vec<(&str, &str)> = refused
            .iter()
            .map(|r| (r.file.as_str(), r.setting))
            .collect();
        assert_eq!(
            said,
            [
                ("puppet.conf", "server"),
                ("puppet.conf", "serverport"),
                ("puppet.conf", "certname")
            ]
        );
        assert!(refused.iter().all(|r| r.reason.len() < 300), "{refused:?}");
    }

    #[test]
    fn parse_ignores_other_sections() {
        let settings = parse("[agent]\nserver = nope\n[main]\ncertname=c1\n");
        assert_eq!(settings.server, None);
        assert_eq!(settings.certname.as_deref(), Some("c1"));
    }

    #[test]
    fn update_of_rendered_file_stays_in_the_stable_format() {
        let text = render(Some("old"), None, "c1");
        assert_eq!(
            update(&text, Some("new"), None, None),
            render(Some("new"), None, "c1")
        );
        assert_eq!(update(&text, None, None, None), text);
        let with_port = render(Some("old"), Some(8141), "c1");
        assert_eq!(
            update(&with_port, Some("new"), Some(8142), None),
            render(Some("new"), Some(8142), "c1")
        );
        // A port set later goes at the end of [main]; Puppet reads it all the same.
        let added = update(&text, None, Some(8141), None);
        assert_eq!(
            added,
            "[main]\nserver = old\ncertname = c1\nusecacheonfailure = false\nserverport = 8141\n"
        );
        assert_eq!(parse(&added).server_port, Some(8141));
    }

    #[test]
    fn update_keeps_other_lines_and_adds_missing_keys() {
        let text = "[main]\nssldir = /var/lib/puppet/ssl\n\n[master]\nvardir = /x\n";
        let updated = update(text, Some("m"), None, Some("c"));
        assert_eq!(
            updated,
            "[main]\nssldir = /var/lib/puppet/ssl\n\nserver = m\ncertname = c\nusecacheonfailure = false\n[master]\nvardir = /x\n"
        );
        let updated = update("[agent]\nx = 1\n", Some("m"), None, None);
        assert_eq!(
            updated,
            "[main]\nserver = m\nusecacheonfailure = false\n\n[agent]\nx = 1\n"
        );
        assert_eq!(parse(&updated).server.as_deref(), Some("m"));
    }

    #[test]
    fn agent_section_is_set_read_and_removed() {
        let base = render(Some("m"), None, "c");
        let with = set_in_section(
            &base,
            "agent",
            &[("runinterval", Some("900")), ("splay", None)],
        );
        assert_eq!(
            with,
            "[main]\nserver = m\ncertname = c\nusecacheonfailure = false\n\n[agent]\nruninterval = 900\n"
        );
        assert_eq!(
            section(&with, "agent"),
            vec![("runinterval".to_owned(), "900".to_owned())]
        );
        let again = set_in_section(&with, "agent", &[("runinterval", Some("900"))]);
        assert_eq!(again, with);
        let changed = set_in_section(
            &with,
            "agent",
            &[("runinterval", Some("60")), ("splay", Some("true"))],
        );
        assert_eq!(
            changed,
            "[main]\nserver = m\ncertname = c\nusecacheonfailure = false\n\n[agent]\nruninterval = 60\nsplay = true\n"
        );
        let removed = set_in_section(&changed, "agent", &[("runinterval", None), ("splay", None)]);
        assert_eq!(removed, base);
        let kept = set_in_section(
            "[agent]\nnoop = true\nsplay = true\n[user]\nx = 1\n",
            "agent",
            &[("splay", None)],
        );
        assert_eq!(kept, "[agent]\nnoop = true\n[user]\nx = 1\n");
    }
}
