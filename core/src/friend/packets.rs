//! friend_connection's own packets over net_crypto (docs/protocol.md §3.1, §4; c-toxcore 0.2.18
//! `friend_connection.c` `handle_packet`, `send_ping`, `send_relays`).
//!
//! | id | name            | body                                                    |
//! |----|-----------------|---------------------------------------------------------|
//! | 16 | ALIVE           | empty                                                   |
//! | 17 | SHARE_RELAYS    | 0..=3 packed nodes (§5.1), TCP relays (families 130/138) |
//! | 18 | FRIEND_REQUESTS | `[nospam 4][message]` (see `request.rs`)                |
//!
//! All three are lossless and sent without congestion control. Every other lossless id
//! belongs to Messenger, which sees the packet only after friend_connection passes it on.
//!
//! Receipt follows 0.2.18 where it is lenient: ALIVE refreshes the timer whatever follows
//! its id; SHARE_RELAYS reads up to 3 nodes and ignores any bytes after the third
//! (`unpack_nodes` with a maximum), accepts all four address families, and an empty list is
//! valid; FRIEND_REQUESTS goes to `friendreq_handlepacket`'s limits.
// Wire code: the packets come from a friend's session, so no indexing, slicing or
// arithmetic that could panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::dht::wire::packed_node::PackedNode;
use crate::dht::wire::WireError;

pub use super::request::PACKET_ID_FRIEND_REQUESTS;
use super::request::{FriendRequest, RequestError};

/// `PACKET_ID_ALIVE`.
pub const PACKET_ID_ALIVE: u8 = 16;
/// `PACKET_ID_SHARE_RELAYS`.
pub const PACKET_ID_SHARE_RELAYS: u8 = 17;
/// `MAX_SHARED_RELAYS` = `RECOMMENDED_FRIEND_TCP_CONNECTIONS` (`TCP_connection.h`): relays per
/// SHARE_RELAYS packet.
pub const MAX_SHARED_RELAYS: usize = 3;

/// Why a friend_connection packet was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The payload is empty (no id byte).
    #[error("empty packet")]
    Empty,
    /// Not 16, 17 or 18: the packet is for Messenger (or unknown).
    #[error("not a friend_connection packet: id {0}")]
    NotFriendConnection(u8),
    /// The relay list of a SHARE_RELAYS is malformed.
    #[error("bad relay list: {0}")]
    BadRelays(WireError),
    /// More relays than one SHARE_RELAYS may carry (on building).
    #[error("{0} relays exceed the 3 a SHARE_RELAYS carries")]
    TooManyRelays(usize),
    /// The FRIEND_REQUESTS body is malformed.
    #[error("bad friend request: {0}")]
    FriendRequest(RequestError),
}

/// One friend_connection packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FriendConnPacket {
    /// ALIVE (16): the keep-alive whose absence for 32 s kills the connection.
    Alive,
    /// SHARE_RELAYS (17): TCP relays the peer is connected to.
    ShareRelays(Vec<PackedNode>),
    /// FRIEND_REQUESTS (18): a friend request over an existing connection.
    FriendRequest(FriendRequest),
}

impl FriendConnPacket {
    /// The id byte.
    pub fn id(&self) -> u8 {
        match self {
            FriendConnPacket::Alive => PACKET_ID_ALIVE,
            FriendConnPacket::ShareRelays(_) => PACKET_ID_SHARE_RELAYS,
            FriendConnPacket::FriendRequest(_) => PACKET_ID_FRIEND_REQUESTS,
        }
    }

    /// The net_crypto payload, id first.
    pub fn encode(&self) -> Result<Vec<u8>, PacketError> {
        match self {
            FriendConnPacket::Alive => Ok(vec![PACKET_ID_ALIVE]),
            FriendConnPacket::ShareRelays(nodes) => {
                if nodes.len() > MAX_SHARED_RELAYS {
                    return Err(PacketError::TooManyRelays(nodes.len()));
                }
                // At most 3 nodes of at most 51 bytes: the hint cannot saturate.
                let mut out = Vec::with_capacity(
                    nodes
                        .iter()
                        .fold(1usize, |sum, n| sum.saturating_add(n.packed_len())),
                );
                out.push(PACKET_ID_SHARE_RELAYS);
                for node in nodes {
                    node.encode(&mut out);
                }
                Ok(out)
            }
            FriendConnPacket::FriendRequest(req) => Ok(req.encode_net_crypto()),
        }
    }

    /// Parses a payload whose first byte is the id.
    pub fn decode(payload: &[u8]) -> Result<Self, PacketError> {
        let (&id, body) = payload.split_first().ok_or(PacketError::Empty)?;
        Self::decode_body(id, body)
    }

