//! What the tests of real clients (toxic in tmux, qTox and uTox under Xvfb) share: finding
//! a client, its environment on either library, a virtual X server, a tmux session, and the
//! check that a client mapped the intended libtoxcore.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::*;

pub fn client(name: &str) -> Option<PathBuf> {
    let p = Path::new("/usr/bin").join(name);
    if p.exists() {
        Some(p)
    } else {
        skip_or_fail(format!("{name} is not installed (/usr/bin/{name})"));
        None
    }
}

/// Asserts that process `pid` has mapped the intended libtoxcore.
pub fn assert_maps_lib(pid: u32, lib: Lib, what: &str) {
    let expected = match lib {
        Lib::Ours => std::fs::canonicalize(our_library()).unwrap(),
        Lib::Debian => std::fs::canonicalize(debian_library()).unwrap(),
    };
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let toxcore: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.contains("libtoxcore"))
        .collect();
    assert!(
        toxcore.iter().all(|p| Path::new(p) == expected) && !toxcore.is_empty(),
        "{what} (pid {pid}) has mapped {toxcore:?}, expected {}",
        expected.display()
    );
}

pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        thread::sleep(Duration::from_millis(200));
    }
    f()
}

/// A process of ours, killed (by its pid) when dropped.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An X server of this test on a display nobody else uses.
pub struct Xvfb {
    _proc: Proc,
    /// The X display, e.g. `:123`.
    pub display: String,
}

impl Xvfb {
    pub fn start(name: &str) -> Option<Xvfb> {
        if !have("Xvfb", "-help") {
            skip_or_fail("Xvfb is not installed");
            return None;
        }
        let first = 100 + small_hash(name, 400) as u32;
        for n in first..first + 50 {
            if Path::new(&format!("/tmp/.X{n}-lock")).exists()
                || Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            {
                continue;
            }
            let child = Command::new("Xvfb")
                .arg(format!(":{n}"))
                .args(["-screen", "0", "1280x800x24", "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn Xvfb");
            let mut p = Proc(child);
            let socket = format!("/tmp/.X11-unix/X{n}");
            let up = wait_until(Duration::from_secs(10), || {
                Path::new(&socket).exists() || matches!(p.0.try_wait(), Ok(Some(_)))
            });
            if up && matches!(p.0.try_wait(), Ok(None)) {
                return Some(Xvfb {
                    _proc: p,
                    display: format!(":{n}"),
                });
            }
        }
        panic!("no free X display for Xvfb");
    }
}

pub fn running_as_root() -> bool {
    run_ok(Command::new("id").arg("-u"))
        .map(|s| s.trim() == "0")
        .unwrap_or(false)
}

/// A client's environment: temporary HOME, our library, immediate binding.
pub fn client_command(path: &Path, home: &Path, lib_dir: Option<&Path>, display: &str) -> Command {
    let run = home.join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let mut cmd = Command::new(path);
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_RUNTIME_DIR", &run)
        .env("DISPLAY", display)
        .env_remove("LD_LIBRARY_PATH")
        .env("LD_BIND_NOW", "1")
        .env("QT_QPA_PLATFORM", "xcb")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null());
    if let Some(dir) = lib_dir {
        cmd.env("LD_LIBRARY_PATH", dir);
    }
    cmd
}

/// Our library in a directory under the names the loader looks for.
pub fn our_dir(tmp: &TempDir) -> PathBuf {
    our_lib_dir(tmp.path())
}

/// The LD_LIBRARY_PATH that makes a client load `lib`.
pub fn lib_dir_for(lib: Lib, tmp: &TempDir) -> Option<PathBuf> {
    match lib {
        Lib::Ours => Some(our_dir(tmp)),
        Lib::Debian => None,
    }
}

/// A tmux server of this test (its own socket in the test's directory).
pub struct Tmux {
    socket: String,
    dir: PathBuf,
}

