//! What the receive side learns about the peer's sender: whether it is c-toxcore's (or a
//! model of it), and, for such a sender, when a request would make it resend a packet
//! that is already on its way to us (docs/transport.md §3.4, "A c-toxcore sender").
//!
//! **Recognising it.** c-toxcore's `send_crypto_packets` sends a request at least every
//! CRYPTO_SEND_PACKET_INTERVAL = 1000 ms on every established connection, also while it
//! only sends (its `packet_recv_rate` then stays at 0, below CRYPTO_PACKET_MIN_RATE, so
//! that 1 s cadence is the only one; net_crypto.c). A rustox peer sends no request on a
//! timer: only to acknowledge packets of ours, when its PTO advertises `buffer_end`, or in
//! answer after 4 s of silence (ack_timing.rs). Three requests from the peer spaced
//! [`IDLE_GAP_MIN`]–[`IDLE_GAP_MAX`] apart in a row are that cadence; it is there before
//! a file starts (the friend connection comes up seconds earlier), so the first packets
//! of a file already see the right timing. A rustox sender's first probes on a long path
//! can look like that cadence (the simulator's sat600, seed 12: three requests 1.000 s
//! apart, then silence, and the transfer fell from ≥ 0.75 to 0.63 of the link while we
//! held our requests), so the judgement lapses when the peer stops writing
//! ([`SenderWatch::is_legacy_at`]) and ends when it writes two requests closer than
//! c-toxcore ever does ([`PROMPT_GAP`]).
//!
//! **Why it matters.** c-toxcore's sender resends a named packet iff
//! `sent_time + rtt_time < now` (`handle_request_packet`), `rtt_time` being the lowest RTT
//! sample it ever took, sampled from the *last* send time of the packets a request frees.
//! One spurious resend whose original then arrives gives a sample of a few ms, and from
//! then on `rtt_time` stays there (cc/legacy.rs, the model of that sender). After that,
//! every request written between a hole's first naming and the repair's arrival makes the
//! sender resend the hole once more. Our requests (every 8 packets, at least every 25 ms,
//! at once on a new hole) are many in that time, c-toxcore's own receiver writes one per
//! ≥ 50 ms. Each extra resend costs the link a packet and, worse, the sender's budget: a
//! resend pass that uses all of `packets_left` is its "congestion event", and its rate
//! falls ×0.9 for a second. Measured in the simulator (legacy model as the sender, seed
//! 1, 16–32 MiB): toward our receiver the sender resent 3.1–12× the packets the link lost
//! (c-toxcore's cadence: 1.0–2.4×), its `rtt_time` ended at 0–6 ms (c-toxcore's cadence:
//! 8–79 ms), and it moved 0.62–0.97× as fast as toward c-toxcore's cadence on wan100,
//! vpn300, lossy, jitter50 and bursty; on real sockets against Debian's c-toxcore 0.2.18
//! 0.42–0.81× on the same paths (docs/benchmarks.md "Against c-toxcore itself").
//!
//! **What we do about it.** Every missing packet stays named in every request (an
//! unnamed slot would be acknowledged and freed by the sender: data lost). What changes
//! is *when* requests go to such a sender: after a request first names a hole, the
//! next one waits until the repair should have arrived — the longest of the last
//! [`REPAIR_SAMPLES`] repair delays (first naming → arrival) plus [`REPAIR_SLACK`] — or
//! [`SenderWatch::max_hold`] after the previous request, whichever comes first
//! ([`SenderWatch::hold_until`]). Without holes our prompt timing stands, which keeps the
//! sender's RTT samples and its send-queue count fresh. In the simulator (seed 1) this
//! brings the duplicates at our receiver from 655–2804 down to 9–98 a transfer and the
//! transfers to 1.01–1.27× c-toxcore's own receiver on wan100, lossy, slow150, jitter50,
//! bursty and wan20 (seed 1); vpn300 stays below on seed 1 (0.92×; seeds 2–3: 1.10×,
//! 1.11×). What is left there is not resends: c-toxcore's sender subtracts the growth of
//! its send array (`buffer_end − buffer_start`, so only the oldest hole's repair shrinks
//! it) from the packets it counts as sent (`send_crypto_packets`), and while a hole's
//! repair crosses a 300 ms path that growth holds its rate at a third of the link, toward
//! its own receiver as toward ours.

use std::collections::VecDeque;
use std::time::Duration;

use crate::Timestamp;

