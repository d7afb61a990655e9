//! Group announces: the extra data of an onion announce request 0x87 and what an announce
//! node returns after the nodes of its 0x88 (c-toxcore 0.2.19+ `group_announce.c`
//! `gca_unpack_public_announce`, `gca_pack_announce`; `group_onion_announce.c`
//! `create_gca_announce_request`, `pack_group_announces`).
//!
//! A peer of a public group announces itself to the nodes closest to the group's chat key:
//!
//! | length  | content                                                              |
//! |---------|----------------------------------------------------------------------|
//! | 32      | chat public key (public announce only)                               |
//! | 32      | the peer's group encryption key                                      |
//! | 1       | `ip_port_is_set` (any non-zero byte is true, `net_unpack_bool`)      |
//! | 1       | `tcp_relays_count`, at most [`GCA_MAX_ANNOUNCED_TCP_RELAYS`]         |
//! | 7 / 19  | the peer's UDP address, packed, if `ip_port_is_set`                  |
//! | 39 / 51 | each TCP relay as a packed node (any family)                         |
//!
//! Bytes after the announce are ignored, as c-toxcore ignores them.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::{Reader, TooShort};

use crate::dht::wire::packed_node::{self, PackedNode, PACKED_NODE_SIZE_V6};
use crate::dht::wire::WireError;

/// `GCA_MAX_ANNOUNCED_TCP_RELAYS`.
pub const GCA_MAX_ANNOUNCED_TCP_RELAYS: usize = 1;
/// `GCA_MAX_SENT_ANNOUNCES`: announces in one 0x88.
pub const GCA_MAX_SENT_ANNOUNCES: usize = 4;
/// `GCA_ANNOUNCE_MAX_SIZE` = 136: `ENC_PUBLIC_KEY_SIZE + 1 + 1 + 2 × PACKED_NODE_SIZE_IP6`.
pub const GCA_ANNOUNCE_MAX_SIZE: usize = PUBLIC_KEY_SIZE + 2 + 2 * PACKED_NODE_SIZE_V6;
/// `GCA_PUBLIC_ANNOUNCE_MAX_SIZE` = 168.
pub const GCA_PUBLIC_ANNOUNCE_MAX_SIZE: usize = PUBLIC_KEY_SIZE + GCA_ANNOUNCE_MAX_SIZE;

/// Why a group announce was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GroupAnnounceError {
    /// The bytes end inside the announce.
    #[error("group announce truncated")]
    Truncated,
    /// More TCP relays than one.
    #[error("{0} TCP relays; at most 1")]
    TooManyRelays(u8),
    /// The peer's address is not packed UDP.
    #[error("group announce address of family {0}")]
    BadAddress(u8),
    /// A relay does not decode as a packed node.
    #[error("bad relay: {0}")]
    Relay(WireError),
    /// Neither an address nor a relay: nobody could reach the peer, and c-toxcore's
    /// `gca_pack_announce` refuses to send it on.
    #[error("announce with neither address nor relay")]
    Unreachable,
}

/// One peer's announce (`GC_Announce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupAnnounce {
    /// The peer's group encryption key.
    pub peer_pk: PublicKey,
    /// Its UDP address, if it gave one.
    pub addr: Option<SocketAddr>,
    /// Its TCP relay, if it gave one.
    pub relay: Option<PackedNode>,
}

/// An announce for a public group (`GC_Public_Announce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicGroupAnnounce {
    /// The group's chat key: the key the announce is stored under.
    pub chat_pk: PublicKey,
    /// The peer.
    pub announce: GroupAnnounce,
}

/// The peer's address (`unpack_ip_port(.., include_tcp = false)`) and the bytes after it.
fn decode_udp_addr(bytes: &[u8]) -> Result<(SocketAddr, &[u8]), GroupAnnounceError> {
    match packed_node::decode_udp_addr(bytes) {
        Ok(v) => Ok(v),
        Err(WireError::BadFamily(f)) => Err(GroupAnnounceError::BadAddress(f)),
        Err(_) => Err(GroupAnnounceError::Truncated),
    }
}

/// An announce that ended early.
fn truncated(_: TooShort) -> GroupAnnounceError {
    GroupAnnounceError::Truncated
}

impl GroupAnnounce {
    /// Reads one announce from the front of `bytes` (`gca_unpack_announce`); returns it and
    /// the bytes after it.
    pub fn decode(bytes: &[u8]) -> Result<(GroupAnnounce, &[u8]), GroupAnnounceError> {
        let mut r = Reader::new(bytes);
        let peer_pk = PublicKey(r.array().map_err(truncated)?);
        let [is_set, relays] = r.array().map_err(truncated)?;
        let mut rest = r.rest();
        if usize::from(relays) > GCA_MAX_ANNOUNCED_TCP_RELAYS {
            return Err(GroupAnnounceError::TooManyRelays(relays));
        }
        let addr = if is_set != 0 {
            let (addr, after) = decode_udp_addr(rest)?;
            rest = after;
            Some(addr)
        } else {
            None
        };
        let relay = if relays == 1 {
            let (node, used) = PackedNode::decode(rest).map_err(GroupAnnounceError::Relay)?;
            rest = rest.get(used..).ok_or(GroupAnnounceError::Truncated)?;
            Some(node)
        } else {
            None
        };
        if addr.is_none() && relay.is_none() {
            return Err(GroupAnnounceError::Unreachable);
        }
        Ok((
            GroupAnnounce {
                peer_pk,
                addr,
                relay,
            },
            rest,
        ))
    }

