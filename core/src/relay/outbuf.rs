//! One relay connection's bytes waiting for its socket, bounded (docs/design.md principle 5):
//! the output buffer of both sides, the relay server's connection to a client and a client's
//! connection to a relay. The buffer, its write cursor and the frame-end records
//! (`relay::record`) are the same on both sides; what differs is the data limit each passes
//! from its configuration and the constants of its [`Side`].
//!
//! Frames are sealed with the next send nonce when they are queued, so they leave in nonce
//! order whatever their class, and a sealed frame must reach the peer or the stream is
//! broken: room is checked with [`OutBuf::admit`] *before* sealing, and a frame that does
//! not fit is refused, never dropped after the fact.
//!
//! Two classes share the buffer (c-toxcore 0.2.18 `TCP_common.c`
//! `write_packet_TCP_secure_connection` and its `priority` flag):
//! * data frames (relayed data, OOB and onion packets) are refused once they would take the
//!   buffer past its data limit. 0.2.18 keeps at most one partly sent ordinary frame per
//!   connection and refuses the next while it is pending: the server drops a slow reader's
//!   relayed data (net_crypto above resends it), and a client's refused send makes
//!   net_crypto set `maximum_speed_reached` and slow down.
//! * control frames (routing requests and responses, notifications, pings, pongs) may use a
//!   reserve above the data limit, so a queue full of data never holds back a pong. 0.2.18
//!   queues them in a list without a bound; past the reserve the peer has not read for so
//!   long that the caller closes the connection ([`Admit::Overflow`]).

use std::marker::PhantomData;

use crate::relay::record::FrameEnds;

/// Room a relay server keeps above its output limit for control frames: 256 of the largest
/// control frame it sends (a 52-byte routing response), more than a client's 240 routes can
/// cause at once.
pub const SERVER_CONTROL_RESERVE: usize = 256 * 52;

/// Room a client keeps above its data limit for control frames (ours). A control frame a
/// client sends is at most 2 + 16 + 33 = 51 bytes; 4 KiB holds 80 of them, far more than a
/// live relay leaves unread.
pub const CLIENT_CONTROL_RESERVE: usize = 4096;

/// Capacity above which a relay server's drained buffer gives its memory back, so that idle
/// connections cost no buffer after a burst (a handful of the largest frames).
const SERVER_KEEP_CAPACITY: usize = 4 * 2050;

/// Whether a frame is held to the data limit or may use the control reserve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameClass {
    /// Relayed or routed data, OOB and onion packets: refused at the data limit.
    Data,
    /// Routing, notifications, pings and pongs: may use the reserve.
    Control,
}

/// What happened to a frame offered to [`OutBuf::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// There is room: append it.
    Yes,
    /// A data frame and the buffer is full: refuse it.
    Full,
    /// A control frame beyond the reserve: the peer is not reading; close the connection.
    Overflow,
}

/// The limits of one side's buffers beside the data limit, which each side passes to
/// [`OutBuf::admit`] from its configuration. A type, not a field, so that a buffer costs no
/// byte more than its vectors and cursor.
pub trait Side {
    /// Bytes above the data limit that control frames may also fill.
    const CONTROL_RESERVE: usize;
    /// An empty buffer takes any frame, however large, so the largest frame always goes
    /// out whatever the limit.
    const EMPTY_TAKES_ANY: bool;
    /// Capacity above which a drained buffer gives its memory back; `None`: it keeps it.
    const KEEP_CAPACITY: Option<usize>;
}

/// A relay server's connection to a client: control frames [`SERVER_CONTROL_RESERVE`] above
/// the output limit, memory given back once drained.
#[derive(Debug, Default)]
pub struct ServerSide;

impl Side for ServerSide {
    const CONTROL_RESERVE: usize = SERVER_CONTROL_RESERVE;
    const EMPTY_TAKES_ANY: bool = false;
    const KEEP_CAPACITY: Option<usize> = Some(SERVER_KEEP_CAPACITY);
}

/// A client's connection to a relay: one frame of any size into an empty buffer, control
/// frames [`CLIENT_CONTROL_RESERVE`] above the output limit.
#[derive(Debug, Default)]
pub struct ClientSide;

impl Side for ClientSide {
    const CONTROL_RESERVE: usize = CLIENT_CONTROL_RESERVE;
    const EMPTY_TAKES_ANY: bool = true;
    const KEEP_CAPACITY: Option<usize> = None;
}

/// Bytes queued for one connection's socket, written out in records (`relay::record`).
#[derive(Debug)]
pub struct OutBuf<S: Side> {
    buf: Vec<u8>,
    /// Bytes before `start` are written already.
    start: usize,
    /// Where each frame (and the hello or handshake reply) ends, so that writes stop there.
    ends: FrameEnds,
    side: PhantomData<S>,
}

impl<S: Side> Default for OutBuf<S> {
    fn default() -> Self {
        OutBuf {
            buf: Vec::new(),
            start: 0,
            ends: FrameEnds::default(),
            side: PhantomData,
        }
    }
}

