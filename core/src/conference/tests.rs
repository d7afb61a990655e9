//! The wire layouts against bytes built by hand from group.c's, the per-peer rules
//! (de-duplication, the lossy window, the closest set), and bad input against a running
//! conference.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::PublicKey;

use super::closest::Closest;
use super::peers::{LossySeen, LossyWindow, MessageInfos};
use super::tests_net::{texts, triangle, Net};
use super::wire::*;
use super::*;

const ID: [u8; 32] = [0xAB; 32];

fn pk(b: u8) -> PublicKey {
    PublicKey([b; 32])
}

/// Parsing every strict prefix fails, and the whole parses back to the value.
fn check_fixed<T: PartialEq + std::fmt::Debug>(
    bytes: &[u8],
    parse: impl Fn(&[u8]) -> Result<T, WireError>,
    want: T,
) {
    assert_eq!(parse(bytes).unwrap(), want);
    for n in 0..bytes.len() {
        assert!(parse(&bytes[..n]).is_err(), "prefix of {n} bytes parsed");
    }
}

#[test]
fn invite_packets_are_byte_exact() {
    // INVITE_ID: 96 · 0 · groupnumber u16 BE · type · id.
    let mut bytes = vec![96, 0, 0x01, 0x02, 1];
    bytes.extend_from_slice(&ID);
    assert_eq!(bytes.len(), 1 + 1 + 2 + 1 + 32);
    let invite = InvitePacket::Invite {
        group_number: 0x0102,
        kind: 1,
        id: ID,
    };
    assert_eq!(invite.encode(), bytes);
    check_fixed(&bytes, InvitePacket::parse, invite);
    let mut long = bytes.clone();
    long.push(0);
    assert!(matches!(
        InvitePacket::parse(&long),
        Err(WireError::Trailing(_))
    ));

    // INVITE_ACCEPT_ID: 96 · 1 · our groupnumber · the 35-byte cookie.
    let mut bytes = vec![96, 1, 0x00, 0x07, 0x01, 0x02, 0];
    bytes.extend_from_slice(&ID);
    let accept = InvitePacket::Response {
        group_number: 7,
        inviter_group_number: 0x0102,
        kind: 0,
        id: ID,
        member_peer_number: None,
    };
    assert_eq!(accept.encode(), bytes);
    check_fixed(&bytes, InvitePacket::parse, accept);

    // INVITE_MEMBER_ID adds our peer number.
    let mut bytes = vec![96, 2, 0x00, 0x07, 0x01, 0x02, 0];
    bytes.extend_from_slice(&ID);
    bytes.extend_from_slice(&[0xBE, 0xEF]);
    let member = InvitePacket::Response {
        group_number: 7,
        inviter_group_number: 0x0102,
        kind: 0,
        id: ID,
        member_peer_number: Some(0xBEEF),
    };
    assert_eq!(member.encode(), bytes);
    check_fixed(&bytes, InvitePacket::parse, member);
    assert_eq!(
        InvitePacket::parse(&[96, 3, 0, 0]),
        Err(WireError::UnknownId(3))
    );

    let cookie = Cookie {
        group_number: 0x0102,
        kind: 1,
        id: ID,
    };
    assert_eq!(cookie.encode().len(), INVITE_COOKIE_LEN);
    check_fixed(&cookie.encode(), Cookie::parse, cookie);
}

#[test]
fn online_and_rejoin_are_byte_exact() {
    let mut bytes = vec![97, 0x12, 0x34, 0];
    bytes.extend_from_slice(&ID);
    let online = OnlinePacket {
        group_number: 0x1234,
        kind: 0,
        id: ID,
    };
    assert_eq!(online.encode(), bytes);
    check_fixed(&bytes, OnlinePacket::parse, online);

    let mut bytes = vec![100, 1];
    bytes.extend_from_slice(&ID);
    let rejoin = RejoinPacket { kind: 1, id: ID };
    assert_eq!(rejoin.encode(), bytes);
    check_fixed(&bytes, RejoinPacket::parse, rejoin);
    // handle_packet_rejoin ignores what follows the id.
    bytes.push(9);
    assert_eq!(RejoinPacket::parse(&bytes).unwrap(), rejoin);
}

