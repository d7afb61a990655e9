//! c-toxcore 0.2.18 against itself on loopback, through `rustox_auto_tests::ctoxcore`: the C
//! peer (auto_tests/tools/toxcore_file_peer.c) is built against Debian's libtoxcore, and a
//! file goes from its sender to its receiver byte for byte.
//!
//! Without a C compiler, libtoxcore-dev or toxcore-utils these tests print a notice and
//! pass; with `CI` set they fail instead, as the project's other interop tests do.
//! Each takes about 15 s, most of it c-toxcore finding its friend (~10 s).

use std::time::Duration;

use rustox_auto_tests::ctoxcore::{
    run_transfer, BootstrapNode, BootstrapOptions, BuildOptions, CToxcoreError, ContentCheck,
    Discovery, FileIdChoice, Friendship, PeerBinary, TransferOptions,
};

/// A missing dependency skips the test, except under CI; anything else fails it.
fn or_skip<T>(result: Result<T, CToxcoreError>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if e.is_missing_dependency() && std::env::var_os("CI").is_none() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn peer_binary() -> Option<PeerBinary> {
    let options = BuildOptions {
        cache_dir: std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ctoxcore"),
        ..BuildOptions::default()
    };
    or_skip(PeerBinary::build(&options))
}

/// A generous bound for a process that normally finishes in ~15 s; it only stops a hung run.
const PEER_TIMEOUT: Duration = Duration::from_secs(45);

fn loopback(size: u64) -> TransferOptions {
    let mut options = TransferOptions::loopback(size);
    options.recv.timeout = PEER_TIMEOUT;
    options.send.timeout = PEER_TIMEOUT;
    options
}

#[test]
fn four_mebibytes_arrive_whole_and_in_order_when_the_sender_bootstraps_off_the_receiver() {
    let Some(binary) = peer_binary() else { return };
    const SIZE: u64 = 4 << 20;
    let report = run_transfer(&binary, &loopback(SIZE)).expect("transfer");
    eprintln!("{report:?}");
    assert_eq!(report.recv_ready.toxcore_version, "0.2.18");
    assert_eq!(report.send.bytes, SIZE);
    assert_eq!(report.recv.expected_bytes, SIZE);
    assert_eq!(report.recv.bytes, SIZE);
    assert_eq!(report.recv.check, "pattern");
    assert_eq!(report.recv.mismatched_bytes, 0);
    assert!(report.recv.in_order);
    assert!(report.recv.verified);
    assert_eq!(report.send.friend_connection, "udp");
    assert!(report.recv_exit.is_some_and(|s| s.success()));
    assert!(report.send.time_to_friend_online.is_some());
}

#[test]
fn a_friend_request_through_a_tox_bootstrapd_node_delivers_a_file_matching_its_sha256_id() {
    let Some(binary) = peer_binary() else { return };
    let Some(node) = or_skip(BootstrapNode::start(&BootstrapOptions::default())) else {
        return;
    };
    const SIZE: u64 = 1 << 20;
    let mut options = loopback(SIZE);
    options.discovery = Discovery::Nodes(vec![node.spec("127.0.0.1")]);
    options.friendship = Friendship::Request;
    options.file_id = FileIdChoice::Sha256;
    options.check = ContentCheck::FileId;
    let report = run_transfer(&binary, &options).expect("transfer");
    eprintln!("{report:?}");
    assert_eq!(report.recv.bytes, SIZE);
    assert_eq!(report.recv.check, "file-id");
    assert!(report.recv.verified);
    assert!(report.recv_exit.is_some_and(|s| s.success()));
}

#[test]
fn a_receiver_reports_content_that_is_not_the_pattern_it_expects() {
    let Some(binary) = peer_binary() else { return };
    const SIZE: u64 = 64 << 10;
    let mut options = loopback(SIZE);
    // The sender's pattern differs from the one the receiver checks against.
    options.send.seed = 2;
    let report = run_transfer(&binary, &options).expect("transfer");
    assert_eq!(report.recv.bytes, SIZE);
    assert!(!report.recv.verified);
    assert!(report.recv.mismatched_bytes > 0);
    assert_eq!(report.recv_exit.and_then(|s| s.code()), Some(3));
}