/// Shortest gap between two of the peer's requests that counts as c-toxcore's idle
/// cadence: CRYPTO_SEND_PACKET_INTERVAL = 1000 ms, less slack for the path's jitter.
const IDLE_GAP_MIN: Duration = Duration::from_millis(900);
/// Longest such gap: 1000 ms + one `tox_iterate` (≤ MIN_RUN_INTERVAL = 50 ms, Messenger.c)
/// + jitter.
const IDLE_GAP_MAX: Duration = Duration::from_millis(1200);
/// Two requests closer than this are not c-toxcore's: its receive side writes one at most
/// every PACKET_COUNTER_AVERAGE_INTERVAL = 50 ms (`send_crypto_packets`, net_crypto.c),
/// less what jitter can take off a gap; a rustox receiver acknowledges every 8 packets or
/// 25 ms while data flows (ack_timing.rs).
const PROMPT_GAP: Duration = Duration::from_millis(30);
/// Silence after which a peer taken for c-toxcore is not treated as one until it writes
/// again: its 1 s cadence, one lost request, and slack.
const CADENCE_LAPSE: Duration = Duration::from_millis(2_500);
/// Gaps of that cadence in a row that identify the sender.
const IDLE_GAPS: u8 = 2;
/// Holes whose first naming we remember (one entry each, 12 bytes): more than a 2 Mbit/s
/// path loses in an RTT at 30 %; beyond it, new holes are not protected.
const HOLES_KEPT: usize = 4096;
/// Repair delays remembered for the window's end (the longest of them, plus
/// [`REPAIR_SLACK`]).
const REPAIR_SAMPLES: usize = 8;
/// Added to the longest recent repair delay: a queue that grows between two repairs.
const REPAIR_SLACK: Duration = Duration::from_millis(10);
/// The longest a request is held back after the previous one on a path whose repairs come
/// sooner ([`SenderWatch::max_hold`] lengthens it on longer ones): four c-toxcore request
/// intervals (≥ 50 ms each). 100 ms and 300 ms did no better in the simulator (seeds 1–2,
/// seven profiles: geometric mean of the ratio to c-toxcore's cadence 1.037 and 1.064,
/// 200 ms 1.049; the 300 ms gain is slow150 alone).
const MAX_HOLD: Duration = Duration::from_millis(200);
/// How much longer than the shortest recent repair a hold may last on a path whose repairs
/// take longer than [`MAX_HOLD`] (4/3: a third more). A hold cut short just before the
/// repairs land makes the sender resend every hole once more for nothing: in the simulator
/// (legacy model to our receiver, vpn300, 300 ms, seeds 1–3) a 300 ms cap ran at 0.50,
/// 0.70, 0.80× c-toxcore's receiver, 200 ms at 0.89, 1.21, 1.48×, 4/3 of the repair
/// (≈ 400 ms) at 0.92, 1.10, 1.11×; on 100 ms paths a cap above 200 ms cost wan100 a
/// quarter on seed 1.
const HOLD_OVER_REPAIR: (u32, u32) = (4, 3);
/// The longest such hold; on paths whose repairs take longer still (satellite) the hold
/// stays at [`MAX_HOLD`]: there a rustox sender's start-up probes can look like c-toxcore's
/// cadence for a while (see above), and holding its acknowledgements 400–800 ms took the
/// simulator's sat600 (seed 12) from ≥ 0.75 to 0.74 of the link.
const LONGEST_HOLD: Duration = Duration::from_millis(450);
/// Steps [`SenderWatch::hold_until`] is followed to find a time outside every window.
pub(crate) const HOLD_STEPS: usize = 8;

/// The receive side's knowledge of the peer's sender.
#[derive(Debug, Clone, Default)]
pub(crate) struct SenderWatch {
    last_peer_request: Option<Timestamp>,
    idle_gaps: u8,
    legacy: bool,
    /// Holes named by our requests and not yet filled: (packet number, first named), in
    /// packet-number order, which is also the order of first naming.
    named: VecDeque<(u32, Timestamp)>,
    /// The highest packet number entered in `named`.
    named_upto: Option<u32>,
    /// The latest repair delays (first naming → arrival).
    repairs: VecDeque<Duration>,
}

impl SenderWatch {
    /// A request from the peer arrived at `now`.
    pub(crate) fn on_peer_request(&mut self, now: Timestamp) {
        if let Some(last) = self.last_peer_request {
            let gap = now.saturating_duration_since(last);
            if gap < PROMPT_GAP {
                // Not c-toxcore, whatever came before: a rustox peer acknowledging data.
                self.legacy = false;
                self.idle_gaps = 0;
            } else if (IDLE_GAP_MIN..=IDLE_GAP_MAX).contains(&gap) {
                self.idle_gaps = self.idle_gaps.saturating_add(1);
                if self.idle_gaps >= IDLE_GAPS {
                    self.legacy = true;
                }
            } else {
                self.idle_gaps = 0;
            }
        }
        self.last_peer_request = Some(now);
    }

