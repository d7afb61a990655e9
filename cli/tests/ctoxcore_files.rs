//! `rustox recv` and `rustox send` with a c-toxcore 0.2.18 client, as processes on
//! loopback, each found by Tox ID through a rustox bootstrap node:
//! * a c-toxcore client sends a file with c-toxcore's default file id (`tox_file_send` with
//!   NULL: random), as qTox, toxic and uTox do. `rustox recv --once` keeps it, prints its
//!   JSON line with the SHA-256 of what arrived and `"verified": "unverified (opaque file
//!   id)"`, and exits 0; the file on disk equals the sender's byte for byte;
//! * `rustox send` sends a file to a c-toxcore client, which checks every byte against the
//!   content and writes the file, compared byte for byte here.
//!
//! c-toxcore's side is the project's file peer (auto_tests/tools/toxcore_file_peer.c). With
//! `CI` set, a missing c-toxcore fails these tests; otherwise they return with a notice.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{
    last_json, line_after, run_with_limit, rustox, stderr_of, summary_of, Receiver, Scratch,
};
use rustox_auto_tests::ctoxcore::peer::pattern;
use rustox_auto_tests::ctoxcore::{
    file_peer_or_skip, BootstrapSpec, ContentCheck, FileIdChoice, PeerOptions, RecvOptions,
    RecvPeer, SendOptions, SendPeer,
};
use rustox_auto_tests::live::rustox_bootstrap;
use sha2::{Digest, Sha256};

const SIZE: usize = 1 << 20;
/// Finding the friend (~10 s for c-toxcore) and 1 MiB on loopback, with room for CI.
const LIMIT: Duration = Duration::from_secs(60);

fn c_peer(boot: &BootstrapSpec, port: u16, seed: u64) -> PeerOptions {
    PeerOptions {
        port,
        bootstrap: vec![boot.clone()],
        seed,
        timeout: LIMIT,
        ..PeerOptions::default()
    }
}

#[test]
fn recv_keeps_a_c_toxcore_file_with_a_random_id_and_says_it_is_unverified() {
    let Some(bin) = file_peer_or_skip() else {
        return;
    };
    let runner = rustox_bootstrap(36961).expect("start the rustox bootstrap node");
    let boot = BootstrapSpec::at(runner.local_addr(), &runner.public_key());
    let node = boot.to_string();
    let dir = Scratch::new("ctox-recv");
    let inbox = dir.path("inbox");
    let mut recv = Receiver::start_with(
        &inbox,
        &dir.path("recv.key"),
        &["--bootstrap", &node],
        Stdio::piped(),
    );
    let tox_id = line_after(&mut recv.stdout, "tox id ");
    let seed = 0x5eed;
    let mut sender = SendPeer::start(
        &bin,
        &SendOptions {
            peer: PeerOptions {
                friend: Some(tox_id),
                ..c_peer(&boot, 36963, seed)
            },
            size: SIZE as u64,
            file_id: FileIdChoice::Random,
            allow_tcp: false,
        },
    )
    .expect("start the c-toxcore sender");
    let (status, rest, err) = recv.finish(LIMIT + Duration::from_secs(30));
    assert!(status.success(), "rustox recv failed: {err}");
    let sent = sender
        .wait_summary()
        .expect("the c-toxcore sender's summary");
    assert_eq!(sent.bytes, SIZE as u64);

    let content = pattern(seed, SIZE);
    let sha256 = hex::encode(Sha256::digest(&content));
    let summary = last_json(&rest);
    assert_eq!(summary["bytes"], SIZE as u64, "{summary}");
    assert_eq!(summary["sha256"], sha256.as_str(), "{summary}");
    assert_eq!(
        summary["verified"], "unverified (opaque file id)",
        "{summary}"
    );
    let file_id = summary["file_id"].as_str().expect("the file id");
    assert_eq!(file_id.len(), 64);
    assert_ne!(file_id, sha256, "c-toxcore's id is random, not the hash");
    let name = std::fs::read_dir(&inbox)
        .expect("the inbox")
        .next()
        .expect("a received file")
        .expect("a directory entry")
        .path();
    let copy = std::fs::read(&name).expect("read the received file");
    assert!(
        copy == content,
        "the received file differs from the sender's"
    );
}

#[test]
fn send_delivers_a_file_to_a_c_toxcore_client_byte_exact() {
    let Some(bin) = file_peer_or_skip() else {
        return;
    };
    let runner = rustox_bootstrap(36971).expect("start the rustox bootstrap node");
    let boot = BootstrapSpec::at(runner.local_addr(), &runner.public_key());
    let node = boot.to_string();
    let dir = Scratch::new("ctox-send");
    let seed = 0xf11e;
    let content = pattern(seed, SIZE);
    std::fs::write(dir.path("payload.bin"), &content).expect("write the file");
    let output = dir.path("at-c-toxcore.bin");
    let mut c = RecvPeer::start(
        &bin,
        &RecvOptions {
            peer: c_peer(&boot, 36972, seed),
            expect_size: Some(SIZE as u64),
            check: ContentCheck::Pattern,
            output: Some(output.clone()),
            ..RecvOptions::default()
        },
    )
    .expect("start the c-toxcore receiver");
    let c_id = c.ready().address.clone();
    let send = run_with_limit(
        rustox()
            .args(["send", "--to", &c_id, "--bootstrap", &node])
            .args(["--find-timeout", "60"])
            .arg(dir.path("payload.bin")),
        LIMIT + Duration::from_secs(30),
    );
    assert!(
        send.status.success(),
        "rustox send failed: {}",
        stderr_of(&send)
    );
    let sent = summary_of(&send);
    assert_eq!(sent["bytes"], SIZE as u64);
    let summary = c.wait_summary().expect("the c-toxcore receiver's summary");
    assert_eq!(summary.bytes, SIZE as u64);
    assert!(summary.verified && summary.in_order, "{summary:?}");
    assert_eq!(summary.check, "pattern");
    let copy = std::fs::read(&output).expect("read c-toxcore's file");
    assert!(
        copy == content,
        "c-toxcore's file differs from the original"
    );
}
