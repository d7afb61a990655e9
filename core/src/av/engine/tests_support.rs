//! Test support: a tiny deterministic codec that carries a mark through, and two engines
//! wired in memory over a link with seeded loss, delay and jitter in simulated time.

use std::collections::VecDeque;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::Timestamp;

use crate::av::codec::{
    AudioDecoder, AudioEncoder, CodecError, CodecFactory, DecodedPicture, EncodedVideo,
    VideoDecoder, VideoEncoder, YuvFrame,
};

use super::{AvEvent, AvTransmit, Calls};

/// Audio packet: TOC (stereo bit), samples per channel (u16 LE), the first sample (the
/// mark), padding to the bit rate's size.
pub struct MarkAudioEncoder {
    pub bit_rate: u32,
    pub rate: u32,
    pub channels: u8,
}

impl AudioEncoder for MarkAudioEncoder {
    fn encode(&mut self, pcm: &[i16], out: &mut [u8]) -> Result<usize, CodecError> {
        let samples = pcm.len() / usize::from(self.channels);
        let bytes = (self.bit_rate as usize * samples / self.rate as usize / 8).clamp(5, 1200);
        if out.len() < bytes {
            return Err(CodecError("short buffer".into()));
        }
        out[0] = if self.channels == 2 { 0x04 } else { 0 };
        out[1..3].copy_from_slice(&(samples as u16).to_le_bytes());
        out[3..5].copy_from_slice(&pcm.first().copied().unwrap_or(0).to_le_bytes());
        out[5..bytes].fill(0xAA);
        Ok(bytes)
    }
    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError> {
        self.bit_rate = bit_rate;
        Ok(())
    }
}

/// Decodes [`MarkAudioEncoder`]'s packets: every sample is the mark; FEC and concealment
/// give `i16::MIN` (recognisably not a mark).
pub struct MarkAudioDecoder {
    pub channels: u8,
}

pub const CONCEALED: i16 = i16::MIN;

