//! The CONFERENCES section (type 20) as a specification: bytes built by hand from c-toxcore
//! 0.2.18's `save_conf` / `save_peer` layout, round trips, every truncation, limits and
//! corruption, alone and inside a whole profile.

use proptest::prelude::*;
use rustox_net_crypto::crypto::{PublicKey, SecretKey};

use super::*;

const SK: [u8; 32] = [0x42; 32];

/// A section header written out by hand: length u32 LE, type u16 LE, 0x01ce LE.
fn header(out: &mut Vec<u8>, len: u32, kind: u16) {
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&[0xce, 0x01]);
}

/// A peer written out field by field.
fn peer_bytes(pk: u8, temp: u8, number: u16, last_active: u64, name: &[u8]) -> Vec<u8> {
    let mut v = vec![pk; 32];
    v.extend_from_slice(&[temp; 32]);
    v.extend_from_slice(&number.to_le_bytes());
    v.extend_from_slice(&last_active.to_le_bytes());
    v.push(name.len() as u8);
    v.extend_from_slice(name);
    v
}

/// Two conferences as `conferences_save` writes them: an AV one with a title and two peers
/// (one named), then a text one with no title and no peer. Returns the body and where the
/// second conference starts.
fn hand_built_body() -> (Vec<u8>, usize) {
    let mut v = Vec::new();
    v.push(1); // AV
    v.extend_from_slice(&[0x1d; 32]);
    v.extend_from_slice(&[0x07, 0x00, 0x01, 0x00]); // message number 0x10007, LE
    v.extend_from_slice(&[0x05, 0x20]); // lossy message number 0x2005, LE
    v.extend_from_slice(&[0x03, 0x00]); // our peer number 3
    v.extend_from_slice(&[2, 0, 0, 0]); // two peers
    v.push(9);
    v.extend_from_slice(b"Tox party");
    v.extend(peer_bytes(0xa1, 0xd1, 0, 1_700_000_123, b"alice"));
    v.extend(peer_bytes(0xa2, 0xd2, 0xbeef, 0, b""));
    let second = v.len();
    v.push(0); // text
    v.extend_from_slice(&[0x2e; 32]);
    v.extend_from_slice(&0x0001_0000u32.to_le_bytes());
    v.extend_from_slice(&0x2000u16.to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.push(0);
    (v, second)
}

fn hand_built_conferences() -> Vec<SavedConference> {
    vec![
        SavedConference {
            kind: 1,
            id: [0x1d; 32],
            message_number: 0x1_0007,
            lossy_message_number: 0x2005,
            peer_number: 3,
            title: b"Tox party".to_vec(),
            peers: vec![
                SavedConferencePeer {
                    real_pk: PublicKey([0xa1; 32]),
                    temp_pk: PublicKey([0xd1; 32]),
                    peer_number: 0,
                    last_active: 1_700_000_123,
                    name: b"alice".to_vec(),
                },
                SavedConferencePeer {
                    real_pk: PublicKey([0xa2; 32]),
                    temp_pk: PublicKey([0xd2; 32]),
                    peer_number: 0xbeef,
                    last_active: 0,
                    name: Vec::new(),
                },
            ],
        },
        SavedConference {
            kind: 0,
            id: [0x2e; 32],
            message_number: SAVE_OFFSET_MESSAGE_NUMBER,
            lossy_message_number: SAVE_OFFSET_LOSSY_MESSAGE_NUMBER,
            peer_number: 0,
            title: Vec::new(),
            peers: Vec::new(),
        },
    ]
}

/// A whole save file: keys, then `conferences` as section 20 (when given), then END.
fn file_with(conferences: Option<&[u8]>) -> Vec<u8> {
    let pk = SecretKey::from_bytes(SK).public_key();
    let mut v = vec![0, 0, 0, 0, 0x1f, 0x1b, 0xed, 0x15];
    header(&mut v, 68, 1);
    v.extend_from_slice(&[1, 2, 3, 4]);
    v.extend_from_slice(pk.as_bytes());
    v.extend_from_slice(&SK);
    if let Some(body) = conferences {
        header(&mut v, body.len() as u32, 20);
        v.extend_from_slice(body);
    }
    header(&mut v, 0, 255);
    v
}

fn written(conferences: &[SavedConference]) -> Vec<u8> {
    let mut out = Vec::new();
    write_conferences(conferences, &mut out);
    out
}

#[test]
fn conference_sizes_are_c_toxcores_constants() {
    // SAVED_CONF_SIZE_CONSTANT and SAVED_PEER_SIZE_CONSTANT in group.c.
    assert_eq!(conference::SAVED_CONFERENCE_FIXED_SIZE, 46);
    assert_eq!(conference::SAVED_PEER_FIXED_SIZE, 75);
    let (body, second) = hand_built_body();
    assert_eq!(second, 46 + 9 + 75 + 5 + 75);
    assert_eq!(body.len(), second + 46);
    let confs = hand_built_conferences();
    assert_eq!(confs[0].encoded_len(), second);
    assert_eq!(confs[1].encoded_len(), 46);
}

#[test]
fn conference_hand_built_body_parses_to_the_records() {
    let (body, _) = hand_built_body();
    assert_eq!(parse_conferences(&body), Ok(hand_built_conferences()));
}

#[test]
fn conference_records_write_the_hand_built_body_byte_for_byte() {
    let (body, _) = hand_built_body();
    assert_eq!(written(&hand_built_conferences()), body);
}

#[test]
fn conference_section_in_a_profile_round_trips_byte_for_byte() {
    let (body, _) = hand_built_body();
    let file = file_with(Some(&body));
    let profile = Profile::parse(&file).unwrap();
    assert_eq!(profile.conferences, hand_built_conferences());
    assert!(profile.other_sections.is_empty());
    let again = profile.to_bytes();
    // Our writer adds the empty sections c-toxcore always writes; section 20's bytes are the
    // same, and what it writes parses to the same profile and writes the same bytes.
    let kinds: Vec<(u16, usize)> =
        section::split(&again[8..], STATE_COOKIE_TYPE, Some(SECTION_END))
            .map(|s| s.map(|s| (s.kind, s.body.len())).unwrap())
            .collect();
    assert!(kinds.contains(&(20, body.len())), "{kinds:?}");
    assert!(again.windows(body.len()).any(|w| w == body.as_slice()));
    let back = Profile::parse(&again).unwrap();
    assert_eq!(back, profile);
    assert_eq!(back.to_bytes(), again);
}

#[test]
fn conference_section_absent_or_empty_means_no_conferences() {
    let without = Profile::parse(&file_with(None)).unwrap();
    let empty = Profile::parse(&file_with(Some(&[]))).unwrap();
    assert!(without.conferences.is_empty() && without.other_sections.is_empty());
    assert_eq!(without, empty);
    // Written back, both carry the empty section c-toxcore writes, just before END.
    let bytes = without.to_bytes();
    let tail = &bytes[bytes.len() - 16..];
    assert_eq!(
        tail,
        [0, 0, 0, 0, 20, 0, 0xce, 1, 0, 0, 0, 0, 255, 0, 0xce, 1]
    );
    assert_eq!(empty.to_bytes(), bytes);
}

#[test]
fn conference_every_truncation_is_an_error_unless_it_ends_between_conferences() {
    let (body, second) = hand_built_body();
    let confs = hand_built_conferences();
    // Where each field of the first conference after its fixed part ends: the title, then
    // each peer's keys, peer number, last active, name length and name.
    let peer =
        |at: usize, name: usize| [at + 32, at + 64, at + 66, at + 74, at + 75, at + 75 + name];
    let mut field_ends = vec![55];
    field_ends.extend(peer(55, 5));
    field_ends.extend(peer(135, 0));
    assert_eq!(field_ends.last(), Some(&second));
    for len in 0..=body.len() {
        let parsed = parse_conferences(&body[..len]);
        match len {
            0 => assert_eq!(parsed, Ok(vec![])),
            l if l == second => assert_eq!(parsed, Ok(confs[..1].to_vec())),
            l if l == body.len() => assert_eq!(parsed, Ok(confs.clone())),
            l if l < 46 => assert_eq!(
                parsed,
                Err(ConferencesError::Trailing { offset: 0, len: l })
            ),
            l if l > second && l < second + 46 => assert_eq!(
                parsed,
                Err(ConferencesError::Trailing {
                    offset: second,
                    len: l - second
                })
            ),
            l => assert_eq!(
                parsed,
                Err(ConferencesError::Truncated {
                    conference: 0,
                    needed: *field_ends.iter().find(|&&end| end > l).unwrap(),
                    got: l
                }),
                "prefix of {l} bytes"
            ),
        }
    }
    // Inside a file, the section's length says where it ends: a cut-off body is refused with
    // the same error, and a cut-off file breaks the framing.
    for len in (1..body.len()).filter(|&l| l != second) {
        assert!(matches!(
            Profile::parse(&file_with(Some(&body[..len]))),
            Err(SavedataError::Conferences(_))
        ));
    }
    let file = file_with(Some(&body));
    for len in 0..file.len() {
        assert!(Profile::parse(&file[..len]).is_err(), "prefix of {len}");
    }
}

#[test]
fn conference_lengths_over_128_are_refused_where_they_are() {
    let (body, _) = hand_built_body();
    let mut bad = body.clone();
    bad[45] = 129; // the first title's length
    assert_eq!(
        parse_conferences(&bad),
        Err(ConferencesError::TitleTooLong {
            conference: 0,
            len: 129
        })
    );
    let mut bad = body.clone();
    bad[55 + 74] = 200; // peer 0's name length
    assert_eq!(
        parse_conferences(&bad),
        Err(ConferencesError::NameTooLong {
            conference: 0,
            peer: 0,
            len: 200
        })
    );
    // 128 is allowed: a title of 128 bytes and a peer named with 128 bytes.
    let mut confs = hand_built_conferences();
    confs[1].title = vec![b't'; 128];
    confs[0].peers[1].name = vec![b'n'; 128];
    assert_eq!(check_conferences(&confs), Ok(()));
    assert_eq!(parse_conferences(&written(&confs)), Ok(confs));
}

#[test]
fn conference_peer_count_allocates_nothing_it_has_not_seen() {
    let (body, second) = hand_built_body();
    let mut huge = body[second..].to_vec();
    // u32::MAX peers claimed: refused by the limit before anything is read or allocated.
    huge[41..45].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        parse_conferences(&huge),
        Err(ConferencesError::TooManyPeers {
            conference: 0,
            count: u32::MAX as usize,
            max: 65536
        })
    );
    // The limit itself claimed with no peer after it: cut off at the first peer.
    huge[41..45].copy_from_slice(&65536u32.to_le_bytes());
    assert_eq!(
        parse_conferences(&huge),
        Err(ConferencesError::Truncated {
            conference: 0,
            needed: 46 + 32,
            got: 46
        })
    );
}

