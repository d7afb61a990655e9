//! The generic DHT packet that carries pings and node lists (docs/protocol.md §5.2).
//!
//! | length   | content                                                         |
//! |----------|-----------------------------------------------------------------|
//! | 1        | kind: 0x00 ping req, 0x01 ping resp, 0x02 get-nodes, 0x04 send-nodes |
//! | 32       | sender's DHT public key                                         |
//! | 24       | random nonce                                                    |
//! | 16 + n   | `E(beforenm(receiver pk, sender sk), nonce)[payload]`, MAC first |
//!
//! Lengths are checked per kind *before* any decryption, exactly as c-toxcore does
//! (`DHT_PING_SIZE`, the exact get-nodes size, the send-nodes bounds), so a wrong-sized
//! datagram never costs a key agreement.

use rustox_net_crypto::crypto::{
    Nonce, PrecomputedKey, PublicKey, MAC_SIZE, NONCE_SIZE, PUBLIC_KEY_SIZE,
};

use rustox_net_crypto::wire::Reader;

use super::kind;
use super::nodes::{
    NodesRequest, NodesResponse, NODES_REQUEST_PACKET_SIZE, NODES_RESPONSE_MAX_SIZE,
    NODES_RESPONSE_MIN_SIZE,
};
use super::ping::{Ping, PING_PACKET_SIZE};
use super::{read_sender_nonce_box, WireError};

/// Bytes before the box: kind, sender pk, nonce.
pub const DHT_HEADER_SIZE: usize = 1 + PUBLIC_KEY_SIZE + NONCE_SIZE;

/// A generic DHT packet before decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// The kind byte.
    pub kind: u8,
    /// The sender's DHT public key.
    pub sender: PublicKey,
    /// The nonce in clear.
    pub nonce: Nonce,
    /// `[MAC][ciphertext]`.
    pub boxed: &'a [u8],
}

impl<'a> Envelope<'a> {
    /// Splits a datagram, checking the length its kind requires.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, WireError> {
        let &k = bytes
            .first()
            .ok_or(WireError::BadLength { kind: 0, len: 0 })?;
        let len_ok = match k {
            kind::PING_REQUEST | kind::PING_RESPONSE => bytes.len() == PING_PACKET_SIZE,
            kind::NODES_REQUEST => bytes.len() == NODES_REQUEST_PACKET_SIZE,
            kind::NODES_RESPONSE => {
                (NODES_RESPONSE_MIN_SIZE..=NODES_RESPONSE_MAX_SIZE).contains(&bytes.len())
            }
            other => return Err(WireError::UnknownKind(other)),
        };
        if !len_ok {
            return Err(WireError::BadLength {
                kind: k,
                len: bytes.len(),
            });
        }
        let (sender, nonce, boxed) = read_sender_nonce_box(Reader::after_kind(bytes))?;
        Ok(Envelope {
            kind: k,
            sender,
            nonce,
            boxed,
        })
    }

    /// Opens the box with the shared key of (sender, us) and decodes the payload.
    pub fn open(&self, key: &PrecomputedKey) -> Result<DhtMessage, WireError> {
        if self.boxed.len() <= MAC_SIZE {
            return Err(WireError::Decrypt);
        }
        let plain = key
            .decrypt(&self.nonce, self.boxed)
            .map_err(|_| WireError::Decrypt)?;
        DhtMessage::decode(self.kind, &plain)
    }
}

/// A decrypted generic DHT message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DhtMessage {
    /// 0x00 / 0x01.
    Ping(Ping),
    /// 0x02.
    NodesRequest(NodesRequest),
    /// 0x04.
    NodesResponse(NodesResponse),
}

impl DhtMessage {
    /// The outer kind byte.
    pub fn kind(&self) -> u8 {
        match self {
            DhtMessage::Ping(p) if p.response => kind::PING_RESPONSE,
            DhtMessage::Ping(_) => kind::PING_REQUEST,
            DhtMessage::NodesRequest(_) => kind::NODES_REQUEST,
            DhtMessage::NodesResponse(_) => kind::NODES_RESPONSE,
        }
    }

    /// The plaintext payload.
    pub fn encode_plain(&self) -> Vec<u8> {
        match self {
            DhtMessage::Ping(p) => p.encode().to_vec(),
            DhtMessage::NodesRequest(r) => r.encode(),
            DhtMessage::NodesResponse(r) => r.encode(),
        }
    }

