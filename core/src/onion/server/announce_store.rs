//! The announce store: who is announced here, and data forwarding to them (docs/protocol.md §6.3;
//! c-toxcore 0.2.18 `onion_announce.c` `handle_announce_request_common`, `add_to_entries`,
//! `in_entries`, `make_announce_payload_helper`, `handle_data_request`).
//!
//! A 0x83 reaches us from the last relay C as `[request 177][C's sendback 177]` (exactly 354
//! bytes). What 0.2.18 does, and so what we do:
//! 1. Open the request with `beforenm(sender pk, our DHT sk)` (a bounded key cache; a key
//!    not cached takes from the server's key-agreement budget, key_cache.rs).
//! 2. If its ping id is valid for (sender pk, C's address), store or refresh an entry for the
//!    **sender pk** with the request's data pk and C's address and sendback; the entry
//!    looked at next is that one (or none, if the store keeps closer keys). Otherwise look
//!    up the **searched pk**.
//! 3. `is_stored`: no entry → 0 with a fresh ping id; the entry is the sender's → 2 with the
//!    ping id if its data pk equals the request's, else 0; the entry is someone else's → 1
//!    with that entry's data pk.
//! 4. Answer with up to four nodes closest to the searched pk (LAN nodes only to a LAN
//!    requester), sealed with the request's shared key, as `[0x8c][C's sendback][0x84 ..]`.
//!
//! A quirk this keeps: a *searcher* that sends back a valid ping id is itself stored (under
//! its temporary key, with a zero data pk) and gets `is_stored` 2, not the searched key.
//! 0.2.18 clients send the last ping id on friend searches too, and drop that answer.
//!
//! At most [`ONION_ANNOUNCE_MAX_ENTRIES`] = 160 entries, each live for
//! [`ONION_ANNOUNCE_TIMEOUT`] = 300 s after its last refresh. A new key takes an expired slot,
//! else replaces the live entry farthest from our DHT key if it is closer than that one.
//!
//! A 0x87 is answered the same way as a 0x88 (a node count before the nodes); one that
//! carries a group announce also feeds the group store (`super::group_store`).
//!
//! A 0x85 for an announced real pk goes on as `[0x8c][entry's sendback][0x86 ..]` to the
//! entry's C; the sender's own path is not used.

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, Nonce, PublicKey};
use rustox_net_crypto::Timestamp;

use super::group_store::GroupStore;
use super::ping_id::PingIdKey;
use super::{CloseNodes, OnionDrop, OnionStats};
use crate::dht::distance::cmp_distance;
use crate::dht::gate::Transmit;
use crate::dht::key_cache::{KeyBudget, KeyCache, WithinBudget};
use crate::dht::lan::is_lan;
use crate::dht::wire::nodes::MAX_SENT_NODES;
use crate::dht::wire::packed_node::PackedNode;
use crate::onion::wire::announce::{
    AnnounceEnvelope, AnnounceRequest, AnnounceResponse, AnnounceStatus, ANNOUNCE_REQUEST_SIZE,
    ANNOUNCE_RESPONSE_MAX_SIZE,
};
use crate::onion::wire::announce_ext::{
    ExtAnnounceEnvelope, ExtAnnounceResponse,
    ANNOUNCE_REQUEST_MAX_SIZE as EXT_ANNOUNCE_REQUEST_MAX_SIZE,
};
use crate::onion::wire::data::{DataRequest, DATA_REQUEST_MIN_SIZE};
use crate::onion::wire::group_announce::{PublicGroupAnnounce, GCA_MAX_SENT_ANNOUNCES};
use crate::onion::wire::response;
use crate::onion::wire::sendback::ReturnLevel;
use crate::onion::wire::{ONION_MAX_PACKET_SIZE, RETURN_3};

/// `ONION_ANNOUNCE_MAX_ENTRIES`.
pub const ONION_ANNOUNCE_MAX_ENTRIES: usize = 160;
/// `ONION_ANNOUNCE_TIMEOUT`: an entry lives this long after its last valid announce.
pub const ONION_ANNOUNCE_TIMEOUT: Duration = Duration::from_secs(300);
/// `ANNOUNCE_REQUEST_SIZE_RECV` = 354: a 0x83 with C's sendback.
pub const ANNOUNCE_REQUEST_SIZE_RECV: usize = ANNOUNCE_REQUEST_SIZE + RETURN_3;
/// `DATA_REQUEST_MIN_SIZE_RECV` = 282: a 0x85 at D must be longer.
pub const DATA_REQUEST_MIN_SIZE_RECV: usize = DATA_REQUEST_MIN_SIZE + RETURN_3;

#[derive(Debug, Clone)]
struct Entry {
    pk: PublicKey,
    data_pk: PublicKey,
    ret_addr: SocketAddr,
    ret: [u8; RETURN_3],
    refreshed: Timestamp,
}

