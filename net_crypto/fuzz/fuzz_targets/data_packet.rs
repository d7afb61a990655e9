//! Data packet 0x1b: parse never panics; whatever parses re-encodes to the same bytes and
//! respects the 27 < len ≤ 1400 bounds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_net_crypto::packets::DataPacket;

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = DataPacket::parse(data) {
        assert!(data.len() > 27 && data.len() <= 1400);
        assert_eq!(packet.to_bytes(), data);
    }
});
