//! Real Tox clients on our libtoxcore.so with conferences, each test also run on Debian's
//! library to validate the test itself:
//!
//! * toxic (ncurses, driven in tmux) makes a text conference (`/conference text`), invites
//!   its friend (`/invite 0` in the friend's chat window), a conference peer
//!   (`auto_tests/tools/toxconference.c`) on Debian's c-toxcore 0.2.18; the peer joins, and
//!   each sees the other's message in the conference (toxic's window, the peer's MESSAGE
//!   line with toxic's key).
//! * qTox loads a profile holding two conferences, written by the conference peer on the
//!   same library; it starts its core without a conference error in its log and, stopped
//!   with SIGTERM as a session ends, saves the profile again, which still holds both
//!   conferences with their titles (read back by the conference peer).
//! * uTox loads the same kind of profile and reports both conferences in its log
//!   ("Group list size: 2").
//!
//! Every check that the intended library is in use reads the client's /proc/<pid>/maps.
//! Missing clients, tmux or Xvfb skip a test, or fail it when `CI` is set.

mod common;

use common::clients::*;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The conference peer's source (the auto_tests crate's C client).
fn conference_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../auto_tests/tools/toxconference.c")
}

/// toxconference.c built against `lib`, once per test process and library.
fn conference_peer(lib: Lib) -> Option<CProgram> {
    static BUILT: Mutex<Vec<CProgram>> = Mutex::new(Vec::new());
    if let Err(reason) = c_toolchain() {
        skip_or_fail(reason);
        return None;
    }
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.iter().find(|p| p.lib == lib) {
        return Some(p.clone());
    }
    let dir = std::env::temp_dir().join(format!("rustox-ffi-conference-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = compile_c(&conference_source(), &dir, "toxconference", lib, &[]);
    built.push(prog.clone());
    Some(prog)
}

/// A running conference peer: its stdout lines (`T TAG ...`, see toxconference.c's header)
/// collected as they come.
struct ConfPeer {
    _child: Proc,
    stdin: ChildStdin,
    lines: Arc<Mutex<Vec<String>>>,
    label: String,
}

impl ConfPeer {
    fn spawn(label: &str, prog: &CProgram, args: &[String]) -> ConfPeer {
        let mut cmd = prog.command(false);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", prog.path.display()));
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let lines2 = lines.clone();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                lines2.lock().unwrap().push(line);
            }
        });
        let peer = ConfPeer {
            _child: Proc(child),
            stdin,
            lines,
            label: format!("{label} ({})", prog.lib.name()),
        };
        let ready = peer.wait(" READY ", Duration::from_secs(30));
        prog.check_loaded(ready.split_whitespace().nth(5).unwrap_or(""));
        peer
    }

    /// The first line containing `what` (lines start with a time stamp), or a panic with
    /// the peer's output after `timeout`.
    fn wait(&self, what: &str, timeout: Duration) -> String {
        let mut found = None;
        wait_until(timeout, || {
            found = self
                .lines
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains(what))
                .cloned();
            found.is_some()
        });
        found.unwrap_or_else(|| panic!("{} printed no {what:?}\n{}", self.label, self.report()))
    }

    /// Sends a command and returns its OK reply's words after the command's name.
    fn cmd(&mut self, line: &str) -> String {
        let name = line.split(' ').next().unwrap_or("");
        let before = self.lines.lock().unwrap().len();
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let mut reply = None;
        wait_until(Duration::from_secs(20), || {
            reply = self.lines.lock().unwrap()[before..]
                .iter()
                .find(|l| {
                    let w: Vec<&str> = l.split(' ').collect();
                    w.len() > 2 && (w[1] == "OK" || w[1] == "ERR") && w[2] == name
                })
                .cloned();
            reply.is_some()
        });
        let reply = reply.unwrap_or_else(|| panic!("{}: no reply to {line:?}", self.label));
        let w: Vec<&str> = reply.splitn(4, ' ').collect();
        assert_eq!(w[1], "OK", "{}: {line:?} failed: {reply}", self.label);
        w.get(3).unwrap_or(&"").to_string()
    }

    /// Says `quit` and waits for its last line.
    fn quit(&mut self) {
        writeln!(self.stdin, "quit").unwrap();
        self.stdin.flush().unwrap();
        self.wait(" BYE", Duration::from_secs(20));
    }

    fn report(&self) -> String {
        format!(
            "---- {} stdout:\n{}",
            self.label,
            self.lines.lock().unwrap().join("\n")
        )
    }
}

