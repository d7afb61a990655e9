//! IP_Port inside onion layers (docs/protocol.md §6.1).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::onion::wire::ip_port::IpPort;

fuzz_target!(|data: &[u8]| {
    if let Ok(ip) = IpPort::decode(data) {
        // Decoding normalises; once normal, a round trip is exact.
        assert_eq!(IpPort::decode(&ip.encode()), Ok(ip));
    }
    if let Ok(addr) = IpPort::decode_udp(data) {
        assert_eq!(IpPort::decode_udp(&IpPort::Udp(addr).encode()), Ok(addr));
    }
});
