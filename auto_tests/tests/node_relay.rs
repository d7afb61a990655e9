//! Two whole nodes whose UDP to each other is blocked send a file through a TCP relay on
//! relay500: the relay is the real `RelayServer`, each node↔relay connection a
//! pair of flows of the TCP model, the legs 125 ms each way at 2 Mbit/s with a deep buffer
//! (`auto_tests/src/relay_sim`). In virtual time, so the figures are asserted.
//!
//! The truth for the session's RTT is the path's base RTT: four leg delays plus a full
//! packet's and a request's serialisation on both legs (512.8 ms on relay500) — what the
//! smoothed RTT would read with no queue anywhere. Queues the transport builds itself
//! (BBR's startup overshoot, its bandwidth probes) are real and count as error.

use std::sync::OnceLock;
use std::time::Duration;

use rustox_auto_tests::node_transfer::{
    run_node_transfer_with, NodeTransferOptions, NodeTransferReport,
};
use rustox_auto_tests::relay_sim::figures::RelayFigures;
use rustox_net_crypto::Timestamp;
use rustox_simulator::targets::{goodput_target, RTT_MAX_ERROR};
use rustox_simulator::{seed_from_env, Profile};

const MIB: u64 = 1 << 20;

/// The file: 16 MiB is 70 s on relay500, long enough that BBR's startup (about 6 s with
/// its overshoot drained) is a small part of it, as in a real file of this size.
const FILE: u64 = 16 * MIB;

/// When the lossy run loses a segment on Alice's leg: well inside the file's steady state
/// (the file runs from about 10 s to 84 s).
const LOSS_AT: Timestamp = Timestamp::from_secs(30);

/// One leg's round trip: the earliest a lost segment's retransmission can arrive after
/// the original would have (the receiver's duplicate ACKs must reach the sender first).
const LEG_RTT: Duration = Duration::from_millis(250);

fn run(options: NodeTransferOptions, bytes: u64) -> NodeTransferReport {
    let profile = Profile::relay500();
    assert!(profile.relayed, "relay500 runs through the relay");
    run_node_transfer_with(&profile, seed_from_env(1), bytes, &options)
}

/// The clean run, shared by the tests that read it.
fn clean() -> &'static NodeTransferReport {
    static RUN: OnceLock<NodeTransferReport> = OnceLock::new();
    RUN.get_or_init(|| run(NodeTransferOptions::default(), FILE))
}

/// The same run with one segment of file data lost on Alice's leg at [`LOSS_AT`].
fn with_a_lost_segment() -> &'static NodeTransferReport {
    static RUN: OnceLock<NodeTransferReport> = OnceLock::new();
    RUN.get_or_init(|| {
        run(
            NodeTransferOptions {
                drop_on_alices_leg_at: Some(LOSS_AT),
                ..NodeTransferOptions::default()
            },
            FILE,
        )
    })
}

fn figures(r: &NodeTransferReport) -> &RelayFigures {
    r.relay.as_ref().expect("a relayed run has relay figures")
}

#[test]
fn a_file_through_the_relay_arrives_byte_exact_with_nothing_lost_on_the_way() {
    let r = clean();
    assert!(r.verified, "{r:?}");
    let f = figures(r);
    assert_eq!(f.relay_drops(), 0, "the relay dropped data: {:?}", f.server);
    assert_eq!(f.relay_unsent, (0, 0), "a relay client dropped data");
    assert!(f.server.data_forwarded > FILE / 1400, "{:?}", f.server);
    assert_eq!(
        (
            f.legs[0].segments_retransmitted,
            f.legs[1].segments_retransmitted
        ),
        (0, 0),
        "lossless legs"
    );
    // TCP delivered everything: a resend would be spurious.
    assert_eq!(f.sender.packets_resent, 0, "{:?}", f.sender);
    assert_eq!(f.receiver.duplicates_received, 0);
    assert!(r.chat_messages > 0, "chat flowed beside the file");
}

