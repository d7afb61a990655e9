//! The onion server against clients built from the wire builders, in memory.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, PublicKey};
use rustox_net_crypto::token_bucket::TokenBucket;
use rustox_net_crypto::Timestamp;

use super::announce_store::{ONION_ANNOUNCE_MAX_ENTRIES, ONION_ANNOUNCE_TIMEOUT};
use super::*;
use crate::dht::distance::cmp_distance;
use crate::dht::wire::packed_node::PackedNode;
use crate::onion::wire::announce::{
    AnnounceRequest, AnnounceResponse, AnnounceResponseEnvelope, AnnounceStatus, PingId,
};
use crate::onion::wire::announce_ext::{self, ExtAnnounceResponse};
use crate::onion::wire::data::{self, DataResponse};
use crate::onion::wire::group_announce::{GroupAnnounce, PublicGroupAnnounce};
use crate::onion::wire::ip_port::{IpPort, FAMILY_TCP_CLIENT};
use crate::onion::wire::request::OnionPath;
use crate::onion::wire::response;
use crate::onion::wire::sendback::{self, ReturnLevel};

/// A fake DHT: fixed nodes, and the last `requester_on_lan` it was asked with.
struct FakeDht {
    nodes: Vec<PackedNode>,
    asked_lan: std::cell::Cell<Option<bool>>,
}

impl CloseNodes for FakeDht {
    fn closest_nodes(&self, _: Timestamp, target: &PublicKey, lan: bool) -> Vec<PackedNode> {
        self.asked_lan.set(Some(lan));
        let mut n = self.nodes.clone();
        n.sort_by(|a, b| cmp_distance(target, &a.pk, &b.pk));
        n
    }
}

fn fake_dht(rng: &mut ChaCha8Rng, count: usize) -> FakeDht {
    FakeDht {
        nodes: (0..count)
            .map(|i| {
                PackedNode::udp(
                    SocketAddr::from(([203, 0, 113, i as u8 + 1], 33445)),
                    KeyPair::generate(rng).public,
                )
            })
            .collect(),
        asked_lan: std::cell::Cell::new(None),
    }
}

/// Onion servers at fixed addresses; datagrams between them are delivered at once.
struct Net {
    rng: ChaCha8Rng,
    now: Timestamp,
    servers: HashMap<SocketAddr, (KeyPair, OnionServer)>,
    dht: FakeDht,
}

impl Net {
    fn new(n: usize) -> Net {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let now = Timestamp::from_secs(10_000);
        let mut servers = HashMap::new();
        for i in 0..n {
            let keys = KeyPair::generate(&mut rng);
            let server = OnionServer::new(&keys, OnionConfig::default(), now, &mut rng);
            servers.insert(
                SocketAddr::from(([198, 51, 100, i as u8 + 1], 33445)),
                (keys, server),
            );
        }
        let dht = fake_dht(&mut rng, 6);
        Net {
            rng,
            now,
            servers,
            dht,
        }
    }

    fn addr(i: usize) -> SocketAddr {
        SocketAddr::from(([198, 51, 100, i as u8 + 1], 33445))
    }

    fn node(&self, i: usize) -> PackedNode {
        PackedNode::udp(Self::addr(i), self.servers[&Self::addr(i)].0.public)
    }

    fn server(&mut self, i: usize) -> &mut OnionServer {
        &mut self.servers.get_mut(&Self::addr(i)).unwrap().1
    }

    fn data_pk(&self, i: usize, pk: &PublicKey) -> Option<PublicKey> {
        self.servers[&Self::addr(i)].1.store().data_pk(self.now, pk)
    }

    fn stored(&self, i: usize) -> usize {
        self.servers[&Self::addr(i)].1.store().len(self.now)
    }

    fn ping_id(&self, i: usize, pk: &PublicKey, source: SocketAddr) -> PingId {
        self.servers[&Self::addr(i)]
            .1
            .store
            .ping_key_for_test(self.now, pk, source)
    }

    /// One datagram into server `i`.
    fn deliver(&mut self, i: usize, from: SocketAddr, bytes: &[u8]) -> Result<Transmit, OnionDrop> {
        let server = &mut self.servers.get_mut(&Self::addr(i)).unwrap().1;
        server.handle_datagram(self.now, from, bytes, &self.dht, &mut self.rng)
    }

