//! The TCP relay's secure stream and handshake (docs/protocol.md §7): arbitrary bytes in
//! arbitrary chunks never panic, never make the decoder hold more than one frame, and
//! every plaintext it yields fits a frame. The first 128 bytes also go to the server's
//! handshake.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::relay::wire::frame::MAX_FRAME_SIZE;
use rustox_core::relay::wire::{accept_hello, FrameDecoder, MAX_PLAINTEXT_SIZE};
use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey, SecretKey};

fuzz_target!(|data: &[u8]| {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let secret = SecretKey::from_bytes([3; 32]);
    let _ = accept_hello(&secret, data.get(..128).unwrap_or(data), &mut rng);
    // [9; 32] is no low-order point, so the key always exists.
    let Ok(key) = PrecomputedKey::new(&PublicKey([9; 32]), &secret) else {
        return;
    };
    let mut dec = FrameDecoder::new(key, Nonce([0; 24]));
    let cut = usize::from(data.first().copied().unwrap_or(1)).max(1);
    for chunk in data.chunks(cut) {
        let mut input = chunk;
        while let Ok(Some(p)) = dec.decode(&mut input) {
            assert!(!p.is_empty() && p.len() <= MAX_PLAINTEXT_SIZE);
        }
        assert!(dec.buffered() <= MAX_FRAME_SIZE);
    }
});
