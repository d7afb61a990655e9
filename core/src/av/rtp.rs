//! RTP as c-toxcore 0.2.18 frames it (`toxav/rtp.c`, `rtp.h`; docs/protocol.md §13.2): the
//! 80-byte header, a frame split into lossy friend packets ([`RtpSender`]), and reassembly
//! ([`RtpReceiver`], in `rtp/receiver.rs`).
//!
//! A packet is the id byte (192 audio, 193 video), the header, then a piece of the frame:
//!
//! | offset | length | content |
//! |---|---|---|
//! | 0 | 1 | version (2 bits, 2), padding (1 bit), extension (1 bit), CSRC count (4 bits) |
//! | 1 | 1 | marker (1 bit), payload type (7 bits): the packet id mod 128 (64, 65) |
//! | 2 | 2 | sequence number of the frame, big-endian |
//! | 4 | 4 | timestamp of the frame (the sender's monotonic milliseconds) |
//! | 8 | 4 | SSRC (random for audio, 0 for video in c-toxcore; nobody reads it) |
//! | 12 | 8 | flags: bit 0 `RTP_LARGE_FRAME`, bit 1 `RTP_KEY_FRAME` |
//! | 20 | 4 | `offset_full`: where this piece starts in the frame |
//! | 24 | 4 | `data_length_full`: the frame's whole length |
//! | 28 | 4 | `received_length_full`: only the receiver uses it; senders write 0 |
//! | 32 | 44 | 11 × u32 padding, written 0, ignored |
//! | 76 | 2 | `offset_lower`: `offset_full` truncated to 16 bits |
//! | 78 | 2 | `data_length_lower`: the frame length, at most 65535 |
//!
//! `rtp_send_data` sets `RTP_LARGE_FRAME` on every video packet (the receiver then reads the
//! 32-bit fields) and never on audio (the receiver reads the 16-bit ones). A frame goes in one
//! packet when it and the header fit in a lossy packet (`MAX_CRYPTO_DATA_SIZE`, 1373 bytes
//! with the id), else in pieces of 1292 bytes, the last one shorter; every piece of a frame
//! carries the same sequence number and timestamp.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod assembly;
mod receiver;

pub use receiver::{RtpFrame, RtpReceiver, RtpStats, MAX_AUDIO_FRAME_LEN, MAX_VIDEO_FRAME_LEN};

use rustox_net_crypto::wire::Reader;

/// `RTP_HEADER_SIZE` (rtp.h).
pub const RTP_HEADER_LEN: usize = 80;
/// `RTP_TYPE_AUDIO`: audio's lossy packet id.
pub const PACKET_ID_AUDIO: u8 = 192;
/// `RTP_TYPE_VIDEO`: video's lossy packet id.
pub const PACKET_ID_VIDEO: u8 = 193;
/// `RTP_LARGE_FRAME` (rtp.h): the 32-bit offset and length fields are the ones to read.
pub const FLAG_LARGE_FRAME: u64 = 1;
/// `RTP_KEY_FRAME` (rtp.h): the packet is part of a key frame.
pub const FLAG_KEY_FRAME: u64 = 2;
/// `MAX_CRYPTO_DATA_SIZE` (net_crypto.h: 1400 − 27): the largest lossy friend packet, id
/// byte included.
pub const MAX_PACKET_LEN: usize = 1373;
/// The frame bytes one packet carries when a frame is split: what is left of
/// [`MAX_PACKET_LEN`] after the id byte and the header (rtp_send_data's `piece`).
pub const MAX_PIECE_LEN: usize = MAX_PACKET_LEN - 1 - RTP_HEADER_LEN;
/// `RTP_PADDING_FIELDS` (rtp.h): 11 u32s of zeros between the full and the lower fields.
const PADDING_LEN: usize = 11 * 4;
/// The version `rtp_send_data` writes (nobody checks it).
const RTP_VERSION: u8 = 2;

