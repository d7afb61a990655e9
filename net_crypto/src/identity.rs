//! The keys an endpoint holds for all its connections (docs/protocol.md §2.2).

use crate::crypto::{KeyPair, SymmetricKey};

/// Long-term ("real") and DHT key pairs plus the cookie key. Connections borrow it when they
/// build cookie requests and handshakes.
#[derive(Debug)]
pub(crate) struct Identity {
    /// The identity key pair: handshakes are boxed between real keys.
    pub real: KeyPair,
    /// The DHT key pair: cookie requests/responses are boxed between DHT keys.
    pub dht: KeyPair,
    /// Random at startup, never sent: seals every cookie we hand out (docs/protocol.md §2.2).
    pub cookie_key: SymmetricKey,
}
