//! Why an endpoint dropped a datagram, and how often (docs/design.md principle 5: what is refused
//! is counted, not buffered). Every refusal leaves the session's state as it was.

use std::collections::BTreeMap;

use crate::crypto::LowOrderPublicKey;
use crate::packets::ParseError;

/// Why a datagram was dropped. Field-less so it can be counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, thiserror::Error)]
pub enum DropReason {
    /// Not a net_crypto packet kind: a core routes it to DHT/onion on the same socket.
    #[error("not a net_crypto packet")]
    NotNetCrypto,
    /// Truncated, oversized, or not the layout's size (docs/protocol.md §2.1, §2.2, §2.5).
    #[error("bad length")]
    BadLength,
    /// A cookie response or data packet from an address with no connection.
    #[error("no connection for this address")]
    UnknownConnection,
    /// A packet the connection's state does not expect (e.g. a cookie response after the
    /// handshake, data before the handshake).
    #[error("packet not expected in this state")]
    WrongState,
    /// A box did not open: wrong key, tampered bytes, or a data nonce below the receive base.
    #[error("decryption failed")]
    DecryptionFailed,
    /// A data packet whose nonce was accepted before.
    #[error("replayed nonce")]
    ReplayedNonce,
    /// A data packet whose nonce is older than the anti-replay window.
    #[error("stale nonce")]
    StaleNonce,
    /// A handshake whose cookie we cannot open (not ours, or tampered).
    #[error("bad cookie")]
    BadCookie,
    /// A cookie request or handshake whose sender DHT key, real key or session key is a
    /// point of low order: libsodium's `crypto_box_beforenm` refuses it, so c-toxcore drops
    /// the packet, and a key agreed with it would be one anyone can compute
    /// ([`crate::crypto::LowOrderPublicKey`]).
    #[error("low-order public key")]
    LowOrderPublicKey,
    /// A handshake whose cookie is more than 15 s old or from the future (docs/protocol.md §2.2).
    #[error("stale cookie")]
    StaleCookie,
    /// A cookie response whose echo id is not the one we sent.
    #[error("wrong echo id")]
    WrongEchoId,
    /// A handshake whose cookie names another peer than the connection at that address.
    #[error("handshake from another peer")]
    WrongPeer,
    /// A handshake whose inner SHA-512 does not match its cookie.
    #[error("cookie hash mismatch")]
    CookieHashMismatch,
    /// A handshake to a connection that no longer takes one (NOT_CONFIRMED with another
    /// connection at a different address, or ESTABLISHED; docs/protocol.md §2.3).
    #[error("handshake ignored")]
    HandshakeIgnored,
    /// A handshake from a peer we were not told to accept.
    #[error("peer not allowed")]
    PeerNotAllowed,
    /// The limit of handshakes in progress is reached.
    #[error("too many handshakes in progress")]
    TooManyHandshakes,
    /// The limit of connections is reached.
    #[error("too many connections")]
    TooManyConnections,
    /// More cookie requests or handshakes from one source (UDP address and port, or relayed
    /// peer) than its bucket allows ([`crate::EndpointLimits::source_burst`]).
    #[error("source rate limited")]
    SourceRateLimited,
    /// A cookie request or handshake that would need a key agreement (an X25519) while the
    /// bucket of all sources is empty ([`crate::EndpointLimits::key_agreement_burst`]).
    #[error("key agreement rate limited")]
    KeyAgreementRateLimited,
    /// The queue of stateless cookie responses is full.
    #[error("response queue full")]
    ResponseQueueFull,
    /// A data plaintext that is too short or all padding (docs/protocol.md §2.5).
    #[error("malformed data plaintext")]
    MalformedPlaintext,
    /// Payload id 0, 3–15 or 255 (docs/protocol.md §2.5).
    #[error("invalid packet id")]
    InvalidPacketId,
    /// The peer's buffer_start acknowledges packets we never sent.
    #[error("acknowledgement outside the send window")]
    AckOutsideWindow,
    /// A packet number outside the receive window.
    #[error("packet number outside the window")]
    PacketOutsideWindow,
    /// A lossless packet we already hold or delivered (a spurious resend).
    #[error("duplicate packet")]
    DuplicatePacket,
    /// A request packet that does not decode (docs/protocol.md §2.7).
    #[error("malformed request packet")]
    MalformedRequest,
    /// An out-of-order lossless packet refused because the endpoint's memory budget for send
    /// and receive arrays is full and this session holds its share of it
    /// ([`crate::EndpointLimits::array_memory_budget`]); the peer resends it.
    #[error("memory budget full")]
    MemoryBudget,
    /// A lossy payload arrived while the event queue was full.
    #[error("event queue full")]
    EventQueueFull,
}

/// How many datagrams were dropped, per reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DropCounters {
    counts: BTreeMap<DropReason, u64>,
}

impl DropCounters {
    /// Drops counted for `reason`.
    pub fn get(&self, reason: DropReason) -> u64 {
        self.counts.get(&reason).copied().unwrap_or(0)
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Every reason seen, with its count, in a fixed order.
    pub fn iter(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        self.counts.iter().map(|(r, n)| (*r, *n))
    }

    pub(crate) fn count(&mut self, reason: DropReason) {
        *self.counts.entry(reason).or_insert(0) += 1;
    }
}

/// The endpoint's reason for a fixed layout of the wrong size.
pub(crate) fn length_drop(_: ParseError) -> DropReason {
    DropReason::BadLength
}

/// The endpoint's reason for a peer key of low order.
pub(crate) fn low_order_drop(_: LowOrderPublicKey) -> DropReason {
    DropReason::LowOrderPublicKey
}

/// The endpoint's reason for a box that did not open, or a layout of the wrong size.
pub(crate) fn crypto_drop(e: ParseError) -> DropReason {
    match e {
        ParseError::Crypto(_) => DropReason::DecryptionFailed,
        _ => DropReason::BadLength,
    }
}
