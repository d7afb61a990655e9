//! LAN discovery (0x21) and bootstrap info (0xf0).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::dht::wire::{bootstrap_info, lan_discovery};

fuzz_target!(|data: &[u8]| {
    let _ = lan_discovery::decode(data);
    let _ = bootstrap_info::is_request(data);
    if let Ok((v, motd)) = bootstrap_info::decode_reply(data) {
        assert_eq!(bootstrap_info::encode_reply(v, motd), data);
    }
});
