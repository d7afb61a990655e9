//! The call signalling against c-toxcore 0.2.18's own msi.c (Debian's libtoxcore.a): a C
//! program (`tests/c/msi_ctoxcore.c`) runs msi.c through a fixed script of commands and
//! incoming packets and prints every packet 69 it sends and every callback it invokes;
//! rustox's `Msi` runs the same script here, and the two transcripts must agree byte for
//! byte (docs/protocol.md §13.1). Skipped, with a message, when `cc` or `libtoxcore.a` is
//! missing, except under CI (`CI` set), where that is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use rustox_core::av::msi::{Msi, MsiEvent};
use rustox_testkit::c::Cc;
use rustox_testkit::ci::skip_or_fail;

const LIBTOXCORE: &str = "/usr/lib/x86_64-linux-gnu/libtoxcore.a";

fn c_transcript() -> Option<String> {
    if !Path::new(LIBTOXCORE).exists() {
        skip_or_fail(format!(
            "{LIBTOXCORE} not found (apt-get install libtoxcore-dev)"
        ));
        return None;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("msi_ctoxcore");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/msi_ctoxcore.c");
    if let Err(e) = Cc::new("cc")
        .arg("-O1")
        .arg(&src)
        .args([LIBTOXCORE, "-lpthread"])
        .build(&out)
    {
        skip_or_fail(format!("cannot build the msi.c program: {e}"));
        return None;
    }
    let output = Command::new(&out).output().expect("run the msi.c program");
    assert!(output.status.success(), "{output:?}");
    Some(String::from_utf8(output.stdout).expect("ASCII transcript"))
}

/// Our transcript of the script in `msi_ctoxcore.c`, in its line format.
struct Script {
    msi: Msi,
    lines: Vec<String>,
}

impl Script {
    fn flush(&mut self) {
        while let Some((friend, packet)) = self.msi.poll_send() {
            let hex: String = packet.iter().map(|b| format!("{b:02x}")).collect();
            self.lines.push(format!("send {friend} {hex}"));
        }
        while let Some(event) = self.msi.poll_event() {
            self.lines.push(match event {
                MsiEvent::Invite { friend, caps } => format!("invite {friend} {caps}"),
                MsiEvent::Start { friend, caps } => format!("start {friend} {caps}"),
                MsiEvent::End { friend } => format!("end {friend}"),
                MsiEvent::Error { friend, code } => format!("error {friend} {}", code.to_u8()),
                MsiEvent::PeerTimeout { friend } => format!("timeout {friend}"),
                MsiEvent::Capabilities { friend, caps } => format!("caps {friend} {caps}"),
            });
        }
    }

    fn cmd<E>(&mut self, name: &str, friend: u32, result: Result<(), E>) {
        self.flush();
        let rc = if result.is_ok() { 0 } else { -1 };
        self.lines.push(format!("cmd {name} {friend} {rc}"));
    }

    /// A packet 69 given without its id, as the C side feeds it.
    fn feed(&mut self, friend: u32, body: &[u8]) {
        self.lines.push(format!("recv {friend}"));
        let mut packet = vec![69];
        packet.extend_from_slice(body);
        self.msi.handle_packet(friend, &packet);
        self.flush();
    }

    fn offline(&mut self, friend: u32) {
        self.lines.push(format!("offline {friend}"));
        self.msi.handle_friend_offline(friend);
        self.flush();
    }
}

fn rust_transcript() -> Vec<String> {
    let mut s = Script {
        msi: Msi::new(),
        lines: Vec::new(),
    };
    let r = s.msi.invite(0, 20);
    s.cmd("invite", 0, r);
    s.feed(0, &[1, 1, 1, 3, 1, 60, 0]);
    s.feed(0, &[1, 1, 1, 3, 1, 60, 0]);
    s.feed(0, &[1, 1, 1, 3, 1, 12, 0]);
    let r = s.msi.change_capabilities(0, 4);
    s.cmd("caps", 0, r);
    let r = s.msi.hangup(0);
    s.cmd("hangup", 0, r);
    s.feed(0, &[1, 1, 1, 3, 1, 60, 0]);
    s.feed(0, &[9, 9, 9, 0]);
    s.feed(0, &[1, 1, 3, 0]);
    s.feed(0, &[3, 1, 4, 0]);
    s.feed(0, &[1, 1, 2]);
    s.feed(0, &[1, 2, 0, 0, 0]);
    s.feed(1, &[1, 1, 0, 3, 1, 60, 0]);
    s.feed(1, &[1, 1, 0, 3, 1, 60, 0]);
    s.feed(2, &[1, 1, 0, 0]);
    s.feed(3, &[3, 1, 52, 1, 1, 0, 0]);
    let r = s.msi.answer(3, 36);
    s.cmd("answer", 3, r);
    s.feed(3, &[1, 1, 0, 3, 1, 52, 0]);
    s.feed(3, &[1, 1, 2, 0]);
    s.feed(4, &[1, 1, 0, 3, 1, 20, 0]);
    let r = s.msi.answer(4, 20);
    s.cmd("answer", 4, r);
    s.feed(4, &[1, 1, 2, 2, 1, 6, 0]);
    s.feed(5, &[1, 1, 0, 3, 1, 20, 0]);
    s.offline(5);
    let r = s.msi.invite(6, 60);
    s.cmd("invite", 6, r);
    s.offline(6);
    s.feed(7, &[1, 1, 0, 3, 1, 4, 3, 1, 8, 0, 5, 5, 0]);
    let r = s.msi.hangup(7);
    s.cmd("hangup", 7, r);
    s.lines
}

#[test]
fn msi_transcript_matches_c_toxcore() {
    let Some(c) = c_transcript() else { return };
    let c: Vec<&str> = c.lines().collect();
    let mut ours = rust_transcript();
    // The one documented difference (msi/state.rs): when msi.c ends a call over the
    // friend's bad message it tells no one; rustox reports the error it sent.
    let extra = ours
        .iter()
        .position(|l| l == "error 1 3")
        .expect("rustox reports the call it ended");
    assert_eq!(ours[extra - 1], "send 1 4501010202010300");
    ours.remove(extra);
    assert_eq!(ours, c);
}
