//! Onion responses 0x8c-0x8e (docs/protocol.md §6.2).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::onion::wire::response::{self, ResponseLayer};
use rustox_core::onion::wire::sendback;
use rustox_net_crypto::crypto::SymmetricKey;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = ResponseLayer::parse(data) {
        assert_eq!(response::encode(r.level, r.sendback, r.response).as_deref(), Some(data));
        let _ = sendback::open(r.level, &SymmetricKey::from_bytes([7; 32]), r.sendback);
    }
});
