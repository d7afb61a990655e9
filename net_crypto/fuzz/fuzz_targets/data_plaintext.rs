//! Decrypted data plaintext: padding removal never panics, and a parsed plaintext encodes
//! back to a plaintext that parses to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_net_crypto::packets::DataPlaintext;

fuzz_target!(|data: &[u8]| {
    if let Ok(plain) = DataPlaintext::parse(data) {
        assert_ne!(plain.payload.first(), Some(&0));
        let encoded = plain.to_bytes().expect("a parsed payload is encodable");
        assert_eq!(DataPlaintext::parse(&encoded), Ok(plain));
    }
});
