//! Onion data (docs/protocol.md §6.3–§6.5; c-toxcore 0.2.18 `onion_client.c` `send_onion_data`,
//! `handle_data_response`, `send_dhtpk_announce`, `handle_dhtpk_announce`).
//!
//! Sending: the payload is sealed once to the friend's real key under our real key (the
//! inner layer), then for every node that reported the friend's data key, sealed to that
//! data key under a one-time key pair (0x85) and sent through a random friend path. As in
//! 0.2.18 nothing is sent unless at least `(live nodes − 1) / 4 + 1` of the friend's nodes
//! know its data key.
//!
//! Receiving 0x86: the outer layer opens with our data secret key, the inner one with
//! `beforenm(sender real pk, our real sk)`; the first byte picks the handler: 0x9c DHT-PK
//! (friends only, `no_replay` checked), 32 friend request (anyone; the Node filters).
//!
//! Each 0x86 costs a key agreement with a temporary key that senders make fresh for every
//! packet, so no cache saves it, and one more with a stranger's real key. Before either, the
//! source (the first relay of one of our paths, or a TCP relay) must be within its own rate,
//! and then the agreements of all sources together within a budget ([`DATA_LIMITS`]), so
//! that a flood of them costs bounded CPU.

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, Nonce, PrecomputedKey, PublicKey};
use rustox_net_crypto::Timestamp;

use super::search::DHTPK_RETRY;
use super::{OnionClient, OnionClientDrop, OnionClientError, OnionEvent};
use crate::dht::key_cache::KeyAgreementLimit;
use crate::dht::source_guard::GuardConfig;
use crate::friend::dht_pk::{DhtPkAnnounce, CRYPTO_PACKET_DHTPK};
use crate::friend::request::CRYPTO_PACKET_FRIEND_REQ;
use crate::onion::wire::data::{self, DataError, DataResponse, ONION_CLIENT_MAX_DATA_SIZE};

/// Limits on onion data received (0x86). Honest onion data comes in bursts: each friend
/// announces its DHT key through every node that knows our data key
/// (`ONION_DHTPK_SEND_INTERVAL` = 30 s apart) and friends coming online do it at once, all
/// through the first relays of our few paths — so 100 friends are up to 800 packets from two
/// or three sources within a second or two (auto_tests/tests/idle.rs: at 32/s per source
/// and 100 agreements a second, a hundred friends took 78 s to come online instead of the
/// usual seconds). A source gets 512/s after a burst of 2048, in a table of 256 slots (it
/// needs to tell apart a handful of relays from an attacker, not thousands of peers); all
/// sources together get the key-agreement budget of the other layers, 1000 at once and then
/// 1000 a second (each packet needs one with its fresh temporary key, a stranger's friend
/// request one more): at 73–90 µs each on this project's VM, under 10 % of a core.
pub const DATA_LIMITS: GuardConfig = GuardConfig {
    rate: Some(512.0),
    burst: 2048.0,
    slots: 256,
    key_agreements: Some(KeyAgreementLimit {
        burst: 1000,
        interval: Duration::from_millis(1),
    }),
};

