//! The onion relay: what every DHT node does for onion paths through it (docs/protocol.md §6.2;
//! c-toxcore 0.2.18 `onion.c` `handle_send_*`, `handle_recv_*`, `change_symmetric_key`).
//!
//! * A request (0x80/0x81/0x82) is opened with `beforenm(packet pk, our DHT sk)`, taken from
//!   one bounded key cache per layer (0.2.18 keeps `shared_keys_1/2/3` apart too, so a flood of
//!   fresh path keys at one layer cannot evict the clients' keys at another), and forwarded
//!   with our sendback appended.
//! * A response (0x8c/0x8d/0x8e) is forwarded only if its sendback opens under our current
//!   symmetric key: only paths we built can use us on the way back.
//! * The symmetric key is replaced when [`KEY_REFRESH_INTERVAL`] has passed since it was made,
//!   checked on every onion packet (as 0.2.18) and on [`Relay::handle_timeout`]. The old
//!   key is dropped at once, so paths through us stop working; clients replace paths after
//!   at most `ONION_PATH_MAX_LIFETIME` = 1200 s anyway.
//!
//! Every forward is smaller than what caused it (8 bytes at A and B, 33 at C, 59 or 60 per
//! response hop), so a relay reflects but never amplifies. Nothing goes to port 0.

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, Nonce, SymmetricKey, NONCE_SIZE};
use rustox_net_crypto::Timestamp;

use super::{OnionDrop, OnionOutput, OnionStats};
use crate::dht::gate::Transmit;
use crate::dht::key_cache::{KeyBudget, KeyCache, WithinBudget};
use crate::onion::wire::ip_port::{IpPort, SIZE_IPPORT};
use crate::onion::wire::request::{Hop, RequestLayer};
use crate::onion::wire::response::{self, ResponseLayer};
use crate::onion::wire::sendback::{self, ReturnLevel};
use crate::onion::wire::{kind, ONION_MAX_PACKET_SIZE, RETURN_1, SEND_BASE};

/// `KEY_REFRESH_INTERVAL` (`onion.c`): 2 h. (The spec says one hour; the code says two.)
pub const KEY_REFRESH_INTERVAL: Duration = Duration::from_secs(2 * 60 * 60);

/// Sendback key and layer-key caches.
#[derive(Debug)]
pub struct Relay {
    sendback_key: SymmetricKey,
    key_made: Timestamp,
    caches: [KeyCache; 3],
}

impl Relay {
    /// A relay for our DHT key pair.
    pub fn new(keys: &KeyPair, now: Timestamp, rng: &mut dyn CryptoRng) -> Self {
        Relay {
            sendback_key: SymmetricKey::generate(rng),
            key_made: now,
            caches: std::array::from_fn(|_| KeyCache::new(keys.secret.clone())),
        }
    }

    /// When the sendback key is next replaced.
    pub fn next_refresh(&self) -> Timestamp {
        self.key_made + KEY_REFRESH_INTERVAL
    }

    /// Replaces the sendback key if it is due (`change_symmetric_key`); true if it was.
    pub fn handle_timeout(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) -> bool {
        if now < self.next_refresh() {
            return false;
        }
        self.sendback_key = SymmetricKey::generate(rng);
        self.key_made = now;
        true
    }

    /// The current sendback key (tests forge sendbacks with it).
    #[cfg(test)]
    pub(super) fn sendback_key(&self) -> &SymmetricKey {
        &self.sendback_key
    }

    /// Key agreements computed by the layer caches.
    pub fn key_agreements(&self) -> u64 {
        self.caches.iter().map(|c| c.computed).sum()
    }

    /// 0x80/0x81/0x82 from `from`: open our layer (a key not cached takes from `budget`),
    /// forward with our sendback.
    pub(super) fn handle_request(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        budget: &mut KeyBudget,
        stats: &mut OnionStats,
        rng: &mut dyn CryptoRng,
    ) -> Result<Transmit, OnionDrop> {
        let layer = RequestLayer::parse(bytes)?;
        let i = match layer.hop {
            Hop::A => 0,
            Hop::B => 1,
            Hop::C => 2,
        };
        if self.handle_timeout(now, rng) {
            stats.key_refreshes += 1;
        }
        let opened = layer.open(self.caches[i].get_within(now, &layer.pk, budget)?)?;
        if opened.next.port() == 0 {
            return Err(OnionDrop::ToPortZero);
        }
        let nonce = Nonce::random(rng);
        let payload = opened.forward(
            &IpPort::Udp(from),
            layer.sendback,
            &self.sendback_key,
            &nonce,
        )?;
        stats.requests_relayed[i] += 1;
        Ok(Transmit {
            dst: opened.next,
            payload,
        })
    }