#[test]
fn goodput_through_the_relay_meets_the_relay500_target() {
    let r = clean();
    let target = goodput_target("relay500").expect("relay500 has a target");
    eprintln!(
        "relay500 through the relay: efficiency {:.3} from the offer, {:.3} from the accept \
         (framing ceiling through the relay 1371/1470 = 0.933)",
        r.efficiency, r.efficiency_from_accept
    );
    // From the accept, as the transport's target counts from its first data packet.
    assert!(
        r.efficiency_from_accept >= target,
        "efficiency {:.3} from the accept < {target}",
        r.efficiency_from_accept
    );
}

#[test]
fn smoothed_rtt_stays_within_10_percent_of_the_base_rtt_through_the_relay() {
    let f = figures(clean());
    let (mean, max) = (f.rtt_error_mean(), f.rtt_error_max());
    eprintln!(
        "base {:?}, srtt median {:?}, mean |error| {mean:?}, max {max:?}, lowest srtt ÷ base {:?}, {} samples",
        f.base_rtt,
        f.srtt_median(),
        f.srtt_floor_ratio(),
        f.srtt.len()
    );
    assert!(f.srtt.len() > 100, "{} samples", f.srtt.len());
    assert!(
        mean.is_some_and(|e| e <= RTT_MAX_ERROR),
        "mean |srtt − base| / base {mean:?} > {RTT_MAX_ERROR}"
    );
    // Never shorter than the path (the collapse of toxcore PR #1323: 51 ms on 500 ms).
    assert!(
        f.srtt_floor_ratio()
            .is_some_and(|x| x >= 1.0 - RTT_MAX_ERROR),
        "{:?}",
        f.srtt_floor_ratio()
    );
    // Between the transport's own probes nothing queues: TCP in TCP adds no delay.
    let median = f.srtt_median().expect("samples");
    assert!(
        median.as_secs_f64() <= f.base_rtt.as_secs_f64() * 1.02,
        "median srtt {median:?} vs base {:?}",
        f.base_rtt
    );
}

/// A segment lost on Alice's leg: the relay's TCP receiver holds everything after it until
/// the retransmission arrives (at least a leg RTT later), then releases it at once, and Bob
/// sees nothing for as long. The transport above sees a pause, not a loss: nothing is
/// missing at Bob, and no packet newer than the held ones is acknowledged before they are,
/// so loss detection has nothing to convict — its time rule applies only to packets older
/// than an acknowledged one, and the hold (~0.27 s) is shorter than the PTO (srtt plus
/// 4·rttvar plus the peer's ack delay, ~0.55 s), which BBR's sends during the hold keep
/// re-arming. So the bound is zero: no packet declared lost, none re-sent, no duplicate at
/// Bob.
#[test]
fn a_segment_lost_on_a_leg_holds_back_what_follows_and_the_transport_declares_nothing_lost() {
    let (lossy, clean) = (with_a_lost_segment(), clean());
    assert!(lossy.verified, "{lossy:?}");
    let (f, c) = (figures(lossy), figures(clean));
    let alices_leg = &f.legs[0];
    eprintln!(
        "lost segment on Alice's leg: relay held {:?}, released {} bytes at once; Bob's longest gap {:?} (clean run {:?}); transport declared {} lost, re-sent {}",
        alices_leg.receiver.longest_hold,
        alices_leg.receiver.largest_release,
        f.legs[1].longest_gap,
        c.legs[1].longest_gap,
        f.sender.packets_declared_lost,
        f.sender.packets_resent
    );
    assert_eq!(
        alices_leg.segments_retransmitted, 1,
        "one segment re-sent by TCP"
    );
    assert_eq!(alices_leg.rto_count, 0, "found from SACKs, not by timeout");
    // Head-of-line blocking at the relay: a leg RTT of data waits, then comes out at once.
    assert!(
        alices_leg.receiver.longest_hold >= LEG_RTT,
        "held {:?}",
        alices_leg.receiver.longest_hold
    );
    assert!(
        alices_leg.receiver.largest_release >= 32 * 1024,
        "released {} bytes at once",
        alices_leg.receiver.largest_release
    );
    assert!(
        c.legs[0].receiver.largest_release <= 1448,
        "clean: a segment (at most an MSS) at a time"
    );
    // Bob: a pause as long as the hold, where the clean run's longest is a few segments.
    assert!(
        f.legs[1].longest_gap >= LEG_RTT,
        "{:?}",
        f.legs[1].longest_gap
    );
    assert!(
        c.legs[1].longest_gap < Duration::from_millis(50),
        "{:?}",
        c.legs[1].longest_gap
    );
    // Nothing lost above TCP, and the burst does not overflow the relay's output.
    assert_eq!(f.relay_drops(), 0, "{:?}", f.server);
    assert_eq!(f.relay_unsent, (0, 0));
    assert_eq!(f.sender.packets_declared_lost, 0, "{:?}", f.sender);
    assert_eq!(f.sender.packets_resent, 0, "{:?}", f.sender);
    assert_eq!(f.receiver.duplicates_received, 0);
    assert!(
        f.rtt_error_mean().is_some_and(|e| e <= RTT_MAX_ERROR),
        "{:?}",
        f.rtt_error_mean()
    );
}

