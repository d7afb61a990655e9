//! The endpoint's state and its connection table: the [`Endpoint`] struct, and how a
//! connection is found (by UDP address, by the DHT key a relay names, by real key), given an
//! id, counted against the limits and forgotten once finished. The concerns above it
//! (demultiplexing, the cookie service, the handshake checks, the key caches and the public
//! face in mod.rs) read and change it through these.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::net::SocketAddr;

use super::config::{EndpointConfig, EndpointLimits};
use super::output::{EndpointEvent, Transmit};
use crate::admission::Admission;
use crate::connection::{Connection, ConnectionId, ConnectionStatus};
use crate::crypto::{CryptoRng, PublicKey};
use crate::drop_reason::{DropCounters, DropReason};
use crate::identity::Identity;
use crate::key_cache::KeyCache;
use crate::path::Destination;
use crate::transport::ArrayBudget;

/// One endpoint per UDP socket. See the module docs.
pub struct Endpoint {
    pub(super) identity: Identity,
    pub(super) config: EndpointConfig,
    pub(super) limits: EndpointLimits,
    pub(super) rng: Box<dyn CryptoRng + Send>,
    /// Boxed: a connection is a few KiB, and the tree's nodes hold 11 values each whether
    /// used or not.
    pub(super) connections: BTreeMap<ConnectionId, Box<Connection>>,
    pub(super) by_addr: HashMap<SocketAddr, ConnectionId>,
    /// Connections by the peer's DHT key: how relayed datagrams find theirs.
    pub(super) by_dht_pk: HashMap<PublicKey, ConnectionId>,
    pub(super) by_real_pk: HashMap<PublicKey, ConnectionId>,
    pub(super) allowed: HashSet<PublicKey>,
    pub(super) next_id: u32,
    pub(super) responses: VecDeque<Transmit>,
    pub(super) events: VecDeque<EndpointEvent>,
    pub(super) drops: DropCounters,
    /// Per-source and key-agreement buckets for cookie requests and handshakes.
    pub(super) admission: Admission,
    /// Requesters' DHT keys agreed with ours, kept once their cookie request opened.
    pub(super) dht_keys: KeyCache,
    /// Accepted peers' real keys agreed with ours, kept once their handshake opened.
    pub(super) real_keys: KeyCache,
    /// X25519s done for cookie requests and handshakes (connections' own not counted).
    pub(super) key_agreements: u64,
    /// What every connection's send and receive arrays hold together.
    pub(super) array_budget: ArrayBudget,
    /// Round-robin position of `poll_transmit` over connections.
    pub(super) transmit_cursor: Option<ConnectionId>,
    /// Where data packets are decrypted, reused from packet to packet (≤ 1400 bytes).
    pub(super) open_scratch: Vec<u8>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("real_pk", &self.identity.real.public)
            .field("connections", &self.connections.len())
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The first id from `next_id` on that no connection holds; [`Self::insert`] takes it,
    /// so a connection refused before it is inserted uses none up.
    pub(super) fn free_id(&self) -> ConnectionId {
        let mut id = self.next_id;
        while self.connections.contains_key(&ConnectionId(id)) {
            id = id.wrapping_add(1);
        }
        ConnectionId(id)
    }

    pub(super) fn insert(&mut self, mut conn: Connection) {
        conn.set_array_budget(self.array_budget.clone());
        let id = conn.id();
        self.next_id = id.0.wrapping_add(1);
        if let Some(addr) = conn.peer_addr() {
            self.by_addr.insert(addr, id);
        }
        self.by_dht_pk.insert(conn.peer_dht_pk(), id);
        self.by_real_pk.insert(conn.peer_real_pk(), id);
        self.connections.insert(id, Box::new(conn));
    }

    fn is_live(&self, id: ConnectionId) -> bool {
        self.connections
            .get(&id)
            .is_some_and(|c| c.status() != ConnectionStatus::Closed)
    }

    pub(super) fn live_by_addr(&self, addr: &SocketAddr) -> Option<ConnectionId> {
        self.by_addr
            .get(addr)
            .copied()
            .filter(|id| self.is_live(*id))
    }

    pub(super) fn live_by_dht_pk(&self, pk: &PublicKey) -> Option<ConnectionId> {
        self.by_dht_pk
            .get(pk)
            .copied()
            .filter(|id| self.is_live(*id))
    }

    pub(super) fn live_by_source(&self, from: &Destination) -> Option<ConnectionId> {
        match from {
            Destination::Udp(addr) => self.live_by_addr(addr),
            Destination::Relay(pk) => self.live_by_dht_pk(pk),
        }
    }

    pub(super) fn live_by_real_pk(&self, pk: &PublicKey) -> Option<ConnectionId> {
        self.by_real_pk
            .get(pk)
            .copied()
            .filter(|id| self.is_live(*id))
    }

    /// May this peer open a connection to us?
    pub(super) fn accepts(&self, peer_real_pk: &PublicKey) -> bool {
        self.config.accept_all || self.allowed.contains(peer_real_pk)
    }

    pub(super) fn check_capacity(&self) -> Result<(), DropReason> {
        if self.connections.len() >= self.limits.max_connections {
            return Err(DropReason::TooManyConnections);
        }
        let in_progress = self
            .connections
            .values()
            .filter(|c| {
                matches!(
                    c.status(),
                    ConnectionStatus::CookieRequesting
                        | ConnectionStatus::HandshakeSent
                        | ConnectionStatus::NotConfirmed
                )
            })
            .count();
        if in_progress >= self.limits.max_handshakes_in_progress {
            return Err(DropReason::TooManyHandshakes);
        }
        Ok(())
    }

    /// Points the address table at connection `id`'s new address, forgetting its old one
    /// unless another connection holds it by now.
    pub(super) fn readdress(&mut self, id: ConnectionId, old: Option<SocketAddr>, new: SocketAddr) {
        if let Some(old) = old {
            self.forget_addr(&old, id);
        }
        self.by_addr.insert(new, id);
    }

    fn forget_addr(&mut self, addr: &SocketAddr, id: ConnectionId) {
        if self.by_addr.get(addr) == Some(&id) {
            self.by_addr.remove(addr);
        }
    }

    /// Forgets closed connections whose last event was polled and last datagram sent.
    pub(super) fn reap(&mut self) {
        let finished: Vec<ConnectionId> = self
            .connections
            .iter()
            .filter(|(_, c)| c.is_finished())
            .map(|(id, _)| *id)
            .collect();
        for id in finished {
            if let Some(conn) = self.connections.remove(&id) {
                if let Some(addr) = conn.peer_addr() {
                    self.forget_addr(&addr, id);
                }
                if self.by_dht_pk.get(&conn.peer_dht_pk()) == Some(&id) {
                    self.by_dht_pk.remove(&conn.peer_dht_pk());
                }
                if self.by_real_pk.get(&conn.peer_real_pk()) == Some(&id) {
                    self.by_real_pk.remove(&conn.peer_real_pk());
                }
            }
        }
    }
}

/// The connection `id` names, if any: what a cookie response or a data packet from a source
/// with no live connection is dropped for. A function of the table alone, so that the caller
/// may lend the endpoint's other fields to the connection.
pub(super) fn live_connection(
    connections: &mut BTreeMap<ConnectionId, Box<Connection>>,
    id: Option<ConnectionId>,
) -> Result<&mut Connection, DropReason> {
    id.and_then(|id| connections.get_mut(&id))
        .map(|conn| &mut **conn)
        .ok_or(DropReason::UnknownConnection)
}