    /// Delivers `bytes` from `from` to `to`, then every datagram that causes, until one
    /// leaves the servers: returns (who sent it, where to, what). Each hop's output must be
    /// no larger than its input, except an announce response.
    fn run(
        &mut self,
        mut from: SocketAddr,
        mut to: SocketAddr,
        mut bytes: Vec<u8>,
    ) -> Result<(SocketAddr, SocketAddr, Vec<u8>), OnionDrop> {
        for _ in 0..16 {
            let Some((_, server)) = self.servers.get_mut(&to) else {
                return Ok((from, to, bytes));
            };
            let out = server.handle_datagram(self.now, from, &bytes, &self.dht, &mut self.rng)?;
            if bytes[0] == 0x83 {
                assert!(
                    out.payload.len() <= bytes.len() * 4 / 3 + 1,
                    "announce reply ≤ 1.33× request"
                );
            } else if bytes[0] == 0x87 {
                assert!(
                    out.payload.len() * 10 <= bytes.len() * 19,
                    "extended announce reply ≤ 1.9× request"
                );
            } else {
                assert!(
                    out.payload.len() < bytes.len(),
                    "relaying never grows a datagram"
                );
            }
            assert_ne!(out.dst.port(), 0);
            (from, to, bytes) = (to, out.dst, out.payload);
        }
        panic!("routing loop");
    }
}

struct Client {
    addr: SocketAddr,
    dht: KeyPair,
    real: KeyPair,
    data: KeyPair,
    path: OnionPath,
}

fn client(net: &mut Net, last: u8, relays: [usize; 3]) -> Client {
    let dht = KeyPair::generate(&mut net.rng);
    let nodes = relays.map(|i| net.node(i));
    let path = OnionPath::new(&dht, nodes, &mut net.rng).unwrap();
    Client {
        addr: SocketAddr::from(([192, 0, 2, last], 40000)),
        real: KeyPair::generate(&mut net.rng),
        data: KeyPair::generate(&mut net.rng),
        dht,
        path,
    }
}

/// Sends an announce request from `sender` through the client's path to server `d`, and
/// opens the 0x84 that comes back to the client.
fn announce(
    net: &mut Net,
    c: &Client,
    d: usize,
    sender: &KeyPair,
    req: AnnounceRequest,
) -> AnnounceResponse {
    let d_node = net.node(d);
    let key = PrecomputedKey::new(&d_node.pk, &sender.secret).unwrap();
    let inner = req.seal(&sender.public, &key, &Nonce::random(&mut net.rng));
    let packet = c.path.request(d_node.addr, &inner, &mut net.rng).unwrap();
    let (from, to, bytes) = net.run(c.addr, c.path.nodes()[0].addr, packet).unwrap();
    assert_eq!((from, to), (c.path.nodes()[0].addr, c.addr));
    let env = AnnounceResponseEnvelope::parse(&bytes).unwrap();
    assert_eq!(env.sendback, req.sendback);
    env.open(&key).unwrap()
}

fn self_announce(net: &mut Net, c: &Client, d: usize, ping_id: PingId) -> AnnounceResponse {
    let req = AnnounceRequest {
        ping_id,
        searched_pk: c.real.public,
        data_pk: c.data.public,
        sendback: [1; 8],
    };
    let real = KeyPair::from_secret(c.real.secret.clone());
    announce(net, c, d, &real, req)
}

fn ping_of(r: &AnnounceResponse) -> PingId {
    match r.status {
        AnnounceStatus::NotStored(p) | AnnounceStatus::Stored(p) => p,
        AnnounceStatus::Found(_) => panic!("no ping id in {r:?}"),
    }
}

#[test]
fn announce_search_and_data_through_three_relays() {
    let mut net = Net::new(4);
    let (a, b) = (
        client(&mut net, 1, [0, 1, 2]),
        client(&mut net, 2, [2, 1, 0]),
    );
    const D: usize = 3;

    // A announces: zero ping id → 0 with a ping id; with it → 2.
    let first = self_announce(&mut net, &a, D, [0; 32]);
    assert!(matches!(first.status, AnnounceStatus::NotStored(_)));
    assert_eq!(first.nodes.len(), 4, "four closest nodes from the DHT");
    let second = self_announce(&mut net, &a, D, ping_of(&first));
    assert!(
        matches!(second.status, AnnounceStatus::Stored(_)),
        "{second:?}"
    );
    assert_eq!(net.data_pk(D, &a.real.public), Some(a.data.public));

    // B searches for A's real key under a temporary key: 1 with A's data pk.
    let search_key = KeyPair::generate(&mut net.rng);
    let req = AnnounceRequest {
        ping_id: [0; 32],
        searched_pk: a.real.public,
        data_pk: PublicKey([0; 32]),
        sendback: [2; 8],
    };
    let found = announce(&mut net, &b, D, &search_key, req);
    assert_eq!(found.status, AnnounceStatus::Found(a.data.public));

    // B sends A onion data through D: it arrives at A as a 0x86 along A's path.
    let nonce = Nonce::random(&mut net.rng);
    let message = b"\x20\x01\x02\x03\x04hello from b".to_vec();
    let inner = data::seal_inner(
        &b.real.public,
        &PrecomputedKey::new(&a.real.public, &b.real.secret).unwrap(),
        &nonce,
        &message,
    )
    .unwrap();
    let request =
        data::seal_request(&a.real.public, &a.data.public, &nonce, &inner, &mut net.rng).unwrap();
    let packet = b
        .path
        .request(net.node(D).addr, &request, &mut net.rng)
        .unwrap();
    let (from, to, bytes) = net.run(b.addr, b.path.nodes()[0].addr, packet).unwrap();
    assert_eq!((from, to), (a.path.nodes()[0].addr, a.addr));
    assert_eq!(bytes[0], 0x86);
    let opened = DataResponse::parse(&bytes)
        .unwrap()
        .open(&a.data.secret)
        .unwrap();
    assert_eq!(opened.sender_real_pk, b.real.public);
    let plain = opened
        .open(&PrecomputedKey::new(&b.real.public, &a.real.secret).unwrap())
        .unwrap();
    assert_eq!(plain, message);

    // Every server did its part and dropped nothing.
    for i in 0..4 {
        let s = net.server(i).stats();
        assert_eq!(s.total_dropped(), 0, "server {i}: {s:?}");
    }
    let d = net.server(D).stats();
    assert_eq!(
        (
            d.announces_answered,
            d.announces_stored,
            d.searches_found,
            d.data_forwarded
        ),
        (3, 1, 1, 1)
    );
    let s0 = net.server(0).stats();
    assert_eq!(
        s0.requests_relayed,
        [2, 0, 2],
        "A for a's two packets, C for b's two"
    );
    let _ = &a.dht;
}

