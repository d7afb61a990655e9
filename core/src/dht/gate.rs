//! The gate between raw datagrams and the DHT state machine: admission (per-source limits,
//! then a budget of key agreements for all sources together, key_cache.rs), decryption on
//! the way in, encryption and amplification checks on the way out.
//!
//! It is split from [`super::node::DhtNode`] so a multi-worker driver can give every worker
//! its own gate (own key cache, own RNG, no lock) and hold the shared node's lock only for
//! the table work: the key agreement and the two boxes — most of a packet's CPU — then run
//! in parallel. A single-threaded user never sees it: `DhtNode::handle_datagram` and
//! `poll_transmit` use the node's own gate.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{
    CryptoRng, KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey,
};
use rustox_net_crypto::Timestamp;

use super::key_cache::{KeyBudget, KeyCache, KeyRefusal, WithinBudget};
use super::source_guard::{GuardConfig, Refusal, SourceGuard};
use super::wire::crypto_request::{self, RequestEnvelope};
use super::wire::dht_packet::{DhtMessage, Envelope};
use super::wire::packed_node::canonical;
use super::wire::{bootstrap_info, kind, lan_discovery, WireError};

/// A datagram that passed the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A ping or node-list packet, decrypted.
    Dht {
        /// Its sender.
        sender: PublicKey,
        /// The message.
        msg: DhtMessage,
    },
    /// A 0x20 request addressed to us, decrypted.
    Request {
        /// Its sender.
        sender: PublicKey,
        /// The request id (254 NAT ping, 156 DHT-PK, ...).
        request_id: u8,
        /// The data after the id.
        data: Vec<u8>,
    },
    /// A 0x20 request for someone else: to be routed unchanged.
    Route {
        /// Its receiver.
        receiver: PublicKey,
        /// The whole datagram.
        packet: Vec<u8>,
    },
    /// LAN discovery from `pk`.
    Lan {
        /// The sender's DHT key.
        pk: PublicKey,
    },
    /// A bootstrap-info request.
    BootstrapInfo,
}

/// A packet the node wants sent, before encryption.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutPacket {
    /// A generic DHT packet to `to`.
    Dht {
        /// The receiver's key.
        to: PublicKey,
        /// The message.
        msg: DhtMessage,
    },
    /// A 0x20 request whose box is for `to` (it may travel through another node).
    Request {
        /// The final receiver.
        to: PublicKey,
        /// Request id.
        request_id: u8,
        /// Data.
        data: Vec<u8>,
    },
    /// Bytes sent as they are.
    Raw(Vec<u8>),
}

/// An output of the node: where, what, and whether it answers an unverified source (then
/// the amplification limit applies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Destination.
    pub dst: SocketAddr,
    /// Contents.
    pub packet: OutPacket,
    /// True for a reply to whoever sent a request.
    pub reply: bool,
}

/// A datagram ready for the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Destination.
    pub dst: SocketAddr,
    /// Bytes.
    pub payload: Vec<u8>,
}

/// Why a datagram was dropped at the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// The source is over its datagram rate.
    #[error("source over its rate limit")]
    RateLimited,
    /// The bytes do not parse or do not open.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A packet that claims to come from our own key.
    #[error("packet from our own key")]
    FromSelf,
    /// A datagram from UDP port 0: no reply can reach it (a spoofed or broken source), and
    /// answering one only makes the OS refuse the send.
    #[error("datagram from port 0")]
    FromPortZero,
    /// A sender key of low order, refused as libsodium's `crypto_box_beforenm` refuses it
    /// (no key agreed with it is secret).
    #[error(transparent)]
    LowOrderPublicKey(#[from] LowOrderPublicKey),
    /// A sender key not cached, while the key agreements of all sources together are spent
    /// ([`GuardConfig::key_agreements`]).
    #[error("key-agreement budget spent")]
    KeyBudget,
}

impl From<KeyRefusal> for GateError {
    fn from(e: KeyRefusal) -> Self {
        match e {
            KeyRefusal::LowOrder(e) => GateError::LowOrderPublicKey(e),
            KeyRefusal::OverBudget => GateError::KeyBudget,
        }
    }
}

