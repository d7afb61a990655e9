//! Announce request 0x83 and response 0x84 (docs/protocol.md §6.3; c-toxcore 0.2.18
//! `onion_announce.c` `create_announce_request`, `handle_announce_request_common`, and
//! `onion_client.c` `handle_announce_response`).
//!
//! Request, 177 bytes (`ONION_ANNOUNCE_REQUEST_SIZE`), D receives it with C's 177-byte
//! sendback appended:
//!
//! | length  | content                                                                  |
//! |---------|--------------------------------------------------------------------------|
//! | 1       | 0x83                                                                     |
//! | 24      | random nonce                                                             |
//! | 32      | sender pk (our real pk to announce; a per-friend temporary pk to search) |
//! | 16 + 104| `E(beforenm(D's DHT pk, sender sk))[ ping_id 32 \| searched pk 32 \| data pk 32 \| sendback 8 ]` |
//!
//! Response, 82 to 286 bytes as sent (0.2.18 clients accept up to 626):
//!
//! | length  | content                                                                  |
//! |---------|--------------------------------------------------------------------------|
//! | 1       | 0x84                                                                     |
//! | 8       | the request's sendback, in clear, so the client knows which key opens it |
//! | 24      | random nonce                                                             |
//! | 16 + n  | `E(same shared key)[ is_stored 1 \| ping_id or data pk 32 \| 0..4 packed nodes ]` |

use rustox_net_crypto::crypto::{
    Nonce, PrecomputedKey, PublicKey, MAC_SIZE, NONCE_SIZE, PUBLIC_KEY_SIZE,
};

use std::ops::RangeInclusive;

use rustox_net_crypto::wire::{Reader, TooShort};

use super::kind;
use crate::dht::wire::nodes::MAX_SENT_NODES;
use crate::dht::wire::packed_node::{PackedNode, PACKED_NODE_SIZE_V6};
use crate::dht::wire::WireError;

/// `ONION_PING_ID_SIZE` (= `TIMED_AUTH_SIZE`, an HMAC-SHA512-256 tag).
pub const ONION_PING_ID_SIZE: usize = 32;
/// `ONION_ANNOUNCE_SENDBACK_DATA_LENGTH`: the client's opaque 8 bytes.
pub const SENDBACK_DATA_SIZE: usize = 8;
/// The request's plaintext.
pub const ANNOUNCE_PLAIN_SIZE: usize =
    ONION_PING_ID_SIZE + 2 * PUBLIC_KEY_SIZE + SENDBACK_DATA_SIZE;
/// `ONION_ANNOUNCE_REQUEST_SIZE` = 177.
pub const ANNOUNCE_REQUEST_SIZE: usize =
    1 + NONCE_SIZE + PUBLIC_KEY_SIZE + ANNOUNCE_PLAIN_SIZE + MAC_SIZE;
/// `ONION_ANNOUNCE_RESPONSE_MIN_SIZE` = 82: no nodes.
pub const ANNOUNCE_RESPONSE_MIN_SIZE: usize =
    2 + SENDBACK_DATA_SIZE + NONCE_SIZE + ONION_PING_ID_SIZE + MAC_SIZE;
/// `ONION_MAX_EXTRA_DATA_SIZE` (`onion_announce.h`).
const ONION_MAX_EXTRA_DATA_SIZE: usize = 136;
/// `ONION_ANNOUNCE_RESPONSE_MAX_SIZE` = 626: the largest response a 0.2.18 client accepts.
pub const ANNOUNCE_RESPONSE_MAX_SIZE: usize =
    ANNOUNCE_RESPONSE_MIN_SIZE + ONION_MAX_EXTRA_DATA_SIZE * MAX_SENT_NODES;
/// The largest response a server sends: four IPv6 nodes, 286 bytes.
pub const ANNOUNCE_RESPONSE_MAX_SENT_SIZE: usize =
    ANNOUNCE_RESPONSE_MIN_SIZE + MAX_SENT_NODES * PACKED_NODE_SIZE_V6;

