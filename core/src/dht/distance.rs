//! c-toxcore's distance metric (docs/protocol.md §5.3, `id_closest` and `bit_by_bit_cmp`).

use std::cmp::Ordering;

use rustox_net_crypto::crypto::PublicKey;

/// Orders `a` and `b` by XOR distance to `target`, compared byte by byte from byte 0 as
/// unsigned numbers; `Less` means `a` is closer (`id_closest` returning 1).
pub fn cmp_distance(target: &PublicKey, a: &PublicKey, b: &PublicKey) -> Ordering {
    for i in 0..32 {
        let da = a.0[i] ^ target.0[i];
        let db = b.0[i] ^ target.0[i];
        if da != db {
            return da.cmp(&db);
        }
    }
    Ordering::Equal
}

/// The XOR distance as a big-endian 256-bit number (for brute-force checks in tests).
pub fn distance(a: &PublicKey, b: &PublicKey) -> [u8; 32] {
    let mut d = [0u8; 32];
    for (i, byte) in d.iter_mut().enumerate() {
        *byte = a.0[i] ^ b.0[i];
    }
    d
}

/// Index of the first bit, from the most significant bit of byte 0, where the keys differ
/// (`bit_by_bit_cmp`); 256 when they are equal.
pub fn common_prefix_bits(a: &PublicKey, b: &PublicKey) -> usize {
    for i in 0..32 {
        let x = a.0[i] ^ b.0[i];
        if x != 0 {
            return i * 8 + x.leading_zeros() as usize;
        }
    }
    256
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closer_is_smaller_xor_from_the_first_byte() {
        let t = PublicKey([0; 32]);
        let mut a = PublicKey([0; 32]);
        let mut b = PublicKey([0; 32]);
        a.0[0] = 1;
        b.0[1] = 0xff;
        assert_eq!(cmp_distance(&t, &a, &b), Ordering::Greater);
        assert_eq!(cmp_distance(&t, &b, &a), Ordering::Less);
        assert_eq!(cmp_distance(&t, &a, &a), Ordering::Equal);
    }

    #[test]
    fn prefix_bits() {
        let a = PublicKey([0; 32]);
        let mut b = PublicKey([0; 32]);
        assert_eq!(common_prefix_bits(&a, &b), 256);
        b.0[0] = 0x80;
        assert_eq!(common_prefix_bits(&a, &b), 0);
        b.0[0] = 0;
        b.0[2] = 0x01;
        assert_eq!(common_prefix_bits(&a, &b), 23);
    }
}
