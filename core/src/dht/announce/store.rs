//! The DHT announcement store (c-toxcore 0.2.18 `announce.c`, the server side every 0.2.18
//! node runs with `dht_announcements_enabled`): anyone may store up to 512 bytes under a key
//! they hold the secret of, at the nodes closest to it, for up to 15 minutes, and anyone may
//! look the data up.
//!
//! Requests come straight over UDP or forwarded ([`super::forwarding`]); both are
//! `[kind][requester pk 32][nonce 24][E(beforenm(requester pk, our DHT sk))[body ‖ ping 8]]`,
//! answered with `[kind + 1][our pk 32][nonce 24][E(same key)[reply ‖ ping 8]]`:
//!
//! | kind | body | reply |
//! |------|------|-------|
//! | 0x93 data search | `data pk 32 [‖ hash 32]` | `data pk ‖ stored 1 [‖ sha256(data) 32] ‖ auth 32 ‖ would store 1 ‖ node count 1 ‖ nodes`, or only `data pk` if its SHA-256 equals the request's hash |
//! | 0x95 retrieve | `data pk 32 ‖ 0 ‖ auth 32` | `data pk ‖ 1 ‖ data` |
//! | 0x97 store | `data pk 32 ‖ nonce 24 ‖ E(beforenm(data pk, our DHT sk))[auth 32 ‖ timeout 4 ‖ type 1 ‖ data or sha256]` | `data pk ‖ timeout 4 ‖ our time 8` |
//!
//! `auth` is a timed authenticator (60 s windows, `DATA_SEARCH_TIMEOUT`) over `data pk ‖
//! requester pk ‖ packed source ‖ sendback`: a store or retrieve must follow a search from the
//! same requester at the same address. Type 0 stores data (at most 512 bytes); type 1
//! refreshes an entry whose data has that SHA-256 (and deletes it if not).
//!
//! Bounded as 0.2.18 is: 32 buckets by the bits after the first that differs from our key,
//! 8 entries each (256 entries of at most 512 bytes: 128 KiB), an entry in its bucket
//! replaced only when it expired or is farther from us. A store lasts at most
//! `min(900 s, uptime / 4)`, at least 10 s. Every answer is one datagram to where the request
//! came from, and requests are rate-limited per source before any decryption (by the
//! caller, `DhtAnnounceServer`).

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{
    CryptoRng, KeyPair, Nonce, PrecomputedKey, PublicKey, MAC_SIZE, NONCE_SIZE, PUBLIC_KEY_SIZE,
};
use rustox_net_crypto::wire::Reader;
use rustox_net_crypto::Timestamp;
use sha2::{Digest, Sha256};

use super::forwarding::{MAX_FORWARD_DATA_SIZE, MAX_PACKED_IPPORT_SIZE, MAX_SENDBACK_SIZE};
use super::timed_auth::{TimedAuthKey, TIMED_AUTH_SIZE};
use crate::dht::key_cache::{KeyBudget, KeyCache, KeyRefusal, WithinBudget};
use crate::dht::wire::nodes::MAX_SENT_NODES;
use crate::dht::wire::packed_node::{encode_udp_addr, PackedNode};

