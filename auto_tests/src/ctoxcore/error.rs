//! What can go wrong building or running the c-toxcore peer.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

/// An error from building or running the c-toxcore peer, its bootstrap node or a transfer.
#[derive(Debug, thiserror::Error)]
pub enum CToxcoreError {
    /// The C compiler could not be started.
    #[error("no C compiler: `{compiler}` could not be run ({source})")]
    CompilerMissing {
        /// The compiler that was tried.
        compiler: String,
        /// Why it could not be run.
        source: io::Error,
    },
    /// pkg-config does not know libtoxcore (or libsodium), or could not be run.
    #[error("libtoxcore not found: {detail} (install Debian's libtoxcore-dev)")]
    LibraryMissing {
        /// pkg-config's complaint, or why it could not be run.
        detail: String,
    },
    /// A bootstrap program (tox-bootstrapd, DHT_bootstrap) could not be started.
    #[error("{program} could not be run ({source}; install Debian's toxcore-utils)")]
    ToolMissing {
        /// The program that was tried.
        program: String,
        /// Why it could not be run.
        source: io::Error,
    },
    /// The compiler ran and refused the program.
    #[error("compiling {source_path} failed: {stderr}")]
    CompileFailed {
        /// The C source that was compiled.
        source_path: PathBuf,
        /// The compiler's diagnostics.
        stderr: String,
    },
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// A child exited (or closed its output) before printing what was awaited.
    #[error("{role} exited ({status}) before {awaited}; its stderr ends with: {stderr}")]
    ChildFailed {
        /// Which child: "recv", "send", "tox-bootstrapd", ...
        role: String,
        /// How it ended, or "still running" when only its output closed.
        status: String,
        /// What we were waiting for.
        awaited: String,
        /// The last lines it wrote to stderr.
        stderr: String,
    },
    /// A child did not print what was awaited in time.
    #[error(
        "{role} did not report {awaited} within {seconds:.0} s; its stderr ends with: {stderr}"
    )]
    Timeout {
        /// Which child.
        role: String,
        /// What we were waiting for.
        awaited: String,
        /// How long we waited.
        seconds: f64,
        /// The last lines it wrote to stderr.
        stderr: String,
    },
    /// A child printed a line we could not understand.
    #[error("{role} printed an unexpected line ({reason}): {line}")]
    UnexpectedOutput {
        /// Which child.
        role: String,
        /// Why it was not understood.
        reason: String,
        /// The line itself.
        line: String,
    },
    /// The peers ran but the transfer's outcome is wrong (keys, sizes, exit status).
    #[error("transfer failed: {0}")]
    TransferFailed(String),
}

impl CToxcoreError {
    /// True when the machine lacks a compiler, libtoxcore or toxcore-utils: what a test may
    /// skip on outside CI, as opposed to a failure of the code under test.
    pub fn is_missing_dependency(&self) -> bool {
        matches!(
            self,
            CToxcoreError::CompilerMissing { .. }
                | CToxcoreError::LibraryMissing { .. }
                | CToxcoreError::ToolMissing { .. }
        )
    }

    /// A failed build of the C program at `source_path`.
    pub(crate) fn from_build(e: rustox_testkit::c::CError, source_path: &std::path::Path) -> Self {
        use rustox_testkit::c::CError;
        match e {
            CError::PkgConfig(detail) => CToxcoreError::LibraryMissing { detail },
            CError::CompilerMissing { compiler, source } => {
                CToxcoreError::CompilerMissing { compiler, source }
            }
            CError::Failed { output, .. } => CToxcoreError::CompileFailed {
                source_path: source_path.to_path_buf(),
                stderr: output,
            },
            CError::Io(what, source) => CToxcoreError::Io { what, source },
        }
    }

    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        CToxcoreError::Io {
            what: what.into(),
            source,
        }
    }
}

/// Describes how a child ended, for error messages.
pub(crate) fn describe_status(status: Option<ExitStatus>) -> String {
    match status {
        Some(s) => s.to_string(),
        None => "still running".to_string(),
    }
}
