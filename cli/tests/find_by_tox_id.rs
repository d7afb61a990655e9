//! The three commands a person uses to reach someone by Tox ID, as separate processes on
//! loopback: `rustox bootstrap`, `rustox recv --bootstrap` (prints its Tox ID) and
//! `rustox send --to TOXID --bootstrap`. The sender's friend request goes through the onion,
//! the receiver accepts it, the file arrives byte for byte, and the sender reports how long
//! the friend took to come online.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{
    line_after, run_with_limit, rustox, start_bootstrap, succeeded, write_pattern, Receiver,
    Scratch,
};
use sha2::{Digest, Sha256};

const SIZE: usize = 1 << 20;
/// Fixed, so the receiver and sender can be told where the bootstrap node listens; chosen
/// outside Tox's default range (33445–33545) and the interop tests' ports.
const BOOTSTRAP_PORT: u16 = 36950;

#[test]
fn send_finds_recv_by_tox_id_through_a_bootstrap_node() {
    let dir = Scratch::new("tox-id");
    let original = write_pattern(&dir.path("payload.bin"), SIZE, 0x70c1d);
    let expected_sha = hex::encode(Sha256::digest(&original));

    let (_boot, boot_key) =
        start_bootstrap(BOOTSTRAP_PORT, &dir.path("boot.keys"), &[], Stdio::null());
    assert_eq!(
        boot_key.len(),
        64,
        "the bootstrap node prints its key: {boot_key:?}"
    );
    let node = format!("127.0.0.1:{BOOTSTRAP_PORT}:{boot_key}");

    let inbox = dir.path("inbox");
    let mut recv = Receiver::start_with(
        &inbox,
        &dir.path("recv.key"),
        &["--bootstrap", &node],
        Stdio::null(),
    );
    let tox_id = line_after(&mut recv.stdout, "tox id ");
    assert_eq!(tox_id.len(), 76, "a Tox ID is 76 hex digits: {tox_id:?}");

    let send = run_with_limit(
        rustox()
            .args(["send", "--to", &tox_id, "--bootstrap", &node])
            .args(["--find-timeout", "60"])
            .arg(dir.path("payload.bin")),
        Duration::from_secs(120),
    );
    let sent = succeeded(&send, "send");
    assert_eq!(sent["bytes"], SIZE as u64);
    assert_eq!(sent["sha256"], expected_sha.as_str());
    let online = sent["friend_online_seconds"]
        .as_f64()
        .expect("the summary says when the friend came online");
    assert!(online > 0.0 && online < 60.0, "online after {online} s");
    eprintln!("friend online after {online:.2} s");

    let status = common::wait_with_limit(&mut recv.child, Duration::from_secs(30));
    assert!(status.success(), "recv failed");
    let copy = std::fs::read(inbox.join("payload.bin")).expect("received file exists");
    assert!(copy == original, "received file differs from the original");
}
