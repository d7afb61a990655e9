//! [`StandInCodecs`]: deterministic codecs for the simulator. They do no signal processing
//! worth the name, but their frames are the sizes real encodes have at the same bit rate, so
//! a simulated call loads its links as a real one does, and they carry enough of the signal
//! that the marks of [`super::signal`] survive (a tone's frequency, a test picture's blocks).
//!
//! Sizes (measured against libopus and libvpx in this file's tests):
//! - audio: `bit_rate × frame duration / 8` bytes and [`OPUS_PACKET_OVERHEAD`], as Opus's
//!   rate control yields (within 20 % from 16 to 128 kbit/s for 10 to 60 ms frames);
//! - video: libvpx's budget per frame is `bit_rate / 8 / 30` bytes (toxav encodes every
//!   picture with duration 1 in libvpx's default 1/30 s time base); a delta frame takes
//!   [`DELTA_PERCENT`] of it and a key frame [`KEY_FRAME_RATIO`] times it, key frames as
//!   toxav places them (the first 7, forced ones, a new size, and every 40th).
//!
//! Formats (ours; nothing outside a simulated call ever sees them):
//! - audio: tag `0xA5`, channels, samples per channel (u16), decimation `d` (u16), shift
//!   (u8), then the first channel's every `d`-th sample as a signed nibble (`sample >> shift`),
//!   two per byte, high first; zero bytes pad to the size. `d` is the smallest that fits, so
//!   the audio band carried is `rate / 2d` (over 2 kHz from 24 kbit/s at 20 ms);
//! - video: tag `0x56`, flags (bit 0: key frame), width and height (u16), then the mean luma
//!   of each cell of a [`THUMB_COLUMNS`] × [`THUMB_ROWS`] grid over the picture, row by row;
//!   zero bytes pad to the size. It decodes to a picture of those cells, grey chroma.

use super::codec::{
    AudioDecoder, AudioEncoder, CodecError, CodecFactory, DecodedPicture, EncodedVideo,
    StandInCodecs, VideoDecoder, VideoEncoder, YuvFrame,
};
use rustox_net_crypto::wire::Reader;

const AUDIO_TAG: u8 = 0xA5;
const AUDIO_HEADER_LEN: usize = 7;
const VIDEO_TAG: u8 = 0x56;
/// The thumbnail grid a stand-in video frame carries (a multiple of the test pattern's 4 × 5
/// cells, so each pattern cell is 2 × 2 thumbnail cells).
pub const THUMB_COLUMNS: usize = 8;
/// See [`THUMB_COLUMNS`].
pub const THUMB_ROWS: usize = 10;
const VIDEO_HEADER_LEN: usize = 6;
/// The sampling rates Opus codes (toxav.h).
const SAMPLING_RATES: [u32; 5] = [8000, 12000, 16000, 24000, 48000];
/// audio.h's `AUDIO_MAX_FRAME_DURATION_MS`.
const MAX_FRAME_MS: u32 = 120;
/// libvpx's default time base is 1/30 s and toxav gives each picture duration 1.
const VIDEO_FRAMES_PER_SECOND: u32 = 30;
/// A VP8 delta frame's share of the per-frame budget (measured: 75–90 % for a moving picture
/// at 250 kbit/s to 2 Mbit/s).
pub const DELTA_PERCENT: u32 = 85;
/// A VP8 key frame's size in per-frame budgets (measured: 3 to 7, more at low rates).
pub const KEY_FRAME_RATIO: u32 = 5;
/// video.c's `VPX_MAX_DIST_START`.
const KEY_FRAME_MAX_DIST: u64 = 40;
/// toxav.c's `VIDEO_SEND_X_KEYFRAMES_FIRST`.
const KEY_FRAMES_FIRST: u64 = 7;
/// The largest picture the stand-in decoder builds (as rustox-codec's VP8 bound).
const MAX_PICTURE_PIXELS: usize = 4096 * 2304;

fn bad(what: &str) -> CodecError {
    CodecError(format!("stand-in: {what}"))
}

fn check_format(sampling_rate: u32, channels: u8) -> Result<(), CodecError> {
    if !SAMPLING_RATES.contains(&sampling_rate) {
        return Err(bad("unsupported sampling rate"));
    }
    if !(1..=2).contains(&channels) {
        return Err(bad("unsupported channel count"));
    }
    Ok(())
}

