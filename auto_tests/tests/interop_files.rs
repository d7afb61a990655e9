//! Files across implementations: a 16 MiB file from a rustox node to a c-toxcore
//! 0.2.18 client and one the other way, each found by Tox ID through a rustox bootstrap node
//! and checked byte for byte against its SHA-256 file id on arrival.
//!
//! c-toxcore's side is the project's file peer (`tools/toxcore_file_peer.c`); rustox's is a
//! whole `Node` on the tokio driver (`rustox_auto_tests::live`). With `CI` set, a missing
//! c-toxcore fails these tests; otherwise they return with a notice.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{RngCore, SeedableRng};
use rustox_auto_tests::ctoxcore::friend::PeerEvent;
use rustox_auto_tests::ctoxcore::{
    file_peer_or_skip, BootstrapSpec, CToxcoreError, ContentCheck, FileIdChoice, PeerOptions,
    RecvOptions, RecvPeer, SendOptions, SendPeer,
};
use rustox_auto_tests::live::{rustox_bootstrap, RustoxOptions, RustoxPeer};

const SIZE: u64 = 16 << 20;
/// Finding the friend (~10 s for c-toxcore) plus 16 MiB on loopback, with room for CI.
const LIMIT: Duration = Duration::from_secs(90);

fn c_peer(boot: &BootstrapSpec, port: u16) -> PeerOptions {
    PeerOptions {
        port,
        bootstrap: vec![boot.clone()],
        timeout: LIMIT,
        ..PeerOptions::default()
    }
}

fn content(seed: u64) -> Arc<Vec<u8>> {
    let mut data = vec![0u8; SIZE as usize];
    rand_chacha::ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut data);
    Arc::new(data)
}

#[test]
fn sixteen_mib_from_rustox_arrive_whole_at_c_toxcore() {
    let Some(bin) = file_peer_or_skip() else {
        return;
    };
    let runner = rustox_bootstrap(36901).expect("start the rustox bootstrap node");
    let boot = BootstrapSpec::at(runner.local_addr(), &runner.public_key());
    let mut c = RecvPeer::start(
        &bin,
        &RecvOptions {
            peer: c_peer(&boot, 36902),
            expect_size: Some(SIZE),
            check: ContentCheck::FileId,
            ..RecvOptions::default()
        },
    )
    .expect("start the c-toxcore receiver");
    let c_id = c.ready().address.parse().expect("the receiver's Tox ID");
    let r = RustoxPeer::start(RustoxOptions {
        port: 36903,
        bootstrap: vec![(runner.local_addr(), runner.public_key())],
        request: Some(c_id),
        send_file: Some(content(1)),
        ..RustoxOptions::default()
    })
    .expect("start the rustox node");
    let summary = c.wait_summary().expect("the c-toxcore receiver's summary");
    assert_eq!(summary.bytes, SIZE);
    assert!(summary.verified, "c-toxcore's check failed: {summary:?}");
    assert!(summary.in_order, "{summary:?}");
    assert_eq!(summary.check, "file-id");
    eprintln!(
        "rustox → c-toxcore: friend online after {:?} s, {:?} Mbit/s",
        summary.time_to_friend_online, summary.goodput_mbit
    );
    drop(r);
}