#[test]
fn stored_status_follows_0_2_18() {
    let mut net = Net::new(4);
    let a = client(&mut net, 1, [0, 1, 2]);
    let first = self_announce(&mut net, &a, 3, [0; 32]);
    let stored = self_announce(&mut net, &a, 3, ping_of(&first));
    assert!(matches!(stored.status, AnnounceStatus::Stored(_)));
    // Still announced: a zero ping id finds the sender's own entry → 2.
    assert!(matches!(
        self_announce(&mut net, &a, 3, [0; 32]).status,
        AnnounceStatus::Stored(_)
    ));
    // A new data pk with a valid ping id is stored, and answered 2 for the new key.
    let mut a2 = Client {
        data: KeyPair::generate(&mut net.rng),
        ..a
    };
    let r = self_announce(&mut net, &a2, 3, ping_of(&stored));
    assert!(matches!(r.status, AnnounceStatus::Stored(_)));
    // The old data pk without a valid ping id: the entry is ours but the key differs → 0.
    a2.data = KeyPair::generate(&mut net.rng);
    assert!(matches!(
        self_announce(&mut net, &a2, 3, [0; 32]).status,
        AnnounceStatus::NotStored(_)
    ));
    // A searcher that sends back a valid ping id is stored itself and told 2 (0.2.18 quirk).
    let searcher = KeyPair::generate(&mut net.rng);
    let search = |ping_id| AnnounceRequest {
        ping_id,
        searched_pk: a2.real.public,
        data_pk: PublicKey([0; 32]),
        sendback: [3; 8],
    };
    let r1 = announce(&mut net, &a2, 3, &searcher, search([0; 32]));
    assert!(matches!(r1.status, AnnounceStatus::Found(_)));
    let valid = net.ping_id(3, &searcher.public, a2.path.nodes()[2].addr);
    let r2 = announce(&mut net, &a2, 3, &searcher, search(valid));
    assert!(matches!(r2.status, AnnounceStatus::Stored(_)));
    assert_eq!(net.stored(3), 2);
    // Entries expire 300 s after their last refresh.
    net.now += ONION_ANNOUNCE_TIMEOUT;
    assert_eq!(net.stored(3), 0);
}

#[test]
fn a_ping_id_is_bound_to_the_last_relay_and_expires() {
    let mut net = Net::new(5);
    let a = client(&mut net, 1, [0, 1, 2]);
    let first = self_announce(&mut net, &a, 3, [0; 32]);
    // Same request through a path whose last hop differs: the ping id is not valid there.
    let mut other = client(&mut net, 1, [0, 1, 4]);
    other.real = KeyPair::from_secret(a.real.secret.clone());
    other.data = KeyPair::from_secret(a.data.secret.clone());
    assert!(matches!(
        self_announce(&mut net, &other, 3, ping_of(&first)).status,
        AnnounceStatus::NotStored(_)
    ));
    // Windows are 300 s long: made at 10 000 s (window 33), valid until 10 500 s.
    net.now = Timestamp::from_secs(10_499);
    let late = self_announce(&mut net, &a, 3, ping_of(&first));
    assert!(matches!(late.status, AnnounceStatus::Stored(_)));
    assert_eq!(net.server(3).stats().announces_stored, 1);
    // From 10 500 s it no longer stores or refreshes (the live entry still answers 2).
    net.now = Timestamp::from_secs(10_500);
    assert!(matches!(
        self_announce(&mut net, &a, 3, ping_of(&first)).status,
        AnnounceStatus::Stored(_)
    ));
    assert_eq!(net.server(3).stats().announces_stored, 1);
    net.now = Timestamp::from_secs(10_499 + 300);
    assert!(matches!(
        self_announce(&mut net, &a, 3, ping_of(&first)).status,
        AnnounceStatus::NotStored(_)
    ));
}

