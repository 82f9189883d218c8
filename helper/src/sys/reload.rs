//! Crash-safe daemon-reloads: a marker file records that unit files may have changed
//! and systemd has not been told yet.
//!
//! A verb that writes or removes unit files creates the marker first and removes it only
//! after its daemon-reload. When the helper is killed in between, the files on disk are
//! already what the next call wants, so that call would see "nothing changed" and skip
//! the reload, leaving systemd with the old units (a start of a new clone would fail
//! with "unit not found"). The marker makes the next call reload anyway.

use std::path::{Path, PathBuf};

use crate::protocol::error::Result;
use crate::sys::fsutil::{remove_file, write_atomic};
use crate::sys::paths::{Layout, STATE_DIR};

pub fn marker(layout: &Layout) -> PathBuf {
    layout.fs(Path::new(STATE_DIR).join(".daemon-reload-pending"))
}

/// Call before touching unit files. Returns whether an earlier call died before its reload.
pub fn begin(layout: &Layout) -> Result<bool> {
    let path = marker(layout);
    if path.exists() {
        return Ok(true);
    }
    write_atomic(&path, b"", 0o644)?;
    Ok(false)
}

/// Call after the reload (or when none was needed).
pub fn done(layout: &Layout) -> Result<()> {
    remove_file(&marker(layout)).map(drop)
}

/// Sweeps the temporary files killed helpers left in the directories a clone's
/// create and remove write on the host (see [`crate::sys::leftovers`]).
pub fn sweep_clone_dirs(layout: &Layout, clone: &str) -> Result<()> {
    use crate::sys::paths::{MULTI_USER_TARGET, TARGET, UNIT_DIR};
    for dir in [
        PathBuf::from(UNIT_DIR),
        layout.wants_dir(TARGET),
        layout.wants_dir(MULTI_USER_TARGET),
        layout.service_dropin_dir(clone),
        PathBuf::from(STATE_DIR),
    ] {
        crate::sys::leftovers::sweep(&layout.fs(dir))?;
    }
    Ok(())
}