    /// The peer's sender has shown c-toxcore's request cadence.
    #[cfg(test)]
    pub(crate) fn is_legacy(&self) -> bool {
        self.legacy
    }

    /// The peer's sender has shown c-toxcore's request cadence and keeps it at `at`: a
    /// c-toxcore peer writes a request at least every CRYPTO_SEND_PACKET_INTERVAL = 1 s, so
    /// one silent for [`CADENCE_LAPSE`] is not treated as one until its next request.
    pub(crate) fn is_legacy_at(&self, at: Timestamp) -> bool {
        self.legacy
            && self
                .last_peer_request
                .is_some_and(|last| at <= last.saturating_add(CADENCE_LAPSE))
    }

    /// A request goes out at `now` naming the holes `holes` (packet numbers, ascending);
    /// those not named before are remembered.
    pub(crate) fn on_request_sent(&mut self, now: Timestamp, holes: impl Iterator<Item = u32>) {
        for pn in holes {
            if self.named_upto.is_some_and(|upto| !serial_lt(upto, pn)) {
                continue;
            }
            if self.named.len() >= HOLES_KEPT {
                break;
            }
            self.named.push_back((pn, now));
            self.named_upto = Some(pn);
        }
    }

    /// Packet `pn` filled a hole at `now`.
    pub(crate) fn on_hole_filled(&mut self, now: Timestamp, pn: u32) {
        let Some(first) = self.named.front().map(|e| e.0) else {
            return;
        };
        let key = pn.wrapping_sub(first);
        let Ok(i) = self
            .named
            .binary_search_by_key(&key, |e| e.0.wrapping_sub(first))
        else {
            return;
        };
        let Some((_, named_at)) = self.named.remove(i) else {
            return;
        };
        let delay = now.saturating_duration_since(named_at);
        if self.repairs.len() >= REPAIR_SAMPLES {
            self.repairs.pop_front();
        }
        self.repairs.push_back(delay);
    }

    /// Packets below `start` were delivered: forget them (a hole is filled before it is
    /// delivered, so only entries a wrap left behind go here).
    pub(crate) fn on_delivered_below(&mut self, start: u32) {
        while self.named.front().is_some_and(|e| serial_lt(e.0, start)) {
            self.named.pop_front();
        }
        if self.named.is_empty() && self.named.capacity() > 16 {
            self.named.shrink_to(16);
        }
    }

    /// Until when a request written at `at` would still fall in some hole's window: the
    /// hole was named before `at` and its repair is expected after it. `None` when it may
    /// go at `at`, also before any repair has been measured.
    pub(crate) fn hold_until(&self, at: Timestamp) -> Option<Timestamp> {
        let expected = self.repairs.iter().max()?.saturating_add(REPAIR_SLACK);
        let mut until: Option<Timestamp> = None;
        for &(_, named_at) in &self.named {
            if named_at >= at {
                // Later entries were named later still.
                break;
            }
            let end = named_at + expected;
            if end > at {
                until = Some(until.map_or(end, |u| u.max(end)));
            }
        }
        until
    }

    /// The longest a request is held after the previous one: [`MAX_HOLD`], or on a path
    /// whose shortest recent repair (≈ its round trip plus the sender's iteration) takes
    /// longer, [`HOLD_OVER_REPAIR`] of that repair (up to [`LONGEST_HOLD`]), so that a hold
    /// ends well after the repairs it waits for and never just before them.
    pub(crate) fn max_hold(&self) -> Duration {
        let (num, den) = HOLD_OVER_REPAIR;
        match self.repairs.iter().min().map(|r| *r * num / den) {
            Some(hold) if hold > MAX_HOLD && hold <= LONGEST_HOLD => hold,
            _ => MAX_HOLD,
        }
    }

    /// Bytes this holds beyond its own size.
    pub(crate) fn memory_usage(&self) -> usize {
        self.named.capacity() * std::mem::size_of::<(u32, Timestamp)>()
            + self.repairs.capacity() * std::mem::size_of::<Duration>()
    }
}

