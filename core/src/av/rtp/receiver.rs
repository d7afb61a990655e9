//! [`RtpReceiver`]: the receiving half of rtp.c's `RTPSession` (`handle_rtp_packet`;
//! docs/protocol.md §13.2).
//!
//! Two paths, chosen per packet as c-toxcore chooses them:
//! * Video packets with `RTP_LARGE_FRAME` go to the work buffers (`handle_video_packet`):
//!   at most [`WORK_BUFFERS`] frames in assembly, oldest first. A piece of a frame being
//!   assembled joins it; a new frame takes a free buffer unless it is older than the newest
//!   one; with every buffer taken, the oldest frame is given up — unless it is a key frame
//!   younger than 15 ms than the new frame and the new frame is not a key frame, in which
//!   case the new piece is dropped (`get_slot`). A frame behind an unfinished key frame
//!   waits for it (`process_frame`).
//! * Everything else (audio, and video from senders without large frames) takes the old
//!   16-bit path: a frame in one packet is delivered at once; a frame in pieces is assembled
//!   in the one multi-part buffer (`session->mp`), which a newer frame replaces.
//!
//! Where rustox differs from c-toxcore (the wire is unchanged): c-toxcore hands frames it
//! gave up on to the decoder with their holes zeroed, and delivers a late frame after a
//! newer one; rustox delivers only whole frames, oldest first, and counts the rest. When a
//! newer frame is complete, older unfinished ones that are not key frames are given up at
//! once (c-toxcore would deliver them later, out of order). A frame is at most
//! [`MAX_VIDEO_FRAME_LEN`] bytes (c-toxcore allocates whatever a header claims), and pieces
//! are checked against their frame's bounds (see `assembly.rs`). Timestamps are compared
//! modulo 2³² (see `earlier`), where c-toxcore compares them plainly.
//!
//! Loss for the bandwidth controller (`update_bwc_values`, `bwc_add_recv`): a video frame
//! delivered or given up counts its whole length as received and its missing bytes as lost,
//! except the first frames of the session ([`DISMISSED_FIRST_FRAMES`]); the old path counts
//! every accepted packet's header and piece as received and never counts loss.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::VecDeque;

use rustox_net_crypto::Timestamp;

use super::assembly::Assembly;
use super::{MediaKind, RtpError, RtpHeader, RTP_HEADER_LEN};

/// `USED_RTP_WORKBUFFER_COUNT` (rtp.h): video frames in assembly at once.
pub const WORK_BUFFERS: usize = 3;
/// `VIDEO_KEEP_KEYFRAME_IN_BUFFER_FOR_MS` (rtp.c): how long an unfinished key frame holds
/// its buffer against newer frames, in the sender's timestamp units (milliseconds).
const KEEP_KEYFRAME_MS: u32 = 15;
/// `DISMISS_FIRST_LOST_VIDEO_PACKET_COUNT` (rtp.h); the counter starts at 1
/// (`rtp_new`), so the first 9 video frames are left out of the loss counts.
pub const DISMISSED_FIRST_FRAMES: u8 = 10;
/// The largest video frame a receiver assembles. rtp.c allocates what `data_length_full`
/// says (up to 4 GiB); a VP8 key frame at the sizes toxav sends is far below 1 MiB, so
/// 4 MiB leaves room and bounds what a peer can make us hold (three buffers).
pub const MAX_VIDEO_FRAME_LEN: u32 = 4 << 20;
/// The largest frame on the old path: its length field has 16 bits.
pub const MAX_AUDIO_FRAME_LEN: u32 = u16::MAX as u32;
/// Frames held for [`RtpReceiver::poll_frame`]; a caller that never polls loses the oldest.
const MAX_READY: usize = 16;
/// Frames finished (delivered or given up) remembered, so that a late or repeated piece of
/// one does not start it again.
const FINISHED_REMEMBERED: usize = 8;

/// `a` is an earlier timestamp than `b`: less than 2³¹ ms behind it, so that a sender's
/// clock wrapping (every 49.7 days of its uptime) does not make every later frame look old
/// (c-toxcore compares plainly).
fn earlier(a: u32, b: u32) -> bool {
    let d = b.wrapping_sub(a);
    d != 0 && d < 1 << 31
}

