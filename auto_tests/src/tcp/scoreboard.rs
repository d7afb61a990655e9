//! The sender's record of every unacknowledged segment: SACK marking (RFC 2018, RFC 6675
//! §4), loss marking, and the in-flight count the window is compared against.
//!
//! Loss rule: a segment is lost once three segments *sent after it* have been delivered
//! (cumulatively ACKed or SACKed). For original transmissions that is RFC 6675's IsLost
//! with DupThresh = 3 (three SACKed segments above it); counting in send order, as RFC 9002
//! §6.1.1's packet threshold does, also catches a lost retransmission — which Linux catches
//! with RACK — instead of leaving it to the RTO. RACK's time rule is not modelled: on the
//! simulator's FIFO links, send order is arrival order, so the count rule loses nothing.
//!
//! In flight (RFC 6675's pipe, Linux's `tcp_packets_in_flight`): segments neither SACKed nor
//! marked lost, retransmissions included.

use std::collections::VecDeque;

use rustox_net_crypto::Timestamp;

/// Delivered segments sent after a segment that make it lost (RFC 6675 DupThresh).
pub const DUP_THRESH: usize = 3;

/// Where one outstanding segment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentState {
    /// Sent (or re-sent) and not known to be delivered or lost.
    InFlight,
    /// Marked lost and waiting for retransmission.
    Lost,
    /// Selectively acknowledged.
    Sacked,
}

/// One unacknowledged segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentSegment {
    /// First byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Time of its latest transmission.
    pub sent_at: Timestamp,
    /// Position of its latest transmission in the flow's send order.
    pub tx: u64,
    /// Sent more than once (its ACK is ambiguous: no RTT sample, Karn's rule).
    pub retransmitted: bool,
    /// State.
    pub state: SegmentState,
}

impl SentSegment {
    /// One past its last byte.
    pub fn end(&self) -> u64 {
        self.seq + u64::from(self.len)
    }
}

/// What one ACK newly delivered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Segments newly delivered, cumulatively or by SACK (Linux's `newly_acked_sacked`).
    pub segments: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Bytes the cumulative ACK advanced.
    pub cumulative_bytes: u64,
    /// Send time of the oldest never-retransmitted segment the cumulative ACK covered.
    cumulative_oldest: Option<Timestamp>,
    /// A retransmitted segment was among those the cumulative ACK covered.
    cumulative_ambiguous: bool,
    /// Send time of the oldest never-retransmitted segment newly SACKed.
    sacked_oldest: Option<Timestamp>,
    /// Send time of the newest never-retransmitted segment newly delivered either way.
    newest: Option<Timestamp>,
}

impl Delivery {
    /// The send time the RTT estimator's sample is measured from, as Linux's
    /// `tcp_clean_rtx_queue` picks it: the oldest newly cumulatively-ACKed segment when none
    /// of those was retransmitted, else the oldest newly SACKed one.
    pub fn srtt_sent_at(&self) -> Option<Timestamp> {
        match (self.cumulative_oldest, self.cumulative_ambiguous) {
            (Some(t), false) => Some(t),
            _ => self.sacked_oldest,
        }
    }

    /// The send time of the newest newly delivered fresh segment: the delay signal
    /// (Linux's `ca_rtt_us`, which its HyStart uses too).
    pub fn newest_sent_at(&self) -> Option<Timestamp> {
        self.newest
    }

    fn fresh(&mut self, seg: &SentSegment, cumulative: bool) {
        if seg.retransmitted {
            if cumulative {
                self.cumulative_ambiguous = true;
            }
            return;
        }
        let slot = if cumulative {
            &mut self.cumulative_oldest
        } else {
            &mut self.sacked_oldest
        };
        *slot = Some(slot.map_or(seg.sent_at, |t| t.min(seg.sent_at)));
        self.newest = Some(self.newest.map_or(seg.sent_at, |t| t.max(seg.sent_at)));
    }
}

/// The outstanding segments `[snd_una, snd_nxt)` in sequence order.
#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    segs: VecDeque<SentSegment>,
    snd_una: u64,
    snd_nxt: u64,
    in_flight: usize,
    lost: usize,
    sacked: usize,
    /// Retransmissions currently in flight (while zero, in-flight segments are in send order).
    retrans_in_flight: usize,
    next_tx: u64,
    /// The DUP_THRESH highest send positions ever delivered, plus one (0: none), descending.
    delivered_top: [u64; DUP_THRESH],
    /// The loss threshold the last scan used.
    scanned_threshold: u64,
    /// No segment below this sequence number is marked lost.
    lost_floor: u64,
}

impl Scoreboard {
    /// Nothing sent yet.
    pub fn new() -> Self {
        Scoreboard::default()
    }