#[test]
fn the_store_keeps_the_160_keys_closest_to_ours() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let keys = KeyPair::generate(&mut rng);
    let mut server = OnionServer::new(
        &keys,
        OnionConfig {
            guard: GuardConfig {
                rate: None,
                burst: 1.0,
                key_agreements: None,
                ..GuardConfig::default()
            },
        },
        Timestamp::ZERO,
        &mut rng,
    );
    let now = Timestamp::from_secs(1);
    let c = SocketAddr::from(([198, 51, 100, 9], 33445));
    let mut announced = Vec::new();
    for _ in 0..ONION_ANNOUNCE_MAX_ENTRIES + 40 {
        let real = KeyPair::generate(&mut rng);
        let key = PrecomputedKey::new(&keys.public, &real.secret).unwrap();
        let ping_id = server.store.ping_key_for_test(now, &real.public, c);
        let req = AnnounceRequest {
            ping_id,
            searched_pk: real.public,
            data_pk: real.public,
            sendback: [0; 8],
        };
        let mut bytes = req.seal(&real.public, &key, &Nonce::random(&mut rng));
        bytes.extend_from_slice(&[7; 177]);
        let out = server
            .handle_datagram(now, c, &bytes, &NoNodes, &mut rng)
            .unwrap();
        assert_eq!(out.dst, c);
        announced.push(real.public);
    }
    assert_eq!(server.store().len(now), ONION_ANNOUNCE_MAX_ENTRIES);
    announced.sort_by(|a, b| cmp_distance(&keys.public, a, b));
    for (i, pk) in announced.iter().enumerate() {
        assert_eq!(
            server.store().data_pk(now, pk).is_some(),
            i < ONION_ANNOUNCE_MAX_ENTRIES,
            "key {i}"
        );
    }
    // Expired slots are reused by anyone.
    let later = now + ONION_ANNOUNCE_TIMEOUT;
    assert!(server.store().is_empty(later));
}

#[test]
fn responses_unwind_only_through_our_sendbacks() {
    let mut net = Net::new(3);
    let a = client(&mut net, 1, [0, 1, 2]);
    // A response to a sendback we never made.
    let forged = response::encode(ReturnLevel::Three, &[5; 177], &[0x84; 100]).unwrap();
    assert_eq!(
        net.run(Net::addr(1), Net::addr(2), forged),
        Err(OnionDrop::BadSendback)
    );
    // A real path: capture what C would deliver to D, then answer it.
    let d: SocketAddr = "203.0.113.77:33445".parse().unwrap();
    let packet = a.path.request(d, &[0x83; 177], &mut net.rng).unwrap();
    let (c_addr, to, at_d) = net.run(a.addr, Net::addr(0), packet).unwrap();
    assert_eq!(to, d);
    let ret = &at_d[177..];
    let reply = response::encode(ReturnLevel::Three, ret, &[0x84; 90]).unwrap();
    let (_, to, bytes) = net.run(d, c_addr, reply.clone()).unwrap();
    assert_eq!((to, bytes), (a.addr, vec![0x84; 90]));
    // A response of another kind does not pass.
    let bad = response::encode(ReturnLevel::Three, ret, &[0x87; 90]).unwrap();
    assert_eq!(net.run(d, c_addr, bad), Err(OnionDrop::ForbiddenPayload));
    // After the key refresh (2 h) the old path is dead at C.
    let refresh = net.server(2).poll_timeout();
    assert_eq!(refresh, net.now + KEY_REFRESH_INTERVAL);
    net.now = refresh;
    assert_eq!(net.run(d, c_addr, reply), Err(OnionDrop::BadSendback));
    assert_eq!(net.server(2).stats().key_refreshes, 1);
    assert_eq!(
        net.server(2).stats().dropped(OnionDrop::BadSendback),
        2,
        "the forged one too"
    );
}

#[test]
fn port_zero_and_tcp_returns_are_refused() {
    let mut net = Net::new(3);
    let a = client(&mut net, 1, [0, 1, 2]);
    let packet = a
        .path
        .request(
            "203.0.113.5:33445".parse().unwrap(),
            &[0x83; 177],
            &mut net.rng,
        )
        .unwrap();
    let zero = SocketAddr::from(([192, 0, 2, 1], 0));
    assert_eq!(
        net.run(zero, Net::addr(0), packet.clone()),
        Err(OnionDrop::FromPortZero)
    );
    let to_zero = a
        .path
        .request("203.0.113.5:0".parse().unwrap(), &[0x83; 177], &mut net.rng)
        .unwrap();
    assert_eq!(
        net.run(a.addr, Net::addr(0), to_zero),
        Err(OnionDrop::ToPortZero)
    );
    // A first-hop sendback naming a TCP client connection (family 11): typed, not sent.
    let mut tcp_ret = Vec::new();
    let key = net.server(0).relay.sendback_key().clone();
    let con = IpPort::Other {
        family: FAMILY_TCP_CLIENT,
        addr: [1; 16],
        port: 0,
    };
    sendback::seal_into(
        &mut tcp_ret,
        ReturnLevel::One,
        &key,
        &Nonce([0; 24]),
        &con,
        &[],
    )
    .unwrap();
    let resp = response::encode(ReturnLevel::One, &tcp_ret, &[0x86; 130]).unwrap();
    assert_eq!(
        net.run(Net::addr(1), Net::addr(0), resp),
        Err(OnionDrop::TcpReturn)
    );
    // Kinds a server does not serve.
    for k in [0x84u8, 0x86, 0x88, 0x02] {
        assert_eq!(
            net.run(a.addr, Net::addr(0), vec![k; 400]),
            Err(OnionDrop::UnknownKind)
        );
    }
}

