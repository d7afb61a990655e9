//! The save file codec as a specification: a vector built by hand from c-toxcore 0.2.18's
//! layout, round trips, truncation and corruption.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use proptest::prelude::*;
use rustox_net_crypto::crypto::{PublicKey, SecretKey};

use super::*;
use crate::dht::wire::packed_node::canonical;

const SK: [u8; 32] = [0x42; 32];

/// A section header written out by hand: length u32 LE, type u16 LE, 0x01ce LE.
fn header(out: &mut Vec<u8>, len: u32, kind: u16) {
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&[0xce, 0x01]);
}

/// A friend record written out by hand at the offsets of `struct Saved_Friend`.
#[allow(clippy::too_many_arguments)] // one argument per field, in layout order
fn record(
    status: u8,
    pk: u8,
    info: &[u8],
    name: &[u8],
    status_msg: &[u8],
    user_status: u8,
    nospam: [u8; 4],
    last_seen: u64,
) -> Vec<u8> {
    let mut r = vec![0u8; 2216];
    r[0] = status;
    r[1..33].fill(pk);
    r[33..33 + info.len()].copy_from_slice(info);
    r[1058..1060].copy_from_slice(&(info.len() as u16).to_be_bytes());
    r[1060..1060 + name.len()].copy_from_slice(name);
    r[1188..1190].copy_from_slice(&(name.len() as u16).to_be_bytes());
    r[1190..1190 + status_msg.len()].copy_from_slice(status_msg);
    r[2198..2200].copy_from_slice(&(status_msg.len() as u16).to_be_bytes());
    r[2200] = user_status;
    r[2204..2208].copy_from_slice(&nospam);
    r[2208..2216].copy_from_slice(&last_seen.to_be_bytes());
    r
}

/// What `tox_get_savedata` would write for this state, byte by byte, followed by the zero
/// padding its size function reserves for sections 10 and 11.
fn hand_built_vector() -> Vec<u8> {
    let pk = SecretKey::from_bytes(SK).public_key();
    let mut v = Vec::new();
    v.extend_from_slice(&[0, 0, 0, 0, 0x1f, 0x1b, 0xed, 0x15]);
    // 1 NOSPAMKEYS
    header(&mut v, 68, 1);
    v.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    v.extend_from_slice(pk.as_bytes());
    v.extend_from_slice(&SK);
    // 2 DHT: cookie, one NODES sub-section with an IPv4 and an IPv6 node.
    header(&mut v, 4 + 8 + 39 + 51, 2);
    v.extend_from_slice(&[0x0d, 0x00, 0x59, 0x01]);
    v.extend_from_slice(&[90, 0, 0, 0, 4, 0, 0xce, 0x11]);
    v.extend_from_slice(&[2, 127, 0, 0, 1, 0x82, 0xa5]);
    v.extend_from_slice(&[0xa1; 32]);
    v.push(10);
    v.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    v.extend_from_slice(&[0x82, 0xa6]);
    v.extend_from_slice(&[0xa2; 32]);
    // 3 FRIENDS: one pending request, one confirmed friend.
    header(&mut v, 2 * 2216, 3);
    v.extend(record(
        1,
        0xb1,
        b"hello, add me",
        b"",
        b"",
        0,
        [1, 2, 3, 4],
        0,
    ));
    v.extend(record(
        3,
        0xb2,
        b"",
        b"bob",
        b"busy bee",
        2,
        [0; 4],
        1_700_000_000,
    ));
    // 4 NAME, 5 STATUSMESSAGE, 6 STATUS
    header(&mut v, 5, 4);
    v.extend_from_slice(b"alice");
    header(&mut v, 2, 5);
    v.extend_from_slice(b"hi");
    header(&mut v, 1, 6);
    v.push(1);
    // 10 TCP_RELAY: one TCP/IPv4 relay; 11 PATH_NODE: empty.
    header(&mut v, 39, 10);
    v.extend_from_slice(&[130, 10, 0, 0, 2, 0x01, 0xbb]);
    v.extend_from_slice(&[0xc1; 32]);
    header(&mut v, 0, 11);
    // 20 CONFERENCES: empty, as c-toxcore writes it with no conference.
    header(&mut v, 0, 20);
    // 255 END
    header(&mut v, 0, 255);
    v
}

