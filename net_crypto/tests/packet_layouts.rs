//! Round trips and rejections of every net_crypto wire layout (docs/protocol.md §2.2, §2.5).

use proptest::prelude::*;
use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey, SecretKey, SymmetricKey};
use rustox_net_crypto::packets::*;

fn key_pair_shared(a: [u8; 32], b: [u8; 32]) -> (PrecomputedKey, PrecomputedKey) {
    let a = SecretKey::from_bytes(a);
    let b = SecretKey::from_bytes(b);
    (
        PrecomputedKey::new(&b.public_key(), &a).unwrap(),
        PrecomputedKey::new(&a.public_key(), &b).unwrap(),
    )
}

#[test]
fn layout_sizes_match_c_toxcore_constants() {
    assert_eq!(COOKIE_SIZE, 112);
    assert_eq!(COOKIE_REQUEST_SIZE, 145);
    assert_eq!(COOKIE_RESPONSE_SIZE, 161);
    assert_eq!(HANDSHAKE_SIZE, 385);
    assert_eq!(MAX_CRYPTO_DATA_SIZE, 1373);
    assert_eq!(MIN_DATA_PACKET_SIZE, 27);
}

#[test]
fn first_byte_names_the_packet_kind() {
    assert_eq!(PacketKind::of(&[0x18]), Some(PacketKind::CookieRequest));
    assert_eq!(PacketKind::of(&[0x19]), Some(PacketKind::CookieResponse));
    assert_eq!(PacketKind::of(&[0x1a]), Some(PacketKind::Handshake));
    assert_eq!(PacketKind::of(&[0x1b, 0]), Some(PacketKind::Data));
    assert_eq!(PacketKind::of(&[0x00]), None);
    assert_eq!(PacketKind::of(&[0x20]), None);
    assert_eq!(PacketKind::of(&[]), None);
}

#[test]
fn data_packet_of_27_or_1401_bytes_is_refused() {
    let mut p = vec![0x1b; 27];
    assert!(matches!(
        DataPacket::parse(&p),
        Err(ParseError::LengthOutOfRange { actual: 27, .. })
    ));
    p.push(0);
    assert!(DataPacket::parse(&p).is_ok());
    let big = vec![0x1b; 1401];
    assert!(matches!(
        DataPacket::parse(&big),
        Err(ParseError::LengthOutOfRange { actual: 1401, .. })
    ));
    assert!(DataPacket::parse(&big[..1400]).is_ok());
    let mut wrong_kind = vec![0x1a; 100];
    wrong_kind[1] = 0;
    assert_eq!(
        DataPacket::parse(&wrong_kind),
        Err(ParseError::WrongKind(0x1a))
    );
}

#[test]
fn plaintext_of_only_zero_padding_is_refused() {
    let mut plain = vec![0u8; 8];
    plain.extend_from_slice(&[0, 0, 0]);
    assert_eq!(DataPlaintext::parse(&plain), Err(ParseError::AllPadding));
    assert!(matches!(
        DataPlaintext::parse(&[0u8; 8]),
        Err(ParseError::LengthOutOfRange { actual: 8, .. })
    ));
}

#[test]
fn payload_starting_with_zero_cannot_be_encoded() {
    let p = DataPlaintext {
        buffer_start: 0,
        packet_number: 0,
        payload: vec![0, 16],
    };
    assert_eq!(p.to_bytes(), Err(ParseError::BadPayload));
    let empty = DataPlaintext {
        payload: vec![],
        ..p
    };
    assert_eq!(empty.to_bytes(), Err(ParseError::BadPayload));
}