/// A layer or announce key of low order is refused before any box is opened, typed and
/// counted: libsodium's `crypto_box_beforenm` refuses it.
#[test]
fn low_order_keys_are_refused() {
    let mut net = Net::new(3);
    let a = client(&mut net, 1, [0, 1, 2]);
    // 1, a point of order 1.
    let mut one = PublicKey([0; 32]);
    one.0[0] = 1;
    // A relay request naming it as the layer key: [0x80][nonce 24][pk 32][box].
    let mut packet = a
        .path
        .request(Net::addr(2), &[0x83; 177], &mut net.rng)
        .unwrap();
    packet[25..57].copy_from_slice(&one.0);
    assert_eq!(net.deliver(0, a.addr, &packet), Err(OnionDrop::LowOrderKey));
    assert_eq!(net.server(0).stats().dropped(OnionDrop::LowOrderKey), 1);
    // An announce whose sender key is that point, through a sound path.
    let sender = KeyPair {
        public: one,
        secret: KeyPair::generate(&mut net.rng).secret,
    };
    let key = PrecomputedKey::new(&net.node(2).pk, &sender.secret).unwrap();
    let request = AnnounceRequest {
        ping_id: [0; 32],
        searched_pk: one,
        data_pk: one,
        sendback: [1; 8],
    }
    .seal(&one, &key, &Nonce([3; 24]));
    let packet = a
        .path
        .request(Net::addr(2), &request, &mut net.rng)
        .unwrap();
    assert_eq!(
        net.run(a.addr, Net::addr(0), packet),
        Err(OnionDrop::LowOrderKey)
    );
    assert_eq!(net.server(2).stats().dropped(OnionDrop::LowOrderKey), 1);
    // No path can be built through a relay with such a key.
    let mut nodes = [net.node(0), net.node(1), net.node(2)];
    nodes[1].pk = one;
    assert_eq!(
        OnionPath::new(&a.dht, nodes, &mut net.rng).err(),
        Some(crate::onion::wire::request::RequestError::LowOrderKey)
    );
}

#[test]
fn data_for_unknown_keys_is_dropped_and_lan_is_passed_to_the_dht() {
    let mut net = Net::new(4);
    let a = client(&mut net, 1, [0, 1, 2]);
    let nonce = Nonce([1; 24]);
    let inner = data::seal_inner(
        &a.real.public,
        &PrecomputedKey::new(&a.data.public, &a.real.secret).unwrap(),
        &nonce,
        b"x",
    )
    .unwrap();
    let req = data::seal_request(
        &PublicKey([9; 32]),
        &a.data.public,
        &nonce,
        &inner,
        &mut net.rng,
    )
    .unwrap();
    let packet = a.path.request(Net::addr(3), &req, &mut net.rng).unwrap();
    assert_eq!(
        net.run(a.addr, Net::addr(0), packet),
        Err(OnionDrop::UnknownDestination)
    );
    self_announce(&mut net, &a, 3, [0; 32]);
    assert_eq!(
        net.dht.asked_lan.get(),
        Some(false),
        "198.51.100.x is not LAN"
    );
}

#[test]
fn rate_limit_runs_before_decryption() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let keys = KeyPair::generate(&mut rng);
    let config = OnionConfig {
        guard: GuardConfig {
            rate: Some(1.0),
            burst: 4.0,
            ..GuardConfig::default()
        },
    };
    let mut server = OnionServer::new(&keys, config, Timestamp::ZERO, &mut rng);
    let from = SocketAddr::from(([192, 0, 2, 1], 5));
    let mut results = Vec::new();
    for _ in 0..10 {
        let mut junk = vec![0x80u8; 300];
        rand_chacha::rand_core::RngCore::fill_bytes(&mut rng, &mut junk[1..]);
        results.push(server.handle_datagram(Timestamp::ZERO, from, &junk, &NoNodes, &mut rng));
    }
    assert_eq!(
        results
            .iter()
            .filter(|r| **r == Err(OnionDrop::Decrypt))
            .count(),
        4
    );
    assert_eq!(server.stats().dropped(OnionDrop::RateLimited), 6);
    assert_eq!(server.key_agreements(), 4);
}

