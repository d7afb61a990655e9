//! The services c-toxcore 0.2.18 builds into every node besides the DHT and the onion:
//! forwarding (UDP 0x90–0x92, `forwarding`) and the DHT announcement store (0x93–0x98,
//! `store`), sans-IO. [`AnnounceServer::handle_datagram`] takes one datagram and returns
//! the one datagram (or TCP relay packet) it causes, or why it was dropped; every outcome is
//! counted in [`AnnounceStats`].
//!
//! Against abuse, as the onion server: datagrams from port 0 are dropped; a per-source rate
//! limit runs before any decryption; key agreements that no cached key saves take from one
//! budget of all sources; and every reply to the address a datagram came from is held to the
//! source's amplification credit (`SourceGuard::on_reply`), since a search reply is up to 3.4×
//! its request and c-toxcore answers any source.

pub(crate) mod forwarding;
pub(crate) mod store;
pub(crate) mod timed_auth;

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair};
use rustox_net_crypto::Timestamp;

use crate::dht::gate::Transmit;
use crate::dht::key_cache::KeyBudget;
use crate::dht::source_guard::{GuardConfig, Refusal, SourceGuard};
use crate::dht::wire::packed_node::canonical;
use crate::dht::CloseNodes;

pub use forwarding::{ForwardError, ForwardRoute, Forwarded, Forwarder};
pub use store::{AnnouncementStore, StoreError};

/// What the DHT must tell the server: closest nodes and close-list addresses.
pub trait AnnounceDht: CloseNodes + ForwardRoute {}
impl<T: CloseNodes + ForwardRoute> AnnounceDht for T {}

/// Why a datagram was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AnnounceDrop {
    /// From UDP port 0.
    #[error("datagram from port 0")]
    FromPortZero,
    /// Over the source's rate.
    #[error("source over its rate limit")]
    RateLimited,
    /// The reply would exceed the source's amplification credit.
    #[error("reply over the source's amplification credit")]
    Amplification,
    /// A forwarding packet that goes nowhere.
    #[error(transparent)]
    Forward(#[from] ForwardError),
    /// An announce request that gets no answer.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a datagram causes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnnounceOutput {
    /// A datagram to send.
    Udp(Transmit),
    /// A forward reply for a client of our TCP relay: TCP packet 11 with `data` to the
    /// connection with index `con` if its identifier is still `id`.
    Tcp {
        /// The connection's index.
        con: u32,
        /// Its identifier.
        id: u64,
        /// The reply.
        data: Vec<u8>,
    },
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnnounceStats {
    /// Datagrams received (0x90–0x93, 0x95, 0x97).
    pub datagrams_in: u64,
    /// Forward requests and replies sent on.
    pub forwarded: u64,
    /// Requests answered: search, retrieve, store.
    pub answered: [u64; 3],
    /// Forward replies for TCP relay clients.
    pub tcp_replies: u64,
    /// Dropped before any work: port 0, rate, amplification.
    pub refused: u64,
    /// Dropped as malformed, unroutable or unauthenticated.
    pub dropped: u64,
}

/// Settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnnounceConfig {
    /// Per-source limit and the key-agreement budget.
    pub guard: GuardConfig,
}

impl Default for AnnounceConfig {
    /// The DHT's own per-source defaults (32 datagrams/s, burst 64): a 0.2.18 peer sends a
    /// node a few data searches a minute when it probes whether the node stores
    /// announcements, far below it.
    fn default() -> Self {
        AnnounceConfig {
            guard: GuardConfig::default(),
        }
    }
}

/// The server.
#[derive(Debug)]
pub struct AnnounceServer {
    forwarder: Forwarder,
    store: AnnouncementStore,
    guard: SourceGuard,
    budget: KeyBudget,
    stats: AnnounceStats,
}

impl AnnounceServer {
    /// A server for our DHT key pair.
    pub fn new(
        keys: &KeyPair,
        config: AnnounceConfig,
        now: Timestamp,
        rng: &mut dyn CryptoRng,
    ) -> Self {
        AnnounceServer {
            forwarder: Forwarder::new(rng),
            store: AnnouncementStore::new(keys, now, rng),
            guard: SourceGuard::new(config.guard, rng),
            budget: KeyBudget::new(config.guard.key_agreements),
            stats: AnnounceStats::default(),
        }
    }

