//! Group audio packets (groupav.c, inside the conferences' lossy 199): the parser on
//! arbitrary bytes (what parses re-encodes to the same bytes), the Opus table-of-contents
//! reader, and one conference's group audio fed arbitrary packets from a few peers at
//! arbitrary times: nothing panics, no frame is longer than Opus allows, and one packet
//! never yields more frames than the jitter buffer holds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::av::codec::{
    AudioDecoder, AudioEncoder, CodecError, CodecFactory, VideoDecoder, VideoEncoder,
};
use rustox_core::av::group_audio::{opus_packet_shape, GroupAudio, GroupAudioPacket};
use rustox_net_crypto::Timestamp;

/// A decoder that gives silence of the length it is asked for.
struct Silence(u8);

impl AudioDecoder for Silence {
    fn decode(
        &mut self,
        _packet: Option<&[u8]>,
        _fec: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, CodecError> {
        out.resize(out.len() + frame_samples * usize::from(self.0), 0);
        Ok(frame_samples)
    }
}

struct SilentCodecs;

impl CodecFactory for SilentCodecs {
    fn audio_encoder(&self, _: u32, _: u32, _: u8) -> Result<Box<dyn AudioEncoder>, CodecError> {
        Err(CodecError("decode only".into()))
    }
    fn audio_decoder(&self, _: u32, channels: u8) -> Result<Box<dyn AudioDecoder>, CodecError> {
        Ok(Box::new(Silence(channels)))
    }
    fn video_encoder(&self, _: u32, _: u16, _: u16) -> Result<Box<dyn VideoEncoder>, CodecError> {
        Err(CodecError("no video".into()))
    }
    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError> {
        Err(CodecError("no video".into()))
    }
}

/// Opus's longest packet at 48 kHz, per channel.
const MAX_SAMPLES: usize = 5_760;
/// The jitter buffer's slots plus the one just queued.
const MAX_FRAMES_PER_PACKET: usize = 9;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = GroupAudioPacket::parse(data) {
        assert_eq!(p.encode(), data);
    }
    if let Some((channels, samples)) = opus_packet_shape(data) {
        assert!(channels == 1 || channels == 2);
        assert!(samples > 0 && samples <= MAX_SAMPLES);
    }
    // Records: [peer, time step, length, bytes...].
    let mut audio = GroupAudio::new();
    let mut now = Timestamp::ZERO;
    let mut rest = data;
    while let [peer, step, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (packet, after) = tail.split_at(len);
        rest = after;
        now = now + std::time::Duration::from_millis(u64::from(*step) * 20);
        let frames = audio.handle_packet(now, &SilentCodecs, u32::from(*peer % 4), packet);
        assert!(frames.len() <= MAX_FRAMES_PER_PACKET);
        for f in frames {
            assert!(f.samples <= MAX_SAMPLES);
            assert_eq!(f.pcm.len(), f.samples * usize::from(f.channels));
        }
    }
});
