//! Loss detection (docs/design.md lesson 3, docs/transport.md §3.5): a request (NACK) generated
//! before a just-sent packet could arrive must not get that packet resent.

use std::time::Duration;

use rustox_net_crypto::transport::{ControllerKind, PacketClass, Transport, TransportConfig};
use rustox_net_crypto::Timestamp;

fn ms(m: u64) -> Timestamp {
    Timestamp::from_millis(m)
}

/// A transport with `kind`'s controller, at time zero.
fn transport(kind: ControllerKind) -> Transport {
    Transport::new(
        ms(0),
        TransportConfig {
            controller: kind,
            ..Default::default()
        },
    )
}

fn drain(t: &mut Transport, now: Timestamp) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    while let Some(d) = t.poll_send(now) {
        out.push((d.packet_number, d.is_resend));
    }
    out
}

#[test]
fn request_crossing_a_just_sent_packet_does_not_resend_it() {
    for kind in [ControllerKind::Bbr, ControllerKind::Cubic] {
        let mut t = transport(kind);
        for i in 0..10u8 {
            t.queue_lossless(ms(0), PacketClass::Control, &[64, i])
                .unwrap();
        }
        assert_eq!(drain(&mut t, ms(0)).len(), 10);
        // 0..4 acked after 100 ms: RTT 100 ms.
        t.on_peer_buffer_start(ms(100), 5).unwrap();
        assert_eq!(t.stats().smoothed_rtt, Some(Duration::from_millis(100)));
        // Packet 10 leaves at 100 ms.
        t.queue_lossless(ms(100), PacketClass::Control, &[64, 10])
            .unwrap();
        assert_eq!(drain(&mut t, ms(100)), vec![(10, false)]);
        // 2 ms later a request arrives that the peer generated before packet 10 could
        // reach it: 5..9 received, 10 "missing" (offset 5 from buffer_start 5 → byte 6).
        t.on_request(ms(102), &[6]).unwrap();
        assert!(t.is_delivered(9));
        // Nothing is resent, now or while the loss delay runs.
        let mut now = ms(102);
        while now < ms(200) {
            t.handle_timeout(now);
            assert_eq!(drain(&mut t, now), vec![], "{kind:?} resent at {now:?}");
            now += Duration::from_millis(1);
        }
        assert_eq!(t.stats().packets_resent, 0);
        assert_eq!(t.stats().packets_declared_lost, 0);
        // Packet 10's ack arrives in time: no loss at all.
        t.on_peer_buffer_start(ms(205), 11).unwrap();
        for step in 0..2000 {
            t.handle_timeout(ms(205 + step));
            assert!(drain(&mut t, ms(205 + step)).is_empty());
        }
        assert_eq!(t.stats().packets_resent, 0);
        t.check_invariants().unwrap();
    }
}

#[test]
fn fresh_nack_of_an_old_packet_resends_it() {
    // The other side of the rule: a request generated after the packet should have
    // arrived does get it resent (so the test above is not passing by never resending).
    for kind in [
        ControllerKind::Bbr,
        ControllerKind::Cubic,
        ControllerKind::Legacy,
    ] {
        let mut t = transport(kind);
        for i in 0..10u8 {
            t.queue_lossless(ms(0), PacketClass::Control, &[64, i])
                .unwrap();
        }
        drain(&mut t, ms(0));
        t.on_peer_buffer_start(ms(100), 5).unwrap();
        t.queue_lossless(ms(100), PacketClass::Control, &[64, 10])
            .unwrap();
        drain(&mut t, ms(100));
        // At 1300 ms the peer still misses 10: older than any loss delay, legacy's
        // initial 1000 ms rtt_time included.
        t.on_request(ms(1300), &[6]).unwrap();
        let mut resent = Vec::new();
        // (Within 150 ms: later, a PTO probe may legitimately resend it again.)
        for step in 0..150 {
            let now = ms(1300 + step);
            t.handle_timeout(now);
            resent.extend(drain(&mut t, now));
        }
        assert_eq!(resent, vec![(10, true)], "{kind:?}");
        t.check_invariants().unwrap();
    }
}

