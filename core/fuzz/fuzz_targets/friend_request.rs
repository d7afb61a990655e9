//! Friend request packets (ids 32 and 18) and the receive filter (docs/protocol.md §6.5).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::friend::request::{FriendRequest, RequestFilter};
use rustox_core::friend::tox_id::NoSpam;
use rustox_net_crypto::crypto::PublicKey;

fuzz_target!(|data: &[u8]| {
    if let Ok(req) = FriendRequest::decode_packet(data) {
        assert_eq!(req.encode_body(), &data[1..]);
    }
    // Split the input into request bodies from senders chosen by a leading byte.
    let mut filter = RequestFilter::new(NoSpam([0, 0, 0, 0]));
    for chunk in data.chunks(64) {
        if let Some((&who, body)) = chunk.split_first() {
            let sender = PublicKey([who % 40; 32]);
            let _ = filter.check(&sender, body, |pk| pk.0[0] == 39);
        }
    }
    let s = filter.stats();
    let total = s.accepted + s.malformed + s.repeated + s.nospam_mismatch + s.already_friend;
    assert_eq!(total, data.chunks(64).filter(|c| !c.is_empty()).count() as u64);
});