fn hand_built_profile() -> Profile {
    let mut p = Profile::new(SecretKey::from_bytes(SK), NoSpam([0xde, 0xad, 0xbe, 0xef]));
    p.name = b"alice".to_vec();
    p.status_message = b"hi".to_vec();
    p.user_status = UserStatus::Away;
    p.friends = vec![
        SavedFriend::pending(
            PublicKey([0xb1; 32]),
            NoSpam([1, 2, 3, 4]),
            b"hello, add me".to_vec(),
        ),
        SavedFriend {
            name: b"bob".to_vec(),
            status_message: b"busy bee".to_vec(),
            user_status: UserStatus::Busy,
            last_seen: 1_700_000_000,
            ..SavedFriend::confirmed(PublicKey([0xb2; 32]))
        },
    ];
    p.dht_nodes = vec![
        PackedNode::udp("127.0.0.1:33445".parse().unwrap(), PublicKey([0xa1; 32])),
        PackedNode::udp(
            "[2001:db8::1]:33446".parse().unwrap(),
            PublicKey([0xa2; 32]),
        ),
    ];
    p.tcp_relays = vec![PackedNode {
        addr: "10.0.0.2:443".parse().unwrap(),
        tcp: true,
        pk: PublicKey([0xc1; 32]),
    }];
    p
}

#[test]
fn savedata_hand_built_vector_parses_to_the_profile() {
    let mut bytes = hand_built_vector();
    bytes.extend_from_slice(&[0; 2 * 408 - 39]); // tox_get_savedata_size's reserve
    let profile = Profile::parse(&bytes).unwrap();
    assert_eq!(profile, hand_built_profile());
    assert_eq!(profile.tox_id().nospam.to_u32(), 0xdeadbeef);
}

#[test]
fn savedata_profile_writes_the_hand_built_vector_byte_for_byte() {
    assert_eq!(hand_built_profile().to_bytes(), hand_built_vector());
}

#[test]
fn savedata_fresh_profile_writes_every_section_c_toxcore_writes() {
    let bytes = Profile::new(SecretKey::from_bytes(SK), NoSpam::default()).to_bytes();
    let kinds: Vec<u16> = section::split(&bytes[8..], STATE_COOKIE_TYPE, Some(SECTION_END))
        .map(|s| s.unwrap().kind)
        .collect();
    assert_eq!(kinds, [1, 2, 3, 4, 5, 6, 10, 11, 20, 255]);
    // The empty DHT section is c-toxcore's: cookie and an empty NODES sub-section.
    assert_eq!(
        &bytes[8 + 8 + 68..8 + 8 + 68 + 20],
        &[12, 0, 0, 0, 2, 0, 0xce, 1, 0x0d, 0, 0x59, 1, 0, 0, 0, 0, 4, 0, 0xce, 0x11]
    );
}

#[test]
fn savedata_every_truncation_is_an_error() {
    let bytes = hand_built_vector();
    for len in 0..bytes.len() {
        assert!(
            Profile::parse(&bytes[..len]).is_err(),
            "prefix of {len} bytes parsed"
        );
    }
}

#[test]
fn savedata_every_single_byte_corruption_is_handled() {
    // Every byte altered in turn: parsed or refused, never a panic; if it parses, what it
    // writes parses back and writes the same bytes again (kept sections may move into type
    // order on the first write, nothing else changes).
    let bytes = hand_built_vector();
    for i in 0..bytes.len() {
        for delta in [0x01, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[i] ^= delta;
            if let Ok(p) = Profile::parse(&bad) {
                let written = p.to_bytes();
                let back = Profile::parse(&written).unwrap();
                assert_eq!(back.to_bytes(), written, "byte {i}");
                assert_eq!(
                    (back.friends, back.name, back.dht_nodes),
                    (p.friends, p.name, p.dht_nodes)
                );
            }
        }
    }
}

#[test]
fn savedata_errors_say_what_and_where() {
    let good = hand_built_vector();
    let mut bad = good.clone();
    bad[4] ^= 1;
    assert!(matches!(
        Profile::parse(&bad),
        Err(SavedataError::BadFileCookie { .. })
    ));

    let mut bad = good.clone();
    bad[8 + 6] = 0xcf; // section 0's inner cookie
    assert_eq!(
        Profile::parse(&bad),
        Err(SavedataError::Framing(FramingError::BadCookie {
            index: 0,
            offset: 0,
            found: 0x01cf,
            expected: 0x01ce
        }))
    );

    let mut bad = good.clone();
    bad[8 + 8 + 4..8 + 8 + 36].fill(0); // the saved public key
    assert_eq!(Profile::parse(&bad), Err(SavedataError::KeyMismatch));

    // Friend record 1's name length set to 129.
    let friends_body = 8 + (8 + 68) + (8 + 102) + 8;
    let mut bad = good.clone();
    bad[friends_body + 2216 + 1189] = 129;
    assert_eq!(
        Profile::parse(&bad),
        Err(SavedataError::Friend {
            index: 1,
            source: FriendRecordError::NameTooLong(129)
        })
    );

    let mut encrypted = crypt::MAGIC.to_vec();
    encrypted.extend_from_slice(&good);
    assert_eq!(Profile::parse(&encrypted), Err(SavedataError::Encrypted));

    let mut no_keys = good[..8].to_vec();
    header(&mut no_keys, 0, 255);
    assert_eq!(Profile::parse(&no_keys), Err(SavedataError::MissingKeys));

    let mut twice = good[..8 + 8 + 68].to_vec();
    twice.extend_from_slice(&good[8..8 + 8 + 68]);
    header(&mut twice, 0, 255);
    assert_eq!(
        Profile::parse(&twice),
        Err(SavedataError::DuplicateSection { kind: 1 })
    );

    let mut end_body = good[..good.len() - 8].to_vec();
    header(&mut end_body, 1, 255);
    end_body.push(0);
    assert_eq!(
        Profile::parse(&end_body),
        Err(SavedataError::EndNotEmpty { len: 1 })
    );
}