/// An announce request (0x83) as hop C delivers it: from `real`, searching its own key.
fn announce_0x83(
    server_pk: &PublicKey,
    real: &KeyPair,
    ping_id: PingId,
    rng: &mut ChaCha8Rng,
) -> Vec<u8> {
    let key = PrecomputedKey::new(server_pk, &real.secret).unwrap();
    let req = AnnounceRequest {
        ping_id,
        searched_pk: real.public,
        data_pk: real.public,
        sendback: [0; 8],
    };
    let mut bytes = req.seal(&real.public, &key, &Nonce::random(rng));
    bytes.extend_from_slice(&[7; 177]);
    bytes
}

/// Announce requests from fresh keys and many (spoofed) sources pass every per-source
/// limit; their key agreements stay within the server's budget for all sources together.
/// A client whose key is agreed already is answered all through the flood, even from a
/// relay it never used before, and a new client once the flood stops.
#[test]
fn a_flood_of_fresh_announce_keys_costs_at_most_the_key_budget() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let keys = KeyPair::generate(&mut rng);
    let mut server = OnionServer::new(&keys, OnionConfig::default(), Timestamp::ZERO, &mut rng);
    let limit = OnionConfig::default().guard.key_agreements.unwrap();
    let honest = KeyPair::generate(&mut rng);
    let t0 = Timestamp::from_secs(1);
    let c1 = SocketAddr::from(([198, 51, 100, 1], 33445));
    let first = announce_0x83(&keys.public, &honest, [0; 32], &mut rng);
    server
        .handle_datagram(t0, c1, &first, &NoNodes, &mut rng)
        .unwrap();

    // 5000 fresh keys from 5000 addresses over 0.1 s (50 000/s); the honest client asks
    // every 500 through another relay.
    let flood: Vec<Vec<u8>> = (0..5000)
        .map(|_| {
            announce_0x83(
                &keys.public,
                &KeyPair::generate(&mut rng),
                [0; 32],
                &mut rng,
            )
        })
        .collect();
    let before = server.key_agreements();
    let (mut answered, mut honest_answered) = (0u64, 0);
    let mut now = t0;
    let c2 = SocketAddr::from(([198, 51, 100, 2], 33445));
    for (i, bytes) in flood.iter().enumerate() {
        now = t0 + Duration::from_micros(20 * i as u64);
        let from = SocketAddr::from(([10, (i / 250) as u8, (i % 250) as u8, 1], 33445));
        answered += u64::from(
            server
                .handle_datagram(now, from, bytes, &NoNodes, &mut rng)
                .is_ok(),
        );
        if i % 500 == 499 {
            let again = announce_0x83(&keys.public, &honest, [0; 32], &mut rng);
            let out = server
                .handle_datagram(now, c2, &again, &NoNodes, &mut rng)
                .expect("a key agreed before the flood needs no budget");
            honest_answered += usize::from(out.dst == c2);
        }
    }
    let allowed = TokenBucket::most_in(limit.burst, limit.interval, now - t0);
    let agreed = server.key_agreements() - before;
    assert!(
        agreed <= allowed,
        "{agreed} key agreements, {allowed} allowed"
    );
    assert_eq!(answered, agreed, "each answer took one agreement");
    assert!(
        answered + 1 >= allowed,
        "the budget is used: {answered} of {allowed}"
    );
    assert_eq!(
        server.stats().dropped(OnionDrop::KeyBudget),
        5000 - answered
    );
    assert_eq!(honest_answered, 10);

    // The flood over, a new client is answered.
    let later = now + limit.interval * 2;
    let newcomer = announce_0x83(
        &keys.public,
        &KeyPair::generate(&mut rng),
        [0; 32],
        &mut rng,
    );
    assert_eq!(
        server
            .handle_datagram(later, c1, &newcomer, &NoNodes, &mut rng)
            .map(|t| t.dst),
        Ok(c1)
    );
}

#[test]
fn the_timer_replaces_the_sendback_key_every_two_hours() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let keys = KeyPair::generate(&mut rng);
    let t0 = Timestamp::from_secs(50);
    let mut server = OnionServer::new(&keys, OnionConfig::default(), t0, &mut rng);
    assert_eq!(server.poll_timeout(), t0 + KEY_REFRESH_INTERVAL);
    let before = server.relay.sendback_key().clone();
    server.handle_timeout(t0 + KEY_REFRESH_INTERVAL - Duration::from_secs(1), &mut rng);
    assert_eq!(server.stats().key_refreshes, 0);
    let t1 = t0 + KEY_REFRESH_INTERVAL;
    server.handle_timeout(t1, &mut rng);
    assert_eq!(server.stats().key_refreshes, 1);
    assert_eq!(server.poll_timeout(), t1 + KEY_REFRESH_INTERVAL);
    let nonce = Nonce([0; 24]);
    assert_ne!(
        before.encrypt(&nonce, b"x"),
        server.relay.sendback_key().encrypt(&nonce, b"x")
    );
}

