//! RTP as c-toxcore 0.2.18 frames it (rtp.c): the 80-byte header, a frame split into
//! packets (the large-frame extension carries 32-bit offsets and lengths), and reassembly.

/// `RTP_HEADER_SIZE`.
pub const RTP_HEADER_LEN: usize = 80;
/// `RTP_TYPE_AUDIO`: audio's lossy packet id.
pub const PACKET_ID_AUDIO: u8 = 192;
/// `RTP_TYPE_VIDEO`: video's lossy packet id.
pub const PACKET_ID_VIDEO: u8 = 193;