/// One reassembled frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtpFrame {
    /// Audio or video.
    pub kind: MediaKind,
    /// The frame's sequence number.
    pub sequence: u16,
    /// The frame's timestamp as the sender wrote it.
    pub timestamp: u32,
    /// `RTP_KEY_FRAME` was set.
    pub keyframe: bool,
    /// The frame's bytes (for audio, toxav's 4-byte sampling rate then the Opus packet).
    pub data: Vec<u8>,
}

/// What a receiver delivered, gave up and refused so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RtpStats {
    /// Whole frames delivered.
    pub frames: u64,
    /// Frames given up unfinished.
    pub frames_incomplete: u64,
    /// Bytes of given-up frames that never arrived.
    pub bytes_missing: u64,
    /// Packets refused (every `Err` of [`RtpReceiver::handle_packet`]).
    pub packets_refused: u64,
    /// Whole frames dropped because [`RtpReceiver::poll_frame`] was not called.
    pub frames_unpolled: u64,
}

/// A frame in assembly.
#[derive(Debug)]
struct Slot {
    sequence: u16,
    timestamp: u32,
    keyframe: bool,
    assembly: Assembly,
}

impl Slot {
    fn new(header: &RtpHeader, full_len: u32) -> Slot {
        Slot {
            sequence: header.sequence,
            timestamp: header.timestamp,
            keyframe: header.is_keyframe(),
            assembly: Assembly::new(full_len),
        }
    }

    fn is_frame_of(&self, header: &RtpHeader) -> bool {
        self.sequence == header.sequence && self.timestamp == header.timestamp
    }
}

/// The receiving half of one media stream of one call; see the module comment.
#[derive(Debug)]
pub struct RtpReceiver {
    kind: MediaKind,
    /// The work buffers, oldest first (`RTPWorkBufferList`).
    slots: Vec<Slot>,
    /// The old path's multi-part frame (`session->mp`).
    partial: Option<Slot>,
    /// Frames finished and not yet handed out; at most [`MAX_READY`].
    ready: VecDeque<RtpFrame>,
    /// (sequence, timestamp) of frames finished lately, and the newest timestamp of them.
    finished: VecDeque<(u16, u32)>,
    newest_finished: Option<u32>,
    /// `first_packets_counter`.
    first_frames: u8,
    lost: u32,
    received: u32,
    stats: RtpStats,
}

impl RtpReceiver {
    /// A receiver for packets of `kind` (`rtp_new`).
    pub fn new(kind: MediaKind) -> RtpReceiver {
        RtpReceiver {
            kind,
            slots: Vec::with_capacity(WORK_BUFFERS),
            partial: None,
            ready: VecDeque::new(),
            finished: VecDeque::with_capacity(FINISHED_REMEMBERED),
            newest_finished: None,
            first_frames: 1,
            lost: 0,
            received: 0,
            stats: RtpStats::default(),
        }
    }

    /// `handle_rtp_packet`: one lossy packet, id byte first. Returns a frame this packet
    /// finished, if any; when one packet finishes more than one frame (frames that waited
    /// behind a key frame), the others come out of [`RtpReceiver::poll_frame`]. An error
    /// changes nothing but the refusal count.
    pub fn handle_packet(
        &mut self,
        _now: Timestamp,
        packet_with_id: &[u8],
    ) -> Result<Option<RtpFrame>, RtpError> {
        match self.accept(packet_with_id) {
            Ok(()) => Ok(self.ready.pop_front()),
            Err(e) => {
                self.stats.packets_refused = self.stats.packets_refused.saturating_add(1);
                Err(e)
            }
        }
    }

    /// A further frame finished by the last packet, oldest first.
    pub fn poll_frame(&mut self) -> Option<RtpFrame> {
        self.ready.pop_front()
    }

