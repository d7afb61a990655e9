//! The XSalsa20 keystream of a secretbox (docs/protocol.md §1), eight Salsa20 blocks at a time.
//!
//! Why not the `salsa20` crate: RustCrypto's Salsa20 (0.10 and 0.11) has only a scalar backend,
//! and on the session path — every data packet is a fresh nonce, so a fresh XSalsa20 key
//! stream — it would take half of the sender's CPU time (perf, `rustox send` 1 GiB on
//! loopback). Salsa20's blocks are independent, so eight of them run side by side in the
//! lanes of `wide::u32x8` (AVX2 when the build targets it, else two SSE2 or NEON registers,
//! plain arrays elsewhere; `lanes.rs`, whose `scalar-cipher` feature forces the arrays), which
//! measured 2.1× the crate's speed here. The HSalsa20 step that derives the per-nonce subkey
//! is one block and stays with the crate.
//!
//! The state is wiped when the stream is dropped, that is at the end of every seal and open:
//! the subkey (in the input block), the one-time Poly1305 key and the 512 bytes of keystream
//! (libsodium does the same with `sodium_memzero`). What the compiler keeps in
//! registers or spills to the stack inside `eight_blocks` is beyond reach from safe Rust
//! (`zeroize`'s documentation says so for every type it wipes).
//!
//! Salsa20 as in Bernstein, "The Salsa20 family of stream ciphers" (2008), §4; XSalsa20 as in
//! Bernstein, "Extending the Salsa20 nonce" (2011), §2. The output is checked byte for byte
//! against libsodium (vectors in `tests/crypto_kat.rs`; the library itself at every length
//! across the group edges in `ffi/tests/libsodium_cipher.rs`) and against the RustCrypto crates
//! for random keys, nonces and lengths (`tests/secretbox_oracle.rs`).

use salsa20::cipher::consts::U10;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::lanes::U32x8;

/// Salsa20's block size in bytes.
const BLOCK_SIZE: usize = 64;
/// Blocks computed together, one per vector lane. Eight lanes are two 128-bit registers per
/// state word without AVX2 — more than the sixteen registers SSE2 has, so some spill — yet
/// they measure 1.2× four lanes (1356 against 1125 MiB/s of keystream for 1432-byte
/// messages): the two halves interleave and hide each other's latency.
const LANES: usize = 8;
/// Bytes of keystream one [`eight_blocks`] call yields.
const GROUP_SIZE: usize = BLOCK_SIZE * LANES;
/// The first 32 bytes of the keystream key Poly1305 (NaCl's `crypto_secretbox`); the message is
/// XORed with what follows.
pub(super) const POLY1305_KEY_SIZE: usize = 32;

/// "expand 32-byte k", the constant words of every Salsa20 state (Salsa20 spec, §9).
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The keystream for one 24-byte nonce: the Poly1305 key, then the bytes that encrypt the
/// message. Zeroed on drop.
pub(super) struct XSalsa20 {
    /// The keystream's first 32 bytes.
    poly1305_key: [u8; POLY1305_KEY_SIZE],
    /// The Salsa20 input block (subkey, nonce tail, constants; counter words left at 0).
    input: [u32; 16],
    /// The current group of keystream blocks.
    group: [u8; GROUP_SIZE],
    /// How much of `group` is used.
    used: usize,
    /// The block number of `group`'s first block.
    counter: u64,
}

impl XSalsa20 {
    /// Derives the subkey with HSalsa20(key, nonce[..16]) and computes the first blocks.
    pub(super) fn new(key: &[u8; 32], nonce: &[u8; 24]) -> Self {
        let mut subkey = salsa20::hsalsa::<U10>(key.into(), nonce[..16].into());
        let word = |bytes: &[u8], i: usize| {
            u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        };
        let k = |i| word(&subkey, i);
        let n = |i| word(&nonce[16..], i);
        // Built in place, so that the keystream and its key exist only where `Drop` wipes them.
        let mut stream = XSalsa20 {
            poly1305_key: [0; POLY1305_KEY_SIZE],
            input: [
                SIGMA[0],
                k(0),
                k(1),
                k(2),
                k(3),
                SIGMA[1],
                n(0),
                n(1),
                0,
                0,
                SIGMA[2],
                k(4),
                k(5),
                k(6),
                k(7),
                SIGMA[3],
            ],
            group: [0; GROUP_SIZE],
            used: POLY1305_KEY_SIZE,
            counter: 0,
        };
        subkey.as_mut_slice().zeroize();
        eight_blocks(&stream.input, 0, &mut stream.group);
        stream
            .poly1305_key
            .copy_from_slice(&stream.group[..POLY1305_KEY_SIZE]);
        stream
    }

    /// The one-time Poly1305 key: the keystream's first 32 bytes.
    pub(super) fn poly1305_key(&self) -> &[u8; POLY1305_KEY_SIZE] {
        &self.poly1305_key
    }

    /// XORs `data` with the keystream from byte 32 on, continuing where the last call stopped
    /// (encrypts or decrypts in place).
    pub(super) fn apply(&mut self, mut data: &mut [u8]) {
        while !data.is_empty() {
            if self.used == GROUP_SIZE {
                self.counter += LANES as u64;
                eight_blocks(&self.input, self.counter, &mut self.group);
                self.used = 0;
            }
            let n = data.len().min(GROUP_SIZE - self.used);
            let (head, rest) = data.split_at_mut(n);
            for (d, k) in head.iter_mut().zip(&self.group[self.used..self.used + n]) {
                *d ^= k;
            }
            self.used += n;
            data = rest;
        }
    }
}

