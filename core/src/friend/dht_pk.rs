//! The DHT public key announcement (docs/protocol.md §6.4; c-toxcore 0.2.18 `onion_client.c`
//! `send_dhtpk_announce`, `handle_dhtpk_announce`, `send_dht_dhtpk`, `handle_dht_dhtpk`).
//!
//! A friend's DHT key changes every session; this packet tells friends the current one and
//! where to look for us. Onion data (§6.3), encrypted to the friend's real key:
//!
//! | length   | content                                                          |
//! |----------|------------------------------------------------------------------|
//! | 1        | 0x9c (156, `ONION_DATA_DHTPK` = `CRYPTO_PACKET_DHTPK`)           |
//! | 8        | no_replay, u64 big-endian: the sender's clock in seconds         |
//! | 32       | the sender's DHT public key                                      |
//! | 0..=204  | up to 4 packed nodes (§5.1): ≤ 2 TCP relays we are connected to, then our closest DHT nodes |
//!
//! When the friend's DHT key is already known it also travels through the DHT, as the data
//! of a 0x20 request (§5.5) with request_id 156, routed via the friend's close nodes:
//!
//! | length | content                                                    |
//! |--------|------------------------------------------------------------|
//! | 32     | the sender's real public key                               |
//! | 24     | nonce                                                      |
//! | 16 + n | `E(friend real pk, sender real sk, nonce)[the onion data above]` |
//!
//! The receiver takes it only if the DHT key inside equals the 0x20 packet's sender key, so a
//! relay in the DHT cannot swap it. c-toxcore draws a second random nonce for the 0x20
//! envelope; the two are unrelated.
//!
//! `no_replay` must grow across restarts of the sender, so it is wall-clock seconds
//! (c-toxcore uses `mono_time_get`, Unix time in seconds), never a `Timestamp`, whose origin
//! is the driver's start. The receiver keeps the last value per friend ([`NoReplay`]) and
//! resets it when the friend goes offline (`onion_set_friend_online`).
// Wire code: announcements come over the onion and the DHT, so no indexing, slicing or
// arithmetic that could panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::time::Duration;

use rustox_net_crypto::crypto::{
    Nonce, PrecomputedKey, PublicKey, MAC_SIZE, NONCE_SIZE, PUBLIC_KEY_SIZE,
};

pub use crate::dht::wire::crypto_request::CRYPTO_PACKET_DHTPK;
use crate::dht::wire::packed_node::PackedNode;

use rustox_net_crypto::wire::Reader;

use super::packets::decode_nodes_prefix;

/// `MAX_SENT_NODES`: nodes an announcement carries.
pub const MAX_DHTPK_NODES: usize = 4;
/// `MAX_SENT_NODES / 2`: of which at most this many are our TCP relays
/// (`copy_connected_tcp_relays` in `send_dhtpk_announce`).
pub const MAX_DHTPK_TCP_RELAYS: usize = MAX_DHTPK_NODES / 2;
/// `DHTPK_DATA_MIN_LENGTH`: id, no_replay, DHT key.
pub const DHTPK_DATA_MIN_LENGTH: usize = 1 + 8 + PUBLIC_KEY_SIZE;
/// `DHTPK_DATA_MAX_LENGTH` as 0.2.18 computes it on 64-bit hosts:
/// `DHTPK_DATA_MIN_LENGTH + sizeof(Node_format) * MAX_SENT_NODES` with the in-memory
/// `Node_format` of 64 bytes, not the 51 of a packed IPv6 node. The largest real
/// announcement is 41 + 4 × 51 = 245 bytes; anything after a fourth node is ignored.
pub const DHTPK_DATA_MAX_LENGTH: usize = DHTPK_DATA_MIN_LENGTH + 64 * MAX_DHTPK_NODES;
/// Bytes the DHT route adds: sender real pk, nonce, MAC (`DATA_IN_RESPONSE_MIN_SIZE` +
/// `CRYPTO_NONCE_SIZE`).
pub const DHT_ROUTE_OVERHEAD: usize = PUBLIC_KEY_SIZE + NONCE_SIZE + MAC_SIZE;
/// The shortest DHT-route data `handle_dht_dhtpk` accepts.
pub const DHT_ROUTE_MIN_LENGTH: usize = DHTPK_DATA_MIN_LENGTH + DHT_ROUTE_OVERHEAD;
/// The longest DHT-route data `handle_dht_dhtpk` accepts.
pub const DHT_ROUTE_MAX_LENGTH: usize = DHTPK_DATA_MAX_LENGTH + DHT_ROUTE_OVERHEAD;
/// `ONION_DHTPK_SEND_INTERVAL` (`onion_client.h`): onion-route announcements, until the
/// friend is online.
pub const ONION_DHTPK_SEND_INTERVAL: Duration = Duration::from_secs(30);
/// `DHT_DHTPK_SEND_INTERVAL` (`onion_client.h`): DHT-route announcements, until online.
pub const DHT_DHTPK_SEND_INTERVAL: Duration = Duration::from_secs(20);