impl<S: Side> OutBuf<S> {
    /// Bytes waiting.
    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `size` more bytes of `class` may be queued, data frames up to `data_limit`.
    pub fn admit(&self, class: FrameClass, size: usize, data_limit: usize) -> Admit {
        let len = self.len();
        if S::EMPTY_TAKES_ANY && len == 0 {
            return Admit::Yes;
        }
        let after = len + size;
        match class {
            FrameClass::Data if after > data_limit => Admit::Full,
            FrameClass::Control if after > data_limit + S::CONTROL_RESERVE => Admit::Overflow,
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

    /// Appends bytes that are not a frame (the client's hello, the server's handshake reply)
    /// as one unit, whatever the limits.
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
    /// rest of a frame a short write cut, and the whole frames after it that fit; or one
    /// frame longer than a record); empty when nothing waits.
    pub fn front(&self) -> &[u8] {
        let pending = &self.buf[self.start..];
        &pending[..self.ends.record_len(pending.len())]
    }

    /// `n` bytes of [`Self::front`] were written (at most what waits counts).
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.len());
        self.ends.consume(n);
        self.start += n;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            if S::KEEP_CAPACITY.is_some_and(|keep| self.buf.capacity() > keep) {
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

    fn push<S: Side>(b: &mut OutBuf<S>, bytes: &[u8]) {
        b.append(|v| {
            v.extend_from_slice(bytes);
            Ok::<(), ()>(())
        })
        .unwrap();
    }

    /// The client's send under a data limit of `limit`: admitted, then appended; refused as
    /// a whole.
    fn push_checked(
        b: &mut OutBuf<ClientSide>,
        limit: usize,
        class: FrameClass,
        bytes: &[u8],
    ) -> Result<(), Admit> {
        match b.admit(class, bytes.len(), limit) {
            Admit::Yes => {
                push(b, bytes);
                Ok(())
            }
            refused => Err(refused),
        }
    }

    #[test]
    fn writes_stop_at_frame_ends() {
        let mut b = OutBuf::<ServerSide>::default();
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
        let mut b = OutBuf::<ServerSide>::default();
        assert_eq!(b.admit(FrameClass::Data, 100, 100), Admit::Yes);
        push(&mut b, &[0; 100]);
        assert_eq!(b.admit(FrameClass::Data, 1, 100), Admit::Full);
        assert_eq!(
            b.admit(FrameClass::Control, SERVER_CONTROL_RESERVE, 100),
            Admit::Yes
        );
        assert_eq!(
            b.admit(FrameClass::Control, SERVER_CONTROL_RESERVE + 1, 100),
            Admit::Overflow
        );
    }

    #[test]
    fn partial_writes_keep_order_and_drained_memory_is_returned() {
        let mut b = OutBuf::<ServerSide>::default();
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

    #[test]
    fn data_is_refused_past_the_limit_and_control_uses_the_reserve() {
        let mut out = OutBuf::<ClientSide>::default();
        push_checked(&mut out, 100, FrameClass::Data, &[1; 90]).unwrap();
        assert_eq!(
            push_checked(&mut out, 100, FrameClass::Data, &[2; 20]),
            Err(Admit::Full)
        );
        assert_eq!(out.len(), 90, "a refused frame leaves nothing behind");
        push_checked(&mut out, 100, FrameClass::Control, &[3; 20]).unwrap();
        assert_eq!(out.len(), 110);
        assert_eq!(
            push_checked(
                &mut out,
                100,
                FrameClass::Control,
                &[4; CLIENT_CONTROL_RESERVE]
            ),
            Err(Admit::Overflow)
        );
        assert_eq!(out.len(), 110);
    }

    #[test]
    fn an_empty_buffer_takes_a_frame_larger_than_the_limit() {
        let mut out = OutBuf::<ClientSide>::default();
        push_checked(&mut out, 10, FrameClass::Data, &[7; 50]).unwrap();
        assert_eq!(out.front().len(), 50);
    }

    #[test]
    fn a_failed_fill_queues_nothing() {
        let mut out = OutBuf::<ClientSide>::default();
        assert_eq!(out.append(|_| Err("no")), Err("no"));
        assert!(out.front().is_empty());
    }

    #[test]
    fn consume_frees_room_and_keeps_order() {
        let mut out = OutBuf::<ClientSide>::default();
        push_checked(&mut out, 10, FrameClass::Data, &[1, 2, 3, 4, 5, 6]).unwrap();
        assert_eq!(out.admit(FrameClass::Data, 5, 10), Admit::Full);
        out.consume(4);
        assert_eq!(out.front(), &[5, 6]);
        push_checked(&mut out, 10, FrameClass::Data, &[7, 8, 9, 10, 11]).unwrap();
        assert_eq!(out.front(), &[5, 6, 7, 8, 9, 10, 11]);
        out.consume(100);
        assert!(out.front().is_empty());
        assert_eq!(out.len(), 0);
    }
}