/// What an Opus packet carries beyond its bit rate's share, measured at 16 to 128 kbit/s with
/// toxav's settings (the table-of-contents byte, the range coder's tail, the FEC layer).
pub const OPUS_PACKET_OVERHEAD: usize = 4;

/// The bytes a real Opus frame of `samples` per channel has at `bit_rate`.
pub fn audio_frame_len(bit_rate: u32, sampling_rate: u32, samples: usize) -> usize {
    let bits = u64::from(bit_rate) * samples as u64 / u64::from(sampling_rate.max(1));
    usize::try_from(bits / 8)
        .unwrap_or(usize::MAX)
        .saturating_add(OPUS_PACKET_OVERHEAD)
}

/// The bytes a real VP8 frame has at `bit_rate` (see the module documentation).
pub fn video_frame_len(bit_rate: u32, keyframe: bool) -> usize {
    let budget = bit_rate / 8 / VIDEO_FRAMES_PER_SECOND;
    let len = if keyframe {
        budget.saturating_mul(KEY_FRAME_RATIO)
    } else {
        budget / 100 * DELTA_PERCENT
    };
    (len as usize).max(VIDEO_HEADER_LEN + THUMB_COLUMNS * THUMB_ROWS)
}

struct StandInAudioEncoder {
    bit_rate: u32,
    sampling_rate: u32,
    channels: u8,
}

impl AudioEncoder for StandInAudioEncoder {
    fn encode(&mut self, pcm: &[i16], out: &mut [u8]) -> Result<usize, CodecError> {
        let channels = usize::from(self.channels);
        if !pcm.len().is_multiple_of(channels) {
            return Err(bad("samples do not split into the channels"));
        }
        let samples = pcm.len() / channels;
        // Opus's frame durations: 2.5, 5, 10, 20, 40 and 60 ms.
        let rate = self.sampling_rate as usize;
        if ![25, 50, 100, 200, 400, 600]
            .iter()
            .any(|d| rate * d == samples * 10_000)
        {
            return Err(bad("not a 2.5–60 ms frame"));
        }
        let target = audio_frame_len(self.bit_rate, self.sampling_rate, samples);
        let room = target.saturating_sub(AUDIO_HEADER_LEN).max(1);
        // Every `decimation`-th sample of the first channel, two to a byte.
        let decimation = samples.div_ceil(room * 2).max(1);
        let carried: Vec<i16> = pcm.iter().step_by(channels * decimation).copied().collect();
        let peak = carried.iter().map(|s| s.unsigned_abs()).max().unwrap_or(0);
        let mut shift = 0u8;
        while (peak >> shift) > 7 {
            shift += 1;
        }
        let len = (AUDIO_HEADER_LEN + carried.len().div_ceil(2)).max(target);
        if out.len() < len {
            return Err(bad("output buffer too small"));
        }
        out[..len].fill(0);
        out[0] = AUDIO_TAG;
        out[1] = self.channels;
        out[2..4].copy_from_slice(&(samples as u16).to_be_bytes());
        out[4..6].copy_from_slice(&(decimation as u16).to_be_bytes());
        out[6] = shift;
        for (i, s) in carried.iter().enumerate() {
            let nibble = ((s >> shift).clamp(-8, 7) as u8) & 0x0f;
            out[AUDIO_HEADER_LEN + i / 2] |= if i.is_multiple_of(2) {
                nibble << 4
            } else {
                nibble
            };
        }
        Ok(len)
    }

    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError> {
        if bit_rate == 0 {
            return Err(bad("zero bit rate"));
        }
        self.bit_rate = bit_rate;
        Ok(())
    }
}

struct StandInAudioDecoder {
    sampling_rate: u32,
    channels: u8,
}

impl StandInAudioDecoder {
    fn max_samples(&self) -> usize {
        (self.sampling_rate * MAX_FRAME_MS / 1000) as usize
    }

    fn silence(&self, frame_samples: usize, out: &mut Vec<i16>) -> Result<usize, CodecError> {
        if frame_samples == 0 || frame_samples > self.max_samples() {
            return Err(bad("bad frame length"));
        }
        out.resize(out.len() + frame_samples * usize::from(self.channels), 0);
        Ok(frame_samples)
    }

