//! The packed node format (docs/protocol.md §5.1, c-toxcore `pack_ip_port` / `pack_nodes`).
//!
//! | length | content                                                    |
//! |--------|------------------------------------------------------------|
//! | 1      | ip_type: 2 UDP/IPv4, 10 UDP/IPv6, 130 TCP/IPv4, 138 TCP/IPv6 |
//! | 4 / 16 | IPv4 / IPv6 address, network byte order                    |
//! | 2      | port, big-endian                                           |
//! | 32     | public key                                                 |
//!
//! 39 bytes for IPv4, 51 for IPv6. Nodes are concatenated without a separator or count.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::{Reader, TooShort};

use super::WireError;

/// `TOX_AF_INET` (`network.h`): UDP over IPv4.
pub const FAMILY_UDP_V4: u8 = 2;
/// `TOX_AF_INET6`: UDP over IPv6.
pub const FAMILY_UDP_V6: u8 = 10;
/// `TOX_TCP_INET` (bit 7 set = TCP).
pub const FAMILY_TCP_V4: u8 = 130;
/// `TOX_TCP_INET6`.
pub const FAMILY_TCP_V6: u8 = 138;
/// Packed size of an IPv4 node (`PACKED_NODE_SIZE_IP4`).
pub const PACKED_NODE_SIZE_V4: usize = 1 + 4 + 2 + PUBLIC_KEY_SIZE;
/// Packed size of an IPv6 node (`PACKED_NODE_SIZE_IP6`).
pub const PACKED_NODE_SIZE_V6: usize = 1 + 16 + 2 + PUBLIC_KEY_SIZE;

/// `pack_ip_port` of a UDP address: family 2 and 4 bytes or family 10 and 16, then the port
/// big-endian (7 or 19 bytes). IPv4-mapped addresses are packed as IPv4.
pub fn encode_udp_addr(addr: SocketAddr, out: &mut Vec<u8>) {
    let addr = canonical(addr);
    match addr.ip() {
        IpAddr::V4(ip) => {
            out.push(FAMILY_UDP_V4);
            out.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            out.push(FAMILY_UDP_V6);
            out.extend_from_slice(&ip.octets());
        }
    }
    out.extend_from_slice(&addr.port().to_be_bytes());
}

/// `unpack_ip_port(.., include_tcp = false)`: a UDP address from the front of `bytes`, and
/// the bytes after it. A TCP or unknown family is [`WireError::BadFamily`].
pub fn decode_udp_addr(bytes: &[u8]) -> Result<(SocketAddr, &[u8]), WireError> {
    let mut r = Reader::new(bytes);
    let ip = match r.u8().map_err(short)? {
        FAMILY_UDP_V4 => IpAddr::V4(Ipv4Addr::from(r.array::<4>().map_err(short)?)),
        FAMILY_UDP_V6 => IpAddr::V6(Ipv6Addr::from(r.array::<16>().map_err(short)?)),
        other => return Err(WireError::BadFamily(other)),
    };
    let port = r.u16_be().map_err(short)?;
    Ok((canonical(SocketAddr::new(ip, port)), r.rest()))
}

/// One node as it travels in send-nodes, DHT-PK and save data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PackedNode {
    /// Address and port. IPv4-mapped IPv6 addresses are packed as IPv4 (c-toxcore converts
    /// them on receipt, `network.c`), so the canonical form is what goes on the wire.
    pub addr: SocketAddr,
    /// True for a TCP relay address (families 130 / 138).
    pub tcp: bool,
    /// The node's DHT public key.
    pub pk: PublicKey,
}

impl PackedNode {
    /// A UDP node.
    pub fn udp(addr: SocketAddr, pk: PublicKey) -> Self {
        PackedNode {
            addr: canonical(addr),
            tcp: false,
            pk,
        }
    }

    /// Bytes this node takes when packed.
    pub fn packed_len(&self) -> usize {
        match canonical(self.addr) {
            SocketAddr::V4(_) => PACKED_NODE_SIZE_V4,
            SocketAddr::V6(_) => PACKED_NODE_SIZE_V6,
        }
    }

    /// Appends the packed form to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let addr = canonical(self.addr);
        let tcp_bit = if self.tcp { 0x80 } else { 0 };
        match addr.ip() {
            IpAddr::V4(ip) => {
                out.push(FAMILY_UDP_V4 | tcp_bit);
                out.extend_from_slice(&ip.octets());
            }
            IpAddr::V6(ip) => {
                out.push(FAMILY_UDP_V6 | tcp_bit);
                out.extend_from_slice(&ip.octets());
            }
        }
        out.extend_from_slice(&addr.port().to_be_bytes());
        out.extend_from_slice(self.pk.as_bytes());
    }

    /// Reads one node from the front of `bytes`; returns it and the bytes it used.
    pub fn decode(bytes: &[u8]) -> Result<(PackedNode, usize), WireError> {
        let mut r = Reader::new(bytes);
        let (tcp, v6) = match r.u8().map_err(short)? {
            FAMILY_UDP_V4 => (false, false),
            FAMILY_UDP_V6 => (false, true),
            FAMILY_TCP_V4 => (true, false),
            FAMILY_TCP_V6 => (true, true),
            other => return Err(WireError::BadFamily(other)),
        };
        let (ip, size) = if v6 {
            let octets = r.array::<16>().map_err(short)?;
            (IpAddr::V6(Ipv6Addr::from(octets)), PACKED_NODE_SIZE_V6)
        } else {
            let octets = r.array::<4>().map_err(short)?;
            (IpAddr::V4(Ipv4Addr::from(octets)), PACKED_NODE_SIZE_V4)
        };
        let port = r.u16_be().map_err(short)?;
        let pk = PublicKey(r.array().map_err(short)?);
        Ok((
            PackedNode {
                addr: canonical(SocketAddr::new(ip, port)),
                tcp,
                pk,
            },
            size,
        ))
    }
}