#[test]
fn savedata_limits_are_enforced_before_allocating() {
    let keys = &hand_built_vector()[..8 + 8 + 68];
    let with = |kind: u16, body: &[u8]| {
        let mut v = keys.to_vec();
        header(&mut v, body.len() as u32, kind);
        v.extend_from_slice(body);
        header(&mut v, 0, 255);
        Profile::parse(&v)
    };
    assert_eq!(
        with(4, &[b'a'; 129]),
        Err(SavedataError::NameTooLong { len: 129 })
    );
    assert_eq!(
        with(5, &[b'a'; 1008]),
        Err(SavedataError::StatusMessageTooLong { len: 1008 })
    );
    assert_eq!(
        with(6, &[0, 0]),
        Err(SavedataError::StatusLength { len: 2 })
    );
    assert_eq!(with(6, &[3]), Err(SavedataError::BadUserStatus(3)));
    assert_eq!(
        with(3, &[0; 2215]),
        Err(SavedataError::FriendsLength { len: 2215 })
    );
    assert_eq!(
        with(3, &vec![0; 2216 * 1025]),
        Err(SavedataError::TooManyFriends {
            count: 1025,
            max: 1024
        })
    );
    let mut nine = Vec::new();
    for i in 0..9u8 {
        PackedNode::udp(
            SocketAddr::new(Ipv4Addr::new(10, 0, 0, i).into(), 1),
            PublicKey([i; 32]),
        )
        .encode(&mut nine);
    }
    assert_eq!(
        with(11, &nine),
        Err(SavedataError::TooManyNodes {
            section: 11,
            max: 8
        })
    );
    assert!(matches!(
        with(10, &nine[..38]),
        Err(SavedataError::Nodes {
            section: 10,
            node: 0,
            ..
        })
    ));
    assert!(matches!(
        with(2, &[1, 2, 3]),
        Err(SavedataError::Dht(DhtSectionError::BadCookie { len: 3 }))
    ));
    assert_eq!(with(2, &[]).unwrap().dht_nodes, []);
    let mut empty_subsections = 0x0159_000du32.to_le_bytes().to_vec();
    for _ in 0..=MAX_OTHER_SECTIONS {
        empty_subsections.extend_from_slice(&[0, 0, 0, 0, 9, 0, 0xce, 0x11]);
    }
    assert_eq!(
        with(2, &empty_subsections),
        Err(SavedataError::TooManySections { max: 256 })
    );
    let mut empty_sections = keys.to_vec();
    for _ in 0..=MAX_OTHER_SECTIONS {
        header(&mut empty_sections, 0, 99);
    }
    header(&mut empty_sections, 0, 255);
    assert_eq!(
        Profile::parse(&empty_sections),
        Err(SavedataError::TooManySections { max: 256 })
    );
    let many = vec![0u8; MAX_SAVEDATA_SIZE + 1];
    assert!(matches!(
        Profile::parse(&many),
        Err(SavedataError::TooLarge { .. })
    ));
}

#[test]
fn savedata_unknown_sections_survive_a_round_trip_in_type_order() {
    let mut p = hand_built_profile();
    p.other_sections = vec![
        (7, b"groups".to_vec()),
        (21, b"groups".to_vec()),
        (300, Vec::new()),
        (21, b"second".to_vec()),
    ];
    p.dht_other_sections = vec![(9, b"future dht".to_vec())];
    let bytes = p.to_bytes();
    let kinds: Vec<u16> = section::split(&bytes[8..], STATE_COOKIE_TYPE, Some(SECTION_END))
        .map(|s| s.unwrap().kind)
        .collect();
    assert_eq!(kinds, [1, 2, 3, 4, 5, 6, 7, 10, 11, 20, 21, 21, 300, 255]);
    let back = Profile::parse(&bytes).unwrap();
    assert_eq!(
        back.other_sections,
        [
            (7, b"groups".to_vec()),
            (21, b"groups".to_vec()),
            (21, b"second".to_vec()),
            (300, Vec::new())
        ]
    );
    assert_eq!(back.dht_other_sections, p.dht_other_sections);
    assert_eq!(back.to_bytes(), bytes);
}

