//! toxencryptsave (docs/protocol.md §8): `decrypt` never panics on any input. The format checks
//! run before the key derivation, so most inputs cost nothing; the rest pay one scrypt.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::savedata::crypt;

fuzz_target!(|data: &[u8]| {
    let _ = crypt::salt(data);
    let _ = crypt::is_encrypted(data);
    // A fixed key keeps the fuzzer fast: one derivation, many decryptions.
    static KEY: std::sync::OnceLock<crypt::PassKey> = std::sync::OnceLock::new();
    let key = KEY.get_or_init(|| crypt::PassKey::derive(b"fuzz", [0; crypt::SALT_SIZE]).unwrap());
    let _ = key.decrypt(data);
    // The passphrase path only where it refuses before deriving (not encrypted, too short).
    if !crypt::is_encrypted(data) || data.len() <= crypt::ENCRYPTION_EXTRA_LENGTH {
        let _ = crypt::decrypt(b"fuzz", data);
    }
});
