//! One call's audio: the sender (encoder re-created when the rate or channels change, each
//! frame one RTP message of type audio) and the receiver (RTP frames → jitter buffer → decoder
//! re-created when the rate or channels change → audio events).
//!
//! The payload is audio.c's: the sampling rate as a 4-byte big-endian number, then the Opus
//! packet (toxav.c `toxav_audio_send_frame`; audio.c `ac_iterate` reads the rate from those 4
//! bytes and the channel count from the Opus TOC byte).

use rustox_net_crypto::wire::Reader;
use rustox_net_crypto::Timestamp;

use crate::av::codec::{AudioDecoder, AudioEncoder, CodecError, CodecFactory};
use crate::av::jitter::{JitterBuffer, Playout};
use crate::av::rtp::{MediaKind, RtpFrame, RtpSender};

use super::{AvEvent, SendFrameError};

/// The rates Opus encodes and decodes (opus_encoder_create's accepted `Fs`).
pub const SAMPLING_RATES: [u32; 5] = [8000, 12000, 16000, 24000, 48000];
/// Frame durations Opus encodes, in tenths of a millisecond: 2.5, 5, 10, 20, 40, 60 ms.
pub const FRAME_DURATIONS_TENTHS_MS: [u32; 6] = [25, 50, 100, 200, 400, 600];
/// The sampling-rate prefix of every audio payload (audio.c).
pub const RATE_PREFIX_LEN: usize = 4;
/// The largest Opus packet (RFC 6716 §3.2.5: 1275 bytes a frame, 3 frames in 60 ms).
pub const MAX_OPUS_PACKET: usize = 3 * 1275;
/// The most samples a channel decodes from one packet: 120 ms at 48 kHz (audio.c's 5760).
pub const MAX_DECODED_SAMPLES: usize = 5760;
/// The decoder's start configuration (audio.c `AUDIO_DECODER_START_SAMPLE_RATE`,
/// `AUDIO_DECODER_START_CHANNEL_COUNT`).
pub const DECODER_START_RATE: u32 = 48000;
/// See [`DECODER_START_RATE`].
pub const DECODER_START_CHANNELS: u8 = 2;

/// Whether `sample_count` samples per channel at `rate` is one Opus frame duration.
pub fn valid_frame(sample_count: usize, rate: u32) -> bool {
    FRAME_DURATIONS_TENTHS_MS
        .iter()
        .any(|&d| (u64::from(rate) * u64::from(d)) == sample_count as u64 * 10_000)
}

/// The sending half.
pub(super) struct AudioSender {
    rtp: RtpSender,
    encoder: Option<Box<dyn AudioEncoder>>,
    rate: u32,
    channels: u8,
    bit_rate_bps: u32,
    buf: Vec<u8>,
}

impl AudioSender {
    pub fn new(ssrc: u32) -> Self {
        Self {
            rtp: RtpSender::new(MediaKind::Audio, ssrc),
            encoder: None,
            rate: 0,
            channels: 0,
            bit_rate_bps: 0,
            buf: Vec::new(),
        }
    }

    /// The encoder's bit rate (bits/s; 0 before the first frame).
    pub fn bit_rate_bps(&self) -> u32 {
        self.bit_rate_bps
    }