/// `NET_PACKET_DATA_SEARCH_REQUEST`.
pub const DATA_SEARCH_REQUEST: u8 = 0x93;
/// `NET_PACKET_DATA_SEARCH_RESPONSE`.
pub const DATA_SEARCH_RESPONSE: u8 = 0x94;
/// `NET_PACKET_DATA_RETRIEVE_REQUEST`.
pub const DATA_RETRIEVE_REQUEST: u8 = 0x95;
/// `NET_PACKET_DATA_RETRIEVE_RESPONSE`.
pub const DATA_RETRIEVE_RESPONSE: u8 = 0x96;
/// `NET_PACKET_STORE_ANNOUNCE_REQUEST`.
pub const STORE_ANNOUNCE_REQUEST: u8 = 0x97;
/// `NET_PACKET_STORE_ANNOUNCE_RESPONSE`.
pub const STORE_ANNOUNCE_RESPONSE: u8 = 0x98;
/// `MAX_ANNOUNCEMENT_SIZE`.
pub const MAX_ANNOUNCEMENT_SIZE: usize = 512;
/// `ANNOUNCE_BUCKET_SIZE`.
pub const ANNOUNCE_BUCKET_SIZE: usize = 8;
/// `ANNOUNCE_BUCKET_PREFIX_LENGTH`.
pub const ANNOUNCE_BUCKET_PREFIX_LENGTH: u32 = 5;
/// `ANNOUNCE_BUCKETS` = 2^5.
pub const ANNOUNCE_BUCKETS: usize = 1 << ANNOUNCE_BUCKET_PREFIX_LENGTH;
/// `MAX_MAX_ANNOUNCEMENT_TIMEOUT`, s.
pub const MAX_MAX_ANNOUNCEMENT_TIMEOUT: u64 = 900;
/// `MIN_MAX_ANNOUNCEMENT_TIMEOUT`, s.
pub const MIN_MAX_ANNOUNCEMENT_TIMEOUT: u64 = 10;
/// `MAX_ANNOUNCEMENT_TIMEOUT_UPTIME_RATIO`.
pub const MAX_ANNOUNCEMENT_TIMEOUT_UPTIME_RATIO: u64 = 4;
/// `DATA_SEARCH_TIMEOUT`: the window of a search's auth.
pub const DATA_SEARCH_TIMEOUT: Duration = Duration::from_secs(60);
/// `[kind][pk][nonce][MAC]` around every request's plaintext.
const HEADER: usize = 1 + PUBLIC_KEY_SIZE + NONCE_SIZE + MAC_SIZE;
/// `CRYPTO_SHA256_SIZE`.
const SHA256_SIZE: usize = 32;

/// Why an announce request got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum StoreError {
    /// Not 0x93, 0x95 or 0x97.
    #[error("not an announce request")]
    UnknownKind,
    /// A length its kind does not allow.
    #[error("bad length")]
    BadLength,
    /// A box did not open.
    #[error("decryption failed")]
    Decrypt,
    /// A low-order key, or a key not cached while the key agreements are spent.
    #[error("key refused")]
    KeyRefused,
    /// The auth is not one we made for this requester, address and key in the last minute
    /// or two.
    #[error("auth does not check")]
    BadAuth,
    /// Nothing stored under the key (retrieve, refresh).
    #[error("nothing stored")]
    NotStored,
    /// A refresh whose hash is not the stored data's (the entry is deleted, as in 0.2.18).
    #[error("hash does not match")]
    HashMismatch,
    /// The key's bucket keeps closer keys.
    #[error("bucket full")]
    Full,
    /// An announcement type other than 0 or 1, or data over 512 bytes.
    #[error("bad announcement")]
    BadAnnouncement,
}

impl From<KeyRefusal> for StoreError {
    fn from(_: KeyRefusal) -> Self {
        StoreError::KeyRefused
    }
}

#[derive(Debug, Clone)]
struct Entry {
    store_until: Timestamp,
    data_pk: PublicKey,
    data: Vec<u8>,
}

/// Where search replies get their nodes.
pub use crate::dht::CloseNodes;

/// `bit_by_bit_cmp`: the index of the first bit where `a` and `b` differ (256 if none).
fn first_differing_bit(a: &PublicKey, b: &PublicKey) -> u32 {
    for (i, (x, y)) in a.0.iter().zip(b.0.iter()).enumerate() {
        if x != y {
            return i as u32 * 8 + (x ^ y).leading_zeros();
        }
    }
    256
}

/// `truncate_pk_at_index`: `bits` bits of `pk` from bit `index`.
fn bits_at(pk: &PublicKey, index: u32, bits: u32) -> u8 {
    let i = (index / 8) as usize;
    let j = index % 8;
    let byte = |k: usize| u32::from(pk.0.get(k).copied().unwrap_or(0));
    let hi = ((byte(i) << j) & 0xff) >> (8 - bits);
    let lo = byte(i + 1) >> (16 - bits - j);
    (hi | lo) as u8
}

/// `announce_get_bucketnum`.
pub fn bucket_of(own: &PublicKey, pk: &PublicKey) -> usize {
    let index = first_differing_bit(own, pk) + 1;
    usize::from(
        bits_at(own, index, ANNOUNCE_BUCKET_PREFIX_LENGTH)
            ^ bits_at(pk, index, ANNOUNCE_BUCKET_PREFIX_LENGTH),
    ) % ANNOUNCE_BUCKETS
}

