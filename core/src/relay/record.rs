//! Where each write to a relay connection stops: at the end of a frame, at most
//! [`RECORD_SIZE`] bytes after the last one (docs/protocol.md §7).
//!
//! c-toxcore 0.2.18 reads a relay stream one whole frame at a time (`TCP_common.c`
//! `read_packet_TCP_secure_connection` waits until the kernel holds the frame's every
//! byte). Linux frees a received segment's memory only once every byte of it is read,
//! and it appends arriving segments to the last one it holds when their bytes are
//! contiguous (on loopback and veth they are the sender's own buffers). If the segments we
//! send end inside frames, the reader always leaves the tail of that growing last segment
//! unread, so it is charged for everything appended to it until its receive buffer
//! (128 KB by default; c-toxcore never sizes it) is full. Then the segment with the rest
//! of the frame is refused, the reader waits for it behind a zero window, and nothing
//! moves until a ping timeout closes the connection, taking every friend and onion path on
//! it along. Seen as a rustox file to a c-toxcore client behind our relay stopping at
//! 300–500 KB whenever the machine was busy (`ss -tm` on the client: 1 385 bytes unread
//! holding 128 832 bytes of a 131 072-byte receive buffer, our retransmission of the rest
//! dropped again and again; auto_tests/tests/relay_udp_off_interop.rs).
//!
//! So every write is a *record*: whole frames (or the rest of one a short write cut), sent
//! with `MSG_EOR`, which stops the kernel from appending later writes to its segment
//! (tcp(7)). Each segment then ends at a frame end, and a reader that reads every whole
//! frame it holds frees every segment it was sent.

use std::collections::VecDeque;

/// The most bytes a record holds unless one frame (the largest is 2 050 bytes) or the
/// client's hello is longer: a few dozen frames, so a busy connection still writes in
/// large steps. It is also the largest segment a reader can be charged for while part of
/// it is unread (plus the kernel's ~1 KB of bookkeeping).
pub const RECORD_SIZE: usize = 8 * 1024;

/// Frame ends kept room for once drained: a few records of small frames. A burst of 64 KiB
/// of 20-byte frames would otherwise leave every connection holding ~26 KB of them.
const KEEP_ENDS: usize = 64;

/// The ends of the frames waiting in an output buffer, as byte counts since the
/// connection began, so the next write can stop at one.
#[derive(Debug, Default)]
pub struct FrameEnds {
    ends: VecDeque<u64>,
    /// Bytes written so far.
    written: u64,
}

impl FrameEnds {
    /// A frame (or other unit that must not be split across records, such as the hello)
    /// was appended; `pending` is how many bytes now wait, the frame included.
    pub fn pushed(&mut self, pending: usize) {
        self.ends
            .push_back(self.written.saturating_add(pending as u64));
    }

    /// `n` bytes of the front were written.
    pub fn consume(&mut self, n: usize) {
        self.written = self.written.saturating_add(n as u64);
        while self.ends.front().is_some_and(|&e| e <= self.written) {
            self.ends.pop_front();
        }
        if self.ends.is_empty() && self.ends.capacity() > KEEP_ENDS {
            // A drained connection gives the memory of a burst back, as its buffer does.
            self.ends = VecDeque::new();
        }
    }

    /// How many of the `pending` bytes at the front the next write should take: up to the
    /// last frame end within [`RECORD_SIZE`], or to the first frame end when that is
    /// further (a frame is never split by choice).
    pub fn record_len(&self, pending: usize) -> usize {
        let limit = self.written.saturating_add(RECORD_SIZE as u64);
        let within = self.ends.partition_point(|&e| e <= limit);
        let end = match within.checked_sub(1) {
            Some(last) => self.ends.get(last),
            None => self.ends.front(),
        };
        end.map_or(pending, |&e| {
            usize::try_from(e.saturating_sub(self.written)).unwrap_or(pending)
        })
        .min(pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_end_at_the_last_frame_end_within_the_size() {
        let mut ends = FrameEnds::default();
        let mut pending = 0;
        for _ in 0..10 {
            pending += 2050;
            ends.pushed(pending);
        }
        // Three whole 2 050-byte frames fit in 8 192 bytes; a fourth (8 200) does not.
        assert_eq!(ends.record_len(pending), 3 * 2050);
        ends.consume(3 * 2050);
        pending -= 3 * 2050;
        assert_eq!(ends.record_len(pending), 3 * 2050);
    }

    #[test]
    fn a_short_write_leaves_the_rest_of_its_frame_as_the_next_record_start() {
        let mut ends = FrameEnds::default();
        ends.pushed(100);
        ends.pushed(300);
        ends.consume(40);
        // 60 bytes finish the first frame; the second (200 bytes) fits too.
        assert_eq!(ends.record_len(260), 260);
        ends.consume(70);
        assert_eq!(ends.record_len(190), 190);
    }

    #[test]
    fn a_unit_longer_than_a_record_is_written_whole() {
        let mut ends = FrameEnds::default();
        ends.pushed(RECORD_SIZE + 500);
        ends.pushed(RECORD_SIZE + 600);
        assert_eq!(ends.record_len(RECORD_SIZE + 600), RECORD_SIZE + 500);
    }

    #[test]
    fn a_drained_burst_gives_its_memory_back() {
        let mut ends = FrameEnds::default();
        for i in 1..=4000 {
            ends.pushed(i * 20);
        }
        ends.consume(4000 * 20);
        assert_eq!(ends.ends.capacity(), 0);
        assert_eq!(ends.record_len(0), 0);
    }

    #[test]
    fn pending_bytes_bound_the_record() {
        let mut ends = FrameEnds::default();
        ends.pushed(10);
        assert_eq!(ends.record_len(4), 4);
        assert_eq!(FrameEnds::default().record_len(7), 7);
    }
}
