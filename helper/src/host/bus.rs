//! The system bus's connection limits a large fleet needs.
//!
//! Every running clone holds connections to the host's system bus: machined registers
//! it, and systemd keeps its scope and unit on the bus. They all count against one user
//! (root) in dbus-daemon, whose default `max_connections_per_user` is 256: a 500-clone
//! benchmark stopped at about 104 clones, the rest failing to register. dbus-daemon has
//! no command-line switch for it, only its XML configuration.
//!
//! dbus 1.14 (Debian 12) reads `/usr/share/dbus-1/system.conf`, which includes every
//! `*.conf` in `/etc/dbus-1/system.d/` and then `/etc/dbus-1/system-local.conf`. A
//! `<limit>` in an included file counts (the parser copies an included file's limits
//! back into the configuration), and a later file overrides an earlier one, so a
//! drop-in in `system.d/` raises the limits while an administrator's
//! `system-local.conf` still has the last word. Limits are re-read when the bus
//! reloads its configuration (`systemctl reload dbus`), and apply to new connections.
//! A limit name dbus-daemon does not know makes the whole configuration invalid (the
//! bus would refuse to start), so the names here are dbus 1.14's own and a test runs
//! the real dbus-daemon on the file where it is installed.

pub use crate::protocol::answers::BusLimits;
use crate::sys::fsutil::{read_optional, write_atomic};
use crate::sys::paths::Layout;
use crate::systemd::{Systemd, SystemdError};

pub const DBUS_DROPIN: &str = "/etc/dbus-1/system.d/puppet-clone-army.conf";
/// The unit whose reload makes the bus re-read its configuration (dbus-broker's unit
/// is aliased to it).
pub const DBUS_UNIT: &str = "dbus.service";
const MARKER: &str = "<!-- Managed by clone-army ";

/// dbus-daemon's limit names, their defaults (dbus 1.14) and the values a fleet needs.
pub const LIMITS: &[(&str, u64, u64)] = &[
    // Connections of one uid: every clone's machine registration and scope hold some.
    ("max_connections_per_user", 256, 4096),
    // Connections of all users together; must stay above the per-user limit.
    ("max_completed_connections", 2048, 8192),
    // Connections still authenticating: a wave of clones booting opens many at once.
    ("max_incomplete_connections", 64, 256),
];

pub fn is_ours(text: &str) -> bool {
    text.lines().any(|line| line.starts_with(MARKER))
}

/// The drop-in's content.
pub fn render() -> String {
    let mut text = String::from(
        "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN\"\n \
         \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n",
    );
    text.push_str(&format!(
        "{MARKER}{}. Changes will be overwritten. -->\n",
        env!("CARGO_PKG_VERSION")
    ));
    text.push_str(
        "<!-- Connection limits of the system bus for a large fleet of puppet-agent clones:\n     \
         each running clone holds connections of root (machined, its scope). -->\n<busconfig>\n",
    );
    for (name, default, wanted) in LIMITS {
        text.push_str(&format!(
            "  <limit name=\"{name}\">{wanted}</limit> <!-- default {default} -->\n"
        ));
    }
    text.push_str("</busconfig>\n");
    text
}

/// Writes the drop-in when it is missing or differs, and then has the bus reload its
/// configuration. Never fails: what could not be done is a warning on stderr and in the
/// answer (as with the kernel limits). A file of that name clone-army did not write is
/// left alone.
pub fn ensure(layout: &Layout, systemd: &dyn Systemd) -> BusLimits {
    let path = layout.fs(DBUS_DROPIN);
    let mut status = BusLimits {
        file: DBUS_DROPIN.to_owned(),
        applied: false,
        changed: false,
        reloaded: false,
        error: None,
    };
    match read_optional(&path) {
        Ok(Some(text)) if !is_ours(&text) => {
            status.error = Some(format!(
                "{} exists and was not written by clone-army; left as it is",
                path.display()
            ));
        }
        Ok(_) => match write_atomic(&path, render().as_bytes(), 0o644) {
            Ok(changed) => {
                status.applied = true;
                status.changed = changed;
            }
            Err(e) => status.error = Some(e.to_string()),
        },
        Err(e) => status.error = Some(e.to_string()),
    }
    if status.changed {
        match systemd.reload_unit(DBUS_UNIT) {
            Ok(()) => status.reloaded = true,
            Err(e) => status.error = Some(reload_error(&e)),
        }
    }
    if let Some(error) = &status.error {
        let (name, _, wanted) = LIMITS[0];
        crate::protocol::warnings::warn(format!(
            "the system bus's {name} may stay at its default, which holds \
             about 100 running clones (a fleet needs {wanted}): {error}"
        ));
    }
    status
}

