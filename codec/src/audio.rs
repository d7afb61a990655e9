//! Opus as c-toxcore 0.2.18 uses it (`toxav/audio.c`): a voice-mode encoder with in-band FEC,
//! an expected loss of 10 % and the highest complexity, and a decoder that conceals a lost
//! frame (PLC) or rebuilds it from the FEC data of the frame after it.

use crate::Error;
use opus::{Application, Bitrate, Channels};

/// The sampling rates Opus codes natively (toxav.h's `sampling_rate`).
pub const SAMPLING_RATES: [u32; 5] = [8000, 12000, 16000, 24000, 48000];

/// audio.c's `AUDIO_OPUS_PACKET_LOSS_PERC`: the loss the encoder plans its FEC for.
pub const PACKET_LOSS_PERC: i32 = 10;

/// audio.c's `AUDIO_OPUS_COMPLEXITY`: the highest, best compression.
pub const COMPLEXITY: i32 = 10;

/// audio.h's `AUDIO_MAX_FRAME_DURATION_MS`: the longest frame a decoder yields.
pub const MAX_FRAME_DURATION_MS: u32 = 120;

/// The frame durations an encoder takes, in tenths of a millisecond (toxav.h: "2.5, 5, 10,
/// 20, 40 or 60 milliseconds").
const FRAME_DURATIONS_TENTH_MS: [u32; 6] = [25, 50, 100, 200, 400, 600];

/// The largest packet the decoder accepts: Opus's own bound for one packet (RFC 6716 §3.4,
/// 120 ms of 48 frames of at most 1275 bytes) rounded up.
pub const MAX_PACKET_LEN: usize = 64 * 1024;

fn check_format(sampling_rate: u32, channels: u8) -> Result<Channels, Error> {
    if !SAMPLING_RATES.contains(&sampling_rate) {
        return Err(Error::SamplingRate(sampling_rate));
    }
    match channels {
        1 => Ok(Channels::Mono),
        2 => Ok(Channels::Stereo),
        other => Err(Error::Channels(other)),
    }
}

fn opus_bit_rate(bit_rate: u32) -> Result<Bitrate, Error> {
    // libopus clamps rates to 500..=512000 itself; zero or absurd values are a caller error.
    if !(500..=512_000).contains(&bit_rate) {
        return Err(Error::BitRate(bit_rate));
    }
    Ok(Bitrate::Bits(bit_rate as i32))
}

/// Whether `samples` per channel is one of the frame durations Opus encodes at `sampling_rate`.
pub fn valid_frame_size(samples: usize, sampling_rate: u32) -> bool {
    FRAME_DURATIONS_TENTH_MS
        .iter()
        .any(|&d| (sampling_rate as usize) * (d as usize) == samples * 10_000)
}

/// An Opus encoder configured as audio.c's `create_audio_encoder`.
pub struct AudioEncoder {
    encoder: opus::Encoder,
    bit_rate: u32,
    sampling_rate: u32,
    channels: u8,
}

impl std::fmt::Debug for AudioEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AudioEncoder")
            .field("bit_rate", &self.bit_rate)
            .field("sampling_rate", &self.sampling_rate)
            .field("channels", &self.channels)
            .finish()
    }
}

impl AudioEncoder {
    /// `OPUS_APPLICATION_VOIP` at `bit_rate` bits/s, in-band FEC on, packet loss
    /// [`PACKET_LOSS_PERC`], complexity [`COMPLEXITY`] (audio.c's `create_audio_encoder`).
    pub fn new(bit_rate: u32, sampling_rate: u32, channels: u8) -> Result<Self, Error> {
        let layout = check_format(sampling_rate, channels)?;
        let rate = opus_bit_rate(bit_rate)?;
        let mut encoder = opus::Encoder::new(sampling_rate, layout, Application::Voip)?;
        encoder.set_bitrate(rate)?;
        encoder.set_inband_fec(true)?;
        encoder.set_packet_loss_perc(PACKET_LOSS_PERC)?;
        encoder.set_complexity(COMPLEXITY)?;
        Ok(AudioEncoder {
            encoder,
            bit_rate,
            sampling_rate,
            channels,
        })
    }

    /// Bits per second.
    pub fn bit_rate(&self) -> u32 {
        self.bit_rate
    }

    /// Hz.
    pub fn sampling_rate(&self) -> u32 {
        self.sampling_rate
    }

    /// 1 or 2.
    pub fn channels(&self) -> u8 {
        self.channels
    }

    /// The encoder's delay in samples per channel (`OPUS_GET_LOOKAHEAD`): a tone that starts in
    /// frame n is heard this much later in the decoded stream.
    pub fn lookahead(&mut self) -> Result<usize, Error> {
        Ok(usize::try_from(self.encoder.get_lookahead()?).unwrap_or(0))
    }