/// Counters of one gate; a driver sums its workers' gates when reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateStats {
    /// Datagrams received.
    pub datagrams_in: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Datagrams dropped by the rate limit.
    pub rate_limited: u64,
    /// Datagrams that did not parse or open.
    pub malformed: u64,
    /// Datagrams of kinds a DHT node does not handle (onion, net_crypto, announcements).
    pub unsupported: u64,
    /// Datagrams from UDP port 0, dropped on arrival.
    pub from_port_zero: u64,
    /// Datagrams dropped, received or about to be sent, because the peer's key has low order.
    pub low_order_keys: u64,
    /// Datagrams dropped because their sender's key was not cached and the key-agreement
    /// budget was spent.
    pub key_budget: u64,
    /// Replies not sent because of the amplification limit.
    pub amplification_refused: u64,
    /// Datagrams sent.
    pub datagrams_out: u64,
    /// Bytes sent.
    pub bytes_out: u64,
}

impl std::ops::AddAssign for GateStats {
    fn add_assign(&mut self, o: Self) {
        self.datagrams_in += o.datagrams_in;
        self.bytes_in += o.bytes_in;
        self.rate_limited += o.rate_limited;
        self.malformed += o.malformed;
        self.unsupported += o.unsupported;
        self.from_port_zero += o.from_port_zero;
        self.low_order_keys += o.low_order_keys;
        self.key_budget += o.key_budget;
        self.amplification_refused += o.amplification_refused;
        self.datagrams_out += o.datagrams_out;
        self.bytes_out += o.bytes_out;
    }
}

/// Per-thread admission and crypto.
#[derive(Debug)]
pub struct Gate {
    own: PublicKey,
    cache: KeyCache,
    guard: SourceGuard,
    /// Key agreements for received datagrams that the cache does not save.
    budget: KeyBudget,
    /// Counters.
    pub stats: GateStats,
}

impl Gate {
    /// A gate for our key pair.
    pub fn new(keys: &KeyPair, guard: GuardConfig, rng: &mut dyn CryptoRng) -> Self {
        Gate {
            own: keys.public,
            cache: KeyCache::new(keys.secret.clone()),
            guard: SourceGuard::new(guard, rng),
            budget: KeyBudget::new(guard.key_agreements),
            stats: GateStats::default(),
        }
    }

    /// Key agreements computed so far.
    pub fn key_agreements(&self) -> u64 {
        self.cache.computed
    }

    /// Admits, parses and decrypts one datagram.
    pub fn open(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
    ) -> Result<Incoming, GateError> {
        let from = canonical(from);
        self.stats.datagrams_in += 1;
        self.stats.bytes_in += bytes.len() as u64;
        if from.port() == 0 {
            self.stats.from_port_zero += 1;
            return Err(GateError::FromPortZero);
        }
        // Kinds a DHT node does not handle (onion, net_crypto, announcements) are dropped
        // here for the price of one compare, and spend none of the source's allowance: a
        // c-toxcore client sends a bootstrap node bursts of onion packets at start-up
        // (195 of 313 datagrams in tests/interop_dht.rs), and they must not crowd out its
        // get-nodes.
        let k = bytes.first().copied().unwrap_or(0xff);
        if !matches!(
            k,
            kind::PING_REQUEST
                | kind::PING_RESPONSE
                | kind::NODES_REQUEST
                | kind::NODES_RESPONSE
                | kind::CRYPTO_REQUEST
                | kind::LAN_DISCOVERY
                | kind::BOOTSTRAP_INFO
        ) {
            self.stats.unsupported += 1;
            return Err(WireError::UnknownKind(k).into());
        }
        if self.guard.on_receive(now, from.ip(), bytes.len()).is_err() {
            self.stats.rate_limited += 1;
            return Err(GateError::RateLimited);
        }
        let result = self.parse(now, bytes);
        match result {
            Err(GateError::Wire(WireError::UnknownKind(_))) => self.stats.unsupported += 1,
            Err(GateError::Wire(_)) => self.stats.malformed += 1,
            Err(GateError::LowOrderPublicKey(_)) => self.stats.low_order_keys += 1,
            Err(GateError::KeyBudget) => self.stats.key_budget += 1,
            _ => {}
        }
        result
    }

