//! Real Tox clients built for Debian's c-toxcore, run unchanged on our libtoxcore.so:
//! toxic (ncurses, driven in tmux), qTox and uTox (Qt and X11, on Xvfb).
//!
//! * Each client resolves every symbol it uses from our library: `ldd -r` with
//!   `LD_LIBRARY_PATH` at our library reports nothing undefined, and the clients run with
//!   `LD_BIND_NOW=1` (immediate binding: a missing function stops the loader).
//! * qTox loads a profile and starts its core; uTox creates a new profile, which Debian's
//!   c-toxcore then loads (peer.c): the profile our library wrote is c-toxcore's format.
//! * toxic, started in tmux on our library, shows its Tox ID, sends a friend request to
//!   peer.c running on Debian's c-toxcore, receives the peer's name, a file (accepted with
//!   `/savefile`, checked byte for byte in its download directory) and a message, and
//!   sends a message back. The same test runs with toxic on Debian's library, which
//!   validates the test itself.
//!
//! Every check that the intended library is in use reads the client's /proc/<pid>/maps.
//! Missing clients, tmux or Xvfb skip a test, or fail it when `CI` is set.

mod common;

use common::clients::*;
use common::*;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

/// `LD_LIBRARY_PATH=<ours> ldd -r client`: libtoxcore.so.2 is ours and nothing is
/// undefined.
fn ldd_r_on_ours(name: &str) {
    let Some(path) = client(name) else { return };
    let tmp = TempDir::new("rustox-ffi", &format!("ldd-{name}"));
    let dir = our_dir(&tmp);
    let out = Command::new("ldd")
        .arg("-r")
        .arg(&path)
        .env("LD_LIBRARY_PATH", &dir)
        .output()
        .expect("ldd -r");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && !text.contains("undefined symbol") && !text.contains("not found"),
        "LD_LIBRARY_PATH={} ldd -r {}:\n{text}",
        dir.display(),
        path.display()
    );
    let line = text
        .lines()
        .find(|l| l.contains("libtoxcore.so.2"))
        .unwrap_or_else(|| panic!("{name} does not link libtoxcore.so.2:\n{text}"));
    assert!(
        line.contains(&dir.display().to_string()),
        "{name}: libtoxcore.so.2 is not ours: {line}"
    );
}

#[test]
fn toxic_resolves_every_symbol_against_ours() {
    ldd_r_on_ours("toxic");
}

#[test]
fn qtox_resolves_every_symbol_against_ours() {
    ldd_r_on_ours("qtox");
}

#[test]
fn utox_resolves_every_symbol_against_ours() {
    ldd_r_on_ours("utox");
}

/// qTox on `lib` loads an unencrypted profile (written by c-toxcore through peer.c),
/// starts its core (it begins bootstrapping) and creates the profile's history database.
/// qTox allows one instance per user: it finds another through a shared-memory segment
/// keyed by the user, whatever HOME says, and then exits at once. Its tests take turns.
static ONE_QTOX_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn qtox_loads_a_profile(lib: Lib, port: u16) {
    let _turn = ONE_QTOX_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(qtox) = client("qtox") else { return };
    let Some(peers) = peers() else { return };
    let Some(x) = Xvfb::start(&format!("qtox-{}", lib.name())) else {
        return;
    };
    let tmp = TempDir::new("rustox-ffi", &format!("qtox-{}", lib.name()));
    let home = tmp.join("home");
    let tox_dir = home.join(".config/tox");
    std::fs::create_dir_all(&tox_dir).unwrap();
    let profile = tox_dir.join("rustox.tox");
    // The profile: a fresh identity with a name, saved by Debian's c-toxcore.
    let mut p = Peer::spawn(
        "profile writer",
        &peers.debian,
        &[
            "--port".into(),
            port.to_string(),
            "--savedata".into(),
            profile.display().to_string(),
            "--name".into(),
            "qtox on rustox".into(),
        ],
        false,
    );
    let id = p.field("ID", 1, Duration::from_secs(30)).unwrap();
    assert!(
        p.finish(Duration::from_secs(30)).success(),
        "{}",
        p.report()
    );

    let log = tmp.join("qtox.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let dir = lib_dir_for(lib, &tmp);
    let mut cmd = client_command(&qtox, &home, dir.as_deref(), &x.display);
    cmd.args(["-p", "rustox"])
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file);
    let mut q = Proc(cmd.spawn().expect("spawn qtox"));
    let db = tox_dir.join("rustox.db");
    let started = wait_until(Duration::from_secs(90), || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        (db.exists() && text.contains("Connecting to a bootstrap node"))
            || matches!(q.0.try_wait(), Ok(Some(_)))
    });
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let exited = q.0.try_wait().ok().flatten();
    assert!(
        started && exited.is_none(),
        "qTox on {lib:?}'s library did not start its core (exit: {exited:?}; history db: {}):\n{text}",
        db.exists()
    );
    assert_maps_lib(q.0.id(), lib, "qtox");
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Critical") && !l.contains("resolve hostname"))
        .collect();
    assert!(errors.is_empty(), "qTox logged errors: {errors:?}");
    println!(
        "qTox on {lib:?}'s library loaded profile {} and started its core",
        &id[..12]
    );
}