/// c-toxcore's relay (tox-bootstrapd) leaves Nagle's algorithm on its sockets; rustox's
/// drivers set TCP_NODELAY. Through such a relay, a request packet going back to the sender
/// is shorter than a segment, so on the relay's leg to the sender it waits for the previous
/// short segment's ACK: about a leg RTT, plus the delayed-ACK timer. The session's RTT then
/// reads the path well over 10 % long, and its peer's acknowledgements as that much
/// delayed: the relay's socket option decides whether the RTT target can hold.
#[test]
fn through_a_relay_whose_sockets_keep_nagle_requests_wait_a_leg_round_trip() {
    let r = run(
        NodeTransferOptions {
            relay_sockets: rustox_auto_tests::tcp::StreamOptions { nagle: true },
            ..NodeTransferOptions::default()
        },
        4 * MIB,
    );
    assert!(r.verified, "{r:?}");
    let f = figures(&r);
    let ack_delay = f.sender.peer_ack_delay.unwrap_or_default();
    let median = f.srtt_median().expect("samples");
    eprintln!(
        "relay with Nagle: srtt median {median:?} (base {:?}), mean error {:?}, peer ack delay {ack_delay:?}, declared lost {}, re-sent {}, efficiency {:.3}",
        f.base_rtt,
        f.rtt_error_mean(),
        f.sender.packets_declared_lost,
        f.sender.packets_resent,
        r.efficiency
    );
    assert!(ack_delay >= LEG_RTT, "peer ack delay {ack_delay:?}");
    assert!(
        median.as_secs_f64() > f.base_rtt.as_secs_f64() * (1.0 + RTT_MAX_ERROR),
        "median srtt {median:?} vs base {:?}",
        f.base_rtt
    );
}

/// Everything random comes from the seed, and no map's iteration order leaks into the run
/// (two runs in one process get differently keyed hash maps).
#[test]
fn the_same_seed_replays_the_same_relayed_run() {
    let fingerprint = |r: &NodeTransferReport| {
        let f = figures(r);
        (
            r.seconds.to_bits(),
            f.srtt.clone(),
            f.server,
            f.legs.map(|l| (l.segments_sent, l.receiver)),
        )
    };
    let a = run(NodeTransferOptions::default(), 2 * MIB);
    let b = run(NodeTransferOptions::default(), 2 * MIB);
    assert!(a.verified);
    assert_eq!(fingerprint(&a), fingerprint(&b));
}

/// Alice adds Bob with his address and then his relay (`add_friend_relay`) while UDP to him
/// is blocked. Her relay connection is up after 0.5 s, but the session dialled before the
/// relay was known keeps its cookie requests on UDP until its handshake gives up; only the
/// redial (with the stored relay) goes out of band: online at 9.5 s. A relay attached to a
/// friend whose session is handshaking should reach that session at once.
#[test]

fn friends_meet_through_a_relay_added_after_the_dial_within_three_seconds() {
    let online = figures(clean()).online_at.expect("online");
    assert!(online <= Timestamp::from_secs(3), "online at {online:?}");
}
