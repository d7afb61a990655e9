//! Test signals for calls, shared by the example answering machine, the interop tests and the
//! av-bench: a tone generator and a frequency estimator for PCM, audio marks that tell a
//! receiver which sent 20 ms frame it hears (for mouth-to-ear latency), and a test picture
//! that carries a frame number through VP8.
//!
//! # Audio marks
//! Frame `i` of a marked stream is a tone at [`mark_frequency`]`(i mod `[`MARK_COUNT`]`)`:
//! 400 Hz + 100 Hz × (i mod 16), so 400 to 1900 Hz — inside every Opus band (8 kHz sampling
//! keeps up to 4 kHz) and inside what the stand-in codec carries from 24 kbit/s. The phase
//! runs on across frames ([`AudioMarker`]) so the stream has no clicks for Opus to spend bits
//! on. [`decode_mark`] runs Goertzel filters for the 16 frequencies over the last 60 % of a
//! received frame: a codec that delays the signal by up to 40 % of a frame (Opus: 6.5 ms of
//! lookahead in a 20 ms frame) still puts only sent frame `i` there. The index repeats every
//! 16 frames (320 ms at 20 ms): a receiver matches it to the latest frame sent with that
//! index, so delays under 320 ms are measured unambiguously.
//!
//! # Test picture
//! [`pattern_picture`] divides the luma plane into [`PATTERN_COLUMNS`] × [`PATTERN_ROWS`]
//! cells, black (16) or white (235): the first four rows carry a `u16` (cell `k`, row by row,
//! is bit `k`), the last row a check nibble, so [`decode_pattern`] can say `None` for a
//! picture that is not one (grey, noise, a frozen half-decoded frame). Cells scale with the
//! picture, so VP8's own downscaling (`rc_resize_allowed`) does not defeat it.

use std::f64::consts::PI;

/// How many distinct audio marks there are before the index repeats.
pub const MARK_COUNT: u16 = 16;
/// The lowest mark frequency.
pub const MARK_BASE_HZ: f64 = 400.0;
/// The spacing of mark frequencies: wider than the 83 Hz a 12 ms window resolves.
pub const MARK_STEP_HZ: f64 = 100.0;
/// The amplitude of marks and of [`Tone`]'s default use: loud, far from clipping.
pub const AMPLITUDE: i16 = 10_000;
/// The share of a received frame (its start) that [`decode_mark`] skips for codec delay.
const MARK_SKIP_PERCENT: usize = 40;
/// Below this RMS a frame is silence, not a mark or a tone.
const SILENCE_RMS: f64 = 300.0;

/// A sine tone, interleaved over its channels, continuous from one frame to the next.
#[derive(Debug, Clone)]
pub struct Tone {
    frequency: f64,
    sampling_rate: u32,
    channels: u8,
    amplitude: i16,
    next_sample: u64,
}

impl Tone {
    /// A tone at `frequency` Hz for a stream of `sampling_rate` Hz and `channels`.
    pub fn new(frequency: f64, sampling_rate: u32, channels: u8, amplitude: i16) -> Self {
        Tone {
            frequency,
            sampling_rate,
            channels: channels.max(1),
            amplitude,
            next_sample: 0,
        }
    }

    /// The next `samples` samples per channel, interleaved.
    pub fn frame(&mut self, samples: usize) -> Vec<i16> {
        let step = 2.0 * PI * self.frequency / f64::from(self.sampling_rate.max(1));
        let mut pcm = Vec::with_capacity(samples * usize::from(self.channels));
        for n in 0..samples as u64 {
            let t = (self.next_sample + n) as f64;
            let s = (f64::from(self.amplitude) * (step * t).sin()) as i16;
            pcm.extend(std::iter::repeat_n(s, usize::from(self.channels)));
        }
        self.next_sample += samples as u64;
        pcm
    }
}

/// The first channel of interleaved `pcm`, as reals.
fn first_channel(pcm: &[i16], channels: u8) -> Vec<f64> {
    pcm.iter()
        .step_by(usize::from(channels.max(1)))
        .map(|&s| f64::from(s))
        .collect()
}

fn rms(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64).sqrt()
}

/// The power of `frequency` in `x` (the Goertzel algorithm: one DFT bin at any frequency).
pub fn goertzel_power(x: &[f64], frequency: f64, sampling_rate: u32) -> f64 {
    let w = 2.0 * PI * frequency / f64::from(sampling_rate.max(1));
    let coeff = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0, 0.0);
    for &v in x {
        let s = v + coeff * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    (s1 * s1 + s2 * s2 - coeff * s1 * s2).max(0.0)
}