    /// Oldest unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Next new byte.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Bytes between `snd_una` and `snd_nxt`.
    pub fn outstanding_bytes(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Segments outstanding (any state).
    pub fn outstanding(&self) -> usize {
        self.segs.len()
    }

    /// Segments in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Segments marked lost and not yet re-sent.
    pub fn lost(&self) -> usize {
        self.lost
    }

    /// Segments SACKed above the cumulative ACK.
    pub fn sacked(&self) -> usize {
        self.sacked
    }

    /// Send a new segment of `len` bytes at `now`.
    pub fn send_new(&mut self, len: u32, now: Timestamp) -> SentSegment {
        let seg = SentSegment {
            seq: self.snd_nxt,
            len,
            sent_at: now,
            tx: self.next_tx,
            retransmitted: false,
            state: SegmentState::InFlight,
        };
        self.next_tx += 1;
        self.snd_nxt += u64::from(len);
        self.in_flight += 1;
        self.segs.push_back(seg);
        seg
    }

    /// Re-send the lowest segment marked lost, if any.
    pub fn retransmit_next_lost(&mut self, now: Timestamp) -> Option<SentSegment> {
        if self.lost == 0 {
            return None;
        }
        let from = self.segs.partition_point(|s| s.seq < self.lost_floor);
        let i = (from..self.segs.len()).find(|&i| self.segs[i].state == SegmentState::Lost)?;
        let tx = self.next_tx;
        self.next_tx += 1;
        let seg = &mut self.segs[i];
        seg.state = SegmentState::InFlight;
        seg.sent_at = now;
        seg.tx = tx;
        seg.retransmitted = true;
        self.lost -= 1;
        self.in_flight += 1;
        self.retrans_in_flight += 1;
        self.lost_floor = seg.end();
        Some(*seg)
    }

    fn note_delivered(&mut self, tx: u64) {
        let v = tx + 1;
        if v <= self.delivered_top[DUP_THRESH - 1] || self.delivered_top.contains(&v) {
            return;
        }
        self.delivered_top[DUP_THRESH - 1] = v;
        self.delivered_top.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// Take a segment out of its current state's count; returns true if it was not already
    /// known to be delivered.
    fn leave_state(&mut self, seg: SentSegment) -> bool {
        match seg.state {
            SegmentState::InFlight => {
                self.in_flight -= 1;
                if seg.retransmitted {
                    self.retrans_in_flight -= 1;
                }
                true
            }
            SegmentState::Lost => {
                self.lost -= 1;
                true
            }
            SegmentState::Sacked => {
                self.sacked -= 1;
                false
            }
        }
    }

    /// Apply an ACK: cumulative `ack` and SACK `blocks`. ACK numbers outside
    /// `[snd_una, snd_nxt]` must be filtered by the caller.
    pub fn on_ack(&mut self, ack: u64, blocks: &[(u64, u64)]) -> Delivery {
        let mut d = Delivery::default();
        while let Some(&front) = self.segs.front() {
            if front.end() > ack {
                break;
            }
            self.segs.pop_front();
            if self.leave_state(front) {
                d.segments += 1;
                d.bytes += u64::from(front.len);
                self.note_delivered(front.tx);
                d.fresh(&front, true);
            }
            d.cumulative_bytes += u64::from(front.len);
        }
        self.snd_una = self.segs.front().map_or(self.snd_nxt, |s| s.seq);
        for &(start, end) in blocks {
            let mut i = self.segs.partition_point(|s| s.seq < start);
            while let Some(&seg) = self.segs.get(i) {
                if seg.end() > end {
                    break;
                }
                if seg.state != SegmentState::Sacked {
                    self.leave_state(seg);
                    self.sacked += 1;
                    self.segs[i].state = SegmentState::Sacked;
                    d.segments += 1;
                    d.bytes += u64::from(seg.len);
                    self.note_delivered(seg.tx);
                    d.fresh(&seg, false);
                }
                i += 1;
            }
        }
        d
    }

    /// Mark segments lost by the send-order rule; returns how many were newly marked.
    pub fn detect_losses(&mut self) -> usize {
        let threshold = self.delivered_top[DUP_THRESH - 1];
        if threshold <= self.scanned_threshold {
            return 0;
        }
        self.scanned_threshold = threshold;
        let in_order = self.retrans_in_flight == 0;
        let mut marked = 0;
        for i in 0..self.segs.len() {
            let seg = self.segs[i];
            if seg.state != SegmentState::InFlight {
                continue;
            }
            if seg.tx + 1 >= threshold {
                if in_order {
                    break;
                }
                continue;
            }
            self.mark_lost(i);
            marked += 1;
        }
        marked
    }

    fn mark_lost(&mut self, i: usize) {
        let seg = self.segs[i];
        self.leave_state(seg);
        self.lost += 1;
        self.segs[i].state = SegmentState::Lost;
        self.lost_floor = self.lost_floor.min(seg.seq);
    }

    /// RTO: everything in flight is presumed lost (Linux `tcp_timeout_mark_lost`; SACKed
    /// segments stay SACKed). Returns how many were marked.
    pub fn mark_all_lost(&mut self) -> usize {
        let mut marked = 0;
        for i in 0..self.segs.len() {
            if self.segs[i].state == SegmentState::InFlight {
                self.mark_lost(i);
                marked += 1;
            }
        }
        marked
    }

    /// The counts agree with the segments, and the segments tile `[snd_una, snd_nxt)`.
    pub fn check(&self) -> Result<(), String> {
        let (mut f, mut l, mut s, mut r) = (0, 0, 0, 0);
        let mut at = self.snd_una;
        for seg in &self.segs {
            if seg.seq != at {
                return Err(format!("segment at {} where {at} was expected", seg.seq));
            }
            at = seg.end();
            match seg.state {
                SegmentState::InFlight => {
                    f += 1;
                    r += usize::from(seg.retransmitted);
                }
                SegmentState::Lost => l += 1,
                SegmentState::Sacked => s += 1,
            }
            if seg.state == SegmentState::Lost && seg.seq < self.lost_floor {
                return Err(format!("lost segment {} below the floor", seg.seq));
            }
        }
        if at != self.snd_nxt {
            return Err(format!("segments end at {at}, snd_nxt is {}", self.snd_nxt));
        }
        let counted = (
            self.in_flight,
            self.lost,
            self.sacked,
            self.retrans_in_flight,
        );
        if (f, l, s, r) != counted {
            return Err(format!(
                "counts (in flight, lost, sacked, retransmitted in flight) {counted:?}, \
                 segments say {:?}",
                (f, l, s, r)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn board(n: usize) -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..n {
            b.send_new(MSS, Timestamp::from_millis(i as u64));
        }
        b
    }

    #[test]
    fn three_sacked_above_marks_a_hole_lost() {
        let mut b = board(10);
        // Segment 2 missing; 3 and 4 SACKed: not yet lost.
        let d = b.on_ack(2000, &[(3000, 5000)]);
        assert_eq!((d.segments, d.cumulative_bytes), (4, 2000));
        assert_eq!(b.detect_losses(), 0);
        // A third segment above: lost.
        b.on_ack(2000, &[(3000, 6000)]);
        assert_eq!(b.detect_losses(), 1);
        assert_eq!((b.in_flight(), b.lost(), b.sacked()), (4, 1, 3));
        let r = b.retransmit_next_lost(Timestamp::from_millis(50)).unwrap();
        assert_eq!(r.seq, 2000);
        assert_eq!(b.in_flight(), 5);
        b.check().unwrap();
        // The retransmission arrives: the cumulative ACK jumps over the SACKed block.
        let d = b.on_ack(6000, &[]);
        assert_eq!(d.segments, 1, "only the hole is newly delivered");
        assert_eq!(d.srtt_sent_at(), None, "ambiguous: no sample (Karn)");
        assert_eq!(b.snd_una(), 6000);
        b.check().unwrap();
    }

    #[test]
    fn a_lost_retransmission_is_found_by_send_order() {
        let mut b = board(10);
        b.on_ack(0, &[(1000, 4000)]);
        assert_eq!(b.detect_losses(), 1);
        b.retransmit_next_lost(Timestamp::from_millis(20)).unwrap();
        for _ in 0..3 {
            b.send_new(MSS, Timestamp::from_millis(21));
        }
        // The new segments (sent after the retransmission) arrive; the retransmission did not.
        b.on_ack(0, &[(1000, 4000), (10_000, 13_000)]);
        assert_eq!(
            b.detect_losses(),
            7,
            "segment 0 again, and 4–9 (sent before 10–12)"
        );
        assert_eq!(b.lost(), 7);
        b.check().unwrap();
    }

    #[test]
    fn rtt_send_times_follow_linux() {
        let mut b = board(4);
        let d = b.on_ack(2000, &[(3000, 4000)]);
        assert_eq!(d.srtt_sent_at(), Some(Timestamp::from_millis(0)));
        assert_eq!(d.newest_sent_at(), Some(Timestamp::from_millis(3)));
    }

    #[test]
    fn rto_marks_everything_unsacked_lost() {
        let mut b = board(5);
        b.on_ack(1000, &[(2000, 3000)]);
        assert_eq!(b.mark_all_lost(), 3);
        assert_eq!((b.in_flight(), b.lost(), b.sacked()), (0, 3, 1));
        assert_eq!(b.retransmit_next_lost(Timestamp::ZERO).unwrap().seq, 1000);
        assert_eq!(b.retransmit_next_lost(Timestamp::ZERO).unwrap().seq, 3000);
        b.check().unwrap();
    }
}