/// Writes a profile holding two text conferences titled "first conference" and "second
/// conference", saved by the conference peer on `lib`; returns the profile's Tox ID.
fn profile_with_conferences(lib: Lib, path: &Path) -> Option<String> {
    let prog = conference_peer(lib)?;
    let port = rustox_testkit::net::free_udp_port();
    let mut p = ConfPeer::spawn(
        "profile writer",
        &prog,
        &[
            "--port".into(),
            port.to_string(),
            "--name".into(),
            "conference keeper".into(),
        ],
    );
    let ready = p.wait(" READY ", Duration::from_secs(30));
    for (n, title) in [(0, "first conference"), (1, "second conference")] {
        assert_eq!(p.cmd("new").trim(), n.to_string());
        p.cmd(&format!("title {n} {title}"));
    }
    p.cmd(&format!("save {}", path.display()));
    p.quit();
    ready.split_whitespace().nth(2).map(str::to_string)
}

/// The conferences in a profile as the conference peer on `lib` reads them: each
/// conference's title.
fn conference_titles(lib: Lib, path: &Path) -> Vec<String> {
    let prog = conference_peer(lib).expect("built before");
    let port = rustox_testkit::net::free_udp_port();
    let mut p = ConfPeer::spawn(
        "profile reader",
        &prog,
        &[
            "--port".into(),
            port.to_string(),
            "--load".into(),
            path.display().to_string(),
        ],
    );
    let list = p.cmd("chatlist");
    let titles = list
        .split_whitespace()
        .map(|c| p.cmd(&format!("get-title {c}")))
        .collect();
    p.quit();
    titles
}

/// qTox allows one instance per user (a shared-memory segment keyed by the user, whatever
/// HOME says); its tests take turns within this test binary.
static ONE_QTOX_AT_A_TIME: Mutex<()> = Mutex::new(());

/// qTox on `lib` loads a profile with two conferences, starts its core with no conference
/// error, and on SIGTERM saves a profile that still holds both.
fn qtox_loads_conferences(lib: Lib) {
    let _turn = ONE_QTOX_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(qtox) = client("qtox") else { return };
    let Some(x) = Xvfb::start(&format!("qtox-confs-{}", lib.name())) else {
        return;
    };
    let tmp = TempDir::new("rustox-ffi", &format!("qtox-confs-{}", lib.name()));
    let home = tmp.join("home");
    let tox_dir = home.join(".config/tox");
    std::fs::create_dir_all(&tox_dir).unwrap();
    let profile = tox_dir.join("rustox.tox");
    let Some(id) = profile_with_conferences(lib, &profile) else {
        return;
    };
    let written = std::fs::metadata(&profile).unwrap().modified().unwrap();

    // qTox 1.17.6 often dies of SIGSEGV while shutting down on SIGTERM with conferences
    // loaded, before it writes the profile, on Debian's c-toxcore and on ours alike (its own
    // teardown; the library is already past `tox_kill`'s callbacks). Such a run is started
    // again, at most `QTOX_RUNS` times in all; if every run dies that way, the saved-back
    // check is left unchecked with a notice. What must hold in every run: qTox starts its
    // core with the profile, logs no conference error and is still running 5 s later.
    const QTOX_RUNS: usize = 3;
    let mut saved_back = false;
    let dir = lib_dir_for(lib, &tmp);
    for run in 1..=QTOX_RUNS {
        let log = tmp.join(format!("qtox-{run}.log"));
        let log_file = std::fs::File::create(&log).unwrap();
        let mut cmd = client_command(&qtox, &home, dir.as_deref(), &x.display);
        cmd.args(["-p", "rustox"])
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file);
        let mut q = Proc(cmd.spawn().expect("spawn qtox"));
        let started = wait_until(Duration::from_secs(90), || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            text.contains("Connecting to a bootstrap node") || matches!(q.0.try_wait(), Ok(Some(_)))
        });
        let exited = q.0.try_wait().ok().flatten();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            started && exited.is_none(),
            "qTox on {lib:?}'s library did not start its core with a profile holding conferences (exit: {exited:?}):\n{text}"
        );
        assert_maps_lib(q.0.id(), lib, "qtox");
        // Give it the time to build its conference widgets, then end the session as a
        // desktop does: SIGTERM, on which qTox saves the profile and exits.
        thread::sleep(Duration::from_secs(5));
        let alive = q.0.try_wait().ok().flatten();
        assert!(
            alive.is_none(),
            "qTox on {lib:?}'s library died with conferences loaded ({alive:?}):\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        run_ok(Command::new("kill").args(["-TERM", &q.0.id().to_string()])).expect("kill -TERM");
        let ended = wait_until(Duration::from_secs(30), || {
            matches!(q.0.try_wait(), Ok(Some(_)))
        });
        let status = q.0.try_wait().ok().flatten();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(ended, "qTox did not exit on SIGTERM:\n{text}");
        let errors: Vec<&str> = text
            .lines()
            .filter(|l| {
                (l.contains("Critical") && !l.contains("resolve hostname"))
                    || l.contains("onference")
                    || l.contains("groupnumber")
            })
            .collect();
        assert!(
            errors.is_empty(),
            "qTox on {lib:?}'s library logged: {errors:?}\n{text}"
        );
        let resaved = std::fs::metadata(&profile).unwrap().modified().unwrap();
        let crashed =
            status.is_some_and(|s| std::os::unix::process::ExitStatusExt::signal(&s) == Some(11));
        if resaved <= written && crashed && run < QTOX_RUNS {
            eprintln!("qTox run {run} died of SIGSEGV on SIGTERM before saving; again");
            continue;
        }
        if resaved <= written && crashed {
            eprintln!(
                "NOTICE: qTox on {lib:?}'s library died of SIGSEGV on SIGTERM in all {QTOX_RUNS} runs; \
                 the saved-back conferences are not checked"
            );
            break;
        }
        assert!(
            resaved > written,
            "qTox on {lib:?}'s library did not save the profile on SIGTERM (exit {status:?}):\n{text}"
        );
        saved_back = true;
        break;
    }
    if !saved_back {
        return;
    }
    let mut titles = conference_titles(lib, &profile);
    titles.sort();
    assert_eq!(
        titles,
        ["first conference", "second conference"],
        "the conferences in the profile qTox on {lib:?}'s library saved"
    );
    println!(
        "qTox on {lib:?}'s library loaded profile {} with two conferences and saved them back",
        &id[..12]
    );
}

