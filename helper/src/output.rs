//! The JSON envelope every invocation writes to stdout, and the result types of each verb.
//!
//! All types derive `Deserialize` as well as `Serialize`, so tests (and any Rust caller)
//! decode the answer back into these structs instead of matching strings.

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Bumped when a change to the envelope or a result is not backwards compatible.
pub const PROTOCOL_VERSION: u32 = 1;

/// The one document written to stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub protocol: u32,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

impl<T> Envelope<T> {
    pub fn success(result: T) -> Self {
        Envelope {
            protocol: PROTOCOL_VERSION,
            ok: true,
            result: Some(result),
            error: None,
        }
    }
}

impl Envelope<serde_json::Value> {
    pub fn failure(error: &Error) -> Self {
        Envelope {
            protocol: PROTOCOL_VERSION,
            ok: false,
            result: None,
            error: Some(ErrorBody::from(error)),
        }
    }
}

/// The `error` object of a failed invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default)]
    pub causes: Vec<String>,
}

impl From<&Error> for ErrorBody {
    fn from(error: &Error) -> Self {
        ErrorBody {
            kind: error.kind().to_owned(),
            message: error.to_string(),
            field: error.field().map(str::to_owned),
            causes: error.causes(),
        }
    }
}

/// `base create`: the base as `base list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseCreated {
    pub base: BaseInfo,
    pub changed: bool,
}

/// `base list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseList {
    pub bases: Vec<BaseInfo>,
}

/// One base as `base list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseInfo {
    pub name: String,
    pub path: String,
    pub os: String,
    pub release: String,
    pub puppet_source: String,
    pub puppet_confdir: String,
    /// Where the clones' agents write their run summaries (`last_run_summary.yaml`).
    #[serde(default)]
    pub puppet_publicdir: String,
    pub created_at: String,
    pub clones: Vec<String>,
}

/// `base remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseRemoved {
    pub name: String,
    pub changed: bool,
}

/// `clone create` and `clone configure`: the clone as `clone list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneChanged {
    pub clone: CloneInfo,
    pub changed: bool,
}

/// `clone create`: the clone, and whether it has a root password and a CSR challenge
/// password (never their values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneCreated {
    pub clone: CloneInfo,
    pub changed: bool,
    /// root has a password hash in the clone's /etc/shadow (for `machinectl login`).
    #[serde(default)]
    pub root_password: bool,
    /// the clone's csr_attributes.yaml carries a challengePassword (policy autosigning).
    #[serde(default)]
    pub challenge_password: bool,
}

/// `clone list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneList {
    pub clones: Vec<CloneInfo>,
}

/// Whether a clone's service is up, as the protocol reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CloneState {
    Running,
    Stopped,
}

impl CloneState {
    /// `running` for the ActiveStates in which the service is (or is becoming) up.
    pub fn from_active_state(active_state: &str) -> Self {
        match active_state {
            "active" | "activating" | "reloading" => CloneState::Running,
            _ => CloneState::Stopped,
        }
    }
}

/// One clone as `clone list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneInfo {
    pub name: String,
    pub base: String,
    /// `null` when the clone's puppet.conf has no `server` (or cannot be read).
    pub master: Option<String>,
    /// `null` when the clone's puppet.conf has no `certname` (or cannot be read).
    pub certname: Option<String>,
    pub state: CloneState,
    pub unit: String,
    pub mounted: bool,
}

/// `clone start` and `clone stop`: the clones as `clone list` reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneNames {
    pub clones: Vec<CloneInfo>,
}

/// `clone remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClonesRemoved {
    pub removed: Vec<String>,
    pub changed: bool,
}