impl Zeroize for XSalsa20 {
    fn zeroize(&mut self) {
        // As slices: zeroize wipes a `[T]` with one `fill` behind an optimisation barrier,
        // but a `[T; N]` one volatile store per element, 512 of them for the group.
        self.poly1305_key.as_mut_slice().zeroize();
        self.input.as_mut_slice().zeroize();
        self.group.as_mut_slice().zeroize();
        self.used.zeroize();
        self.counter.zeroize();
    }
}

impl Drop for XSalsa20 {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for XSalsa20 {}

/// Salsa20's quarter-round (spec §3) on eight independent states at once.
#[inline(always)]
fn quarter_round(x: &mut [U32x8; 16], a: usize, b: usize, c: usize, d: usize) {
    x[b] ^= rotate_left::<7>(x[a] + x[d]);
    x[c] ^= rotate_left::<9>(x[b] + x[a]);
    x[d] ^= rotate_left::<13>(x[c] + x[b]);
    x[a] ^= rotate_left::<18>(x[d] + x[c]);
}

/// Lane-wise 32-bit rotation (SSE2 has no vector rotate: two shifts and an OR).
#[inline(always)]
fn rotate_left<const N: u32>(v: U32x8) -> U32x8 {
    (v << N) | (v >> (32 - N))
}

/// Salsa20/20 blocks `counter .. counter + 8` of `input`, serialised little-endian in order.
fn eight_blocks(input: &[u32; 16], counter: u64, out: &mut [u8; GROUP_SIZE]) {
    let mut start = input.map(U32x8::splat);
    let counters: [u64; LANES] = std::array::from_fn(|lane| counter + lane as u64);
    // Words 8 and 9 are the 64-bit block counter, low word first (spec §9).
    start[8] = U32x8::new(counters.map(|c| c as u32));
    start[9] = U32x8::new(counters.map(|c| (c >> 32) as u32));
    let mut x = start;
    // Ten double rounds: a column round, then a row round (spec §4, §5).
    for _ in 0..10 {
        quarter_round(&mut x, 0, 4, 8, 12);
        quarter_round(&mut x, 5, 9, 13, 1);
        quarter_round(&mut x, 10, 14, 2, 6);
        quarter_round(&mut x, 15, 3, 7, 11);
        quarter_round(&mut x, 0, 1, 2, 3);
        quarter_round(&mut x, 5, 6, 7, 4);
        quarter_round(&mut x, 10, 11, 8, 9);
        quarter_round(&mut x, 15, 12, 13, 14);
    }
    for (word, (mixed, initial)) in x.iter().zip(&start).enumerate() {
        let lanes = (*mixed + *initial).to_array();
        for (lane, value) in lanes.iter().enumerate() {
            let at = lane * BLOCK_SIZE + word * 4;
            out[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use salsa20::cipher::{KeyIvInit, StreamCipher};

    #[test]
    fn keystream_equals_the_scalar_crate_across_group_boundaries() {
        let key = [0x42; 32];
        let nonce: [u8; 24] = std::array::from_fn(|i| i as u8);
        for len in [0, 1, 479, 480, 481, 991, 992, 993, 1400, 5000] {
            let mut ours = vec![0u8; POLY1305_KEY_SIZE + len];
            let mut stream = XSalsa20::new(&key, &nonce);
            ours[..POLY1305_KEY_SIZE].copy_from_slice(stream.poly1305_key());
            // Apply in uneven pieces to exercise the carry-over between calls.
            let mut rest = &mut ours[POLY1305_KEY_SIZE..];
            while !rest.is_empty() {
                let n = rest.len().min(97);
                let (head, tail) = rest.split_at_mut(n);
                stream.apply(head);
                rest = tail;
            }
            let mut theirs = vec![0u8; POLY1305_KEY_SIZE + len];
            salsa20::XSalsa20::new(&key.into(), &nonce.into()).apply_keystream(&mut theirs);
            assert_eq!(ours, theirs, "length {len}");
        }
    }

    #[test]
    fn block_counter_carries_into_the_high_word() {
        let input: [u32; 16] = std::array::from_fn(|i| i as u32 * 0x0101_0101);
        let mut group = [0u8; GROUP_SIZE];
        eight_blocks(&input, u32::MAX as u64 - 1, &mut group);
        // The scalar reference: the crate's core from the same raw state, sought to the block.
        use salsa20::cipher::StreamCipherSeek;
        let mut reference = salsa20::cipher::StreamCipherCoreWrapper::from_core(
            salsa20::SalsaCore::<U10>::from_raw_state(input),
        );
        reference.seek((u32::MAX as u64 - 1) * BLOCK_SIZE as u64);
        let mut expected = [0u8; GROUP_SIZE];
        reference.apply_keystream(&mut expected);
        assert_eq!(group, expected);
    }

    #[test]
    fn a_wiped_stream_holds_no_key_or_keystream() {
        let mut stream = XSalsa20::new(&[0x42; 32], &[7; 24]);
        stream.apply(&mut [0u8; 1000]);
        assert!(stream.group.iter().any(|&b| b != 0));
        stream.zeroize();
        assert_eq!(stream.poly1305_key, [0; POLY1305_KEY_SIZE]);
        assert_eq!(stream.input, [0; 16]);
        assert_eq!(stream.group, [0; GROUP_SIZE]);
        assert_eq!((stream.used, stream.counter), (0, 0));
    }
}
