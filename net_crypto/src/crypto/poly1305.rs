//! Poly1305 (RFC 8439 §2.5), the one-time authenticator of every Tox box.
//!
//! Why not the `poly1305` crate: with runtime CPU detection (the only portable way to ship
//! it) its AVX2 backend calls its vector intrinsics out of line, and measured 0.77 GiB/s on
//! 1416-byte messages here, slower than its own portable backend (1.3 GiB/s, which only a
//! `--cfg` flag selects) and a third of this file's speed (1.8 GiB/s). This is
//! the classic 64-bit-limb formulation: the accumulator and `r` in three limbs of 44, 44 and
//! 42 bits, products in `u128`, no data-dependent branches or indices. Checked against the
//! RFC 8439 vectors below and against the crate for random keys and messages
//! (`tests/secretbox_oracle.rs`).

/// Tag size.
pub(super) const TAG_SIZE: usize = 16;
/// Key size: `r` (clamped) then the pad `s` (RFC 8439 §2.5).
pub(super) const KEY_SIZE: usize = 32;

const MASK_44: u64 = (1 << 44) - 1;
const MASK_42: u64 = (1 << 42) - 1;

fn le_u64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
}

/// Splits a little-endian 128-bit value into limbs of 44, 44 and 40 bits (the top limb
/// has room for the 2^128 bit and carries).
fn limbs(bytes: &[u8]) -> [u64; 3] {
    let lo = le_u64(&bytes[0..8]);
    let hi = le_u64(&bytes[8..16]);
    [lo & MASK_44, ((lo >> 44) | (hi << 20)) & MASK_44, hi >> 24]
}

