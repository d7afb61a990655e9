//! Get-nodes request and send-nodes response payloads (docs/protocol.md §5.2).
//!
//! Get-nodes (kind 0x02) plaintext, whole datagram exactly 113 bytes:
//!
//! | length | content                         |
//! |--------|---------------------------------|
//! | 32     | searched public key             |
//! | 8      | sendback (opaque, echoed back)  |
//!
//! Send-nodes (kind 0x04) plaintext, whole datagram 82 + packed nodes bytes:
//!
//! | length   | content                              |
//! |----------|--------------------------------------|
//! | 1        | count, at most 4 (`MAX_SENT_NODES`)  |
//! | variable | `count` packed nodes (§5.1), exactly |
//! | 8        | sendback of the request              |

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::Reader;

use super::packed_node::{decode_nodes, PackedNode, PACKED_NODE_SIZE_V6};
use super::WireError;

/// `MAX_SENT_NODES` (DHT.h): the most nodes one send-nodes carries.
pub const MAX_SENT_NODES: usize = 4;
/// Whole get-nodes datagram: 1 + 32 + 24 + 16 + 32 + 8 (c-toxcore requires this exact size).
pub const NODES_REQUEST_PACKET_SIZE: usize = 113;
/// Smallest send-nodes datagram (no nodes): 1 + 32 + 24 + 16 + 1 + 8.
pub const NODES_RESPONSE_MIN_SIZE: usize = 82;
/// Largest send-nodes datagram: four IPv6 nodes.
pub const NODES_RESPONSE_MAX_SIZE: usize =
    NODES_RESPONSE_MIN_SIZE + MAX_SENT_NODES * PACKED_NODE_SIZE_V6;

/// A get-nodes request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodesRequest {
    /// The key whose closest nodes are wanted.
    pub searched: PublicKey,
    /// Opaque value the response must echo.
    pub sendback: u64,
}

impl NodesRequest {
    /// The 40-byte plaintext.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PUBLIC_KEY_SIZE + 8);
        out.extend_from_slice(self.searched.as_bytes());
        out.extend_from_slice(&self.sendback.to_be_bytes());
        out
    }

    /// Parses the plaintext (exactly 40 bytes).
    pub fn decode(plain: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(plain);
        let searched = PublicKey(r.array().map_err(|_| WireError::BadPayload)?);
        let sendback = r.u64_be().map_err(|_| WireError::BadPayload)?;
        r.expect_end().map_err(|_| WireError::BadPayload)?;
        Ok(NodesRequest { searched, sendback })
    }
}

/// A send-nodes response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodesResponse {
    /// Up to four nodes.
    pub nodes: Vec<PackedNode>,
    /// The request's sendback.
    pub sendback: u64,
}

impl NodesResponse {
    /// The plaintext. Nodes beyond the fourth are not sent.
    pub fn encode(&self) -> Vec<u8> {
        let nodes = self.nodes.get(..MAX_SENT_NODES).unwrap_or(&self.nodes);
        // At most 4 nodes: the capacity is at most 213 bytes.
        let mut out = Vec::with_capacity(
            nodes
                .len()
                .saturating_mul(PACKED_NODE_SIZE_V6)
                .saturating_add(1 + 8),
        );
        out.push(nodes.len() as u8);
        for n in nodes {
            n.encode(&mut out);
        }
        out.extend_from_slice(&self.sendback.to_be_bytes());
        out
    }

    /// Parses the plaintext; the count must match the node bytes exactly, and only UDP
    /// families are accepted here (docs/protocol.md §5.1).
    pub fn decode(plain: &[u8]) -> Result<Self, WireError> {
        let (&count, rest) = plain.split_first().ok_or(WireError::BadPayload)?;
        let (node_bytes, sendback) = rest.split_last_chunk::<8>().ok_or(WireError::BadPayload)?;
        let nodes = decode_nodes(node_bytes, count, MAX_SENT_NODES)?;
        if nodes.iter().any(|n| n.tcp) {
            return Err(WireError::BadPayload);
        }
        Ok(NodesResponse {
            nodes,
            sendback: u64::from_be_bytes(*sendback),
        })
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::SocketAddr;

    #[test]
    fn request_byte_table() {
        let r = NodesRequest {
            searched: PublicKey([0xaa; 32]),
            sendback: 0x0102030405060708,
        };
        let p = r.encode();
        assert_eq!(&p[..32], &[0xaa; 32]);
        assert_eq!(&p[32..], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(NodesRequest::decode(&p), Ok(r));
        assert_eq!(NodesRequest::decode(&p[..39]), Err(WireError::BadPayload));
    }

    #[test]
    fn response_rejects_tcp_nodes_and_bad_counts() {
        let mut node = PackedNode::udp("1.1.1.1:1".parse().unwrap(), PublicKey([1; 32]));
        let ok = NodesResponse {
            nodes: vec![node],
            sendback: 9,
        };
        let mut p = ok.encode();
        assert_eq!(p.len(), 1 + 39 + 8);
        assert_eq!(NodesResponse::decode(&p), Ok(ok));
        p[0] = 2;
        assert!(NodesResponse::decode(&p).is_err());
        node.tcp = true;
        let tcp = NodesResponse {
            nodes: vec![node],
            sendback: 9,
        };
        assert_eq!(
            NodesResponse::decode(&tcp.encode()),
            Err(WireError::BadPayload)
        );
    }

    proptest! {
        #[test]
        fn response_round_trip(
            addrs in proptest::collection::vec((any::<[u8; 16]>(), any::<u16>(), any::<[u8; 32]>(), any::<bool>()), 0..=4),
            sendback in any::<u64>(),
        ) {
            let nodes: Vec<PackedNode> = addrs.into_iter().map(|(ip, port, pk, v4)| {
                let addr: SocketAddr = if v4 {
                    SocketAddr::new(std::net::Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]).into(), port)
                } else {
                    SocketAddr::new(std::net::Ipv6Addr::from(ip).into(), port)
                };
                PackedNode::udp(addr, PublicKey(pk))
            }).collect();
            let r = NodesResponse { nodes, sendback };
            prop_assert_eq!(NodesResponse::decode(&r.encode()), Ok(r));
        }

        #[test]
        fn response_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..260)) {
            let _ = NodesResponse::decode(&bytes);
        }
    }
}