/// Why an RTP packet was refused; each a `return -1` of `handle_rtp_packet` or a bound
/// rustox adds (see [`RtpReceiver`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RtpError {
    /// Shorter than the id byte and the 80-byte header.
    #[error("RTP packet too short: {0} bytes")]
    TooShort(usize),
    /// The id byte is not this receiver's (192 for audio, 193 for video).
    #[error("packet id {0} is not this RTP session's")]
    WrongId(u8),
    /// The header's payload type is not the packet id mod 128.
    #[error("payload type {0} does not match the packet id")]
    PayloadType(u8),
    /// `offset_full >= data_length_full` with `RTP_LARGE_FRAME`, or `offset_lower >=
    /// data_length_lower`.
    #[error("piece offset beyond the frame length")]
    BadOffset,
    /// The piece runs past the frame's end (c-toxcore writes past its buffer here).
    #[error("piece runs past the frame's end")]
    PieceOutOfBounds,
    /// The frame is longer than this receiver keeps ([`MAX_VIDEO_FRAME_LEN`]).
    #[error("frame of {0} bytes is too large")]
    FrameTooLarge(u32),
    /// A piece names a frame length other than its frame's earlier pieces.
    #[error("piece disagrees with its frame's length")]
    LengthMismatch,
    /// A piece overlaps a different piece of the same frame.
    #[error("piece overlaps another piece")]
    Overlap,
    /// A frame split into more pieces than the receiver keeps track of.
    #[error("frame split into too many pieces")]
    TooManyPieces,
    /// The piece belongs to a frame older than the ones being assembled (get_slot's
    /// `GET_SLOT_RESULT_DROP_INCOMING`), or to one already delivered or dropped.
    #[error("piece of an old frame")]
    Stale,
}

/// `struct RTPHeader` (rtp.h), every field; the bit fields hold only their low bits on the
/// wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RtpHeader {
    /// `ve`: 2 bits.
    pub version: u8,
    /// `pe`.
    pub padding: bool,
    /// `xe`.
    pub extension: bool,
    /// `cc`: 4 bits.
    pub csrc_count: u8,
    /// `ma`.
    pub marker: bool,
    /// `pt`: 7 bits, the packet id mod 128.
    pub payload_type: u8,
    /// `sequnum`: the frame's number, one per frame, wrapping.
    pub sequence: u16,
    /// `timestamp`.
    pub timestamp: u32,
    /// `ssrc`.
    pub ssrc: u32,
    /// `flags`: [`FLAG_LARGE_FRAME`], [`FLAG_KEY_FRAME`].
    pub flags: u64,
    /// `offset_full`.
    pub offset_full: u32,
    /// `data_length_full`.
    pub data_length_full: u32,
    /// `received_length_full`.
    pub received_length_full: u32,
    /// `offset_lower`.
    pub offset_lower: u16,
    /// `data_length_lower`.
    pub data_length_lower: u16,
}

impl RtpHeader {
    /// `rtp_header_unpack`: the first 80 bytes of `bytes` (the packet after its id byte);
    /// the padding is skipped unread, bytes after the header are the caller's.
    pub fn parse(bytes: &[u8]) -> Result<RtpHeader, RtpError> {
        let mut r = Reader::new(bytes);
        let short = |_| RtpError::TooShort(bytes.len());
        let [first, second] = r.array::<2>().map_err(short)?;
        let sequence = r.u16_be().map_err(short)?;
        let timestamp = r.u32_be().map_err(short)?;
        let ssrc = r.u32_be().map_err(short)?;
        let flags = r.u64_be().map_err(short)?;
        let offset_full = r.u32_be().map_err(short)?;
        let data_length_full = r.u32_be().map_err(short)?;
        let received_length_full = r.u32_be().map_err(short)?;
        r.array::<PADDING_LEN>().map_err(short)?;
        let offset_lower = r.u16_be().map_err(short)?;
        let data_length_lower = r.u16_be().map_err(short)?;
        Ok(RtpHeader {
            version: (first >> 6) & 3,
            padding: (first >> 5) & 1 == 1,
            extension: (first >> 4) & 1 == 1,
            csrc_count: first & 0xf,
            marker: (second >> 7) & 1 == 1,
            payload_type: second & 0x7f,
            sequence,
            timestamp,
            ssrc,
            flags,
            offset_full,
            data_length_full,
            received_length_full,
            offset_lower,
            data_length_lower,
        })
    }

    /// `rtp_header_pack`: bit fields masked to their width, padding zero.
    pub fn encode(&self) -> [u8; RTP_HEADER_LEN] {
        let mut out = [0u8; RTP_HEADER_LEN];
        let mut w = Writer(&mut out[..]);
        w.put(&[
            (self.version & 3) << 6
                | u8::from(self.padding) << 5
                | u8::from(self.extension) << 4
                | (self.csrc_count & 0xf),
            u8::from(self.marker) << 7 | (self.payload_type & 0x7f),
        ]);
        w.put(&self.sequence.to_be_bytes());
        w.put(&self.timestamp.to_be_bytes());
        w.put(&self.ssrc.to_be_bytes());
        w.put(&self.flags.to_be_bytes());
        w.put(&self.offset_full.to_be_bytes());
        w.put(&self.data_length_full.to_be_bytes());
        w.put(&self.received_length_full.to_be_bytes());
        w.put(&[0; PADDING_LEN]);
        w.put(&self.offset_lower.to_be_bytes());
        w.put(&self.data_length_lower.to_be_bytes());
        out
    }

