//! The conference peer (`tools/toxconference.c`) built twice from one source against Debian's
//! `tox.h`: pinned by RPATH to Debian's libtoxcore.so.2 (c-toxcore 0.2.18) and to a copy of
//! rustox's (the ffi crate's cdylib), so the same client runs on either implementation and an
//! interop test compares the libraries, not two clients.
//!
//! rustox's library is `target/release/libtoxcore.so` of this workspace (or the file named by
//! `RUSTOX_LIBTOXCORE`). When it is missing or older than the sources it is built from,
//! [`rustox_library`] runs `cargo build --release -p rustox-ffi` first, so a test never runs
//! a stale library. The copy the peer is pinned to is named after the library's SHA-256: a
//! rebuild while peers run never changes the file under them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use rustox_testkit::c::{self, pkg_config, Cc};
use sha2::{Digest, Sha256};

use super::build::{default_cache_dir, unique_suffix, BuildOptions, PeerBinary};
use super::error::CToxcoreError;

/// The peer's source.
pub const CONFERENCE_SOURCE: &str = include_str!("../../tools/toxconference.c");

/// This workspace (to find and build rustox's library).
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The sources rustox's libtoxcore.so is built from: newer files than the library mean the
/// library is stale.
const LIBRARY_SOURCES: [&str; 4] = ["ffi/src", "core/src", "net_crypto/src", "file_transfer/src"];

/// Which libtoxcore.so.2 a peer runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Implementation {
    /// Debian's c-toxcore 0.2.18.
    CToxcore,
    /// rustox's libtoxcore.so.2 (the ffi crate).
    Rustox,
}

impl Implementation {
    /// A short name for labels and tables.
    pub fn name(self) -> &'static str {
        match self {
            Implementation::CToxcore => "c-toxcore",
            Implementation::Rustox => "rustox",
        }
    }
}

/// The peer built for one implementation, and the library it must load.
#[derive(Debug, Clone)]
pub struct ConferenceBinary {
    /// Which implementation.
    pub implementation: Implementation,
    /// The program.
    pub path: PathBuf,
    /// The shared object the loader must pick (the peer's READY line names the one it did).
    pub library: PathBuf,
}

/// Builds (or reuses) the peer on Debian's c-toxcore.
pub fn ctoxcore_binary() -> Result<ConferenceBinary, CToxcoreError> {
    let options = BuildOptions::default();
    let bin = PeerBinary::build_source("toxconference", CONFERENCE_SOURCE, &options)?;
    let dir = c::library_dir(&options.pkg_config, "toxcore")
        .map_err(|e| CToxcoreError::from_build(e, Path::new("toxconference")))?;
    Ok(ConferenceBinary {
        implementation: Implementation::CToxcore,
        path: bin.path().to_path_buf(),
        library: Path::new(&dir).join("libtoxcore.so.2"),
    })
}