/// Writes the envelope, one line, to stdout.
pub fn print<T: Serialize>(envelope: &Envelope<T>) {
    use std::io::Write;
    let text = serde_json::to_string(envelope).unwrap_or_else(|e| {
        // Serializing our own plain structs cannot fail; if it ever does, still answer in JSON.
        format!(
            r#"{{"protocol":{PROTOCOL_VERSION},"ok":false,"error":{{"kind":"internal","message":{},"causes":[]}}}}"#,
            serde_json::Value::String(e.to_string())
        )
    });
    let mut stdout = std::io::stdout().lock();
    // Nothing sensible is left to do when stdout itself is gone.
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use std::fmt::Debug;

    fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug + Clone>(value: T) {
        let envelope = Envelope::success(value.clone());
        let text = serde_json::to_string(&envelope).unwrap();
        let back: Envelope<T> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, envelope);
        assert_eq!(back.protocol, PROTOCOL_VERSION);
        assert!(back.ok);
        assert_eq!(back.result, Some(value));
    }

    #[test]
    fn every_result_type_round_trips() {
        let base = BaseInfo {
            name: "debian-12".into(),
            path: "/var/lib/puppet-clone-army/debian-12".into(),
            os: "debian".into(),
            release: "bookworm".into(),
            puppet_source: "distro".into(),
            puppet_confdir: "/etc/puppet".into(),
            puppet_publicdir: "/var/cache/puppet/public".into(),
            created_at: "2026-11-22T03:30:00Z".into(),
            clones: vec!["clone1".into()],
        };
        round_trip(BaseCreated {
            base: base.clone(),
            changed: true,
        });
        round_trip(BaseList { bases: vec![base] });
        round_trip(BaseRemoved {
            name: "debian-12".into(),
            changed: false,
        });
        let running = CloneInfo {
            name: "clone1".into(),
            base: "debian-12".into(),
            master: Some("puppet.example.com".into()),
            certname: Some("clone1.example.com".into()),
            state: CloneState::Running,
            unit: "puppet-clone-army@clone1.service".into(),
            mounted: true,
        };
        let stopped = CloneInfo {
            name: "clone2".into(),
            base: "debian-12".into(),
            master: None,
            certname: None,
            state: CloneState::Stopped,
            unit: "puppet-clone-army@clone2.service".into(),
            mounted: false,
        };
        round_trip(CloneChanged {
            clone: running.clone(),
            changed: true,
        });
        round_trip(CloneCreated {
            clone: running.clone(),
            changed: true,
            root_password: true,
            challenge_password: false,
        });
        round_trip(CloneList {
            clones: vec![running.clone(), stopped.clone()],
        });
        round_trip(CloneNames {
            clones: vec![running, stopped],
        });
        round_trip(ClonesRemoved {
            removed: vec!["clone1".into()],
            changed: true,
        });
    }

    #[test]
    fn clone_state_serializes_as_protocol_words() {
        assert_eq!(
            serde_json::to_value(CloneState::Running).unwrap(),
            serde_json::json!("running")
        );
        assert_eq!(
            CloneState::from_active_state("activating"),
            CloneState::Running
        );
        assert_eq!(CloneState::from_active_state("failed"), CloneState::Stopped);
        assert_eq!(
            CloneState::from_active_state("deactivating"),
            CloneState::Stopped
        );
    }

    #[test]
    fn error_envelope_round_trips_with_field_and_causes() {
        let error = Error::BaseBuildFailed {
            base: "debian-12".into(),
            source: Box::new(Error::io(
                "create",
                "/var/lib/puppet-clone-army/.staging-debian-12",
                std::io::Error::from_raw_os_error(28),
            )),
        };
        let text = serde_json::to_string(&Envelope::failure(&error)).unwrap();
        let back: Envelope<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert!(!back.ok);
        assert!(back.result.is_none());
        let body = back.error.unwrap();
        assert_eq!(body.kind, "base-build-failed");
        assert_eq!(body.field, None);
        assert_eq!(body.causes.len(), 2, "{:?}", body.causes);
        assert!(body.causes[0].contains(".staging-debian-12"));

        let invalid = Error::InvalidName {
            what: "clone",
            field: "name",
            name: "Bad".into(),
            reason: "upper case".into(),
        };
        let text = serde_json::to_string(&Envelope::failure(&invalid)).unwrap();
        let back: Envelope<serde_json::Value> = serde_json::from_str(&text).unwrap();
        let body = back.error.unwrap();
        assert_eq!(body.kind, "invalid-name");
        assert_eq!(body.field.as_deref(), Some("name"));
        assert!(body.causes.is_empty());
        assert_eq!(invalid.exit_code(), 2);
    }
}