    /// Encodes one frame and returns its packets (ids first).
    #[allow(clippy::too_many_arguments)]
    pub fn send(
        &mut self,
        now: Timestamp,
        codecs: &dyn CodecFactory,
        bit_rate_kbps: u32,
        pcm: &[i16],
        sample_count: usize,
        channels: u8,
        rate: u32,
    ) -> Result<Vec<Vec<u8>>, SendFrameError> {
        if !(1..=2).contains(&channels)
            || !SAMPLING_RATES.contains(&rate)
            || !valid_frame(sample_count, rate)
            || pcm.len() < sample_count * usize::from(channels)
        {
            return Err(SendFrameError::Invalid);
        }
        let bit_rate_bps = bit_rate_kbps.saturating_mul(1000);
        if self.encoder.is_none() || self.rate != rate || self.channels != channels {
            // audio.c `reconfigure_audio_encoder`: a new rate or channel count is a new
            // encoder; a new bit rate alone is set on the running one.
            let encoder = codecs
                .audio_encoder(bit_rate_bps, rate, channels)
                .map_err(|_| SendFrameError::Invalid)?;
            self.encoder = Some(encoder);
            self.rate = rate;
            self.channels = channels;
            self.bit_rate_bps = bit_rate_bps;
        }
        let encoder = self.encoder.as_mut().ok_or(SendFrameError::Invalid)?;
        if self.bit_rate_bps != bit_rate_bps {
            encoder
                .set_bit_rate(bit_rate_bps)
                .map_err(|_| SendFrameError::Invalid)?;
            self.bit_rate_bps = bit_rate_bps;
        }
        self.buf.clear();
        self.buf.resize(RATE_PREFIX_LEN + MAX_OPUS_PACKET, 0);
        self.buf[..RATE_PREFIX_LEN].copy_from_slice(&rate.to_be_bytes());
        let pcm = &pcm[..sample_count * usize::from(channels)];
        let written = encoder
            .encode(pcm, &mut self.buf[RATE_PREFIX_LEN..])
            .map_err(|_| SendFrameError::Invalid)?;
        if written == 0 || written > MAX_OPUS_PACKET {
            return Err(SendFrameError::RtpFailed);
        }
        let payload = &self.buf[..RATE_PREFIX_LEN + written];
        // rtp.c stamps each message with the sender's monotonic clock in milliseconds.
        let packets = self.rtp.packetize(payload, now.as_millis() as u32, false);
        if packets.is_empty() {
            return Err(SendFrameError::RtpFailed);
        }
        Ok(packets)
    }
}

/// Why a received audio frame was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AudioRefused {
    /// Too short, or an unknown sampling rate: a forged or broken payload.
    Malformed,
    /// After its playout slot, or a duplicate.
    Late,
}

/// The receiving half.
pub(super) struct AudioReceiver {
    pub jitter: JitterBuffer,
    decoder: Option<Box<dyn AudioDecoder>>,
    rate: u32,
    channels: u8,
    /// Samples per channel of the last frame decoded (for concealment).
    last_frame_samples: usize,
    pcm: Vec<i16>,
}

/// What one playout produced, for the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Played {
    Frame,
    Concealed,
    Failed,
}

impl AudioReceiver {
    pub fn new(codecs: &dyn CodecFactory) -> Result<Self, CodecError> {
        let decoder = codecs.audio_decoder(DECODER_START_RATE, DECODER_START_CHANNELS)?;
        Ok(Self {
            jitter: JitterBuffer::new(),
            decoder: Some(decoder),
            rate: DECODER_START_RATE,
            channels: DECODER_START_CHANNELS,
            last_frame_samples: 0,
            pcm: Vec::new(),
        })
    }

    /// Duration of the frames being received (audio.c's `lp_frame_duration`), ms.
    pub fn frame_ms(&self) -> u32 {
        if self.last_frame_samples == 0 || self.rate == 0 {
            return 20;
        }
        (self.last_frame_samples as u64 * 1000 / u64::from(self.rate)).max(1) as u32
    }

    /// A reassembled audio message from the RTP receiver.
    pub fn push(&mut self, now: Timestamp, frame: RtpFrame) -> Result<(), AudioRefused> {
        if parse_payload(&frame.data).is_none() {
            return Err(AudioRefused::Malformed);
        }
        self.jitter
            .insert(now, frame.sequence, frame.timestamp, frame.data)
            .map_err(|_| AudioRefused::Late)
    }