/// The frequency of the tone in `pcm` (first channel), or `None` when there is no clear tone
/// (silence, noise). Goertzel over 50 Hz to 4 kHz in 10 Hz steps, then in 0.5 Hz steps around
/// the strongest; the tone must carry most of the signal's energy.
pub fn estimate_frequency(pcm: &[i16], channels: u8, sampling_rate: u32) -> Option<f64> {
    let x = first_channel(pcm, channels);
    let level = rms(&x);
    if x.len() < 64 || level < SILENCE_RMS {
        return None;
    }
    let top = (f64::from(sampling_rate) / 2.0 - 100.0).min(4000.0);
    let strongest = |candidates: &mut dyn Iterator<Item = f64>| {
        candidates
            .map(|f| (f, goertzel_power(&x, f, sampling_rate)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    };
    let (coarse, _) = strongest(&mut (5..=(top / 10.0) as u32).map(|k| f64::from(k) * 10.0))?;
    let (fine, power) = strongest(
        &mut (-20..=20)
            .map(|k| coarse + f64::from(k) * 0.5)
            .filter(|f| *f > 0.0),
    )?;
    // A pure tone of amplitude A over N samples has power (A·N/2)²; its RMS is A/√2.
    let amplitude = 2.0 * power.sqrt() / x.len() as f64;
    (amplitude >= 0.5 * std::f64::consts::SQRT_2 * level).then_some(fine)
}

/// The tone frequency of mark `index` (taken modulo [`MARK_COUNT`]).
pub fn mark_frequency(index: u16) -> f64 {
    MARK_BASE_HZ + MARK_STEP_HZ * f64::from(index % MARK_COUNT)
}

/// Generates a marked audio stream: frame `i` a tone at [`mark_frequency`]`(i)`, with the
/// phase running on across frames.
#[derive(Debug, Clone)]
pub struct AudioMarker {
    sampling_rate: u32,
    channels: u8,
    phase: f64,
}

impl AudioMarker {
    /// A marker for a stream of `sampling_rate` Hz and `channels`.
    pub fn new(sampling_rate: u32, channels: u8) -> Self {
        AudioMarker {
            sampling_rate,
            channels: channels.max(1),
            phase: 0.0,
        }
    }

    /// Frame `index` of the stream: `samples` per channel of its mark tone, interleaved.
    pub fn frame(&mut self, index: u64, samples: usize) -> Vec<i16> {
        let frequency = mark_frequency((index % u64::from(MARK_COUNT)) as u16);
        let step = 2.0 * PI * frequency / f64::from(self.sampling_rate.max(1));
        let mut pcm = Vec::with_capacity(samples * usize::from(self.channels));
        for _ in 0..samples {
            let s = (f64::from(AMPLITUDE) * self.phase.sin()) as i16;
            pcm.extend(std::iter::repeat_n(s, usize::from(self.channels)));
            self.phase = (self.phase + step) % (2.0 * PI);
        }
        pcm
    }
}

/// The mark index (`0..MARK_COUNT`) of a received frame, or `None` for silence or a frame
/// with no clear mark. See the module documentation for the window.
pub fn decode_mark(pcm: &[i16], channels: u8, sampling_rate: u32) -> Option<u16> {
    let x = first_channel(pcm, channels);
    let window = &x[x.len() * MARK_SKIP_PERCENT / 100..];
    if window.len() < 16 || rms(window) < SILENCE_RMS {
        return None;
    }
    let mut powers: Vec<(u16, f64)> = (0..MARK_COUNT)
        .map(|k| (k, goertzel_power(window, mark_frequency(k), sampling_rate)))
        .collect();
    powers.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (best, runner_up) = (powers[0], powers[1]);
    // The mark must stand 6 dB clear of every other candidate.
    (best.1 >= 4.0 * runner_up.1).then_some(best.0)
}

/// Columns of the test picture's cell grid.
pub const PATTERN_COLUMNS: usize = 4;
/// Rows of the test picture's cell grid (four of data, one of check bits).
pub const PATTERN_ROWS: usize = 5;
const BLACK: u8 = 16;
const WHITE: u8 = 235;

/// An I420 picture owned by the caller (planes tightly packed, chroma rounded up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestPicture {
    /// Pixels.
    pub width: u16,
    /// Pixels.
    pub height: u16,
    /// Luma.
    pub y: Vec<u8>,
    /// Chroma U.
    pub u: Vec<u8>,
    /// Chroma V.
    pub v: Vec<u8>,
}

/// The check nibble of `number`: its four nibbles XORed, inverted in two bits so that an
/// all-black or all-white picture does not pass.
fn check_nibble(number: u16) -> u16 {
    (number ^ (number >> 4) ^ (number >> 8) ^ (number >> 12) ^ 0b1010) & 0xf
}

/// The bit a cell carries: data bits in rows 0–3, the check nibble in row 4.
fn cell_bit(number: u16, row: usize, col: usize) -> bool {
    if row < 4 {
        number >> (row * PATTERN_COLUMNS + col) & 1 == 1
    } else {
        check_nibble(number) >> col & 1 == 1
    }
}

fn cell_range(index: usize, cells: usize, len: usize) -> std::ops::Range<usize> {
    index * len / cells..(index + 1) * len / cells
}

/// A `width × height` picture carrying `number` (see the module documentation); chroma grey.
pub fn pattern_picture(width: u16, height: u16, number: u16) -> TestPicture {
    let (w, h) = (usize::from(width), usize::from(height));
    let mut y = vec![BLACK; w * h];
    for row in 0..PATTERN_ROWS {
        for col in 0..PATTERN_COLUMNS {
            if !cell_bit(number, row, col) {
                continue;
            }
            let cols = cell_range(col, PATTERN_COLUMNS, w);
            for r in cell_range(row, PATTERN_ROWS, h) {
                y[r * w + cols.start..r * w + cols.end].fill(WHITE);
            }
        }
    }
    let chroma = w.div_ceil(2) * h.div_ceil(2);
    TestPicture {
        width,
        height,
        y,
        u: vec![128; chroma],
        v: vec![128; chroma],
    }
}

/// The number a received picture (its luma plane, `width × height`, tightly packed)
/// carries, or `None` when it is not a clear test picture: too small, a cell neither clearly
/// black nor white (its central half averaged), or a wrong check nibble.
pub fn decode_pattern(width: u16, height: u16, y: &[u8]) -> Option<u16> {
    let (w, h) = (usize::from(width), usize::from(height));
    if w < 2 * PATTERN_COLUMNS || h < 2 * PATTERN_ROWS || y.len() < w * h {
        return None;
    }
    let mut number = 0u16;
    let mut check = 0u16;
    for row in 0..PATTERN_ROWS {
        for col in 0..PATTERN_COLUMNS {
            let (rows, cols) = (
                cell_range(row, PATTERN_ROWS, h),
                cell_range(col, PATTERN_COLUMNS, w),
            );
            // The central half of the cell: away from edges that VP8 blurs.
            let inner = |r: std::ops::Range<usize>| {
                let quarter = r.len() / 4;
                r.start + quarter..r.end - quarter
            };
            let (rows, cols) = (inner(rows), inner(cols));
            let count = rows.len() * cols.len();
            if count == 0 {
                return None;
            }
            let sum: usize = rows
                .flat_map(|r| y[r * w + cols.start..r * w + cols.end].iter())
                .map(|&p| usize::from(p))
                .sum();
            let mean = sum / count;
            let bit = match mean {
                0..=85 => 0,
                170.. => 1,
                _ => return None,
            };
            if row < 4 {
                number |= bit << (row * PATTERN_COLUMNS + col);
            } else {
                check |= bit << col;
            }
        }
    }
    (check == check_nibble(number)).then_some(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tone_frequency_is_estimated() {
        for rate in [8000, 16_000, 48_000] {
            for freq in [300.0, 440.0, 1000.0, 2500.0] {
                let mut tone = Tone::new(freq, rate, 2, AMPLITUDE);
                let pcm = [
                    tone.frame(rate as usize / 10),
                    tone.frame(rate as usize / 10),
                ]
                .concat();
                let f = estimate_frequency(&pcm, 2, rate).unwrap();
                assert!(
                    (f - freq).abs() <= 1.0,
                    "{freq} Hz at {rate} Hz estimated {f}"
                );
            }
        }
        assert_eq!(estimate_frequency(&[0; 4800], 1, 48_000), None);
        // White noise has no tone.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<i16> = (0..9600)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 48) as i16
            })
            .collect();
        assert_eq!(estimate_frequency(&noise, 1, 48_000), None);
        assert_eq!(decode_mark(&noise[..960], 1, 48_000), None);
        assert_eq!(decode_mark(&[0; 960], 1, 48_000), None);
    }

    #[test]
    fn marks_decode_without_a_codec() {
        for rate in [8000, 12_000, 16_000, 24_000, 48_000] {
            let mut marker = AudioMarker::new(rate, 2);
            for i in 0..40u64 {
                let pcm = marker.frame(i, rate as usize / 50);
                assert_eq!(
                    decode_mark(&pcm, 2, rate),
                    Some((i % 16) as u16),
                    "{rate} Hz frame {i}"
                );
            }
        }
    }

    #[test]
    fn pattern_round_trip() {
        for (w, h) in [(320u16, 240u16), (8, 10), (641, 359)] {
            for n in [0u16, 1, 0x8000, 0xffff, 12345] {
                let p = pattern_picture(w, h, n);
                assert_eq!(p.y.len(), usize::from(w) * usize::from(h));
                assert_eq!(
                    p.u.len(),
                    usize::from(w).div_ceil(2) * usize::from(h).div_ceil(2)
                );
                assert_eq!(decode_pattern(w, h, &p.y), Some(n));
            }
        }
        assert_eq!(decode_pattern(320, 240, &vec![128; 320 * 240]), None);
        assert_eq!(decode_pattern(320, 240, &vec![16; 320 * 240]), None);
        assert_eq!(decode_pattern(320, 240, &vec![235; 320 * 240]), None);
        assert_eq!(decode_pattern(320, 240, &[0; 10]), None);
        assert_eq!(decode_pattern(4, 4, &[0; 16]), None);
        // One flipped data cell breaks the check nibble.
        let mut p = pattern_picture(320, 240, 0x1234);
        for r in 0..48 {
            for c in 0..80 {
                p.y[r * 320 + c] = if p.y[r * 320 + c] == WHITE {
                    BLACK
                } else {
                    WHITE
                };
            }
        }
        assert_eq!(decode_pattern(320, 240, &p.y), None);
    }

    /// Through libopus and libvpx as toxav configures them.
    #[cfg(feature = "codecs")]
    mod real {
        use super::super::*;
        use crate::av::codec::{CodecFactory, SystemCodecs, YuvFrame};

        #[test]
        fn tone_survives_opus() {
            for (rate, channels, bit_rate) in [
                (48_000, 1, 48_000),
                (48_000, 2, 64_000),
                (16_000, 1, 24_000),
                (8000, 1, 16_000),
            ] {
                let mut enc = SystemCodecs
                    .audio_encoder(bit_rate, rate, channels)
                    .unwrap();
                let mut dec = SystemCodecs.audio_decoder(rate, channels).unwrap();
                let mut tone = Tone::new(440.0, rate, channels, AMPLITUDE);
                let samples = rate as usize / 50;
                let mut pcm = Vec::new();
                for _ in 0..50 {
                    let mut out = [0u8; 1500];
                    let n = enc.encode(&tone.frame(samples), &mut out).unwrap();
                    dec.decode(Some(&out[..n]), false, samples, &mut pcm)
                        .unwrap();
                }
                let skip = 10 * samples * usize::from(channels);
                let f = estimate_frequency(&pcm[skip..], channels, rate).unwrap();
                assert!(
                    (f - 440.0).abs() <= 10.0,
                    "{rate} Hz: 440 Hz came back at {f} Hz"
                );
            }
        }

        #[test]
        fn marks_survive_opus() {
            for (rate, bit_rate) in [
                (48_000u32, 48_000u32),
                (48_000, 24_000),
                (16_000, 32_000),
                (8000, 16_000),
            ] {
                let mut enc = SystemCodecs.audio_encoder(bit_rate, rate, 1).unwrap();
                let mut dec = SystemCodecs.audio_decoder(rate, 1).unwrap();
                let mut marker = AudioMarker::new(rate, 1);
                let samples = rate as usize / 50;
                let frames = 200u64;
                let mut right = 0;
                for i in 0..frames {
                    let mut out = [0u8; 1500];
                    let n = enc.encode(&marker.frame(i, samples), &mut out).unwrap();
                    let mut pcm = Vec::new();
                    dec.decode(Some(&out[..n]), false, samples, &mut pcm)
                        .unwrap();
                    if decode_mark(&pcm, 1, rate) == Some((i % u64::from(MARK_COUNT)) as u16) {
                        right += 1;
                    }
                }
                println!("marks through Opus at {rate} Hz, {bit_rate} bit/s: {right}/{frames}");
                assert!(
                    right * 100 >= frames * 95,
                    "{rate} Hz {bit_rate} bit/s: {right}/{frames}"
                );
            }
        }

        #[test]
        fn pattern_survives_vp8() {
            for (w, h, bit_rate) in [
                (320u16, 240u16, 500_000u32),
                (640, 480, 1_000_000),
                (176, 144, 150_000),
            ] {
                let mut enc = SystemCodecs.video_encoder(bit_rate, w, h).unwrap();
                let mut dec = SystemCodecs.video_decoder().unwrap();
                let mut right = 0;
                for n in 0..60u16 {
                    let number = n.wrapping_mul(40_503);
                    let p = pattern_picture(w, h, number);
                    let frame = YuvFrame {
                        width: w,
                        height: h,
                        y: &p.y,
                        u: &p.u,
                        v: &p.v,
                    };
                    let mut out = Vec::new();
                    enc.encode(&frame, false, &mut out).unwrap();
                    for e in out {
                        let mut pictures = Vec::new();
                        dec.decode(&e.data, &mut pictures).unwrap();
                        for picture in pictures {
                            if decode_pattern(picture.width, picture.height, &picture.y)
                                == Some(number)
                            {
                                right += 1;
                            }
                        }
                    }
                }
                println!("patterns through VP8 {w}x{h} at {bit_rate} bit/s: {right}/60");
                assert!(right >= 57, "{w}x{h} {bit_rate}: {right}/60 recognised");
            }
        }
    }
}
