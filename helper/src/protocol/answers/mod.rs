//! The JSON envelope every invocation writes to stdout, and the result types of each verb.
//!
//! All types derive `Deserialize` as well as `Serialize`, so tests (and any Rust caller)
//! decode the answer back into these structs instead of matching strings.
//!
//! One file per verb (group): [`base`], [`clone`], [`ssl`], [`exec`], [`host`], [`report`], [`twin`];
//! every type is re-exported here, so callers name `answers::X` whatever file it is in.

pub mod base;
pub mod clone;
pub mod exec;
pub mod host;
pub mod report;
pub mod ssl;
pub mod twin;

pub use base::*;
pub use clone::*;
pub use exec::*;
pub use host::*;
pub use report::*;
pub use ssl::*;
pub use twin::*;

use serde::{Deserialize, Serialize};

use crate::protocol::error::{Error, ErrorKind};

/// Bumped when a change to the envelope or a result is not backwards compatible.
pub const PROTOCOL_VERSION: u32 = 2;

/// The one document written to stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub protocol: u32,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// What the helper warned about on the way (also said on stderr), for callers that
    /// do not show stderr.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl<T> Envelope<T> {
    pub fn success(result: T) -> Self {
        Envelope {
            protocol: PROTOCOL_VERSION,
            ok: true,
            result: Some(result),
            error: None,
            warnings: Vec::new(),
        }
    }

    /// The answer with the invocation's warnings ([`super::warnings::take`]).
    pub fn with_warnings(self, warnings: Vec<String>) -> Self {
        Envelope { warnings, ..self }
    }
}

impl Envelope<serde_json::Value> {
    pub fn failure(error: &Error) -> Self {
        Envelope {
            protocol: PROTOCOL_VERSION,
            ok: false,
            result: None,
            error: Some(ErrorBody::from(error)),
            warnings: Vec::new(),
        }
    }
}

/// The `error` object of a failed invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default)]
    pub causes: Vec<String>,
}

impl From<&Error> for ErrorBody {
    fn from(error: &Error) -> Self {
        ErrorBody {
            kind: error.kind(),
            message: error.to_string(),
            field: error.field().map(str::to_owned),
            causes: error.causes(),
        }
    }
}

/// Writes the envelope, one line, to stdout.
pub fn print<T: Serialize>(envelope: &Envelope<T>) {
    use std::io::Write;
    let text = serde_json::to_string(envelope).unwrap_or_else(|e| {
        // Serializing our own plain structs cannot fail; if it ever does, still answer in JSON.
        format!(
            r#"{{"protocol":{PROTOCOL_VERSION},"ok":false,"error":{{"kind":"{}","message":{},"causes":[]}}}}"#,
            ErrorKind::Internal,
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
        round_trip(BaseList {
            bases: vec![base],
            problems: Vec::new(),
        });
        round_trip(BaseRemoved {
            name: "debian-12".into(),
            changed: false,
        });
        let running = CloneInfo {
            name: "clone1".into(),
            base: "debian-12".into(),
            server: Some("puppet.example.com".into()),
            server_port: Some(8141),
            certname: Some("clone1.example.com".into()),
            state: CloneState::Running,
            unit: "puppet-clone-army@clone1.service".into(),
            mounted: true,
            problems: Vec::new(),
            shape: CloneShape {
                run_mode: Some(RunMode::Timer),
                runinterval: Some(1800),
                splay: Some(0),
                phase_index: Some(3),
                phase_count: Some(10),
                phasing: Some(Phasing::PrefixEven),
                memory_max: Some("512M".into()),
                cpu_quota: Some("50%".into()),
                tasks_max: Some(4096),
                facts: serde_json::json!({"role": "web", "tier": 3})
                    .as_object()
                    .cloned()
                    .unwrap(),
                generated_facts: 500,
                churn_percent: Some(15),
                apply_source: None,
                agent_noop: true,
                twin_of: Some("web01.prod.example.com".into()),
            },
        };
        let stopped = CloneInfo {
            name: "clone2".into(),
            base: "debian-12".into(),
            server: None,
            server_port: None,
            certname: None,
            state: CloneState::Stopped,
            unit: "puppet-clone-army@clone2.service".into(),
            mounted: false,
            problems: vec![Problem {
                kind: ProblemKind::UpperDirMissing,
                message: "its upper dir is missing".into(),
                fix: "clone-army clone remove -- clone2".into(),
            }],
            shape: CloneShape::default(),
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
            host_limits: vec![LimitStatus {
                name: "fs.inotify.max_user_instances".into(),
                current: Some(128),
                wanted: 8192,
                applied: false,
                caps_clones: Some(21),
                error: Some("cannot write /proc/sys/fs/inotify/max_user_instances: Read-only file system (os error 30)".into()),
            }],
            bus_limits: Some(BusLimits {
                file: "/etc/dbus-1/system.d/clone-army.conf".into(),
                applied: true,
                changed: true,
                reloaded: true,
                error: None,
            }),
        });
        round_trip(ClonesStarted {
            clones: vec![running.clone()],
            waves: vec![vec!["clone1".into()]],
            ramp_up_seconds: 0,
            host_limits: Vec::new(),
            bus_limits: None,
        });
        round_trip(CloneList {
            clones: vec![running.clone(), stopped.clone()],
            problems: vec![Problem {
                kind: ProblemKind::OrphanMount,
                message: "no unit owns it".into(),
                fix: "umount -- /var/lib/machines/old".into(),
            }],
        });
        round_trip(CloneNames {
            clones: vec![running, stopped],
        });
        round_trip(ClonesRemoved {
            removed: vec!["clone1".into()],
            changed: true,
        });
        round_trip(ExecResult {
            command: vec!["puppet".into(), "agent".into(), "-t".into()],
            clones: vec![
                ExecEntry {
                    name: "clone1".into(),
                    exit_code: Some(2),
                    signal: None,
                    seconds: 3.217,
                    timed_out: false,
                    stdout_tail: "Notice: Applied catalog in 0.02 seconds\n".into(),
                    stderr_tail: String::new(),
                    error: None,
                },
                ExecEntry {
                    name: "clone2".into(),
                    exit_code: None,
                    signal: None,
                    seconds: 0.0,
                    timed_out: false,
                    stdout_tail: String::new(),
                    stderr_tail: String::new(),
                    error: Some(ExecProblem {
                        kind: ExecProblemKind::NotRunning,
                        message: "clone \"clone2\" is not running".into(),
                    }),
                },
            ],
            summary: ExecSummary {
                count: 2,
                succeeded: 0,
                failed: 2,
                not_run: 1,
                timed_out: 0,
                p50_seconds: Some(3.217),
                p95_seconds: Some(3.217),
                max_seconds: Some(3.217),
                wall_seconds: 3.3,
                concurrency: 10,
                timeout_seconds: 600,
            },
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