/// An opaque ping id; only the announce node that made it can check it.
pub type PingId = [u8; ONION_PING_ID_SIZE];

/// Why an announce packet was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AnnounceError {
    /// Not the expected kind.
    #[error("unexpected kind {0:#04x}")]
    UnknownKind(u8),
    /// A length the kind does not allow.
    #[error("bad length {len} for {kind:#04x}")]
    BadLength {
        /// The kind byte.
        kind: u8,
        /// The length.
        len: usize,
    },
    /// The box did not open.
    #[error("announce box does not open")]
    Decrypt,
    /// `is_stored` above 2.
    #[error("is_stored {0} is not 0, 1 or 2")]
    BadStatus(u8),
    /// The node list does not decode, or holds a TCP node (0.2.18 unpacks it with TCP off).
    #[error("bad node list: {0}")]
    Nodes(WireError),
    /// More than four nodes to send.
    #[error("{0} nodes; at most 4 are sent")]
    TooManyNodes(usize),
}

/// The plaintext of a 0x83.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnounceRequest {
    /// 32 zero bytes at first, then the ping id of the node's last response.
    pub ping_id: PingId,
    /// The key being announced or searched for (a real pk).
    pub searched_pk: PublicKey,
    /// Announcing: our temporary data pk. Searching: 32 zero bytes.
    pub data_pk: PublicKey,
    /// Echoed in the response.
    pub sendback: [u8; SENDBACK_DATA_SIZE],
}

impl AnnounceRequest {
    /// The 177-byte request: `key` = `beforenm(D's DHT pk, sender sk)`.
    pub fn seal(&self, sender_pk: &PublicKey, key: &PrecomputedKey, nonce: &Nonce) -> Vec<u8> {
        self.seal_as(kind::ANNOUNCE_REQUEST, sender_pk, key, nonce, &[])
    }

    /// The request as `kind` with `extra` after the fixed plaintext (0x87's group announce).
    pub(super) fn seal_as(
        &self,
        k: u8,
        sender_pk: &PublicKey,
        key: &PrecomputedKey,
        nonce: &Nonce,
        extra: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(ANNOUNCE_REQUEST_SIZE.saturating_add(extra.len()));
        out.push(k);
        out.extend_from_slice(&nonce.0);
        out.extend_from_slice(sender_pk.as_bytes());
        let mut plain = [0u8; ANNOUNCE_PLAIN_SIZE];
        plain[..32].copy_from_slice(&self.ping_id);
        plain[32..64].copy_from_slice(self.searched_pk.as_bytes());
        plain[64..96].copy_from_slice(self.data_pk.as_bytes());
        plain[96..].copy_from_slice(&self.sendback);
        let mut plain = plain.to_vec();
        plain.extend_from_slice(extra);
        let mac = key.encrypt_in_place(nonce, &mut plain);
        out.extend_from_slice(&mac);
        out.extend_from_slice(&plain);
        out
    }

    pub(super) fn decode_plain(plain: &[u8]) -> Option<Self> {
        let mut r = Reader::new(plain);
        let request = AnnounceRequest {
            ping_id: r.array().ok()?,
            searched_pk: PublicKey(r.array().ok()?),
            data_pk: PublicKey(r.array().ok()?),
            sendback: r.array().ok()?,
        };
        // Nothing after the sendback: `plain` is exactly ANNOUNCE_PLAIN_SIZE.
        r.expect_end().ok()?;
        Some(request)
    }
}

/// A request to D of kind `KIND` (0x83, or 0x87 with extra data) as D receives it (without
/// C's sendback), before decryption: `[kind][nonce 24][sender pk 32][box]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestEnvelope<'a, const KIND: u8> {
    /// The nonce.
    pub nonce: Nonce,
    /// The sender's key; the ping id is bound to it.
    pub sender_pk: PublicKey,
    boxed: &'a [u8],
}