impl OnionClient {
    /// Sends onion data (e.g. a friend request, first byte 32) to `friend` through every
    /// node that knows its data key. Returns how many 0x85 went out (0 if no path could be
    /// built).
    pub fn send_data(
        &mut self,
        now: Timestamp,
        friend: &PublicKey,
        payload: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<usize, OnionClientError> {
        if payload.is_empty() || payload.len() > ONION_CLIENT_MAX_DATA_SIZE {
            return Err(OnionClientError::DataSize(payload.len()));
        }
        let f = self
            .friends
            .get(friend)
            .ok_or(OnionClientError::UnknownFriend)?;
        let live: Vec<_> = f.list.nodes.iter().filter(|n| !n.timed_out(now)).collect();
        let good: Vec<_> = live
            .iter()
            .filter(|n| n.is_stored)
            .filter_map(|n| Some((n.addr, n.data_pk?)))
            .collect();
        if live.is_empty() || good.len() < (live.len() - 1) / 4 + 1 {
            return Err(OnionClientError::NotFound);
        }
        let nonce = Nonce::random(rng);
        let inner = data::seal_inner(&self.real_keys.public, &f.shared, &nonce, payload)
            .map_err(|_| OnionClientError::DataSize(payload.len()))?;
        let mut sent = 0;
        for (addr, data_pk) in good {
            let Some(num) = self
                .paths_friends
                .pick(now, None, &mut self.path_nodes, rng)
            else {
                self.stats.no_path += 1;
                continue;
            };
            let Ok(request) = data::seal_request(friend, &data_pk, &nonce, &inner, rng) else {
                continue;
            };
            let Some(path) = self.paths_friends.path(num) else {
                continue;
            };
            let first = path.nodes()[0];
            let packet = if first.tcp {
                path.tcp_request(addr, &request, rng)
            } else {
                path.request(addr, &request, rng)
            };
            let Ok(packet) = packet else {
                continue;
            };
            self.push_on_path(first, packet);
            self.stats.data_sent += 1;
            sent += 1;
        }
        self.forget_dead_paths();
        Ok(sent)
    }

    /// Our DHT-PK announcement as of `now`: the same content goes by both routes (the Node
    /// seals it for the DHT route, docs/protocol.md §6.4).
    pub fn dht_pk_announce(&self, now: Timestamp) -> DhtPkAnnounce {
        DhtPkAnnounce {
            no_replay: self.no_replay(now),
            dht_pk: self.dht_pk,
            nodes: self.dht_pk_nodes.clone(),
        }
    }

    /// `send_dhtpk_announce` through the onion: our DHT key and the nodes the Node gave us.
    /// Returns true if at least one packet went out; otherwise the next try waits
    /// [`DHTPK_RETRY`] (or the next answer from a node that knows the friend).
    pub(super) fn send_dht_pk(
        &mut self,
        now: Timestamp,
        friend: &PublicKey,
        rng: &mut dyn CryptoRng,
    ) -> bool {
        let announce = self.dht_pk_announce(now);
        let sent = match announce.encode() {
            Ok(bytes) => self.send_data(now, friend, &bytes, rng).unwrap_or(0),
            Err(_) => 0,
        };
        let Some(f) = self.friends.get_mut(friend) else {
            return false;
        };
        if sent > 0 {
            f.last_dht_pk_sent = Some(now);
            f.dht_pk_sends = f.dht_pk_sends.saturating_add(1);
            self.stats.dht_pk_sent += 1;
            true
        } else {
            f.dht_pk_retry = now + DHTPK_RETRY;
            false
        }
    }

    /// A 0x86.
    pub(super) fn handle_data_response(
        &mut self,
        now: Timestamp,
        source: SocketAddr,
        bytes: &[u8],
    ) -> Result<(), OnionClientDrop> {
        let response = DataResponse::parse(bytes).map_err(data_drop)?;
        if self
            .data_guard
            .on_receive(now, source.ip(), bytes.len())
            .is_err()
        {
            return Err(OnionClientDrop::RateLimited);
        }
        if !self.data_budget.admit(now) {
            return Err(OnionClientDrop::KeyBudget);
        }
        let inner = response.open(&self.data_keys.secret).map_err(data_drop)?;
        let from = inner.sender_real_pk;
        let plain = match self.friends.get(&from) {
            Some(f) => inner.open(&f.shared),
            None => {
                if !self.data_budget.admit(now) {
                    return Err(OnionClientDrop::KeyBudget);
                }
                inner.open(&PrecomputedKey::new(&from, &self.real_keys.secret)?)
            }
        }
        .map_err(data_drop)?;
        match plain.first() {
            Some(&CRYPTO_PACKET_DHTPK) => {
                let f = self
                    .friends
                    .get_mut(&from)
                    .ok_or(OnionClientDrop::NotFriend)?;
                let announce =
                    DhtPkAnnounce::decode(&plain).map_err(|_| OnionClientDrop::BadDhtPk)?;
                f.no_replay
                    .check(announce.no_replay)
                    .map_err(|_| OnionClientDrop::Replayed)?;
                f.dht_pk = Some(announce.dht_pk);
                self.stats.dht_pk_accepted += 1;
                self.push_event(OnionEvent::FriendDhtPk {
                    friend: from,
                    dht_pk: announce.dht_pk,
                    nodes: announce.nodes,
                });
                Ok(())
            }
            Some(&CRYPTO_PACKET_FRIEND_REQ) => {
                self.stats.friend_requests += 1;
                self.push_event(OnionEvent::FriendRequest {
                    from,
                    payload: plain[1..].to_vec(),
                });
                Ok(())
            }
            _ => Err(OnionClientDrop::UnknownDataKind),
        }
    }
}

fn data_drop(e: DataError) -> OnionClientDrop {
    match e {
        DataError::UnknownKind(_) => OnionClientDrop::UnknownKind,
        DataError::BadLength { .. } | DataError::DataSize(_) => OnionClientDrop::BadLength,
        DataError::Decrypt => OnionClientDrop::Decrypt,
        DataError::LowOrderKey => OnionClientDrop::LowOrderKey,
    }
}
