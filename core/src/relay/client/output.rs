//! The bytes of one relay connection waiting for the driver to write them, bounded.
//!
//! Frames are sealed with the next send nonce, so a frame once sealed must reach the relay
//! or the stream is broken: room is checked *before* sealing, and a frame that does not
//! fit is refused, never dropped after the fact.
//!
//! Two classes share the buffer (c-toxcore 0.2.18 `TCP_common.c`
//! `write_packet_TCP_secure_connection`'s `priority` flag):
//! * data frames (routed data, OOB, onion) are refused when they would take the buffer
//!   past its data limit (the connection's output limit). The caller sees
//!   [`PushError::Full`]: 0.2.18's failed send, which makes net_crypto set
//!   `maximum_speed_reached` and slow down.
//! * control frames (routing requests, disconnect notifications, pings, pongs) may use
//!   [`CONTROL_RESERVE`] more, so a queue full of data never holds back a pong. 0.2.18
//!   queues them without bound; past the reserve the relay has not read for a long
//!   while and the caller closes the connection.

use crate::relay::record::FrameEnds;

/// Room kept above the data limit for control frames (ours). A control frame is at most
/// 2 + 16 + 33 = 51 bytes; 4 KiB holds 80 of them, far more than a live relay leaves
/// unread.
pub const CONTROL_RESERVE: usize = 4096;

/// Why a frame was not queued; nothing was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PushError<E> {
    /// Too full for the frame.
    Full,
    /// The frame could not be made.
    Fill(E),
}

/// Which limit a frame is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FrameClass {
    /// Routed data, OOB and onion packets: held to the data limit.
    Data,
    /// Routing, notifications, ping and pong: may use the reserve.
    Control,
}

/// A byte queue with a hard size limit, written out in records (`relay::record`).
#[derive(Debug)]
pub(super) struct OutputBuffer {
    buf: Vec<u8>,
    /// Bytes before `head` are written already.
    head: usize,
    data_limit: usize,
    /// Where the hello and each frame end, so that writes stop there.
    ends: FrameEnds,
}

impl OutputBuffer {
    /// An empty buffer that accepts data frames while it holds fewer than `data_limit`
    /// bytes (and any frame while empty, so the largest frame always goes out).
    pub(super) fn new(data_limit: usize) -> Self {
        OutputBuffer {
            buf: Vec::new(),
            head: 0,
            data_limit,
            ends: FrameEnds::default(),
        }
    }

    /// Bytes not yet written.
    pub(super) fn len(&self) -> usize {
        self.buf.len() - self.head
    }

    /// Whether `n` more bytes of `class` fit.
    pub(super) fn has_room(&self, class: FrameClass, n: usize) -> bool {
        let len = self.len();
        let limit = match class {
            FrameClass::Data => self.data_limit,
            FrameClass::Control => self.data_limit + CONTROL_RESERVE,
        };
        len == 0 || len + n <= limit
    }

    /// Appends the `n` bytes `fill` writes, if they fit. `fill` must leave the buffer as
    /// it found it when it fails.
    pub(super) fn push_with<E>(
        &mut self,
        class: FrameClass,
        n: usize,
        fill: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), PushError<E>> {
        if !self.has_room(class, n) {
            return Err(PushError::Full);
        }
        self.compact();
        let before = self.buf.len();
        fill(&mut self.buf).map_err(PushError::Fill)?;
        debug_assert_eq!(self.buf.len() - before, n, "frame length as announced");
        self.ends.pushed(self.len());
        Ok(())
    }

    /// Appends raw bytes (the unframed hello) regardless of the limits.
    pub(super) fn push_raw(&mut self, bytes: &[u8]) {
        self.compact();
        self.buf.extend_from_slice(bytes);
        self.ends.pushed(self.len());
    }

    /// The next record to write (whole frames, at most `record::RECORD_SIZE` bytes unless
    /// one frame is longer); empty when nothing waits.
    pub(super) fn pending(&self) -> &[u8] {
        let pending = &self.buf[self.head..];
        &pending[..self.ends.record_len(pending.len())]
    }

    /// Marks `n` bytes as written (at most what is pending).
    pub(super) fn consume(&mut self, n: usize) {
        let n = n.min(self.len());
        self.ends.consume(n);
        self.head += n;
        if self.head == self.buf.len() {
            self.buf.clear();
            self.head = 0;
        }
    }

    /// Moves the unwritten bytes to the front once the written ones are the larger part,
    /// so the vector never grows past twice the limit.
    fn compact(&mut self) {
        if self.head > 0 && self.head >= self.len() {
            self.buf.drain(..self.head);
            self.head = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(out: &mut OutputBuffer, class: FrameClass, bytes: &[u8]) -> Result<(), PushError<()>> {
        out.push_with(class, bytes.len(), |b| {
            b.extend_from_slice(bytes);
            Ok(())
        })
    }

    #[test]
    fn data_is_refused_past_the_limit_and_control_uses_the_reserve() {
        let mut out = OutputBuffer::new(100);
        push(&mut out, FrameClass::Data, &[1; 90]).unwrap();
        assert_eq!(
            push(&mut out, FrameClass::Data, &[2; 20]),
            Err(PushError::Full)
        );
        assert_eq!(out.len(), 90, "a refused frame leaves nothing behind");
        push(&mut out, FrameClass::Control, &[3; 20]).unwrap();
        assert_eq!(out.len(), 110);
        assert_eq!(
            push(&mut out, FrameClass::Control, &[4; CONTROL_RESERVE]),
            Err(PushError::Full)
        );
        assert_eq!(out.len(), 110);
    }

    #[test]
    fn an_empty_buffer_takes_a_frame_larger_than_the_limit() {
        let mut out = OutputBuffer::new(10);
        push(&mut out, FrameClass::Data, &[7; 50]).unwrap();
        assert_eq!(out.pending().len(), 50);
    }

    #[test]
    fn a_failed_fill_queues_nothing() {
        let mut out = OutputBuffer::new(10);
        assert_eq!(
            out.push_with(FrameClass::Data, 3, |_| Err("no")),
            Err(PushError::Fill("no"))
        );
        assert!(out.pending().is_empty());
    }

    #[test]
    fn consume_frees_room_and_keeps_order() {
        let mut out = OutputBuffer::new(10);
        push(&mut out, FrameClass::Data, &[1, 2, 3, 4, 5, 6]).unwrap();
        assert!(!out.has_room(FrameClass::Data, 5));
        out.consume(4);
        assert_eq!(out.pending(), &[5, 6]);
        push(&mut out, FrameClass::Data, &[7, 8, 9, 10, 11]).unwrap();
        assert_eq!(out.pending(), &[5, 6, 7, 8, 9, 10, 11]);
        out.consume(100);
        assert!(out.pending().is_empty());
        assert_eq!(out.len(), 0);
    }
}