/// The store and its keys.
#[derive(Debug)]
pub struct AnnouncementStore {
    own_pk: PublicKey,
    auth: TimedAuthKey,
    /// Keys with requesters (`dht_get_shared_key_recv`).
    requester_keys: KeyCache,
    /// Keys with data keys (`announce->shared_keys`).
    data_keys: KeyCache,
    entries: Vec<Option<Entry>>,
    start: Timestamp,
    /// Counters: requests answered, by kind (search, retrieve, store).
    pub answered: [u64; 3],
}

impl AnnouncementStore {
    /// An empty store for our DHT key pair, started at `now`.
    pub fn new(keys: &KeyPair, now: Timestamp, rng: &mut dyn CryptoRng) -> Self {
        AnnouncementStore {
            own_pk: keys.public,
            auth: TimedAuthKey::generate(rng),
            requester_keys: KeyCache::new(keys.secret.clone()),
            data_keys: KeyCache::new(keys.secret.clone()),
            entries: vec![None; ANNOUNCE_BUCKETS * ANNOUNCE_BUCKET_SIZE],
            start: now,
            answered: [0; 3],
        }
    }

    /// Live entries.
    pub fn len(&self, now: Timestamp) -> usize {
        self.entries
            .iter()
            .flatten()
            .filter(|e| now < e.store_until)
            .count()
    }

    /// True if nothing is stored.
    pub fn is_empty(&self, now: Timestamp) -> bool {
        self.len(now) == 0
    }

    /// The data stored under `data_pk`.
    pub fn data(&self, now: Timestamp, data_pk: &PublicKey) -> Option<&[u8]> {
        self.get(now, data_pk)
            .and_then(|i| self.entries[i].as_ref())
            .map(|e| e.data.as_slice())
    }

    fn bucket(&self, pk: &PublicKey) -> std::ops::Range<usize> {
        let b = bucket_of(&self.own_pk, pk) * ANNOUNCE_BUCKET_SIZE;
        b..b + ANNOUNCE_BUCKET_SIZE
    }

    /// `get_stored`.
    fn get(&self, now: Timestamp, pk: &PublicKey) -> Option<usize> {
        self.bucket(pk).find(|&i| {
            self.entries[i]
                .as_ref()
                .is_some_and(|e| e.data_pk == *pk && now < e.store_until)
        })
    }

    /// `find_entry_slot`: the key's own entry, else an empty slot, else the entry sharing
    /// the fewest leading bits with our key if fewer than `pk` does.
    fn slot(&self, now: Timestamp, pk: &PublicKey) -> Option<usize> {
        let mut slot = None;
        let mut min_index = first_differing_bit(&self.own_pk, pk);
        for i in self.bucket(pk) {
            match &self.entries[i] {
                Some(e) if e.data_pk == *pk => return Some(i),
                Some(e) if now < e.store_until => {
                    let index = first_differing_bit(&self.own_pk, &e.data_pk);
                    if index < min_index {
                        slot = Some(i);
                        min_index = index;
                    }
                }
                _ => {
                    slot = Some(i);
                    min_index = 0;
                }
            }
        }
        slot
    }

    /// `calculate_timeout`.
    fn timeout(&self, now: Timestamp, requested: u32) -> u32 {
        let uptime = now.saturating_duration_since(self.start).as_secs();
        let max = (uptime / MAX_ANNOUNCEMENT_TIMEOUT_UPTIME_RATIO)
            .clamp(MIN_MAX_ANNOUNCEMENT_TIMEOUT, MAX_MAX_ANNOUNCEMENT_TIMEOUT);
        (max as u32).min(requested)
    }

