//! A child process whose stdout is read line by line and whose stderr tail is kept for error
//! messages; killed and reaped when dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::error::{describe_status, CToxcoreError};

/// How many of a child's last stderr lines an error message quotes.
const STDERR_TAIL_LINES: usize = 20;

/// How often a child's exit is polled while waiting for it.
const EXIT_POLL: Duration = Duration::from_millis(20);

/// A running child; see the module doc.
#[derive(Debug)]
pub(crate) struct LineChild {
    role: String,
    child: Child,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    exit: Option<ExitStatus>,
}

impl LineChild {
    /// The process id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Starts `command`. With `echo_stderr`, its stderr is also copied to ours, each line
    /// prefixed with `[role]`. `missing` maps a failure to start (program not found).
    pub(crate) fn spawn(
        mut command: Command,
        role: &str,
        echo_stderr: bool,
        missing: impl FnOnce(std::io::Error) -> CToxcoreError,
    ) -> Result<LineChild, CToxcoreError> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(missing)?;
        let (tx, lines) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
        if let Some(stderr) = child.stderr.take() {
            let tail = Arc::clone(&stderr_tail);
            let prefix = format!("[{role}] ");
            thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if echo_stderr {
                        let _ = writeln!(std::io::stderr(), "{prefix}{line}");
                    }
                    if let Ok(mut tail) = tail.lock() {
                        if tail.len() == STDERR_TAIL_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(line);
                    }
                }
            });
        }
        Ok(LineChild {
            role: role.to_string(),
            child,
            lines,
            stderr_tail,
            exit: None,
        })
    }

    /// The next stdout line, waiting until `deadline`.
    pub(crate) fn next_line(
        &mut self,
        awaited: &str,
        deadline: Instant,
    ) -> Result<String, CToxcoreError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(CToxcoreError::Timeout {
                role: self.role.clone(),
                awaited: awaited.to_string(),
                seconds: wait.as_secs_f64(),
                stderr: self.stderr_tail(),
            }),
            Err(RecvTimeoutError::Disconnected) => {
                // Its stdout closed: give it a moment to exit so the status can be told.
                let status = self.wait_exit(Instant::now() + Duration::from_secs(1));
                Err(CToxcoreError::ChildFailed {
                    role: self.role.clone(),
                    status: describe_status(status),
                    awaited: awaited.to_string(),
                    stderr: self.stderr_tail(),
                })
            }
        }
    }

    /// Waits for the child to exit until `deadline`; `None` if it is still running.
    pub(crate) fn wait_exit(&mut self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if self.exit.is_none() {
                self.exit = self.child.try_wait().ok().flatten();
            }
            if self.exit.is_some() || Instant::now() >= deadline {
                return self.exit;
            }
            thread::sleep(EXIT_POLL);
        }
    }

    /// The last lines the child wrote to stderr, joined with " | ".
    pub(crate) fn stderr_tail(&self) -> String {
        // The reader thread may still be copying the last lines of a child that just exited.
        thread::sleep(Duration::from_millis(20));
        match self.stderr_tail.lock() {
            Ok(tail) if tail.is_empty() => "(nothing)".to_string(),
            Ok(tail) => tail.iter().cloned().collect::<Vec<_>>().join(" | "),
            Err(_) => "(unavailable)".to_string(),
        }
    }

    /// Which child this is.
    pub(crate) fn role(&self) -> &str {
        &self.role
    }

    /// Kills and reaps the child unless it has already exited.
    pub(crate) fn kill(&mut self) {
        if self.exit.is_none() {
            let _ = self.child.kill();
            self.exit = self.child.wait().ok();
        }
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        self.kill();
    }
}