    /// A request from a client of our TCP relay (TCP packet 8), for which we are hop A
    /// (`onion_send_1`): `plain` is `[ipport B][PK2][E(k2)[..]]`, what our layer of a 0x80
    /// would have held, and `source` the sendback address naming the client's connection.
    /// Sent on as 0x81 with our sendback.
    pub(super) fn handle_tcp_request(
        &mut self,
        now: Timestamp,
        source: &IpPort,
        nonce: &Nonce,
        plain: &[u8],
        stats: &mut OnionStats,
        rng: &mut dyn CryptoRng,
    ) -> Result<Transmit, OnionDrop> {
        // 0.2.18's bounds: more than an address and two layers' overhead, and a 0x81 of at
        // most ONION_MAX_PACKET_SIZE once the header and our sendback are added.
        if plain.len() <= SIZE_IPPORT + 2 * SEND_BASE
            || plain.len() > ONION_MAX_PACKET_SIZE + SIZE_IPPORT - (1 + NONCE_SIZE + RETURN_1)
        {
            return Err(OnionDrop::BadLength);
        }
        let next = IpPort::decode_udp(plain).map_err(|_| OnionDrop::BadAddress)?;
        if next.port() == 0 {
            return Err(OnionDrop::ToPortZero);
        }
        if self.handle_timeout(now, rng) {
            stats.key_refreshes += 1;
        }
        let mut payload = Vec::with_capacity(1 + NONCE_SIZE + plain.len() - SIZE_IPPORT + RETURN_1);
        payload.push(kind::REQUEST_1);
        payload.extend_from_slice(&nonce.0);
        payload.extend_from_slice(&plain[SIZE_IPPORT..]);
        sendback::seal_into(
            &mut payload,
            ReturnLevel::One,
            &self.sendback_key,
            &Nonce::random(rng),
            source,
            &[],
        )
        .map_err(|_| OnionDrop::BadSendback)?;
        Ok(Transmit { dst: next, payload })
    }

    /// 0x8c/0x8d/0x8e: open our sendback, pass the response to the hop it names: a UDP
    /// address, or (at level one) a client of our TCP relay.
    pub(super) fn handle_response(
        &mut self,
        now: Timestamp,
        bytes: &[u8],
        stats: &mut OnionStats,
        rng: &mut dyn CryptoRng,
    ) -> Result<OnionOutput, OnionDrop> {
        let layer = ResponseLayer::parse(bytes)?;
        if self.handle_timeout(now, rng) {
            stats.key_refreshes += 1;
        }
        let opened = sendback::open(layer.level, &self.sendback_key, layer.sendback)
            .map_err(|_| OnionDrop::BadSendback)?;
        let dst = match (layer.level, opened.prev) {
            (_, IpPort::Udp(a)) => a,
            // A's sendback may name a client of our TCP server (0.2.18 reads it without the
            // family check and hands any non-UDP family to `recv_1_function`).
            (ReturnLevel::One, dest) => {
                stats.responses_relayed[2] += 1;
                return Ok(OnionOutput::TcpClient {
                    dest,
                    response: layer.response.to_vec(),
                });
            }
            (_, _) => return Err(OnionDrop::BadAddress),
        };
        if dst.port() == 0 {
            return Err(OnionDrop::ToPortZero);
        }
        let (payload, i) = match layer.level {
            ReturnLevel::Three => (
                response::encode(ReturnLevel::Two, &opened.inner, layer.response),
                0,
            ),
            ReturnLevel::Two => (
                response::encode(ReturnLevel::One, &opened.inner, layer.response),
                1,
            ),
            ReturnLevel::One => (Some(layer.response.to_vec()), 2),
        };
        let payload = payload.ok_or(OnionDrop::BadLength)?;
        stats.responses_relayed[i] += 1;
        Ok(OnionOutput::Udp(Transmit { dst, payload }))
    }
}