/// Why a DHT-PK announcement was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DhtPkError {
    /// Shorter or longer than the route allows.
    #[error("bad DHT-PK length {0}")]
    BadLength(usize),
    /// The onion-data id is not 156.
    #[error("not a DHT-PK packet: id {0}")]
    BadId(u8),
    /// More than 4 nodes (on building).
    #[error("{0} nodes exceed the 4 an announcement carries")]
    TooManyNodes(usize),
    /// The DHT-route box did not open with our key.
    #[error("decryption failed")]
    Decrypt,
    /// The DHT key inside differs from the 0x20 packet's sender (`handle_dht_dhtpk`).
    #[error("DHT key inside does not match the request's sender")]
    SenderMismatch,
    /// `no_replay` is not greater than the last one from this friend.
    #[error("replayed announcement: {got} <= {last}")]
    Replayed {
        /// The last accepted value.
        last: u64,
        /// The value received.
        got: u64,
    },
}

/// One announcement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DhtPkAnnounce {
    /// The sender's wall clock in seconds; must grow (see the module docs).
    pub no_replay: u64,
    /// The sender's current DHT public key.
    pub dht_pk: PublicKey,
    /// TCP relays first, then UDP DHT nodes; at most 4.
    pub nodes: Vec<PackedNode>,
}

impl DhtPkAnnounce {
    /// An announcement as `send_dhtpk_announce` fills it: up to 2 of `tcp_relays`, then
    /// `udp_nodes` up to 4 nodes in all.
    pub fn new(
        no_replay: u64,
        dht_pk: PublicKey,
        tcp_relays: &[PackedNode],
        udp_nodes: &[PackedNode],
    ) -> Self {
        let mut nodes: Vec<PackedNode> = tcp_relays
            .iter()
            .take(MAX_DHTPK_TCP_RELAYS)
            .copied()
            .collect();
        // At most MAX_DHTPK_TCP_RELAYS (2) taken above, so this never clamps.
        let room = MAX_DHTPK_NODES.saturating_sub(nodes.len());
        nodes.extend(udp_nodes.iter().take(room).copied());
        DhtPkAnnounce {
            no_replay,
            dht_pk,
            nodes,
        }
    }

    /// The onion-data bytes, id first.
    pub fn encode(&self) -> Result<Vec<u8>, DhtPkError> {
        if self.nodes.len() > MAX_DHTPK_NODES {
            return Err(DhtPkError::TooManyNodes(self.nodes.len()));
        }
        // At most 4 nodes of at most 51 bytes: the hint cannot saturate.
        let mut out =
            Vec::with_capacity(self.nodes.iter().fold(DHTPK_DATA_MIN_LENGTH, |sum, n| {
                sum.saturating_add(n.packed_len())
            }));
        out.push(CRYPTO_PACKET_DHTPK);
        out.extend_from_slice(&self.no_replay.to_be_bytes());
        out.extend_from_slice(self.dht_pk.as_bytes());
        for node in &self.nodes {
            node.encode(&mut out);
        }
        Ok(out)
    }

    /// Parses onion data whose first byte must be 156.
    ///
    /// As in `handle_dhtpk_announce`, the key and `no_replay` count even when the node list
    /// is malformed: c-toxcore records the key, then gives up on the nodes. Such a list
    /// decodes here as no nodes.
    pub fn decode(data: &[u8]) -> Result<Self, DhtPkError> {
        match data.first() {
            Some(&CRYPTO_PACKET_DHTPK) => Self::decode_any_id(data),
            Some(&other) => Err(DhtPkError::BadId(other)),
            None => Err(DhtPkError::BadLength(0)),
        }
    }

