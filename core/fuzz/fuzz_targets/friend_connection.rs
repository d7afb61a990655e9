//! friend_connection packets 16-18 and one friend's connection state driven by arbitrary
//! inputs on a virtual clock (docs/protocol.md §4): nothing panics and every table stays bounded.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::friend::connection::{
    FriendConnection, FRIEND_MAX_STORED_TCP_RELAYS, MAX_QUEUED_ACTIONS,
};
use rustox_core::friend::packets::FriendConnPacket;
use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = FriendConnPacket::decode(data) {
        let again = p.encode().expect("a decoded packet re-encodes");
        assert_eq!(FriendConnPacket::decode(&again), Ok(p));
    }

    // Each step: [op][arg][time step in 100 ms][len][body of len bytes].
    let mut c = FriendConnection::new(PublicKey([1; 32]));
    let mut now = Timestamp::ZERO;
    let mut rest = data;
    while let [op, arg, step, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (body, next) = tail.split_at(len);
        rest = next;
        now = Timestamp::from_millis(now.as_millis() + 100 * u64::from(*step));
        match op % 8 {
            0 => c.set_dht_pk(now, PublicKey([arg % 4; 32])),
            1 => c.set_direct_addr(now, ([10, 0, 0, *arg], 33445).into()),
            2 => {
                let _ = c.on_incoming(now, PublicKey([arg % 4; 32]), None);
            }
            3 => c.on_established(now),
            4 => {
                let _ = c.on_packet(now, *arg, body);
            }
            5 => c.on_closed(now),
            6 => c.share_relays_now(),
            _ => c.handle_timeout(now),
        }
        let mut n = 0;
        while c.poll_action().is_some() {
            n += 1;
        }
        assert!(n <= MAX_QUEUED_ACTIONS);
        assert!(c.tcp_relays().count() <= FRIEND_MAX_STORED_TCP_RELAYS);
        if let Some(t) = c.poll_timeout() {
            // A deadline in the past must be served by the next handle_timeout, not loop.
            now = t.max(now);
            c.handle_timeout(now);
            while c.poll_action().is_some() {}
        }
    }
});
