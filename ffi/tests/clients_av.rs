//! Real Tox clients on our libtoxcore.so with calls, each test also run on Debian's library
//! to validate the test itself. The other end is `av_peer.c` on Debian's c-toxcore 0.2.18:
//! it accepts friend requests, answers calls with audio, sends a tone and reports the
//! audio frames it gets.
//!
//! * toxic (ncurses, driven in tmux) adds the peer, opens its chat window and places a
//!   call with `/call`; the peer must get the call, answer it, and receive toxic's audio,
//!   and toxic must show the call as started.
//!
//! The machine has no sound card. ALSA's `null` plugin stands in for one (a `.asoundrc`
//! in the client's HOME makes it the default device: playback discards, capture reads
//! silence), and OpenAL Soft is told to use ALSA (`.alsoftrc`), so toxic opens its capture
//! and playback devices and sends real (silent) Opus frames.
//!
//! qTox is not driven into a call here: qTox 1.17.6 places calls only from its window (no
//! command line or IPC for it, and no X automation tool is installed), and it cannot be
//! pointed at a local peer (it bootstraps only from its built-in `:/conf/nodes.json` or the
//! nodes it downloads; LAN discovery did not reach it in this environment). What qTox does
//! with calls on our library at start-up (`toxav_new`, its A/V thread's `toxav_iterate`) is
//! exercised by clients.rs's qTox test, which starts its core on our library.
//!
//! Every check that the intended library is in use reads the client's /proc/<pid>/maps.
//! Missing clients, tmux or a C toolchain skip a test, or fail it when `CI` is set.

mod common;

use common::clients::*;
use common::*;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// ALSA's default PCM as the `null` plugin (alsa-lib's pcm_null: writes are dropped,
/// reads return silence), for a machine without a sound card.
const ASOUNDRC: &str = "pcm.!default {\n  type null\n}\nctl.!default {\n  type hw\n  card 0\n}\n";
/// OpenAL Soft's configuration: its ALSA backend only (no PulseAudio server to wait for).
const ALSOFTRC: &str = "[general]\ndrivers=alsa\n";

/// Writes the sound configuration into a client's HOME.
fn null_sound(home: &Path) {
    std::fs::write(home.join(".asoundrc"), ASOUNDRC).unwrap();
    std::fs::write(home.join(".alsoftrc"), ALSOFTRC).unwrap();
}

/// av_peer.c built against Debian's library, once per test process.
fn av_peer() -> Option<CProgram> {
    static BUILT: Mutex<Option<CProgram>> = Mutex::new(None);
    if let Err(reason) = c_toolchain() {
        skip_or_fail(&reason);
        return None;
    }
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.as_ref() {
        return Some(p.clone());
    }
    let dir = std::env::temp_dir().join(format!("rustox-ffi-av-peer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = compile_c(
        &c_dir().join("av_peer.c"),
        &dir,
        "av_peer",
        Lib::Debian,
        &["-lm"],
    );
    *built = Some(prog.clone());
    Some(prog)
}

/// toxic on `lib` calls the c-toxcore peer with `/call`; the peer answers and receives
/// toxic's audio.
fn toxic_places_a_call(lib: Lib) {
    let Some(toxic) = client("toxic") else { return };
    let Some(prog) = av_peer() else { return };
    let tmp = TempDir::new("rustox-ffi", &format!("toxic-av-{}", lib.name()));
    let Some(tmux) = Tmux::new(tmp.path(), &format!("av-{}", lib.name())) else {
        return;
    };
    let started = Instant::now();
    let home = tmp.join("home");
    let downloads = tmp.join("downloads");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&downloads).unwrap();
    null_sound(&home);
    let port = rustox_testkit::net::free_udp_port();
    let peer = Peer::spawn(
        "av peer",
        &prog,
        &[
            "--port",
            &port.to_string(),
            "--name",
            "av-peer",
            "--timeout",
            "240",
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
    tmux.wait_for("Would you like to encrypt it", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("[Home]", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    assert_maps_lib(tmux.pane_pid(), lib, "toxic");

    tmux.line(&format!("/add {peer_id} \"rustox-calls\""));
    peer.wait_for("FRIEND_REQUEST", Duration::from_secs(90))
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    peer.wait_for("FRIEND_ONLINE", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));

    // The peer's greeting opens its chat window; move to it (Ctrl+P: next window).
    let mut in_chat = false;
    for _ in 0..6 {
        if tmux
            .wait_for("hello from the av peer", Duration::from_secs(5))
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
    tmux.line("/call");
    let call = peer
        .wait_for("CALL ", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    assert_eq!(
        call,
        "CALL 0 audio=1 video=0",
        "{}",
        fail("toxic's call".into(), &tmux, &peer)
    );
    let answer = peer.wait_for("ANSWER ", wait).unwrap();
    assert_eq!(
        answer,
        "ANSWER 1 0",
        "{}",
        fail("the peer's answer".into(), &tmux, &peer)
    );
    tmux.wait_for("Call started", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    let frames = peer
        .wait_for("AUDIO_FRAMES 50 ", wait)
        .unwrap_or_else(|e| panic!("{}", fail(e, &tmux, &peer)));
    assert!(
        frames.ends_with("rate=48000"),
        "{}",
        fail(format!("toxic's audio: {frames}"), &tmux, &peer)
    );
    assert_maps_lib(tmux.pane_pid(), lib, "toxic");
    tmux.line("/hangup");
    peer.wait_for("STATE 0 2", wait)
        .unwrap_or_else(|e| panic!("{}", fail(format!("the hang-up: {e}"), &tmux, &peer)));
    tmux.line("/exit");
    println!(
        "toxic on {lib:?}'s library: call placed, answered, 50 audio frames received, hung up in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Validates the toxic test itself: toxic on Debian's library, as packaged.
#[test]
fn toxic_on_debian_places_a_call() {
    toxic_places_a_call(Lib::Debian);
}

#[test]
fn toxic_on_ours_places_a_call() {
    toxic_places_a_call(Lib::Ours);
}
