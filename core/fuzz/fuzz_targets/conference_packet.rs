//! Conference packets 96–100 and 199 (docs/protocol.md "Conferences"): every parser on
//! arbitrary bytes (what parses re-encodes to what parses the same), then a conference engine
//! with one joined peer driven by arbitrary packets, link changes, commands and time: nothing
//! panics and every list and queue stays within its bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::conference::wire::{
    Cookie, DirectPacket, InvitePacket, LossyPacket, MessageBody, MessageHeader, OnlinePacket,
    RejoinPacket,
};
use rustox_core::conference::{
    ConferenceType, Conferences, LinkAction, PeerList, MAX_FROZEN_PEERS, MAX_PEERS,
    MAX_QUEUED_ACTIONS, MAX_QUEUED_EVENTS,
};
use rustox_core::node::MessageKind;
use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

fn parsers(data: &[u8]) {
    if let Ok(p) = InvitePacket::parse(data) {
        assert_eq!(p.encode(), data);
    }
    if let Ok(p) = OnlinePacket::parse(data) {
        assert_eq!(p.encode(), data);
    }
    if let Ok(p) = RejoinPacket::parse(data) {
        assert_eq!(RejoinPacket::parse(&p.encode()), Ok(p));
    }
    if let Ok(c) = Cookie::parse(data) {
        assert_eq!(c.encode(), data);
    }
    if let Ok(p) = DirectPacket::parse(data) {
        if let DirectPacket::Response { peers, .. } = &p {
            let clean = DirectPacket::Response {
                peers: peers.clone(),
                bad_entry: None,
            };
            assert_eq!(DirectPacket::parse(&clean.encode()), Ok(clean));
        } else {
            assert_eq!(DirectPacket::parse(&p.encode()), Ok(p));
        }
    }
    if let Ok((h, body)) = MessageHeader::parse(data) {
        assert_eq!(h.encode(body), data);
        if let Ok(b) = MessageBody::parse(h.message_id, body) {
            let (id, bytes) = b.encode();
            assert_eq!(MessageBody::parse(id, &bytes), Ok(b));
        }
    }
    if let Ok(p) = LossyPacket::parse(data) {
        assert_eq!(p.encode(), data);
    }
}

fuzz_target!(|data: &[u8]| {
    parsers(data);

    let me = PublicKey([1; 32]);
    let keys = [
        PublicKey([2; 32]),
        PublicKey([3; 32]),
        PublicKey([0x80; 32]),
        PublicKey([0xF0; 32]),
    ];
    let mut conf = Conferences::new(me, PublicKey([9; 32]), b"fuzz");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut now = Timestamp::from_secs(10);
    conf.set_friend(keys[0], true);
    conf.handle_link_status(now, keys[0], true);
    let c = conf
        .create(now, &mut rng, ConferenceType::Av)
        .expect("a first conference");
    let id = conf.id(c).expect("its id").0;
    // Friend 0 accepts our invite: one peer, one online connection.
    let accept = InvitePacket::Response {
        group_number: 0,
        inviter_group_number: 0,
        kind: 1,
        id,
        member_peer_number: None,
    };
    conf.handle_packet(now, keys[0], &accept.encode());

    // Each step: [op][key][time step in 100 ms][len][body of len bytes].
    let mut rest = data;
    while let [op, key, step, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (body, next) = tail.split_at(len);
        rest = next;
        now = Timestamp::from_millis(now.as_millis() + 100 * u64::from(*step));
        let pk = keys[usize::from(*key) % keys.len()];
        match op % 8 {
            0 | 1 => conf.handle_packet(now, pk, body),
            2 => {
                // The conference id spliced in at the offset the next byte names, so that
                // online (97), rejoin (100) and invite (96) packets can name our conference.
                let mut b = body.to_vec();
                let at = usize::from(*key / 4) % 8;
                if b.len() >= at + 32 {
                    b[at..at + 32].copy_from_slice(&id);
                }
                conf.handle_packet(now, pk, &b);
            }
            3 => conf.handle_link_status(now, pk, key & 0x80 != 0),
            4 => {
                let _ = conf.send_message(now, c, MessageKind::Normal, body);
            }
            5 => {
                let _ = conf.set_title(now, c, body);
                let _ = conf.send_lossy(now, c, body);
            }
            6 => {
                let _ = conf.set_max_offline(c, u32::from(*key));
                conf.set_self_name(now, body);
            }
            _ => conf.handle_timeout(now),
        }
        let mut actions = 0;
        while let Some(a) = conf.poll_action() {
            if let LinkAction::Send { data, .. } = &a {
                assert!(!data.is_empty());
            }
            actions += 1;
        }
        assert!(actions <= MAX_QUEUED_ACTIONS);
        let mut events = 0;
        while conf.poll_event().is_some() {
            events += 1;
        }
        assert!(events <= MAX_QUEUED_EVENTS);
        for n in conf.list() {
            assert!(conf.peer_count(n, PeerList::Online).unwrap() as usize <= MAX_PEERS);
            assert!(conf.peer_count(n, PeerList::Offline).unwrap() as usize <= MAX_FROZEN_PEERS);
        }
        if let Some(t) = conf.poll_timeout() {
            now = t.max(now);
            conf.handle_timeout(now);
            while conf.poll_action().is_some() {}
            while conf.poll_event().is_some() {}
        }
    }
    let _ = conf.save();
});
