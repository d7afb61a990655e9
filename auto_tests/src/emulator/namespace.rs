//! Named network namespaces (iproute2's `ip netns`), removed when dropped.
//!
//! Names carry the creating process's pid (`rxemu-<pid>-<n>-<side>`), so parallel runs never
//! clash and a later run can tell a leftover of a dead process (killed before its `Drop`
//! ran) from a live one and delete it.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use nix::sched::{setns, CloneFlags};

use super::EmulatorError;

/// Every namespace this module creates starts with this.
pub const NAMESPACE_PREFIX: &str = "rxemu-";

/// Where `ip netns add` mounts a namespace's handle.
const NETNS_RUN_DIR: &str = "/run/netns";

/// `ip` arguments (for [`NetNs::ip`] of the namespace that keeps `dev`) adding the veth pair
/// `dev`–`peer` with `peer` created straight inside `peer_ns`, so that no device name ever
/// appears in the root namespace.
pub fn veth_into<'a>(dev: &'a str, peer: &'a str, peer_ns: &'a NetNs) -> [&'a str; 10] {
    [
        "link",
        "add",
        dev,
        "type",
        "veth",
        "peer",
        "name",
        peer,
        "netns",
        peer_ns.name(),
    ]
}

/// A network namespace that exists while this value lives.
#[derive(Debug)]
pub struct NetNs {
    name: String,
}

impl NetNs {
    /// Creates namespace `name` (`ip netns add`).
    pub fn create(name: &str) -> Result<Self, EmulatorError> {
        run(Command::new("ip").args(["netns", "add", name]))?;
        Ok(NetNs {
            name: name.to_owned(),
        })
    }

    /// Its name, as `ip netns` knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip netns exec NAME program`: a command that runs inside the namespace. Add
    /// arguments, pipes and environment as to any [`Command`].
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name, program]);
        cmd
    }

    /// `ip -n NAME args...`, waiting for it; its stdout on success.
    pub fn ip(&self, args: &[&str]) -> Result<String, EmulatorError> {
        run(Command::new("ip").args(["-n", &self.name]).args(args))
    }

    /// Runs `f` on a new thread that has entered this namespace, and returns its result.
    /// Sockets opened by `f` belong to the namespace for their whole life, whichever thread
    /// uses them later: this is how a test opens a socket "in namespace A" without a child
    /// process.
    pub fn run_inside<T, F>(&self, f: F) -> Result<T, EmulatorError>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        let handle = Path::new(NETNS_RUN_DIR).join(&self.name);
        let ns = File::open(&handle).map_err(|source| EmulatorError::Setns {
            name: self.name.clone(),
            source,
        })?;
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    setns(&ns, CloneFlags::CLONE_NEWNET).map_err(|e| EmulatorError::Setns {
                        name: self.name.clone(),
                        source: e.into(),
                    })?;
                    Ok(f())
                })
                .join()
                .map_err(|_| {
                    EmulatorError::Thread(format!("a task inside {} panicked", self.name))
                })?
        })
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // Processes still inside keep the namespace alive until they exit; the name goes now.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Deletes namespaces named by this module whose creating process no longer exists.
/// Returns how many were removed.
pub fn remove_stale_namespaces() -> usize {
    let Ok(entries) = std::fs::read_dir(NETNS_RUN_DIR) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name) else {
            continue;
        };
        if Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        if run(Command::new("ip").args(["netns", "del", &name])).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The pid in `rxemu-<pid>-...`.
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(NAMESPACE_PREFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}

/// Runs a command to completion; its stdout, or an error carrying its stderr.
pub fn run_command(cmd: &mut Command) -> Result<String, EmulatorError> {
    run(cmd)
}

/// [`run_command`], by its short name inside this module's siblings.
pub(super) fn run(cmd: &mut Command) -> Result<String, EmulatorError> {
    let line = command_line(cmd);
    let Output {
        status,
        stdout,
        stderr,
    } = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|source| EmulatorError::Spawn {
            command: line.clone(),
            source,
        })?;
    if !status.success() {
        return Err(EmulatorError::Command {
            command: line,
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// `program arg arg ...` for messages.
pub(super) fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|s| s.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_reads_only_our_names() {
        assert_eq!(owner_pid("rxemu-1234-7-a"), Some(1234));
        assert_eq!(owner_pid("rxemu-x-7-a"), None);
        assert_eq!(owner_pid("other-1234"), None);
    }
}