    /// Decodes a plaintext of the given kind.
    pub fn decode(k: u8, plain: &[u8]) -> Result<Self, WireError> {
        match k {
            kind::PING_REQUEST => Ping::decode(plain, false).map(DhtMessage::Ping),
            kind::PING_RESPONSE => Ping::decode(plain, true).map(DhtMessage::Ping),
            kind::NODES_REQUEST => NodesRequest::decode(plain).map(DhtMessage::NodesRequest),
            kind::NODES_RESPONSE => NodesResponse::decode(plain).map(DhtMessage::NodesResponse),
            other => Err(WireError::UnknownKind(other)),
        }
    }

    /// The whole datagram: `[kind][our pk][nonce][box]`.
    pub fn seal(&self, own_pk: &PublicKey, key: &PrecomputedKey, nonce: &Nonce) -> Vec<u8> {
        let plain = self.encode_plain();
        let boxed = key.encrypt(nonce, &plain);
        let mut out = Vec::with_capacity(DHT_HEADER_SIZE.saturating_add(boxed.len()));
        out.push(self.kind());
        out.extend_from_slice(own_pk.as_bytes());
        out.extend_from_slice(&nonce.0);
        out.extend_from_slice(&boxed);
        out
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::dht::wire::packed_node::PackedNode;
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;
    use rustox_net_crypto::crypto::KeyPair;

    fn pair() -> (KeyPair, KeyPair) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        (KeyPair::generate(&mut rng), KeyPair::generate(&mut rng))
    }

    #[test]
    fn sizes_match_c_toxcore() {
        let (a, b) = pair();
        let k = PrecomputedKey::new(&b.public, &a.secret).unwrap();
        let n = Nonce([1; 24]);
        let ping = DhtMessage::Ping(Ping {
            response: false,
            id: 1,
        })
        .seal(&a.public, &k, &n);
        assert_eq!(ping.len(), 82);
        assert_eq!(ping[0], 0);
        assert_eq!(&ping[1..33], a.public.as_bytes());
        assert_eq!(&ping[33..57], &[1; 24]);
        let req = DhtMessage::NodesRequest(NodesRequest {
            searched: b.public,
            sendback: 3,
        })
        .seal(&a.public, &k, &n);
        assert_eq!(req.len(), 113);
        let resp = DhtMessage::NodesResponse(NodesResponse {
            nodes: vec![PackedNode::udp("[::1]:1".parse().unwrap(), a.public); 4],
            sendback: 3,
        })
        .seal(&a.public, &k, &n);
        assert_eq!(resp.len(), NODES_RESPONSE_MAX_SIZE);
    }

    #[test]
    fn wrong_lengths_are_refused_before_decryption() {
        assert_eq!(
            Envelope::parse(&[0; 81]),
            Err(WireError::BadLength { kind: 0, len: 81 })
        );
        assert_eq!(
            Envelope::parse(&[2; 114]),
            Err(WireError::BadLength { kind: 2, len: 114 })
        );
        assert_eq!(
            Envelope::parse(&[4; 81]),
            Err(WireError::BadLength { kind: 4, len: 81 })
        );
        assert_eq!(Envelope::parse(&[3; 100]), Err(WireError::UnknownKind(3)));
        assert!(Envelope::parse(&[]).is_err());
    }

    #[test]
    fn a_request_cannot_be_replayed_as_a_response() {
        let (a, b) = pair();
        let k = PrecomputedKey::new(&b.public, &a.secret).unwrap();
        let mut ping = DhtMessage::Ping(Ping {
            response: false,
            id: 1,
        })
        .seal(&a.public, &k, &Nonce([0; 24]));
        ping[0] = kind::PING_RESPONSE;
        let kb = PrecomputedKey::new(&a.public, &b.secret).unwrap();
        assert_eq!(
            Envelope::parse(&ping).unwrap().open(&kb),
            Err(WireError::BadPayload)
        );
    }

    proptest! {
        #[test]
        fn seal_open_round_trip(id in any::<u64>(), sendback in any::<u64>(), pk in any::<[u8; 32]>(), resp in any::<bool>()) {
            let (a, b) = pair();
            let ka = PrecomputedKey::new(&b.public, &a.secret).unwrap();
            let kb = PrecomputedKey::new(&a.public, &b.secret).unwrap();
            for msg in [
                DhtMessage::Ping(Ping { response: resp, id }),
                DhtMessage::NodesRequest(NodesRequest { searched: PublicKey(pk), sendback }),
                DhtMessage::NodesResponse(NodesResponse { nodes: vec![PackedNode::udp("1.2.3.4:5".parse().unwrap(), PublicKey(pk))], sendback }),
            ] {
                let bytes = msg.seal(&a.public, &ka, &Nonce([7; 24]));
                let env = Envelope::parse(&bytes).unwrap();
                prop_assert_eq!(env.sender, a.public);
                prop_assert_eq!(env.open(&kb).unwrap(), msg);
            }
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = Envelope::parse(&bytes);
        }
    }
}
