//! Untrusted video frames into libvpx through rustox-codec's VP8 decoder. The input is one
//! frame, then (split at the position its first byte names) two frames in a row on a fresh
//! decoder, so inter frames meet a decoder that has state.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_codec::vp8::MAX_PICTURE_PIXELS;
use rustox_codec::{Picture, Vp8Decoder};

fn check(pictures: &[Picture]) {
    for p in pictures {
        let (w, h) = (usize::from(p.width), usize::from(p.height));
        assert!((w * h) as u64 <= MAX_PICTURE_PIXELS);
        assert_eq!(p.y.len(), w * h);
        assert_eq!(p.u.len(), w.div_ceil(2) * h.div_ceil(2));
        assert_eq!(p.v.len(), p.u.len());
    }
}

fuzz_target!(|data: &[u8]| {
    let mut decoder = Vp8Decoder::new().expect("a VP8 decoder");
    let mut out = Vec::new();
    if decoder.decode(data, &mut out).is_ok() {
        check(&out);
    }
    if let Some(&split) = data.first() {
        let split = usize::from(split).min(data.len());
        let mut decoder = Vp8Decoder::new().expect("a VP8 decoder");
        for frame in [&data[1..split.max(1)], &data[split.max(1)..]] {
            out.clear();
            if decoder.decode(frame, &mut out).is_ok() {
                check(&out);
            }
        }
    }
});
