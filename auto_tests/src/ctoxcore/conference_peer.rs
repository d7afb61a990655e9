//! One conference peer (`tools/toxconference.c`) as a child process: commands go to its stdin,
//! and every line it prints is kept with its CLOCK_MONOTONIC stamp, so a test waits for a
//! line (a message, a peer count) and a benchmark compares one peer's send time with the
//! others' receipts. The child is killed when the handle is dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::bootstrap::BootstrapSpec;
use super::conference::{ConferenceBinary, Implementation};
use super::launch::Launch;

/// How long a command's reply may take (the peer answers between two `tox_iterate`s).
const REPLY_LIMIT: Duration = Duration::from_secs(20);

/// How long the peer may take to print READY.
const READY_LIMIT: Duration = Duration::from_secs(30);

/// How many stderr lines a failure report quotes.
const STDERR_TAIL: usize = 30;

/// How many stdout lines a failure report quotes.
const REPORT_LINES: usize = 80;

/// One line the peer printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// CLOCK_MONOTONIC seconds when the peer printed it.
    pub t: f64,
    /// Its tag (`MESSAGE`, `PEERS`, `OK`, …).
    pub tag: String,
    /// The words after the tag.
    pub rest: String,
}

impl Line {
    /// Word `i` after the tag.
    pub fn word(&self, i: usize) -> Option<&str> {
        self.rest.split(' ').nth(i)
    }

    /// Word `i` after the tag as a number.
    pub fn num(&self, i: usize) -> Option<u32> {
        self.word(i).and_then(|w| w.parse().ok())
    }

    /// What follows the first `n` words (a message's text, a name).
    pub fn tail(&self, n: usize) -> &str {
        self.rest.splitn(n + 1, ' ').nth(n).unwrap_or("")
    }

    fn parse(text: &str) -> Option<Line> {
        let (t, after) = text.split_once(' ')?;
        let (tag, rest) = after.split_once(' ').unwrap_or((after, ""));
        Some(Line {
            t: t.parse().ok()?,
            tag: tag.to_string(),
            rest: rest.to_string(),
        })
    }
}

/// How to start a peer.
#[derive(Debug, Clone, Default)]
pub struct ConfOptions {
    /// DHT nodes to bootstrap from.
    pub bootstrap: Vec<BootstrapSpec>,
    /// UDP port; 0: c-toxcore's range (the tests pass a free one).
    pub port: u16,
    /// Start from this save file.
    pub load: Option<PathBuf>,
    /// Our name.
    pub name: Option<String>,
    /// Accept every friend request.
    pub accept: bool,
    /// Join every conference invite at once.
    pub auto_join: bool,
    /// How to start it (e.g. inside a network namespace).
    pub launch: Launch,
}

#[derive(Default)]
struct Output {
    lines: Vec<Line>,
    eof: bool,
}

/// A running peer; see the module doc.
pub struct ConfPeer {
    /// A label for reports: given name and implementation.
    pub label: String,
    /// Which library it runs on.
    pub implementation: Implementation,
    /// Its Tox ID (76 hex digits).
    pub tox_id: String,
    /// Its long-term public key (64 hex digits, upper case as the peer prints keys).
    pub pk: String,
    /// Its DHT key.
    pub dht_key: String,
    /// Its UDP port.
    pub port: u16,
    child: Child,
    stdin: Option<ChildStdin>,
    out: Arc<(Mutex<Output>, Condvar)>,
    err: Arc<Mutex<VecDeque<String>>>,
}