    /// Parses without looking at the first byte: the DHT route's `handle_dht_dhtpk` never
    /// checks it (every c-toxcore sender puts 156 there).
    fn decode_any_id(data: &[u8]) -> Result<Self, DhtPkError> {
        if data.len() < DHTPK_DATA_MIN_LENGTH || data.len() > DHTPK_DATA_MAX_LENGTH {
            return Err(DhtPkError::BadLength(data.len()));
        }
        let bad = DhtPkError::BadLength(data.len());
        let mut r = Reader::after_kind(data);
        let no_replay = r.u64_be().map_err(|_| bad)?;
        let dht_pk = PublicKey(r.array().map_err(|_| bad)?);
        let nodes = decode_nodes_prefix(r.rest(), MAX_DHTPK_NODES).unwrap_or_default();
        Ok(DhtPkAnnounce {
            no_replay,
            dht_pk,
            nodes,
        })
    }
}

/// The DHT-route data (after the 0x20 request's request_id 156), before decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DhtPkRoute<'a> {
    /// The sender's real public key: look the friend up by it, and open with
    /// `beforenm(sender_real_pk, our real sk)`.
    pub sender_real_pk: PublicKey,
    /// The inner nonce.
    pub nonce: Nonce,
    /// `[MAC][ciphertext]`.
    pub boxed: &'a [u8],
}

impl<'a> DhtPkRoute<'a> {
    /// Splits the data, with `handle_dht_dhtpk`'s length bounds (113..=369). Nothing is
    /// decrypted yet, so the Node can refuse a sender that is not a friend for the price of a
    /// lookup, and use its cached key for one that is.
    pub fn parse(data: &'a [u8]) -> Result<Self, DhtPkError> {
        if data.len() < DHT_ROUTE_MIN_LENGTH || data.len() > DHT_ROUTE_MAX_LENGTH {
            return Err(DhtPkError::BadLength(data.len()));
        }
        let bad = DhtPkError::BadLength(data.len());
        let mut r = Reader::new(data);
        Ok(DhtPkRoute {
            sender_real_pk: PublicKey(r.array().map_err(|_| bad)?),
            nonce: Nonce(r.array().map_err(|_| bad)?),
            boxed: r.rest(),
        })
    }

    /// Opens the box with `key` = `beforenm(sender_real_pk, our real sk)` and checks that
    /// the DHT key inside is `request_sender_dht_pk`, the 0x20 packet's sender.
    pub fn open(
        &self,
        key: &PrecomputedKey,
        request_sender_dht_pk: &PublicKey,
    ) -> Result<DhtPkAnnounce, DhtPkError> {
        let plain = key
            .decrypt(&self.nonce, self.boxed)
            .map_err(|_| DhtPkError::Decrypt)?;
        let announce = DhtPkAnnounce::decode_any_id(&plain)?;
        if announce.dht_pk != *request_sender_dht_pk {
            return Err(DhtPkError::SenderMismatch);
        }
        Ok(announce)
    }
}

/// Builds the DHT-route data for `announce`: `key` = `beforenm(friend real pk, our real
/// sk)`, `nonce` random. The Node then seals it into a 0x20 request with request_id
/// [`CRYPTO_PACKET_DHTPK`] to the friend's DHT key (`dht::wire::crypto_request::seal`);
/// the largest result, 317 bytes, fits that packet's 1024.
pub fn seal_dht_route(
    our_real_pk: &PublicKey,
    key: &PrecomputedKey,
    nonce: &Nonce,
    announce: &DhtPkAnnounce,
) -> Result<Vec<u8>, DhtPkError> {
    let plain = announce.encode()?;
    let boxed = key.encrypt(nonce, &plain);
    let mut out = Vec::with_capacity((PUBLIC_KEY_SIZE + NONCE_SIZE).saturating_add(boxed.len()));
    out.extend_from_slice(our_real_pk.as_bytes());
    out.extend_from_slice(&nonce.0);
    out.extend_from_slice(&boxed);
    Ok(out)
}

/// The per-friend replay guard: a `no_replay` is taken only if strictly greater than the
/// last one taken (`last_noreplay`, starting at 0, so 0 itself is never taken).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoReplay {
    last: u64,
}

impl NoReplay {
    /// A guard that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last value taken (0 if none).
    pub fn last(&self) -> u64 {
        self.last
    }

    /// Takes `no_replay` if it is newer, and remembers it.
    pub fn check(&mut self, no_replay: u64) -> Result<(), DhtPkError> {
        if no_replay <= self.last {
            return Err(DhtPkError::Replayed {
                last: self.last,
                got: no_replay,
            });
        }
        self.last = no_replay;
        Ok(())
    }

