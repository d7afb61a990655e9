//! The handshake checks (docs/protocol.md §2.2) and what a handshake that passes them does
//! (§2.3): the cookie is ours, fresh and names the sender; the box opens under the agreed
//! key and its hash matches the cookie. Then the handshake goes to its connection, moves a
//! connection still setting up to a new address, replaces a session whose peer came back
//! with a new DHT key, or creates a responder connection.

use super::output::EndpointEvent;
use super::state::Endpoint;
use crate::connection::{Connection, ConnectionStatus};
use crate::crypto::sha512;
use crate::drop_reason::{crypto_drop, length_drop, DropReason};
use crate::packets::Handshake;
use crate::path::{Destination, Paths};
use crate::Timestamp;

impl Endpoint {
    /// Verifies a handshake and hands it to its connection, or creates one (docs/protocol.md
    /// §2.2 checks, §2.3 routing).
    pub(super) fn handle_handshake(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let handshake = Handshake::parse(datagram).map_err(length_drop)?;
        let cookie = handshake
            .cookie
            .open(&self.identity.cookie_key)
            .map_err(|_| DropReason::BadCookie)?;
        if !cookie.is_fresh(now.as_secs()) {
            return Err(DropReason::StaleCookie);
        }
        if let Destination::Relay(sender) = from {
            // The relay names the sender by the key it connected with: its DHT key.
            if sender != cookie.dht_pk {
                return Err(DropReason::WrongPeer);
            }
        }

        // A connection at this address must be with the peer the cookie names.
        let at_addr = self.live_by_source(&from);
        if let Some(conn) = at_addr.and_then(|id| self.connections.get(&id)) {
            if conn.peer_real_pk() != cookie.real_pk {
                return Err(DropReason::WrongPeer);
            }
        }
        let existing = at_addr.or_else(|| self.live_by_real_pk(&cookie.real_pk));
        if existing.is_none() {
            // A new connection: the checks that cost nothing come before any that costs a
            // box or a key agreement.
            if !self.accepts(&cookie.real_pk) {
                return Err(DropReason::PeerNotAllowed);
            }
            self.check_capacity()?;
        }
        self.admission.admit_source(now, &from)?;

        // The key: the connection's, or one agreed before, or (within the budget of all
        // sources) a new X25519.
        let fresh_key = match existing {
            Some(_) => None,
            None => Some(self.peer_key(now, &cookie.real_pk)?),
        };
        let existing_conn = existing.and_then(|id| self.connections.get(&id));
        let real_shared = match (existing_conn, &fresh_key) {
            (Some(conn), _) => conn.real_shared_key(),
            (None, Some(key)) => key,
            (None, None) => return Err(DropReason::UnknownConnection),
        };
        let payload = handshake.open(real_shared).map_err(crypto_drop)?;
        if payload.cookie_hash != sha512(&handshake.cookie.0) {
            return Err(DropReason::CookieHashMismatch);
        }

        let mut replaced = None;
        if let Some(id) = existing {
            let conn = self
                .connections
                .get_mut(&id)
                .ok_or(DropReason::UnknownConnection)?;
            if conn.peer_dht_pk() != cookie.dht_pk {
                // The peer came back with a new DHT key: once the new connection is
                // accepted below, the old session is over (§2.2).
                replaced = Some(id);
            } else if at_addr.is_some() {
                conn.handle_handshake(now, &payload, &self.identity, self.rng.as_mut())?;
                conn.heard(now, from);
                return Ok(());
            } else {
                // Same peer, new address: adopt only a connection still waiting for its
                // handshake (`handle_new_connection_handshake`).
                let (ConnectionStatus::CookieRequesting | ConnectionStatus::HandshakeSent) =
                    conn.status()
                else {
                    return Err(DropReason::HandshakeIgnored);
                };
                let Destination::Udp(addr) = from else {
                    // A relayed handshake from this DHT key finds its connection by key.
                    return Err(DropReason::HandshakeIgnored);
                };
                let old_addr = conn.peer_addr();
                let old_paths = conn.paths_snapshot();
                conn.set_peer_addr(addr);
                let handled =
                    conn.handle_handshake(now, &payload, &self.identity, self.rng.as_mut());
                if let Err(reason) = handled {
                    // Refused (a low-order session key): the connection stays where it was.
                    conn.restore_paths(old_paths);
                    return Err(reason);
                }
                conn.heard(now, from);
                self.readdress(id, old_addr, addr);
                return Ok(());
            }
        }

        if !self.accepts(&cookie.real_pk) {
            return Err(DropReason::PeerNotAllowed);
        }
        self.check_capacity()?;
        let real_shared = match fresh_key {
            Some(key) => key,
            // The peer came back with a new DHT key: same real key, same shared key.
            None => replaced
                .and_then(|id| self.connections.get(&id))
                .map(|conn| conn.real_shared_key().clone())
                .ok_or(DropReason::UnknownConnection)?,
        };
        let paths = match from {
            Destination::Udp(addr) => Paths::new(Some(addr), false),
            Destination::Relay(_) => Paths::new(None, true),
        };
        // Built before the replaced session is closed: a handshake it refuses (a low-order
        // session key) must leave everything as it was.
        let mut conn = Connection::accept(
            self.free_id(),
            now,
            paths,
            &cookie,
            &payload,
            real_shared,
            &self.identity,
            self.config.transport.clone(),
            self.rng.as_mut(),
        )?;
        conn.heard(now, from);
        let id = conn.id();
        if let Some(conn) = replaced.and_then(|id| self.connections.get_mut(&id)) {
            conn.close_replaced();
        }
        self.insert(conn);
        self.events.push_back(EndpointEvent::Incoming {
            id,
            peer_real_pk: cookie.real_pk,
            peer_dht_pk: cookie.dht_pk,
            from,
        });
        Ok(())
    }
}