#[test]
fn direct_packets_are_byte_exact() {
    assert_eq!(
        encode_group_packet(98, 5, &DirectPacket::Query.encode()),
        [98, 0, 5, 8]
    );
    assert_eq!(
        encode_group_packet(98, 5, &DirectPacket::Introduced.encode()),
        [98, 0, 5, 1]
    );
    assert_eq!(
        parse_group_header(&[98, 0, 5, 8]).unwrap(),
        (98, 5, &[8u8][..])
    );
    assert!(parse_group_header(&[98, 0, 5]).is_err());
    assert_eq!(DirectPacket::parse(&[8]).unwrap(), DirectPacket::Query);
    assert_eq!(DirectPacket::parse(&[1]).unwrap(), DirectPacket::Introduced);
    assert_eq!(
        DirectPacket::parse(&[10, b'h', b'i']).unwrap(),
        DirectPacket::Title(b"hi".to_vec())
    );
    assert_eq!(DirectPacket::parse(&[11]), Err(WireError::UnknownId(11)));

    // PEER_RESPONSE: 9 · (peer u16 · real 32 · temp 32 · name length · name)*.
    let mut bytes = vec![9, 0x00, 0x01];
    bytes.extend_from_slice(&[1; 32]);
    bytes.extend_from_slice(&[2; 32]);
    bytes.extend_from_slice(&[3, b'a', b'b', b'c']);
    bytes.extend_from_slice(&[0xFF, 0xFE]);
    bytes.extend_from_slice(&[4; 32]);
    bytes.extend_from_slice(&[5; 32]);
    bytes.push(0);
    let response = DirectPacket::Response {
        peers: vec![
            PeerEntry {
                peer_number: 1,
                real_pk: pk(1),
                temp_pk: pk(2),
                name: b"abc".to_vec(),
            },
            PeerEntry {
                peer_number: 0xFFFE,
                real_pk: pk(4),
                temp_pk: pk(5),
                name: Vec::new(),
            },
        ],
        bad_entry: None,
    };
    assert_eq!(response.encode(), bytes);
    assert_eq!(DirectPacket::parse(&bytes).unwrap(), response);
    // A name running past the end: the entry's keys are kept as the bad one.
    let mut bad = bytes[..1 + PEER_ENTRY_FIXED_LEN].to_vec();
    *bad.last_mut().unwrap() = 5;
    bad.push(b'x');
    match DirectPacket::parse(&bad).unwrap() {
        DirectPacket::Response { peers, bad_entry } => {
            assert!(peers.is_empty());
            assert_eq!(bad_entry, Some((1, pk(1), pk(2))));
        }
        other => panic!("{other:?}"),
    }
    // Fewer bytes than an entry's fixed part are ignored, as in handle_send_peers.
    for n in 1..bytes.len() {
        assert!(DirectPacket::parse(&bytes[..n]).is_ok());
    }
}

#[test]
fn messages_are_byte_exact() {
    let header = MessageHeader {
        peer_number: 0x0102,
        message_number: 0x0A0B_0C0D,
        message_id: 64,
    };
    let bytes = header.encode(b"hey");
    assert_eq!(
        bytes,
        [0x01, 0x02, 0x0A, 0x0B, 0x0C, 0x0D, 64, b'h', b'e', b'y']
    );
    assert_eq!(MessageHeader::parse(&bytes).unwrap(), (header, &b"hey"[..]));
    for n in 0..MESSAGE_HEADER_LEN {
        assert!(MessageHeader::parse(&bytes[..n]).is_err());
    }
    assert_eq!(encode_group_packet(99, 3, &bytes)[..3], [99, 0, 3]);

    let mut new_peer = vec![0x00, 0x09];
    new_peer.extend_from_slice(&[1; 32]);
    new_peer.extend_from_slice(&[2; 32]);
    let body = MessageBody::NewPeer {
        peer_number: 9,
        real_pk: pk(1),
        temp_pk: pk(2),
    };
    assert_eq!(body.encode(), (16, new_peer.clone()));
    check_fixed(&new_peer, |b| MessageBody::parse(16, b), body);
    assert!(MessageBody::parse(16, &[new_peer.as_slice(), &[0]].concat()).is_err());
    check_fixed(
        &[0, 5],
        |b| MessageBody::parse(17, b),
        MessageBody::KillPeer(5),
    );
    check_fixed(
        &[0, 5],
        |b| MessageBody::parse(18, b),
        MessageBody::FreezePeer(5),
    );
    assert!(MessageBody::parse(17, &[0, 5, 0]).is_err());
    assert_eq!(
        MessageBody::parse(0, b"anything").unwrap(),
        MessageBody::Ping
    );
    assert_eq!(
        MessageBody::parse(48, b"").unwrap(),
        MessageBody::Name(Vec::new())
    );
    assert!(MessageBody::parse(48, &[0; 129]).is_err());
    assert!(MessageBody::parse(49, b"").is_err());
    assert!(MessageBody::parse(49, &[0; 129]).is_err());
    assert_eq!(
        MessageBody::parse(49, b"t").unwrap(),
        MessageBody::Title(b"t".to_vec())
    );
    assert!(MessageBody::parse(64, b"").is_err());
    assert!(MessageBody::parse(65, b"").is_err());
    assert_eq!(
        MessageBody::parse(65, b"a").unwrap(),
        MessageBody::Action(b"a".to_vec())
    );
    assert_eq!(MessageBody::parse(50, b""), Err(WireError::UnknownId(50)));
}

