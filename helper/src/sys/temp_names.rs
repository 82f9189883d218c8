//! The names of the helper's temporary files, written by `write_atomic`, `ensure_symlink`
//! and the confined writes (`.<name>.clone-army-<pid>-<random>`,
//! `.clone-army-link-<pid>-<random>`) and read back by the sweep of what a killed helper
//! left (`leftovers.rs`): one format, written and read here.

/// `<pid>-<64 random bits>`: the pid tells a sweep whether the writer still runs (see
/// [`writer_of`]), the random part makes the name unpredictable. The bits come from the
/// standard library's per-process random keys, mixed with a counter.
pub fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    format!("{}-{:016x}", std::process::id(), hasher.finish())
}

/// The writer's pid, when `name` is one of the helper's temporary names.
pub fn writer_of(name: &str) -> Option<i32> {
    let rest = name.strip_prefix('.')?;
    let suffix = match rest.strip_prefix("clone-army-link-") {
        Some(suffix) => suffix,
        None => rest.rsplit_once(".clone-army-")?.1,
    };
    // Helpers before random suffixes wrote the pid alone.
    let (pid, random) = suffix
        .split_once('-')
        .unwrap_or((suffix, "0000000000000000"));
    let random_ok = random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit());
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) || !random_ok {
        return None;
    }
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_only_its_own_temporary_names() {
        assert_eq!(
            writer_of(".var-lib-machines-c1.mount.clone-army-123-0123456789abcdef"),
            Some(123)
        );
        assert_eq!(writer_of(".clone-army-link-77-fedcba9876543210"), Some(77));
        assert_eq!(writer_of("var-lib-machines-c1.mount"), None);
        assert_eq!(writer_of(".puppet.conf.clone-army-"), None);
        assert_eq!(writer_of(".x.clone-army-12a-0123456789abcdef"), None);
        assert_eq!(writer_of(".x.clone-army-12-0123"), None);
        assert_eq!(writer_of(".x.clone-army-12"), Some(12));
    }
}
