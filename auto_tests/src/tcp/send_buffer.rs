//! The bytes an application wrote to a TCP socket and the peer has not yet acknowledged:
//! what a stream sender ([`super::TcpSender::stream`]) reads its segments from, first
//! transmissions and retransmissions alike, and what its write limit counts.
//!
//! Sequence numbers are stream offsets, as in the rest of the model: byte `i` written is
//! sequence number `i`.

use std::collections::VecDeque;

/// Written bytes from the oldest unacknowledged one on.
#[derive(Debug, Clone, Default)]
pub struct SendBuffer {
    /// Sequence number of `data[0]`.
    base: u64,
    data: VecDeque<u8>,
}

impl SendBuffer {
    /// Nothing written.
    pub fn new() -> Self {
        SendBuffer::default()
    }

    /// One past the last byte written.
    pub fn end(&self) -> u64 {
        self.base + self.data.len() as u64
    }

    /// Bytes held: unacknowledged, sent or not.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when everything written has been acknowledged.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        self.data.extend(bytes);
    }

    /// Copies the bytes from sequence number `seq` on into `out`, which must lie within
    /// what is held (a segment being sent or re-sent).
    pub fn copy_out(&self, seq: u64, out: &mut [u8]) {
        debug_assert!(seq >= self.base && seq + out.len() as u64 <= self.end());
        let from = (seq - self.base) as usize;
        let (a, b) = self.data.as_slices();
        for (i, o) in out.iter_mut().enumerate() {
            let at = from + i;
            *o = if at < a.len() { a[at] } else { b[at - a.len()] };
        }
    }

    /// Forgets everything below `seq` (the cumulative acknowledgement).
    pub fn release(&mut self, seq: u64) {
        let n = seq.saturating_sub(self.base).min(self.data.len() as u64);
        self.data.drain(..n as usize);
        self.base += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_read_what_was_written_at_their_offsets() {
        let mut b = SendBuffer::new();
        b.write(&[1, 2, 3, 4]);
        b.write(&[5, 6]);
        assert_eq!(b.end(), 6);
        let mut out = [0; 3];
        b.copy_out(2, &mut out);
        assert_eq!(out, [3, 4, 5]);
        b.release(3);
        assert_eq!(b.len(), 3);
        let mut out = [0; 2];
        b.copy_out(4, &mut out);
        assert_eq!(out, [5, 6]);
        b.release(100);
        assert!(b.is_empty());
        assert_eq!(b.end(), 6, "the stream offset stays");
    }
}
