//! What the host tells about itself: `/etc/os-release` and its apt sources, the
//! defaults for a base's OS, release and mirror.

use std::path::Path;

use crate::protocol::error::Result;
use crate::sys::fsutil::read_optional;
use crate::sys::paths::Layout;

/// `ID`, `ID_LIKE`, `VERSION_ID` and `VERSION_CODENAME` of an os-release file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OsRelease {
    pub id: Option<String>,
    pub version_codename: Option<String>,
    /// Space-separated in the file (`ID_LIKE="rhel centos fedora"`).
    pub id_like: Vec<String>,
    /// `9.4` on Rocky, `15.6` on openSUSE Leap: the default release outside Debian's family.
    pub version_id: Option<String>,
}

pub fn parse_os_release(text: &str) -> OsRelease {
    let mut os = OsRelease::default();
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        let value = value
            .trim()
            .trim_matches(|c| c == '"' || c == '\'')
            .to_owned();
        if value.is_empty() {
            continue;
        }
        match key.trim() {
            "ID" => os.id = Some(value),
            "VERSION_CODENAME" => os.version_codename = Some(value),
            "ID_LIKE" => os.id_like = value.split_whitespace().map(str::to_owned).collect(),
            "VERSION_ID" => os.version_id = Some(value),
            _ => {}
        }
    }
    os
}

/// One `deb` source: its URI and suites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AptSource {
    pub uri: String,
    pub suites: Vec<String>,
}

/// One-line format (`sources.list`, `*.list`): `deb [options] URI suite [components]`.
pub fn parse_one_line_sources(text: &str) -> Vec<AptSource> {
    let mut sources = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut rest = match line.strip_prefix("deb ") {
            Some(rest) => rest.trim_start(),
            None => continue,
        };
        if rest.starts_with('[') {
            match rest.find(']') {
                Some(end) => rest = rest[end + 1..].trim_start(),
                None => continue,
            }
        }
        let mut fields = rest.split_whitespace();
        if let (Some(uri), Some(suite)) = (fields.next(), fields.next()) {
            sources.push(AptSource {
                uri: uri.to_owned(),
                suites: vec![suite.to_owned()],
            });
        }
    }
    sources
}

/// deb822 format (`*.sources`): stanzas with `Types:`, `URIs:`, `Suites:`.
pub fn parse_deb822_sources(text: &str) -> Vec<AptSource> {
    let mut sources = Vec::new();
    for stanza in text.split("\n\n") {
        let mut types = Vec::new();
        let mut uris = Vec::new();
        let mut suites = Vec::new();
        let mut enabled = true;
        for line in stanza.lines() {
            if line.trim_start().starts_with('#') {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let values = || {
                value
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            };
            match key.trim().to_ascii_lowercase().as_str() {
                "types" => types = values(),
                "uris" => uris = values(),
                "suites" => suites = values(),
                "enabled" => enabled = value.trim() != "no",
                _ => {}
            }
        }
        if enabled && types.iter().any(|t| t == "deb") {
            for uri in uris {
                sources.push(AptSource {
                    uri,
                    suites: suites.clone(),
                });
            }
        }
    }
    sources
}

/// The first source that carries `release` itself (not `-security`/`-updates`).
pub fn pick_mirror(sources: &[AptSource], release: &str) -> Option<String> {
    sources
        .iter()
        .find(|s| s.suites.iter().any(|suite| suite == release))
        .map(|s| s.uri.clone())
}

pub fn read_os_release(layout: &Layout) -> Result<OsRelease> {
    Ok(read_optional(&layout.fs(layout.os_release()))?
        .map(|t| parse_os_release(&t))
        .unwrap_or_default())
}

/// Every `deb` source of the host: `sources.list`, then `sources.list.d/*.list` and
/// `*.sources` in name order, as apt reads them.
pub fn read_apt_sources(layout: &Layout) -> Result<Vec<AptSource>> {
    let mut sources = Vec::new();
    if let Some(text) = read_optional(&layout.fs(layout.apt_sources_list()))? {
        sources.extend(parse_one_line_sources(&text));
    }
    let dir = layout.fs(layout.apt_sources_dir());
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries.filter_map(|e| e.ok()).map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    for file in files {
        let Some(text) = read_optional(Path::new(&file))? else {
            continue;
        };
        match file.extension().and_then(|e| e.to_str()) {
            Some("list") => sources.extend(parse_one_line_sources(&text)),
            Some("sources") => sources.extend(parse_deb822_sources(&text)),
            _ => {}
        }
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release() {
        let os = parse_os_release(
            "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_CODENAME=bookworm\n",
        );
        assert_eq!(os.id.as_deref(), Some("debian"));
        assert_eq!(os.version_codename.as_deref(), Some("bookworm"));
        let os = parse_os_release("ID=\"ubuntu\"\nVERSION_CODENAME=\n");
        assert_eq!(os.id.as_deref(), Some("ubuntu"));
        assert_eq!(os.version_codename, None);
        let os =
            parse_os_release("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\n");
        assert_eq!(os.id_like, ["rhel", "centos", "fedora"]);
        assert_eq!(os.version_id.as_deref(), Some("9.4"));
    }

    #[test]
    fn one_line_sources() {
        let text = "# comment\ndeb-src http://x/debian bookworm main\n\
                    deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib\n\
                    deb http://security.debian.org/debian-security bookworm-security main\n";
        let sources = parse_one_line_sources(text);
        assert_eq!(sources.len(), 2);
        assert_eq!(sources[0].uri, "http://mirror.example/debian");
        assert_eq!(
            pick_mirror(&sources, "bookworm").as_deref(),
            Some("http://mirror.example/debian")
        );
    }

    #[test]
    fn deb822_sources() {
        let text = "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\n\
                    URIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\n\
                    Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n\n\
                    Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n";
        let sources = parse_deb822_sources(text);
        assert_eq!(sources.len(), 2);
        assert_eq!(
            pick_mirror(&sources, "bookworm").as_deref(),
            Some("http://deb.debian.org/debian")
        );
        assert_eq!(pick_mirror(&sources, "trixie"), None);
    }

    #[test]
    fn reads_the_host_files_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        std::fs::create_dir_all(dir.path().join("etc/apt/sources.list.d")).unwrap();
        std::fs::write(
            dir.path().join("etc/os-release"),
            "ID=debian\nVERSION_CODENAME=bookworm\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("etc/apt/sources.list.d/debian.sources"),
            "Types: deb\nURIs: http://m.example/debian\nSuites: bookworm\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("etc/apt/sources.list.d/x.list.disabled"),
            "deb http://no bookworm main\n",
        )
        .unwrap();
        let sources = read_apt_sources(&layout).unwrap();
        assert_eq!(sources.len(), 1);
        assert_eq!(
            read_os_release(&layout).unwrap().id.as_deref(),
            Some("debian")
        );
    }
}