#[test]
fn qtox_on_ours_loads_a_profile_with_conferences() {
    qtox_loads_conferences(Lib::Ours);
}

/// Validates the qTox test itself, on Debian's library as packaged.
#[test]
fn qtox_on_debian_loads_a_profile_with_conferences() {
    qtox_loads_conferences(Lib::Debian);
}

/// uTox on `lib` loads a profile with two conferences and lists both.
fn utox_loads_conferences(lib: Lib) {
    let Some(utox) = client("utox") else { return };
    if !have("stdbuf", "--version") {
        skip_or_fail("stdbuf (coreutils) is missing");
        return;
    }
    let Some(x) = Xvfb::start(&format!("utox-confs-{}", lib.name())) else {
        return;
    };
    let tmp = TempDir::new("rustox-ffi", &format!("utox-confs-{}", lib.name()));
    let home = tmp.join("home");
    let tox_dir = home.join(".config/tox");
    std::fs::create_dir_all(&tox_dir).unwrap();
    let Some(id) = profile_with_conferences(lib, &tox_dir.join("tox_save.tox")) else {
        return;
    };
    let log = tmp.join("utox.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let dir = lib_dir_for(lib, &tmp);
    // uTox's log is stdout, block-buffered into a file unless stdbuf makes it line-buffered;
    // four -v reach the debug lines that count the conferences.
    let mut cmd = client_command(Path::new("stdbuf"), &home, dir.as_deref(), &x.display);
    cmd.args(["-oL", "-eL"])
        .arg(&utox)
        .args(["-v", "-v", "-v", "-v"]);
    if running_as_root() {
        cmd.arg("--allow-root");
    }
    cmd.stdout(log_file.try_clone().unwrap()).stderr(log_file);
    let mut u = Proc(cmd.spawn().expect("spawn utox"));
    let listed = wait_until(Duration::from_secs(60), || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("Group list size: 2")
            || matches!(u.0.try_wait(), Ok(Some(_)))
    });
    let exited = u.0.try_wait().ok().flatten();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        listed && exited.is_none() && text.contains("Group list size: 2"),
        "uTox on {lib:?}'s library did not list the profile's two conferences (exit {exited:?}):\n{text}"
    );
    assert_maps_lib(u.0.id(), lib, "utox");
    // Still running a moment later: loading the conferences did not bring it down.
    thread::sleep(Duration::from_secs(2));
    assert!(
        matches!(u.0.try_wait(), Ok(None)),
        "uTox exited after loading the conferences:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    println!(
        "uTox on {lib:?}'s library loaded profile {} and lists its two conferences",
        &id[..12]
    );
}

#[test]
fn utox_on_ours_loads_a_profile_with_conferences() {
    utox_loads_conferences(Lib::Ours);
}

/// Validates the uTox test itself, on Debian's library as packaged.
#[test]
fn utox_on_debian_loads_a_profile_with_conferences() {
    utox_loads_conferences(Lib::Debian);
}

