//! A clone's SSL directory (the agent's key, its certificate, the CA's certificate and
//! CRL), kept on the host per certname, outside the clone's upper layer:
//! `/var/lib/puppet-clone-army/.ssl/<certname>/` (0700, in the 0700 state directory), bound
//! read-write into the clone at its agent's `ssldir` by the clone's `.nspawn` settings
//! (`/var/lib/puppet/ssl` for Debian's and Ubuntu's package, `/etc/puppetlabs/puppet/ssl`
//! for the all-in-one packages: [`ssldir_for`] the base's confdir).
//!
//! Why: a CA with Puppet's default `allow_duplicate_certs = false` (Puppet Server's, PE's)
//! refuses a new key under a certname it has signed. A clone's upper layer goes when the
//! clone is removed, so a clone re-created under the same certname (a fleet shrunk then
//! grown, a new base, `ensure => absent` then `present`, an incomplete clone made again)
//! came back with a new key and never checked in again. Kept here, the directory outlives
//! the clone: `clone remove` keeps it, and the clone re-created under that certname has
//! its key and certificate again. `clone remove --forget-ssl` and `ssl forget` remove it,
//! once the CA has cleaned the certificate (the `clone_army::clean_certs` task).
//!
//! The directory is the clone's to write: the helper makes it and removes it (no-follow,
//! [`crate::sys::confined::make_dir_in`] and the standard library's `remove_dir_all`, which
//! never follows a symlink), and never reads anything in it. The clone cannot touch
//! `.ssl/` itself, only what is inside its own directory.
//!
//! A clone made before this (its SSL directory in its upper layer) is left as it is while
//! it exists: it is given no bind, so it keeps the key it has. When it is removed, its
//! directory is moved here (one rename, nothing read), and it comes back with it. A clone
//! once bound stays bound: a new certname gets its own kept directory, even though a boot
//! leaves the bind's mount point (the agent's ssldir) in the upper layer.
//!
//! Which kept directory is whose is decided by the helper's own records only: the bind in
//! the clone's `.nspawn` settings, and [`CERTNAME_RECORD`] in its config dir, neither of
//! which the clone can reach. Never by the clone's puppet.conf or hostname: those are bound
//! into the clone, and its root can rewrite them (remounting the bind read-write) to name
//! another clone's certname, whose directory `--forget-ssl` would then remove, or a
//! certname no clone has yet, under which it would leave a key and a CA certificate of
//! its choosing for the clone made later under that name.

use std::path::{Path, PathBuf};

use super::config::{CloneConfig, CERTNAME_RECORD};
use crate::context::Context;
use crate::inventory::bases::{ssldir_for, AIO_PUPPET_SSLDIR, DISTRO_PUPPET_SSLDIR};
use crate::protocol::answers::{SslDir, SslDirs, SslForgotten};
use crate::protocol::error::{Error, Result};
use crate::sys::confined::{make_dir_in, CloneTree};
use crate::sys::fsutil::{create_dir_all, read_optional, remove_dir_all};
use crate::sys::names::validate_hostname;
use crate::sys::paths::Layout;

/// The kept directories, and `.ssl/` that holds them: root only.
pub const SSL_DIR_MODE: u32 = 0o700;

/// One clone's SSL directory bound into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslBind {
    /// The kept directory, as a system path.
    pub host: PathBuf,
    /// The agent's `ssldir` in the clone.
    pub dest: String,
}

impl SslBind {
    pub fn of(layout: &Layout, certname: &str, confdir: &str) -> Self {
        SslBind {
            host: layout.ssl_dir(certname),
            dest: ssldir_for(confdir).to_owned(),
        }
    }

    /// The `.nspawn` settings line: read-write.
    pub fn line(&self) -> String {
        format!("Bind={}:{}\n", self.host.display(), self.dest)
    }

    /// The bind of a settings file's text, when it has one of a kept SSL directory (one
    /// directly in `.ssl/` named by a valid certname).
    pub fn parse(layout: &Layout, text: &str) -> Option<Self> {
        text.lines()
            .filter_map(|line| line.trim().strip_prefix("Bind="))
            .filter_map(|bind| bind.split_once(':'))
            .find_map(|(host, dest)| {
                let certname = Path::new(host)
                    .strip_prefix(layout.ssl_root())
                    .ok()?
                    .to_str()?;
                validate_hostname("certname", certname).ok()?;
                Some(SslBind::of(layout, certname, "").with_dest(dest))
            })
    }