    /// Forgets the last value: c-toxcore does this when the friend goes offline ("to prevent
    /// some clock related issues", `onion_set_friend_online`).
    pub fn reset(&mut self) {
        self.last = 0;
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::dht::wire::crypto_request::{self, RequestEnvelope};
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;
    use rustox_net_crypto::crypto::KeyPair;

    fn udp(i: u8) -> PackedNode {
        PackedNode::udp(
            format!("192.0.2.{i}:33445").parse().unwrap(),
            PublicKey([i; 32]),
        )
    }

    fn tcp(i: u8) -> PackedNode {
        PackedNode {
            addr: format!("[2001:db8::{i}]:443").parse().unwrap(),
            tcp: true,
            pk: PublicKey([i; 32]),
        }
    }

    #[test]
    fn layout_relays_first_and_at_most_two() {
        let a = DhtPkAnnounce::new(
            0x0102_0304_0506_0708,
            PublicKey([0xdd; 32]),
            &[tcp(1), tcp(2), tcp(3)],
            &[udp(4), udp(5), udp(6)],
        );
        assert_eq!(a.nodes, vec![tcp(1), tcp(2), udp(4), udp(5)]);
        let bytes = a.encode().unwrap();
        assert_eq!(bytes[0], 0x9c);
        assert_eq!(&bytes[1..9], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&bytes[9..41], &[0xdd; 32]);
        assert_eq!(bytes[41], 138);
        assert_eq!(bytes.len(), 41 + 2 * 51 + 2 * 39);
        assert_eq!(DhtPkAnnounce::decode(&bytes), Ok(a));
        // Fewer relays leave room for more UDP nodes.
        let b = DhtPkAnnounce::new(
            1,
            PublicKey([0; 32]),
            &[],
            &[udp(1), udp(2), udp(3), udp(4), udp(5)],
        );
        assert_eq!(b.nodes.len(), 4);
    }

    #[test]
    fn length_bounds_and_lenient_nodes() {
        let a = DhtPkAnnounce::new(9, PublicKey([1; 32]), &[], &[]);
        let bytes = a.encode().unwrap();
        assert_eq!(bytes.len(), DHTPK_DATA_MIN_LENGTH);
        assert_eq!(
            DhtPkAnnounce::decode(&bytes[..40]),
            Err(DhtPkError::BadLength(40))
        );
        assert_eq!(
            DhtPkAnnounce::decode(&[0x20; 41]),
            Err(DhtPkError::BadId(0x20))
        );
        // A malformed node list still yields the key (handle_dhtpk_announce order).
        let mut junk = bytes.clone();
        junk.extend_from_slice(&[7, 7, 7]);
        assert_eq!(DhtPkAnnounce::decode(&junk).unwrap().nodes, vec![]);
        // 0.2.18 accepts up to 297 bytes; bytes after a fourth node are ignored.
        let four = DhtPkAnnounce::new(9, PublicKey([1; 32]), &[tcp(1), tcp(2)], &[tcp(3), tcp(4)]);
        let mut long = four.encode().unwrap();
        long.resize(DHTPK_DATA_MAX_LENGTH, 0xff);
        assert_eq!(DhtPkAnnounce::decode(&long), Ok(four));
        long.push(0);
        assert_eq!(
            DhtPkAnnounce::decode(&long),
            Err(DhtPkError::BadLength(298))
        );
        let too_many = DhtPkAnnounce {
            no_replay: 1,
            dht_pk: PublicKey([0; 32]),
            nodes: vec![udp(1); 5],
        };
        assert_eq!(too_many.encode(), Err(DhtPkError::TooManyNodes(5)));
    }

    #[test]
    fn no_replay_is_strictly_increasing_and_resets_offline() {
        let mut g = NoReplay::new();
        assert_eq!(g.check(0), Err(DhtPkError::Replayed { last: 0, got: 0 }));
        assert_eq!(g.check(100), Ok(()));
        assert_eq!(
            g.check(100),
            Err(DhtPkError::Replayed {
                last: 100,
                got: 100
            })
        );
        assert_eq!(
            g.check(99),
            Err(DhtPkError::Replayed { last: 100, got: 99 })
        );
        assert_eq!(g.check(101), Ok(()));
        g.reset();
        assert_eq!(g.check(50), Ok(()));
    }

    #[test]
    fn dht_route_through_a_0x20_request() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (alice_real, alice_dht) = (KeyPair::generate(&mut rng), KeyPair::generate(&mut rng));
        let (bob_real, bob_dht) = (KeyPair::generate(&mut rng), KeyPair::generate(&mut rng));
        let announce = DhtPkAnnounce::new(1_700_000_000, alice_dht.public, &[tcp(1)], &[udp(2)]);

        // Alice → Bob.
        let inner_key = PrecomputedKey::new(&bob_real.public, &alice_real.secret).unwrap();
        let data =
            seal_dht_route(&alice_real.public, &inner_key, &Nonce([3; 24]), &announce).unwrap();
        assert_eq!(&data[..32], alice_real.public.as_bytes());
        assert_eq!(&data[32..56], &[3; 24]);
        let dht_key = PrecomputedKey::new(&bob_dht.public, &alice_dht.secret).unwrap();
        let packet = crypto_request::seal(
            &bob_dht.public,
            &alice_dht.public,
            &dht_key,
            &Nonce([4; 24]),
            CRYPTO_PACKET_DHTPK,
            &data,
        )
        .unwrap();

        // Bob opens the 0x20, then the route.
        let env = RequestEnvelope::parse(&packet).unwrap();
        let (id, data) = env
            .open(&PrecomputedKey::new(&env.sender, &bob_dht.secret).unwrap())
            .unwrap();
        assert_eq!(id, 156);
        let route = DhtPkRoute::parse(&data).unwrap();
        assert_eq!(route.sender_real_pk, alice_real.public);
        let key = PrecomputedKey::new(&route.sender_real_pk, &bob_real.secret).unwrap();
        assert_eq!(route.open(&key, &env.sender), Ok(announce.clone()));

        // The inner DHT key must be the 0x20 sender's.
        assert_eq!(
            route.open(&key, &bob_dht.public),
            Err(DhtPkError::SenderMismatch)
        );
        // The wrong real key does not open it.
        let wrong = PrecomputedKey::new(&bob_dht.public, &bob_real.secret).unwrap();
        assert_eq!(route.open(&wrong, &env.sender), Err(DhtPkError::Decrypt));
        // The largest announcement fits a 0x20 request.
        let max = DhtPkAnnounce::new(
            u64::MAX,
            alice_dht.public,
            &[tcp(1), tcp(2)],
            &[tcp(3), tcp(4)],
        );
        let data = seal_dht_route(&alice_real.public, &inner_key, &Nonce([0; 24]), &max).unwrap();
        assert_eq!(data.len(), 317);
        assert!(crypto_request::seal(
            &bob_dht.public,
            &alice_dht.public,
            &dht_key,
            &Nonce([0; 24]),
            156,
            &data
        )
        .is_some());
    }

