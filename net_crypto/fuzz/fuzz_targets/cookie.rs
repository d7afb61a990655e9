//! The 112-byte cookie: reading and opening never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_net_crypto::crypto::SymmetricKey;
use rustox_net_crypto::packets::EncryptedCookie;

fuzz_target!(|data: &[u8]| {
    if let Ok(cookie) = EncryptedCookie::from_slice(data) {
        assert_eq!(&cookie.0[..], data);
        let _ = cookie.open(&SymmetricKey::from_bytes([5; 32]));
    }
});
