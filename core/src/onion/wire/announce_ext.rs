//! The extended announce request 0x87 and response 0x88 (c-toxcore 0.2.18 `onion_announce.c`
//! `handle_announce_request`, `handle_gca_announce_request`; 0.2.19+ `group_onion_announce.c`
//! `create_gca_announce_request` and `onion_client.c` `handle_announce_response`).
//!
//! 0.2.18 already answers a 0x87 of exactly 177 bytes (the plaintext of a 0x83) with a 0x88,
//! which differs from a 0x84 only by a node count before the nodes. NGC clients (0.2.19+)
//! announce and look for public groups with a 0x87 whose plaintext carries a group announce
//! ([`super::group_announce`]) after the fixed 104 bytes; the announce node stores it under
//! the chat key and returns other peers' announces for that chat after its nodes.
//!
//! Request, 177 to [`ANNOUNCE_REQUEST_MAX_SIZE`] = 313 bytes:
//!
//! | length  | content                                                                  |
//! |---------|--------------------------------------------------------------------------|
//! | 1       | 0x87                                                                     |
//! | 24      | random nonce                                                             |
//! | 32      | sender pk                                                                |
//! | 16 + 104 + n | `E[ ping_id 32 \| searched pk 32 \| data pk 32 \| sendback 8 \| extra n ≤ 136 ]` |
//!
//! Response, at most [`ANNOUNCE_RESPONSE_MAX_SIZE`] = 626 bytes (clients drop longer ones):
//!
//! | length  | content                                                                  |
//! |---------|--------------------------------------------------------------------------|
//! | 1       | 0x88                                                                     |
//! | 8       | the request's sendback                                                   |
//! | 24      | random nonce                                                             |
//! | 16 + n  | `E[ is_stored 1 \| ping_id or data pk 32 \| node count 1 \| nodes \| group announces ]` |

use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey};

use rustox_net_crypto::wire::Reader;

use super::announce::{
    check_sent_nodes, read_response_envelope, read_status, start_response, AnnounceError,
    AnnounceRequest, AnnounceStatus, RequestEnvelope, ANNOUNCE_PLAIN_SIZE, ANNOUNCE_REQUEST_SIZE,
    ANNOUNCE_RESPONSE_MAX_SIZE, ANNOUNCE_RESPONSE_MIN_SIZE, SENDBACK_DATA_SIZE,
};
use super::group_announce::{decode_announces, GroupAnnounce, GroupAnnounceError};
use super::kind;
use crate::dht::wire::nodes::MAX_SENT_NODES;
use crate::dht::wire::packed_node::PackedNode;
use crate::dht::wire::WireError;

/// `ONION_MAX_EXTRA_DATA_SIZE` (`onion_announce.h`): the most extra data a 0x87 carries.
pub const ONION_MAX_EXTRA_DATA_SIZE: usize = 136;
/// `ONION_ANNOUNCE_REQUEST_MAX_SIZE` = 313.
pub const ANNOUNCE_REQUEST_MAX_SIZE: usize = ANNOUNCE_REQUEST_SIZE + ONION_MAX_EXTRA_DATA_SIZE;

/// Why an extended announce packet was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ExtAnnounceError {
    /// The fixed part, as for 0x83/0x84.
    #[error(transparent)]
    Announce(#[from] AnnounceError),
    /// The group announces after the nodes.
    #[error(transparent)]
    Group(#[from] GroupAnnounceError),
    /// The response would be longer than clients accept.
    #[error("response of {0} bytes; clients accept at most 626")]
    TooLong(usize),
}

/// A 0x87 as D receives it (without C's sendback), before decryption.
pub type ExtAnnounceEnvelope<'a> = RequestEnvelope<'a, { kind::ANNOUNCE_REQUEST_NEW }>;

impl<'a> ExtAnnounceEnvelope<'a> {
    /// Splits a request of 177 to 313 bytes.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, AnnounceError> {
        Self::read(bytes, ANNOUNCE_REQUEST_SIZE..=ANNOUNCE_REQUEST_MAX_SIZE)
    }

    /// Opens it: the fixed request and the extra data after it (empty for a 177-byte one).
    pub fn open(&self, key: &PrecomputedKey) -> Result<(AnnounceRequest, Vec<u8>), AnnounceError> {
        let mut plain = self.plain(key)?;
        if plain.len() < ANNOUNCE_PLAIN_SIZE {
            return Err(AnnounceError::Decrypt);
        }
        let extra = plain.split_off(ANNOUNCE_PLAIN_SIZE);
        let req = AnnounceRequest::decode_plain(&plain).ok_or(AnnounceError::Decrypt)?;
        Ok((req, extra))
    }
}