#[test]
fn conference_count_is_bounded() {
    let (body, second) = hand_built_body();
    let one = &body[second..];
    let many: Vec<u8> = one.repeat(MAX_SAVED_CONFERENCES);
    assert_eq!(
        parse_conferences(&many).map(|c| c.len()),
        Ok(MAX_SAVED_CONFERENCES)
    );
    let mut too_many = many;
    too_many.extend_from_slice(one);
    assert_eq!(
        parse_conferences(&too_many),
        Err(ConferencesError::TooManyConferences { max: 65535 })
    );
}

#[test]
fn conference_profile_check_and_writer_agree_with_the_parser() {
    let mut p = Profile::new(SecretKey::from_bytes(SK), NoSpam::default());
    p.conferences = hand_built_conferences();
    assert_eq!(p.check(), Ok(()));
    p.conferences[1].title = vec![b't'; 129];
    assert_eq!(
        p.check(),
        Err(SavedataError::Conferences(ConferencesError::TitleTooLong {
            conference: 1,
            len: 129
        }))
    );
    // Written anyway, the title is cut to 128 bytes.
    let back = Profile::parse(&p.to_bytes()).unwrap();
    assert_eq!(back.conferences[1].title, vec![b't'; 128]);
    p.conferences[1].title.clear();
    p.conferences[0].peers[0].name = vec![b'n'; 300];
    assert_eq!(
        p.check(),
        Err(SavedataError::Conferences(ConferencesError::NameTooLong {
            conference: 0,
            peer: 0,
            len: 300
        }))
    );
    p.conferences[0].peers[0].name.clear();
    // Section 20 kept verbatim as well would be written twice.
    p.other_sections.push((SECTION_CONFERENCES, Vec::new()));
    assert_eq!(p.check(), Err(SavedataError::DuplicateSection { kind: 20 }));
    p.other_sections.clear();
    // Two CONFERENCES sections in a file are refused like any other interpreted section.
    let mut twice = file_with(Some(&[]));
    let end = twice.len() - 8;
    twice.truncate(end);
    header(&mut twice, 0, 20);
    header(&mut twice, 0, 255);
    assert_eq!(
        Profile::parse(&twice),
        Err(SavedataError::DuplicateSection { kind: 20 })
    );
}