    fn parse(&mut self, now: Timestamp, bytes: &[u8]) -> Result<Incoming, GateError> {
        let k = *bytes
            .first()
            .ok_or(WireError::BadLength { kind: 0, len: 0 })?;
        match k {
            kind::PING_REQUEST
            | kind::PING_RESPONSE
            | kind::NODES_REQUEST
            | kind::NODES_RESPONSE => {
                let env = Envelope::parse(bytes)?;
                if env.sender == self.own {
                    return Err(GateError::FromSelf);
                }
                let key = self.cache.get_within(now, &env.sender, &mut self.budget)?;
                let msg = env.open(key)?;
                Ok(Incoming::Dht {
                    sender: env.sender,
                    msg,
                })
            }
            kind::CRYPTO_REQUEST => {
                let env = RequestEnvelope::parse(bytes)?;
                if env.receiver != self.own {
                    return Ok(Incoming::Route {
                        receiver: env.receiver,
                        packet: bytes.to_vec(),
                    });
                }
                if env.sender == self.own {
                    return Err(GateError::FromSelf);
                }
                let key = self.cache.get_within(now, &env.sender, &mut self.budget)?;
                let (request_id, data) = env.open(key)?;
                Ok(Incoming::Request {
                    sender: env.sender,
                    request_id,
                    data,
                })
            }
            kind::LAN_DISCOVERY => {
                let pk = lan_discovery::decode(bytes)?;
                if pk == self.own {
                    return Err(GateError::FromSelf);
                }
                Ok(Incoming::Lan { pk })
            }
            kind::BOOTSTRAP_INFO if bootstrap_info::is_request(bytes) => {
                Ok(Incoming::BootstrapInfo)
            }
            kind::BOOTSTRAP_INFO => Err(WireError::BadLength {
                kind: k,
                len: bytes.len(),
            }
            .into()),
            other => Err(WireError::UnknownKind(other).into()),
        }
    }

    /// The shared key with a receiver; `None`, counted, for a low-order key.
    fn receiver_key(&mut self, now: Timestamp, to: &PublicKey) -> Option<&PrecomputedKey> {
        match self.cache.get(now, to) {
            Ok(key) => Some(key),
            Err(LowOrderPublicKey) => {
                self.stats.low_order_keys += 1;
                None
            }
        }
    }

    /// Encrypts one output; `None` if the amplification limit refuses a reply, or the
    /// receiver's key has low order (counted).
    pub fn seal(
        &mut self,
        now: Timestamp,
        out: Outgoing,
        rng: &mut dyn CryptoRng,
    ) -> Option<Transmit> {
        let own = self.own;
        let payload = match out.packet {
            OutPacket::Raw(bytes) => bytes,
            OutPacket::Dht { to, msg } => {
                let key = self.receiver_key(now, &to)?;
                msg.seal(&own, key, &Nonce::random(rng))
            }
            OutPacket::Request {
                to,
                request_id,
                data,
            } => {
                let key = self.receiver_key(now, &to)?;
                crypto_request::seal(&to, &own, key, &Nonce::random(rng), request_id, &data)?
            }
        };
        if out.reply {
            if let Err(Refusal::Amplification) | Err(Refusal::RateLimited) =
                self.guard.on_reply(out.dst.ip(), payload.len())
            {
                self.stats.amplification_refused += 1;
                return None;
            }
        }
        self.stats.datagrams_out += 1;
        self.stats.bytes_out += payload.len() as u64;
        Some(Transmit {
            dst: out.dst,
            payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dht::wire::ping::Ping;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn nothing_is_sealed_to_a_low_order_key() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let keys = KeyPair::generate(&mut rng);
        let mut gate = Gate::new(&keys, GuardConfig::default(), &mut rng);
        let now = Timestamp::from_secs(1);
        let ping = DhtMessage::Ping(Ping {
            response: false,
            id: 1,
        });
        let out = |to: PublicKey| Outgoing {
            dst: "192.0.2.1:33445".parse().unwrap(),
            packet: OutPacket::Dht {
                to,
                msg: ping.clone(),
            },
            reply: false,
        };
        // 0, a point of order 4, then an ordinary key.
        assert!(gate.seal(now, out(PublicKey([0; 32])), &mut rng).is_none());
        let request = Outgoing {
            packet: OutPacket::Request {
                to: PublicKey([0; 32]),
                request_id: 156,
                data: vec![1; 40],
            },
            ..out(PublicKey([0; 32]))
        };
        assert!(gate.seal(now, request, &mut rng).is_none());
        assert_eq!(gate.stats.low_order_keys, 2);
        let peer = KeyPair::generate(&mut rng).public;
        assert!(gate.seal(now, out(peer), &mut rng).is_some());
        assert_eq!(gate.stats.datagrams_out, 1);
    }
}
