//! VP8 through rustox-codec, configured as c-toxcore's video.c: a block pattern survives a
//! round trip, key frames are flagged (the first ones and forced ones), the picture size
//! changes mid-stream, and garbage into the decoder is an error, not a crash.

use rustox_codec::vp8::{chroma_size, KEYFRAMES_FIRST};
use rustox_codec::{Error, Picture, Planes, Vp8Decoder, Vp8Encoder, Vp8Frame};

/// A picture of 8 × 8 blocks, each black or white from the bits of `seed`, with mid-grey chroma.
struct Pattern {
    width: u16,
    height: u16,
    y: Vec<u8>,
    u: Vec<u8>,
    v: Vec<u8>,
}

impl Pattern {
    fn new(width: u16, height: u16, seed: u32) -> Self {
        let (w, h) = (usize::from(width), usize::from(height));
        let mut y = vec![0u8; w * h];
        for row in 0..h {
            for col in 0..w {
                let block = (row / (h / 8).max(1)) * 8 + col / (w / 8).max(1);
                let bit = seed.rotate_left(block as u32 % 32) & 1;
                y[row * w + col] = if bit == 1 { 235 } else { 16 };
            }
        }
        let (cw, ch) = chroma_size(width, height);
        Pattern {
            width,
            height,
            y,
            u: vec![128; cw * ch],
            v: vec![128; cw * ch],
        }
    }

    fn planes(&self) -> Planes<'_> {
        Planes {
            width: self.width,
            height: self.height,
            y: &self.y,
            u: &self.u,
            v: &self.v,
        }
    }

    /// Mean absolute luma difference to a decoded picture of the same size.
    fn distance(&self, picture: &Picture) -> f64 {
        assert_eq!((picture.width, picture.height), (self.width, self.height));
        let sum: u64 = self
            .y
            .iter()
            .zip(&picture.y)
            .map(|(a, b)| u64::from(a.abs_diff(*b)))
            .sum();
        sum as f64 / self.y.len() as f64
    }
}

fn encode(enc: &mut Vp8Encoder, pattern: &Pattern, keyframe: bool) -> Vp8Frame {
    let mut out = Vec::new();
    enc.encode(&pattern.planes(), keyframe, &mut out).unwrap();
    assert_eq!(out.len(), 1, "one frame per picture (no lag)");
    out.pop().unwrap()
}

fn decode(dec: &mut Vp8Decoder, frame: &Vp8Frame) -> Picture {
    let mut out = Vec::new();
    dec.decode(&frame.data, &mut out).unwrap();
    assert_eq!(out.len(), 1);
    out.pop().unwrap()
}

#[test]
fn pattern_round_trip_is_recognisable() {
    let mut enc = Vp8Encoder::new(1_000_000, 320, 240).unwrap();
    let mut dec = Vp8Decoder::new().unwrap();
    for n in 0..20u32 {
        let pattern = Pattern::new(320, 240, 0x9e37_79b9u32.wrapping_mul(n + 1));
        let frame = encode(&mut enc, &pattern, false);
        let picture = decode(&mut dec, &frame);
        assert_eq!(picture.y.len(), 320 * 240);
        assert_eq!(picture.u.len(), 160 * 120);
        assert_eq!(picture.v.len(), 160 * 120);
        let d = pattern.distance(&picture);
        assert!(d < 12.0, "frame {n}: mean luma error {d}");
        // Unlike a different pattern.
        let other = Pattern::new(320, 240, !0x9e37_79b9u32.wrapping_mul(n + 1));
        assert!(other.distance(&picture) > 60.0);
    }
}

#[test]
fn first_frames_and_forced_frames_are_keyframes() {
    let mut enc = Vp8Encoder::new(500_000, 160, 120).unwrap();
    let pattern = Pattern::new(160, 120, 0x1234_5678);
    let mut keys = Vec::new();
    let mut sizes = Vec::new();
    for n in 0..30u64 {
        let frame = encode(&mut enc, &pattern, n == 20);
        keys.push(frame.keyframe);
        sizes.push(frame.data.len());
    }
    for (n, key) in keys.iter().enumerate() {
        let expected = (n as u64) < KEYFRAMES_FIRST || n == 20;
        assert_eq!(*key, expected, "frame {n}: keyframe {key}");
    }
    // A key frame of a still picture costs far more than a delta frame of it.
    assert!(
        sizes[20] > 4 * sizes[19],
        "key {} delta {}",
        sizes[20],
        sizes[19]
    );
}