/// A 0x87: `request` with `extra` (a packed public group announce, or nothing), sealed with
/// `beforenm(D's DHT pk, sender sk)`. `None` if `extra` is longer than 136 bytes.
pub fn seal_request(
    request: &AnnounceRequest,
    sender_pk: &PublicKey,
    key: &PrecomputedKey,
    nonce: &Nonce,
    extra: &[u8],
) -> Option<Vec<u8>> {
    if extra.len() > ONION_MAX_EXTRA_DATA_SIZE {
        return None;
    }
    Some(request.seal_as(kind::ANNOUNCE_REQUEST_NEW, sender_pk, key, nonce, extra))
}

/// The contents of a 0x88.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtAnnounceResponse {
    /// The request's sendback.
    pub sendback: [u8; SENDBACK_DATA_SIZE],
    /// What D holds.
    pub status: AnnounceStatus,
    /// Up to four UDP nodes closest to the searched key.
    pub nodes: Vec<PackedNode>,
    /// Other peers' announces for the group, for a request that carried one.
    pub announces: Vec<GroupAnnounce>,
}

impl ExtAnnounceResponse {
    /// The bytes [`Self::seal`] would produce.
    pub fn sealed_len(&self) -> usize {
        ANNOUNCE_RESPONSE_MIN_SIZE
            .saturating_add(1)
            .saturating_add(self.nodes.iter().map(PackedNode::packed_len).sum())
            .saturating_add(self.announces.iter().map(GroupAnnounce::packed_len).sum())
    }

    /// The 0x88 packet, sealed with the request's shared key.
    pub fn seal(&self, key: &PrecomputedKey, nonce: &Nonce) -> Result<Vec<u8>, ExtAnnounceError> {
        check_sent_nodes(&self.nodes)?;
        let len = self.sealed_len();
        if len > ANNOUNCE_RESPONSE_MAX_SIZE {
            return Err(ExtAnnounceError::TooLong(len));
        }
        let mut out = Vec::with_capacity(len);
        let mac_at = start_response(
            &mut out,
            kind::ANNOUNCE_RESPONSE_NEW,
            &self.sendback,
            nonce,
            &self.status,
        );
        // At most MAX_SENT_NODES (checked above).
        out.push(u8::try_from(self.nodes.len()).unwrap_or(0));
        for n in &self.nodes {
            n.encode(&mut out);
        }
        for a in &self.announces {
            a.encode(&mut out);
        }
        super::seal_after(&mut out, mac_at, |plain| key.encrypt_in_place(nonce, plain));
        Ok(out)
    }

    /// Opens a 0x88 as an NGC client reads it (`handle_announce_response`): 82 to 626 bytes,
    /// at most four UDP nodes as counted, then group announces if any bytes are left.
    pub fn open(bytes: &[u8], key: &PrecomputedKey) -> Result<Self, ExtAnnounceError> {
        let (sendback, nonce, boxed) = read_response_envelope(bytes, kind::ANNOUNCE_RESPONSE_NEW)?;
        let plain = key
            .decrypt(&nonce, boxed)
            .map_err(|_| AnnounceError::Decrypt)?;
        let mut r = Reader::new(&plain);
        let status = read_status(&mut r)?;
        let count = r.u8().map_err(|_| AnnounceError::Decrypt)?;
        let mut rest = r.rest();
        if usize::from(count) > MAX_SENT_NODES {
            return Err(AnnounceError::TooManyNodes(usize::from(count)).into());
        }
        let mut nodes = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            let (node, used) = PackedNode::decode(rest).map_err(AnnounceError::Nodes)?;
            if node.tcp {
                return Err(AnnounceError::Nodes(WireError::BadFamily(130)).into());
            }
            nodes.push(node);
            rest = rest
                .get(used..)
                .ok_or(AnnounceError::Nodes(WireError::BadNodeList))?;
        }
        let announces = decode_announces(rest)?;
        Ok(ExtAnnounceResponse {
            sendback,
            status,
            nodes,
            announces,
        })
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::onion::wire::group_announce::PublicGroupAnnounce;
    use crate::onion::wire::test_keys::{any_key, client_and_node};
    use proptest::prelude::*;

