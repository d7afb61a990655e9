//! The kernel-shaped link (`rustox_auto_tests::kernel_link`): a veth pair with tbf on each
//! egress really holds the rate and drops what its byte queue cannot take.
//!
//! Needs root and tc. Without them the test skips with a message, except under CI (`CI`
//! set), where that is a failure. Arrival times are the kernel's receive timestamps
//! (`SO_TIMESTAMPNS`), taken when a frame reaches the receiving socket: a test thread that
//! reads late (a loaded host) would stamp the first frames late and so shrink the burst's
//! span below what the shaper allowed. They are checked only as lower bounds: a slow host
//! can make frames later, never earlier than the shaper lets them go.

use std::io::IoSliceMut;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;

use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use nix::sys::time::TimeSpec;
use rustox_auto_tests::emulator::{check_prerequisites, Side};
use rustox_auto_tests::kernel_link::{KernelLink, KernelProfile, FRAME_BYTES};
use rustox_testkit::ci::skip_or_fail;

/// Datagrams of the burst.
const BURST: u64 = 100;
/// UDP payload of a full 1500-byte IPv4 packet: each datagram is one full frame.
const PAYLOAD: usize = 1500 - 28;

fn link() -> Option<KernelLink> {
    if let Err(why) = check_prerequisites() {
        if skip_or_fail(why) {
            return None;
        }
    }
    match KernelLink::new(KernelProfile::tbf100().tbf) {
        Ok(link) => Some(link),
        Err(e) if skip_or_fail(format!("no tbf-shaped veth pair: {e}")) => None,
        Err(e) => panic!("{e}"),
    }
}

/// Receives until nothing has come for 300 ms; the kernel's arrival time of each datagram
/// (the socket must have `ReceiveTimestampns` set).
fn drain(rx: &UdpSocket) -> Vec<Duration> {
    rx.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let mut buf = vec![0u8; 2048];
    let mut control = nix::cmsg_space!(TimeSpec);
    let mut at = Vec::new();
    loop {
        let mut iov = [IoSliceMut::new(&mut buf)];
        let Ok(msg) = recvmsg::<()>(
            rx.as_raw_fd(),
            &mut iov,
            Some(&mut control),
            MsgFlags::empty(),
        ) else {
            break;
        };
        let stamp = msg
            .cmsgs()
            .expect("control data fits")
            .find_map(|c| match c {
                ControlMessageOwned::ScmTimestampns(ts) => Some(Duration::from(ts)),
                _ => None,
            })
            .expect("a receive timestamp on every datagram");
        at.push(stamp);
    }
    at
}

#[test]
fn a_burst_beyond_the_queue_is_dropped_and_the_rest_leaves_at_the_rate() {
    let Some(link) = link() else { return };
    let tx = link.udp_socket(Side::A, 0).expect("socket in A");
    let rx = link.udp_socket(Side::B, 0).expect("socket in B");
    setsockopt(&rx, sockopt::RcvBufForce, &(4 << 20)).expect("receive buffer");
    setsockopt(&rx, sockopt::ReceiveTimestampns, &true).expect("receive timestamps");
    let to = rx.local_addr().expect("address");
    // One datagram first, so address resolution is done and counted before the burst.
    tx.send_to(&[0; PAYLOAD], to).expect("send");
    assert_eq!(drain(&rx).len(), 1);
    let before = link.qdisc(Side::A).expect("counters");
    for _ in 0..BURST {
        tx.send_to(&[0; PAYLOAD], to).expect("send");
    }
    let arrivals = drain(&rx);
    let after = link.qdisc(Side::A).expect("counters");
    let passed = after.packets - before.packets;
    let dropped = after.drops - before.drops;
    assert_eq!(passed + dropped, BURST, "every frame passed or was dropped");
    assert_eq!(arrivals.len() as u64, passed, "what passed arrived");
    // 151 kB offered at once to a 12.5 kB queue and a 12.5 kB bucket.
    assert!(dropped > 0, "drop-tail: {passed} passed");
    // After the bucket's frames (and one more, for rounding), each frame waits for its
    // tokens: 1514 bytes at 100 Mbit/s = 121 µs.
    let (first, last) = (arrivals[0], arrivals[arrivals.len() - 1]);
    let frame = Duration::from_nanos(FRAME_BYTES * 8 * 1_000_000_000 / 100_000_000);
    let in_bucket = link.tbf().burst_bytes / FRAME_BYTES + 1;
    let least = frame * u32::try_from(passed.saturating_sub(in_bucket)).unwrap_or(0);
    assert!(
        last - first >= least * 9 / 10,
        "{passed} frames in {:?}, at least {least:?} at the rate",
        last - first
    );
}
