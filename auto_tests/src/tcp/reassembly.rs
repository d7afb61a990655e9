//! The receiver's sequence space: the cumulative point, out-of-order ranges held above it,
//! and which of them the next ACK reports as SACK blocks (RFC 2018 §4: the block holding
//! the most recent segment first, then the most recently reported others).

use super::segment::{SackBlocks, MAX_SACK_BLOCKS};

/// What an arriving segment did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// It advanced the cumulative point by `delivered` bytes (its own and any queued ones it
    /// joined); `filled_gap` when out-of-order data was waiting.
    InOrder {
        /// Bytes that became deliverable.
        delivered: u64,
        /// Out-of-order data was queued when it arrived (RFC 5681 §4.2: ACK at once).
        filled_gap: bool,
    },
    /// Held above a gap.
    OutOfOrder,
    /// Nothing new: all of it was already received.
    Duplicate,
    /// Beyond the receive window: dropped.
    OutOfWindow,
}

/// Cumulative point, out-of-order ranges, SACK reporting order.
#[derive(Debug, Clone)]
pub struct Reassembly {
    rcv_nxt: u64,
    window: u64,
    /// Disjoint, non-adjacent `[start, end)` ranges above `rcv_nxt`, ascending.
    ranges: Vec<(u64, u64)>,
    /// Ranges as last reported, most recent first (their starts identify them).
    reported: Vec<(u64, u64)>,
}

impl Reassembly {
    /// Expect byte 0 first; hold at most `window` bytes beyond the cumulative point.
    pub fn new(window: u64) -> Self {
        Reassembly {
            rcv_nxt: 0,
            window,
            ranges: Vec::new(),
            reported: Vec::new(),
        }
    }

    /// The next byte expected (the cumulative ACK).
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Out-of-order ranges held.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Take in `[seq, seq + len)`.
    pub fn on_segment(&mut self, seq: u64, len: u64) -> Arrival {
        let end = seq.saturating_add(len);
        if len == 0 || end <= self.rcv_nxt {
            return Arrival::Duplicate;
        }
        if end > self.rcv_nxt.saturating_add(self.window) {
            return Arrival::OutOfWindow;
        }
        if seq <= self.rcv_nxt {
            let filled_gap = !self.ranges.is_empty();
            let before = self.rcv_nxt;
            self.rcv_nxt = end;
            // Join queued ranges the new data reaches.
            while let Some(&(s, e)) = self.ranges.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ranges.remove(0);
            }
            let rcv_nxt = self.rcv_nxt;
            self.reported.retain(|&(_, e)| e > rcv_nxt);
            self.refresh_reported(None);
            return Arrival::InOrder {
                delivered: self.rcv_nxt - before,
                filled_gap,
            };
        }
        // Above a gap: insert and merge with overlapping or adjacent ranges.
        let i = self.ranges.partition_point(|&(_, e)| e < seq);
        let mut merged = (seq, end);
        let mut j = i;
        while j < self.ranges.len() && self.ranges[j].0 <= merged.1 {
            merged.0 = merged.0.min(self.ranges[j].0);
            merged.1 = merged.1.max(self.ranges[j].1);
            j += 1;
        }
        let was_new = !(j == i + 1 && self.ranges[i] == merged);
        self.ranges.splice(i..j, [merged]);
        if !was_new {
            return Arrival::Duplicate;
        }
        self.refresh_reported(Some(merged));
        Arrival::OutOfOrder
    }

    /// The range containing `at`, if any.
    fn range_of(&self, at: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, e)| e <= at);
        self.ranges.get(i).copied().filter(|&(s, _)| s <= at)
    }

    /// Re-map the reported ranges onto the current ones (ranges only grow and merge), with
    /// `first` — the range the latest segment landed in — in front.
    fn refresh_reported(&mut self, first: Option<(u64, u64)>) {
        let mut next: Vec<(u64, u64)> = Vec::with_capacity(MAX_SACK_BLOCKS);
        for r in first
            .into_iter()
            .chain(self.reported.iter().filter_map(|&(s, _)| self.range_of(s)))
        {
            if next.len() == MAX_SACK_BLOCKS {
                break;
            }
            if !next.contains(&r) {
                next.push(r);
            }
        }
        self.reported = next;
    }

    /// The SACK blocks for the next ACK.
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut b = SackBlocks::default();
        for &(s, e) in &self.reported {
            b.push(s, e);
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_out_of_order_and_gap_fill() {
        let mut r = Reassembly::new(1 << 20);
        assert_eq!(
            r.on_segment(0, 100),
            Arrival::InOrder {
                delivered: 100,
                filled_gap: false
            }
        );
        assert_eq!(r.on_segment(200, 100), Arrival::OutOfOrder);
        assert_eq!(r.on_segment(400, 100), Arrival::OutOfOrder);
        assert_eq!(r.sack_blocks().as_slice(), &[(400, 500), (200, 300)]);
        assert_eq!(r.on_segment(300, 100), Arrival::OutOfOrder);
        assert_eq!(r.ranges(), &[(200, 500)]);
        assert_eq!(r.sack_blocks().as_slice(), &[(200, 500)]);
        assert_eq!(r.on_segment(400, 100), Arrival::Duplicate);
        assert_eq!(
            r.on_segment(100, 100),
            Arrival::InOrder {
                delivered: 400,
                filled_gap: true
            }
        );
        assert_eq!(r.rcv_nxt(), 500);
        assert!(r.sack_blocks().is_empty());
        assert_eq!(r.on_segment(0, 100), Arrival::Duplicate);
    }

    #[test]
    fn most_recent_block_first_and_at_most_three() {
        let mut r = Reassembly::new(1 << 20);
        for s in [100, 300, 500, 700] {
            r.on_segment(s, 100);
        }
        assert_eq!(
            r.sack_blocks().as_slice(),
            &[(700, 800), (500, 600), (300, 400)]
        );
        // A segment extending an older block puts that block first.
        r.on_segment(200, 100);
        assert_eq!(
            r.sack_blocks().as_slice(),
            &[(100, 400), (700, 800), (500, 600)]
        );
    }

    #[test]
    fn window_bounds_what_is_held() {
        let mut r = Reassembly::new(1000);
        assert_eq!(r.on_segment(900, 200), Arrival::OutOfWindow);
        assert_eq!(r.on_segment(800, 200), Arrival::OutOfOrder);
    }
}