    /// Plays out what is due at `now`: each decoded or concealed frame an event for
    /// `friend`, with what it was for the counters (a frame that does not decode yields no
    /// event).
    pub fn play(
        &mut self,
        now: Timestamp,
        friend: u32,
        codecs: &dyn CodecFactory,
        out: &mut Vec<(Option<AvEvent>, Played)>,
    ) {
        while let Some(p) = self.jitter.poll(now) {
            let decoded = match p {
                Playout::Frame(data) => self.decode(codecs, Some(&data), false),
                Playout::Fec(next) => self.decode(codecs, Some(&next), true),
                Playout::Conceal => self.decode(codecs, None, false),
            };
            let (pcm, played) = match decoded {
                Some(DecodeKind::Frame(pcm)) => (pcm, Played::Frame),
                Some(DecodeKind::Concealed(pcm)) => (pcm, Played::Concealed),
                None => {
                    out.push((None, Played::Failed));
                    continue;
                }
            };
            let event = AvEvent::AudioFrame {
                friend,
                pcm,
                channels: self.channels,
                sampling_rate: self.rate,
            };
            out.push((Some(event), played));
        }
    }

    fn decode(
        &mut self,
        codecs: &dyn CodecFactory,
        payload: Option<&[u8]>,
        fec: bool,
    ) -> Option<DecodeKind> {
        self.pcm.clear();
        match payload {
            Some(data) => {
                let (rate, channels, opus) = parse_payload(data)?;
                if rate != self.rate || channels != self.channels || self.decoder.is_none() {
                    // audio.c `reconfigure_audio_decoder`.
                    let decoder = codecs.audio_decoder(rate, channels).ok()?;
                    self.decoder = Some(decoder);
                    self.rate = rate;
                    self.channels = channels;
                }
                let samples = self.concealed_samples();
                let decoder = self.decoder.as_mut()?;
                if fec {
                    let n = decoder
                        .decode(Some(opus), true, samples, &mut self.pcm)
                        .ok()?;
                    self.trim(n);
                    Some(DecodeKind::Concealed(std::mem::take(&mut self.pcm)))
                } else {
                    let n = decoder
                        .decode(Some(opus), false, MAX_DECODED_SAMPLES, &mut self.pcm)
                        .ok()?;
                    if n == 0 || n > MAX_DECODED_SAMPLES {
                        return None;
                    }
                    self.last_frame_samples = n;
                    self.jitter
                        .set_frame_duration_ms(u64::from(self.frame_ms()));
                    self.trim(n);
                    Some(DecodeKind::Frame(std::mem::take(&mut self.pcm)))
                }
            }
            None => {
                if self.last_frame_samples == 0 {
                    return None;
                }
                let samples = self.concealed_samples();
                let decoder = self.decoder.as_mut()?;
                let n = decoder.decode(None, false, samples, &mut self.pcm).ok()?;
                self.trim(n);
                Some(DecodeKind::Concealed(std::mem::take(&mut self.pcm)))
            }
        }
    }

    fn concealed_samples(&self) -> usize {
        if self.last_frame_samples == 0 {
            // 20 ms at the current rate.
            self.rate as usize / 50
        } else {
            self.last_frame_samples
        }
    }

    /// Keeps exactly `n` samples per channel (a decoder never hands more than it says).
    fn trim(&mut self, n: usize) {
        let want = n.saturating_mul(usize::from(self.channels));
        self.pcm.resize(want, 0);
    }
}

enum DecodeKind {
    Frame(Vec<i16>),
    Concealed(Vec<i16>),
}

/// An audio payload's sampling rate, channel count (from the Opus TOC byte's stereo bit,
/// RFC 6716 §3.1) and Opus packet; None for a payload audio.c could not decode.
pub(super) fn parse_payload(data: &[u8]) -> Option<(u32, u8, &[u8])> {
    let mut reader = Reader::new(data);
    let rate = reader.u32_be().ok()?;
    let opus = reader.rest();
    let toc = *opus.first()?;
    if !SAMPLING_RATES.contains(&rate) || opus.len() > MAX_OPUS_PACKET {
        return None;
    }
    let channels = if toc & 0x04 != 0 { 2 } else { 1 };
    Some((rate, channels, opus))
}
