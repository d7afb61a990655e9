//! TCP relay plaintexts (docs/protocol.md §7): whatever parses encodes back to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::relay::wire::Packet;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::parse(data) {
        assert_eq!(p.encoded_len(), data.len());
        assert_eq!(p.to_vec(), data);
    }
});