/// `a` before `b` in the 32-bit packet-number circle.
fn serial_lt(a: u32, b: u32) -> bool {
    a != b && b.wrapping_sub(a) < 1 << 31
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Timestamp {
        Timestamp::from_millis(v)
    }

    #[test]
    fn three_requests_a_second_apart_are_c_toxcores_cadence() {
        let mut w = SenderWatch::default();
        w.on_peer_request(ms(1_000));
        w.on_peer_request(ms(2_001));
        assert!(!w.is_legacy(), "one gap is not enough");
        w.on_peer_request(ms(3_030));
        assert!(w.is_legacy());
    }

    #[test]
    fn the_judgement_lapses_in_silence_and_ends_on_prompt_requests() {
        let mut w = SenderWatch::default();
        for t in [1_000, 2_000, 3_000] {
            w.on_peer_request(ms(t));
        }
        assert!(w.is_legacy_at(ms(5_500)));
        assert!(!w.is_legacy_at(ms(5_501)), "silent past the lapse");
        w.on_peer_request(ms(6_000));
        assert!(w.is_legacy_at(ms(6_000)), "writing again");
        w.on_peer_request(ms(6_010));
        assert!(!w.is_legacy_at(ms(6_010)), "two requests 10 ms apart");
    }

    #[test]
    fn a_hold_lasts_a_third_longer_than_the_shortest_repair_on_a_long_path() {
        let cadence = || {
            let mut w = SenderWatch::default();
            for t in [1_000, 2_000, 3_000, 4_000, 5_000] {
                w.on_peer_request(ms(t));
            }
            w
        };
        let mut w = cadence();
        assert_eq!(w.max_hold(), MAX_HOLD, "no repair measured yet");
        // Repairs of 120 and 90 ms (a 100 ms path): the floor stands.
        w.on_request_sent(ms(1_000), [5, 9].into_iter());
        w.on_hole_filled(ms(1_120), 5);
        w.on_hole_filled(ms(1_090), 9);
        assert_eq!(w.max_hold(), MAX_HOLD);
        // Repairs of 330 and 300 ms (a 300 ms path): 4/3 of the shortest, 400 ms.
        let mut w = cadence();
        w.on_request_sent(ms(1_000), [5, 9].into_iter());
        w.on_hole_filled(ms(1_330), 5);
        w.on_hole_filled(ms(1_300), 9);
        assert_eq!(w.max_hold(), Duration::from_millis(400));
        // A 600 ms path (satellite): the floor.
        let mut w = cadence();
        w.on_request_sent(ms(1_000), [5].into_iter());
        w.on_hole_filled(ms(1_650), 5);
        assert_eq!(w.max_hold(), MAX_HOLD);
    }

    #[test]
    fn requests_that_acknowledge_our_packets_are_not_that_cadence() {
        let mut w = SenderWatch::default();
        // A rustox peer acknowledging, then answering a PTO, then 8 s later an ALIVE.
        for t in [1_000, 1_025, 1_050, 2_000, 10_000, 11_000, 19_000] {
            w.on_peer_request(ms(t));
        }
        assert!(!w.is_legacy());
    }

    #[test]
    fn a_request_waits_for_the_repair_of_a_named_hole() {
        let mut w = SenderWatch::default();
        // Hole 10 named at 0 ms, repaired at 120 ms: repairs take 120 ms.
        w.on_request_sent(ms(0), [10].into_iter());
        assert_eq!(w.hold_until(ms(5)), None, "nothing measured yet");
        w.on_hole_filled(ms(120), 10);
        // Hole 20 named at 200 ms: a request at 210 ms waits for 200 + 120 + 10.
        w.on_request_sent(ms(200), [20].into_iter());
        assert_eq!(w.hold_until(ms(200)), None, "named at that very request");
        assert_eq!(w.hold_until(ms(210)), Some(ms(330)));
        // Naming it again does not move its window.
        w.on_request_sent(ms(250), [20, 25].into_iter());
        assert_eq!(w.hold_until(ms(260)), Some(ms(380)));
        // Past the expected repair it is named again at once: the resend was lost.
        assert_eq!(w.hold_until(ms(400)), None);
        w.on_hole_filled(ms(300), 20);
        w.on_hole_filled(ms(310), 25);
        assert_eq!(w.hold_until(ms(320)), None);
    }

    #[test]
    fn holes_are_forgotten_once_delivered_and_the_list_is_bounded() {
        let mut w = SenderWatch::default();
        w.on_request_sent(ms(0), 0..(HOLES_KEPT as u32 + 100));
        assert_eq!(w.named.len(), HOLES_KEPT);
        w.on_delivered_below(HOLES_KEPT as u32);
        assert!(w.named.is_empty());
        assert!(w.memory_usage() <= 16 * std::mem::size_of::<(u32, Timestamp)>());
    }

    #[test]
    fn packet_numbers_wrap() {
        let mut w = SenderWatch::default();
        w.on_request_sent(ms(0), [u32::MAX - 1, u32::MAX, 0, 1].into_iter());
        w.on_hole_filled(ms(50), 0);
        assert_eq!(w.named.len(), 3);
        w.on_delivered_below(1);
        assert_eq!(w.named.front().map(|e| e.0), Some(1));
    }
}
