//! Why a testbed could not be built or queried.

use std::io;

/// Errors of the real-socket emulator.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// Namespaces and moving devices between them need root (CAP_SYS_ADMIN, CAP_NET_ADMIN).
    #[error("the link emulator needs root (namespaces and TUN devices); run as root")]
    NotRoot,
    /// The kernel offers no TUN driver here.
    #[error("/dev/net/tun is missing: the kernel has no TUN driver or the device node is absent")]
    NoTun,
    /// iproute2's `ip` is not installed.
    #[error("the `ip` command (iproute2) is not available: {0}")]
    NoIpCommand(#[source] io::Error),
    /// A command the testbed runs failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A command could not be started.
    #[error("cannot run `{command}`")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Creating or configuring a TUN device failed.
    #[error("cannot create TUN device {name}")]
    Tun {
        /// The device name.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Entering a namespace failed.
    #[error("cannot enter network namespace {name}")]
    Setns {
        /// The namespace.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The emulator thread could not be started or ended abnormally.
    #[error("emulator thread: {0}")]
    Thread(String),
    /// Output of a command was not what was expected.
    #[error("cannot parse the output of `{command}`: {detail}")]
    Parse {
        /// The command line.
        command: String,
        /// What was wrong.
        detail: String,
    },
    /// A file or directory the testbed needs could not be made.
    #[error("cannot create {path}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A child process misbehaved (e.g. `rustox recv` never printed its key).
    #[error("{0}")]
    Child(String),
}