    /// A request from `source` (a requester, or the forwarder of a forwarded request with
    /// its `sendback`): the response to send back there.
    #[allow(clippy::too_many_arguments)]
    pub fn handle(
        &mut self,
        now: Timestamp,
        source: SocketAddr,
        sendback: &[u8],
        bytes: &[u8],
        nodes: &dyn CloseNodes,
        budget: &mut KeyBudget,
        rng: &mut dyn CryptoRng,
    ) -> Result<Vec<u8>, StoreError> {
        let mut r = Reader::new(bytes);
        let k = r.u8().map_err(|_| StoreError::UnknownKind)?;
        let (response_kind, slot) = match k {
            DATA_SEARCH_REQUEST => (DATA_SEARCH_RESPONSE, 0),
            DATA_RETRIEVE_REQUEST => (DATA_RETRIEVE_RESPONSE, 1),
            STORE_ANNOUNCE_REQUEST => (STORE_ANNOUNCE_RESPONSE, 2),
            _ => return Err(StoreError::UnknownKind),
        };
        if bytes.len() < HEADER + 8 || bytes.len() > MAX_FORWARD_DATA_SIZE {
            return Err(StoreError::BadLength);
        }
        if sendback.len() > MAX_SENDBACK_SIZE {
            return Err(StoreError::BadLength);
        }
        let requester = PublicKey(r.array().map_err(|_| StoreError::BadLength)?);
        let nonce = Nonce(r.array().map_err(|_| StoreError::BadLength)?);
        let boxed = r.rest();
        let key = self
            .requester_keys
            .get_within(now, &requester, budget)?
            .clone();
        let plain = key
            .decrypt(&nonce, boxed)
            .map_err(|_| StoreError::Decrypt)?;
        let (body, ping) = plain
            .split_at_checked(plain.len().wrapping_sub(8))
            .ok_or(StoreError::Decrypt)?;
        let data_pk = PublicKey(
            Reader::new(body)
                .array()
                .map_err(|_| StoreError::BadLength)?,
        );
        let mut to_auth =
            Vec::with_capacity(2 * PUBLIC_KEY_SIZE + MAX_PACKED_IPPORT_SIZE + sendback.len());
        to_auth.extend_from_slice(data_pk.as_bytes());
        to_auth.extend_from_slice(requester.as_bytes());
        encode_udp_addr(source, &mut to_auth);
        to_auth.extend_from_slice(sendback);
        let mut reply = match k {
            DATA_SEARCH_REQUEST => self.search(now, source, body, &data_pk, &to_auth, nodes)?,
            DATA_RETRIEVE_REQUEST => self.retrieve(now, body, &data_pk, &to_auth)?,
            _ => self.store(now, body, &data_pk, &to_auth, budget)?,
        };
        reply.extend_from_slice(ping);
        let nonce = Nonce::random(rng);
        let mut out = Vec::with_capacity(HEADER + reply.len());
        out.push(response_kind);
        out.extend_from_slice(self.own_pk.as_bytes());
        out.extend_from_slice(&nonce.0);
        out.extend_from_slice(&key.encrypt(&nonce, &reply));
        if out.len() > MAX_FORWARD_DATA_SIZE {
            return Err(StoreError::BadLength);
        }
        self.answered[slot] += 1;
        Ok(out)
    }

    /// `create_reply_plain_data_search_request`.
    fn search(
        &self,
        now: Timestamp,
        source: SocketAddr,
        body: &[u8],
        data_pk: &PublicKey,
        to_auth: &[u8],
        nodes: &dyn CloseNodes,
    ) -> Result<Vec<u8>, StoreError> {
        let previous_hash = match body.len() {
            PUBLIC_KEY_SIZE => None,
            n if n == PUBLIC_KEY_SIZE + SHA256_SIZE => body.get(PUBLIC_KEY_SIZE..),
            _ => return Err(StoreError::BadLength),
        };
        let mut reply = Vec::with_capacity(PUBLIC_KEY_SIZE + 69 + MAX_SENT_NODES * 51);
        reply.extend_from_slice(data_pk.as_bytes());
        match self
            .get(now, data_pk)
            .and_then(|i| self.entries[i].as_ref())
        {
            None => reply.push(0),
            Some(e) => {
                reply.push(1);
                reply.extend_from_slice(&Sha256::digest(&e.data));
            }
        }
        reply.extend_from_slice(&self.auth.generate_auth(now, DATA_SEARCH_TIMEOUT, to_auth));
        reply.push(u8::from(self.slot(now, data_pk).is_some()));
        let mut close = nodes.closest_nodes(now, data_pk, crate::dht::lan::is_lan(source.ip()));
        close.retain(|n| !n.tcp && n.addr.port() != 0);
        close.truncate(MAX_SENT_NODES);
        reply.push(close.len() as u8);
        for n in &close {
            PackedNode::encode(n, &mut reply);
        }
        if previous_hash.is_some_and(|h| h == Sha256::digest(&reply).as_slice()) {
            reply.truncate(PUBLIC_KEY_SIZE);
        }
        Ok(reply)
    }