proptest! {
    #[test]
    fn arbitrary_datagrams_never_panic_or_grow_memory(
        packets in proptest::collection::vec((0x80u8..=0x8e, proptest::collection::vec(any::<u8>(), 0..1500), any::<u8>()), 1..40)
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let keys = KeyPair::generate(&mut rng);
        let mut server = OnionServer::new(&keys, OnionConfig::default(), Timestamp::ZERO, &mut rng);
        let mut now = Timestamp::ZERO;
        for (k, mut bytes, src) in packets {
            bytes.insert(0, k);
            let from = SocketAddr::from(([10, 0, 0, src], u16::from(src)));
            if let Ok(t) = server.handle_datagram(now, from, &bytes, &NoNodes, &mut rng) {
                prop_assert!(t.payload.len() <= bytes.len() + 110);
                prop_assert!(t.dst.port() != 0);
            }
            now += Duration::from_secs(97);
            server.handle_timeout(now, &mut rng);
        }
        prop_assert!(server.store().len(now) <= ONION_ANNOUNCE_MAX_ENTRIES);
        let s = server.stats();
        prop_assert_eq!(s.datagrams_in, s.forwarded() + s.total_dropped());
    }
}

/// The largest announce response: four IPv6 nodes, 464 bytes for a 354-byte request.
#[test]
fn announce_reply_is_at_most_110_bytes_longer_than_its_request() {
    let mut net = Net::new(4);
    net.dht.nodes = (0..4)
        .map(|i| {
            PackedNode::udp(
                SocketAddr::new(format!("2001:db8::{i}").parse().unwrap(), 1),
                PublicKey([i; 32]),
            )
        })
        .collect();
    let a = client(&mut net, 1, [0, 1, 2]);
    let real = KeyPair::from_secret(a.real.secret.clone());
    let key = PrecomputedKey::new(&net.node(3).pk, &real.secret).unwrap();
    let req = AnnounceRequest {
        ping_id: [0; 32],
        searched_pk: real.public,
        data_pk: a.data.public,
        sendback: [0; 8],
    };
    let mut at_d = req.seal(&real.public, &key, &Nonce([0; 24]));
    at_d.extend_from_slice(&[0; 177]);
    let out = net.deliver(3, Net::addr(2), &at_d).unwrap();
    assert_eq!((at_d.len(), out.payload.len()), (354, 464));
}

/// Sends a 0x87 from `sender` with `extra` through the client's path to server `d`, and
/// opens the 0x88 that comes back to the client.
fn announce_ext(
    net: &mut Net,
    c: &Client,
    d: usize,
    sender: &KeyPair,
    req: AnnounceRequest,
    extra: &[u8],
) -> Result<ExtAnnounceResponse, OnionDrop> {
    let d_node = net.node(d);
    let key = PrecomputedKey::new(&d_node.pk, &sender.secret).unwrap();
    let inner = announce_ext::seal_request(
        &req,
        &sender.public,
        &key,
        &Nonce::random(&mut net.rng),
        extra,
    )
    .unwrap();
    let packet = c.path.request(d_node.addr, &inner, &mut net.rng).unwrap();
    let (from, to, bytes) = net.run(c.addr, c.path.nodes()[0].addr, packet)?;
    assert_eq!((from, to), (c.path.nodes()[0].addr, c.addr));
    Ok(ExtAnnounceResponse::open(&bytes, &key).unwrap())
}

fn group_announce(chat: &PublicKey, peer: &KeyPair, port: u16) -> PublicGroupAnnounce {
    PublicGroupAnnounce {
        chat_pk: *chat,
        announce: GroupAnnounce {
            peer_pk: peer.public,
            addr: Some(SocketAddr::from(([192, 0, 2, 9], port))),
            relay: Some(PackedNode {
                addr: SocketAddr::from(([192, 0, 2, 10], 443)),
                tcp: true,
                pk: PublicKey([3; 32]),
            }),
        },
    }
}

