//! Real proxies for the proxy tests, each a child process killed when dropped: Debian's
//! `microsocks` (SOCKS5) and `tinyproxy` (HTTP CONNECT), both in CI_PACKAGES (`.ci/run`).

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustox_core::proxy::{ProxyConfig, ProxyKind};

/// How long a proxy may take to listen.
const START_LIMIT: Duration = Duration::from_secs(5);

/// Why a proxy did not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyStartError {
    /// The program is not installed.
    #[error("{0} is not installed (apt install {0})")]
    Missing(&'static str),
    /// It started but never listened.
    #[error("{0} did not listen on {1} within {START_LIMIT:?}")]
    NotListening(&'static str, SocketAddr),
    /// Starting it failed.
    #[error("cannot start {0}: {1}")]
    Io(&'static str, io::Error),
}

impl ProxyStartError {
    /// True when the program is missing (tests skip outside CI, fail in CI).
    pub fn is_missing_dependency(&self) -> bool {
        matches!(self, ProxyStartError::Missing(_))
    }
}

/// A running proxy.
pub struct ProxyProcess {
    child: Child,
    config: ProxyConfig,
    _conf_file: Option<PathBuf>,
}

/// What a proxy allows.
#[derive(Debug, Clone, Default)]
pub struct ProxyPolicy {
    /// SOCKS5 only: a user name and password (`microsocks -u -P`), so a client without
    /// authentication is refused.
    pub require_password: bool,
    /// HTTP only: the one port CONNECT may reach (`tinyproxy`'s `ConnectPort`); `None`: any.
    pub connect_port: Option<u16>,
}

impl ProxyProcess {
    /// Starts `microsocks` (SOCKS5) or `tinyproxy` (HTTP) listening on `listen`.
    pub fn start(
        kind: ProxyKind,
        listen: SocketAddr,
        policy: &ProxyPolicy,
    ) -> Result<ProxyProcess, ProxyStartError> {
        let (name, mut cmd, conf_file) = match kind {
            ProxyKind::Socks5 => {
                let mut cmd = Command::new("microsocks");
                cmd.args([
                    "-i",
                    &listen.ip().to_string(),
                    "-p",
                    &listen.port().to_string(),
                ]);
                if policy.require_password {
                    cmd.args(["-u", "rustox", "-P", "secret"]);
                }
                ("microsocks", cmd, None)
            }
            ProxyKind::Http => {
                let path = std::env::temp_dir().join(format!(
                    "rustox-tinyproxy-{}-{}.conf",
                    std::process::id(),
                    listen.port()
                ));
                let mut conf = format!(
                    "Port {}\nListen {}\nTimeout 120\nAllow 0.0.0.0/0\nMaxClients 64\nLogLevel Error\n",
                    listen.port(),
                    listen.ip()
                );
                if let Some(p) = policy.connect_port {
                    conf.push_str(&format!("ConnectPort {p}\n"));
                }
                std::fs::File::create(&path)
                    .and_then(|mut f| f.write_all(conf.as_bytes()))
                    .map_err(|e| ProxyStartError::Io("tinyproxy", e))?;
                let mut cmd = Command::new("tinyproxy");
                cmd.arg("-d").arg("-c").arg(&path);
                ("tinyproxy", cmd, Some(path))
            }
        };
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => ProxyStartError::Missing(name),
                _ => ProxyStartError::Io(name, e),
            })?;
        let process = ProxyProcess {
            child,
            config: ProxyConfig { kind, addr: listen },
            _conf_file: conf_file,
        };
        let end = Instant::now() + START_LIMIT;
        while Instant::now() < end {
            if TcpStream::connect_timeout(&listen, Duration::from_millis(200)).is_ok() {
                return Ok(process);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(ProxyStartError::NotListening(name, listen))
    }

    /// The node's option for it.
    pub fn config(&self) -> ProxyConfig {
        self.config
    }

    /// Kills it now (a proxy that dies under its clients).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        self.kill();
        if let Some(path) = &self._conf_file {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A network namespace whose only way out is a veth pair to the root namespace: inside,
/// `inner` (and its own loopback); outside, `outer`, where the proxy listens. No route
/// leads anywhere else, so a node inside reaches the network only through that proxy.
pub struct ProxyOnlyNamespace {
    ns: crate::emulator::NetNs,
    /// The root namespace's end (the proxy's address).
    pub outer: std::net::Ipv4Addr,
    /// The namespace's end.
    pub inner: std::net::Ipv4Addr,
}

impl ProxyOnlyNamespace {
    /// Creates it; `index` (0–63) keeps parallel tests' names and /30s apart.
    pub fn create(index: u8) -> Result<Self, crate::emulator::EmulatorError> {
        crate::emulator::remove_stale_namespaces();
        let pid = std::process::id();
        let name = format!("{}{pid}-{index}-px", crate::emulator::NAMESPACE_PREFIX);
        let ns = crate::emulator::NetNs::create(&name)?;
        let base = index.saturating_mul(4) % 252;
        let outer = std::net::Ipv4Addr::new(10, 231, 0, base + 1);
        let inner = std::net::Ipv4Addr::new(10, 231, 0, base + 2);
        let host_if = format!("rxp{}{index}h", pid % 100_000);
        let ns_if = format!("rxp{}{index}n", pid % 100_000);
        let ip = |args: &[&str]| -> Result<(), crate::emulator::EmulatorError> {
            let out = Command::new("ip")
                .args(args)
                .output()
                .map_err(|e| crate::emulator::EmulatorError::Thread(format!("ip: {e}")))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(crate::emulator::EmulatorError::Thread(format!(
                    "ip {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                )))
            }
        };
        ip(&[
            "link", "add", &host_if, "type", "veth", "peer", "name", &ns_if,
        ])?;
        ip(&["link", "set", &ns_if, "netns", &name])?;
        ip(&["addr", "add", &format!("{outer}/30"), "dev", &host_if])?;
        ip(&["link", "set", &host_if, "up"])?;
        ns.ip(&["addr", "add", &format!("{inner}/30"), "dev", &ns_if])?;
        ns.ip(&["link", "set", &ns_if, "up"])?;
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ProxyOnlyNamespace { ns, outer, inner })
    }

    /// Runs `f` on a thread inside the namespace; threads it starts stay inside, and so do
    /// sockets it opens ([`crate::emulator::NetNs::run_inside`]).
    pub fn run_inside<T: Send>(
        &self,
        f: impl FnOnce() -> T + Send,
    ) -> Result<T, crate::emulator::EmulatorError> {
        self.ns.run_inside(f)
    }
}