impl Entry {
    fn live(&self, now: Timestamp) -> bool {
        now < self.refreshed + ONION_ANNOUNCE_TIMEOUT
    }
}

/// The store.
#[derive(Debug)]
pub struct AnnounceStore {
    own_pk: PublicKey,
    ping_key: PingIdKey,
    cache: KeyCache,
    entries: Vec<Entry>,
}

impl AnnounceStore {
    /// An empty store for our DHT key pair.
    pub fn new(keys: &KeyPair, rng: &mut dyn CryptoRng) -> Self {
        AnnounceStore {
            own_pk: keys.public,
            ping_key: PingIdKey::generate(rng),
            cache: KeyCache::new(keys.secret.clone()),
            entries: Vec::with_capacity(ONION_ANNOUNCE_MAX_ENTRIES),
        }
    }

    /// Live entries.
    pub fn len(&self, now: Timestamp) -> usize {
        self.entries.iter().filter(|e| e.live(now)).count()
    }

    /// True if nobody is announced here.
    pub fn is_empty(&self, now: Timestamp) -> bool {
        self.len(now) == 0
    }

    /// The data pk `pk` announced here, if it is.
    pub fn data_pk(&self, now: Timestamp, pk: &PublicKey) -> Option<PublicKey> {
        self.find(now, pk).map(|i| self.entries[i].data_pk)
    }

    /// The ping id we would hand `pk` via `source` now (tests skip the first round trip).
    #[cfg(test)]
    pub(super) fn ping_key_for_test(
        &self,
        now: Timestamp,
        pk: &PublicKey,
        source: SocketAddr,
    ) -> crate::onion::wire::announce::PingId {
        self.ping_key.ping_id(now, pk, source)
    }

    /// Key agreements computed by the request key cache.
    pub fn key_agreements(&self) -> u64 {
        self.cache.computed
    }

    /// `in_entries`.
    fn find(&self, now: Timestamp, pk: &PublicKey) -> Option<usize> {
        self.entries.iter().position(|e| e.live(now) && e.pk == *pk)
    }

    /// `add_to_entries`: the slot now holding `pk`, or `None` if the store keeps closer keys.
    fn add(&mut self, now: Timestamp, entry: Entry) -> Option<usize> {
        let slot = if let Some(i) = self.find(now, &entry.pk) {
            i
        } else if let Some(i) = self.entries.iter().position(|e| !e.live(now)) {
            i
        } else if self.entries.len() < ONION_ANNOUNCE_MAX_ENTRIES {
            self.entries.push(entry);
            return Some(self.entries.len() - 1);
        } else {
            let own = self.own_pk;
            let farthest = (0..self.entries.len())
                .max_by(|&a, &b| cmp_distance(&own, &self.entries[a].pk, &self.entries[b].pk))?;
            if cmp_distance(&own, &entry.pk, &self.entries[farthest].pk) != std::cmp::Ordering::Less
            {
                return None;
            }
            farthest
        };
        self.entries[slot] = entry;
        Some(slot)
    }

