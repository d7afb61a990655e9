//! Wire layouts of the net_crypto packets (docs/protocol.md §2.1, §2.2, §2.5), one file per layout.
//!
//! Each parser checks the exact size before touching a byte, returns a typed [`ParseError`]
//! and never panics; each encoder produces exactly the bytes its parser accepts. Boxed parts
//! are opened with the key the caller holds (`open`), and built with `seal`, so a packet
//! struct is always the wire form and its plaintext is a separate struct.
// Wire code: every length and offset comes from the network, so no indexing, slicing or
// arithmetic that could panic or wrap (the crate's other code is not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod cookie;
mod cookie_request;
mod cookie_response;
mod data;
mod error;
mod handshake;
mod packet_id;

pub use cookie::{
    Cookie, EncryptedCookie, COOKIE_PLAINTEXT_SIZE, COOKIE_SIZE, COOKIE_TIMEOUT_SECS,
};
pub use cookie_request::{
    CookieRequest, CookieRequestPayload, COOKIE_REQUEST_PLAINTEXT_SIZE, COOKIE_REQUEST_SIZE,
};
pub use cookie_response::{
    CookieResponse, CookieResponsePayload, COOKIE_RESPONSE_PLAINTEXT_SIZE, COOKIE_RESPONSE_SIZE,
};
pub use data::{
    padding_len, seal_data_into, DataPacket, DataPacketRef, DataPlaintext, DataPlaintextRef,
    DATA_HEADER_SIZE, MAX_CRYPTO_DATA_SIZE, MIN_DATA_PACKET_SIZE,
};
pub use error::ParseError;
pub use handshake::{Handshake, HandshakePayload, HANDSHAKE_PLAINTEXT_SIZE, HANDSHAKE_SIZE};
pub use packet_id::{PayloadKind, PACKET_ID_KILL, PACKET_ID_REQUEST};

/// `MAX_CRYPTO_PACKET_SIZE` (`net_crypto.h`, docs/protocol.md §2.1): the largest net_crypto datagram.
pub const MAX_CRYPTO_PACKET_SIZE: usize = 1400;

/// The first byte of a datagram, for the four net_crypto kinds (docs/protocol.md §2.1,
/// `toxcore/network.h`). Every other first byte belongs to another layer (DHT, onion, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// `NET_PACKET_COOKIE_REQUEST`, 0x18.
    CookieRequest = 0x18,
    /// `NET_PACKET_COOKIE_RESPONSE`, 0x19.
    CookieResponse = 0x19,
    /// `NET_PACKET_CRYPTO_HS`, 0x1a.
    Handshake = 0x1a,
    /// `NET_PACKET_CRYPTO_DATA`, 0x1b.
    Data = 0x1b,
}

impl PacketKind {
    /// The net_crypto kind of a datagram, or `None` when its first byte (or its absence) says
    /// it belongs to another layer.
    pub fn of(datagram: &[u8]) -> Option<Self> {
        match datagram.first()? {
            0x18 => Some(PacketKind::CookieRequest),
            0x19 => Some(PacketKind::CookieResponse),
            0x1a => Some(PacketKind::Handshake),
            0x1b => Some(PacketKind::Data),
            _ => None,
        }
    }
}

/// Checks the kind byte and the exact size of a fixed-size packet.
fn expect_fixed(bytes: &[u8], kind: PacketKind, size: usize) -> Result<(), ParseError> {
    if bytes.len() != size {
        return Err(ParseError::WrongLength {
            expected: size,
            actual: bytes.len(),
        });
    }
    match bytes.first() {
        Some(&b) if b == kind as u8 => Ok(()),
        Some(&b) => Err(ParseError::WrongKind(b)),
        None => Err(ParseError::WrongLength {
            expected: size,
            actual: 0,
        }),
    }
}