#[test]
fn sixteen_mib_from_c_toxcore_arrive_whole_at_rustox() {
    let Some(bin) = file_peer_or_skip() else {
        return;
    };
    let runner = rustox_bootstrap(36911).expect("start the rustox bootstrap node");
    let boot = BootstrapSpec::at(runner.local_addr(), &runner.public_key());
    let r = RustoxPeer::start(RustoxOptions {
        port: 36912,
        bootstrap: vec![(runner.local_addr(), runner.public_key())],
        accept: true,
        receive_files: true,
        ..RustoxOptions::default()
    })
    .expect("start the rustox node");
    let sender = SendPeer::start(
        &bin,
        &SendOptions {
            peer: PeerOptions {
                friend: Some(r.tox_id.to_string()),
                ..c_peer(&boot, 36913)
            },
            size: SIZE,
            file_id: FileIdChoice::Sha256,
            allow_tcp: false,
        },
    );
    let mut sender = match sender {
        Ok(s) => s,
        Err(e @ CToxcoreError::CompilerMissing { .. }) => panic!("{e}"),
        Err(e) => panic!("start the c-toxcore sender: {e}"),
    };
    let end = Instant::now() + LIMIT;
    while Instant::now() < end
        && !r
            .log
            .has(|e| matches!(e, PeerEvent::FileReceived(..) | PeerEvent::FileFailed(..)))
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        r.log
            .has(|e| matches!(e, PeerEvent::FileReceived(_, n, true) if *n == SIZE)),
        "rustox did not receive the file verified: {:?}",
        r.log.events()
    );
    let summary = sender
        .wait_summary()
        .expect("the c-toxcore sender's summary");
    assert_eq!(summary.bytes, SIZE);
    eprintln!(
        "c-toxcore → rustox: friend online after {:?} s, {:?} Mbit/s",
        summary.time_to_friend_online, summary.goodput_mbit
    );
}

/// An avatar (kind 1, id = SHA-256 of the image) each way: c-toxcore's file peer offers and
/// accepts only avatars with `--avatar`.
#[test]
fn avatars_cross_both_ways_with_their_kind_and_hash() {
    let Some(bin) = file_peer_or_skip() else {
        return;
    };
    let runner = rustox_bootstrap(36921).expect("start the rustox bootstrap node");
    let boot = BootstrapSpec::at(runner.local_addr(), &runner.public_key());
    const AVATAR: u64 = 64 << 10;
    // rustox → c-toxcore.
    let mut c = RecvPeer::start(
        &bin,
        &RecvOptions {
            peer: PeerOptions {
                avatar: true,
                ..c_peer(&boot, 36922)
            },
            expect_size: Some(AVATAR),
            check: ContentCheck::FileId,
            ..RecvOptions::default()
        },
    )
    .expect("start the c-toxcore receiver");
    let c_id = c.ready().address.parse().expect("Tox ID");
    let mut image = vec![0u8; AVATAR as usize];
    rand_chacha::ChaCha8Rng::seed_from_u64(7).fill_bytes(&mut image);
    let r = RustoxPeer::start(RustoxOptions {
        port: 36923,
        bootstrap: vec![(runner.local_addr(), runner.public_key())],
        request: Some(c_id),
        send_file: Some(Arc::new(image)),
        send_kind: Some(rustox_file_transfer::FileKind::Avatar),
        ..RustoxOptions::default()
    })
    .expect("start the rustox node");
    let summary = c.wait_summary().expect("the c-toxcore receiver's summary");
    assert_eq!(summary.bytes, AVATAR);
    assert!(summary.verified, "{summary:?}");
    drop(r);
    // c-toxcore → rustox.
    let r = RustoxPeer::start(RustoxOptions {
        port: 36924,
        bootstrap: vec![(runner.local_addr(), runner.public_key())],
        accept: true,
        receive_files: true,
        ..RustoxOptions::default()
    })
    .expect("start the rustox node");
    let mut sender = SendPeer::start(
        &bin,
        &SendOptions {
            peer: PeerOptions {
                friend: Some(r.tox_id.to_string()),
                avatar: true,
                ..c_peer(&boot, 36925)
            },
            size: AVATAR,
            file_id: FileIdChoice::Sha256,
            allow_tcp: false,
        },
    )
    .expect("start the c-toxcore sender");
    let end = Instant::now() + LIMIT;
    while Instant::now() < end && !r.log.has(|e| matches!(e, PeerEvent::FileReceived(..))) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        r.log.has(|e| matches!(e, PeerEvent::FileOffered(_, 1))),
        "offered as an avatar: {:?}",
        r.log.events()
    );
    assert!(
        r.log
            .has(|e| matches!(e, PeerEvent::FileReceived(_, n, true) if *n == AVATAR)),
        "{:?}",
        r.log.events()
    );
    let _ = sender.wait_summary();
}
