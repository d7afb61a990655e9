//! Sendbacks (docs/protocol.md §6.2): raw bytes, and arbitrary plaintexts sealed under the key so
//! the checks after decryption are reached.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::onion::wire::sendback::{self, ReturnLevel};
use rustox_net_crypto::crypto::{Nonce, SymmetricKey};

fuzz_target!(|data: &[u8]| {
    let key = SymmetricKey::from_bytes([7; 32]);
    let Some((&sel, plain)) = data.split_first() else {
        return;
    };
    let level = [ReturnLevel::One, ReturnLevel::Two, ReturnLevel::Three][usize::from(sel) % 3];
    let _ = sendback::open(level, &key, plain);
    let nonce = Nonce([sel; 24]);
    let mut sealed = nonce.0.to_vec();
    sealed.extend_from_slice(&key.encrypt(&nonce, plain));
    if let Ok(opened) = sendback::open(level, &key, &sealed) {
        assert_eq!(opened.inner.len(), level.inner_size());
        let mut again = Vec::new();
        sendback::seal_into(&mut again, level, &key, &nonce, &opened.prev, &opened.inner).unwrap();
        assert_eq!(sendback::open(level, &key, &again), Ok(opened));
    }
});