    /// `RTP_LARGE_FRAME` is set.
    pub fn is_large_frame(&self) -> bool {
        self.flags & FLAG_LARGE_FRAME != 0
    }

    /// `RTP_KEY_FRAME` is set.
    pub fn is_keyframe(&self) -> bool {
        self.flags & FLAG_KEY_FRAME != 0
    }
}

/// Writes consecutive fields into a fixed buffer (the header's size is fixed, so every
/// write fits; a write that would not is dropped rather than panicking).
struct Writer<'a>(&'a mut [u8]);

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let buf = std::mem::take(&mut self.0);
        if let Some((head, rest)) = buf.split_at_mut_checked(bytes.len()) {
            head.copy_from_slice(bytes);
            self.0 = rest;
        }
    }
}

/// Audio or video: which packet id, which receive path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// Packet 192, the 16-bit fields.
    Audio,
    /// Packet 193, `RTP_LARGE_FRAME` and the 32-bit fields.
    Video,
}

impl MediaKind {
    /// The lossy packet id.
    pub fn packet_id(self) -> u8 {
        match self {
            MediaKind::Audio => PACKET_ID_AUDIO,
            MediaKind::Video => PACKET_ID_VIDEO,
        }
    }

    /// The header's payload type: the packet id mod 128.
    pub fn payload_type(self) -> u8 {
        self.packet_id() & 0x7f
    }
}

/// The sending half of `RTPSession`: the sequence number, and `rtp_send_data`'s split.
#[derive(Debug, Clone)]
pub struct RtpSender {
    kind: MediaKind,
    ssrc: u32,
    sequence: u16,
}

impl RtpSender {
    /// A session starting at sequence number 0 (`rtp_new`'s calloc). c-toxcore picks a
    /// random `ssrc` for audio and 0 for video; the caller passes what it wants.
    pub fn new(kind: MediaKind, ssrc: u32) -> RtpSender {
        RtpSender {
            kind,
            ssrc,
            sequence: 0,
        }
    }

    /// The sequence number the next frame gets.
    pub fn next_sequence(&self) -> u16 {
        self.sequence
    }

    /// `rtp_send_data`: the packets of one frame, each id byte first and at most
    /// [`MAX_PACKET_LEN`] bytes. `timestamp` goes into every piece as given (c-toxcore
    /// writes its monotonic milliseconds). An empty frame is one header-only packet, as in
    /// c-toxcore (receivers drop it). Audio frames longer than 65535 bytes cannot be
    /// described by the 16-bit fields audio uses; like c-toxcore, their length field is
    /// clamped and receivers will not reassemble them.
    pub fn packetize(&mut self, frame: &[u8], timestamp: u32, keyframe: bool) -> Vec<Vec<u8>> {
        let length = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let mut flags = 0;
        if self.kind == MediaKind::Video {
            flags |= FLAG_LARGE_FRAME;
        }
        if keyframe {
            flags |= FLAG_KEY_FRAME;
        }
        let mut header = RtpHeader {
            version: RTP_VERSION,
            payload_type: self.kind.payload_type(),
            sequence: self.sequence,
            timestamp,
            ssrc: self.ssrc,
            flags,
            data_length_full: length,
            data_length_lower: u16::try_from(length).unwrap_or(u16::MAX),
            ..RtpHeader::default()
        };
        self.sequence = self.sequence.wrapping_add(1);
        let mut pieces: Vec<&[u8]> = frame.chunks(MAX_PIECE_LEN).collect();
        if pieces.is_empty() {
            pieces.push(&[]);
        }
        let mut packets = Vec::with_capacity(pieces.len());
        let mut offset: u32 = 0;
        for piece in pieces {
            header.offset_full = offset;
            // c-toxcore assigns the 32-bit offset to the 16-bit field: it wraps.
            header.offset_lower = offset as u16;
            let mut packet = Vec::with_capacity(MAX_PACKET_LEN);
            packet.push(self.kind.packet_id());
            packet.extend_from_slice(&header.encode());
            packet.extend_from_slice(piece);
            packets.push(packet);
            offset = offset.saturating_add(u32::try_from(piece.len()).unwrap_or(u32::MAX));
        }
        packets
    }
}

#[cfg(test)]
mod tests;