#[test]
fn lossy_packets_are_byte_exact() {
    let p = LossyPacket {
        peer_number: 0x0102,
        message_number: 0x0304,
        data: &[192, 7, 8],
    };
    assert_eq!(p.encode(), [1, 2, 3, 4, 192, 7, 8]);
    assert_eq!(LossyPacket::parse(&p.encode()).unwrap(), p);
    for n in 0..5 {
        assert!(LossyPacket::parse(&[1, 2, 3, 4, 192][..n]).is_err());
    }
}

#[test]
fn random_bytes_never_panic_any_parser() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..20_000 {
        let len = (rng.next_u32() % 200) as usize;
        let mut b = vec![0u8; len];
        rng.fill_bytes(&mut b);
        let _ = InvitePacket::parse(&b);
        let _ = OnlinePacket::parse(&b);
        let _ = RejoinPacket::parse(&b);
        let _ = Cookie::parse(&b);
        let _ = parse_group_header(&b);
        let _ = DirectPacket::parse(&b);
        let _ = LossyPacket::parse(&b);
        if let Ok((h, body)) = MessageHeader::parse(&b) {
            let _ = MessageBody::parse(h.message_id, body);
        }
    }
}

#[test]
fn message_numbers_are_accepted_once() {
    let mut m = MessageInfos::default();
    assert!(m.check(5, 64));
    assert!(!m.check(5, 64), "a repeat");
    assert!(m.check(7, 64));
    assert!(m.check(6, 64), "late but newer than the oldest kept");
    assert!(!m.check(6, 64));
    assert_eq!(m.numbers().collect::<Vec<_>>(), [7, 6, 5]);
    for n in 8..20 {
        assert!(m.check(n, 0));
    }
    assert_eq!(m.numbers().count(), MAX_LAST_MESSAGE_INFOS);
    // Older than all eight kept: refused.
    assert!(!m.check(11, 64));
    assert!(!m.check(3, 64));
    // Wrapping: u32::MAX then 1 (0 is skipped by senders).
    let mut w = MessageInfos::default();
    assert!(w.check(u32::MAX, 64));
    assert!(w.check(1, 64));
    assert_eq!(w.numbers().collect::<Vec<_>>(), [1, u32::MAX]);
    // A name older than the newest name is refused.
    let mut n = MessageInfos::default();
    assert!(n.check(10, 48));
    assert!(!n.check(9, 48));
    assert!(n.check(9, 64));
}

#[test]
fn the_lossy_window_refuses_repeats() {
    let mut w = LossyWindow::default();
    assert_eq!(w.check(10), LossySeen::New);
    assert_eq!(w.check(10), LossySeen::Duplicate);
    assert_eq!(w.check(11), LossySeen::New);
    assert_eq!(w.check(9), LossySeen::New);
    assert_eq!(w.check(300), LossySeen::New);
    assert_eq!(w.check(11), LossySeen::Stale);
    assert_eq!(w.check(300), LossySeen::Duplicate);
    assert_eq!(w.check(299), LossySeen::New);
    assert_eq!(
        w.check(300 + 40_000),
        LossySeen::Stale,
        "more than half the ring ahead"
    );
}