/// A 0x83 as D receives it (without C's sendback), before decryption.
pub type AnnounceEnvelope<'a> = RequestEnvelope<'a, { kind::ANNOUNCE_REQUEST }>;

impl<'a, const KIND: u8> RequestEnvelope<'a, KIND> {
    /// Splits a request of `KIND` with a length in `sizes`.
    pub(super) fn read(
        bytes: &'a [u8],
        sizes: RangeInclusive<usize>,
    ) -> Result<Self, AnnounceError> {
        let bad = check_kind_and_length(bytes, KIND, sizes)?;
        let (nonce, sender_pk, boxed) = super::read_nonce_key_box(bytes).map_err(bad)?;
        Ok(RequestEnvelope {
            nonce,
            sender_pk,
            boxed,
        })
    }

    /// The box opened with `beforenm(sender_pk, our DHT sk)`.
    pub(super) fn plain(&self, key: &PrecomputedKey) -> Result<Vec<u8>, AnnounceError> {
        key.decrypt(&self.nonce, self.boxed)
            .map_err(|_| AnnounceError::Decrypt)
    }
}

impl<'a> AnnounceEnvelope<'a> {
    /// Splits a 177-byte request.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, AnnounceError> {
        Self::read(bytes, ANNOUNCE_REQUEST_SIZE..=ANNOUNCE_REQUEST_SIZE)
    }

    /// Opens it with `beforenm(sender_pk, our DHT sk)`.
    pub fn open(&self, key: &PrecomputedKey) -> Result<AnnounceRequest, AnnounceError> {
        AnnounceRequest::decode_plain(&self.plain(key)?).ok_or(AnnounceError::Decrypt)
    }
}

/// `is_stored` and the 32 bytes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnounceStatus {
    /// 0: the searched key is not announced here (or a request to announce was not
    /// accepted); use this ping id next time.
    NotStored(PingId),
    /// 1: the searched key is announced here; encrypt data to this data pk.
    Found(PublicKey),
    /// 2: you (the sender) are announced here; use this ping id to stay announced.
    Stored(PingId),
}

impl AnnounceStatus {
    /// The `is_stored` byte.
    pub fn is_stored(&self) -> u8 {
        match self {
            AnnounceStatus::NotStored(_) => 0,
            AnnounceStatus::Found(_) => 1,
            AnnounceStatus::Stored(_) => 2,
        }
    }

    pub(super) fn field(&self) -> &[u8; 32] {
        match self {
            AnnounceStatus::NotStored(p) | AnnounceStatus::Stored(p) => p,
            AnnounceStatus::Found(pk) => pk.as_bytes(),
        }
    }
}

/// The contents of a 0x84.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnounceResponse {
    /// The request's sendback.
    pub sendback: [u8; SENDBACK_DATA_SIZE],
    /// What D holds.
    pub status: AnnounceStatus,
    /// Up to four UDP nodes closest to the searched key.
    pub nodes: Vec<PackedNode>,
}

impl AnnounceResponse {
    /// The 0x84 packet, sealed with the request's shared key.
    pub fn seal(&self, key: &PrecomputedKey, nonce: &Nonce) -> Result<Vec<u8>, AnnounceError> {
        check_sent_nodes(&self.nodes)?;
        let mut out = Vec::with_capacity(ANNOUNCE_RESPONSE_MAX_SENT_SIZE);
        let mac_at = start_response(
            &mut out,
            kind::ANNOUNCE_RESPONSE,
            &self.sendback,
            nonce,
            &self.status,
        );
        for n in &self.nodes {
            n.encode(&mut out);
        }
        super::seal_after(&mut out, mac_at, |plain| key.encrypt_in_place(nonce, plain));
        Ok(out)
    }
}

