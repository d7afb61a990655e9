//! Compiles `tools/toxcore_file_peer.c` against the system's libtoxcore, once per version of
//! the source, compiler and flags.
//!
//! The source is embedded in this crate, so a benchmark binary can build the peer wherever it
//! runs. The result is cached under a name derived from a SHA-256 of what went into it, and
//! written under a temporary name then renamed, so concurrent test processes never run a
//! half-written binary.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rustox_testkit::c::{self, pkg_config, Cc};
use sha2::{Digest, Sha256};

use super::error::CToxcoreError;

/// The C peer's source (`auto_tests/tools/toxcore_file_peer.c`).
pub const PEER_SOURCE: &str = include_str!("../../tools/toxcore_file_peer.c");

/// The friend client's source (`auto_tests/tools/toxfriend.c`): friend requests, connection
/// status and messages, for the friend interop tests and the friend-online benchmark.
pub const FRIEND_SOURCE: &str = include_str!("../../tools/toxfriend.c");

/// The save file tool's source (`auto_tests/tools/toxsave.c`): c-toxcore writes and loads
/// save files, plain and encrypted, for the savedata interop tests.
pub const SAVE_SOURCE: &str = include_str!("../../tools/toxsave.c");

/// The pkg-config packages the peer links: libtoxcore for tox.h, libsodium for the optional
/// SHA-256 content checks (libtoxcore-dev already depends on it).
const PKG_CONFIG_PACKAGES: [&str; 2] = ["toxcore", "libsodium"];

/// Optimised like a release client; warnings are shown but never fatal.
const CFLAGS: [&str; 4] = ["-O2", "-std=c11", "-Wall", "-Wextra"];

/// How to build the peer.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The C compiler.
    pub compiler: String,
    /// The pkg-config program that locates libtoxcore.
    pub pkg_config: String,
    /// Where the source copy and the binary are kept between runs.
    pub cache_dir: PathBuf,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            compiler: "cc".to_string(),
            pkg_config: "pkg-config".to_string(),
            cache_dir: default_cache_dir(),
        }
    }
}

/// `target/ctoxcore` in this workspace.
pub fn default_cache_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ctoxcore")
}

/// A built c-toxcore peer.
#[derive(Debug, Clone)]
pub struct PeerBinary {
    path: PathBuf,
}

impl PeerBinary {
    /// Builds the peer, or reuses the cached binary built from the same source and flags.
    pub fn build(options: &BuildOptions) -> Result<PeerBinary, CToxcoreError> {
        Self::build_source("toxcore_file_peer", PEER_SOURCE, options)
    }

    /// Builds the friend client (`tools/toxfriend.c`) the same way.
    pub fn build_friend(options: &BuildOptions) -> Result<PeerBinary, CToxcoreError> {
        Self::build_source("toxfriend", FRIEND_SOURCE, options)
    }

    /// Builds the save file tool (`tools/toxsave.c`) the same way.
    pub fn build_save(options: &BuildOptions) -> Result<PeerBinary, CToxcoreError> {
        Self::build_source("toxsave", SAVE_SOURCE, options)
    }