#[test]
fn the_closest_set_keeps_four_nearest() {
    let own = PublicKey([0x80; 32]);
    assert_eq!(comp_value(&own, &own), 0);
    assert_eq!(comp_value(&pk(0x81), &pk(0x80)), 0x0101_0101_0101_0101);
    let mut c = Closest::default();
    assert!(!c.add(&own, own, own), "never ourselves");
    for b in [0x10, 0x20, 0x30, 0x40] {
        assert!(c.add(&own, pk(b), pk(b)));
    }
    assert_eq!(c.peers().count(), DESIRED_CLOSEST);
    // Nearer than all: goes in, one further out goes.
    assert!(c.add(&own, pk(0x7F), pk(0x7F)));
    assert!(c.contains(&pk(0x7F)));
    assert_eq!(c.peers().count(), DESIRED_CLOSEST);
    c.remove(&pk(0x7F));
    assert!(!c.contains(&pk(0x7F)));
    assert_eq!(c.changed, super::closest::Change::Removed);
}

/// What the application can see of member `i`'s conference `c`.
fn snapshot(net: &Net, i: usize, c: ConferenceNumber) -> String {
    let m = &net.members[i].conf;
    format!(
        "{:?} {:?} {:?} {:?} {:?}",
        m.list(),
        m.peer_count(c, PeerList::Online),
        m.peer_count(c, PeerList::Offline),
        m.title(c),
        m.save()
    )
}

/// Feeds `data` from `from` to member 0 and lets the network settle.
fn inject(net: &mut Net, from: PublicKey, data: &[u8]) {
    let now = net.now;
    net.members[0].conf.handle_packet(now, from, data);
    net.settle();
}

#[test]
fn truncations_and_random_bytes_change_nothing() {
    let (mut net, cs) = triangle();
    let now = net.now;
    net.members[1].conf.set_title(now, cs[1], b"title").unwrap();
    net.members[1]
        .conf
        .send_message(now, cs[1], MessageKind::Normal, b"hello")
        .unwrap();
    net.settle();
    let before = snapshot(&net, 0, cs[0]);
    let p1 = net.pk(1);
    let id = net.members[0].conf.id(cs[0]).unwrap().0;
    // Valid packets of every kind, then all their strict prefixes.
    let mut valid = vec![
        InvitePacket::Invite {
            group_number: 0,
            kind: 0,
            id,
        }
        .encode(),
        InvitePacket::Response {
            group_number: 0,
            inviter_group_number: 0,
            kind: 0,
            id,
            member_peer_number: Some(3),
        }
        .encode(),
        OnlinePacket {
            group_number: 0,
            kind: 0,
            id,
        }
        .encode(),
        RejoinPacket { kind: 0, id }.encode(),
    ];
    // The message member 0 already has: its prefixes are repeats or malformed.
    let header = MessageHeader {
        peer_number: 0,
        message_number: 1,
        message_id: 64,
    };
    valid.push(encode_group_packet(99, 0, &header.encode(b"hello")));
    let dropped_before = net.members[0].conf.stats().packets_dropped;
    let mut count = 0u64;
    for v in &valid {
        for n in 0..v.len() {
            inject(&mut net, p1, &v[..n]);
            count += 1;
        }
    }
    assert_eq!(snapshot(&net, 0, cs[0]), before);
    assert!(net.members[0].conf.stats().packets_dropped > dropped_before);
    let _ = count;

    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for _ in 0..5_000 {
        let len = (rng.next_u32() % 120) as usize;
        let mut b = vec![0u8; len.max(1)];
        rng.fill_bytes(&mut b);
        b[0] = [96, 97, 98, 99, 100, 199, 0, 255][(rng.next_u32() % 8) as usize];
        // Random conference numbers above 0 name no conference; keep them that way.
        if b.len() >= 3 && b[0] != 96 {
            b[1] = 0xFF;
        }
        inject(&mut net, p1, &b);
        inject(&mut net, PublicKey([0x42; 32]), &b);
    }
    assert_eq!(snapshot(&net, 0, cs[0]), before);
    // The conference still works.
    net.clear_events();
    let now = net.now;
    net.members[2]
        .conf
        .send_message(now, cs[2], MessageKind::Normal, b"after")
        .unwrap();
    net.settle();
    assert_eq!(texts(&net.members[0].events), vec![b"after".to_vec()]);
}

