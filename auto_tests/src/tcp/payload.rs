//! The bytes a flow carries: a keyed pattern, so the receiver can check that every byte it
//! delivers is the one the sender put at that offset of that flow (a misplaced, stale or
//! foreign segment shows up as a mismatch, not as plausible data).

/// SplitMix64's finaliser: a cheap bijective mix, so neighbouring words differ in every bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 8 pattern bytes of `flow` at stream offsets `8·index .. 8·index + 8`.
fn word(flow: u32, index: u64) -> [u8; 8] {
    mix((u64::from(flow) << 40) ^ index).to_le_bytes()
}

/// Write the bytes of `flow` starting at stream offset `offset` into `buf`.
pub fn fill(flow: u32, offset: u64, buf: &mut [u8]) {
    let mut current = (u64::MAX, [0u8; 8]);
    for (i, b) in buf.iter_mut().enumerate() {
        let at = offset + i as u64;
        if current.0 != at / 8 {
            current = (at / 8, word(flow, at / 8));
        }
        *b = current.1[(at % 8) as usize];
    }
}

/// The index in `buf` of the first byte that is not `flow`'s byte at its offset, if any.
pub fn first_mismatch(flow: u32, offset: u64, buf: &[u8]) -> Option<usize> {
    let mut current = (u64::MAX, [0u8; 8]);
    buf.iter().enumerate().position(|(i, &b)| {
        let at = offset + i as u64;
        if current.0 != at / 8 {
            current = (at / 8, word(flow, at / 8));
        }
        current.1[(at % 8) as usize] != b
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_depends_on_flow_and_offset() {
        let mut a = vec![0u8; 1448];
        fill(1, 1448, &mut a);
        assert_eq!(first_mismatch(1, 1448, &a), None);
        assert_eq!(first_mismatch(2, 1448, &a), Some(0));
        assert!(first_mismatch(1, 0, &a).is_some());
        // An unaligned window of the same stream matches.
        assert_eq!(first_mismatch(1, 1451, &a[3..]), None);
        a[700] ^= 1;
        assert_eq!(first_mismatch(1, 1448, &a), Some(700));
    }
}
