//! Demultiplexing: every datagram, from a UDP address or through a TCP relay, goes by its
//! kind to the cookie service, the handshake checks, or the connection its source names
//! (docs/protocol.md §2.2–§2.3). A refused one is counted by its [`DropReason`].

use std::net::SocketAddr;

use super::state::{live_connection, Endpoint};
use crate::crypto::PublicKey;
use crate::drop_reason::{length_drop, DropReason};
use crate::packets::{CookieResponse, DataPacketRef, PacketKind, MAX_CRYPTO_PACKET_SIZE};
use crate::path::Destination;
use crate::Timestamp;

impl Endpoint {
    /// One received datagram. A refused one is counted and its reason returned; nothing
    /// changes. [`DropReason::NotNetCrypto`] means the datagram belongs to another layer.
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        self.handle_from(now, Destination::Udp(from), datagram)
    }

    /// One datagram a TCP relay delivered from the peer with this DHT key (over a route or
    /// out-of-band, docs/protocol.md §7). Answers and data for it go back through the relays.
    pub fn handle_relayed(
        &mut self,
        now: Timestamp,
        peer_dht_pk: PublicKey,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        self.handle_from(now, Destination::Relay(peer_dht_pk), datagram)
    }

    fn handle_from(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let result = self.route(now, from, datagram);
        if let Err(reason) = result {
            self.drops.count(reason);
        }
        result
    }

    fn route(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let kind = PacketKind::of(datagram).ok_or(DropReason::NotNetCrypto)?;
        if datagram.len() > MAX_CRYPTO_PACKET_SIZE {
            return Err(DropReason::BadLength);
        }
        match kind {
            PacketKind::CookieRequest => self.answer_cookie_request(now, from, datagram),
            PacketKind::CookieResponse => {
                let response = CookieResponse::parse(datagram).map_err(length_drop)?;
                let id = self.live_by_source(&from);
                let conn = live_connection(&mut self.connections, id)?;
                conn.handle_cookie_response(now, &response, &self.identity, self.rng.as_mut())?;
                conn.heard(now, from);
                Ok(())
            }
            PacketKind::Handshake => self.handle_handshake(now, from, datagram),
            PacketKind::Data => {
                let packet = DataPacketRef::parse(datagram).map_err(length_drop)?;
                let id = self.live_by_source(&from);
                let conn = live_connection(&mut self.connections, id)?;
                conn.handle_data(now, &packet, &mut self.open_scratch)?;
                conn.heard(now, from);
                Ok(())
            }
        }
    }
}
