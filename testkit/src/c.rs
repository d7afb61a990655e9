//! Compiling a C test program: a compiler, its arguments in the caller's order (flags,
//! sources, `pkg-config` output, libraries), and the binary written under a temporary name
//! then renamed, so a concurrent test process never runs a half-written file.
//!
//! The C programs share `c/testkit.h` (hex, a monotonic clock); a caller compiles with
//! `-I` [`HEADER_DIR`], or writes [`HEADER`] beside a source it copies elsewhere.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The directory holding `testkit.h`, for `-I`.
pub const HEADER_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/c");

/// The name C programs include.
pub const HEADER_NAME: &str = "testkit.h";

/// `testkit.h`'s text, for callers that compile a copy of their source elsewhere.
pub const HEADER: &str = include_str!("../c/testkit.h");

/// Why a C program could not be built.
#[derive(Debug)]
pub enum CError {
    /// pkg-config could not be run, or does not know a package.
    PkgConfig(String),
    /// The compiler could not be run.
    CompilerMissing {
        /// The compiler's name.
        compiler: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// The compiler ran and failed.
    Failed {
        /// The command line.
        command: String,
        /// What it printed.
        output: String,
    },
    /// Writing or renaming the binary failed.
    Io(String, std::io::Error),
}

impl CError {
    /// A tool or library is not installed (skip outside CI), rather than a broken source.
    pub fn is_missing_dependency(&self) -> bool {
        matches!(self, CError::PkgConfig(_) | CError::CompilerMissing { .. })
    }
}

impl fmt::Display for CError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CError::PkgConfig(detail) => write!(f, "pkg-config: {detail}"),
            CError::CompilerMissing { compiler, source } => {
                write!(f, "cannot run the C compiler `{compiler}`: {source}")
            }
            CError::Failed { command, output } => write!(f, "{command} failed:\n{output}"),
            CError::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

impl std::error::Error for CError {}

/// `<program> <args> <packages>` (e.g. `pkg-config --cflags --libs toxcore`), split into
/// words.
pub fn pkg_config(program: &str, args: &[&str], packages: &[&str]) -> Result<Vec<String>, CError> {
    let out = Command::new(program)
        .args(args)
        .args(packages)
        .output()
        .map_err(|e| CError::PkgConfig(format!("`{program}` could not be run ({e})")))?;
    if !out.status.success() {
        return Err(CError::PkgConfig(format!(
            "{program} {}: {}",
            packages.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect())
}

/// A compiler invocation, built argument by argument in the order given.
/// The folder `program` (a pkg-config) names as `package`'s `libdir`: where the shared library
/// a program built against `package` is found, the folder [`Cc::pin_library_dir`] pins.
pub fn library_dir(program: &str, package: &str) -> Result<String, CError> {
    pkg_config(program, &["--variable=libdir"], &[package])?
        .into_iter()
        .next()
        .ok_or_else(|| CError::PkgConfig(format!("{program} names no libdir for {package}")))
}

#[derive(Debug, Clone)]
pub struct Cc {
    compiler: String,
    args: Vec<OsString>,
}

impl Cc {
    /// `compiler` with no arguments yet (`"cc"` for the system's).
    pub fn new(compiler: impl Into<String>) -> Cc {
        Cc {
            compiler: compiler.into(),
            args: Vec::new(),
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Cc {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Cc {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Appends `pkg-config <args> <packages>`'s words.
    pub fn pkg_config(self, args: &[&str], packages: &[&str]) -> Result<Cc, CError> {
        Ok(self.args(pkg_config("pkg-config", args, packages)?))
    }

    /// Makes the program load its shared libraries from `dir` whatever `LD_LIBRARY_PATH`
    /// says: an `RPATH` (`--disable-new-dtags`; a `RUNPATH` would come after the variable).
    /// `cargo test` puts `target/<profile>` first on `LD_LIBRARY_PATH`, and after a
    /// `cargo build` of ffi that folder holds our own `libtoxcore.so.2`: a c-toxcore peer
    /// that is not pinned then runs on rustox and an interop test compares us with ourselves.
    pub fn pin_library_dir(self, dir: impl AsRef<Path>) -> Cc {
        self.arg(format!(
            "-Wl,--disable-new-dtags,-rpath,{}",
            dir.as_ref().display()
        ))
    }

    /// [`Cc::pin_library_dir`] on the folder pkg-config names for `package` (`libdir`).
    pub fn pin_pkg_config_library(self, package: &str) -> Result<Cc, CError> {
        Ok(self.pin_library_dir(library_dir("pkg-config", package)?))
    }

    /// Appends `-I` for `testkit.h`.
    pub fn testkit_header(self) -> Cc {
        self.arg(format!("-I{HEADER_DIR}"))
    }

    /// Runs the compiler with `-o` a temporary name beside `out`, then renames it to `out`.
    pub fn build(self, out: &Path) -> Result<(), CError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut tmp = out.as_os_str().to_owned();
        tmp.push(format!(
            ".tmp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = PathBuf::from(tmp);
        let mut command = Command::new(&self.compiler);
        command.args(&self.args).arg("-o").arg(&tmp);
        let output = command.output().map_err(|source| CError::CompilerMissing {
            compiler: self.compiler.clone(),
            source,
        })?;
        if !output.status.success() {
            let _ = std::fs::remove_file(&tmp);
            return Err(CError::Failed {
                command: format!("{command:?}"),
                output: format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ),
            });
        }
        std::fs::rename(&tmp, out)
            .map_err(|e| CError::Io(format!("renaming to {}", out.display()), e))
    }
}