    /// `create_reply_plain_data_retrieve_request`.
    fn retrieve(
        &self,
        now: Timestamp,
        body: &[u8],
        data_pk: &PublicKey,
        to_auth: &[u8],
    ) -> Result<Vec<u8>, StoreError> {
        if body.len() != PUBLIC_KEY_SIZE + 1 + TIMED_AUTH_SIZE
            || body.get(PUBLIC_KEY_SIZE) != Some(&0)
        {
            return Err(StoreError::BadLength);
        }
        let auth = body.get(PUBLIC_KEY_SIZE + 1..).unwrap_or_default();
        if !self.auth.check(now, DATA_SEARCH_TIMEOUT, to_auth, auth) {
            return Err(StoreError::BadAuth);
        }
        let e = self
            .get(now, data_pk)
            .and_then(|i| self.entries[i].as_ref())
            .ok_or(StoreError::NotStored)?;
        let mut reply = Vec::with_capacity(PUBLIC_KEY_SIZE + 1 + e.data.len());
        reply.extend_from_slice(data_pk.as_bytes());
        reply.push(1);
        reply.extend_from_slice(&e.data);
        Ok(reply)
    }

    /// `create_reply_plain_store_announce_request`.
    fn store(
        &mut self,
        now: Timestamp,
        body: &[u8],
        data_pk: &PublicKey,
        to_auth: &[u8],
        budget: &mut KeyBudget,
    ) -> Result<Vec<u8>, StoreError> {
        let short = |_| StoreError::BadLength;
        let mut r = Reader::new(body);
        let _data_pk: [u8; PUBLIC_KEY_SIZE] = r.array().map_err(short)?;
        let nonce = Nonce(r.array().map_err(short)?);
        let boxed = r.rest();
        if boxed.len() < MAC_SIZE + TIMED_AUTH_SIZE + 4 + 1 {
            return Err(StoreError::BadLength);
        }
        let key: PrecomputedKey = self.data_keys.get_within(now, data_pk, budget)?.clone();
        let plain = key
            .decrypt(&nonce, boxed)
            .map_err(|_| StoreError::Decrypt)?;
        let mut r = Reader::new(&plain);
        let auth: [u8; TIMED_AUTH_SIZE] = r.array().map_err(short)?;
        let requested = r.u32_be().map_err(short)?;
        let kind = r.u8().map_err(short)?;
        let announcement = r.rest();
        let timeout = self.timeout(now, requested);
        if !self.auth.check(now, DATA_SEARCH_TIMEOUT, to_auth, &auth) {
            return Err(StoreError::BadAuth);
        }
        let until = now + Duration::from_secs(u64::from(timeout));
        match kind {
            1 => {
                if announcement.len() != SHA256_SIZE {
                    return Err(StoreError::BadAnnouncement);
                }
                let i = self.get(now, data_pk).ok_or(StoreError::NotStored)?;
                let e = self.entries[i].as_mut().ok_or(StoreError::NotStored)?;
                if Sha256::digest(&e.data).as_slice() != announcement {
                    self.entries[i] = None;
                    return Err(StoreError::HashMismatch);
                }
                e.store_until = until;
            }
            0 => {
                if announcement.len() > MAX_ANNOUNCEMENT_SIZE {
                    return Err(StoreError::BadAnnouncement);
                }
                let i = self.slot(now, data_pk).ok_or(StoreError::Full)?;
                self.entries[i] = Some(Entry {
                    store_until: until,
                    data_pk: *data_pk,
                    data: announcement.to_vec(),
                });
            }
            _ => return Err(StoreError::BadAnnouncement),
        }
        let mut reply = Vec::with_capacity(PUBLIC_KEY_SIZE + 12);
        reply.extend_from_slice(data_pk.as_bytes());
        reply.extend_from_slice(&timeout.to_be_bytes());
        reply.extend_from_slice(&now.as_secs().to_be_bytes());
        Ok(reply)
    }
}

#[cfg(test)]
mod tests;
