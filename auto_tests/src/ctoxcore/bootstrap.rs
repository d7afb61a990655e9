//! A c-toxcore DHT bootstrap node from Debian's toxcore-utils, as a child process.
//!
//! `tox-bootstrapd` is the default: it takes its UDP port from a config file, runs with its
//! TCP relay off unless given relay ports, and prints its key on a flushed line. `DHT_bootstrap` takes no options: it
//! binds the first free UDP port from 33445 and a TCP relay on 443, 3389 and 33445, so only
//! one can run per network namespace, and it writes `key` and `PUBLIC_ID.txt` into its
//! working directory. Its stdout is a pipe, so it runs under `stdbuf -oL` to flush its lines.

use std::fmt;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::build::unique_suffix;
use super::child::LineChild;
use super::error::CToxcoreError;
use super::launch::Launch;

/// Which program runs the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BootstrapProgram {
    /// `tox-bootstrapd --foreground` with a generated config (UDP only, no LAN discovery).
    ToxBootstrapd,
    /// `DHT_bootstrap --ipv4` (see the module doc for its fixed ports).
    DhtBootstrap,
}

/// Where and how to start a bootstrap node.
#[derive(Debug, Clone)]
pub struct BootstrapOptions {
    /// The program.
    pub program: BootstrapProgram,
    /// tox-bootstrapd's UDP port; 0 picks one that is free in this process's namespace.
    /// DHT_bootstrap chooses its own.
    pub port: u16,
    /// How to start it (e.g. inside a network namespace).
    pub launch: Launch,
    /// A directory for its keys and config; `None`: a fresh one under the system temp dir,
    /// removed when the node is dropped.
    pub work_dir: Option<PathBuf>,
    /// How long it may take to print its key.
    pub startup_timeout: Duration,
    /// Copy its log to our stderr.
    pub echo_log: bool,
    /// tox-bootstrapd's TCP relay ports; empty: the relay is off.
    pub tcp_relay_ports: Vec<u16>,
    /// Nodes tox-bootstrapd bootstraps from (its `bootstrap_nodes`), to join it into a DHT
    /// of several nodes: IPv4 address and DHT key.
    pub bootstrap_nodes: Vec<(std::net::SocketAddrV4, rustox_net_crypto::crypto::PublicKey)>,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        BootstrapOptions {
            program: BootstrapProgram::ToxBootstrapd,
            port: 0,
            launch: Launch::direct(),
            work_dir: None,
            startup_timeout: Duration::from_secs(10),
            echo_log: false,
            tcp_relay_ports: Vec::new(),
            bootstrap_nodes: Vec::new(),
        }
    }
}

/// A DHT node to bootstrap from: what `tox_bootstrap` takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapSpec {
    /// Its IP address or host name, as the peer reaches it.
    pub host: String,
    /// Its UDP port.
    pub port: u16,
    /// Its DHT public key, 64 hex digits.
    pub dht_key: String,
}

impl BootstrapSpec {
    /// The node at `addr` with DHT key `pk`.
    pub fn at(addr: std::net::SocketAddr, pk: &rustox_net_crypto::crypto::PublicKey) -> Self {
        BootstrapSpec {
            host: addr.ip().to_string(),
            port: addr.port(),
            dht_key: pk.to_hex(),
        }
    }
}

impl fmt::Display for BootstrapSpec {
    /// `HOST:PORT:KEY`, the peer's `--bootstrap` syntax (IPv6 literals in brackets).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}:{}", self.host, self.port, self.dht_key)
        } else {
            write!(f, "{}:{}:{}", self.host, self.port, self.dht_key)
        }
    }
}

/// A running bootstrap node; killed when dropped.
#[derive(Debug)]
pub struct BootstrapNode {
    child: LineChild,
    dht_key: String,
    port: u16,
    work_dir: PathBuf,
    remove_work_dir: bool,
}

impl BootstrapNode {
    /// Starts the node and waits until it has printed its key (and, for DHT_bootstrap, port).
    pub fn start(options: &BootstrapOptions) -> Result<BootstrapNode, CToxcoreError> {
        let (work_dir, remove_work_dir) = match &options.work_dir {
            Some(dir) => (dir.clone(), false),
            None => (
                std::env::temp_dir().join(format!("rustox-ctoxcore-{}", unique_suffix())),
                true,
            ),
        };
        std::fs::create_dir_all(&work_dir)
            .map_err(|e| CToxcoreError::io(format!("creating {}", work_dir.display()), e))?;
        let deadline = Instant::now() + options.startup_timeout;
        let started = match options.program {
            BootstrapProgram::ToxBootstrapd => start_tox_bootstrapd(options, &work_dir, deadline),
            BootstrapProgram::DhtBootstrap => start_dht_bootstrap(options, &work_dir, deadline),
        };
        match started {
            Ok((child, dht_key, port)) => Ok(BootstrapNode {
                child,
                dht_key,
                port,
                work_dir,
                remove_work_dir,
            }),
            Err(e) => {
                if remove_work_dir {
                    let _ = std::fs::remove_dir_all(&work_dir);
                }
                Err(e)
            }
        }
    }

    /// Its process id (for CPU and memory readings).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its DHT public key (64 hex digits).
    pub fn dht_key(&self) -> &str {
        &self.dht_key
    }