    #[test]
    fn dht_route_length_bounds() {
        assert_eq!(
            DhtPkRoute::parse(&[0; 112]),
            Err(DhtPkError::BadLength(112))
        );
        assert!(DhtPkRoute::parse(&[0; 113]).is_ok());
        assert!(DhtPkRoute::parse(&[0; 369]).is_ok());
        assert_eq!(
            DhtPkRoute::parse(&[0; 370]),
            Err(DhtPkError::BadLength(370))
        );
    }

    fn arb_node() -> impl Strategy<Value = PackedNode> {
        (any::<bool>(), 1u8..=254).prop_map(|(t, i)| if t { tcp(i) } else { udp(i) })
    }

    proptest! {
        #[test]
        fn announce_round_trip(
            no_replay in any::<u64>(), pk in any::<[u8; 32]>(),
            nodes in proptest::collection::vec(arb_node(), 0..=4),
        ) {
            let a = DhtPkAnnounce { no_replay, dht_pk: PublicKey(pk), nodes };
            prop_assert_eq!(DhtPkAnnounce::decode(&a.encode().unwrap()), Ok(a));
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(a) = DhtPkAnnounce::decode(&bytes) {
                prop_assert_eq!(DhtPkAnnounce::decode(&a.encode().unwrap()), Ok(a));
            }
            if let Ok(route) = DhtPkRoute::parse(&bytes) {
                let key = PrecomputedKey::new(&PublicKey([9; 32]), &rustox_net_crypto::crypto::SecretKey::from_bytes([1; 32])).unwrap();
                let _ = route.open(&key, &PublicKey([0; 32]));
            }
        }
    }
}
