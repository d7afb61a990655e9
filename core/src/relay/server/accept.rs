//! Admitting connections: the limits in all, per source address and in handshake, and the
//! eviction of the oldest handshake when those are full (see the module doc of `server`).

use std::net::SocketAddr;

use rustox_net_crypto::Timestamp;

use super::routes::Routes;
use super::{AddrKey, CloseReason, Conn, ConnId, Refused, RelayServer};
use crate::relay::outbuf::OutBuf;

impl RelayServer {
    /// A new TCP connection from `addr`. On `Err` the driver closes the socket and the
    /// server keeps nothing.
    pub fn handle_accept(
        &mut self,
        now: Timestamp,
        conn: ConnId,
        addr: SocketAddr,
    ) -> Result<(), Refused> {
        let key = AddrKey::of(&addr);
        let refused = if self.conns.contains_key(&conn) {
            Some((Refused::DuplicateId, None))
        } else if self.conns.len() >= self.config.max_connections {
            Some((Refused::TooManyConnections, Some(0)))
        } else if self.per_addr.get(&key).copied().unwrap_or(0) >= self.config.max_per_ip {
            Some((Refused::TooManyFromAddress, Some(1)))
        } else {
            None
        };
        if let Some((why, counter)) = refused {
            if let Some(i) = counter {
                self.stats.refused[i] += 1;
            }
            return Err(why);
        }
        while self.handshaking >= self.config.max_handshaking.max(1) {
            if !self.evict_oldest_handshake() {
                break;
            }
        }
        *self.per_addr.entry(key).or_insert(0) += 1;
        self.handshaking += 1;
        let serial = self.next_serial;
        self.next_serial += 1;
        let c = Conn {
            addr,
            serial,
            hello: Some(Box::default()),
            session: None,
            out: OutBuf::default(),
            routes: Routes::default(),
            accepted: now,
            last_pinged: now,
            ping_id: 0,
            deadline: now,
            ready: false,
        };
        let deadline = c.next_deadline(&self.config);
        self.conns.insert(conn, Conn { deadline, ..c });
        self.timers.insert((deadline, conn));
        self.handshake_order.push_back((conn, serial));
        if self.handshake_order.len() > 2 * self.config.max_handshaking.max(1) {
            let conns = &self.conns;
            self.handshake_order.retain(|(id, serial)| {
                conns
                    .get(id)
                    .is_some_and(|c| c.serial == *serial && !c.confirmed())
            });
        }
        self.stats.accepted += 1;
        Ok(())
    }

    /// Closes the connection that has been in its handshake longest; false if there is none.
    pub(super) fn evict_oldest_handshake(&mut self) -> bool {
        while let Some((id, serial)) = self.handshake_order.pop_front() {
            if self
                .conns
                .get(&id)
                .is_some_and(|c| c.serial == serial && !c.confirmed())
            {
                self.close(id, CloseReason::HandshakeEvicted);
                return true;
            }
        }
        debug_assert!(self.handshaking == 0, "a handshake missing from the order");
        false
    }
}