    fn decode_packet(&self, packet: &[u8], out: &mut Vec<i16>) -> Result<usize, CodecError> {
        let short = |_| bad("short packet");
        let mut reader = Reader::new(packet);
        if reader.u8().map_err(short)? != AUDIO_TAG {
            return Err(bad("not a stand-in audio frame"));
        }
        let _channels = reader.u8().map_err(short)?;
        let samples = usize::from(reader.u16_be().map_err(short)?);
        let decimation = usize::from(reader.u16_be().map_err(short)?);
        let shift = reader.u8().map_err(short)?;
        if samples == 0 || samples > self.max_samples() || decimation == 0 || shift > 15 {
            return Err(bad("bad header"));
        }
        let values = samples.div_ceil(decimation);
        let body = reader.rest();
        if body.len() < values.div_ceil(2) {
            return Err(bad("short packet"));
        }
        let value = |i: usize| -> i32 {
            let byte = body[i / 2];
            let nibble = if i.is_multiple_of(2) {
                byte >> 4
            } else {
                byte & 0x0f
            };
            // Sign-extend the nibble, then undo the shift.
            (i32::from((nibble << 4) as i8) >> 4) << shift
        };
        let channels = usize::from(self.channels);
        out.reserve(samples * channels);
        for n in 0..samples {
            // Linear interpolation between the carried samples.
            let (i, frac) = (n / decimation, n % decimation);
            let a = value(i);
            let b = if i + 1 < values { value(i + 1) } else { a };
            let s = a + (b - a) * frac as i32 / decimation as i32;
            let s = s.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
            out.extend(std::iter::repeat_n(s, channels));
        }
        Ok(samples)
    }
}