/// Reads exactly `count` nodes that must fill `bytes` exactly (c-toxcore `unpack_nodes`
/// followed by the `length_nodes != data_size` and `num_nodes != plain[0]` checks in
/// `handle_sendnodes_core`). `max` bounds the result before anything is allocated.
pub fn decode_nodes(bytes: &[u8], count: u8, max: usize) -> Result<Vec<PackedNode>, WireError> {
    if usize::from(count) > max {
        return Err(WireError::TooManyNodes(count));
    }
    let mut nodes = Vec::with_capacity(usize::from(count));
    let mut rest = bytes;
    for _ in 0..count {
        let (node, used) = PackedNode::decode(rest)?;
        nodes.push(node);
        rest = rest.get(used..).ok_or(WireError::BadNodeList)?;
    }
    if !rest.is_empty() {
        return Err(WireError::BadNodeList);
    }
    Ok(nodes)
}

/// An IPv4-mapped IPv6 address becomes plain IPv4, as c-toxcore does on receipt.
pub fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), v6.port()),
            None => addr,
        },
        v4 => v4,
    }
}

/// A node or address that ended early.
fn short(_: TooShort) -> WireError {
    WireError::BadNodeList
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ipv4_node_byte_table() {
        let node = PackedNode::udp("1.2.3.4:33445".parse().unwrap(), PublicKey([7; 32]));
        let mut out = Vec::new();
        node.encode(&mut out);
        let mut expected = vec![2, 1, 2, 3, 4, 0x82, 0xa5];
        expected.extend_from_slice(&[7; 32]);
        assert_eq!(out, expected);
        assert_eq!(out.len(), PACKED_NODE_SIZE_V4);
    }

    #[test]
    fn ipv6_tcp_node_byte_table() {
        let node = PackedNode {
            addr: "[2001:db8::1]:443".parse().unwrap(),
            tcp: true,
            pk: PublicKey([9; 32]),
        };
        let mut out = Vec::new();
        node.encode(&mut out);
        assert_eq!(out[0], 138);
        assert_eq!(
            &out[1..17],
            &"2001:db8::1".parse::<Ipv6Addr>().unwrap().octets()
        );
        assert_eq!(&out[17..19], &[0x01, 0xbb]);
        assert_eq!(out.len(), PACKED_NODE_SIZE_V6);
    }

    #[test]
    fn mapped_ipv6_packs_as_ipv4() {
        let node = PackedNode::udp("[::ffff:10.0.0.1]:5".parse().unwrap(), PublicKey([0; 32]));
        assert_eq!(node.addr, "10.0.0.1:5".parse::<SocketAddr>().unwrap());
        assert_eq!(node.packed_len(), PACKED_NODE_SIZE_V4);
    }

    #[test]
    fn rejects_bad_family_truncation_and_count_mismatch() {
        let node = PackedNode::udp("1.2.3.4:1".parse().unwrap(), PublicKey([1; 32]));
        let mut out = Vec::new();
        node.encode(&mut out);
        assert_eq!(decode_nodes(&out[..38], 1, 4), Err(WireError::BadNodeList));
        assert_eq!(decode_nodes(&out, 2, 4), Err(WireError::BadNodeList));
        assert_eq!(decode_nodes(&out, 0, 4), Err(WireError::BadNodeList));
        assert_eq!(decode_nodes(&out, 5, 4), Err(WireError::TooManyNodes(5)));
        out[0] = 3;
        assert_eq!(decode_nodes(&out, 1, 4), Err(WireError::BadFamily(3)));
    }

    fn arb_node() -> impl Strategy<Value = PackedNode> {
        (
            any::<bool>(),
            any::<[u8; 4]>(),
            any::<[u8; 16]>(),
            any::<u16>(),
            any::<bool>(),
            any::<[u8; 32]>(),
        )
            .prop_map(|(v4, a4, a6, port, tcp, pk)| {
                let ip = if v4 {
                    IpAddr::V4(Ipv4Addr::from(a4))
                } else {
                    IpAddr::V6(Ipv6Addr::from(a6))
                };
                PackedNode {
                    addr: canonical(SocketAddr::new(ip, port)),
                    tcp,
                    pk: PublicKey(pk),
                }
            })
    }

    proptest! {
        #[test]
        fn node_lists_round_trip(nodes in proptest::collection::vec(arb_node(), 0..=4)) {
            let mut out = Vec::new();
            for n in &nodes { n.encode(&mut out); }
            let back = decode_nodes(&out, nodes.len() as u8, 4).unwrap();
            prop_assert_eq!(back, nodes);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300), count in any::<u8>()) {
            let _ = decode_nodes(&bytes, count, 4);
        }
    }
}