#[test]
fn resize_mid_stream() {
    let mut enc = Vp8Encoder::new(800_000, 320, 240).unwrap();
    let mut dec = Vp8Decoder::new().unwrap();
    for (n, (w, h)) in [
        (320u16, 240u16),
        (320, 240),
        (640, 480),
        (641, 361),
        (17, 9),
        (320, 240),
    ]
    .into_iter()
    .enumerate()
    {
        let pattern = Pattern::new(w, h, 0xdead_beef ^ n as u32);
        let frame = encode(&mut enc, &pattern, false);
        assert_eq!(enc.size(), (w, h));
        if n >= 2 {
            assert!(frame.keyframe, "a new size starts with a key frame");
        }
        let picture = decode(&mut dec, &frame);
        assert_eq!((picture.width, picture.height), (w, h));
        let (cw, ch) = chroma_size(w, h);
        assert_eq!(picture.u.len(), cw * ch);
        if w >= 64 {
            assert!(
                pattern.distance(&picture) < 14.0,
                "{w}x{h}: {}",
                pattern.distance(&picture)
            );
        }
    }
    // The bit rate changes in place.
    enc.set_bit_rate(100_000).unwrap();
    assert_eq!(enc.bit_rate(), 100_000);
    let frame = encode(&mut enc, &Pattern::new(320, 240, 7), false);
    decode(&mut dec, &frame);
}

#[test]
fn bad_pictures_are_errors() {
    let mut enc = Vp8Encoder::new(500_000, 64, 64).unwrap();
    let mut out = Vec::new();
    let y = vec![0u8; 64 * 64];
    let c = vec![0u8; 32 * 32];
    let short = Planes {
        width: 64,
        height: 64,
        y: &y[..100],
        u: &c,
        v: &c,
    };
    assert!(matches!(
        enc.encode(&short, false, &mut out),
        Err(Error::PlaneTooShort { plane: "y", .. })
    ));
    let empty = Planes {
        width: 0,
        height: 64,
        y: &y,
        u: &c,
        v: &c,
    };
    assert!(matches!(
        enc.encode(&empty, false, &mut out),
        Err(Error::PictureSize { .. })
    ));
    assert!(Vp8Encoder::new(500_000, 0, 10).is_err());
    assert!(out.is_empty());
    // The encoder still works.
    let ok = Planes {
        width: 64,
        height: 64,
        y: &y,
        u: &c,
        v: &c,
    };
    enc.encode(&ok, false, &mut out).unwrap();
    assert_eq!(out.len(), 1);
}

#[test]
fn garbage_into_the_decoder_is_an_error() {
    let mut dec = Vp8Decoder::new().unwrap();
    let mut out = Vec::new();
    assert_eq!(dec.decode(&[], &mut out).unwrap_err(), Error::EmptyPacket);
    // A key frame header with a bad start code.
    assert!(dec
        .decode(
            &[0x10, 0x02, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x10, 0x00],
            &mut out
        )
        .is_err());
    // A key frame header declaring 16383 × 16383: refused before libvpx allocates for it.
    let huge = [
        0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0xff, 0x3f, 0xff, 0x3f, 0, 0, 0, 0, 0, 0,
    ];
    assert!(matches!(
        dec.decode(&huge, &mut out),
        Err(Error::PictureSize { .. })
    ));
    // A real key frame, then corruptions of it.
    let mut enc = Vp8Encoder::new(500_000, 96, 64).unwrap();
    let frame = encode(&mut enc, &Pattern::new(96, 64, 42), true);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut errors = 0;
    for _ in 0..300 {
        let mut data = frame.data.clone();
        match next() % 3 {
            0 => data.truncate(1 + next() as usize % data.len()),
            1 => {
                for _ in 0..4 {
                    let i = next() as usize % data.len();
                    data[i] ^= next() as u8;
                }
            }
            _ => data = (0..1 + next() % 200).map(|_| next() as u8).collect(),
        }
        out.clear();
        match dec.decode(&data, &mut out) {
            Ok(()) => {
                for p in &out {
                    assert_eq!(p.y.len(), usize::from(p.width) * usize::from(p.height));
                }
            }
            Err(_) => errors += 1,
        }
    }
    assert!(errors > 0);
    // The decoder recovers on the next good key frame.
    let frame = encode(&mut enc, &Pattern::new(96, 64, 43), true);
    let picture = decode(&mut dec, &frame);
    assert!(Pattern::new(96, 64, 43).distance(&picture) < 14.0);
}

#[test]
fn bit_rate_change_mid_stream_changes_frame_sizes() {
    let mut enc = Vp8Encoder::new(2_000_000, 320, 240).unwrap();
    let mut sizes = [0usize; 2];
    for n in 0..80u32 {
        if n == 40 {
            enc.set_bit_rate(200_000).unwrap();
        }
        // Blocks changing every frame under a moving gradient.
        let mut pattern = Pattern::new(320, 240, n.wrapping_mul(0x9e37_79b9));
        for (i, p) in pattern.y.iter_mut().enumerate() {
            *p = p.saturating_add(((i / 320 + i % 320 + n as usize * 3) % 32) as u8);
        }
        let frame = encode(&mut enc, &pattern, false);
        if (10..40).contains(&n) {
            sizes[0] += frame.data.len();
        } else if n >= 50 {
            sizes[1] += frame.data.len();
        }
    }
    // 2 Mbit/s is 8333 bytes a frame at libvpx's 30 frames/s, 200 kbit/s 833.
    assert!(
        sizes[0] > 4 * sizes[1],
        "before {} after {}",
        sizes[0] / 30,
        sizes[1] / 30
    );
}
