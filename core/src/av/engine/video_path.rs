//! One call's video: the sender (encoder re-created on a new picture size, key frames forced
//! at the start, after a resize and when the receiver asks; each encoded frame one RTP
//! message, split over packets by the RTP layer) and the receiver (reassembled frames →
//! decoder → video events; a lost or undecodable frame makes it ask for a key frame).
//!
//! Key-frame requests are a rustox addition: lossy packet [`PACKET_ID_KEYFRAME_REQUEST`]
//! (195) with no payload. Messenger.c `m_handle_lossy_packet` hands ids 192..=199 only to a
//! handler registered for that id (and drops the packet when there is none), and
//! c-toxcore 0.2.18's toxav registers 192, 193 (rtp.c `rtp_new`) and 196 (bwcontroller.c
//! `bwc_new`); 199 is the conferences' (net_crypto.h `PACKET_ID_LOSSY_CONFERENCE`). A
//! c-toxcore peer therefore drops 195 unseen and keeps its own key-frame schedule (VP8's
//! `kf_max_dist`), while a rustox sender answers at once. 195 lies in the range the node
//! already hands to the engine (192..=196).

use rustox_net_crypto::Timestamp;

use crate::av::codec::{
    CodecFactory, DecodedPicture, EncodedVideo, VideoDecoder, VideoEncoder, YuvFrame,
};
use crate::av::rtp::{MediaKind, RtpFrame, RtpSender};

use super::{AvEvent, SendFrameError};

/// The lossy packet id of a key-frame request (see the module's doc for why 195).
pub const PACKET_ID_KEYFRAME_REQUEST: u8 = 195;
/// Frames sent as key frames at the start of a call (toxav.c/video.h
/// `VIDEO_SEND_X_KEYFRAMES_FIRST`): the first pictures must decode even if one is lost.
pub const KEYFRAMES_FIRST: u32 = 7;
/// A receiver asks again for a key frame after this long without one (about a round trip
/// on a long path; it asks at most this often).
pub const KEYFRAME_REQUEST_INTERVAL_MS: u64 = 250;
/// The frame interval assumed before two frames arrived (video.c: `lcfd = 60`).
pub const DEFAULT_FRAME_INTERVAL_MS: u32 = 60;
/// Pictures decoded from one frame at most (VP8 yields one; a decoder that yields more is
/// not trusted with more).
const MAX_PICTURES_PER_FRAME: usize = 4;

/// Whether `frame`'s planes are large enough for its size (toxav.h: Y `w × h`, U and V
/// `⌈w/2⌉ × ⌈h/2⌉`).
pub fn valid_picture(frame: &YuvFrame<'_>) -> bool {
    let w = usize::from(frame.width);
    let h = usize::from(frame.height);
    let chroma = w.div_ceil(2) * h.div_ceil(2);
    w > 0 && h > 0 && frame.y.len() >= w * h && frame.u.len() >= chroma && frame.v.len() >= chroma
}

/// The sending half.
pub(super) struct VideoSender {
    rtp: RtpSender,
    encoder: Option<Box<dyn VideoEncoder>>,
    width: u16,
    height: u16,
    bit_rate_bps: u32,
    frames: u32,
    force_keyframe: bool,
    encoded: Vec<EncodedVideo>,
    pub keyframes_sent: u64,
}

impl VideoSender {
    pub fn new(ssrc: u32) -> Self {
        Self {
            rtp: RtpSender::new(MediaKind::Video, ssrc),
            encoder: None,
            width: 0,
            height: 0,
            bit_rate_bps: 0,
            frames: 0,
            force_keyframe: true,
            encoded: Vec::new(),
            keyframes_sent: 0,
        }
    }

    /// The encoder's bit rate (bits/s; 0 before the first frame).
    pub fn bit_rate_bps(&self) -> u32 {
        self.bit_rate_bps
    }

    /// The receiver asked for a key frame.
    pub fn request_keyframe(&mut self) {
        self.force_keyframe = true;
    }