proptest! {
    #[test]
    fn cookie_round_trips(time: u64, real: [u8; 32], dht: [u8; 32], key: [u8; 32], nonce: [u8; 24]) {
        let key = SymmetricKey::from_bytes(key);
        let cookie = Cookie { time, real_pk: PublicKey(real), dht_pk: PublicKey(dht) };
        let sealed = cookie.seal_with_nonce(&key, &Nonce(nonce));
        prop_assert_eq!(&sealed.0[..24], &nonce[..]);
        let reread = EncryptedCookie::from_slice(&sealed.0).unwrap();
        prop_assert_eq!(reread.open(&key).unwrap(), cookie);
    }

    #[test]
    fn cookie_request_round_trips(a: [u8; 32], b: [u8; 32], dht: [u8; 32], real: [u8; 32], nonce: [u8; 24], echo_id: u64) {
        let (ab, ba) = key_pair_shared(a, b);
        let payload = CookieRequestPayload { sender_real_pk: PublicKey(real), echo_id };
        let packet = CookieRequest::seal(PublicKey(dht), &ab, Nonce(nonce), &payload);
        let bytes = packet.to_bytes();
        prop_assert_eq!(bytes.len(), COOKIE_REQUEST_SIZE);
        prop_assert_eq!(bytes[0], 0x18);
        prop_assert_eq!(&bytes[1..33], &dht[..]);
        prop_assert_eq!(&bytes[33..57], &nonce[..]);
        let parsed = CookieRequest::parse(&bytes).unwrap();
        prop_assert_eq!(&parsed, &packet);
        prop_assert_eq!(parsed.open(&ba).unwrap(), payload);
    }

    #[test]
    fn cookie_response_round_trips(a: [u8; 32], b: [u8; 32], cookie in proptest::collection::vec(any::<u8>(), 112), nonce: [u8; 24], echo_id: u64) {
        let (ab, ba) = key_pair_shared(a, b);
        let payload = CookieResponsePayload { cookie: EncryptedCookie::from_slice(&cookie).unwrap(), echo_id };
        let packet = CookieResponse::seal(&ab, Nonce(nonce), &payload);
        let bytes = packet.to_bytes();
        prop_assert_eq!(bytes.len(), COOKIE_RESPONSE_SIZE);
        prop_assert_eq!(bytes[0], 0x19);
        let parsed = CookieResponse::parse(&bytes).unwrap();
        prop_assert_eq!(&parsed, &packet);
        prop_assert_eq!(parsed.open(&ba).unwrap(), payload);
    }

    #[test]
    fn handshake_round_trips(a: [u8; 32], b: [u8; 32], outer in proptest::collection::vec(any::<u8>(), 112),
                             other in proptest::collection::vec(any::<u8>(), 112), nonce: [u8; 24],
                             base: [u8; 24], session: [u8; 32]) {
        let (ab, ba) = key_pair_shared(a, b);
        let cookie = EncryptedCookie::from_slice(&outer).unwrap();
        let payload = HandshakePayload {
            base_nonce: Nonce(base),
            session_pk: PublicKey(session),
            cookie_hash: rustox_net_crypto::crypto::sha512(&cookie.0),
            other_cookie: EncryptedCookie::from_slice(&other).unwrap(),
        };
        let packet = Handshake::seal(cookie, &ab, Nonce(nonce), &payload);
        let bytes = packet.to_bytes();
        prop_assert_eq!(bytes.len(), HANDSHAKE_SIZE);
        prop_assert_eq!(bytes[0], 0x1a);
        prop_assert_eq!(&bytes[1..113], &outer[..]);
        let parsed = Handshake::parse(&bytes).unwrap();
        prop_assert_eq!(&parsed, &packet);
        prop_assert_eq!(parsed.open(&ba).unwrap(), payload);
    }

    #[test]
    fn data_packet_round_trips_with_padding(a: [u8; 32], b: [u8; 32], nonce: [u8; 24], buffer_start: u32, packet_number: u32,
                                            id in 1u8..=255, rest in proptest::collection::vec(any::<u8>(), 0..1373)) {
        let (ab, ba) = key_pair_shared(a, b);
        let mut payload = vec![id];
        payload.extend_from_slice(&rest[..rest.len().min(1372)]);
        let plain = DataPlaintext { buffer_start, packet_number, payload: payload.clone() };
        let encoded = plain.to_bytes().unwrap();
        let pad = padding_len(payload.len());
        prop_assert_eq!(encoded.len(), 8 + pad + payload.len());
        prop_assert!(encoded[8..8 + pad].iter().all(|&z| z == 0));
        prop_assert_eq!((pad + payload.len()) % 8, 1373 % 8);

        let packet = DataPacket::seal(&ab, &Nonce(nonce), &plain).unwrap();
        let bytes = packet.to_bytes();
        prop_assert!(bytes.len() > 27 && bytes.len() <= 1400);
        prop_assert_eq!(bytes[0], 0x1b);
        prop_assert_eq!(&bytes[1..3], &nonce[22..24]);
        let parsed = DataPacket::parse(&bytes).unwrap();
        prop_assert_eq!(parsed.open(&ba, &Nonce(nonce)).unwrap(), plain);
    }

    #[test]
    fn parsers_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..1500)) {
        let _ = CookieRequest::parse(&bytes);
        let _ = CookieResponse::parse(&bytes);
        let _ = Handshake::parse(&bytes);
        let _ = DataPacket::parse(&bytes);
        let _ = DataPlaintext::parse(&bytes);
        let _ = EncryptedCookie::from_slice(&bytes);
    }

    #[test]
    fn fixed_layouts_refuse_every_other_length(len in 0usize..500) {
        let mut bytes = vec![0u8; len];
        for (kind, size) in [(0x18u8, 145usize), (0x19, 161), (0x1a, 385)] {
            if let Some(b) = bytes.first_mut() { *b = kind; }
            let ok = match kind {
                0x18 => CookieRequest::parse(&bytes).is_ok(),
                0x19 => CookieResponse::parse(&bytes).is_ok(),
                _ => Handshake::parse(&bytes).is_ok(),
            };
            prop_assert_eq!(ok, len == size);
        }
    }
}