    /// Appends the packed form (`gca_pack_announce`): at most [`GCA_ANNOUNCE_MAX_SIZE`] bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.peer_pk.as_bytes());
        out.push(u8::from(self.addr.is_some()));
        out.push(u8::from(self.relay.is_some()));
        if let Some(addr) = self.addr {
            packed_node::encode_udp_addr(addr, out);
        }
        if let Some(relay) = &self.relay {
            relay.encode(out);
        }
    }

    /// Bytes [`Self::encode`] appends.
    pub fn packed_len(&self) -> usize {
        let mut v = Vec::with_capacity(GCA_ANNOUNCE_MAX_SIZE);
        self.encode(&mut v);
        v.len()
    }
}

impl PublicGroupAnnounce {
    /// Reads a public announce from the front of `bytes` (`gca_unpack_public_announce`).
    pub fn decode(bytes: &[u8]) -> Result<PublicGroupAnnounce, GroupAnnounceError> {
        let mut r = Reader::new(bytes);
        let chat_pk = PublicKey(r.array().map_err(truncated)?);
        let (announce, _) = GroupAnnounce::decode(r.rest())?;
        Ok(PublicGroupAnnounce { chat_pk, announce })
    }

    /// The packed form (`gca_pack_public_announce`).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(GCA_PUBLIC_ANNOUNCE_MAX_SIZE);
        out.extend_from_slice(self.chat_pk.as_bytes());
        self.announce.encode(&mut out);
        out
    }
}

/// Reads the announces after the nodes of a 0x88 (`gca_unpack_announces_list`), at most
/// [`GCA_MAX_SENT_ANNOUNCES`].
pub fn decode_announces(mut bytes: &[u8]) -> Result<Vec<GroupAnnounce>, GroupAnnounceError> {
    let mut out = Vec::with_capacity(GCA_MAX_SENT_ANNOUNCES);
    while out.len() < GCA_MAX_SENT_ANNOUNCES && !bytes.is_empty() {
        let (a, rest) = GroupAnnounce::decode(bytes)?;
        out.push(a);
        bytes = rest;
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> PublicGroupAnnounce {
        PublicGroupAnnounce {
            chat_pk: PublicKey([7; 32]),
            announce: GroupAnnounce {
                peer_pk: PublicKey([8; 32]),
                addr: Some("192.0.2.4:33445".parse().unwrap()),
                relay: Some(PackedNode {
                    addr: "[2001:db8::1]:443".parse().unwrap(),
                    tcp: true,
                    pk: PublicKey([9; 32]),
                }),
            },
        }
    }

    #[test]
    fn layout_and_round_trip() {
        let a = sample();
        let bytes = a.encode();
        assert_eq!(&bytes[..32], &[7; 32]);
        assert_eq!(&bytes[32..64], &[8; 32]);
        assert_eq!(&bytes[64..66], &[1, 1]);
        assert_eq!(&bytes[66..73], &[2, 192, 0, 2, 4, 0x82, 0xa5]);
        assert_eq!(bytes[73], 138, "the relay is a TCP/IPv6 packed node");
        assert_eq!(bytes.len(), 32 + 34 + 7 + 51);
        assert_eq!(PublicGroupAnnounce::decode(&bytes), Ok(a));
        // Trailing bytes are ignored.
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0xee; 9]);
        assert_eq!(PublicGroupAnnounce::decode(&longer), Ok(a));
        assert_eq!(a.announce.packed_len(), bytes.len() - 32);
        assert!(a.announce.packed_len() <= GCA_ANNOUNCE_MAX_SIZE);
    }

    #[test]
    fn refusals_are_typed() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            assert!(PublicGroupAnnounce::decode(&bytes[..cut]).is_err(), "{cut}");
        }
        let mut two = bytes.clone();
        two[65] = 2;
        assert_eq!(
            PublicGroupAnnounce::decode(&two),
            Err(GroupAnnounceError::TooManyRelays(2))
        );
        let mut tcp_addr = bytes.clone();
        tcp_addr[66] = 130;
        assert_eq!(
            PublicGroupAnnounce::decode(&tcp_addr),
            Err(GroupAnnounceError::BadAddress(130))
        );
        let mut nothing = bytes[..66].to_vec();
        nothing[64] = 0;
        nothing[65] = 0;
        assert_eq!(
            PublicGroupAnnounce::decode(&nothing),
            Err(GroupAnnounceError::Unreachable)
        );
        // Any non-zero byte says the address is set.
        let mut five = bytes.clone();
        five[64] = 5;
        assert_eq!(PublicGroupAnnounce::decode(&five), Ok(sample()));
    }

    #[test]
    fn announce_lists_decode_up_to_four() {
        let mut bytes = Vec::new();
        for _ in 0..5 {
            sample().announce.encode(&mut bytes);
        }
        assert_eq!(decode_announces(&bytes).unwrap().len(), 4);
        assert_eq!(decode_announces(&[]).unwrap().len(), 0);
        assert!(decode_announces(&bytes[..40]).is_err());
    }

    proptest! {
        #[test]
        fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(a) = PublicGroupAnnounce::decode(&bytes) {
                prop_assert_eq!(PublicGroupAnnounce::decode(&a.encode()), Ok(a));
            }
            let _ = decode_announces(&bytes);
        }
    }
}