    /// Parses the body after `id`.
    pub fn decode_body(id: u8, body: &[u8]) -> Result<Self, PacketError> {
        match id {
            PACKET_ID_ALIVE => Ok(FriendConnPacket::Alive),
            PACKET_ID_SHARE_RELAYS => decode_nodes_prefix(body, MAX_SHARED_RELAYS)
                .map(FriendConnPacket::ShareRelays)
                .map_err(PacketError::BadRelays),
            PACKET_ID_FRIEND_REQUESTS => FriendRequest::decode_body(body)
                .map(FriendConnPacket::FriendRequest)
                .map_err(PacketError::FriendRequest),
            other => Err(PacketError::NotFriendConnection(other)),
        }
    }
}

/// c-toxcore's `unpack_nodes(nodes, max, …, tcp_enabled = true)` as the DHT-PK and
/// SHARE_RELAYS handlers call it: nodes are read until `max` are read or the bytes run out;
/// bytes after the `max`-th node are ignored; a malformed or truncated node fails the whole
/// list. At most `max` nodes are allocated.
pub fn decode_nodes_prefix(bytes: &[u8], max: usize) -> Result<Vec<PackedNode>, WireError> {
    let mut nodes = Vec::new();
    let mut rest = bytes;
    while nodes.len() < max && !rest.is_empty() {
        let (node, used) = PackedNode::decode(rest)?;
        nodes.push(node);
        rest = rest.get(used..).ok_or(WireError::BadNodeList)?;
    }
    Ok(nodes)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::friend::tox_id::NoSpam;
    use proptest::prelude::*;
    use rustox_net_crypto::crypto::PublicKey;

    fn relay(i: u8) -> PackedNode {
        PackedNode {
            addr: format!("10.0.0.{i}:443").parse().unwrap(),
            tcp: true,
            pk: PublicKey([i; 32]),
        }
    }

    #[test]
    fn alive_is_one_byte_and_ignores_trailing_bytes() {
        assert_eq!(FriendConnPacket::Alive.encode().unwrap(), vec![16]);
        assert_eq!(FriendConnPacket::decode(&[16]), Ok(FriendConnPacket::Alive));
        assert_eq!(
            FriendConnPacket::decode(&[16, 1, 2]),
            Ok(FriendConnPacket::Alive)
        );
    }

    #[test]
    fn share_relays_layout_and_limits() {
        let p = FriendConnPacket::ShareRelays(vec![relay(1), relay(2)]);
        let bytes = p.encode().unwrap();
        assert_eq!(bytes.len(), 1 + 2 * 39);
        assert_eq!(&bytes[..2], &[17, 130]);
        assert_eq!(FriendConnPacket::decode(&bytes), Ok(p));
        assert_eq!(
            FriendConnPacket::ShareRelays(vec![relay(1); 4]).encode(),
            Err(PacketError::TooManyRelays(4))
        );
        assert_eq!(
            FriendConnPacket::decode(&[17]),
            Ok(FriendConnPacket::ShareRelays(vec![]))
        );
        // A fourth node is ignored, as unpack_nodes(max = 3) does.
        let mut four = FriendConnPacket::ShareRelays(vec![relay(1), relay(2), relay(3)])
            .encode()
            .unwrap();
        relay(4).encode(&mut four);
        assert_eq!(
            FriendConnPacket::decode(&four),
            Ok(FriendConnPacket::ShareRelays(vec![
                relay(1),
                relay(2),
                relay(3)
            ]))
        );
        // A truncated node fails the whole list.
        let mut cut = FriendConnPacket::ShareRelays(vec![relay(1)])
            .encode()
            .unwrap();
        cut.pop();
        assert_eq!(
            FriendConnPacket::decode(&cut),
            Err(PacketError::BadRelays(WireError::BadNodeList))
        );
    }

    #[test]
    fn friend_request_and_foreign_ids() {
        let req = FriendRequest::new(NoSpam([1, 2, 3, 4]), b"hey").unwrap();
        let p = FriendConnPacket::FriendRequest(req);
        let bytes = p.encode().unwrap();
        assert_eq!(bytes, b"\x12\x01\x02\x03\x04hey");
        assert_eq!(FriendConnPacket::decode(&bytes), Ok(p));
        assert_eq!(
            FriendConnPacket::decode(&[18, 1, 2, 3, 4]),
            Err(PacketError::FriendRequest(RequestError::Empty))
        );
        assert_eq!(
            FriendConnPacket::decode(&[24]),
            Err(PacketError::NotFriendConnection(24))
        );
        assert_eq!(FriendConnPacket::decode(&[]), Err(PacketError::Empty));
    }

    proptest! {
        #[test]
        fn relays_round_trip(ids in proptest::collection::vec(1u8..=254, 0..=3)) {
            let p = FriendConnPacket::ShareRelays(ids.iter().map(|&i| relay(i)).collect());
            prop_assert_eq!(FriendConnPacket::decode(&p.encode().unwrap()), Ok(p));
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1200)) {
            if let Ok(p) = FriendConnPacket::decode(&bytes) {
                // What parsed re-encodes to something that parses to the same packet.
                let again = p.encode().unwrap();
                prop_assert_eq!(FriendConnPacket::decode(&again), Ok(p));
            }
        }
    }
}