impl AudioDecoder for MarkAudioDecoder {
    fn decode(
        &mut self,
        packet: Option<&[u8]>,
        fec: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, CodecError> {
        let ch = usize::from(self.channels);
        match packet {
            Some(p) if !fec => {
                if p.len() < 5 {
                    return Err(CodecError("short".into()));
                }
                let n = usize::from(u16::from_le_bytes([p[1], p[2]]));
                let mark = i16::from_le_bytes([p[3], p[4]]);
                out.extend(std::iter::repeat_n(mark, n * ch));
                Ok(n)
            }
            _ => {
                out.extend(std::iter::repeat_n(CONCEALED, frame_samples * ch));
                Ok(frame_samples)
            }
        }
    }
}

/// Video frame: keyframe flag, width, height (LE), the first luma byte (the mark), padding
/// to the bit rate at 30 frames a second (key frames 4 times that).
pub struct MarkVideoEncoder {
    pub bit_rate: u32,
}

impl VideoEncoder for MarkVideoEncoder {
    fn encode(
        &mut self,
        picture: &YuvFrame<'_>,
        keyframe: bool,
        out: &mut Vec<EncodedVideo>,
    ) -> Result<(), CodecError> {
        let mut bytes = (self.bit_rate as usize / 8 / 30).clamp(6, 200_000);
        if keyframe {
            bytes = (bytes * 4).min(400_000);
        }
        let mut data = vec![0x55; bytes];
        data[0] = u8::from(keyframe);
        data[1..3].copy_from_slice(&picture.width.to_le_bytes());
        data[3..5].copy_from_slice(&picture.height.to_le_bytes());
        data[5] = picture.y[0];
        out.push(EncodedVideo { data, keyframe });
        Ok(())
    }
    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError> {
        self.bit_rate = bit_rate;
        Ok(())
    }
}

/// Decodes [`MarkVideoEncoder`]'s frames into flat pictures of the mark.
pub struct MarkVideoDecoder;

impl VideoDecoder for MarkVideoDecoder {
    fn decode(&mut self, data: &[u8], out: &mut Vec<DecodedPicture>) -> Result<(), CodecError> {
        if data.len() < 6 || data[0] > 1 {
            return Err(CodecError("not a frame".into()));
        }
        let w = u16::from_le_bytes([data[1], data[2]]);
        let h = u16::from_le_bytes([data[3], data[4]]);
        if w == 0 || h == 0 || w > 4096 || h > 4096 {
            return Err(CodecError("bad size".into()));
        }
        let c = usize::from(w).div_ceil(2) * usize::from(h).div_ceil(2);
        out.push(DecodedPicture {
            width: w,
            height: h,
            y: vec![data[5]; usize::from(w) * usize::from(h)],
            u: vec![128; c],
            v: vec![128; c],
        });
        Ok(())
    }
}

/// The factory of the mark codecs.
pub struct MarkCodecs;

impl CodecFactory for MarkCodecs {
    fn audio_encoder(
        &self,
        bit_rate: u32,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioEncoder>, CodecError> {
        Ok(Box::new(MarkAudioEncoder {
            bit_rate,
            rate: sampling_rate,
            channels,
        }))
    }
    fn audio_decoder(
        &self,
        _sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioDecoder>, CodecError> {
        Ok(Box::new(MarkAudioDecoder { channels }))
    }
    fn video_encoder(
        &self,
        bit_rate: u32,
        width: u16,
        height: u16,
    ) -> Result<Box<dyn VideoEncoder>, CodecError> {
        let _ = (width, height);
        Ok(Box::new(MarkVideoEncoder { bit_rate }))
    }
    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError> {
        Ok(Box::new(MarkVideoDecoder))
    }
}

/// The link between the two engines (lossy packets only are lost; signalling is reliable
/// as net_crypto's lossless packets are).
#[derive(Debug, Clone, Copy)]
pub struct Link {
    pub one_way: Duration,
    /// Extra delay drawn uniformly in 0..=jitter for each lossy packet (reorders them).
    pub jitter: Duration,
    /// Probability of losing a lossy packet.
    pub loss: f64,
}

impl Default for Link {
    fn default() -> Self {
        Self {
            one_way: Duration::from_millis(30),
            jitter: Duration::ZERO,
            loss: 0.0,
        }
    }
}

/// Two engines, `a` and `b`, each seeing the other as friend 0.
pub struct Pair {
    pub a: Calls,
    pub b: Calls,
    pub now: Timestamp,
    pub link: Link,
    rng: ChaCha8Rng,
    /// (deliver at, to b?, packet)
    flight: Vec<(Timestamp, bool, AvTransmit)>,
    pub a_events: VecDeque<(Timestamp, AvEvent)>,
    pub b_events: VecDeque<(Timestamp, AvEvent)>,
    /// When set, lossy packets from a with this id are dropped.
    pub drop_from_a: Option<u8>,
}

pub const F: u32 = 0;

impl Pair {
    pub fn new(seed: u64, link: Link) -> Self {
        Self::with_codecs(seed, link, || Box::new(MarkCodecs))
    }

    /// Two engines on codecs from `codecs`.
    pub fn with_codecs(seed: u64, link: Link, codecs: fn() -> Box<dyn CodecFactory>) -> Self {
        Self {
            a: Calls::with_seed(codecs(), seed),
            b: Calls::with_seed(codecs(), seed ^ 0xFFFF),
            now: Timestamp::from_secs(1),
            link,
            rng: ChaCha8Rng::seed_from_u64(seed),
            flight: Vec::new(),
            a_events: VecDeque::new(),
            b_events: VecDeque::new(),
            drop_from_a: None,
        }
    }

    /// Moves both engines' outputs onto the link and their events into the logs.
    pub fn pump(&mut self) {
        let now = self.now;
        for (from_a, engine) in [(true, &mut self.a), (false, &mut self.b)] {
            while let Some(t) = engine.poll_transmit() {
                let mut at = now + self.link.one_way;
                if !t.lossless {
                    if from_a && self.drop_from_a == t.data.first().copied() {
                        continue;
                    }
                    if self.rng.gen_bool(self.link.loss) {
                        continue;
                    }
                    let j = self.link.jitter.as_micros() as u64;
                    if j > 0 {
                        at += Duration::from_micros(self.rng.gen_range(0..=j));
                    }
                }
                self.flight.push((at, from_a, t));
            }
            let log = if from_a {
                &mut self.a_events
            } else {
                &mut self.b_events
            };
            while let Some(e) = engine.poll_event() {
                log.push_back((now, e));
            }
        }
    }

    /// Advances simulated time to `until`, 1 ms at a time, delivering and timing out.
    pub fn run_until(&mut self, until: Timestamp) {
        while self.now < until {
            self.now += Duration::from_millis(1);
            self.step();
        }
    }

    /// Delivers what is due now and runs due timers.
    pub fn step(&mut self) {
        let now = self.now;
        self.pump();
        let mut due = Vec::new();
        let mut i = 0;
        while i < self.flight.len() {
            if self.flight[i].0 <= now {
                due.push(self.flight.remove(i));
            } else {
                i += 1;
            }
        }
        due.sort_by_key(|d| d.0);
        for (_, from_a, t) in due {
            let to = if from_a { &mut self.b } else { &mut self.a };
            if t.lossless {
                to.handle_msi(now, F, &t.data);
            } else {
                to.handle_media(now, F, &t.data);
            }
        }
        for engine in [&mut self.a, &mut self.b] {
            if engine.poll_timeout().is_some_and(|t| t <= now) {
                engine.handle_timeout(now);
            }
        }
        self.pump();
    }

    /// Runs `ms` milliseconds.
    pub fn run_ms(&mut self, ms: u64) {
        let until = self.now + Duration::from_millis(ms);
        self.run_until(until);
    }

    /// a calls b, b answers; both with these rates. Returns after the call is up.
    pub fn connect(&mut self, a_rates: (u32, u32), b_rates: (u32, u32)) {
        self.a.call(self.now, F, a_rates.0, a_rates.1).unwrap();
        self.run_ms(100);
        assert!(
            self.b_events
                .iter()
                .any(|(_, e)| matches!(e, AvEvent::Call { .. })),
            "b heard the call"
        );
        self.b.answer(self.now, F, b_rates.0, b_rates.1).unwrap();
        self.run_ms(100);
        self.a_events.clear();
        self.b_events.clear();
    }

    /// Sends one 20 ms mono 48 kHz frame from a with `mark`.
    pub fn a_sends_audio(&mut self, mark: i16) -> Result<(), super::SendFrameError> {
        let pcm = [mark; 960];
        self.a.send_audio_frame(self.now, F, &pcm, 960, 1, 48000)
    }

    /// The state events a heard.
    pub fn states(log: &VecDeque<(Timestamp, AvEvent)>) -> Vec<u32> {
        log.iter()
            .filter_map(|(_, e)| match e {
                AvEvent::State { state, .. } => Some(state.0),
                _ => None,
            })
            .collect()
    }
}
