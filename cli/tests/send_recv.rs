//! `rustox send` → `rustox recv` as two processes on loopback: the file arrives byte for
//! byte, and both print a JSON summary with the same SHA-256.

mod common;

use std::time::Duration;

use common::{last_json, run_with_limit, stderr_of, succeeded, write_pattern, Receiver, Scratch};
use sha2::{Digest, Sha256};

const SIZE: usize = 8 << 20;

/// The controller these plumbing tests use: the default, BBR. Its window floor is 16
/// packets, twice the receiver's 8 packets per request, so on loopback it never waits
/// with too few packets in flight to draw a request (see `transport_loopback`).
const CONTROLLER: &str = "bbr";

#[test]
fn send_to_recv_delivers_8_mib_byte_exact_with_matching_summaries() {
    let dir = Scratch::new("send-recv");
    let original = write_pattern(&dir.path("payload.bin"), SIZE, 0x5eed);
    let expected_sha = hex::encode(Sha256::digest(&original));
    let inbox = dir.path("inbox");
    let receiver = Receiver::start(&inbox, &dir.path("recv.key"));
    assert_eq!(receiver.key.len(), 64, "public key is 64 hex digits");

    let send = run_with_limit(
        receiver
            .send()
            .args(["--controller", CONTROLLER])
            .arg(dir.path("payload.bin")),
        Duration::from_secs(120),
    );
    let sent = succeeded(&send, "send");
    assert_eq!(sent["bytes"], SIZE as u64);
    assert_eq!(sent["sha256"], expected_sha.as_str());
    assert!(sent["goodput_mbit"].as_f64().is_some_and(|g| g > 0.0));
    assert!(
        sent["rtt_ms"].as_f64().is_some(),
        "the sender has RTT samples"
    );
    assert!(sent["resent_packets"].is_u64());

    let (status, stdout, stderr) = receiver.finish(Duration::from_secs(30));
    assert!(status.success(), "recv failed: {stderr}");
    let received = last_json(&stdout);
    assert_eq!(received["bytes"], SIZE as u64);
    assert_eq!(received["sha256"], expected_sha.as_str());
    // A rustox sender's file id is the content's SHA-256: the receiver verified it.
    assert_eq!(received["file_id"], expected_sha.as_str());
    assert_eq!(received["verified"], "sha256-file-id");

    let copy = std::fs::read(inbox.join("payload.bin")).expect("received file exists");
    assert_eq!(copy.len(), original.len());
    assert!(copy == original, "received file differs from the original");
}

#[test]
fn recv_keeps_its_public_key_across_restarts() {
    let dir = Scratch::new("key-restart");
    let key_file = dir.path("recv.key");
    let first = Receiver::start(&dir.path("in"), &key_file).key.clone();
    let second = Receiver::start(&dir.path("in"), &key_file).key.clone();
    assert_eq!(first, second);
}

#[test]
fn a_second_file_of_the_same_name_does_not_overwrite_the_first() {
    let dir = Scratch::new("no-overwrite");
    let inbox = dir.path("inbox");
    std::fs::create_dir_all(&inbox).unwrap();
    std::fs::write(inbox.join("small.bin"), b"already here").unwrap();
    let original = write_pattern(&dir.path("small.bin"), 100_000, 7);
    let receiver = Receiver::start(&inbox, &dir.path("recv.key"));
    let send = run_with_limit(
        receiver
            .send()
            .args(["--controller", CONTROLLER])
            .arg(dir.path("small.bin")),
        Duration::from_secs(60),
    );
    assert!(send.status.success(), "{}", stderr_of(&send));
    let (status, _, stderr) = receiver.finish(Duration::from_secs(30));
    assert!(status.success(), "{stderr}");
    assert_eq!(
        std::fs::read(inbox.join("small.bin")).unwrap(),
        b"already here"
    );
    assert_eq!(std::fs::read(inbox.join("small.bin.1")).unwrap(), original);
}

#[test]
fn default_controller_moves_8_mib_over_loopback_within_20_s() {
    let dir = Scratch::new("bbr-loopback");
    write_pattern(&dir.path("payload.bin"), SIZE, 11);
    let receiver = Receiver::start(&dir.path("inbox"), &dir.path("recv.key"));
    let send = run_with_limit(
        receiver
            .send()
            .args(["--stall-timeout", "5"])
            .arg(dir.path("payload.bin")),
        Duration::from_secs(20),
    );
    assert!(send.status.success(), "{}", stderr_of(&send));
}

#[test]
fn segmentation_offload_path_delivers_byte_exact() {
    let dir = Scratch::new("gso");
    let original = write_pattern(&dir.path("payload.bin"), SIZE, 0x950);
    let inbox = dir.path("inbox");
    let receiver = Receiver::start(&inbox, &dir.path("recv.key"));
    let send = run_with_limit(
        receiver
            .send()
            .env("RUSTOX_GSO", "1")
            .args(["--controller", CONTROLLER])
            .arg(dir.path("payload.bin")),
        Duration::from_secs(120),
    );
    assert!(send.status.success(), "{}", stderr_of(&send));
    let (status, _, stderr) = receiver.finish(Duration::from_secs(30));
    assert!(status.success(), "{stderr}");
    assert!(std::fs::read(inbox.join("payload.bin")).unwrap() == original);
}
