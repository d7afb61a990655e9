//! The codecs a call uses, behind traits: Opus and VP8 as c-toxcore 0.2.18 configures them
//! (audio.c, video.c) on the system's libopus and libvpx ([`SystemCodecs`], through the
//! `rustox-codec` crate), or a deterministic stand-in for the simulator ([`StandInCodecs`])
//! whose frame sizes follow real encodes.

/// A codec failed (creation, a bad parameter, a frame it cannot encode or decode).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("codec: {0}")]
pub struct CodecError(pub String);

/// A YUV 4:2:0 picture given to the video encoder (toxav.h's planes: Y `width × height`,
/// U and V `(width / 2) × (height / 2)`, rounded up).
#[derive(Debug, Clone, Copy)]
pub struct YuvFrame<'a> {
    /// Pixels.
    pub width: u16,
    /// Pixels.
    pub height: u16,
    /// Luma.
    pub y: &'a [u8],
    /// Chroma U.
    pub u: &'a [u8],
    /// Chroma V.
    pub v: &'a [u8],
}

/// A decoded picture, planes tightly packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedPicture {
    /// Pixels.
    pub width: u16,
    /// Pixels.
    pub height: u16,
    /// Luma (`width × height`).
    pub y: Vec<u8>,
    /// Chroma U.
    pub u: Vec<u8>,
    /// Chroma V.
    pub v: Vec<u8>,
}

/// One encoded video frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedVideo {
    /// The VP8 (or stand-in) bytes.
    pub data: Vec<u8>,
    /// A key frame (RTP's `RTP_KEY_FRAME` flag).
    pub keyframe: bool,
}

/// Encodes audio frames (c-toxcore: Opus, `OPUS_APPLICATION_VOIP`, in-band FEC on).
pub trait AudioEncoder: Send {
    /// Encodes one frame of interleaved `pcm` into `out`, returning the bytes written.
    fn encode(&mut self, pcm: &[i16], out: &mut [u8]) -> Result<usize, CodecError>;
    /// Changes the bit rate.
    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError>;
}

/// Decodes audio packets.
pub trait AudioDecoder: Send {
    /// Decodes `packet` into interleaved samples appended to `out`, returning the samples
    /// per channel. `None` conceals a lost frame of `frame_samples` samples per channel; with
    /// `fec`, `packet` is the frame after the lost one and its in-band FEC data is used.
    fn decode(
        &mut self,
        packet: Option<&[u8]>,
        fec: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, CodecError>;
}

/// Encodes video pictures.
pub trait VideoEncoder: Send {
    /// Encodes `picture` (a key frame when `keyframe`), appending the encoded frames to `out`.
    fn encode(
        &mut self,
        picture: &YuvFrame<'_>,
        keyframe: bool,
        out: &mut Vec<EncodedVideo>,
    ) -> Result<(), CodecError>;
    /// Changes the bit rate.
    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError>;
}

/// Decodes video frames.
pub trait VideoDecoder: Send {
    /// Decodes one frame, appending the pictures it yields to `out`.
    fn decode(&mut self, data: &[u8], out: &mut Vec<DecodedPicture>) -> Result<(), CodecError>;
}

/// Creates the codecs of a call.
pub trait CodecFactory: Send {
    /// An audio encoder (`sampling_rate` Hz, `channels`, `bit_rate` bits/s).
    fn audio_encoder(
        &self,
        bit_rate: u32,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioEncoder>, CodecError>;
    /// An audio decoder for `sampling_rate` Hz and `channels`.
    fn audio_decoder(
        &self,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioDecoder>, CodecError>;
    /// A video encoder for `width × height` at `bit_rate` bits/s.
    fn video_encoder(
        &self,
        bit_rate: u32,
        width: u16,
        height: u16,
    ) -> Result<Box<dyn VideoEncoder>, CodecError>;
    /// A video decoder.
    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError>;
}

/// libopus and libvpx, configured as c-toxcore 0.2.18 does (implemented in `codec_system.rs`
/// on the `rustox-codec` crate, with feature `codecs`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemCodecs;

/// A deterministic stand-in for the simulator: no signal processing, frame sizes as real
/// encodes at the same bit rate, a coarse copy of the signal carried so the marks of
/// [`super::signal`] survive (implemented and its formats described in `codec_standin.rs`).
#[derive(Debug, Clone, Copy, Default)]
pub struct StandInCodecs;