#[test]
fn tail_loss_is_probed_without_a_request() {
    // All packets lost, no request ever arrives: PTO resends the newest packet(s) and asks
    // for a request to advertise buffer_end.
    let mut t = Transport::new(ms(0), TransportConfig::default());
    for i in 0..3u8 {
        t.queue_lossless(ms(0), PacketClass::Control, &[64, i])
            .unwrap();
    }
    drain(&mut t, ms(0));
    let mut probes = Vec::new();
    let mut requests = 0;
    let mut now = ms(0);
    while now < ms(3000) {
        if t.poll_timeout().is_some_and(|d| d <= now) {
            t.handle_timeout(now);
        }
        probes.extend(drain(&mut t, now));
        if t.poll_request(now).is_some() {
            requests += 1;
        }
        now += Duration::from_millis(1);
    }
    assert!(
        !probes.is_empty() && probes.iter().all(|&(_, resend)| resend),
        "{probes:?}"
    );
    assert!(
        probes.iter().any(|&(pn, _)| pn == 2),
        "newest packet probed: {probes:?}"
    );
    // Each PTO asks for one request to advertise buffer_end; with nothing received there
    // is nothing else to request (no idle requests).
    let ptos = t.stats().pto_count;
    assert!(
        requests >= 1 && requests as u64 <= ptos,
        "{requests} requests, {ptos} PTOs"
    );
    assert_eq!(t.stats().packets_declared_lost, 0, "PTO declares nothing");
    t.check_invariants().unwrap();
}

#[test]
fn request_reordered_behind_a_newer_header_is_decoded_against_its_own_window() {
    let mut t = Transport::new(ms(0), TransportConfig::default());
    for i in 0..10u8 {
        t.queue_lossless(ms(0), PacketClass::Control, &[64, i])
            .unwrap();
    }
    drain(&mut t, ms(0));
    // Newer packet first: cumulative ack up to 3.
    t.on_peer_buffer_start(ms(100), 3).unwrap();
    // Then an older request (header buffer_start 1): 1 and 2 received, 3 missing, so its
    // walk names offset 2 from 1 → byte 3. Decoded against our start (3) instead, it
    // would pass 3 and 4 and name 5 — acknowledging packets the peer does not have.
    t.on_peer_buffer_start(ms(101), 1).unwrap();
    t.on_request(ms(101), &[3]).unwrap();
    assert!(!t.is_delivered(3), "packet 3 must not be acknowledged");
    assert!(!t.is_delivered(4), "packet 4 must not be acknowledged");
    t.check_invariants().unwrap();
}