/// NGC peers of one public group announce themselves with 0x87 through three relays to the
/// same announce node; each learns the others from the 0x88 (c-toxcore 0.2.19+
/// `pack_group_announces`), the requester never itself, and a 0x87 without a group
/// announce is answered as 0.2.18 answers it: a 0x88 with a node count and no announces.
#[test]
fn group_peers_find_each_other_through_extended_announces() {
    let mut net = Net::new(4);
    const D: usize = 3;
    let chat = KeyPair::generate(&mut net.rng).public;
    let founder = client(&mut net, 1, [0, 1, 2]);
    let joiner = client(&mut net, 2, [2, 0, 1]);
    let (f_peer, j_peer) = (
        KeyPair::generate(&mut net.rng),
        KeyPair::generate(&mut net.rng),
    );
    let search = |sendback| AnnounceRequest {
        ping_id: [0; 32],
        searched_pk: chat,
        data_pk: PublicKey([0; 32]),
        sendback,
    };
    let temp_f = KeyPair::generate(&mut net.rng);
    let f_ann = group_announce(&chat, &f_peer, 1001);
    let r = announce_ext(
        &mut net,
        &founder,
        D,
        &temp_f,
        search([1; 8]),
        &f_ann.encode(),
    )
    .unwrap();
    assert!(r.announces.is_empty(), "nobody else yet");
    assert!(matches!(r.status, AnnounceStatus::NotStored(_)));
    assert_eq!(r.nodes.len(), 4);
    let temp_j = KeyPair::generate(&mut net.rng);
    let j_ann = group_announce(&chat, &j_peer, 1002);
    let r = announce_ext(
        &mut net,
        &joiner,
        D,
        &temp_j,
        search([2; 8]),
        &j_ann.encode(),
    )
    .unwrap();
    assert_eq!(r.sendback, [2; 8]);
    assert_eq!(r.announces, vec![f_ann.announce]);
    // The founder, announcing again, hears of the joiner and not of itself.
    let r = announce_ext(
        &mut net,
        &founder,
        D,
        &temp_f,
        search([3; 8]),
        &f_ann.encode(),
    )
    .unwrap();
    assert_eq!(r.announces, vec![j_ann.announce]);
    // No extra data: a plain 0x88.
    let r = announce_ext(&mut net, &joiner, D, &temp_j, search([4; 8]), &[]).unwrap();
    assert!(r.announces.is_empty());
    assert_eq!(r.nodes.len(), 4);
    // Another chat's peers are not told.
    let other = group_announce(&PublicKey([0x55; 32]), &KeyPair::generate(&mut net.rng), 9);
    let r = announce_ext(
        &mut net,
        &joiner,
        D,
        &temp_j,
        search([5; 8]),
        &other.encode(),
    )
    .unwrap();
    assert!(r.announces.is_empty());
    let s = net.server(D).stats();
    assert_eq!(
        (
            s.announces_answered,
            s.group_announces_stored,
            s.group_announces_sent
        ),
        (5, 4, 2)
    );
    let now = net.now;
    assert_eq!(net.server(D).groups().len(now), 2);
    // After 30 s without an announce the chat is forgotten.
    net.now += Duration::from_secs(31);
    let now = net.now;
    assert!(net.server(D).groups().is_empty(now));
}

#[test]
fn a_bad_group_announce_gets_no_answer_and_changes_nothing() {
    let mut net = Net::new(4);
    const D: usize = 3;
    let a = client(&mut net, 1, [0, 1, 2]);
    let temp = KeyPair::generate(&mut net.rng);
    let req = AnnounceRequest {
        ping_id: [0; 32],
        searched_pk: PublicKey([9; 32]),
        data_pk: PublicKey([0; 32]),
        sendback: [1; 8],
    };
    let mut bad = group_announce(&PublicKey([9; 32]), &temp, 5).encode();
    bad[65] = 2; // two relays
    assert_eq!(
        announce_ext(&mut net, &a, D, &temp, req, &bad),
        Err(OnionDrop::BadGroupAnnounce)
    );
    let now = net.now;
    assert!(net.server(D).groups().is_empty(now));
    assert_eq!(
        net.server(D).stats().dropped(OnionDrop::BadGroupAnnounce),
        1
    );
    // Longer than 313 + 177 bytes at D: a length error before any decryption.
    let long = vec![0x87; 177 + 314];
    assert_eq!(
        net.deliver(D, Net::addr(2), &long),
        Err(OnionDrop::BadLength)
    );
}

/// The 0x88 never exceeds the 626 bytes an NGC client accepts: with four IPv6 nodes and
/// many peers, the announces that do not fit are left out.
#[test]
fn extended_responses_fit_what_clients_accept() {
    let mut net = Net::new(4);
    net.dht = FakeDht {
        nodes: (0..4)
            .map(|i| {
                PackedNode::udp(
                    format!("[2001:db8::{}]:33445", i + 1).parse().unwrap(),
                    KeyPair::generate(&mut net.rng).public,
                )
            })
            .collect(),
        asked_lan: std::cell::Cell::new(None),
    };
    const D: usize = 3;
    let a = client(&mut net, 1, [0, 1, 2]);
    let chat = PublicKey([7; 32]);
    let mut last = None;
    for i in 0..6u16 {
        let temp = KeyPair::generate(&mut net.rng);
        let mut ann = group_announce(&chat, &temp, 2000 + i);
        ann.announce.addr = Some(format!("[2001:db8::99]:{}", 2000 + i).parse().unwrap());
        ann.announce.relay.as_mut().unwrap().addr = "[2001:db8::98]:443".parse().unwrap();
        let req = AnnounceRequest {
            ping_id: [0; 32],
            searched_pk: chat,
            data_pk: PublicKey([0; 32]),
            sendback: [1; 8],
        };
        last = Some(announce_ext(&mut net, &a, D, &temp, req, &ann.encode()).unwrap());
    }
    let last = last.unwrap();
    assert_eq!(last.nodes.len(), 4);
    assert!(!last.announces.is_empty() && last.announces.len() < 4);
    assert!(last.sealed_len() <= 626);
}
