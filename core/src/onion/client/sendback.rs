//! The 8-byte sendback of announce requests (docs/protocol.md §6.3, §6.6; c-toxcore 0.2.18
//! `onion_client.c` `new_sendback`, `check_sendback`, `ping_array.c`).
//!
//! Each announce or search request carries 8 opaque bytes that come back in clear in the
//! response. c-toxcore stores `{list number, node key, node address, path number}` in a
//! `Ping_Array` of [`ANNOUNCE_ARRAY_SIZE`] entries that expire after [`ANNOUNCE_TIMEOUT`]
//! and uses a random id as the 8 bytes; so do we. We also keep the shared key the request
//! was sealed with, so opening the response costs no key agreement, and the ping id the
//! request carried, so the client can tell a fresh ping id from the one it already sent.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, PrecomputedKey, PublicKey};
use rustox_net_crypto::Timestamp;

use crate::onion::wire::announce::{PingId, SENDBACK_DATA_SIZE};

/// `ANNOUNCE_ARRAY_SIZE` (`onion_client.c`): requests awaiting a response.
pub const ANNOUNCE_ARRAY_SIZE: usize = 256;
/// `ANNOUNCE_TIMEOUT` (`onion_client.c`): a response later than this is dropped.
pub const ANNOUNCE_TIMEOUT: Duration = Duration::from_secs(10);

/// Whose request it was: our own announce, or a search for a friend (by real key, so a
/// response for a removed and re-added friend never lands in the wrong list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListId {
    /// The self-announce list (c-toxcore's `num` 0).
    Announce,
    /// The search list of this friend (c-toxcore's `num` = friend number + 1).
    Friend(PublicKey),
}

/// What a request remembers until its response.
#[derive(Clone)]
pub(super) struct SendbackEntry {
    pub(super) list: ListId,
    pub(super) node_pk: PublicKey,
    pub(super) node_addr: SocketAddr,
    pub(super) path_num: u32,
    pub(super) sent: Timestamp,
    /// `beforenm(node pk, sender sk)`: opens the response.
    pub(super) key: PrecomputedKey,
    /// The ping id the request carried (zeros for a first contact or a search).
    pub(super) ping_id: PingId,
}

impl std::fmt::Debug for SendbackEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendbackEntry")
            .field("list", &self.list)
            .field("node_addr", &self.node_addr)
            .field("path_num", &self.path_num)
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

/// Bounded table of outstanding requests, keyed by random 8-byte ids.
#[derive(Debug, Default)]
pub(super) struct SendbackTable {
    entries: HashMap<u64, SendbackEntry>,
    evicted: u64,
    /// When the expired entries were last dropped.
    expired_at: Timestamp,
}

impl SendbackTable {
    /// Stores `entry` under a fresh random non-zero id and returns the 8 bytes. When the
    /// table is full the expired entries go, then the oldest one (a ping array overwrites
    /// its oldest slot).
    pub(super) fn insert(
        &mut self,
        now: Timestamp,
        entry: SendbackEntry,
        rng: &mut dyn CryptoRng,
    ) -> [u8; SENDBACK_DATA_SIZE] {
        // Expired entries go every ANNOUNCE_TIMEOUT, not only when the table is full: an
        // idle client has a handful outstanding, and its table gives the room of a full one
        // (~190 KiB) back.
        if self.entries.len() >= ANNOUNCE_ARRAY_SIZE || now >= self.expired_at + ANNOUNCE_TIMEOUT {
            self.expire(now);
            self.expired_at = now;
            if self.entries.capacity() > 4 * self.entries.len().max(16) {
                self.entries.shrink_to(2 * self.entries.len());
            }
        }
        if self.entries.len() >= ANNOUNCE_ARRAY_SIZE {
            if let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.sent)
                .map(|(id, _)| *id)
            {
                self.entries.remove(&oldest);
                self.evicted += 1;
            }
        }
        let id = loop {
            let id = rng.next_u64();
            if id != 0 && !self.entries.contains_key(&id) {
                break id;
            }
        };
        self.entries.insert(id, entry);
        id.to_le_bytes()
    }

    /// The live entry of `sendback`, without consuming it.
    pub(super) fn get(
        &self,
        now: Timestamp,
        sendback: &[u8; SENDBACK_DATA_SIZE],
    ) -> Option<&SendbackEntry> {
        self.entries
            .get(&u64::from_le_bytes(*sendback))
            .filter(|e| e.sent + ANNOUNCE_TIMEOUT > now)
    }

    /// Consumes the entry once its response has been authenticated: a replayed response
    /// finds nothing (`ping_array_check` clears the slot too, but before decryption; we
    /// clear after, so a forged packet with a sniffed sendback cannot cancel the real one).
    pub(super) fn remove(&mut self, sendback: &[u8; SENDBACK_DATA_SIZE]) {
        self.entries.remove(&u64::from_le_bytes(*sendback));
    }

    /// Forgets the expired entries.
    pub(super) fn expire(&mut self, now: Timestamp) {
        self.entries.retain(|_, e| e.sent + ANNOUNCE_TIMEOUT > now);
    }

    /// Forgets every entry of a list (a removed friend).
    pub(super) fn forget_list(&mut self, list: ListId) {
        self.entries.retain(|_, e| e.list != list);
    }

    /// Entries held (some may have expired).
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Entries pushed out by newer ones before their response or timeout.
    pub(super) fn evicted(&self) -> u64 {
        self.evicted
    }
}
