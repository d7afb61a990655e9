//! Decrypted DHT payloads (ping, get-nodes, send-nodes), reached without the MAC in the way.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::dht::wire::dht_packet::DhtMessage;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, plain)) = data.split_first() else {
        return;
    };
    if let Ok(msg) = DhtMessage::decode(kind, plain) {
        assert_eq!(DhtMessage::decode(msg.kind(), &msg.encode_plain()), Ok(msg));
    }
});