    /// Bytes lost and bytes received since the last call, for the bandwidth controller's
    /// report (`bwc_add_lost`, `bwc_add_recv`); both start again from 0.
    pub fn take_loss_counts(&mut self) -> (u32, u32) {
        let counts = (self.lost, self.received);
        self.lost = 0;
        self.received = 0;
        counts
    }

    /// What was delivered, given up and refused so far.
    pub fn stats(&self) -> RtpStats {
        self.stats
    }

    fn accept(&mut self, packet: &[u8]) -> Result<(), RtpError> {
        let (&id, rest) = packet.split_first().ok_or(RtpError::TooShort(0))?;
        if rest.len() <= RTP_HEADER_LEN.saturating_sub(1) {
            return Err(RtpError::TooShort(packet.len()));
        }
        if id != self.kind.packet_id() {
            return Err(RtpError::WrongId(id));
        }
        let header = RtpHeader::parse(rest)?;
        if header.payload_type != self.kind.payload_type() {
            return Err(RtpError::PayloadType(header.payload_type));
        }
        if header.is_large_frame() && header.offset_full >= header.data_length_full {
            return Err(RtpError::BadOffset);
        }
        if header.offset_lower >= header.data_length_lower {
            return Err(RtpError::BadOffset);
        }
        let piece = rest.get(RTP_HEADER_LEN..).unwrap_or_default();
        if header.is_large_frame() && self.kind == MediaKind::Video {
            self.video_piece(&header, piece)
        } else {
            self.old_path_piece(&header, piece)
        }
    }

    /// `handle_video_packet`.
    fn video_piece(&mut self, header: &RtpHeader, piece: &[u8]) -> Result<(), RtpError> {
        let full = header.data_length_full;
        if full > MAX_VIDEO_FRAME_LEN {
            return Err(RtpError::FrameTooLarge(full));
        }
        let piece_len = u32::try_from(piece.len()).map_err(|_| RtpError::PieceOutOfBounds)?;
        let multipart = full != piece_len;
        let existing = if multipart {
            self.slots.iter().position(|s| s.is_frame_of(header))
        } else {
            None
        };
        let index = match existing {
            Some(index) => index,
            None => {
                self.check_not_finished(header)?;
                // Check the piece before a buffer is taken or given up for it.
                Assembly::new(full).add(header.offset_full, piece)?;
                self.take_slot(header)?
            }
        };
        let slot = self.slots.get_mut(index).ok_or(RtpError::Stale)?;
        if slot.assembly.full_len() != full {
            return Err(RtpError::LengthMismatch);
        }
        slot.assembly.add(header.offset_full, piece)?;
        self.drain_slots();
        Ok(())
    }

    /// A late or repeated piece of a frame already finished.
    fn check_not_finished(&self, header: &RtpHeader) -> Result<(), RtpError> {
        let late = self
            .newest_finished
            .is_some_and(|newest| earlier(header.timestamp, newest));
        let repeated = self
            .finished
            .iter()
            .any(|&(s, t)| s == header.sequence && t == header.timestamp);
        if late || repeated {
            return Err(RtpError::Stale);
        }
        Ok(())
    }

    /// `get_slot` for a frame without a buffer: the index of a new, empty buffer for it.
    fn take_slot(&mut self, header: &RtpHeader) -> Result<usize, RtpError> {
        if self.slots.len() >= WORK_BUFFERS {
            let oldest = self.slots.first().ok_or(RtpError::Stale)?;
            let keep_oldest = !header.is_keyframe()
                && oldest.keyframe
                && !oldest.assembly.is_complete()
                && earlier(
                    header.timestamp,
                    oldest.timestamp.wrapping_add(KEEP_KEYFRAME_MS),
                );
            if keep_oldest {
                return Err(RtpError::Stale);
            }
            self.finish_front();
            self.drain_slots();
        }
        if self
            .slots
            .last()
            .is_some_and(|newest| earlier(header.timestamp, newest.timestamp))
        {
            return Err(RtpError::Stale);
        }
        self.slots.push(Slot::new(header, header.data_length_full));
        Ok(self.slots.len().saturating_sub(1))
    }