/// The Poly1305 tag of `message` under the one-time `key`.
pub(super) fn tag(key: &[u8; KEY_SIZE], message: &[u8]) -> [u8; TAG_SIZE] {
    // r with the clamp of RFC 8439 §2.5 applied to the limbs.
    let [r0, r1, r2] = limbs(&key[..16]);
    let (r0, r1, r2) = (
        r0 & 0xffc_0fff_ffff,
        r1 & 0xfff_ffc0_ffff,
        r2 & 0x00f_ffff_fc0f,
    );
    // 2^130 ≡ 5 (mod p), and the limbs' 44-bit stride puts products of the high limbs at
    // 2^132 = 4 · 2^130: they fold back multiplied by 20.
    let (s1, s2) = (r1 * 20, r2 * 20);
    let mut h = [0u64; 3];

    let mut absorb = |block: &[u8], high_bit: u64| {
        let [m0, m1, m2] = limbs(block);
        let h0 = h[0] + m0;
        let h1 = h[1] + m1;
        let h2 = h[2] + (m2 | high_bit);
        let mul = |a: u64, b: u64| u128::from(a) * u128::from(b);
        let d0 = mul(h0, r0) + mul(h1, s2) + mul(h2, s1);
        let d1 = mul(h0, r1) + mul(h1, r0) + mul(h2, s2) + (d0 >> 44);
        let d2 = mul(h0, r2) + mul(h1, r1) + mul(h2, r0) + (d1 >> 44);
        let carry = (d2 >> 42) as u64;
        let h0 = (d0 as u64 & MASK_44) + carry * 5;
        h[0] = h0 & MASK_44;
        h[1] = (d1 as u64 & MASK_44) + (h0 >> 44);
        h[2] = d2 as u64 & MASK_42;
    };
    let mut blocks = message.chunks_exact(16);
    for block in &mut blocks {
        // A full block gets the 2^128 bit: bit 40 of the top limb.
        absorb(block, 1 << 40);
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        // A short last block gets a 1 byte after it instead (RFC 8439 §2.5).
        let mut last = [0u8; 16];
        last[..rest.len()].copy_from_slice(rest);
        last[rest.len()] = 1;
        absorb(&last, 0);
    }

    // Fully carry h, then reduce mod p = 2^130 − 5 by computing h + 5 − 2^130 and keeping it
    // when it does not go negative; the choice is a mask, not a branch.
    let [mut h0, mut h1, mut h2] = h;
    for _ in 0..2 {
        h2 += h1 >> 44;
        h1 &= MASK_44;
        h0 += (h2 >> 42) * 5;
        h2 &= MASK_42;
        h1 += h0 >> 44;
        h0 &= MASK_44;
    }
    let g0 = h0 + 5;
    let g1 = h1 + (g0 >> 44);
    let g2 = (h2 + (g1 >> 44)).wrapping_sub(1 << 42);
    let keep_g = (g2 >> 63).wrapping_sub(1);
    h0 = (h0 & !keep_g) | (g0 & MASK_44 & keep_g);
    h1 = (h1 & !keep_g) | (g1 & MASK_44 & keep_g);
    h2 = (h2 & !keep_g) | (g2 & keep_g);

    // tag = (h + s) mod 2^128.
    let [s0, s1, s2] = limbs(&key[16..]);
    let t0 = h0 + s0;
    let t1 = h1 + s1 + (t0 >> 44);
    let t2 = (h2 + s2 + (t1 >> 44)) & MASK_42;
    let (t0, t1) = (t0 & MASK_44, t1 & MASK_44);
    let lo = t0 | (t1 << 44);
    let hi = (t1 >> 20) | (t2 << 24);
    let mut out = [0u8; TAG_SIZE];
    out[..8].copy_from_slice(&lo.to_le_bytes());
    out[8..].copy_from_slice(&hi.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    /// RFC 8439 §2.5.2.
    #[test]
    fn rfc8439_section_2_5_2() {
        let key: [u8; 32] = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b")
            .try_into()
            .unwrap();
        let tag = tag(&key, b"Cryptographic Forum Research Group");
        assert_eq!(tag.to_vec(), hex("a8061dc1305136c6c22b8baf0c0127a9"));
    }

    /// RFC 8439 Appendix A.3, vectors 1, 2 and the limb-edge cases 6–11.
    #[test]
    fn rfc8439_appendix_a3() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "00000000000000000000000000000000 00000000000000000000000000000000",
                "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
                "00000000000000000000000000000000",
            ),
            (
                "00000000000000000000000000000000 36e5f6b5c5e06070f0efca96227a863e",
                "416e79207375626d697373696f6e20746f20746865204945544620696e74656e6465642062792074686520436f6e7472696275746f7220666f72207075626c69636174696f6e20617320616c6c206f722070617274206f6620616e204945544620496e7465726e65742d4472616674206f722052464320616e6420616e792073746174656d656e74206d6164652077697468696e2074686520636f6e74657874206f6620616e204945544620616374697669747920697320636f6e7369646572656420616e20224945544620436f6e747269627574696f6e222e20537563682073746174656d656e747320696e636c756465206f72616c2073746174656d656e747320696e20494554462073657373696f6e732c2061732077656c6c206173207772697474656e20616e6420656c656374726f6e696320636f6d6d756e69636174696f6e73206d61646520617420616e792074696d65206f7220706c6163652c207768696368206172652061646472657373656420746f",
                "36e5f6b5c5e06070f0efca96227a863e",
            ),
            (
                "02000000000000000000000000000000 00000000000000000000000000000000",
                "ffffffffffffffffffffffffffffffff",
                "03000000000000000000000000000000",
            ),
            (
                "02000000000000000000000000000000 ffffffffffffffffffffffffffffffff",
                "02000000000000000000000000000000",
                "03000000000000000000000000000000",
            ),
            (
                "01000000000000000000000000000000 00000000000000000000000000000000",
                "ffffffffffffffffffffffffffffffff f0ffffffffffffffffffffffffffffff 11000000000000000000000000000000",
                "05000000000000000000000000000000",
            ),
            (
                "01000000000000000000000000000000 00000000000000000000000000000000",
                "ffffffffffffffffffffffffffffffff fbfefefefefefefefefefefefefefefe 01010101010101010101010101010101",
                "00000000000000000000000000000000",
            ),
            (
                "02000000000000000000000000000000 00000000000000000000000000000000",
                "fdffffffffffffffffffffffffffffff",
                "faffffffffffffffffffffffffffffff",
            ),
            (
                "01000000000000000400000000000000 00000000000000000000000000000000",
                "e33594d7505e43b900000000000000003394d7505e4379cd01000000000000000000000000000000000000000000000001000000000000000000000000000000",
                "14000000000000005500000000000000",
            ),
            (
                "01000000000000000400000000000000 00000000000000000000000000000000",
                "e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000",
                "13000000000000000000000000000000",
            ),
        ];
        for (i, (key, message, expected)) in cases.iter().enumerate() {
            let key: [u8; 32] = hex(key).try_into().unwrap();
            assert_eq!(tag(&key, &hex(message)).to_vec(), hex(expected), "case {i}");
        }
    }
}
