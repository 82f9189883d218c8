//! Clone verbs against a temporary root and the recording systemd fake: the shared
//! fixture here, the tests by verb in the files beside it.

mod configure;
mod create;
mod extensions;
mod lifecycle;
mod list;
mod remove;
mod secrets;
mod shape;
mod ssl;
mod twin;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::base;
use crate::protocol::answers::CloneState;
use crate::sys::paths::Layout;
use crate::systemd::RecordingSystemd;

/// A clone on the fixture's base, not started, with no shape (the base's own).
fn request(name: &str) -> CloneRequest {
    CloneRequest {
        name: name.into(),
        base: "debian-12".into(),
        server: Some("puppet.example.com".into()),
        certname: format!("{name}.load.example.com"),
        start: false,
        ..Default::default()
    }
}

/// `create` with a load shape, as the CLI passes one.
fn create_with(
    ctx: &Context,
    request: &CloneRequest,
    shape: &super::shape::ShapeRequest,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneCreated> {
    create(
        ctx,
        &CloneRequest {
            shape: Some(shape.clone()),
            ..request.clone()
        },
    )
}

/// `create` with secret files.
fn create_with_secrets(
    ctx: &Context,
    request: &CloneRequest,
    secret_files: &SecretFiles,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneCreated> {
    create(
        ctx,
        &CloneRequest {
            secret_files: secret_files.clone(),
            ..request.clone()
        },
    )
}

/// `configure` of the server and certname only.
fn configure(
    ctx: &Context,
    clone: &str,
    server: Option<&str>,
    certname: Option<&str>,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneChanged> {
    configure_with(ctx, clone, server, certname, &Default::default())
}

/// `configure` with a load shape.
fn configure_with(
    ctx: &Context,
    clone: &str,
    server: Option<&str>,
    certname: Option<&str>,
    shape: &super::shape::ShapeRequest,
) -> crate::protocol::error::Result<crate::protocol::answers::CloneChanged> {
    super::configure(
        ctx,
        &ConfigureRequest {
            name: clone.to_owned(),
            server: server.map(str::to_owned),
            server_port: None,
            certname: certname.map(str::to_owned),
            twin_file: None,
            shape: shape.clone(),
        },
    )
}

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    layout: Layout,
    pub(crate) systemd: RecordingSystemd,
}

impl Fixture {
    /// A root with one complete base, `debian-12`, whose /etc/puppet is 0750.
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let base = root.join("var/lib/puppet-clone-army/debian-12");
        fs::create_dir_all(base.join("etc/clone-army")).unwrap();
        fs::create_dir_all(base.join("etc/puppet")).unwrap();
        fs::set_permissions(
            base.join("etc/puppet"),
            std::os::unix::fs::PermissionsExt::from_mode(0o750),
        )
        .unwrap();
        fs::write(
            base.join("etc/puppet/puppet.conf"),
            "[main]\nssldir = /var/lib/puppet/ssl\n",
        )
        .unwrap();
        fs::write(base.join("etc/hostname"), "base\n").unwrap();
        let metadata = base::BaseMetadata {
            name: "debian-12".into(),
            os: "debian".into(),
            release: "bookworm".into(),
            mirror: "http://deb.debian.org/debian".into(),
            puppet_source: "distro".into(),
            puppet_confdir: "/etc/puppet".into(),
            puppet_publicdir: "/var/cache/puppet/public".into(),
            created_at: "2026-11-22T03:30:00Z".into(),
            builder: "debootstrap".into(),
        };
        fs::write(
            base.join("etc/clone-army/base.json"),
            serde_json::to_string(&metadata).unwrap(),
        )
        .unwrap();
        Fixture {
            layout: Layout::under(&root),
            root,
            _dir: dir,
            systemd: RecordingSystemd::default(),
        }
    }

    pub(crate) fn ctx(&self) -> Context<'_> {
        let mut ctx = Context::new(self.layout.clone(), &self.systemd);
        ctx.wait_timeout = Duration::from_secs(1);
        ctx.lock_timeout = Duration::from_secs(1);
        ctx
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, system_path: &str) -> PathBuf {
        self.layout.fs(system_path)
    }

    pub(crate) fn create(&self, name: &str, start: bool) -> crate::protocol::answers::CloneChanged {
        create(
            &self.ctx(),
            &CloneRequest {
                name: name.into(),
                base: "debian-12".into(),
                server: Some("puppet.example.com".into()),
                certname: format!("{name}.load.example.com"),
                start,
                ..Default::default()
            },
        )
        .unwrap()
        .into()
    }

    /// Makes the fake mount table list `/var/lib/machines/<clone>` as mounted.
    pub(crate) fn mount(&self, clones: &[&str]) {
        let mut text = String::from("22 1 8:1 / / rw - ext4 /dev/vda rw\n");
        for (i, clone) in clones.iter().enumerate() {
            text.push_str(&format!(
                "{} 22 0:5{i} / /var/lib/machines/{clone} rw - overlay overlay rw\n",
                60 + i
            ));
        }
        fs::create_dir_all(self.root.join("proc/self")).unwrap();
        fs::write(self.root.join("proc/self/mountinfo"), text).unwrap();
    }

    /// How many daemon-reloads were asked for.
    fn reloads(&self) -> usize {
        self.actions()
            .iter()
            .filter(|c| *c == "daemon_reload")
            .count()
    }

    /// The calls that change something (reads of unit states left out).
    fn actions(&self) -> Vec<String> {
        self.systemd
            .calls()
            .into_iter()
            .filter(|c| !c.starts_with("unit_states "))
            .collect()
    }

    fn read(&self, system_path: &str) -> String {
        fs::read_to_string(self.path(system_path)).unwrap()
    }

    /// Each create refused on `field` with an error holding its text, before anything of
    /// the clone was written or systemd asked.
    fn assert_refused_untouched<const N: usize>(
        &self,
        field: &str,
        cases: [(CloneRequest, &str); N],
    ) {
        for (request, expected) in cases {
            let error = create(&self.ctx(), &request).unwrap_err();
            assert_eq!(error.field(), Some(field), "{error}");
            assert!(error.to_string().contains(expected), "{error}");
            let config = format!("/var/lib/puppet-clone-army/{}-config", request.name);
            assert!(!self.path(&config).exists(), "{config}");
        }
        assert!(
            self.systemd.calls().is_empty(),
            "{:?}",
            self.systemd.calls()
        );
    }

    /// An apply source at `system_path` with its `manifests/`: every directory on the
    /// way 0755 whatever the umask, as an apply source must be (root's, or the test's,
    /// and writable by no one else).
    fn apply_source(&self, system_path: &str) {
        let mut path = self.root.clone();
        for component in Path::new(system_path).join("manifests").iter().skip(1) {
            path.push(component);
            fs::create_dir_all(&path).unwrap();
            fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().mode() & 0o7777
}

fn puppet_conf_settings(text: &str) -> (Option<String>, Option<String>) {
    let s = crate::clone::puppet_conf::parse(text);
    (s.server, s.certname)
}

use super::run_mode::RunMode;
use super::shape::ShapeRequest;

const UPPER_C1: &str = "/var/lib/puppet-clone-army/c1-overlay";
const CONFIG_C1: &str = "/var/lib/puppet-clone-army/c1-config";

impl Fixture {
    fn create_shaped(
        &self,
        name: &str,
        shape: ShapeRequest,
    ) -> crate::protocol::answers::CloneChanged {
        create_with(&self.ctx(), &request(name), &shape)
            .unwrap()
            .into()
    }

    fn configure_shape(
        &self,
        name: &str,
        shape: ShapeRequest,
    ) -> crate::protocol::answers::CloneChanged {
        configure_with(&self.ctx(), name, None, None, &shape).unwrap()
    }

    /// A file among c1's run units (in its config dir).
    fn in_units(&self, name: &str) -> PathBuf {
        self.path(&format!("{CONFIG_C1}/systemd/{name}"))
    }

    fn link_in_units(&self, name: &str) -> Option<PathBuf> {
        fs::read_link(self.in_units(name)).ok()
    }
}

fn timer_shape() -> ShapeRequest {
    ShapeRequest {
        run_mode: Some(RunMode::Timer),
        runinterval: Some(600),
        splay: Some(20),
        phase_index: Some(1),
        phase_count: Some(4),
        ..ShapeRequest::default()
    }
}

fn apply_shape(source: Option<&str>) -> ShapeRequest {
    ShapeRequest {
        run_mode: Some(RunMode::Apply),
        runinterval: Some(600),
        phase_index: Some(1),
        phase_count: Some(4),
        apply_source: source.map(PathBuf::from),
        ..ShapeRequest::default()
    }
}

fn invalid_field<T: std::fmt::Debug>(result: crate::protocol::error::Result<T>) -> &'static str {
    match result {
        Err(crate::protocol::error::Error::InvalidArgument { field, .. }) => field,
        other => panic!("{other:?}"),
    }
}