#[test]
fn conference_every_single_byte_corruption_parses_to_what_writes_it_again() {
    // Every field is kept as it is read, so whatever is accepted writes the same bytes.
    let (body, _) = hand_built_body();
    for i in 0..body.len() {
        for delta in [0x01, 0x80, 0xff] {
            let mut bad = body.clone();
            bad[i] ^= delta;
            if let Ok(confs) = parse_conferences(&bad) {
                assert_eq!(written(&confs), bad, "byte {i} ^ {delta:#x}");
            }
        }
    }
}

fn arb_peer() -> impl Strategy<Value = SavedConferencePeer> {
    (
        any::<[u8; 32]>(),
        any::<[u8; 32]>(),
        any::<u16>(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..=128),
    )
        .prop_map(
            |(real, temp, peer_number, last_active, name)| SavedConferencePeer {
                real_pk: PublicKey(real),
                temp_pk: PublicKey(temp),
                peer_number,
                last_active,
                name,
            },
        )
}

fn arb_conference() -> impl Strategy<Value = SavedConference> {
    (
        any::<u8>(),
        any::<[u8; 32]>(),
        any::<u32>(),
        any::<u16>(),
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..=128),
        proptest::collection::vec(arb_peer(), 0..5),
    )
        .prop_map(
            |(kind, id, message_number, lossy_message_number, peer_number, title, peers)| {
                SavedConference {
                    kind,
                    id,
                    message_number,
                    lossy_message_number,
                    peer_number,
                    title,
                    peers,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn conference_records_round_trip(confs in proptest::collection::vec(arb_conference(), 0..4)) {
        prop_assert_eq!(check_conferences(&confs), Ok(()));
        let bytes = written(&confs);
        prop_assert_eq!(bytes.len(), confs.iter().map(|c| c.encoded_len()).sum::<usize>());
        prop_assert_eq!(parse_conferences(&bytes), Ok(confs.clone()));
        let mut p = Profile::new(SecretKey::from_bytes(SK), NoSpam::default());
        p.conferences = confs;
        let file = p.to_bytes();
        let back = Profile::parse(&file).unwrap();
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(back.to_bytes(), file);
    }

    #[test]
    fn conference_parse_never_panics_and_accepts_only_what_it_writes(
        body in proptest::collection::vec(any::<u8>(), 0..1024)
    ) {
        if let Ok(confs) = parse_conferences(&body) {
            prop_assert_eq!(written(&confs), body);
        }
    }
}