/// Sends a message as a (possibly forged) peer number on member 1's link to member 0 and
/// returns the packets 99 member 0 sent in response.
fn forge(net: &mut Net, peer_number: u16, number: u32, id: u8, body: &[u8]) -> usize {
    let header = MessageHeader {
        peer_number,
        message_number: number,
        message_id: id,
    };
    let now = net.now;
    let p1 = net.pk(1);
    net.members[0]
        .conf
        .handle_packet(now, p1, &encode_group_packet(99, 0, &header.encode(body)));
    let mut sent = 0;
    while let Some(a) = net.members[0].conf.poll_action() {
        if let LinkAction::Send { data, .. } = a {
            if data[0] == 99 {
                sent += 1;
            }
        }
    }
    sent
}

#[test]
fn forged_messages_are_forwarded_once_at_most() {
    let (mut net, cs) = triangle();
    let c = cs[0];
    // Member 2's peer id, as member 0 knows it.
    let idx2 = (0..3)
        .find(|&p| {
            net.members[0]
                .conf
                .peer_public_key(c, PeerList::Online, p)
                .unwrap()
                == net.pk(2)
        })
        .unwrap();
    let saved = net.members[0].conf.save();
    let pn2 = saved[0]
        .peers
        .iter()
        .find(|p| p.real_pk == net.pk(2))
        .unwrap()
        .peer_number;
    let _ = idx2;
    // A forged message in member 2's name: new, so forwarded (once) to the others.
    let first = forge(&mut net, pn2, 1_000_000, 64, b"forged");
    assert!(first >= 1);
    // The same again, and again: never forwarded twice.
    assert_eq!(forge(&mut net, pn2, 1_000_000, 64, b"forged"), 0);
    assert_eq!(forge(&mut net, pn2, 1_000_000, 64, b"other text"), 0);
    // Numbers older than the eight remembered are refused too.
    for n in 1..=8 {
        forge(&mut net, pn2, 2_000_000 + n, 0, b"");
    }
    assert_eq!(forge(&mut net, pn2, 1_999_999, 64, b"old"), 0);
    // An unknown peer id: we ask the relaying peer for its list, forward nothing.
    assert_eq!(forge(&mut net, 0xDEAD, 1, 64, b"who"), 0);
    // A KILL_PEER about someone else is ignored.
    assert_eq!(forge(&mut net, pn2, 3_000_000, 17, &0u16.to_be_bytes()), 0);
    assert_eq!(
        net.members[0].conf.peer_count(c, PeerList::Online).unwrap(),
        3
    );
    let events = net.take_events(0);
    let forged: Vec<_> = texts(&events);
    assert_eq!(forged, Vec::<Vec<u8>>::new(), "events not drained yet");
    let mut got = Vec::new();
    while let Some(e) = net.members[0].conf.poll_event() {
        got.push(e);
    }
    assert_eq!(texts(&got), vec![b"forged".to_vec()]);
}

#[test]
fn a_new_peer_flood_stays_bounded() {
    let (mut net, cs) = triangle();
    let c = cs[0];
    let saved = net.members[0].conf.save();
    let pn1 = saved[0]
        .peers
        .iter()
        .find(|p| p.real_pk == net.pk(1))
        .unwrap()
        .peer_number;
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let flood = MAX_PEERS as u32 * 3;
    for n in 0..flood {
        let mut real = [0u8; 32];
        rng.fill_bytes(&mut real);
        let body = MessageBody::NewPeer {
            peer_number: (n % 60_000) as u16 + 10,
            real_pk: PublicKey(real),
            temp_pk: PublicKey(real),
        };
        let (id, bytes) = body.encode();
        let _ = forge(&mut net, pn1, 10_000 + n, id, &bytes);
        while net.members[0].conf.poll_event().is_some() {}
    }
    let m = &net.members[0].conf;
    let online = m.peer_count(c, PeerList::Online).unwrap() as usize;
    assert!(online <= MAX_PEERS, "{online}");
    assert!(m.stats().peers_refused > 0);
    let memory = m.memory_estimate();
    assert!(memory < 4 << 20, "{memory} bytes");
    // Time passes: the fake peers say nothing and freeze, at most max_offline kept.
    net.members[0].conf.handle_timeout(net.now);
    let mut opens = 0;
    while let Some(a) = net.members[0].conf.poll_action() {
        if matches!(a, LinkAction::Open { .. }) {
            opens += 1;
        }
    }
    assert!(
        opens <= DESIRED_CLOSEST,
        "{opens} links opened for the closest set"
    );
    let later = net.now + std::time::Duration::from_secs(FREEZE_TIMEOUT + 1);
    net.members[0].conf.handle_timeout(later);
    net.members[0].conf.handle_timeout(later);
    let m = &net.members[0].conf;
    assert!(m.peer_count(c, PeerList::Offline).unwrap() <= DEFAULT_MAX_OFFLINE);
    println!(
        "NEW_PEER flood of {flood}: {online} peers held, {} refused, {memory} bytes",
        m.stats().peers_refused
    );
}

