//! c-toxcore's DHT bootstrap daemon (`tox-bootstrapd`, Debian's toxcore-utils) as a child
//! process: a config file (UDP port, optional TCP relay ports, MOTD and nodes to join), run
//! in the foreground with its log on stdout; it prints `Public Key: <hex>` once it listens.

use std::io::{BufRead, BufReader};
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The program's name.
pub const PROGRAM: &str = "tox-bootstrapd";

/// What goes into its config file.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Its UDP port.
    pub port: u16,
    /// Its TCP relay ports; empty: the relay is off.
    pub tcp_relay_ports: Vec<u16>,
    /// Its message of the day; `None`: off.
    pub motd: Option<String>,
    /// Nodes it bootstraps from: IPv4 address and DHT key (64 hex digits).
    pub bootstrap_nodes: Vec<(SocketAddrV4, String)>,
}

impl Config {
    /// UDP only, on `port`.
    pub fn udp(port: u16) -> Config {
        Config {
            port,
            ..Config::default()
        }
    }

    /// The config file's text, keys and pid file in `dir`; IPv4 only, no LAN discovery.
    pub fn text(&self, dir: &Path) -> String {
        let nodes = self
            .bootstrap_nodes
            .iter()
            .map(|(addr, pk)| {
                format!(
                    "{{ address = \"{}\"\n port = {}\n public_key = \"{pk}\" }}",
                    addr.ip(),
                    addr.port()
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let ports = self
            .tcp_relay_ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "port = {port}\nkeys_file_path = \"{dir}/keys\"\npid_file_path = \"{dir}/pid\"\n\
             enable_ipv6 = false\nenable_ipv4_fallback = true\nenable_lan_discovery = false\n\
             enable_tcp_relay = {relay}\ntcp_relay_ports = [{ports}]\nenable_motd = {motd_on}\n\
             motd = \"{motd}\"\nbootstrap_nodes = ({nodes})\n",
            port = self.port,
            dir = dir.display(),
            relay = !self.tcp_relay_ports.is_empty(),
            motd_on = self.motd.is_some(),
            motd = self.motd.as_deref().unwrap_or(""),
        )
    }

    /// Writes `dir/tox-bootstrapd.conf` (removing a pid file an earlier run left there,
    /// which would stop the daemon) and returns its path.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let _ = std::fs::remove_file(dir.join("pid"));
        let path = dir.join("tox-bootstrapd.conf");
        std::fs::write(&path, self.text(dir))?;
        Ok(path)
    }
}

/// The daemon's arguments for the config file `config`: foreground, log to stdout.
pub fn args(config: &Path) -> [String; 3] {
    [
        format!("--config={}", config.display()),
        "--foreground".to_string(),
        "--log-backend=stdout".to_string(),
    ]
}

/// Whether `tox-bootstrapd` can be run.
pub fn installed() -> bool {
    Command::new(PROGRAM).arg("--help").output().is_ok()
}

/// A running daemon; killed when dropped.
#[derive(Debug)]
pub struct Bootstrapd {
    child: Child,
    public_key: String,
}

impl Bootstrapd {
    /// Writes the config into `dir`, starts the daemon and waits for its key line; its
    /// further log is read and dropped so it never blocks on a full pipe.
    pub fn start(config: &Config, dir: &Path) -> std::io::Result<Bootstrapd> {
        let path = config.write(dir)?;
        let mut child = Command::new(PROGRAM)
            .args(args(&path))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let public_key = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(hex) = line.strip_prefix("Public Key: ") {
                        break hex.trim().to_string();
                    }
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(std::io::Error::other(
                        "tox-bootstrapd exited before printing its key",
                    ));
                }
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Ok(Bootstrapd { child, public_key })
    }

    /// Its DHT public key, as printed (64 hex digits).
    pub fn public_key(&self) -> &str {
        &self.public_key
    }
}

impl Drop for Bootstrapd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
