//! The one error type of the crate: what was wrong with a parameter, or what libopus or libvpx
//! reported.

/// A codec could not be created, or refused a frame or a parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Opus codes 8, 12, 16, 24 and 48 kHz only (toxav.h's `sampling_rate`).
    #[error("unsupported sampling rate {0} Hz")]
    SamplingRate(u32),
    /// One or two channels (toxav.c's `channels > 2` check; zero is no audio).
    #[error("unsupported channel count {0}")]
    Channels(u8),
    /// An audio frame must last 2.5, 5, 10, 20, 40 or 60 ms (toxav.h's `sample_count`).
    #[error("{samples} samples per channel is not a 2.5–60 ms frame at {sampling_rate} Hz")]
    FrameSize {
        /// Samples per channel given.
        samples: usize,
        /// The codec's rate.
        sampling_rate: u32,
    },
    /// The PCM slice is not a whole number of interleaved frames.
    #[error("{len} samples do not split into {channels} channels")]
    Interleave {
        /// Samples given.
        len: usize,
        /// Channels of the codec.
        channels: u8,
    },
    /// A bit rate libopus or libvpx cannot use.
    #[error("unsupported bit rate {0} bit/s")]
    BitRate(u32),
    /// An empty packet (loss is signalled explicitly, never by an empty buffer).
    #[error("empty packet")]
    EmptyPacket,
    /// The packet is larger than any frame this crate decodes.
    #[error("packet of {0} bytes is too large")]
    PacketTooLarge(usize),
    /// A picture size of zero, above VP8's 16383 or above [`crate::vp8::MAX_PICTURE_PIXELS`].
    #[error("unsupported picture size {width}x{height}")]
    PictureSize {
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// A plane shorter than the picture size needs.
    #[error("{plane} plane has {len} bytes, {needed} needed")]
    PlaneTooShort {
        /// "y", "u" or "v".
        plane: &'static str,
        /// Bytes given.
        len: usize,
        /// Bytes the picture needs.
        needed: usize,
    },
    /// libopus reported an error (`opus_strerror`'s text).
    #[error("opus: {0}")]
    Opus(String),
    /// libvpx reported an error in `call`.
    #[error("vpx {call}: {detail}")]
    Vpx {
        /// The libvpx function.
        call: &'static str,
        /// `vpx_codec_err_to_string` and `vpx_codec_error_detail`.
        detail: String,
    },
    /// libvpx handed back a picture this crate cannot read (not I420, null plane, bad stride).
    #[error("decoder returned an unreadable picture: {0}")]
    BadPicture(&'static str),
}

impl From<opus::Error> for Error {
    fn from(e: opus::Error) -> Self {
        Error::Opus(format!("{}: {}", e.function(), e.description()))
    }
}