impl AudioDecoder for StandInAudioDecoder {
    fn decode(
        &mut self,
        packet: Option<&[u8]>,
        fec: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, CodecError> {
        match (packet, fec) {
            // No FEC data in a stand-in frame: a lost frame is silence, as concealment is.
            (None, _) | (Some(_), true) => self.silence(frame_samples, out),
            (Some(packet), false) => self.decode_packet(packet, out),
        }
    }
}

fn check_picture(width: u16, height: u16) -> Result<(usize, usize), CodecError> {
    let (w, h) = (usize::from(width), usize::from(height));
    if w == 0 || h == 0 || w * h > MAX_PICTURE_PIXELS {
        return Err(bad("unsupported picture size"));
    }
    Ok((w, h))
}

/// The row or column range of thumbnail cell `index` of `cells` over `len` pixels.
fn cell_range(index: usize, cells: usize, len: usize) -> std::ops::Range<usize> {
    index * len / cells..(index + 1) * len / cells
}

struct StandInVideoEncoder {
    bit_rate: u32,
    size: (u16, u16),
    frames: u64,
    since_key: u64,
}

impl VideoEncoder for StandInVideoEncoder {
    fn encode(
        &mut self,
        picture: &YuvFrame<'_>,
        keyframe: bool,
        out: &mut Vec<EncodedVideo>,
    ) -> Result<(), CodecError> {
        let (w, h) = check_picture(picture.width, picture.height)?;
        if picture.y.len() < w * h {
            return Err(bad("luma plane too short"));
        }
        let resized = (picture.width, picture.height) != self.size;
        let key = keyframe
            || resized
            || self.frames < KEY_FRAMES_FIRST
            || self.since_key + 1 >= KEY_FRAME_MAX_DIST;
        self.size = (picture.width, picture.height);
        self.frames += 1;
        self.since_key = if key { 0 } else { self.since_key + 1 };
        let len = video_frame_len(self.bit_rate, key);
        let mut data = Vec::with_capacity(len);
        data.push(VIDEO_TAG);
        data.push(u8::from(key));
        data.extend_from_slice(&picture.width.to_be_bytes());
        data.extend_from_slice(&picture.height.to_be_bytes());
        for row in 0..THUMB_ROWS {
            for col in 0..THUMB_COLUMNS {
                let (rows, cols) = (
                    cell_range(row, THUMB_ROWS, h),
                    cell_range(col, THUMB_COLUMNS, w),
                );
                let count = rows.len() * cols.len();
                let sum: usize = rows
                    .flat_map(|r| picture.y[r * w + cols.start..r * w + cols.end].iter())
                    .map(|&p| usize::from(p))
                    .sum();
                data.push(sum.checked_div(count).map_or(128, |mean| mean as u8));
            }
        }
        data.resize(len, 0);
        out.push(EncodedVideo {
            data,
            keyframe: key,
        });
        Ok(())
    }

    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError> {
        if bit_rate == 0 {
            return Err(bad("zero bit rate"));
        }
        self.bit_rate = bit_rate;
        Ok(())
    }
}

struct StandInVideoDecoder;

impl VideoDecoder for StandInVideoDecoder {
    fn decode(&mut self, data: &[u8], out: &mut Vec<DecodedPicture>) -> Result<(), CodecError> {
        let short = |_| bad("short frame");
        let mut reader = Reader::new(data);
        if reader.u8().map_err(short)? != VIDEO_TAG {
            return Err(bad("not a stand-in video frame"));
        }
        let _flags = reader.u8().map_err(short)?;
        let width = reader.u16_be().map_err(short)?;
        let height = reader.u16_be().map_err(short)?;
        let (w, h) = check_picture(width, height)?;
        let thumb: [u8; THUMB_COLUMNS * THUMB_ROWS] = reader.array().map_err(short)?;
        let mut y = vec![0u8; w * h];
        for row in 0..THUMB_ROWS {
            for col in 0..THUMB_COLUMNS {
                let value = thumb[row * THUMB_COLUMNS + col];
                let cols = cell_range(col, THUMB_COLUMNS, w);
                for r in cell_range(row, THUMB_ROWS, h) {
                    y[r * w + cols.start..r * w + cols.end].fill(value);
                }
            }
        }
        let chroma = w.div_ceil(2) * h.div_ceil(2);
        out.push(DecodedPicture {
            width,
            height,
            y,
            u: vec![128; chroma],
            v: vec![128; chroma],
        });
        Ok(())
    }
}

impl CodecFactory for StandInCodecs {
    fn audio_encoder(
        &self,
        bit_rate: u32,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioEncoder>, CodecError> {
        check_format(sampling_rate, channels)?;
        if bit_rate == 0 {
            return Err(bad("zero bit rate"));
        }
        Ok(Box::new(StandInAudioEncoder {
            bit_rate,
            sampling_rate,
            channels,
        }))
    }

    fn audio_decoder(
        &self,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioDecoder>, CodecError> {
        check_format(sampling_rate, channels)?;
        Ok(Box::new(StandInAudioDecoder {
            sampling_rate,
            channels,
        }))
    }

    fn video_encoder(
        &self,
        bit_rate: u32,
        width: u16,
        height: u16,
    ) -> Result<Box<dyn VideoEncoder>, CodecError> {
        check_picture(width, height)?;
        if bit_rate == 0 {
            return Err(bad("zero bit rate"));
        }
        Ok(Box::new(StandInVideoEncoder {
            bit_rate,
            size: (width, height),
            frames: 0,
            since_key: 0,
        }))
    }

    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError> {
        Ok(Box::new(StandInVideoDecoder))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::av::signal::{decode_pattern, pattern_picture, AudioMarker, Tone};

    fn frame<'a>(p: &'a crate::av::signal::TestPicture) -> YuvFrame<'a> {
        YuvFrame {
            width: p.width,
            height: p.height,
            y: &p.y,
            u: &p.u,
            v: &p.v,
        }
    }

    #[test]
    fn audio_round_trip_keeps_length_and_silence() {
        let codecs = StandInCodecs;
        for rate in SAMPLING_RATES {
            for channels in [1u8, 2] {
                let mut enc = codecs.audio_encoder(32_000, rate, channels).unwrap();
                let mut dec = codecs.audio_decoder(rate, channels).unwrap();
                let samples = rate as usize / 50;
                let mut out = [0u8; 2000];
                let pcm = vec![0i16; samples * usize::from(channels)];
                let n = enc.encode(&pcm, &mut out).unwrap();
                assert_eq!(n, audio_frame_len(32_000, rate, samples));
                let mut decoded = Vec::new();
                assert_eq!(
                    dec.decode(Some(&out[..n]), false, samples, &mut decoded)
                        .unwrap(),
                    samples
                );
                assert_eq!(decoded, pcm, "silence stays silence");
                let mut lost = Vec::new();
                assert_eq!(
                    dec.decode(None, false, samples, &mut lost).unwrap(),
                    samples
                );
                assert_eq!(lost, pcm);
                let mut fec = Vec::new();
                assert_eq!(
                    dec.decode(Some(&out[..n]), true, samples, &mut fec)
                        .unwrap(),
                    samples
                );
                assert_eq!(fec.len(), pcm.len());
            }
        }
    }

    #[test]
    fn audio_is_deterministic_and_bad_input_is_an_error() {
        let codecs = StandInCodecs;
        let mut a = codecs.audio_encoder(48_000, 48_000, 2).unwrap();
        let mut b = codecs.audio_encoder(48_000, 48_000, 2).unwrap();
        let pcm = Tone::new(440.0, 48_000, 2, 9000).frame(960);
        let (mut x, mut y) = ([0u8; 500], [0u8; 500]);
        let n = a.encode(&pcm, &mut x).unwrap();
        assert_eq!(b.encode(&pcm, &mut y).unwrap(), n);
        assert_eq!(x[..n], y[..n]);
        assert!(a.encode(&pcm[..1001], &mut x).is_err());
        assert!(
            a.encode(&pcm[..1000], &mut x).is_err(),
            "not a frame duration"
        );
        assert!(a.encode(&pcm, &mut x[..10]).is_err());
        assert!(codecs.audio_encoder(48_000, 44_100, 1).is_err());
        assert!(codecs.audio_encoder(48_000, 48_000, 3).is_err());
        let mut dec = codecs.audio_decoder(48_000, 2).unwrap();
        let mut out = Vec::new();
        for packet in [
            &[][..],
            &[AUDIO_TAG],
            &[0u8; 40],
            &[AUDIO_TAG, 1, 0xff, 0xff, 0, 1, 0],
        ] {
            assert!(dec.decode(Some(packet), false, 960, &mut out).is_err());
        }
        // A header promising more samples than the body holds.
        assert!(dec
            .decode(
                Some(&[AUDIO_TAG, 1, 0x03, 0xc0, 0, 1, 0, 0]),
                false,
                960,
                &mut out
            )
            .is_err());
        assert!(dec.decode(None, false, 48_000, &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn video_round_trip_keeps_the_pattern_and_places_key_frames() {
        let codecs = StandInCodecs;
        let mut enc = codecs.video_encoder(500_000, 320, 240).unwrap();
        let mut dec = codecs.video_decoder().unwrap();
        let mut keys = Vec::new();
        for n in 0..100u16 {
            let (w, h) = if n < 90 { (320, 240) } else { (177, 99) };
            let picture = pattern_picture(w, h, n.wrapping_mul(2654));
            let mut out = Vec::new();
            enc.encode(&frame(&picture), n == 20, &mut out).unwrap();
            assert_eq!(out.len(), 1);
            let encoded = &out[0];
            assert_eq!(
                encoded.data.len(),
                video_frame_len(500_000, encoded.keyframe)
            );
            if encoded.keyframe {
                keys.push(n);
            }
            let mut pictures = Vec::new();
            dec.decode(&encoded.data, &mut pictures).unwrap();
            let p = &pictures[0];
            assert_eq!((p.width, p.height), (w, h));
            assert_eq!(
                p.u.len(),
                usize::from(w).div_ceil(2) * usize::from(h).div_ceil(2)
            );
            assert_eq!(
                decode_pattern(p.width, p.height, &p.y),
                Some(n.wrapping_mul(2654))
            );
        }
        assert_eq!(keys, [0, 1, 2, 3, 4, 5, 6, 20, 60, 90]);
        let mut pictures = Vec::new();
        for bad in [
            &[][..],
            &[VIDEO_TAG, 0, 0, 0, 0, 10],
            &[VIDEO_TAG, 0, 1, 0, 1, 0, 1, 2],
        ] {
            assert!(dec.decode(bad, &mut pictures).is_err());
        }
        assert!(pictures.is_empty());
    }

    #[test]
    fn audio_marks_survive() {
        let codecs = StandInCodecs;
        for bit_rate in [24_000, 32_000, 64_000] {
            let mut enc = codecs.audio_encoder(bit_rate, 48_000, 1).unwrap();
            let mut dec = codecs.audio_decoder(48_000, 1).unwrap();
            let mut marker = AudioMarker::new(48_000, 1);
            for i in 0..64u64 {
                let mut out = [0u8; 1000];
                let n = enc.encode(&marker.frame(i, 960), &mut out).unwrap();
                let mut pcm = Vec::new();
                dec.decode(Some(&out[..n]), false, 960, &mut pcm).unwrap();
                let mark = crate::av::signal::decode_mark(&pcm, 1, 48_000);
                assert_eq!(mark, Some((i % 16) as u16), "{bit_rate} bit/s frame {i}");
            }
        }
    }

    /// The stand-in's sizes against real encodes of the same signal at the same settings.
    #[cfg(feature = "codecs")]
    #[test]
    fn sizes_follow_real_encodes() {
        use crate::av::codec::SystemCodecs;
        for bit_rate in [16_000u32, 24_000, 32_000, 48_000, 64_000, 128_000] {
            for ms in [10usize, 20, 60] {
                let samples = 48 * ms;
                let mut real = SystemCodecs.audio_encoder(bit_rate, 48_000, 1).unwrap();
                let mut marker = AudioMarker::new(48_000, 1);
                let mut total = 0;
                for i in 0..60 {
                    let mut out = [0u8; 4000];
                    let n = real.encode(&marker.frame(i, samples), &mut out).unwrap();
                    if i >= 10 {
                        total += n;
                    }
                }
                let real_mean = total as f64 / 50.0;
                let stand_in = audio_frame_len(bit_rate, 48_000, samples) as f64;
                println!(
                    "audio {bit_rate} bit/s {ms} ms: real {real_mean:.0} B, stand-in {stand_in} B"
                );
                assert!(
                    (stand_in / real_mean - 1.0).abs() < 0.2,
                    "audio {bit_rate} {ms}: {real_mean} vs {stand_in}"
                );
            }
        }
        for (w, h, bit_rate) in [
            (320u16, 240u16, 250_000u32),
            (320, 240, 1_000_000),
            (640, 480, 500_000),
            (640, 480, 2_000_000),
        ] {
            let mut totals = [0usize; 2];
            let mut key_sizes = [Vec::new(), Vec::new()];
            for (k, factory) in [&SystemCodecs as &dyn CodecFactory, &StandInCodecs]
                .into_iter()
                .enumerate()
            {
                let mut enc = factory.video_encoder(bit_rate, w, h).unwrap();
                for n in 0..90u16 {
                    let mut picture = pattern_picture(w, h, n);
                    // Movement on top of the blocks, as a camera picture has.
                    for (i, p) in picture.y.iter_mut().enumerate() {
                        let (r, c) = (i / usize::from(w), i % usize::from(w));
                        *p = p.saturating_add(((r + c + usize::from(n) * 3) % 32) as u8);
                    }
                    let mut out = Vec::new();
                    enc.encode(&frame(&picture), n == 45, &mut out).unwrap();
                    for e in out {
                        if n >= 7 {
                            totals[k] += e.data.len();
                            if e.keyframe {
                                key_sizes[k].push(e.data.len());
                            }
                        }
                    }
                }
            }
            let mean = |v: &Vec<usize>| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
            println!(
                "video {w}x{h} {bit_rate} bit/s: real {} B ({:.0} B keys), stand-in {} B ({:.0} B keys)",
                totals[0], mean(&key_sizes[0]), totals[1], mean(&key_sizes[1])
            );
            let ratio = totals[1] as f64 / totals[0] as f64;
            assert!(
                (ratio - 1.0).abs() < 0.2,
                "video {w}x{h} {bit_rate}: ratio {ratio}"
            );
            let key_ratio = mean(&key_sizes[1]) / mean(&key_sizes[0]);
            assert!(
                (0.5..2.0).contains(&key_ratio),
                "key frames: ratio {key_ratio}"
            );
        }
    }
}