/// Builds (or reuses) the peer on rustox's library, building the library first when it is
/// missing or stale.
pub fn rustox_binary() -> Result<ConferenceBinary, CToxcoreError> {
    let lib = rustox_library()?;
    let bytes = std::fs::read(&lib)
        .map_err(|e| CToxcoreError::io(format!("reading {}", lib.display()), e))?;
    let lib_tag = tag(&[&bytes]);
    let cache = default_cache_dir();
    let lib_dir = cache.join(format!("rustox-lib-{lib_tag}"));
    let pinned = lib_dir.join("libtoxcore.so.2");
    if !pinned.is_file() {
        std::fs::create_dir_all(&lib_dir)
            .map_err(|e| CToxcoreError::io(format!("creating {}", lib_dir.display()), e))?;
        let tmp = lib_dir.join(format!("libtoxcore.so.2.{}", unique_suffix()));
        std::fs::write(&tmp, &bytes)
            .map_err(|e| CToxcoreError::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, &pinned)
            .map_err(|e| CToxcoreError::io(format!("renaming to {}", pinned.display()), e))?;
    }
    // The linker looks for `libtoxcore.so`; the loader for the SONAME, `libtoxcore.so.2`.
    let link_name = lib_dir.join("libtoxcore.so");
    if !link_name.exists() {
        let _ = std::os::unix::fs::symlink("libtoxcore.so.2", &link_name);
    }
    let binary = cache.join(format!(
        "toxconference-rustox-{}",
        tag(&[
            CONFERENCE_SOURCE.as_bytes(),
            c::HEADER.as_bytes(),
            lib_tag.as_bytes()
        ])
    ));
    if !binary.is_file() {
        let source = cache.join(format!("toxconference-rustox-{lib_tag}.c"));
        std::fs::write(&source, CONFERENCE_SOURCE)
            .map_err(|e| CToxcoreError::io(format!("writing {}", source.display()), e))?;
        let cflags = pkg_config("pkg-config", &["--cflags"], &["toxcore"])
            .map_err(|e| CToxcoreError::from_build(e, &source))?;
        Cc::new("cc")
            .args(["-O2", "-std=c11", "-Wall", "-Wextra"])
            .args(cflags)
            .testkit_header()
            .arg(&source)
            .arg(format!("-L{}", lib_dir.display()))
            .arg("-ltoxcore")
            .pin_library_dir(&lib_dir)
            .build(&binary)
            .map_err(|e| CToxcoreError::from_build(e, &source))?;
    }
    Ok(ConferenceBinary {
        implementation: Implementation::Rustox,
        path: binary,
        library: pinned,
    })
}

/// The peer for `implementation`, built once per process; `None` (with a notice) when a
/// dependency is missing and `CI` is not set. Under CI a missing dependency fails the test.
pub fn binary_or_skip(implementation: Implementation) -> Option<ConferenceBinary> {
    static BUILT: OnceLock<Mutex<Vec<ConferenceBinary>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(Vec::new()));
    let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(b) = built.iter().find(|b| b.implementation == implementation) {
        return Some(b.clone());
    }
    let result = match implementation {
        Implementation::CToxcore => ctoxcore_binary(),
        Implementation::Rustox => ctoxcore_binary().and_then(|_| rustox_binary()),
    };
    match result {
        Ok(b) => {
            built.push(b.clone());
            Some(b)
        }
        Err(e) if e.is_missing_dependency() => {
            rustox_testkit::ci::skip_or_fail(format!("{e} (apt-get install libtoxcore-dev)"));
            None
        }
        Err(e) => panic!(
            "cannot build the conference peer on {}: {e}",
            implementation.name()
        ),
    }
}

/// rustox's libtoxcore.so: `RUSTOX_LIBTOXCORE`, or this workspace's release build, built
/// (`cargo build --release -p rustox-ffi`) when missing or older than its sources.
pub fn rustox_library() -> Result<PathBuf, CToxcoreError> {
    if let Some(path) = std::env::var_os("RUSTOX_LIBTOXCORE") {
        return Ok(PathBuf::from(path));
    }
    let lib = Path::new(WORKSPACE).join("target/release/libtoxcore.so");
    let built = std::fs::metadata(&lib).and_then(|m| m.modified()).ok();
    let newest = LIBRARY_SOURCES
        .iter()
        .filter_map(|d| newest(&Path::new(WORKSPACE).join(d)))
        .max();
    let stale = match (built, newest) {
        (None, _) => true,
        (Some(b), Some(src)) => src > b,
        (Some(_), None) => false,
    };
    if stale {
        let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--release", "-p", "rustox-ffi"])
            .current_dir(WORKSPACE)
            .output()
            .map_err(|e| CToxcoreError::io("running cargo build -p rustox-ffi", e))?;
        if !out.status.success() || !lib.is_file() {
            return Err(CToxcoreError::CompileFailed {
                source_path: Path::new(WORKSPACE).join("ffi"),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
    }
    Ok(lib)
}

/// The newest modification time of a file under `dir`.
fn newest(dir: &Path) -> Option<SystemTime> {
    let mut best = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest(&path)
        } else {
            entry.metadata().ok().and_then(|m| m.modified().ok())
        };
        best = best.max(t);
    }
    best
}

/// The first 8 bytes of the SHA-256 of `parts` (each followed by a 0 byte), in hex.
fn tag(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for p in parts {
        hasher.update(p);
        hasher.update([0]);
    }
    hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
