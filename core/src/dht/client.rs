//! One node as the DHT lists keep it: separate IPv4 and IPv6 associations, each with when
//! it was last heard from, last pinged, and the address it reported for the list's key
//! (c-toxcore `Client_data` / `IPPTsPng`, docs/protocol.md §5.3).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::timers::{BAD_NODE_TIMEOUT, KILL_NODE_TIMEOUT};

/// One address of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assoc {
    /// Where the node answered from.
    pub addr: SocketAddr,
    /// When it last answered a request of ours (the only thing that refreshes a node).
    pub last_seen: Timestamp,
    /// When we last sent it a get-nodes; `None` = never (it is pinged at the next tick).
    pub last_pinged: Option<Timestamp>,
    /// The address this node reported for the list's key (its searched node), and when.
    pub returned: Option<(SocketAddr, Timestamp)>,
}

impl Assoc {
    fn new(addr: SocketAddr, now: Timestamp) -> Self {
        Assoc {
            addr,
            last_seen: now,
            last_pinged: None,
            returned: None,
        }
    }

    /// Heard from within `BAD_NODE_TIMEOUT` (`!assoc_timeout`).
    pub fn is_good(&self, now: Timestamp) -> bool {
        now < self.last_seen + BAD_NODE_TIMEOUT
    }

    /// Silent for `KILL_NODE_TIMEOUT`: no longer pinged, its slot is free.
    pub fn is_dead(&self, now: Timestamp) -> bool {
        now >= self.last_seen + KILL_NODE_TIMEOUT
    }
}

/// A node in a close list or a search list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientEntry {
    /// The node's DHT key.
    pub pk: PublicKey,
    /// Its IPv4 association.
    pub v4: Option<Assoc>,
    /// Its IPv6 association.
    pub v6: Option<Assoc>,
}

impl ClientEntry {
    /// A node just heard from at `addr`.
    pub fn new(pk: PublicKey, addr: SocketAddr, now: Timestamp) -> Self {
        let mut e = ClientEntry {
            pk,
            v4: None,
            v6: None,
        };
        *e.assoc_slot(addr) = Some(Assoc::new(addr, now));
        e
    }

    /// The association slot for the address family of `addr`.
    pub fn assoc_slot(&mut self, addr: SocketAddr) -> &mut Option<Assoc> {
        if addr.is_ipv4() {
            &mut self.v4
        } else {
            &mut self.v6
        }
    }

    /// Both associations that exist.
    pub fn assocs(&self) -> impl Iterator<Item = &Assoc> {
        self.v4.iter().chain(self.v6.iter())
    }

    /// Mutable associations.
    pub fn assocs_mut(&mut self) -> impl Iterator<Item = &mut Assoc> {
        self.v4.iter_mut().chain(self.v6.iter_mut())
    }

    /// Records that the node answered from `addr` (`update_client`): a new address of the
    /// same family replaces the old one and forgets what it reported.
    pub fn heard_from(&mut self, addr: SocketAddr, now: Timestamp) {
        let slot = self.assoc_slot(addr);
        match slot {
            Some(a) if a.addr == addr => a.last_seen = now,
            _ => *slot = Some(Assoc::new(addr, now)),
        }
    }

    /// At least one association is good.
    pub fn is_good(&self, now: Timestamp) -> bool {
        self.assocs().any(|a| a.is_good(now))
    }

    /// Every association is dead (or none exists).
    pub fn is_dead(&self, now: Timestamp) -> bool {
        self.assocs().all(|a| a.is_dead(now))
    }

    /// The most recently heard good association (c-toxcore prefers the newer of v4/v6).
    pub fn best_good(&self, now: Timestamp) -> Option<&Assoc> {
        self.assocs()
            .filter(|a| a.is_good(now))
            .max_by_key(|a| a.last_seen)
    }
}