    /// Changes the bit rate in place (audio.c's `reconfigure_audio_encoder` when only the rate
    /// changed).
    pub fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), Error> {
        if bit_rate == self.bit_rate {
            return Ok(());
        }
        self.encoder.set_bitrate(opus_bit_rate(bit_rate)?)?;
        self.bit_rate = bit_rate;
        Ok(())
    }

    /// audio.c's `ac_reconfigure_encoder`: a new encoder when the rate or the channels change,
    /// the bit rate set in place otherwise. On error the encoder is unchanged.
    pub fn reconfigure(
        &mut self,
        bit_rate: u32,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<(), Error> {
        if sampling_rate != self.sampling_rate || channels != self.channels {
            *self = AudioEncoder::new(bit_rate, sampling_rate, channels)?;
            return Ok(());
        }
        self.set_bit_rate(bit_rate)
    }

    /// Encodes one frame of interleaved `pcm` (2.5 to 60 ms) into `out`, returning the bytes
    /// written. toxav.c gives `sample_count` bytes of room, which always suffices.
    pub fn encode(&mut self, pcm: &[i16], out: &mut [u8]) -> Result<usize, Error> {
        let channels = usize::from(self.channels);
        if pcm.len() % channels != 0 {
            return Err(Error::Interleave {
                len: pcm.len(),
                channels: self.channels,
            });
        }
        let samples = pcm.len() / channels;
        if !valid_frame_size(samples, self.sampling_rate) {
            return Err(Error::FrameSize {
                samples,
                sampling_rate: self.sampling_rate,
            });
        }
        Ok(self.encoder.encode(pcm, out)?)
    }
}

/// An Opus decoder (audio.c's `ac_iterate` decoding side).
pub struct AudioDecoder {
    decoder: opus::Decoder,
    sampling_rate: u32,
    channels: u8,
    scratch: Vec<i16>,
}

impl std::fmt::Debug for AudioDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AudioDecoder")
            .field("sampling_rate", &self.sampling_rate)
            .field("channels", &self.channels)
            .finish()
    }
}

impl AudioDecoder {
    /// A decoder producing `channels` at `sampling_rate` (audio.c starts one at 48 kHz mono and
    /// recreates it when a packet announces another rate or channel count).
    pub fn new(sampling_rate: u32, channels: u8) -> Result<Self, Error> {
        let layout = check_format(sampling_rate, channels)?;
        let decoder = opus::Decoder::new(sampling_rate, layout)?;
        let max = (sampling_rate * MAX_FRAME_DURATION_MS / 1000) as usize * usize::from(channels);
        Ok(AudioDecoder {
            decoder,
            sampling_rate,
            channels,
            scratch: vec![0; max],
        })
    }

    /// Hz.
    pub fn sampling_rate(&self) -> u32 {
        self.sampling_rate
    }

    /// 1 or 2.
    pub fn channels(&self) -> u8 {
        self.channels
    }

    /// The channel count a packet was encoded with (`opus_packet_get_nb_channels`, which
    /// audio.c uses to reconfigure its decoder).
    pub fn packet_channels(packet: &[u8]) -> Result<u8, Error> {
        if packet.is_empty() {
            return Err(Error::EmptyPacket);
        }
        Ok(match opus::packet::get_nb_channels(packet)? {
            Channels::Mono => 1,
            Channels::Stereo => 2,
        })
    }

    fn check_packet(packet: &[u8]) -> Result<(), Error> {
        if packet.is_empty() {
            return Err(Error::EmptyPacket);
        }
        if packet.len() > MAX_PACKET_LEN {
            return Err(Error::PacketTooLarge(packet.len()));
        }
        Ok(())
    }

    fn check_frame_samples(&self, frame_samples: usize) -> Result<(), Error> {
        // Opus conceals and rebuilds in multiples of 2.5 ms, at most 120 ms.
        let quantum = self.sampling_rate as usize / 400;
        let max = (self.sampling_rate * MAX_FRAME_DURATION_MS / 1000) as usize;
        if frame_samples == 0 || frame_samples % quantum != 0 || frame_samples > max {
            return Err(Error::FrameSize {
                samples: frame_samples,
                sampling_rate: self.sampling_rate,
            });
        }
        Ok(())
    }

    fn run(
        &mut self,
        packet: &[u8],
        fec: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, Error> {
        let channels = usize::from(self.channels);
        let room = &mut self.scratch[..frame_samples * channels];
        let samples = self.decoder.decode(packet, room, fec)?;
        let samples = samples.min(frame_samples);
        out.extend_from_slice(&room[..samples * channels]);
        Ok(samples)
    }

    /// Decodes one packet, appending its interleaved samples to `out`; returns the samples per
    /// channel.
    pub fn decode(&mut self, packet: &[u8], out: &mut Vec<i16>) -> Result<usize, Error> {
        Self::check_packet(packet)?;
        let max = (self.sampling_rate * MAX_FRAME_DURATION_MS / 1000) as usize;
        self.run(packet, false, max, out)
    }

    /// Rebuilds a lost frame of `frame_samples` per channel from the in-band FEC data carried
    /// by `next_packet`, the packet after it (`opus_decode` with `decode_fec` set). Without FEC
    /// data in it libopus conceals instead. `next_packet` must then be decoded normally too.
    pub fn decode_fec(
        &mut self,
        next_packet: &[u8],
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, Error> {
        Self::check_packet(next_packet)?;
        self.check_frame_samples(frame_samples)?;
        self.run(next_packet, true, frame_samples, out)
    }

    /// Conceals a lost frame of `frame_samples` per channel (packet loss concealment: audio.c's
    /// `opus_decode(decoder, NULL, 0, ..)` when its jitter buffer reports a gap).
    pub fn conceal(&mut self, frame_samples: usize, out: &mut Vec<i16>) -> Result<usize, Error> {
        self.check_frame_samples(frame_samples)?;
        self.run(&[], false, frame_samples, out)
    }
}