#[test]
fn peer_numbers_swap_like_delpeer_and_commands_check_their_input() {
    let (mut net, cs) = triangle();
    let c = cs[0];
    let keys: Vec<PublicKey> = (0..3)
        .map(|p| {
            net.members[0]
                .conf
                .peer_public_key(c, PeerList::Online, p)
                .unwrap()
        })
        .collect();
    // Member at index 0 of member 0's list leaves: the last one takes index 0.
    let leaver = (0..3).find(|&i| net.pk(i) == keys[0]).unwrap();
    let now = net.now;
    if leaver != 0 {
        let lc = cs[leaver];
        net.members[leaver].conf.delete(now, lc).unwrap();
        net.settle();
        assert_eq!(
            net.members[0]
                .conf
                .peer_public_key(c, PeerList::Online, 0)
                .unwrap(),
            keys[2]
        );
        assert_eq!(
            net.members[0]
                .conf
                .peer_public_key(c, PeerList::Online, 1)
                .unwrap(),
            keys[1]
        );
    }
    let m = &mut net.members[0].conf;
    let nope = ConferenceNumber(9);
    assert_eq!(
        m.peer_count(nope, PeerList::Online),
        Err(ConferenceError::NotFound)
    );
    assert_eq!(
        m.peer_name(c, PeerList::Online, 99),
        Err(ConferenceError::PeerNotFound)
    );
    assert_eq!(
        m.peer_number_is_ours(c, 99),
        Err(ConferenceError::PeerNotFound)
    );
    assert_eq!(
        m.offline_peer_last_active(c, 0),
        Err(ConferenceError::PeerNotFound)
    );
    assert_eq!(
        m.send_message(
            now,
            c,
            MessageKind::Normal,
            &[b'x'; MAX_MESSAGE_DATA_LEN + 1]
        ),
        Err(ConferenceError::InvalidLength)
    );
    assert_eq!(
        m.title(c),
        Err(ConferenceError::InvalidLength),
        "no title yet"
    );
    assert_eq!(m.set_max_offline(nope, 3), Err(ConferenceError::NotFound));
    assert_eq!(m.by_id(&m.id(c).unwrap()), Some(c));
    assert_eq!(m.kind(c), Ok(ConferenceType::Text));
    // Lossy packets belong to AV conferences.
    assert_eq!(
        m.send_lossy(now, nope, &[192]),
        Err(ConferenceError::NotFound)
    );
}

#[test]
fn numbers_reuse_the_lowest_free_slot() {
    let mut m = Conferences::new(pk(1), pk(2), b"me");
    let mut rng = super::tests_net::rng();
    let now = rustox_net_crypto::Timestamp::from_secs(1);
    let a = m.create(now, &mut rng, ConferenceType::Text).unwrap();
    let b = m.create(now, &mut rng, ConferenceType::Av).unwrap();
    let c = m.create(now, &mut rng, ConferenceType::Text).unwrap();
    assert_eq!((a.0, b.0, c.0), (0, 1, 2));
    m.delete(now, b).unwrap();
    assert_eq!(m.list(), vec![a, c]);
    assert_eq!(m.create(now, &mut rng, ConferenceType::Text).unwrap(), b);
    // Alone: a title is kept without sending; sending needs a connection.
    m.set_title(now, a, b"solo").unwrap();
    assert_eq!(m.title(a).unwrap(), b"solo");
    assert_eq!(
        m.send_message(now, a, MessageKind::Normal, b"x"),
        Err(ConferenceError::NoConnection)
    );
    assert!(m.peer_number_is_ours(a, 0).unwrap());
    // A conference alone has nothing to save but itself.
    let saved = m.save();
    assert_eq!(saved.len(), 3);
    assert!(saved.iter().all(|s| s.peers.is_empty()));
    assert_eq!(saved[0].title, b"solo");
}

