//! Which layer a datagram belongs to, by its first byte (docs/protocol.md §2.1,
//! `toxcore/network.h`). One UDP port carries every layer, as in c-toxcore.

/// The layer that handles a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Ping, get/send nodes, DHT request, LAN discovery, bootstrap info (§5).
    Dht,
    /// Cookie request/response, handshake, data (§2).
    NetCrypto,
    /// Onion layers and their responses, relayed for others (0x80–0x82, 0x8c–0x8e, §6.2),
    /// and the payloads that reach the announce node (0x83, 0x85, 0x87, §6.3).
    OnionServer,
    /// Onion responses for us: announce response 0x84 and data response 0x86 (§6.3).
    OnionClient,
    /// Forwarding 0x90–0x92 and DHT announcement requests 0x93, 0x95, 0x97, served for
    /// others (c-toxcore 0.2.18 `forwarding.c`, `announce.c`).
    Announce,
    /// Anything else: dropped and counted.
    Unknown,
}

/// The layer of a datagram.
pub fn layer_of(datagram: &[u8]) -> Layer {
    match datagram.first() {
        Some(0x00 | 0x01 | 0x02 | 0x04 | 0x20 | 0x21 | 0xf0) => Layer::Dht,
        Some(0x18..=0x1b) => Layer::NetCrypto,
        Some(0x80..=0x83 | 0x85 | 0x87 | 0x8c..=0x8e) => Layer::OnionServer,
        Some(0x84 | 0x86) => Layer::OnionClient,
        Some(0x90..=0x93 | 0x95 | 0x97) => Layer::Announce,
        _ => Layer::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_first_byte_has_one_layer() {
        let count = |l: Layer| (0..=255u8).filter(|&b| layer_of(&[b]) == l).count();
        assert_eq!(count(Layer::Dht), 7);
        assert_eq!(count(Layer::NetCrypto), 4);
        assert_eq!(count(Layer::OnionServer), 9);
        assert_eq!(count(Layer::OnionClient), 2);
        assert_eq!(count(Layer::Announce), 6);
        assert_eq!(layer_of(&[]), Layer::Unknown);
    }
}