    /// Encodes one picture and returns the packets of its frames (ids first).
    pub fn send(
        &mut self,
        now: Timestamp,
        codecs: &dyn CodecFactory,
        bit_rate_kbps: u32,
        picture: &YuvFrame<'_>,
    ) -> Result<Vec<Vec<u8>>, SendFrameError> {
        if !valid_picture(picture) {
            return Err(SendFrameError::Invalid);
        }
        let bit_rate_bps = bit_rate_kbps.saturating_mul(1000);
        if self.encoder.is_none() || self.width != picture.width || self.height != picture.height {
            // video.c `vc_reconfigure_encoder`: a new size is a new encoder, whose first
            // frame is a key frame.
            let encoder = codecs
                .video_encoder(bit_rate_bps, picture.width, picture.height)
                .map_err(|_| SendFrameError::Invalid)?;
            self.encoder = Some(encoder);
            self.width = picture.width;
            self.height = picture.height;
            self.bit_rate_bps = bit_rate_bps;
            self.force_keyframe = true;
        }
        let encoder = self.encoder.as_mut().ok_or(SendFrameError::Invalid)?;
        if self.bit_rate_bps != bit_rate_bps {
            encoder
                .set_bit_rate(bit_rate_bps)
                .map_err(|_| SendFrameError::Invalid)?;
            self.bit_rate_bps = bit_rate_bps;
        }
        let keyframe = self.force_keyframe || self.frames < KEYFRAMES_FIRST;
        self.encoded.clear();
        encoder
            .encode(picture, keyframe, &mut self.encoded)
            .map_err(|_| SendFrameError::Invalid)?;
        self.frames = self.frames.saturating_add(1);
        self.force_keyframe = false;
        let timestamp = now.as_millis() as u32;
        let mut packets = Vec::new();
        for frame in &self.encoded {
            if frame.keyframe {
                self.keyframes_sent += 1;
            }
            let p = self.rtp.packetize(&frame.data, timestamp, frame.keyframe);
            if p.is_empty() && !frame.data.is_empty() {
                return Err(SendFrameError::RtpFailed);
            }
            packets.extend(p);
        }
        Ok(packets)
    }
}

/// What receiving one frame did.
#[derive(Debug, Default)]
pub(super) struct Received {
    pub pictures: Vec<AvEvent>,
    /// Frames missing before this one (a gap in the RTP sequence numbers).
    pub missing: u64,
    /// The frame did not decode.
    pub undecodable: bool,
    /// A key-frame request to send now.
    pub ask_keyframe: bool,
}

/// The receiving half.
pub(super) struct VideoReceiver {
    decoder: Box<dyn VideoDecoder>,
    last_sequence: Option<u16>,
    /// Waiting for a key frame since a loss.
    broken: bool,
    last_request: Option<Timestamp>,
    last_arrival: Option<Timestamp>,
    /// Milliseconds between the last two frames (video.c's `lcfd`).
    pub frame_interval_ms: u32,
    pictures: Vec<DecodedPicture>,
}

impl VideoReceiver {
    pub fn new(codecs: &dyn CodecFactory) -> Result<Self, crate::av::codec::CodecError> {
        Ok(Self {
            decoder: codecs.video_decoder()?,
            last_sequence: None,
            broken: false,
            last_request: None,
            last_arrival: None,
            frame_interval_ms: DEFAULT_FRAME_INTERVAL_MS,
            pictures: Vec::new(),
        })
    }

    /// A reassembled video frame from the RTP receiver.
    pub fn receive(&mut self, now: Timestamp, friend: u32, frame: RtpFrame) -> Received {
        let mut out = Received::default();
        if let Some(last) = self.last_sequence {
            let delta = frame.sequence.wrapping_sub(last);
            if delta == 0 || delta > u16::MAX / 2 {
                // A duplicate or an old frame: nothing to show.
                return out;
            }
            out.missing = u64::from(delta - 1);
        }
        self.last_sequence = Some(frame.sequence);
        if let Some(prev) = self.last_arrival {
            let ms = now.saturating_duration_since(prev).as_millis();
            // video.c keeps the last interval unless it is over 100 ms.
            if ms <= 100 {
                self.frame_interval_ms = ms as u32;
            }
        }
        self.last_arrival = Some(now);
        if out.missing > 0 {
            self.broken = true;
        }
        if frame.keyframe {
            self.broken = false;
        }
        self.pictures.clear();
        match self.decoder.decode(&frame.data, &mut self.pictures) {
            Ok(()) => {
                for p in self.pictures.drain(..).take(MAX_PICTURES_PER_FRAME) {
                    out.pictures.push(AvEvent::VideoFrame {
                        friend,
                        width: p.width,
                        height: p.height,
                        y: p.y,
                        u: p.u,
                        v: p.v,
                    });
                }
            }
            Err(_) => {
                out.undecodable = true;
                self.broken = true;
            }
        }
        if self.broken {
            let due = self.last_request.is_none_or(|t| {
                now.saturating_duration_since(t).as_millis() as u64 >= KEYFRAME_REQUEST_INTERVAL_MS
            });
            if due {
                self.last_request = Some(now);
                out.ask_keyframe = true;
            }
        }
        out
    }
}
