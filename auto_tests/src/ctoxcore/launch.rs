//! How a child is started: directly, or behind a command such as `ip netns exec NS`.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Command;

/// A command prefix for the children this module starts. Empty: run the program itself.
///
/// Built from a [`Command`] (its program, arguments, environment changes and directory) so a
/// caller that already knows how to enter a network namespace can hand that over as is; the
/// child's own program and arguments are appended to it.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    prefix: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    current_dir: Option<PathBuf>,
}

impl Launch {
    /// Run children directly.
    pub fn direct() -> Launch {
        Launch::default()
    }

    /// Run children behind `argv`, e.g. `["ip", "netns", "exec", "rustox-a"]`.
    pub fn prefixed<I, S>(argv: I) -> Launch
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Launch {
            prefix: argv.into_iter().map(Into::into).collect(),
            ..Launch::default()
        }
    }

    /// Run children behind `prefix`'s program and arguments, with its environment changes and
    /// working directory.
    pub fn from_command(prefix: &Command) -> Launch {
        let mut argv = vec![prefix.get_program().to_os_string()];
        argv.extend(prefix.get_args().map(OsStr::to_os_string));
        Launch {
            prefix: argv,
            envs: prefix
                .get_envs()
                .map(|(k, v)| (k.to_os_string(), v.map(OsStr::to_os_string)))
                .collect(),
            current_dir: prefix.get_current_dir().map(PathBuf::from),
        }
    }

    /// The command that runs `program` under this prefix; the caller appends its arguments.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = match self.prefix.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(program);
                c
            }
            None => Command::new(program),
        };
        for (key, value) in &self.envs {
            match value {
                Some(v) => command.env(key, v),
                None => command.env_remove(key),
            };
        }
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command
    }
}

impl From<&Command> for Launch {
    fn from(prefix: &Command) -> Launch {
        Launch::from_command(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(c: &Command) -> Vec<String> {
        std::iter::once(c.get_program())
            .chain(c.get_args())
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_direct_launch_runs_the_program_itself() {
        let mut c = Launch::direct().command("/bin/peer");
        c.arg("recv");
        assert_eq!(argv(&c), ["/bin/peer", "recv"]);
    }

    #[test]
    fn a_command_prefix_comes_first_with_its_environment_and_directory() {
        let mut prefix = Command::new("ip");
        prefix
            .args(["netns", "exec", "a"])
            .env("X", "1")
            .current_dir("/tmp");
        let mut c = Launch::from(&prefix).command("/bin/peer");
        c.arg("send");
        assert_eq!(argv(&c), ["ip", "netns", "exec", "a", "/bin/peer", "send"]);
        assert_eq!(c.get_current_dir(), Some(std::path::Path::new("/tmp")));
        assert!(c
            .get_envs()
            .any(|(k, v)| k == "X" && v == Some(OsStr::new("1"))));
    }
}