    /// `process_frame` after every piece: hands out the oldest frames that are complete;
    /// gives up an unfinished frame (not a key frame) that a newer complete frame passed.
    fn drain_slots(&mut self) {
        while let Some(first) = self.slots.first() {
            let passed =
                !first.keyframe && self.slots.iter().skip(1).any(|s| s.assembly.is_complete());
            if first.assembly.is_complete() || passed {
                self.finish_front();
            } else {
                break;
            }
        }
    }

    /// Takes the oldest work buffer out: delivered when complete, given up otherwise; its
    /// bytes go into the loss counts (`update_bwc_values`).
    fn finish_front(&mut self) {
        if self.slots.is_empty() {
            return;
        }
        let slot = self.slots.remove(0);
        let full = slot.assembly.full_len();
        let missing = full.saturating_sub(slot.assembly.received());
        if self.first_frames < DISMISSED_FIRST_FRAMES {
            self.first_frames = self.first_frames.saturating_add(1);
        } else {
            self.received = self.received.saturating_add(full);
            self.lost = self.lost.saturating_add(missing);
        }
        self.finish(slot);
    }

    /// Records a frame as finished; delivers it when whole, counts it when not.
    fn finish(&mut self, slot: Slot) {
        if self.finished.len() >= FINISHED_REMEMBERED {
            self.finished.pop_front();
        }
        self.finished.push_back((slot.sequence, slot.timestamp));
        self.newest_finished = Some(match self.newest_finished {
            Some(t) if earlier(slot.timestamp, t) => t,
            _ => slot.timestamp,
        });
        if slot.assembly.is_complete() {
            self.stats.frames = self.stats.frames.saturating_add(1);
            if self.ready.len() >= MAX_READY {
                self.ready.pop_front();
                self.stats.frames_unpolled = self.stats.frames_unpolled.saturating_add(1);
            }
            self.ready.push_back(RtpFrame {
                kind: self.kind,
                sequence: slot.sequence,
                timestamp: slot.timestamp,
                keyframe: slot.keyframe,
                data: slot.assembly.into_data(),
            });
        } else {
            let missing = slot
                .assembly
                .full_len()
                .saturating_sub(slot.assembly.received());
            self.stats.frames_incomplete = self.stats.frames_incomplete.saturating_add(1);
            self.stats.bytes_missing = self.stats.bytes_missing.saturating_add(missing.into());
        }
    }

    /// The old 16-bit path of `handle_rtp_packet`.
    fn old_path_piece(&mut self, header: &RtpHeader, piece: &[u8]) -> Result<(), RtpError> {
        let full = u32::from(header.data_length_lower);
        let offset = u32::from(header.offset_lower);
        // bwc_add_recv(length): the header and the piece, without the id byte.
        let counted = u32::try_from(RTP_HEADER_LEN.saturating_add(piece.len())).unwrap_or(0);
        if usize::from(header.data_length_lower) == piece.len() {
            // A frame in one packet; an unfinished multi-part frame is given up.
            let mut slot = Slot::new(header, full);
            slot.assembly.add(0, piece)?;
            if let Some(old) = self.partial.take() {
                self.finish(old);
            }
            self.received = self.received.saturating_add(counted);
            self.finish(slot);
            return Ok(());
        }
        if let Some(partial) = self.partial.as_mut() {
            if partial.is_frame_of(header) {
                if partial.assembly.full_len() != full {
                    return Err(RtpError::LengthMismatch);
                }
                partial.assembly.add(offset, piece)?;
                self.received = self.received.saturating_add(counted);
                if partial.assembly.is_complete() {
                    if let Some(done) = self.partial.take() {
                        self.finish(done);
                    }
                }
                return Ok(());
            }
            if earlier(header.timestamp, partial.timestamp) {
                return Err(RtpError::Stale);
            }
        }
        let mut slot = Slot::new(header, full);
        slot.assembly.add(offset, piece)?;
        if let Some(old) = self.partial.replace(slot) {
            self.finish(old);
        }
        self.received = self.received.saturating_add(counted);
        Ok(())
    }
}