fn reload_error(error: &SystemdError) -> String {
    format!("cannot reload the system bus (systemctl reload {DBUS_UNIT}): {error}")
}

/// Whether the drop-in is in place (for `host limits`; reads only).
pub fn present(layout: &Layout) -> bool {
    matches!(read_optional(&layout.fs(DBUS_DROPIN)), Ok(Some(text)) if is_ours(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systemd::RecordingSystemd;

    #[test]
    fn writes_the_dropin_once_and_reloads_the_bus_when_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::under(dir.path());
        let systemd = RecordingSystemd::default();
        let first = ensure(&layout, &systemd);
        assert!(
            first.applied && first.changed && first.reloaded,
            "{first:?}"
        );
        assert_eq!(first.error, None);
        let text = std::fs::read_to_string(dir.path().join(&DBUS_DROPIN[1..])).unwrap();
        assert_eq!(text, render());
        for line in [
            "  <limit name=\"max_connections_per_user\">4096</limit> <!-- default 256 -->\n",
            "  <limit name=\"max_completed_connections\">8192</limit> <!-- default 2048 -->\n",
            "  <limit name=\"max_incomplete_connections\">256</limit> <!-- default 64 -->\n",
        ] {
            assert!(text.contains(line), "{text}");
        }
        assert!(text.starts_with("<!DOCTYPE busconfig"), "{text}");
        assert_eq!(systemd.calls(), ["reload_unit dbus.service"]);
        // Again: nothing changes, the bus is left alone.
        let again = ensure(&layout, &systemd);
        assert!(again.applied && !again.changed && !again.reloaded);
        assert_eq!(systemd.calls().len(), 1);
        assert!(present(&layout));
    }

    #[test]
    fn a_foreign_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(&DBUS_DROPIN[1..]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "<busconfig/>\n").unwrap();
        let systemd = RecordingSystemd::default();
        let status = ensure(&Layout::under(dir.path()), &systemd);
        assert!(!status.applied && !status.changed);
        assert!(status.error.unwrap().contains("not written by clone-army"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<busconfig/>\n");
        assert!(systemd.calls().is_empty());
    }

    /// Runs the real dbus-daemon on a configuration that includes `dropin`; Err with its
    /// stderr when it refuses the configuration.
    fn dbus_daemon_accepts(dir: &std::path::Path, dropin: &str) -> Result<(), String> {
        use std::io::BufRead;
        let include = dir.join("dropin.conf");
        std::fs::write(&include, dropin).unwrap();
        let config = dir.join("bus.conf");
        std::fs::write(
            &config,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN\"\n \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
                 <busconfig>\n  <type>custom</type>\n  <listen>unix:path={}</listen>\n  \
                 <auth>EXTERNAL</auth>\n  <policy context=\"default\"><allow user=\"*\"/></policy>\n  \
                 <include>{}</include>\n</busconfig>\n",
                dir.join("socket").display(),
                include.display()
            ),
        )
        .unwrap();
        let mut child = std::process::Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address=1", "--nopidfile"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The address is printed once the configuration is loaded and the bus listens;
        // a refused configuration ends the daemon with nothing on stdout.
        let mut address = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        if address.starts_with("unix:") {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }

    /// dbus-daemon's own parser on the drop-in: a limit name it does not know (which
    /// would keep the system bus from starting) fails here.
    #[test]
    fn dbus_daemon_accepts_the_dropin() {
        std::process::Command::new("dbus-daemon")
            .arg("--version")
            .output()
            .expect("this test needs dbus-daemon (Debian package dbus; make deps installs it)");
        let dir = tempfile::tempdir().unwrap();
        dbus_daemon_accepts(dir.path(), &render()).unwrap();
        // The check can fail: a misspelt limit is refused.
        let misspelt = render().replace("max_incomplete_connections", "max_incoming_connections");
        let refused = dbus_daemon_accepts(dir.path(), &misspelt).unwrap_err();
        assert!(refused.contains("max_incoming_connections"), "{refused}");
    }
}
