//! DHT wire formats (docs/protocol.md §5), one module per packet family.
//!
//! Every parser takes untrusted bytes and returns a typed [`WireError`]; none panics, none
//! trusts a length or count field, and none allocates more than the fixed maximum of its
//! packet (the largest is the 1024-byte DHT request, §5.5).
// Wire code: every length and count comes from the network, so no indexing, slicing or
// arithmetic that could panic or wrap (the rest of the DHT is not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use rustox_net_crypto::crypto::{Nonce, PublicKey};
use rustox_net_crypto::wire::Reader;

pub mod bootstrap_info;
pub mod crypto_request;
pub mod dht_packet;
pub mod lan_discovery;
pub mod nodes;
pub mod packed_node;
pub mod ping;

/// First byte of each DHT-family UDP datagram (docs/protocol.md §2.1, `toxcore/network.h`).
pub mod kind {
    /// Ping request (§5.2).
    pub const PING_REQUEST: u8 = 0x00;
    /// Ping response (§5.2).
    pub const PING_RESPONSE: u8 = 0x01;
    /// Get-nodes request (`NET_PACKET_GET_NODES`, §5.2).
    pub const NODES_REQUEST: u8 = 0x02;
    /// Send-nodes response (`NET_PACKET_SEND_NODES_IPV6`, §5.2).
    pub const NODES_RESPONSE: u8 = 0x04;
    /// DHT request routed to a node's close neighbours (`NET_PACKET_CRYPTO`, §5.5).
    pub const CRYPTO_REQUEST: u8 = 0x20;
    /// LAN discovery (§5.7).
    pub const LAN_DISCOVERY: u8 = 0x21;
    /// Bootstrap-node info (§5.8).
    pub const BOOTSTRAP_INFO: u8 = 0xf0;
}

/// Why a DHT datagram was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The datagram is shorter or longer than its kind allows.
    #[error("bad length {len} for packet kind {kind:#04x}")]
    BadLength {
        /// The packet kind byte.
        kind: u8,
        /// The datagram's length.
        len: usize,
    },
    /// The first byte is not a kind this module decodes.
    #[error("unknown packet kind {0:#04x}")]
    UnknownKind(u8),
    /// A packed node has an address family byte other than 2, 10, 130, 138.
    #[error("unknown address family {0}")]
    BadFamily(u8),
    /// A packed node list ended inside a node, or the count does not match the bytes.
    #[error("truncated or inconsistent node list")]
    BadNodeList,
    /// More nodes than the packet may carry.
    #[error("too many nodes: {0}")]
    TooManyNodes(u8),
    /// The encrypted payload did not open with our key.
    #[error("decryption failed")]
    Decrypt,
    /// The decrypted payload does not have the layout of its kind.
    #[error("malformed payload")]
    BadPayload,
}

/// The `[sender public key][nonce][box]` that every boxed DHT packet carries after its kind
/// byte (and a 0x20 request after the receiver's key too), §5.2 and §5.5.
fn read_sender_nonce_box(mut r: Reader<'_>) -> Result<(PublicKey, Nonce, &[u8]), WireError> {
    let sender = PublicKey(r.array().map_err(|_| WireError::BadPayload)?);
    let nonce = Nonce(r.array().map_err(|_| WireError::BadPayload)?);
    Ok((sender, nonce, r.rest()))
}