#[test]
fn loading_a_profile_restores_frozen_peers() {
    let saved = crate::savedata::SavedConference {
        kind: 0,
        id: ID,
        message_number: 70_000,
        lossy_message_number: 9_000,
        peer_number: 77,
        title: b"saved".to_vec(),
        peers: (0..200u16)
            .map(|i| crate::savedata::SavedConferencePeer {
                real_pk: PublicKey([(i % 250) as u8 + 3; 32]),
                temp_pk: pk(9),
                peer_number: i + 100,
                last_active: 1_600_000_000 + u64::from(i),
                name: format!("p{i}").into_bytes(),
            })
            .collect(),
    };
    let mut m = Conferences::new(pk(1), pk(2), b"me");
    m.set_friend(PublicKey([3; 32]), true);
    m.load(
        rustox_net_crypto::Timestamp::from_secs(5),
        std::slice::from_ref(&saved),
    );
    let c = m.list()[0];
    assert_eq!(m.title(c).unwrap(), b"saved");
    assert_eq!(m.peer_count(c, PeerList::Online).unwrap(), 1);
    // More peers than the default max offline: the bound rises to what was saved.
    assert_eq!(m.peer_count(c, PeerList::Offline).unwrap(), 200);
    m.set_max_offline(c, 10).unwrap();
    assert_eq!(m.peer_count(c, PeerList::Offline).unwrap(), 10);
    // Friends first, then the most recently active.
    assert_eq!(
        m.peer_public_key(c, PeerList::Offline, 0).unwrap(),
        PublicKey([3; 32])
    );
    let lasts: Vec<u64> = (1..10)
        .map(|p| m.offline_peer_last_active(c, p).unwrap())
        .collect();
    assert!(lasts.windows(2).all(|w| w[0] >= w[1]), "{lasts:?}");
    let again = m.save();
    assert_eq!(again[0].message_number, 70_000 + (1 << 16));
    assert_eq!(again[0].peer_number, 77);
    assert_eq!(again[0].peers.len(), 10);
}

#[test]
fn lies_about_our_own_peer_id_and_query_floods_are_refused() {
    let (mut net, cs) = triangle();
    let c = cs[0];
    let p1 = net.pk(1);
    let me = net.pk(0);
    let before = snapshot(&net, 0, c);
    // A peer list and a NEW_PEER that name us under another peer id.
    let list = DirectPacket::Response {
        peers: vec![PeerEntry {
            peer_number: 0x7777,
            real_pk: me,
            temp_pk: pk(9),
            name: b"not me".to_vec(),
        }],
        bad_entry: None,
    };
    inject(&mut net, p1, &encode_group_packet(98, 0, &list.encode()));
    assert_eq!(snapshot(&net, 0, c), before);
    let saved = net.members[0].conf.save();
    let pn1 = saved[0]
        .peers
        .iter()
        .find(|p| p.real_pk == p1)
        .unwrap()
        .peer_number;
    let (id, body) = MessageBody::NewPeer {
        peer_number: 0x7778,
        real_pk: me,
        temp_pk: pk(9),
    }
    .encode();
    forge(&mut net, pn1, 50_000_000, id, &body);
    net.settle();
    // Only member 1's last activity moved (its message was real enough).
    let without_times = |mut s: Vec<crate::savedata::SavedConference>| {
        for p in &mut s[0].peers {
            p.last_active = 0;
        }
        s
    };
    assert_eq!(
        without_times(net.members[0].conf.save()),
        without_times(saved)
    );
    let _ = before;
    let ours = (0..3)
        .filter(|&p| net.members[0].conf.peer_number_is_ours(c, p).unwrap())
        .count();
    assert_eq!(ours, 1);

    // PEER_QUERY floods: a few peer lists per connection per second, no more.
    let now = net.now;
    for _ in 0..100 {
        net.members[0]
            .conf
            .handle_packet(now, p1, &encode_group_packet(98, 0, &[PEER_QUERY_ID]));
    }
    let mut lists = 0;
    while let Some(a) = net.members[0].conf.poll_action() {
        if let LinkAction::Send { data, .. } = a {
            if data.get(3) == Some(&PEER_RESPONSE_ID) {
                lists += 1;
            }
        }
    }
    assert_eq!(lists, 4);
}
