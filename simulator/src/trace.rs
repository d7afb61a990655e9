//! A running hash of everything that crossed the simulated network.
//!
//! Two runs with the same seed must produce the same hash; a determinism test compares them.
//! FNV-1a (64-bit, word-wise) is enough: this guards against accidental nondeterminism (a HashMap
//! iteration order, a wall-clock read), not against an adversary, and it is stable across
//! Rust releases unlike `DefaultHasher`.

use std::net::SocketAddr;

use rustox_net_crypto::Timestamp;

/// FNV-1a offset basis (Fowler–Noll–Vo, 64-bit parameters).
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a prime (64-bit parameters).
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// What happened to a datagram, as recorded in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceEvent {
    /// Handed to the destination node.
    Delivered = 1,
    /// Dropped by a link (loss, queue overflow, outage) or unroutable.
    Dropped = 2,
}

/// The trace hash and a count of the events folded into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceHash {
    hash: u64,
    events: u64,
}

impl Default for TraceHash {
    fn default() -> Self {
        TraceHash {
            hash: FNV_OFFSET,
            events: 0,
        }
    }
}

impl TraceHash {
    /// Fold one datagram event into the hash.
    pub fn record(
        &mut self,
        event: TraceEvent,
        at: Timestamp,
        from: SocketAddr,
        to: SocketAddr,
        bytes: &[u8],
    ) {
        self.write(&[event as u8]);
        self.write(&at.as_micros().to_le_bytes());
        self.write_addr(from);
        self.write_addr(to);
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
        self.events += 1;
    }

    fn write_addr(&mut self, addr: SocketAddr) {
        match addr {
            SocketAddr::V4(a) => self.write(&a.ip().octets()),
            SocketAddr::V6(a) => self.write(&a.ip().octets()),
        }
        self.write(&addr.port().to_le_bytes());
    }

    /// FNV-1a over 8-byte little-endian words (the tail byte by byte): the same mixing as
    /// byte-wise FNV-1a at an eighth of the multiplications, as this runs on every datagram.
    fn write(&mut self, data: &[u8]) {
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.hash ^= u64::from_le_bytes(word);
            self.hash = self.hash.wrapping_mul(FNV_PRIME);
        }
        for &b in words.remainder() {
            self.hash ^= u64::from(b);
            self.hash = self.hash.wrapping_mul(FNV_PRIME);
        }
    }

    /// The hash so far.
    pub fn value(&self) -> u64 {
        self.hash
    }

    /// How many datagram events were recorded.
    pub fn events(&self) -> u64 {
        self.events
    }
}