    /// A 0x83 from the last relay `from`.
    // `budget` is the server's, shared with the relay's layer caches (mod.rs).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_announce(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        nodes: &dyn CloseNodes,
        budget: &mut KeyBudget,
        stats: &mut OnionStats,
        rng: &mut dyn CryptoRng,
    ) -> Result<Transmit, OnionDrop> {
        if bytes.len() != ANNOUNCE_REQUEST_SIZE_RECV {
            return Err(OnionDrop::BadLength);
        }
        let (request, ret) = bytes.split_at(ANNOUNCE_REQUEST_SIZE);
        let env = AnnounceEnvelope::parse(request)?;
        let key = self.cache.get_within(now, &env.sender_pk, budget)?.clone();
        let req = env.open(&key)?;
        let status = self.status(now, from, &env.sender_pk, &req, ret, stats);
        let answer = AnnounceResponse {
            sendback: req.sendback,
            status,
            nodes: Self::close_nodes(now, from, &req.searched_pk, nodes),
        }
        .seal(&key, &Nonce::random(rng))?;
        let payload =
            response::encode(ReturnLevel::Three, ret, &answer).ok_or(OnionDrop::BadLength)?;
        stats.announces_answered += 1;
        Ok(Transmit { dst: from, payload })
    }

    /// A 0x87 from the last relay `from` (`handle_announce_request` of 0.2.18, and with a
    /// group announce `handle_gca_announce_request` of 0.2.19+): answered as a 0x83 is, as a
    /// 0x88; a group announce after the fixed plaintext is stored in `groups` under its chat
    /// key, and the response carries up to four other peers' announces for that chat, as
    /// many as fit in the 626 bytes a client accepts. A group announce that does not decode
    /// gets no answer and changes nothing, as in c-toxcore.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_announce_ext(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        nodes: &dyn CloseNodes,
        groups: &mut GroupStore,
        budget: &mut KeyBudget,
        stats: &mut OnionStats,
        rng: &mut dyn CryptoRng,
    ) -> Result<Transmit, OnionDrop> {
        if bytes.len() < ANNOUNCE_REQUEST_SIZE_RECV
            || bytes.len() > EXT_ANNOUNCE_REQUEST_MAX_SIZE + RETURN_3
        {
            return Err(OnionDrop::BadLength);
        }
        let (request, ret) = bytes.split_at(bytes.len() - RETURN_3);
        let env = ExtAnnounceEnvelope::parse(request)?;
        let key = self.cache.get_within(now, &env.sender_pk, budget)?.clone();
        let (req, extra) = env.open(&key)?;
        let group = if extra.is_empty() {
            None
        } else {
            Some(PublicGroupAnnounce::decode(&extra).map_err(|_| OnionDrop::BadGroupAnnounce)?)
        };
        let status = self.status(now, from, &env.sender_pk, &req, ret, stats);
        let mut answer = ExtAnnounceResponse {
            sendback: req.sendback,
            status,
            nodes: Self::close_nodes(now, from, &req.searched_pk, nodes),
            announces: Vec::new(),
        };
        if let Some(g) = group {
            groups.add(now, &g);
            stats.group_announces_stored += 1;
            answer.announces =
                groups.announces(now, &g.chat_pk, &g.announce.peer_pk, GCA_MAX_SENT_ANNOUNCES);
            while answer.sealed_len() > ANNOUNCE_RESPONSE_MAX_SIZE {
                answer.announces.pop();
            }
            stats.group_announces_sent += answer.announces.len() as u64;
        }
        let sealed = answer
            .seal(&key, &Nonce::random(rng))
            .map_err(|_| OnionDrop::BadLength)?;
        let payload =
            response::encode(ReturnLevel::Three, ret, &sealed).ok_or(OnionDrop::BadLength)?;
        stats.announces_answered += 1;
        Ok(Transmit { dst: from, payload })
    }

    /// Up to four UDP nodes closest to `target` for a requester behind `from`.
    fn close_nodes(
        now: Timestamp,
        from: SocketAddr,
        target: &PublicKey,
        nodes: &dyn CloseNodes,
    ) -> Vec<PackedNode> {
        let mut close = nodes.closest_nodes(now, target, is_lan(from.ip()));
        close.retain(|n| !n.tcp && n.addr.port() != 0);
        close.truncate(MAX_SENT_NODES);
        close
    }

    /// Steps 2 and 3 of the module doc: store or refresh the sender if its ping id is
    /// valid, and what the response says.
    fn status(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        sender_pk: &PublicKey,
        req: &AnnounceRequest,
        ret: &[u8],
        stats: &mut OnionStats,
    ) -> AnnounceStatus {
        let index = if self.ping_key.check(now, sender_pk, from, &req.ping_id) {
            let mut r = [0u8; RETURN_3];
            r.copy_from_slice(ret);
            let added = self.add(
                now,
                Entry {
                    pk: *sender_pk,
                    data_pk: req.data_pk,
                    ret_addr: from,
                    ret: r,
                    refreshed: now,
                },
            );
            if added.is_some() {
                stats.announces_stored += 1;
            }
            added
        } else {
            self.find(now, &req.searched_pk)
        };
        let ping_id = self.ping_key.ping_id(now, sender_pk, from);
        match index.map(|i| &self.entries[i]) {
            None => AnnounceStatus::NotStored(ping_id),
            Some(e) if e.pk == *sender_pk && e.data_pk == req.data_pk => {
                AnnounceStatus::Stored(ping_id)
            }
            Some(e) if e.pk == *sender_pk => AnnounceStatus::NotStored(ping_id),
            Some(e) => {
                stats.searches_found += 1;
                AnnounceStatus::Found(e.data_pk)
            }
        }
    }

    /// A 0x85: on to the announced destination's path, as a 0x86.
    pub(super) fn handle_data(
        &mut self,
        now: Timestamp,
        bytes: &[u8],
        stats: &mut OnionStats,
    ) -> Result<Transmit, OnionDrop> {
        if bytes.len() <= DATA_REQUEST_MIN_SIZE_RECV || bytes.len() > ONION_MAX_PACKET_SIZE {
            return Err(OnionDrop::BadLength);
        }
        let request = DataRequest::parse(&bytes[..bytes.len() - RETURN_3])?;
        let entry = &self.entries[self
            .find(now, &request.dest_pk)
            .ok_or(OnionDrop::UnknownDestination)?];
        if entry.ret_addr.port() == 0 {
            return Err(OnionDrop::ToPortZero);
        }
        let payload = response::encode(ReturnLevel::Three, &entry.ret, &request.to_response())
            .ok_or(OnionDrop::BadLength)?;
        stats.data_forwarded += 1;
        Ok(Transmit {
            dst: entry.ret_addr,
            payload,
        })
    }
}