    #[test]
    fn request_with_and_without_extra() {
        let (client, _, ck, nk) = client_and_node(4);
        let req = AnnounceRequest {
            ping_id: [1; 32],
            searched_pk: PublicKey([2; 32]),
            data_pk: PublicKey([0; 32]),
            sendback: [3; 8],
        };
        let announce = PublicGroupAnnounce {
            chat_pk: PublicKey([2; 32]),
            announce: GroupAnnounce {
                peer_pk: PublicKey([4; 32]),
                addr: Some("192.0.2.1:33445".parse().unwrap()),
                relay: None,
            },
        }
        .encode();
        for extra in [Vec::new(), announce] {
            let bytes = seal_request(&req, &client.public, &ck, &Nonce([5; 24]), &extra).unwrap();
            assert_eq!(bytes[0], 0x87);
            assert_eq!(bytes.len(), 177 + extra.len());
            let env = ExtAnnounceEnvelope::parse(&bytes).unwrap();
            assert_eq!(env.sender_pk, client.public);
            assert_eq!(env.open(&nk), Ok((req, extra)));
        }
        assert!(seal_request(&req, &client.public, &ck, &Nonce([5; 24]), &[0; 137]).is_none());
        assert!(ExtAnnounceEnvelope::parse(&[0x87; 176]).is_err());
        assert!(ExtAnnounceEnvelope::parse(&[0x87; 314]).is_err());
        assert!(ExtAnnounceEnvelope::parse(&[0x83; 177]).is_err());
    }

    #[test]
    fn response_round_trip_and_bound() {
        let (_, _, ck, nk) = client_and_node(4);
        let v6 = PackedNode::udp("[2001:db8::2]:6".parse().unwrap(), PublicKey([9; 32]));
        let a = GroupAnnounce {
            peer_pk: PublicKey([4; 32]),
            addr: Some("192.0.2.1:33445".parse().unwrap()),
            relay: Some(PackedNode {
                addr: "192.0.2.2:443".parse().unwrap(),
                tcp: true,
                pk: PublicKey([6; 32]),
            }),
        };
        let resp = ExtAnnounceResponse {
            sendback: [1; 8],
            status: AnnounceStatus::NotStored([7; 32]),
            nodes: vec![v6; 4],
            announces: vec![a; 3],
        };
        let bytes = resp.seal(&nk, &Nonce([2; 24])).unwrap();
        assert_eq!(bytes.len(), resp.sealed_len());
        assert_eq!(bytes[0], 0x88);
        assert_eq!(ExtAnnounceResponse::open(&bytes, &ck), Ok(resp.clone()));
        // Four IPv6 nodes and four IPv6 announces exceed what a client accepts.
        let a6 = GroupAnnounce {
            addr: Some("[2001:db8::1]:33445".parse().unwrap()),
            relay: Some(PackedNode {
                addr: "[2001:db8::2]:443".parse().unwrap(),
                tcp: true,
                pk: PublicKey([6; 32]),
            }),
            ..a
        };
        let long = ExtAnnounceResponse {
            announces: vec![a6; 4],
            ..resp
        };
        assert!(matches!(
            long.seal(&nk, &Nonce([2; 24])),
            Err(ExtAnnounceError::TooLong(_))
        ));
    }

    proptest! {
        #[test]
        fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..700), first in prop_oneof![Just(0x87u8), Just(0x88u8), any::<u8>()]) {
            let mut bytes = bytes;
            if let Some(b) = bytes.first_mut() { *b = first; }
            let key = any_key();
            if let Ok(e) = ExtAnnounceEnvelope::parse(&bytes) { let _ = e.open(&key); }
            let _ = ExtAnnounceResponse::open(&bytes, &key);
        }
    }
}