#[test]
fn savedata_check_reports_what_parse_would_refuse() {
    let mut p = hand_built_profile();
    assert_eq!(p.check(), Ok(()));
    p.name = vec![b'x'; 129];
    assert_eq!(p.check(), Err(SavedataError::NameTooLong { len: 129 }));
    p.name.clear();
    p.other_sections.push((3, Vec::new()));
    assert_eq!(p.check(), Err(SavedataError::DuplicateSection { kind: 3 }));
}

fn arb_node() -> impl Strategy<Value = PackedNode> {
    (
        any::<bool>(),
        any::<[u8; 16]>(),
        any::<u16>(),
        any::<bool>(),
        any::<[u8; 32]>(),
    )
        .prop_map(|(v4, ip, port, tcp, pk)| {
            let ip = if v4 {
                IpAddr::V4(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]))
            } else {
                IpAddr::V6(Ipv6Addr::from(ip))
            };
            PackedNode {
                addr: canonical(SocketAddr::new(ip, port)),
                tcp,
                pk: PublicKey(pk),
            }
        })
}

fn arb_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..=max)
}

fn arb_friend() -> impl Strategy<Value = SavedFriend> {
    (
        any::<[u8; 32]>(),
        0u8..=3,
        arb_bytes(1016),
        any::<[u8; 4]>(),
        arb_bytes(128),
        arb_bytes(1007),
        0u8..=2,
        any::<u64>(),
    )
        .prop_map(
            |(
                pk,
                status,
                request_message,
                nospam,
                name,
                status_message,
                user_status,
                last_seen,
            )| SavedFriend {
                pk: PublicKey(pk),
                status: FriendStatus::from_u8(status).unwrap(),
                request_message,
                request_nospam: NoSpam(nospam),
                name,
                status_message,
                user_status: UserStatus::from_byte(user_status).unwrap(),
                last_seen,
            },
        )
}

fn arb_sections(max: usize, exclude: &'static [u16]) -> impl Strategy<Value = Vec<(u16, Vec<u8>)>> {
    proptest::collection::vec(
        (
            any::<u16>().prop_filter("known type", move |k| !exclude.contains(k)),
            arb_bytes(64),
        ),
        0..=max,
    )
}

const EXCLUDED: &[u16] = &[1, 2, 3, 4, 5, 6, 10, 11, 20, 255];

fn arb_profile() -> impl Strategy<Value = Profile> {
    (
        any::<[u8; 32]>(),
        any::<[u8; 4]>(),
        arb_bytes(128),
        arb_bytes(1007),
        0u8..=2,
        proptest::collection::vec(arb_friend(), 0..4),
        proptest::collection::vec(arb_node(), 0..12),
        proptest::collection::vec(arb_node(), 0..=8),
        proptest::collection::vec(arb_node(), 0..=8),
        arb_sections(3, EXCLUDED),
        arb_sections(2, &[4]),
    )
        .prop_map(
            |(
                sk,
                nospam,
                name,
                status_message,
                user_status,
                friends,
                dht_nodes,
                tcp_relays,
                path_nodes,
                mut others,
                dht_others,
            )| {
                // to_bytes writes the kept sections in type order; generate them that way.
                others.sort_by_key(|(k, _)| *k);
                Profile {
                    secret_key: SecretKey::from_bytes(sk),
                    nospam: NoSpam(nospam),
                    name,
                    status_message,
                    user_status: UserStatus::from_byte(user_status).unwrap(),
                    friends,
                    dht_nodes,
                    dht_other_sections: dht_others,
                    tcp_relays,
                    path_nodes,
                    conferences: Vec::new(),
                    other_sections: others,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn savedata_profile_round_trips(profile in arb_profile()) {
        prop_assert_eq!(profile.check(), Ok(()));
        let bytes = profile.to_bytes();
        let back = Profile::parse(&bytes).unwrap();
        prop_assert_eq!(&back, &profile);
        prop_assert_eq!(back.to_bytes(), bytes);
    }

    #[test]
    fn savedata_parse_never_panics(bytes in arb_bytes(4096)) {
        let _ = Profile::parse(&bytes);
        let mut framed = vec![0, 0, 0, 0, 0x1f, 0x1b, 0xed, 0x15];
        framed.extend_from_slice(&bytes);
        if let Ok(p) = Profile::parse(&framed) {
            let written = p.to_bytes();
            prop_assert_eq!(Profile::parse(&written).unwrap().to_bytes(), written);
        }
    }
}