impl Tmux {
    pub fn new(dir: &Path, name: &str) -> Option<Tmux> {
        if !have("tmux", "-V") {
            skip_or_fail("tmux is not installed");
            return None;
        }
        Some(Tmux {
            socket: format!("rustox-{}-{name}", std::process::id()),
            dir: dir.to_path_buf(),
        })
    }
    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.env("TMUX_TMPDIR", &self.dir)
            .env_remove("TMUX")
            .args(["-L", &self.socket]);
        c
    }
    pub fn start(&self, shell_command: &str) {
        run_ok(self.cmd().args([
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "200",
            "-y",
            "50",
            shell_command,
        ]))
        .unwrap_or_else(|e| panic!("tmux: {e}"));
        // Keep the pane when the client exits, to report how it ended.
        run_ok(
            self.cmd()
                .args(["set-option", "-t", "t", "remain-on-exit", "on"]),
        )
        .unwrap();
    }
    /// How the pane's process ended, if it has.
    pub fn dead(&self) -> Option<String> {
        let out = run_ok(self.cmd().args([
            "list-panes",
            "-t",
            "t",
            "-F",
            "#{pane_dead} #{pane_dead_status} #{pane_dead_signal}",
        ]))
        .ok()?;
        let mut w = out.split_whitespace();
        (w.next() == Some("1")).then(|| match (w.next(), w.next()) {
            (Some(status), None) => format!("exited with status {status}"),
            (_, Some(sig)) => format!("killed by signal {sig}"),
            _ => "exited".to_string(),
        })
    }
    pub fn keys(&self, keys: &[&str]) {
        run_ok(self.cmd().args(["send-keys", "-t", "t"]).args(keys)).unwrap();
    }
    /// Types `text` literally, then Enter.
    pub fn line(&self, text: &str) {
        run_ok(self.cmd().args(["send-keys", "-t", "t", "-l", text])).unwrap();
        self.keys(&["Enter"]);
    }
    pub fn capture(&self) -> String {
        run_ok(self.cmd().args(["capture-pane", "-p", "-t", "t"])).unwrap_or_default()
    }
    pub fn pane_pid(&self) -> u32 {
        run_ok(
            self.cmd()
                .args(["list-panes", "-t", "t", "-F", "#{pane_pid}"]),
        )
        .unwrap()
        .trim()
        .parse()
        .unwrap()
    }
    pub fn wait_for(&self, text: &str, timeout: Duration) -> Result<String, String> {
        let mut last = String::new();
        let mut dead = None;
        if wait_until(timeout, || {
            last = self.capture();
            dead = self.dead();
            last.contains(text) || dead.is_some()
        }) && last.contains(text)
        {
            Ok(last)
        } else if let Some(how) = dead {
            Err(format!("the client {how} before showing {text:?}:\n{last}"))
        } else {
            Err(format!(
                "the pane shows no {text:?} after {timeout:?}:\n{last}"
            ))
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

pub const TOXIC_CONF: &str = r#"
ui = {
  timestamps=true;
  alerts=false;
  bell_on_message=false;
  bell_on_filetrans=false;
  bell_on_filetrans_accept=false;
  bell_on_invite=false;
  native_colors=true;
  autolog=false;
  show_typing_other=true;
  show_typing_self=true;
  show_welcome_msg=false;
  show_connection_msg=true;
  nodeslist_update_freq=0;
  autosave_freq=0;
  notification_timeout=1000;
  mplex_away=false;
};
tox = {
  download_path="DOWNLOADS/";
};
sounds = {
  error="silent";
  self_log_in="silent";
  self_log_out="silent";
  user_log_in="silent";
  user_log_out="silent";
  call_incoming="silent";
  call_outgoing="silent";
  generic_message="silent";
  transfer_pending="silent";
  transfer_completed="silent";
};
"#;

/// Starts toxic on `lib` in `tmux` with HOME `home`, downloads into `downloads`, and one
/// node in its nodes list: the peer at 127.0.0.1:`port` with DHT key `peer_dht` (hex).
/// `LD_LIBRARY_PATH` is set only for our library; symbols bind at start-up.
#[allow(clippy::too_many_arguments)]
pub fn start_toxic(
    tmux: &Tmux,
    lib: Lib,
    tmp: &TempDir,
    home: &Path,
    toxic: &Path,
    downloads: &Path,
    port: u16,
    peer_dht: &str,
) {
    std::fs::write(
        tmp.join("toxic.conf"),
        TOXIC_CONF.replace("DOWNLOADS", &downloads.display().to_string()),
    )
    .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    std::fs::write(
        tmp.join("nodes.json"),
        format!(
            "{{\"last_scan\":{now},\"nodes\":[{{\"ipv4\":\"127.0.0.1\",\"ipv6\":\"-\",\"port\":{port},\
             \"public_key\":\"{peer_dht}\",\"status_udp\":true,\"status_tcp\":false,\"last_ping\":{now}}}]}}\n"
        ),
    )
    .unwrap();
    let env = match lib {
        Lib::Ours => format!("LD_LIBRARY_PATH={} LD_BIND_NOW=1", our_dir(tmp).display()),
        Lib::Debian => "LD_BIND_NOW=1".to_string(),
    };
    tmux.start(&format!(
        "exec env -u LD_LIBRARY_PATH HOME={home} {env} {toxic} -4 -f {home}/profile.tox -c {conf} -n {nodes} 2>{err}",
        home = home.display(),
        toxic = toxic.display(),
        conf = tmp.join("toxic.conf").display(),
        nodes = tmp.join("nodes.json").display(),
        err = tmp.join("toxic.err").display(),
    ));
}