#[test]
fn qtox_loads_a_profile_on_ours() {
    qtox_loads_a_profile(Lib::Ours, 34600);
}

/// Validates the qTox test itself, on Debian's library as packaged.
#[test]
fn qtox_loads_a_profile_on_debian() {
    qtox_loads_a_profile(Lib::Debian, 34604);
}

/// uTox on `lib` creates a new profile (tox_save.tox, written with that library's
/// tox_get_savedata), which Debian's c-toxcore then loads.
fn utox_creates_a_profile(lib: Lib, port: u16) {
    let Some(utox) = client("utox") else { return };
    let Some(peers) = peers() else { return };
    let Some(x) = Xvfb::start(&format!("utox-{}", lib.name())) else {
        return;
    };
    let tmp = TempDir::new("rustox-ffi", &format!("utox-{}", lib.name()));
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let log = tmp.join("utox.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let dir = lib_dir_for(lib, &tmp);
    let mut cmd = client_command(&utox, &home, dir.as_deref(), &x.display);
    if running_as_root() {
        cmd.arg("--allow-root");
    }
    cmd.stdout(log_file.try_clone().unwrap()).stderr(log_file);
    let mut u = Proc(cmd.spawn().expect("spawn utox"));
    let save = home.join(".config/tox/tox_save.tox");
    let created = wait_until(Duration::from_secs(60), || {
        std::fs::metadata(&save)
            .map(|m| m.len() > 0)
            .unwrap_or(false)
            || matches!(u.0.try_wait(), Ok(Some(_)))
    });
    let exited = u.0.try_wait().ok().flatten();
    assert!(
        created && exited.is_none(),
        "uTox on {lib:?}'s library wrote no profile (exit {exited:?}):\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert_maps_lib(u.0.id(), lib, "utox");
    // Let uTox finish writing, then stop it.
    thread::sleep(Duration::from_secs(2));
    drop(u);

    // c-toxcore loads the profile our library wrote for uTox.
    let copy = tmp.join("utox-profile.tox");
    std::fs::copy(&save, &copy).unwrap();
    let size = std::fs::metadata(&copy).unwrap().len();
    let mut p = Peer::spawn(
        "profile reader",
        &peers.debian,
        &[
            "--port".into(),
            port.to_string(),
            "--savedata".into(),
            copy.display().to_string(),
            "--expect-friends".into(),
            "0".into(),
        ],
        false,
    );
    let loaded = p.wait_for("LOADED", Duration::from_secs(30));
    let id = p.field("ID", 1, Duration::from_secs(30));
    let st = p.finish(Duration::from_secs(30));
    assert!(
        loaded.is_ok() && id.is_ok() && st.success(),
        "c-toxcore could not load the {size}-byte profile uTox wrote on {lib:?}'s library\n{}",
        p.report()
    );
    println!(
        "uTox on {lib:?}'s library created a {size}-byte profile; c-toxcore loads it as {}",
        &id.unwrap()[..12]
    );
}

#[test]
fn utox_creates_a_profile_on_ours() {
    utox_creates_a_profile(Lib::Ours, 34602);
}

/// Validates the uTox test itself, on Debian's library as packaged.
#[test]
fn utox_creates_a_profile_on_debian() {
    utox_creates_a_profile(Lib::Debian, 34606);
}

/// toxic on `lib` and peer.c on Debian's c-toxcore: friend request from toxic, the peer's
/// name, a 1 MiB file from the peer, a message each way.
fn toxic_with_debian_peer(lib: Lib, port: u16) {
    let Some(toxic) = client("toxic") else { return };
    let Some(peers) = peers() else { return };
    let tmp = TempDir::new("rustox-ffi", &format!("toxic-{}", lib.name()));
    let Some(tmux) = Tmux::new(tmp.path(), lib.name()) else {
        return;
    };
    let started = Instant::now();
    let home = tmp.join("home");
    let downloads = tmp.join("downloads");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&downloads).unwrap();
    let file = tmp.join("for-toxic.bin");
    let data = test_data(1 << 20, 7);
    std::fs::write(&file, &data).unwrap();
    check_ports_free(&[port]);

    // The peer: accepts toxic's request, offers the file, waits for toxic's message.
    let mut peer = Peer::spawn(
        "peer",
        &peers.debian,
        &[
            "--port",
            &port.to_string(),
            "--accept-requests",
            "--request-message",
            "rustox-interop",
            "--name",
            "rustox-peer",
            "--send-file",
            &file.display().to_string(),
            "--expect-message",
            "hello from toxic",
            "--timeout",
            "180",
        ]
        .map(String::from),
        false,
    );
    let wait = Duration::from_secs(60);
    let peer_id = peer.field("ID", 1, wait).unwrap();
    let peer_dht = peer.field("DHT", 1, wait).unwrap();
    let fail = |what: String, tmux: &Tmux, peer: &Peer| -> String {
        format!(
            "toxic on {lib:?}'s library: {what}\n---- toxic's pane:\n{}\n---- toxic's stderr:\n{}\n{}",
            tmux.capture(),
            std::fs::read_to_string(tmp.join("toxic.err")).unwrap_or_default(),
            peer.report()
        )
    };

    start_toxic(&tmux, lib, &tmp, &home, &toxic, &downloads, port, &peer_dht);
    // First run: no encryption for the new profile.
    tmux.wait_for("Would you like to encrypt it", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("[Home]", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    assert_maps_lib(tmux.pane_pid(), lib, "toxic");

    // Its Tox ID, as toxic shows it.
    tmux.line("/myid");
    let pane = tmux
        .wait_for("/myid", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    let find_id = |pane: &str| {
        pane.split_whitespace()
            .find(|w| w.len() == 76 && w.chars().all(|c| c.is_ascii_hexdigit()))
            .map(str::to_string)
    };
    let mut toxic_id = find_id(&pane);
    if toxic_id.is_none() {
        wait_until(wait, || {
            toxic_id = find_id(&tmux.capture());
            toxic_id.is_some()
        });
    }
    let toxic_id = toxic_id.unwrap_or_else(|| panic!("{}", fail("no Tox ID".into(), &tmux, &peer)));

    // Friend request from toxic (its parser wants the message in quotes, without spaces).
    tmux.line(&format!("/add {peer_id} \"rustox-interop\""));
    let req = peer
        .field("FRIEND_REQUEST", 1, Duration::from_secs(90))
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    assert_eq!(req, toxic_id[..64], "the request's key is not toxic's");
    peer.wait_for("FRIEND_ONLINE", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));

    // The peer's file offer opens a chat window; move to it (Ctrl+P: next window).
    let mut in_chat = false;
    for _ in 0..6 {
        if tmux.wait_for("/savefile 0", Duration::from_secs(5)).is_ok() {
            in_chat = true;
            break;
        }
        tmux.keys(&["C-p"]);
    }
    if !in_chat {
        panic!(
            "{}",
            fail("no chat window with the file offer".into(), &tmux, &peer)
        );
    }
    tmux.wait_for("rustox-peer", wait)
        .unwrap_or_else(|e| panic!("{}", fail(format!("the peer's name: {e}"), &tmux, &peer)));
    tmux.line("/savefile 0");
    tmux.wait_for("successfully received", Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    let got = std::fs::read(downloads.join("for-toxic.bin")).unwrap_or_default();
    assert!(
        got == data,
        "{}",
        fail(
            format!(
                "the downloaded file differs ({} bytes, expected {})",
                got.len(),
                data.len()
            ),
            &tmux,
            &peer
        )
    );

    // A message each way.
    tmux.line("hello from toxic");
    peer.send("MESSAGE hello from the peer");
    tmux.wait_for("hello from the peer", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    peer.wait_for("DONE", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    let st = peer.finish(Duration::from_secs(30));
    assert!(
        st.success(),
        "{}",
        fail(format!("peer exit {st}"), &tmux, &peer)
    );
    // Still running on the intended library, then quit as a user would.
    assert_maps_lib(tmux.pane_pid(), lib, "toxic");
    tmux.line("/exit");
    let _ = wait_until(Duration::from_secs(10), || {
        home.join("profile.tox").exists()
    });
    println!(
        "toxic on {lib:?}'s library: request, file (1 MiB), messages both ways in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Validates the toxic test itself: toxic on Debian's library, as packaged.
#[test]
fn toxic_on_debian_with_debian_peer() {
    toxic_with_debian_peer(Lib::Debian, 34610);
}

#[test]
fn toxic_on_ours_with_debian_peer() {
    toxic_with_debian_peer(Lib::Ours, 34612);
}
