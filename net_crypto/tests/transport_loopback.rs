//! Sub-millisecond paths (loopback, LAN) with the default controller, BBR.
//!
//! The window must never be smaller than what lets the receiver's request trigger fire
//! (8 data packets, else a 25 ms timer): below it every ack waits for the timer, each
//! delivery-rate sample is at most window / 25 ms, and on a 50 µs path the window BBR
//! derives from that (2 × bw × min RTT) is the floor again — a self-sustaining collapse.
//! With a 4-packet floor the CLI gets 0.26 MB/s over loopback UDP (cwnd 5492, srtt 15 ms);
//! the simulator's profiles (RTT ≥ 0.5 ms) do not show it.
//!
//! In this harness a 4-packet floor gives 0.21 MiB/s at 100 Mbit/s after an app-limited
//! start (cwnd 5492, srtt 14.9 ms, as in the CLI's trace) and 3.5 MiB/s at 1 Gbit/s with
//! 200 µs of scheduling jitter; the 16-packet floor alone gives 11.3 and 33 MiB/s, and
//! with the ack-delay allowance (bw × the peer's measured ack delay) 11.1 and 109–117.
#[path = "transport_harness.rs"]
mod harness;
use harness::{LinkConfig, Pair};
use rustox_net_crypto::transport::ControllerKind;
use std::time::Duration;

const PAYLOAD: u64 = 1373;
const MIB: f64 = 1024.0 * 1024.0;

/// Loopback-like: 50 µs each way, a bottleneck of `rate` bytes/s, a 2 MB buffer.
fn loopback(rate: u64, jitter_us: u64) -> LinkConfig {
    LinkConfig {
        delay: Duration::from_micros(50),
        jitter: Duration::from_micros(jitter_us),
        rate,
        buffer: 2_000_000,
        loss: 0.0,
        duplicate: 0.0,
        drop_first_data: 0,
    }
}

/// Runs `packets` full packets after `trickle` single packets 30 ms apart (an app-limited
/// start, like a file offer and its control packets before the bulk data); returns the
/// bulk goodput in MiB per second of virtual time and the sender's state for messages.
fn goodput(kind: ControllerKind, link: &LinkConfig, trickle: u64, packets: u64) -> (f64, String) {
    let mut p = Pair::new(kind, link.clone(), link.clone(), 1);
    for _ in 0..trickle {
        p.a.to_send += 1;
        let until = p.now + Duration::from_millis(30);
        p.run_until(Duration::from_secs(100), |p| p.now >= until);
    }
    let start = p.now;
    let done = p.transfer(packets, Duration::from_secs(300));
    let state = format!("{:?} | {}", p.stats_a(), p.a.t.controller_state());
    let done = done.unwrap_or_else(|| panic!("{kind:?}: transfer did not finish: {state}"));
    assert!(
        p.a.errors.is_empty() && p.b.errors.is_empty(),
        "{:?} {:?}",
        p.a.errors,
        p.b.errors
    );
    let secs = (done - start).as_secs_f64();
    ((packets * PAYLOAD) as f64 / MIB / secs, state)
}

/// Payload MiB/s a bottleneck of `rate` wire bytes/s carries (the harness adds 55 bytes of
/// framing per packet).
fn payload_capacity(rate: u64) -> f64 {
    rate as f64 * PAYLOAD as f64 / (PAYLOAD + 55) as f64 / MIB
}

#[test]
fn loopback_bbr_after_an_app_limited_start_fills_the_pipe() {
    // 100 Mbit/s, 50 µs: BDP ≈ 1.3 kB, far below the 8-packet request trigger.
    let rate = 12_500_000;
    let (mibps, state) = goodput(ControllerKind::Bbr, &loopback(rate, 0), 20, 8_000);
    let cap = payload_capacity(rate);
    println!("BBR {mibps:.2} MiB/s of {cap:.2}");
    assert!(
        mibps >= 0.8 * cap,
        "BBR {mibps:.2} MiB/s of {cap:.2} on a 100 µs path: {state}"
    );
}

#[test]
fn loopback_bbr_with_scheduling_jitter_does_not_collapse() {
    // 1 Gbit/s, 50 µs + up to 200 µs of jitter (a busy host's scheduling): the jitter
    // makes some acks late, and late acks must not start a collapse.
    let rate = 125_000_000;
    let cap = payload_capacity(rate);
    for trickle in [0, 20] {
        let (mibps, state) = goodput(ControllerKind::Bbr, &loopback(rate, 200), trickle, 20_000);
        println!("trickle {trickle}: BBR {mibps:.1} MiB/s");
        assert!(
            mibps >= 0.8 * cap,
            "trickle {trickle}: BBR {mibps:.1} MiB/s of {cap:.1} on a jittery 100 µs path: {state}"
        );
    }
}

#[test]
fn loopback_gigabit_is_filled_by_bbr_and_cubic() {
    let rate = 125_000_000;
    let cap = payload_capacity(rate);
    for kind in [ControllerKind::Bbr, ControllerKind::Cubic] {
        let (mibps, state) = goodput(kind, &loopback(rate, 0), 0, 20_000);
        println!("{kind:?} {mibps:.1} MiB/s of {cap:.1}");
        assert!(
            mibps >= 0.8 * cap,
            "{kind:?} {mibps:.1} MiB/s of {cap:.1}: {state}"
        );
    }
}

/// Every path is paced (docs/transport.md §3.7; unpaced, a gigabit LAN's whole window leaves at
/// once and overflows a switch's 62.5 kB buffer):
/// a backlog that appears at one instant leaves as one pacing burst on a 200 µs path as
/// on a 10 ms one, not as the window (~100 packets on the short path).
#[test]
fn every_path_is_paced_and_a_backlog_leaves_in_one_burst() {
    for (one_way, buffer) in [
        (Duration::from_micros(100), 200_000),
        (Duration::from_millis(5), 4_000_000),
    ] {
        let link = LinkConfig {
            delay: one_way,
            jitter: Duration::ZERO,
            rate: 125_000_000,
            buffer,
            loss: 0.0,
            duplicate: 0.0,
            drop_first_data: 0,
        };
        let mut p = Pair::new(ControllerKind::Bbr, link.clone(), link, 1);
        p.transfer(5_000, Duration::from_secs(60))
            .expect("warm-up transfer finishes");
        let now = p.now;
        let mut queued = 0;
        while queued < 200
            && p.a
                .t
                .queue_lossless(now, rustox_net_crypto::PacketClass::Bulk, &[82; 1373])
                .is_ok()
        {
            queued += 1;
        }
        let mut burst = 0;
        while p.a.t.poll_send(now).is_some() {
            burst += 1;
        }
        let window_packets = p.a.t.stats().cwnd_bytes / PAYLOAD;
        println!("one way {one_way:?}: burst {burst} of {queued}, window {window_packets} packets");
        assert!(
            window_packets > 2 * 10,
            "precondition: the window ({window_packets}) would allow more than a burst"
        );
        assert!(
            (1..=2 * 10).contains(&burst),
            "one way {one_way:?}: a burst of {burst}, window {window_packets}"
        );
    }
}
