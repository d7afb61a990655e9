//! A stream receiver's bytes ([`super::TcpReceiver::stream`]): segments held above a gap
//! until the gap fills, and the in-order bytes the application has not read yet.
//!
//! This is where head-of-line blocking lives: a segment that arrives after a lost one is
//! kept here, invisible to the application, until the retransmission arrives; then
//! everything held is released at once.

use std::collections::BTreeMap;

/// Out-of-order segments by sequence number, and in-order bytes waiting to be read.
#[derive(Debug, Clone, Default)]
pub struct ReceiveBuffer {
    /// One past the last byte made readable.
    delivered: u64,
    held: BTreeMap<u64, Vec<u8>>,
    held_bytes: usize,
    readable: Vec<u8>,
}

impl ReceiveBuffer {
    /// Expecting byte 0.
    pub fn new() -> Self {
        ReceiveBuffer::default()
    }

    /// One past the last byte made readable (the receiver's cumulative point).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Payload bytes held above a gap (copies of overlapping segments count twice).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Keeps the payload of a segment at `seq` that brought something new, then makes
    /// readable whatever is now contiguous; returns the bytes that became readable.
    pub fn on_segment(&mut self, seq: u64, payload: &[u8]) -> u64 {
        let end = seq + payload.len() as u64;
        if end <= self.delivered {
            return 0;
        }
        let before = self.delivered;
        if seq <= self.delivered {
            let skip = (self.delivered - seq) as usize;
            self.readable.extend_from_slice(&payload[skip..]);
            self.delivered = end;
        } else if self.held.get(&seq).is_none_or(|p| p.len() < payload.len()) {
            let old = self
                .held
                .insert(seq, payload.to_vec())
                .map_or(0, |p| p.len());
            self.held_bytes = self.held_bytes + payload.len() - old;
        }
        // Join the held segments the readable bytes now reach.
        while let Some(entry) = self.held.first_entry() {
            let start = *entry.key();
            if start > self.delivered {
                break;
            }
            let p = entry.remove();
            self.held_bytes -= p.len();
            let end = start + p.len() as u64;
            if end > self.delivered {
                let skip = (self.delivered - start) as usize;
                self.readable.extend_from_slice(&p[skip..]);
                self.delivered = end;
            }
        }
        self.delivered - before
    }

    /// Takes the readable bytes.
    pub fn read(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.readable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_holds_back_what_follows_until_it_fills() {
        let mut r = ReceiveBuffer::new();
        assert_eq!(r.on_segment(0, &[0, 1]), 2);
        assert_eq!(r.on_segment(4, &[4, 5]), 0, "held above the gap");
        assert_eq!(r.on_segment(6, &[6]), 0);
        assert_eq!(r.held_bytes(), 3);
        assert_eq!(r.read(), vec![0, 1]);
        assert!(
            r.read().is_empty(),
            "nothing readable while the gap is open"
        );
        assert_eq!(
            r.on_segment(2, &[2, 3]),
            5,
            "the gap fills: all released at once"
        );
        assert_eq!(r.read(), vec![2, 3, 4, 5, 6]);
        assert_eq!(r.held_bytes(), 0);
        assert_eq!(r.on_segment(1, &[1, 2]), 0, "duplicate");
        assert_eq!(r.on_segment(6, &[6, 7]), 1, "overlap: only the new byte");
        assert_eq!(r.read(), vec![7]);
        assert_eq!(r.delivered(), 8);
    }
}