/// The receiver's tail entry (poll_request): with a hole below a received tail, the request
/// also names the first number past the highest received, so the sender's walk acknowledges
/// the packets after the last hole at once; the sender leaves that lone tail NACK alone for
/// a PTO, since it usually names a packet still on its way.
#[test]
fn request_names_the_tail_and_the_sender_does_not_resend_it_early() {
    // Receiver: 0, 2 and 3 arrived; 1 is a hole.
    let mut r = Transport::new(ms(0), TransportConfig::default());
    for pn in [0u32, 2, 3] {
        r.on_lossless(ms(10), pn, &[64, pn as u8]).unwrap();
    }
    let req = r.poll_request(ms(20)).unwrap();
    // id, hole at 1 (distance 2 from buffer_start − 1 = 0), tail entry 4 (distance 3).
    assert_eq!(req, vec![1, 2, 3]);
    // The legacy model stays c-toxcore's encoding: the hole only.
    let mut l = transport(ControllerKind::Legacy);
    for pn in [0u32, 2, 3] {
        l.on_lossless(ms(10), pn, &[64, pn as u8]).unwrap();
    }
    assert_eq!(l.poll_request(ms(2000)).unwrap(), vec![1, 2]);

    for kind in [ControllerKind::Bbr, ControllerKind::Cubic] {
        let mut t = transport(kind);
        for i in 0..3u8 {
            t.queue_lossless(ms(0), PacketClass::Control, &[64, i])
                .unwrap();
        }
        assert_eq!(drain(&mut t, ms(0)).len(), 3);
        // 0..2 acked after 100 ms: RTT 100 ms.
        t.on_peer_buffer_start(ms(100), 3).unwrap();
        // Packets 3..6 leave at 100 ms; a request from 200 ms names 4 as the tail entry
        // after 3, while 4..6 sit in a queue that grew by 50 ms.
        for i in 3..7u8 {
            t.queue_lossless(ms(100), PacketClass::Control, &[64, i])
                .unwrap();
        }
        let mut sent = Vec::new();
        for m in 100..110 {
            sent.extend(drain(&mut t, ms(m)));
        }
        assert_eq!(sent.len(), 4, "{kind:?}: paced out within 10 ms");
        t.on_request(ms(200), &[2]).unwrap();
        assert!(t.is_delivered(3), "{kind:?}: the walk acknowledged 3");
        assert!(!t.is_delivered(4));
        // 9/8 · 100 ms after its send, 4 is not yet resent: the tail NACK waits a PTO.
        t.handle_timeout(ms(215));
        assert_eq!(drain(&mut t, ms(215)), vec![], "{kind:?}");
        // The next request passes 4..5 and names 7 (not yet sent: the walk ends).
        t.on_request(ms(250), &[4]).unwrap();
        assert!(t.is_delivered(5));
        assert_eq!(t.stats().packets_resent, 0, "{kind:?}");
    }
}

/// A c-toxcore sender resends named packets older than its minimum RTT, tail entries
/// included: after a few duplicates of tail-named packets our receiver stops adding them.
#[test]
fn duplicates_of_tail_named_packets_turn_tail_entries_off() {
    let mut r = Transport::new(ms(0), TransportConfig::default());
    for pn in [0u32, 2, 3] {
        r.on_lossless(ms(10), pn, &[64, pn as u8]).unwrap();
    }
    // Hole at 1, tail entry 4.
    assert_eq!(r.poll_request(ms(20)).unwrap(), vec![1, 2, 3]);
    r.on_lossless(ms(30), 4, &[64, 4]).unwrap();
    // The legacy sender resent 4 although it had arrived.
    for _ in 0..4 {
        assert!(r.on_lossless(ms(40), 4, &[64, 4]).is_err());
    }
    // Hole at 1 only: no tail entry any more.
    assert_eq!(r.poll_request(ms(100)).unwrap(), vec![1, 2]);
}

/// `is_delivered` is c-toxcore's `cryptpacket_received`: cumulative (docs/protocol.md §2.8). A
/// packet a request acknowledged while an older one is still missing at the peer is not
/// delivered: a file's completion asked about its last packet alone, and the sender closed
/// its session while the receiver still lacked a chunk (real sockets, wan100, 2 MiB: the
/// receiver ended 91 chunks short).
#[test]
fn a_packet_acknowledged_behind_a_hole_is_not_yet_delivered() {
    for kind in [ControllerKind::Bbr, ControllerKind::Cubic] {
        let mut t = transport(kind);
        for i in 0..7u8 {
            t.queue_lossless(ms(0), PacketClass::Control, &[64, i])
                .unwrap();
        }
        assert_eq!(drain(&mut t, ms(0)).len(), 7);
        // The peer holds 0 and 2..4, misses 1, and names 5 as its tail entry.
        t.on_request(ms(100), &[2, 4]).unwrap();
        assert!(t.is_delivered(0), "{kind:?}");
        for pn in 1..=4 {
            assert!(
                !t.is_delivered(pn),
                "{kind:?}: {pn} is behind the hole at 1"
            );
        }
        // The repair arrives; the peer's cumulative ack covers 0..4.
        t.on_peer_buffer_start(ms(200), 5).unwrap();
        for pn in 1..=4 {
            assert!(t.is_delivered(pn), "{kind:?}: {pn}");
        }
        assert!(!t.is_delivered(5), "{kind:?}");
    }
}