    /// Its UDP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The node as reached at `host` (its namespace's address, or 127.0.0.1).
    pub fn spec(&self, host: impl Into<String>) -> BootstrapSpec {
        BootstrapSpec {
            host: host.into(),
            port: self.port,
            dht_key: self.dht_key.clone(),
        }
    }

    /// Which program runs it.
    pub fn role(&self) -> &str {
        self.child.role()
    }
}

impl Drop for BootstrapNode {
    fn drop(&mut self) {
        self.child.kill();
        if self.remove_work_dir {
            let _ = std::fs::remove_dir_all(&self.work_dir);
        }
    }
}

type Started = (LineChild, String, u16);

fn start_tox_bootstrapd(
    options: &BootstrapOptions,
    work_dir: &Path,
    deadline: Instant,
) -> Result<Started, CToxcoreError> {
    use rustox_testkit::bootstrapd::{self, PROGRAM};
    let port = match options.port {
        0 => free_udp_port()?,
        p => p,
    };
    let config = bootstrapd::Config {
        port,
        tcp_relay_ports: options.tcp_relay_ports.clone(),
        motd: None,
        bootstrap_nodes: options
            .bootstrap_nodes
            .iter()
            .map(|(addr, pk)| (*addr, pk.to_hex()))
            .collect(),
    }
    .write(work_dir)
    .map_err(|e| CToxcoreError::io(format!("writing {}'s config", work_dir.display()), e))?;
    let mut command = options.launch.command(PROGRAM);
    command.args(bootstrapd::args(&config));
    let mut child = LineChild::spawn(command, PROGRAM, options.echo_log, |source| {
        CToxcoreError::ToolMissing {
            program: PROGRAM.to_string(),
            source,
        }
    })?;
    loop {
        let line = child.next_line("its public key", deadline)?;
        if options.echo_log {
            eprintln!("[{PROGRAM}] {line}");
        }
        if let Some(key) = line.strip_prefix("Public Key: ") {
            let key = parse_key(&child, &line, key)?;
            return Ok((child, key, port));
        }
    }
}

fn start_dht_bootstrap(
    options: &BootstrapOptions,
    work_dir: &Path,
    deadline: Instant,
) -> Result<Started, CToxcoreError> {
    const PROGRAM: &str = "DHT_bootstrap";
    let mut command = options.launch.command("stdbuf");
    command
        .args(["-oL", PROGRAM, "--ipv4"])
        .current_dir(work_dir);
    let mut child = LineChild::spawn(command, PROGRAM, options.echo_log, |source| {
        CToxcoreError::ToolMissing {
            program: format!("stdbuf -oL {PROGRAM}"),
            source,
        }
    })?;
    let mut key = None;
    loop {
        let line = child.next_line("its public key and port", deadline)?;
        if options.echo_log {
            eprintln!("[{PROGRAM}] {line}");
        }
        if line.contains("TCP server failed to initialize") {
            return Err(CToxcoreError::UnexpectedOutput {
                role: PROGRAM.to_string(),
                reason: "its TCP relay ports (443, 3389, 33445) are taken: only one \
                         DHT_bootstrap runs per network namespace"
                    .to_string(),
                line,
            });
        }
        if let Some(k) = line.strip_prefix("Public key: ") {
            key = Some(parse_key(&child, &line, k)?);
        } else if let Some(p) = line.strip_prefix("Port: ") {
            let port = p
                .trim()
                .parse::<u16>()
                .map_err(|e| CToxcoreError::UnexpectedOutput {
                    role: PROGRAM.to_string(),
                    reason: e.to_string(),
                    line: line.clone(),
                })?;
            return match key {
                Some(key) => Ok((child, key, port)),
                None => Err(CToxcoreError::UnexpectedOutput {
                    role: PROGRAM.to_string(),
                    reason: "port before key".to_string(),
                    line,
                }),
            };
        }
    }
}

fn parse_key(child: &LineChild, line: &str, key: &str) -> Result<String, CToxcoreError> {
    let key = key.trim();
    if key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(key.to_string())
    } else {
        Err(CToxcoreError::UnexpectedOutput {
            role: child.role().to_string(),
            reason: "not a 64-digit hex key".to_string(),
            line: line.to_string(),
        })
    }
}

/// A UDP port free in this process's namespace at the time of asking.
fn free_udp_port() -> Result<u16, CToxcoreError> {
    let socket = UdpSocket::bind("0.0.0.0:0")
        .map_err(|e| CToxcoreError::io("binding a UDP socket to find a free port", e))?;
    socket
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| CToxcoreError::io("reading a UDP socket's port", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_prints_as_the_peers_bootstrap_argument() {
        let key = "AB".repeat(32);
        let v4 = BootstrapSpec {
            host: "10.0.0.1".into(),
            port: 33445,
            dht_key: key.clone(),
        };
        assert_eq!(v4.to_string(), format!("10.0.0.1:33445:{key}"));
        let v6 = BootstrapSpec {
            host: "fd00::1".into(),
            port: 1,
            dht_key: key.clone(),
        };
        assert_eq!(v6.to_string(), format!("[fd00::1]:1:{key}"));
    }
}