impl ConfPeer {
    /// Starts the peer and waits for READY; checks that the loader picked the library of
    /// `binary`'s implementation.
    pub fn start(
        label: &str,
        binary: &ConferenceBinary,
        options: &ConfOptions,
    ) -> Result<ConfPeer, String> {
        let mut cmd: Command = options.launch.command(&binary.path);
        cmd.env_remove("LD_LIBRARY_PATH").env_remove("LD_PRELOAD");
        cmd.arg("--port").arg(options.port.to_string());
        for b in &options.bootstrap {
            cmd.arg("--bootstrap")
                .arg(&b.host)
                .arg(b.port.to_string())
                .arg(&b.dht_key);
        }
        if let Some(path) = &options.load {
            cmd.arg("--load").arg(path);
        }
        if let Some(name) = &options.name {
            cmd.arg("--name").arg(name);
        }
        if options.accept {
            cmd.arg("--accept");
        }
        if options.auto_join {
            cmd.arg("--auto-join");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", binary.path.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let out = Arc::new((Mutex::new(Output::default()), Condvar::new()));
        let out2 = Arc::clone(&out);
        thread::spawn(move || {
            for text in BufReader::new(stdout).lines().map_while(Result::ok) {
                let (m, cv) = &*out2;
                if let Some(line) = Line::parse(&text) {
                    m.lock().unwrap_or_else(|p| p.into_inner()).lines.push(line);
                    cv.notify_all();
                }
            }
            let (m, cv) = &*out2;
            m.lock().unwrap_or_else(|p| p.into_inner()).eof = true;
            cv.notify_all();
        });
        let err = Arc::new(Mutex::new(VecDeque::new()));
        let err2 = Arc::clone(&err);
        thread::spawn(move || {
            let mut text = String::new();
            let mut reader = BufReader::new(stderr);
            loop {
                text.clear();
                match reader.by_ref().take(4096).read_line(&mut text) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let mut tail = err2.lock().unwrap_or_else(|p| p.into_inner());
                        if tail.len() == STDERR_TAIL {
                            tail.pop_front();
                        }
                        tail.push_back(text.trim_end().to_string());
                    }
                }
            }
        });
        let mut peer = ConfPeer {
            label: format!("{label} ({})", binary.implementation.name()),
            implementation: binary.implementation,
            tox_id: String::new(),
            pk: String::new(),
            dht_key: String::new(),
            port: 0,
            child,
            stdin: None,
            out,
            err,
        };
        peer.stdin = peer.child.stdin.take();
        let ready = peer.wait_tag("READY", READY_LIMIT)?;
        let field = |i: usize| ready.word(i).unwrap_or("").to_string();
        peer.tox_id = field(0);
        peer.pk = peer.tox_id.chars().take(64).collect();
        peer.dht_key = field(1);
        peer.port = ready.num(2).unwrap_or(0) as u16;
        let loaded = std::fs::canonicalize(field(3)).map_err(|e| format!("{}: {e}", field(3)))?;
        let expected = std::fs::canonicalize(&binary.library)
            .map_err(|e| format!("{}: {e}", binary.library.display()))?;
        if loaded != expected {
            return Err(format!(
                "{} loaded {}, not {}",
                peer.label,
                loaded.display(),
                expected.display()
            ));
        }
        Ok(peer)
    }

    /// The process id (for its CPU time in /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where it listens, as a bootstrap node for others.
    pub fn spec(&self) -> BootstrapSpec {
        BootstrapSpec {
            host: "127.0.0.1".to_string(),
            port: self.port,
            dht_key: self.dht_key.clone(),
        }
    }

    /// A copy of every line so far.
    pub fn lines(&self) -> Vec<Line> {
        self.out
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .lines
            .clone()
    }

    /// How many lines it has printed: a mark to wait for what comes after it.
    pub fn mark(&self) -> usize {
        self.out
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .lines
            .len()
    }

    /// The first line from index `from` on that `what` accepts, waiting up to `limit`.
    pub fn wait_from(
        &self,
        from: usize,
        awaited: &str,
        limit: Duration,
        what: impl Fn(&Line) -> bool,
    ) -> Result<Line, String> {
        let deadline = Instant::now() + limit;
        let (m, cv) = &*self.out;
        let mut o = m.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(l) = o.lines.iter().skip(from).find(|l| what(l)) {
                return Ok(l.clone());
            }
            let now = Instant::now();
            if o.eof || now >= deadline {
                let why = if o.eof { "exited" } else { "timed out" };
                drop(o);
                return Err(format!(
                    "{} {why} waiting {limit:?} for {awaited}\n{}",
                    self.label,
                    self.report()
                ));
            }
            o = cv
                .wait_timeout(o, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The first line (from the start) that `what` accepts, waiting up to `limit`.
    pub fn wait(
        &self,
        awaited: &str,
        limit: Duration,
        what: impl Fn(&Line) -> bool,
    ) -> Result<Line, String> {
        self.wait_from(0, awaited, limit, what)
    }

    /// The first line tagged `tag`.
    pub fn wait_tag(&self, tag: &str, limit: Duration) -> Result<Line, String> {
        self.wait(tag, limit, |l| l.tag == tag)
    }

    /// Writes one command line without waiting for its reply.
    pub fn send(&mut self, line: &str) {
        if let Some(stdin) = self.stdin.as_mut() {
            // A peer that has exited is reported by the wait that follows.
            let _ = writeln!(stdin, "{line}");
            let _ = stdin.flush();
        }
    }

    /// Runs a command and returns its OK reply's words after the command name; an ERR reply
    /// is an error naming the code.
    pub fn cmd(&mut self, line: &str) -> Result<String, String> {
        let name = line.split(' ').next().unwrap_or("").to_string();
        let from = self.mark();
        self.send(line);
        let reply = self.wait_from(from, &format!("the reply to `{line}`"), REPLY_LIMIT, |l| {
            (l.tag == "OK" || l.tag == "ERR") && l.word(0) == Some(name.as_str())
        })?;
        let result = reply.tail(1).to_string();
        if reply.tag == "OK" {
            Ok(result)
        } else {
            Err(format!(
                "{}: `{line}` failed with code {result}",
                self.label
            ))
        }
    }

    /// [`ConfPeer::cmd`], panicking with the peer's report on failure (for tests).
    pub fn must(&mut self, line: &str) -> String {
        match self.cmd(line) {
            Ok(r) => r,
            Err(e) => panic!("{e}\n{}", self.report()),
        }
    }

    /// Says `quit` and waits up to `limit` for the exit, then kills it.
    pub fn quit(&mut self, limit: Duration) {
        self.send("quit");
        self.stdin = None;
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its last lines and stderr, for a failure message.
    pub fn report(&self) -> String {
        let lines = self.lines();
        let skip = lines.len().saturating_sub(REPORT_LINES);
        let mut s = format!(
            "---- {} stdout ({} lines, the last {}):\n",
            self.label,
            lines.len(),
            lines.len() - skip
        );
        for l in &lines[skip..] {
            s.push_str(&format!("  {:.3} {} {}\n", l.t, l.tag, l.rest));
        }
        let err = self.err.lock().unwrap_or_else(|p| p.into_inner());
        s.push_str(&format!("---- {} stderr:\n", self.label));
        for l in err.iter() {
            s.push_str(&format!("  {l}\n"));
        }
        s
    }
}

impl Drop for ConfPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_splits_into_stamp_tag_words_and_text() {
        let l = Line::parse("12.500000 MESSAGE 0 3 0 1 ABCD hello there").unwrap();
        assert_eq!(l.t, 12.5);
        assert_eq!(l.tag, "MESSAGE");
        assert_eq!(l.num(1), Some(3));
        assert_eq!(l.word(4), Some("ABCD"));
        assert_eq!(l.tail(5), "hello there");
        let bye = Line::parse("1.0 BYE").unwrap();
        assert_eq!((bye.tag.as_str(), bye.rest.as_str()), ("BYE", ""));
        assert!(Line::parse("garbage").is_none());
        assert!(Line::parse("x TAG").is_none());
    }
}
