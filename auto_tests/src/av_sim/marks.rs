//! Marks that name a frame inside its own signal, so the receiving side can tell which frame
//! a decoded buffer is and measure when it was handed over (mouth to ear).
//!
//! The stand-in codecs carry the first samples of an audio frame and the first pixels of a
//! picture through unchanged (`rustox_core::av::codec::StandInCodecs`), so a mark there is
//! the frame's index in a few samples or luma bytes, guarded by a magic value and a check
//! word so that a concealed (synthesised) frame is never mistaken for a delivered one.

/// First sample of a marked audio frame.
const AUDIO_MAGIC: u16 = 0x4d41;
/// First luma bytes of a marked picture.
const VIDEO_MAGIC: [u8; 2] = *b"VM";

/// Samples an audio mark occupies.
pub const AUDIO_MARK_SAMPLES: usize = 4;
/// Luma bytes a video mark occupies.
pub const VIDEO_MARK_BYTES: usize = 8;

fn check(a: u16, b: u16, c: u16) -> u16 {
    (a ^ b.rotate_left(5) ^ c.rotate_left(11)) ^ 0x5a5a
}

/// Writes frame `index` into the first samples of `pcm` (no-op on a shorter buffer).
pub fn mark_audio(pcm: &mut [i16], index: u32) {
    if pcm.len() < AUDIO_MARK_SAMPLES {
        return;
    }
    let (hi, lo) = ((index >> 16) as u16, index as u16);
    let words = [AUDIO_MAGIC, hi, lo, check(AUDIO_MAGIC, hi, lo)];
    for (s, w) in pcm.iter_mut().zip(words) {
        *s = w as i16;
    }
}

/// The frame index marked in `pcm`, if its mark is intact.
pub fn read_audio_mark(pcm: &[i16]) -> Option<u32> {
    let w: Vec<u16> = pcm
        .get(..AUDIO_MARK_SAMPLES)?
        .iter()
        .map(|&s| s as u16)
        .collect();
    (w[0] == AUDIO_MAGIC && w[3] == check(w[0], w[1], w[2]))
        .then(|| (u32::from(w[1]) << 16) | u32::from(w[2]))
}

/// Writes picture `index` into the first luma bytes of `y` (no-op on a shorter plane).
pub fn mark_video(y: &mut [u8], index: u32) {
    if y.len() < VIDEO_MARK_BYTES {
        return;
    }
    let idx = index.to_be_bytes();
    let c = check(
        u16::from_be_bytes(VIDEO_MAGIC),
        u16::from_be_bytes([idx[0], idx[1]]),
        u16::from_be_bytes([idx[2], idx[3]]),
    )
    .to_be_bytes();
    y[..2].copy_from_slice(&VIDEO_MAGIC);
    y[2..6].copy_from_slice(&idx);
    y[6..8].copy_from_slice(&c);
}

/// The picture index marked in `y`, if its mark is intact.
pub fn read_video_mark(y: &[u8]) -> Option<u32> {
    let m = y.get(..VIDEO_MARK_BYTES)?;
    let c = check(
        u16::from_be_bytes([m[0], m[1]]),
        u16::from_be_bytes([m[2], m[3]]),
        u16::from_be_bytes([m[4], m[5]]),
    );
    (m[..2] == VIDEO_MAGIC && m[6..8] == c.to_be_bytes())
        .then(|| u32::from_be_bytes([m[2], m[3], m[4], m[5]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_round_trip_and_reject_other_signals() {
        let mut pcm = vec![0i16; 960];
        mark_audio(&mut pcm, 70_001);
        assert_eq!(read_audio_mark(&pcm), Some(70_001));
        pcm[2] ^= 1;
        assert_eq!(read_audio_mark(&pcm), None, "a damaged mark is no mark");
        assert_eq!(read_audio_mark(&[0; 960]), None, "silence carries no mark");
        let mut y = vec![16u8; 640 * 480];
        mark_video(&mut y, 12);
        assert_eq!(read_video_mark(&y), Some(12));
        assert_eq!(read_video_mark(&[16; 64]), None);
    }
}