    fn with_dest(self, dest: &str) -> Self {
        SslBind {
            dest: dest.to_owned(),
            ..self
        }
    }

    /// The certname whose directory this is.
    pub fn certname(&self) -> String {
        self.host
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Whether a kept SSL directory exists for `certname` (a validated hostname).
pub fn is_kept(layout: &Layout, certname: &str) -> Result<bool> {
    match std::fs::symlink_metadata(layout.fs(layout.ssl_dir(certname))) {
        Ok(m) => Ok(m.is_dir()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("inspect", layout.ssl_dir(certname), e)),
    }
}

/// Makes the kept directory for `certname` (and `.ssl/`), 0700. Returns whether it made it.
pub fn ensure(layout: &Layout, certname: &str) -> Result<bool> {
    validate_hostname("certname", certname)?;
    let root = layout.fs(layout.ssl_root());
    let mut made = create_dir_all(&root, SSL_DIR_MODE)?;
    made |= make_dir_in(&root, certname, SSL_DIR_MODE)?;
    Ok(made)
}

/// The bind a clone being created or configured gets: its kept directory (made when
/// missing), unless the clone was made before SSL directories were kept (it has no bind
/// yet, its upper layer holds the agent's own and nothing is kept for its certname): then
/// `None`, and it keeps the key it has. `bound`: whether the clone has a bind now; one
/// that has keeps one, since a boot leaves the bind's mount point in the upper layer.
pub fn bind_for(
    layout: &Layout,
    clone: &str,
    certname: &str,
    confdir: &str,
    bound: bool,
) -> Result<Option<SslBind>> {
    validate_hostname("certname", certname)?;
    let bind = SslBind::of(layout, certname, confdir);
    if !bound && !is_kept(layout, certname)? && upper_tree(layout, clone).is_dir(&bind.dest)? {
        return Ok(None);
    }
    ensure(layout, certname)?;
    Ok(Some(bind))
}

/// Records `certname` as the clone's (see [`CERTNAME_RECORD`]). Returns whether it changed.
pub fn record(config: &CloneConfig, certname: &str) -> Result<bool> {
    validate_hostname("certname", certname)?;
    config.write(CERTNAME_RECORD, &format!("{certname}\n"), 0o600)
}

/// The certname recorded as the clone's, if there is a valid one.
fn recorded(config: &CloneConfig) -> Result<Option<String>> {
    Ok(config
        .read(CERTNAME_RECORD)?
        .map(|text| text.trim().to_owned())
        .filter(|certname| validate_hostname("certname", certname).is_ok()))
}

/// The clone's upper layer, where an older clone kept its SSL directory.
fn upper_tree(layout: &Layout, clone: &str) -> CloneTree {
    let upper = layout.upper_dir(clone);
    CloneTree::new(clone, layout.fs(&upper), upper)
}

/// What `clone remove` does for the SSL directory of a stopped, unmounted clone, before
/// its upper layer goes, as the helper's own records say which is the clone's. A bound
/// clone's kept directory is removed (`forget`) or kept as it is. A clone with no bind
/// (made before) has its upper layer's directory moved to `.ssl/` under its recorded
/// certname, unless one is kept for that certname already; with `forget` it goes with the
/// upper layer, and nothing in `.ssl/`, which holds nothing of this clone's, is touched.
/// Returns whether anything changed.
pub fn on_remove(layout: &Layout, clone: &str, confdir: &str, forget: bool) -> Result<bool> {
    let config = CloneConfig::of(layout, clone);
    let bound =
        read_optional(&config.settings_file)?.and_then(|text| SslBind::parse(layout, &text));
    if let Some(bind) = bound {
        return match forget {
            true => forget_one(layout, &bind.certname()),
            false => Ok(false),
        };
    }
    let ssldir = ssldir_for(confdir);
    if forget || !upper_tree(layout, clone).is_dir(ssldir)? {
        return Ok(false);
    }
    let Some(certname) = recorded(&config)? else {
        crate::protocol::warnings::warn(format!(
            "clone {clone} keeps its SSL directory in its upper layer and the helper has no \
             record of its certname (it was made by an older clone-army): the directory goes \
             with the clone; clean its certificate on the CA before making it again"
        ));
        return Ok(false);
    };
    if is_kept(layout, &certname)? {
        return Ok(false);
    }
    let root = layout.fs(layout.ssl_root());
    create_dir_all(&root, SSL_DIR_MODE)?;
    upper_tree(layout, clone).move_dir_out(ssldir, &root, &certname)
}

/// Takes over the SSL directory an older fleet's clone kept in its upper layer (either
/// agent's ssldir, tried AIO first: sharpie-clone_army 0.2.1 made PE agents) as the
/// kept directory of `certname`, unless one is kept for it already, so the clone made
/// again under that certname has its key and certificate, which a CA that holds them
/// expects. Moved, never read or followed. Returns whether it moved one.
pub fn adopt_from_upper(layout: &Layout, clone: &str, certname: &str) -> Result<bool> {
    if is_kept(layout, certname)? {
        return Ok(false);
    }
    let root = layout.fs(layout.ssl_root());
    create_dir_all(&root, SSL_DIR_MODE)?;
    let tree = upper_tree(layout, clone);
    for ssldir in [AIO_PUPPET_SSLDIR, DISTRO_PUPPET_SSLDIR] {
        if tree.move_dir_out(ssldir, &root, certname)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Removes the kept directory of `certname` (a missing one is fine). Returns whether it did.
fn forget_one(layout: &Layout, certname: &str) -> Result<bool> {
    validate_hostname("certname", certname)?;
    remove_dir_all(&layout.fs(layout.ssl_dir(certname)))
}

/// The certname each clone's settings bind, by clone.
fn bound_by_clones(layout: &Layout) -> Result<Vec<(String, String)>> {
    let mut bound = Vec::new();
    for mount in super::discover(layout)? {
        let config = CloneConfig::of(layout, &mount.clone);
        if let Some(bind) =
            read_optional(&config.settings_file)?.and_then(|text| SslBind::parse(layout, &text))
        {
            bound.push((bind.certname(), mount.clone));
        }
    }
    Ok(bound)
}

/// `ssl list`: every kept SSL directory, with the clone that uses it (none: its clone was
/// removed, and the certname is one to clean on the CA and then forget).
pub fn list(ctx: &Context) -> Result<SslDirs> {
    let layout = &ctx.layout;
    let bound = bound_by_clones(layout)?;
    let root = layout.fs(layout.ssl_root());
    let entries = match std::fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(SslDirs {
                ssl_dirs: Vec::new(),
            })
        }
        Err(e) => return Err(Error::io("read", root, e)),
    };
    let mut ssl_dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", &root, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if validate_hostname("certname", &name).is_err()
            || !entry.file_type().is_ok_and(|t| t.is_dir())
        {
            continue;
        }
        let clone = bound
            .iter()
            .find(|(certname, _)| *certname == name)
            .map(|(_, clone)| clone.clone());
        ssl_dirs.push(SslDir {
            path: layout.ssl_dir(&name).display().to_string(),
            certname: name,
            clone,
        });
    }
    ssl_dirs.sort_by(|a, b| a.certname.cmp(&b.certname));
    Ok(SslDirs { ssl_dirs })
}

/// `ssl forget`: removes the kept SSL directories of certnames no clone uses (a clone that
/// uses one is removed with `clone remove --forget-ssl`). Every certname is checked before
/// anything is removed.
pub fn forget(ctx: &Context, certnames: &[String]) -> Result<SslForgotten> {
    for certname in certnames {
        validate_hostname("certname", certname)?;
    }
    let layout = &ctx.layout;
    let _lock = ctx.lock()?;
    let bound = bound_by_clones(layout)?;
    for certname in certnames {
        if let Some((_, clone)) = bound.iter().find(|(c, _)| c == certname) {
            return Err(Error::InvalidArgument {
                field: "certname",
                value: certname.clone(),
                reason: format!(
                    "clone {clone} uses it; remove the clone with `clone remove --forget-ssl {clone}`"
                ),
            });
        }
    }
    let mut forgotten = Vec::new();
    for certname in certnames {
        if forget_one(layout, certname)? && !forgotten.contains(certname) {
            forgotten.push(certname.clone());
        }
    }
    Ok(SslForgotten {
        changed: !forgotten.is_empty(),
        forgotten,
    })
}