/// The nodes a response (0x84 or 0x88) may carry: at most four, none of them TCP.
pub(super) fn check_sent_nodes(nodes: &[PackedNode]) -> Result<(), AnnounceError> {
    if nodes.len() > MAX_SENT_NODES {
        return Err(AnnounceError::TooManyNodes(nodes.len()));
    }
    if nodes.iter().any(|n| n.tcp) {
        return Err(AnnounceError::Nodes(WireError::BadFamily(130)));
    }
    Ok(())
}

/// Appends how a response of kind `kind` (0x84 or 0x88) begins,
/// `[kind][sendback 8][nonce 24][MAC 16, zero until sealed][is_stored 1][field 32]`, and
/// returns where its MAC goes.
pub(super) fn start_response(
    out: &mut Vec<u8>,
    kind: u8,
    sendback: &[u8; SENDBACK_DATA_SIZE],
    nonce: &Nonce,
    status: &AnnounceStatus,
) -> usize {
    out.push(kind);
    out.extend_from_slice(sendback);
    out.extend_from_slice(&nonce.0);
    let mac_at = out.len();
    out.extend_from_slice(&[0; MAC_SIZE]);
    out.push(status.is_stored());
    out.extend_from_slice(status.field());
    mac_at
}

/// A 0x84 as the client receives it, before decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnounceResponseEnvelope<'a> {
    /// The sendback of the request it answers: tells the client which key opens it.
    pub sendback: [u8; SENDBACK_DATA_SIZE],
    /// The nonce.
    pub nonce: Nonce,
    boxed: &'a [u8],
}

impl<'a> AnnounceResponseEnvelope<'a> {
    /// Splits a response of 82 to 626 bytes (0.2.18's bounds on receipt).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, AnnounceError> {
        let (sendback, nonce, boxed) = read_response_envelope(bytes, kind::ANNOUNCE_RESPONSE)?;
        Ok(AnnounceResponseEnvelope {
            sendback,
            nonce,
            boxed,
        })
    }

    /// Opens it with `beforenm(D's DHT pk, the sender sk of the request)`. Nodes are read as
    /// 0.2.18's `unpack_nodes(.., max 4, tcp off)` reads them: UDP only, at most four, and
    /// bytes after a fourth node are ignored.
    pub fn open(&self, key: &PrecomputedKey) -> Result<AnnounceResponse, AnnounceError> {
        let plain = key
            .decrypt(&self.nonce, self.boxed)
            .map_err(|_| AnnounceError::Decrypt)?;
        let mut r = Reader::new(&plain);
        let status = read_status(&mut r)?;
        let mut rest = r.rest();
        let mut nodes = Vec::new();
        while nodes.len() < MAX_SENT_NODES {
            let Some(&family) = rest.first() else {
                break;
            };
            let (node, used) = PackedNode::decode(rest).map_err(AnnounceError::Nodes)?;
            if node.tcp {
                return Err(AnnounceError::Nodes(WireError::BadFamily(family)));
            }
            nodes.push(node);
            rest = rest
                .get(used..)
                .ok_or(AnnounceError::Nodes(WireError::BadNodeList))?;
        }
        Ok(AnnounceResponse {
            sendback: self.sendback,
            status,
            nodes,
        })
    }
}

/// Checks a packet's kind, then its length against `sizes` (0.2.18's bounds on receipt);
/// the error for a packet whose fields do not fit is the one for a bad length.
fn check_kind_and_length(
    bytes: &[u8],
    want: u8,
    sizes: RangeInclusive<usize>,
) -> Result<impl Fn(TooShort) -> AnnounceError, AnnounceError> {
    let k = *bytes.first().ok_or(AnnounceError::UnknownKind(0))?;
    if k != want {
        return Err(AnnounceError::UnknownKind(k));
    }
    let bad = AnnounceError::BadLength {
        kind: k,
        len: bytes.len(),
    };
    if !sizes.contains(&bytes.len()) {
        return Err(bad);
    }
    Ok(move |_| bad)
}

