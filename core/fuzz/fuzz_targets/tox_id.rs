//! The Tox ID: 38-byte and 76-hex-digit forms, and the friend-add checks (docs/protocol.md §6.5).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::friend::tox_id::{ToxId, TOX_ID_SIZE};
use rustox_core::friend::validate_friend_add;
use rustox_net_crypto::crypto::PublicKey;

fuzz_target!(|data: &[u8]| {
    if let Ok(id) = ToxId::from_bytes(data) {
        assert_eq!(&id.to_bytes()[..], data);
        assert_eq!(id.to_string().parse::<ToxId>(), Ok(id));
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(id) = s.parse::<ToxId>() {
            assert!(s.eq_ignore_ascii_case(&id.to_string()));
        }
    }
    if let Some((id, message)) = data.split_first_chunk::<TOX_ID_SIZE>() {
        let _ = validate_friend_add(id, message, &PublicKey([0; 32]));
    }
});
