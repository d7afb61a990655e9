//! One connection's bytes waiting for its socket, bounded (docs/design.md principle 5).
//!
//! c-toxcore 0.2.18 (`TCP_common.c` `write_packet_TCP_secure_connection`) keeps at most one
//! partly sent ordinary frame per connection and refuses the next ordinary frame while it is
//! pending, so a slow reader's relayed data is dropped (net_crypto above resends it); only
//! its control frames (routing responses, notifications, pings, pongs) are queued, in a list
//! without a bound. Here both have a bound: ordinary frames are accepted while fewer than
//! `limit` bytes wait, control frames while fewer than `limit + CONTROL_RESERVE` wait, and a
//! control frame beyond that means the peer has not read for so long that the connection is
//! closed. Frames are sealed when queued, so they leave in nonce order whatever their class.

use crate::relay::record::FrameEnds;

/// Room beyond the ordinary limit kept for control frames: 256 of the largest control
/// frame (a 52-byte routing response), more than a client's 240 routes can cause at once.
pub const CONTROL_RESERVE: usize = 256 * 52;

/// Capacity above which a drained buffer gives its memory back, so that idle connections
/// cost no buffer after a burst (a handful of the largest frames).
const KEEP_CAPACITY: usize = 4 * 2050;

/// Whether a frame is an ordinary one (dropped when the buffer is full) or a control frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Relayed data, OOB and onion responses: dropped when `limit` is reached.
    Ordinary,
    /// Routing responses, notifications, pings and pongs: queued up to the reserve.
    Control,
}

/// What happened to a frame offered to [`OutBuf::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// There is room: append it.
    Yes,
    /// An ordinary frame and the buffer is full: drop it.
    Full,
    /// A control frame beyond the reserve: the peer is not reading; close the connection.
    Overflow,
}

/// Bytes queued for one connection's socket, written out in records (`relay::record`).
#[derive(Debug, Default)]
pub struct OutBuf {
    buf: Vec<u8>,
    start: usize,
    /// Where each frame ends, so that writes stop there.
    ends: FrameEnds,
}

impl OutBuf {
    /// Bytes waiting.
    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `size` more bytes of `class` may be queued under `limit`.
    pub fn admit(&self, size: usize, class: Class, limit: usize) -> Admit {
        let after = self.len() + size;
        match class {
            Class::Ordinary if after > limit => Admit::Full,
            Class::Control if after > limit + CONTROL_RESERVE => Admit::Overflow,
            _ => Admit::Yes,
        }
    }

    /// Appends one admitted frame: `fill` writes it at the end of the vector it is given
    /// and must leave the vector as it found it when it fails.
    pub fn append<E>(&mut self, fill: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<(), E> {
        self.compact();
        fill(&mut self.buf)?;
        self.ends.pushed(self.len());
        Ok(())
    }

    /// Appends bytes that are not a frame (the handshake reply) as one unit.
    pub fn append_raw(&mut self, bytes: &[u8]) {
        self.compact();
        self.buf.extend_from_slice(bytes);
        self.ends.pushed(self.len());
    }

    /// Drops the written bytes once they are half the vector, so it stays within twice
    /// what waits.
    fn compact(&mut self) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }

    /// The next record to write: whole frames, at most `record::RECORD_SIZE` bytes (or the
    /// rest of a frame a short write cut, and the whole frames after it that fit).
    pub fn front(&self) -> &[u8] {
        let pending = &self.buf[self.start..];
        &pending[..self.ends.record_len(pending.len())]
    }

    /// `n` bytes of [`Self::front`] were written.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.len());
        self.ends.consume(n);
        self.start += n;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            if self.buf.capacity() > KEEP_CAPACITY {
                self.buf = Vec::new();
            }
        }
    }

    /// Heap bytes held (for the memory accounting of tests).
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(b: &mut OutBuf, bytes: &[u8]) {
        b.append(|v| {
            v.extend_from_slice(bytes);
            Ok::<(), ()>(())
        })
        .unwrap();
    }

    #[test]
    fn writes_stop_at_frame_ends() {
        let mut b = OutBuf::default();
        for _ in 0..8 {
            push(&mut b, &[9; 2000]);
        }
        assert_eq!(b.front().len(), 4 * 2000, "four frames in an 8 KiB record");
        b.consume(1500);
        assert_eq!(
            b.front().len(),
            500 + 3 * 2000,
            "the cut frame's rest, then whole ones"
        );
    }

    #[test]
    fn ordinary_frames_stop_at_the_limit_control_frames_at_the_reserve() {
        let mut b = OutBuf::default();
        assert_eq!(b.admit(100, Class::Ordinary, 100), Admit::Yes);
        push(&mut b, &[0; 100]);
        assert_eq!(b.admit(1, Class::Ordinary, 100), Admit::Full);
        assert_eq!(b.admit(CONTROL_RESERVE, Class::Control, 100), Admit::Yes);
        assert_eq!(
            b.admit(CONTROL_RESERVE + 1, Class::Control, 100),
            Admit::Overflow
        );
    }

    #[test]
    fn partial_writes_keep_order_and_drained_memory_is_returned() {
        let mut b = OutBuf::default();
        push(&mut b, &[1, 2, 3, 4]);
        b.consume(3);
        assert_eq!(b.front(), &[4]);
        push(&mut b, &[5]);
        assert_eq!(b.front(), &[4, 5]);
        b.consume(2);
        assert!(b.is_empty());
        push(&mut b, &vec![0; 100_000]);
        b.consume(100_000);
        assert_eq!(b.capacity(), 0);
    }
}