/// D's response of kind `want` (0x84 or 0x88), 82 to 626 bytes (0.2.18's bounds on
/// receipt): `[kind][sendback 8][nonce 24][box]`.
pub(super) fn read_response_envelope(
    bytes: &[u8],
    want: u8,
) -> Result<([u8; SENDBACK_DATA_SIZE], Nonce, &[u8]), AnnounceError> {
    let bad = check_kind_and_length(
        bytes,
        want,
        ANNOUNCE_RESPONSE_MIN_SIZE..=ANNOUNCE_RESPONSE_MAX_SIZE,
    )?;
    let mut r = Reader::after_kind(bytes);
    let sendback = r.array().map_err(&bad)?;
    let nonce = Nonce(r.array().map_err(&bad)?);
    Ok((sendback, nonce, r.rest()))
}

/// `[is_stored 1][ping id or data pk 32]`, how an opened 0x84 or 0x88 begins; a plaintext
/// too short for it did not open as one ([`AnnounceError::Decrypt`]).
pub(super) fn read_status(r: &mut Reader<'_>) -> Result<AnnounceStatus, AnnounceError> {
    let is_stored = r.u8().map_err(|_| AnnounceError::Decrypt)?;
    let field: [u8; ONION_PING_ID_SIZE] = r.array().map_err(|_| AnnounceError::Decrypt)?;
    Ok(match is_stored {
        0 => AnnounceStatus::NotStored(field),
        1 => AnnounceStatus::Found(PublicKey(field)),
        2 => AnnounceStatus::Stored(field),
        other => return Err(AnnounceError::BadStatus(other)),
    })
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::onion::wire::test_keys::{any_key, client_and_node};
    use proptest::prelude::*;

    #[test]
    fn request_round_trip_and_layout() {
        let (client, node, ck, _) = client_and_node(3);
        let req = AnnounceRequest {
            ping_id: [1; 32],
            searched_pk: client.public,
            data_pk: PublicKey([2; 32]),
            sendback: [3; 8],
        };
        let bytes = req.seal(&client.public, &ck, &Nonce([4; 24]));
        assert_eq!(bytes.len(), 177);
        assert_eq!(bytes[0], 0x83);
        assert_eq!(&bytes[1..25], &[4; 24]);
        assert_eq!(&bytes[25..57], client.public.as_bytes());
        let env = AnnounceEnvelope::parse(&bytes).unwrap();
        assert_eq!(env.sender_pk, client.public);
        let nk = PrecomputedKey::new(&env.sender_pk, &node.secret).unwrap();
        assert_eq!(env.open(&nk), Ok(req));
        assert_eq!(
            AnnounceEnvelope::parse(&bytes[..176]),
            Err(AnnounceError::BadLength {
                kind: 0x83,
                len: 176
            })
        );
        let mut bad = bytes.clone();
        bad[100] ^= 1;
        assert_eq!(
            AnnounceEnvelope::parse(&bad).unwrap().open(&nk),
            Err(AnnounceError::Decrypt)
        );
    }

    #[test]
    fn response_round_trip_every_status() {
        let (_, _, ck, nk) = client_and_node(3);
        let v4 = PackedNode::udp("1.2.3.4:5".parse().unwrap(), PublicKey([8; 32]));
        let v6 = PackedNode::udp("[2001:db8::2]:6".parse().unwrap(), PublicKey([9; 32]));
        for (status, nodes) in [
            (AnnounceStatus::NotStored([5; 32]), vec![]),
            (AnnounceStatus::Found(PublicKey([6; 32])), vec![v4]),
            (AnnounceStatus::Stored([7; 32]), vec![v6; 4]),
        ] {
            let resp = AnnounceResponse {
                sendback: [1; 8],
                status,
                nodes,
            };
            let bytes = resp.seal(&nk, &Nonce([2; 24])).unwrap();
            assert!(bytes.len() >= ANNOUNCE_RESPONSE_MIN_SIZE);
            assert!(bytes.len() <= ANNOUNCE_RESPONSE_MAX_SENT_SIZE);
            let env = AnnounceResponseEnvelope::parse(&bytes).unwrap();
            assert_eq!(env.sendback, [1; 8]);
            assert_eq!(env.open(&ck).unwrap(), resp);
        }
        assert_eq!(ANNOUNCE_RESPONSE_MAX_SENT_SIZE, 286);
        assert_eq!(ANNOUNCE_RESPONSE_MAX_SIZE, 626);
        let too_many = AnnounceResponse {
            sendback: [0; 8],
            status: AnnounceStatus::Stored([0; 32]),
            nodes: vec![v4; 5],
        };
        assert_eq!(
            too_many.seal(&nk, &Nonce([0; 24])),
            Err(AnnounceError::TooManyNodes(5))
        );
    }

    #[test]
    fn response_receipt_follows_unpack_nodes() {
        let (_, _, ck, nk) = client_and_node(3);
        let seal_plain = |plain: &[u8]| {
            let mut out = vec![0x84];
            out.extend_from_slice(&[0; 8]);
            out.extend_from_slice(&[1; 24]);
            out.extend_from_slice(&nk.encrypt(&Nonce([1; 24]), plain));
            out
        };
        let mut plain = vec![3u8];
        plain.extend_from_slice(&[0; 32]);
        let b = seal_plain(&plain);
        assert_eq!(
            AnnounceResponseEnvelope::parse(&b).unwrap().open(&ck),
            Err(AnnounceError::BadStatus(3))
        );
        // A TCP node is refused; a half node too; bytes after four nodes are ignored.
        plain[0] = 0;
        let mut tcp = plain.clone();
        PackedNode {
            addr: "1.2.3.4:5".parse().unwrap(),
            tcp: true,
            pk: PublicKey([1; 32]),
        }
        .encode(&mut tcp);
        assert!(matches!(
            AnnounceResponseEnvelope::parse(&seal_plain(&tcp))
                .unwrap()
                .open(&ck),
            Err(AnnounceError::Nodes(_))
        ));
        let mut half = plain.clone();
        half.extend_from_slice(&[2, 1, 2]);
        assert!(matches!(
            AnnounceResponseEnvelope::parse(&seal_plain(&half))
                .unwrap()
                .open(&ck),
            Err(AnnounceError::Nodes(_))
        ));
        let mut five = plain.clone();
        let n = PackedNode::udp("1.2.3.4:5".parse().unwrap(), PublicKey([1; 32]));
        for _ in 0..5 {
            n.encode(&mut five);
        }
        let r = AnnounceResponseEnvelope::parse(&seal_plain(&five))
            .unwrap()
            .open(&ck)
            .unwrap();
        assert_eq!(r.nodes.len(), 4);
        assert!(AnnounceResponseEnvelope::parse(&[0x84; 81]).is_err());
        assert!(AnnounceResponseEnvelope::parse(&[0x84; 627]).is_err());
    }

    proptest! {
        #[test]
        fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..700), first in prop_oneof![Just(0x83u8), Just(0x84u8), any::<u8>()]) {
            let mut bytes = bytes;
            if let Some(b) = bytes.first_mut() { *b = first; }
            let key = any_key();
            if let Ok(e) = AnnounceEnvelope::parse(&bytes) { let _ = e.open(&key); }
            if let Ok(e) = AnnounceResponseEnvelope::parse(&bytes) { let _ = e.open(&key); }
        }

        #[test]
        fn request_round_trips(ping in any::<[u8; 32]>(), s in any::<[u8; 32]>(), d in any::<[u8; 32]>(), sb in any::<[u8; 8]>()) {
            let (client, _, ck, nk) = client_and_node(3);
            let req = AnnounceRequest { ping_id: ping, searched_pk: PublicKey(s), data_pk: PublicKey(d), sendback: sb };
            let bytes = req.seal(&client.public, &ck, &Nonce([0; 24]));
            let env = AnnounceEnvelope::parse(&bytes).unwrap();
            prop_assert_eq!(env.open(&nk), Ok(req));
        }
    }
}
