//! What a connection's packets do (docs/protocol.md §7): routing requests and the routes they
//! make, relayed data, OOB, onion requests and forward requests (0.2.18
//! `handle_TCP_packet`).

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::routes::Link;
use super::{
    sendback_address, CloseReason, ConnId, ForwardRequest, OnionRequest, RelayDrop, RelayServer,
    Sent,
};
use crate::relay::outbuf::FrameClass;
use crate::relay::wire::packet::NUM_RESERVED_PORTS;
use crate::relay::wire::Packet;

impl RelayServer {
    /// One frame's plaintext from `conn`; `Err` closes the connection.
    pub(super) fn handle_plaintext(
        &mut self,
        now: Timestamp,
        conn: ConnId,
        plain: &[u8],
    ) -> Result<(), CloseReason> {
        let packet = Packet::parse(plain).map_err(|_| CloseReason::BadPacket)?;
        let c = self.conns.get_mut(&conn).ok_or(CloseReason::BadPacket)?;
        let session = c.session.as_mut().ok_or(CloseReason::BadPacket)?;
        let own_pk = session.pk;
        if !session.confirmed {
            session.confirmed = true;
            c.last_pinged = now;
            c.ping_id = 0;
            self.handshaking -= 1;
            self.stats.confirmed += 1;
            // c-toxcore `add_accepted`: an older connection with the same key is killed.
            if let Some(old) = self.by_pk.insert(own_pk, conn) {
                self.close(old, CloseReason::Replaced);
            }
            self.reschedule(conn);
        }
        let overflow = |sent: Sent| match sent {
            Sent::Overflow => Err(CloseReason::SlowReader),
            _ => Ok(()),
        };
        match packet {
            Packet::RoutingRequest { pk } => self.route_request(conn, own_pk, pk),
            Packet::ConnectNotification { .. } => Ok(()),
            Packet::DisconnectNotification { conn_id } => {
                let slot = conn_id.wrapping_sub(NUM_RESERVED_PORTS);
                self.remove_route(conn, slot)
            }
            Packet::Ping { ping_id } => {
                overflow(self.send(conn, &Packet::Pong { ping_id }, FrameClass::Control))
            }
            Packet::Pong { ping_id: 0 } => Err(CloseReason::BadPacket),
            Packet::Pong { ping_id } => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    if c.ping_id == ping_id {
                        c.ping_id = 0;
                        self.reschedule(conn);
                    }
                }
                Ok(())
            }
            Packet::OobSend { dest, data } => {
                match self.by_pk.get(&dest).copied() {
                    Some(to) => {
                        let out = Packet::OobRecv {
                            sender: own_pk,
                            data,
                        };
                        if self.send(to, &out, FrameClass::Data) == Sent::Queued {
                            self.stats.oob_forwarded += 1;
                        }
                    }
                    None => self.drop(RelayDrop::OobUnknownDestination),
                }
                Ok(())
            }
            Packet::OnionRequest { nonce, plain } => {
                if self.onion.len() >= self.config.onion_queue {
                    self.drop(RelayDrop::OnionQueueFull);
                } else if let Some(c) = self.conns.get(&conn) {
                    self.onion.push_back(OnionRequest {
                        conn,
                        client: c.addr,
                        source: sendback_address(conn, c.serial),
                        nonce,
                        plain: plain.to_vec(),
                    });
                    self.stats.onion_requests += 1;
                }
                Ok(())
            }
            Packet::ForwardRequest { dest, data } => {
                let con = u32::try_from(conn.0).ok();
                if self.forwards.len() >= self.config.onion_queue {
                    self.drop(RelayDrop::ForwardQueueFull);
                } else if let (Some(c), Some(con)) = (self.conns.get(&conn), con) {
                    self.forwards.push_back(ForwardRequest {
                        client: c.addr,
                        con,
                        serial: c.serial,
                        dest,
                        data: data.to_vec(),
                    });
                    self.stats.forward_requests += 1;
                }
                Ok(())
            }
            Packet::Data { conn_id, payload } => self.forward_data(conn, conn_id, payload),
            // Server-to-client packets sent to the server: c-toxcore closes the connection.
            Packet::RoutingResponse { .. }
            | Packet::OobRecv { .. }
            | Packet::OnionResponse { .. }
            | Packet::Forwarding { .. } => Err(CloseReason::BadPacket),
        }
    }

    /// Packet 0 (`handle_TCP_routing_req`).
    pub(super) fn route_request(
        &mut self,
        conn: ConnId,
        own_pk: PublicKey,
        pk: PublicKey,
    ) -> Result<(), CloseReason> {
        let c = self.conns.get(&conn).ok_or(CloseReason::BadPacket)?;
        let existing = c.routes.find(&pk);
        let slot = if pk == own_pk {
            None
        } else {
            existing.or_else(|| c.routes.first_free())
        };
        let conn_id = slot.map_or(0, |s| s + NUM_RESERVED_PORTS);
        if self.send(
            conn,
            &Packet::RoutingResponse { conn_id, pk },
            FrameClass::Control,
        ) == Sent::Overflow
        {
            return Err(CloseReason::SlowReader);
        }
        let Some(slot) = slot.filter(|_| existing.is_none()) else {
            return Ok(());
        };
        if let Some(c) = self.conns.get_mut(&conn) {
            c.routes.insert(slot, pk);
        }
        let Some(other) = self.by_pk.get(&pk).copied() else {
            return Ok(());
        };
        let Some(other_slot) = self.conns.get(&other).and_then(|o| {
            let s = o.routes.find(&own_pk)?;
            o.routes.get(s)?.link.is_none().then_some(s)
        }) else {
            return Ok(());
        };
        if let Some(r) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.routes.get_mut(slot))
        {
            r.link = Some(Link {
                conn: other,
                slot: other_slot,
            });
        }
        if let Some(r) = self
            .conns
            .get_mut(&other)
            .and_then(|o| o.routes.get_mut(other_slot))
        {
            r.link = Some(Link { conn, slot });
        }
        self.stats.routes_linked += 1;
        let to_us = Packet::ConnectNotification {
            conn_id: slot + NUM_RESERVED_PORTS,
        };
        let to_them = Packet::ConnectNotification {
            conn_id: other_slot + NUM_RESERVED_PORTS,
        };
        if self.send(other, &to_them, FrameClass::Control) == Sent::Overflow {
            self.close(other, CloseReason::SlowReader);
        }
        match self.send(conn, &to_us, FrameClass::Control) {
            Sent::Overflow => Err(CloseReason::SlowReader),
            _ => Ok(()),
        }
    }

    /// Packet 3 from a client (`rm_connection_index`): frees the slot; a linked peer is told.
    /// A slot not in use closes the connection, as in c-toxcore.
    pub(super) fn remove_route(&mut self, conn: ConnId, slot: u8) -> Result<(), CloseReason> {
        let route = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.routes.remove(slot))
            .ok_or(CloseReason::BadPacket)?;
        if let Some(link) = route.link {
            self.unlink_peer(link);
        }
        Ok(())
    }

    /// The other end of a route that went down: its slot becomes pending again and it gets
    /// a disconnect notification.
    pub(super) fn unlink_peer(&mut self, link: Link) {
        if let Some(r) = self
            .conns
            .get_mut(&link.conn)
            .and_then(|o| o.routes.get_mut(link.slot))
        {
            r.link = None;
            let n = Packet::DisconnectNotification {
                conn_id: link.slot + NUM_RESERVED_PORTS,
            };
            if self.send(link.conn, &n, FrameClass::Control) == Sent::Overflow {
                self.close(link.conn, CloseReason::SlowReader);
            }
        }
    }

    /// Packets 16..=255: relayed to the linked peer with its id for the route.
    pub(super) fn forward_data(
        &mut self,
        conn: ConnId,
        conn_id: u8,
        payload: &[u8],
    ) -> Result<(), CloseReason> {
        let route = self
            .conns
            .get(&conn)
            .and_then(|c| c.routes.get(conn_id.wrapping_sub(NUM_RESERVED_PORTS)))
            .ok_or(CloseReason::BadPacket)?;
        let Some(link) = route.link else {
            self.drop(RelayDrop::RouteNotLinked);
            return Ok(());
        };
        let out = Packet::Data {
            conn_id: link.slot + NUM_RESERVED_PORTS,
            payload,
        };
        if self.send(link.conn, &out, FrameClass::Data) == Sent::Queued {
            self.stats.data_forwarded += 1;
            self.stats.data_bytes_forwarded += payload.len() as u64;
        }
        Ok(())
    }
}