    /// Builds `source` as program `name`, or reuses the cached binary built from the same
    /// source and flags.
    pub fn build_source(
        name: &str,
        source_text: &str,
        options: &BuildOptions,
    ) -> Result<PeerBinary, CToxcoreError> {
        let link_flags = pkg_config(
            &options.pkg_config,
            &["--cflags", "--libs"],
            &PKG_CONFIG_PACKAGES,
        )
        .map_err(|e| CToxcoreError::from_build(e, Path::new(name)))?;
        // The library the peer was linked against is the one it runs on (testkit's
        // `pin_library_dir`), whatever `LD_LIBRARY_PATH` the test runner sets.
        let library_dir = c::library_dir(&options.pkg_config, "toxcore")
            .map_err(|e| CToxcoreError::from_build(e, Path::new(name)))?;
        let mut hasher = Sha256::new();
        hasher.update(library_dir.as_bytes());
        hasher.update(source_text.as_bytes());
        hasher.update(c::HEADER.as_bytes());
        hasher.update(options.compiler.as_bytes());
        for flag in CFLAGS
            .iter()
            .map(|s| s.to_string())
            .chain(link_flags.clone())
        {
            hasher.update([0]);
            hasher.update(flag.as_bytes());
        }
        let digest = hasher.finalize();
        let tag: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let binary = options.cache_dir.join(format!("{name}-{tag}"));
        if binary.is_file() {
            return Ok(PeerBinary { path: binary });
        }

        std::fs::create_dir_all(&options.cache_dir).map_err(|e| {
            CToxcoreError::io(format!("creating {}", options.cache_dir.display()), e)
        })?;
        let unique = unique_suffix();
        let source = options.cache_dir.join(format!("{name}-{tag}.c"));
        let source_tmp = options.cache_dir.join(format!("{name}-{tag}.c.{unique}"));
        write_then_rename(&source_tmp, &source, source_text.as_bytes())?;
        // The sources include "testkit.h", found beside them.
        let header = options.cache_dir.join(c::HEADER_NAME);
        let header_tmp = options
            .cache_dir
            .join(format!("{}.{unique}", c::HEADER_NAME));
        write_then_rename(&header_tmp, &header, c::HEADER.as_bytes())?;

        Cc::new(&options.compiler)
            .args(CFLAGS)
            .arg(&source)
            .args(&link_flags)
            .pin_library_dir(&library_dir)
            .build(&binary)
            .map_err(|e| CToxcoreError::from_build(e, &source))?;
        Ok(PeerBinary { path: binary })
    }

    /// Uses an already built peer.
    pub fn at(path: impl Into<PathBuf>) -> PeerBinary {
        PeerBinary { path: path.into() }
    }

    /// Where the binary is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The file peer, built once per source version; `None` (with a notice) when c-toxcore is
/// not installed and `CI` is not set. Under CI a missing c-toxcore is a failure: the interop
/// tests must run there.
pub fn file_peer_or_skip() -> Option<PeerBinary> {
    match PeerBinary::build(&BuildOptions::default()) {
        Ok(bin) => Some(bin),
        Err(e) if e.is_missing_dependency() && !rustox_testkit::ci::under_ci() => {
            eprintln!("NOTICE: {e}; c-toxcore interop test skipped");
            None
        }
        Err(e) => panic!("cannot build the c-toxcore file peer: {e}"),
    }
}

fn write_then_rename(tmp: &Path, dest: &Path, bytes: &[u8]) -> Result<(), CToxcoreError> {
    std::fs::write(tmp, bytes)
        .map_err(|e| CToxcoreError::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(tmp, dest)
        .map_err(|e| CToxcoreError::io(format!("renaming to {}", dest.display()), e))
}

/// A suffix no other process or thread building at the same time will pick.
pub(crate) fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_compiler_or_pkg_config_is_a_missing_dependency() {
        let cache_dir = std::env::temp_dir().join(format!("rustox-build-test-{}", unique_suffix()));
        let no_compiler = BuildOptions {
            compiler: "/nonexistent/cc".to_string(),
            cache_dir: cache_dir.clone(),
            ..BuildOptions::default()
        };
        // CompilerMissing where libtoxcore is installed, LibraryMissing where it is not.
        let err = PeerBinary::build(&no_compiler).unwrap_err();
        assert!(err.is_missing_dependency(), "{err}");

        let no_pkg_config = BuildOptions {
            pkg_config: "/nonexistent/pkg-config".to_string(),
            cache_dir: cache_dir.clone(),
            ..BuildOptions::default()
        };
        let err = PeerBinary::build(&no_pkg_config).unwrap_err();
        assert!(matches!(err, CToxcoreError::LibraryMissing { .. }), "{err}");
        let _ = std::fs::remove_dir_all(&cache_dir);
    }
}