    /// True for the kinds this server handles: 0x90–0x93, 0x95, 0x97 (the responses 0x94,
    /// 0x96, 0x98 are for clients).
    pub fn handles(k: u8) -> bool {
        matches!(k, 0x90..=0x93 | 0x95 | 0x97)
    }

    /// One datagram from `from`.
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        dht: &dyn AnnounceDht,
        rng: &mut dyn CryptoRng,
    ) -> Result<AnnounceOutput, AnnounceDrop> {
        self.stats.datagrams_in += 1;
        let from = canonical(from);
        let result = self.dispatch(now, from, bytes, dht, rng);
        match &result {
            Ok(AnnounceOutput::Udp(_)) => {}
            Ok(AnnounceOutput::Tcp { .. }) => self.stats.tcp_replies += 1,
            Err(
                AnnounceDrop::FromPortZero
                | AnnounceDrop::RateLimited
                | AnnounceDrop::Amplification,
            ) => self.stats.refused += 1,
            Err(_) => self.stats.dropped += 1,
        }
        result
    }

    fn dispatch(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        dht: &dyn AnnounceDht,
        rng: &mut dyn CryptoRng,
    ) -> Result<AnnounceOutput, AnnounceDrop> {
        if from.port() == 0 {
            return Err(AnnounceDrop::FromPortZero);
        }
        if self.guard.on_receive(now, from.ip(), bytes.len()).is_err() {
            return Err(AnnounceDrop::RateLimited);
        }
        let (dst, payload) = match bytes.first() {
            Some(&k) if store::DATA_SEARCH_REQUEST <= k => {
                let reply = self
                    .store
                    .handle(now, from, &[], bytes, dht, &mut self.budget, rng)?;
                (from, reply)
            }
            _ => match self.forwarder.handle(now, from, bytes, dht)? {
                Forwarded::Send { dst, payload } => {
                    self.stats.forwarded += 1;
                    return Ok(AnnounceOutput::Udp(Transmit { dst, payload }));
                }
                Forwarded::Request {
                    forwarder,
                    sendback,
                    data,
                } => {
                    let reply = self.store.handle(
                        now,
                        forwarder,
                        sendback,
                        data,
                        dht,
                        &mut self.budget,
                        rng,
                    )?;
                    let packet = Forwarder::reply(sendback, &reply)
                        .ok_or(AnnounceDrop::Forward(ForwardError::TooLong))?;
                    (forwarder, packet)
                }
                Forwarded::Tcp { con, id, data } => {
                    return Ok(AnnounceOutput::Tcp {
                        con,
                        id,
                        data: data.to_vec(),
                    })
                }
            },
        };
        match self.guard.on_reply(dst.ip(), payload.len()) {
            Ok(()) => {}
            Err(Refusal::Amplification | Refusal::RateLimited) => {
                return Err(AnnounceDrop::Amplification)
            }
        }
        self.stats.answered = self.store.answered;
        Ok(AnnounceOutput::Udp(Transmit { dst, payload }))
    }

    /// TCP packet 10 from a client of our TCP relay (`TCP_server.c`): `data` to `dest` as a
    /// 0x91 whose sendback names connection `con` with identifier `id`. `client` is the
    /// client's TCP address, limited as UDP sources are.
    pub fn handle_tcp_forward(
        &mut self,
        now: Timestamp,
        client: SocketAddr,
        con: u32,
        id: u64,
        dest: SocketAddr,
        data: &[u8],
    ) -> Result<Transmit, AnnounceDrop> {
        if dest.port() == 0 {
            return Err(AnnounceDrop::FromPortZero);
        }
        if self
            .guard
            .on_receive(now, canonical(client).ip(), data.len())
            .is_err()
        {
            self.stats.refused += 1;
            return Err(AnnounceDrop::RateLimited);
        }
        let payload = self
            .forwarder
            .tcp_request(now, con, id, data)
            .ok_or(AnnounceDrop::Forward(ForwardError::TooLong))?;
        self.stats.forwarded += 1;
        Ok(Transmit {
            dst: canonical(dest),
            payload,
        })
    }

    /// Counters.
    pub fn stats(&self) -> AnnounceStats {
        self.stats
    }

    /// The announcement store.
    pub fn store(&self) -> &AnnouncementStore {
        &self.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dht::wire::packed_node::PackedNode;
    use rand_chacha::rand_core::SeedableRng;
    use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey};

    struct Dht(PublicKey, SocketAddr);
    impl CloseNodes for Dht {
        fn closest_nodes(&self, _: Timestamp, _: &PublicKey, _: bool) -> Vec<PackedNode> {
            (0..4u8)
                .map(|i| {
                    PackedNode::udp(
                        format!("[2001:db8::{i}]:33445").parse().unwrap(),
                        PublicKey([i; 32]),
                    )
                })
                .collect()
        }
    }
    impl ForwardRoute for Dht {
        fn close_addr(&self, _: Timestamp, pk: &PublicKey) -> Option<SocketAddr> {
            (*pk == self.0).then_some(self.1)
        }
    }

    fn search(server_pk: &PublicKey, client: &KeyPair, rng: &mut dyn CryptoRng) -> Vec<u8> {
        let key = PrecomputedKey::new(server_pk, &client.secret).unwrap();
        let nonce = Nonce::random(rng);
        let mut plain = [7u8; 32].to_vec();
        plain.extend_from_slice(&[0; 8]);
        let mut out = vec![store::DATA_SEARCH_REQUEST];
        out.extend_from_slice(client.public.as_bytes());
        out.extend_from_slice(&nonce.0);
        out.extend_from_slice(&key.encrypt(&nonce, &plain));
        out
    }

    /// Two announce servers, a first hop (F, or the relay R) and the node N that stores, and
    /// a client's keys, all drawn from `seed`; the DHT routes to N.
    struct TwoServers {
        rng: rand_chacha::ChaCha8Rng,
        now: Timestamp,
        n_keys: KeyPair,
        client: KeyPair,
        first_addr: SocketAddr,
        n_addr: SocketAddr,
        first: AnnounceServer,
        n: AnnounceServer,
        dht: Dht,
    }

    fn two_servers(seed: u64) -> TwoServers {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let now = Timestamp::from_secs(5000);
        let (first_keys, n_keys, client) = (
            KeyPair::generate(&mut rng),
            KeyPair::generate(&mut rng),
            KeyPair::generate(&mut rng),
        );
        let first_addr: SocketAddr = "198.51.100.1:33445".parse().unwrap();
        let n_addr: SocketAddr = "198.51.100.2:33445".parse().unwrap();
        let first = AnnounceServer::new(&first_keys, AnnounceConfig::default(), now, &mut rng);
        let n = AnnounceServer::new(&n_keys, AnnounceConfig::default(), now, &mut rng);
        let dht = Dht(n_keys.public, n_addr);
        TwoServers {
            rng,
            now,
            n_keys,
            client,
            first_addr,
            n_addr,
            first,
            n,
            dht,
        }
    }

    /// A search forwarded by F reaches node N, whose reply goes back through F to the client;
    /// a search sent straight to N is answered straight.
    #[test]
    fn forwarded_and_direct_searches_are_answered() {
        let TwoServers {
            mut rng,
            now,
            n_keys,
            client,
            first_addr: f_addr,
            n_addr,
            first: mut f,
            mut n,
            dht,
        } = two_servers(9);
        let c_addr: SocketAddr = "192.0.2.1:40000".parse().unwrap();
        let mut req = vec![forwarding::FORWARD_REQUEST];
        req.extend_from_slice(n_keys.public.as_bytes());
        req.extend_from_slice(&search(&n_keys.public, &client, &mut rng));
        let Ok(AnnounceOutput::Udp(t)) = f.handle_datagram(now, c_addr, &req, &dht, &mut rng)
        else {
            panic!()
        };
        assert_eq!(t.dst, n_addr);
        let Ok(AnnounceOutput::Udp(t)) = n.handle_datagram(now, f_addr, &t.payload, &dht, &mut rng)
        else {
            panic!()
        };
        assert_eq!((t.dst, t.payload[0]), (f_addr, forwarding::FORWARD_REPLY));
        let Ok(AnnounceOutput::Udp(t)) = f.handle_datagram(now, n_addr, &t.payload, &dht, &mut rng)
        else {
            panic!()
        };
        assert_eq!(t.dst, c_addr);
        assert_eq!(
            &t.payload[..3],
            &[forwarding::FORWARDING, 0, store::DATA_SEARCH_RESPONSE]
        );
        assert_eq!(f.stats().forwarded, 2);
        assert_eq!(n.stats().answered, [1, 0, 0]);
        // Direct.
        let direct = search(&n_keys.public, &client, &mut rng);
        let Ok(AnnounceOutput::Udp(t)) = n.handle_datagram(now, c_addr, &direct, &dht, &mut rng)
        else {
            panic!()
        };
        assert_eq!((t.dst, t.payload[0]), (c_addr, store::DATA_SEARCH_RESPONSE));
    }

    /// A relay client's packet 10 leaves as a 0x91 to the named node; that node's answer,
    /// a 0x92, comes back for the client's connection.
    #[test]
    fn tcp_clients_forward_through_the_relay() {
        let TwoServers {
            mut rng,
            now,
            n_keys,
            client,
            first_addr: r_addr,
            n_addr,
            first: mut r,
            mut n,
            dht,
        } = two_servers(12);
        let req = search(&n_keys.public, &client, &mut rng);
        let t = r
            .handle_tcp_forward(
                now,
                "192.0.2.5:5555".parse().unwrap(),
                17,
                4242,
                n_addr,
                &req,
            )
            .unwrap();
        assert_eq!((t.dst, t.payload[0]), (n_addr, forwarding::FORWARDING));
        let Ok(AnnounceOutput::Udp(t)) = n.handle_datagram(now, r_addr, &t.payload, &dht, &mut rng)
        else {
            panic!()
        };
        assert_eq!(t.dst, r_addr);
        let out = r.handle_datagram(now, n_addr, &t.payload, &dht, &mut rng);
        let Ok(AnnounceOutput::Tcp { con, id, data }) = out else {
            panic!("{out:?}")
        };
        assert_eq!((con, id, data[0]), (17, 4242, store::DATA_SEARCH_RESPONSE));
        assert_eq!(r.stats().tcp_replies, 1);
    }

    /// A spoofed source gets at most four times what was sent in its name, however many
    /// searches (each reply is 3.4× its request with four IPv6 nodes); and a flood is cut by
    /// the per-source rate before any decryption.
    #[test]
    fn replies_are_held_to_the_amplification_credit_and_floods_to_the_rate() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(10);
        let now = Timestamp::from_secs(5000);
        let n_keys = KeyPair::generate(&mut rng);
        let mut n = AnnounceServer::new(&n_keys, AnnounceConfig::default(), now, &mut rng);
        let dht = Dht(PublicKey([0; 32]), "1.1.1.1:1".parse().unwrap());
        let victim: SocketAddr = "192.0.2.9:40000".parse().unwrap();
        let client = KeyPair::generate(&mut rng);
        let (mut sent, mut got) = (0usize, 0usize);
        for i in 0..200u64 {
            let t = now + std::time::Duration::from_millis(i * 100);
            let req = search(&n_keys.public, &client, &mut rng);
            sent += req.len();
            if let Ok(AnnounceOutput::Udp(out)) = n.handle_datagram(t, victim, &req, &dht, &mut rng)
            {
                got += out.payload.len();
            }
        }
        assert!(got <= 4 * sent, "{got} > 4 × {sent}");
        assert!(
            got > 3 * sent,
            "four IPv6 nodes make each reply over 3× its request"
        );
        // A burst of garbage from one source: most refused before any work.
        let mut m = AnnounceServer::new(&n_keys, AnnounceConfig::default(), now, &mut rng);
        for _ in 0..1000 {
            let _ = m.handle_datagram(now, victim, &[0x93; 200], &dht, &mut rng);
        }
        let s = m.stats();
        assert_eq!(s.refused + s.dropped, 1000);
        assert!(s.refused >= 900, "{s:?}");
        assert_eq!(
            m.handle_datagram(
                now,
                "1.2.3.4:0".parse().unwrap(),
                &[0x93; 200],
                &dht,
                &mut rng
            ),
            Err(AnnounceDrop::FromPortZero)
        );
    }
}