/// toxic on `lib` makes a conference and invites the conference peer on Debian's c-toxcore;
/// a message each way in the conference.
fn toxic_conference_with_debian_peer(lib: Lib) {
    let Some(toxic) = client("toxic") else { return };
    let Some(prog) = conference_peer(Lib::Debian) else {
        return;
    };
    if lib == Lib::Ours && conference_peer(Lib::Ours).is_none() {
        return;
    }
    let tmp = TempDir::new("rustox-ffi", &format!("toxic-conference-{}", lib.name()));
    let Some(tmux) = Tmux::new(tmp.path(), &format!("conf-{}", lib.name())) else {
        return;
    };
    let started = Instant::now();
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let port = rustox_testkit::net::free_udp_port();
    let mut peer = ConfPeer::spawn(
        "conference peer",
        &prog,
        &[
            "--port",
            &port.to_string(),
            "--accept",
            "--auto-join",
            "--name",
            "c-peer",
        ]
        .map(String::from),
    );
    let ready = peer.wait(" READY ", Duration::from_secs(30));
    let w: Vec<&str> = ready.split_whitespace().collect();
    let (peer_id, peer_dht) = (w[2].to_string(), w[3].to_string());
    let wait = Duration::from_secs(60);
    let fail = |what: String, tmux: &Tmux, peer: &ConfPeer| -> String {
        format!(
            "toxic on {lib:?}'s library: {what}\n---- toxic's pane:\n{}\n---- toxic's stderr:\n{}\n{}",
            tmux.capture(),
            std::fs::read_to_string(tmp.join("toxic.err")).unwrap_or_default(),
            peer.report()
        )
    };

    start_toxic(&tmux, lib, &tmp, &home, &toxic, tmp.path(), port, &peer_dht);
    tmux.wait_for("Would you like to encrypt it", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("[Home]", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    assert_maps_lib(tmux.pane_pid(), lib, "toxic");

    // Friends: toxic's request, accepted by the peer.
    tmux.line(&format!("/add {peer_id} \"rustox-interop\""));
    let request = peer.wait(" REQUEST ", Duration::from_secs(90));
    let toxic_pk = request.split_whitespace().nth(2).unwrap_or("").to_string();
    peer.wait(" FRIEND 0 ", wait);

    // toxic makes the conference (its number 0).
    tmux.line("/conference text");
    thread::sleep(Duration::from_secs(1));
    // The peer's friend message opens toxic's chat window with it; there, invite.
    peer.cmd("say 0 invite me please");
    let mut in_chat = false;
    for _ in 0..8 {
        if tmux
            .wait_for("invite me please", Duration::from_secs(3))
            .is_ok()
        {
            in_chat = true;
            break;
        }
        tmux.keys(&["C-p"]);
    }
    if !in_chat {
        panic!(
            "{}",
            fail("no chat window with the peer".into(), &tmux, &peer)
        );
    }
    tmux.line("/invite 0");
    tmux.wait_for("Invited contact to Conference 0", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    let joined = peer.wait(" JOINED ", wait);
    let conf = joined.split_whitespace().nth(2).unwrap_or("0").to_string();
    peer.wait(&format!(" PEERS {conf} 2 "), wait);
    assert!(
        !peer
            .lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains(" JOIN_ERR ")),
        "{}",
        fail("the peer could not join".into(), &tmux, &peer)
    );

    // A message each way in the conference.
    peer.cmd(&format!("msg {conf} hello from c-toxcore"));
    let mut in_conference = false;
    for _ in 0..8 {
        if tmux
            .wait_for("hello from c-toxcore", Duration::from_secs(3))
            .is_ok()
        {
            in_conference = true;
            break;
        }
        tmux.keys(&["C-p"]);
    }
    if !in_conference {
        panic!(
            "{}",
            fail(
                "the peer's message is in no toxic window".into(),
                &tmux,
                &peer
            )
        );
    }
    tmux.line("hello from toxic");
    let got = peer.wait(" hello from toxic", wait);
    let w: Vec<&str> = got.split_whitespace().collect();
    assert!(
        w.get(1) == Some(&"MESSAGE")
            && w.get(2) == Some(&conf.as_str())
            && w.get(6) == Some(&toxic_pk.as_str()),
        "{}",
        fail(format!("toxic's message arrived as {got:?}"), &tmux, &peer)
    );
    assert_maps_lib(tmux.pane_pid(), lib, "toxic");
    tmux.line("/exit");
    println!(
        "toxic on {lib:?}'s library: conference made, c-toxcore invited, messages both ways in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Validates the toxic test itself: toxic on Debian's library, as packaged.
#[test]
fn toxic_on_debian_makes_a_conference_with_c_toxcore() {
    toxic_conference_with_debian_peer(Lib::Debian);
}

#[test]
fn toxic_on_ours_makes_a_conference_with_c_toxcore() {
    toxic_conference_with_debian_peer(Lib::Ours);
}
