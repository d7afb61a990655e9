//! Behaviour of the sans-IO DHT node, driven in virtual time over an in-memory network.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_core::dht::gate::GateError;
use rustox_core::dht::wire::bootstrap_info;
use rustox_core::dht::wire::dht_packet::DhtMessage;
use rustox_core::dht::wire::lan_discovery;
use rustox_core::dht::wire::nodes::{NodesRequest, NodesResponse};
use rustox_core::dht::wire::ping::Ping;
use rustox_core::dht::{BootstrapInfo, DhtConfig, DhtNode, GuardConfig, PackedNode};
use rustox_net_crypto::crypto::{KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey};
use rustox_net_crypto::token_bucket::TokenBucket;
use rustox_net_crypto::Timestamp;

struct Net {
    nodes: Vec<DhtNode>,
    addrs: Vec<SocketAddr>,
    by_addr: HashMap<SocketAddr, usize>,
    now: Timestamp,
    rng: ChaCha8Rng,
    loss: f64,
    /// Pairs of nodes that cannot reach each other directly (a NAT between them).
    blocked: Vec<(usize, usize)>,
}

impl Net {
    fn new(n: usize, seed: u64, config: DhtConfig) -> Net {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut nodes = Vec::new();
        let mut addrs = Vec::new();
        let mut by_addr = HashMap::new();
        for i in 0..n {
            let keys = KeyPair::generate(&mut rng);
            nodes.push(DhtNode::new(
                keys,
                config.clone(),
                Timestamp::ZERO,
                &mut rng,
            ));
            // Distinct loopback IPs, so per-source limits see distinct sources.
            let addr: SocketAddr = format!("127.0.{}.{}:33445", i / 250, i % 250 + 1)
                .parse()
                .unwrap();
            by_addr.insert(addr, i);
            addrs.push(addr);
        }
        Net {
            nodes,
            addrs,
            by_addr,
            now: Timestamp::ZERO,
            rng,
            loss: 0.0,
            blocked: Vec::new(),
        }
    }

    fn bootstrap(&mut self, i: usize, j: usize) {
        let pk = self.nodes[j].public_key();
        let addr = self.addrs[j];
        self.nodes[i].bootstrap(self.now, addr, pk, &mut self.rng);
    }

    /// Delivers everything queued (instantly) until the network is quiet.
    fn deliver(&mut self) {
        loop {
            let mut moved = false;
            for i in 0..self.nodes.len() {
                while let Some(t) = self.nodes[i].poll_transmit(self.now, &mut self.rng) {
                    moved = true;
                    if self.loss > 0.0 && (self.rng.next_u32() as f64 / u32::MAX as f64) < self.loss
                    {
                        continue;
                    }
                    if let Some(&j) = self.by_addr.get(&t.dst) {
                        if self.blocked.contains(&(i, j)) || self.blocked.contains(&(j, i)) {
                            continue;
                        }
                        let from = self.addrs[i];
                        let _ = self.nodes[j].handle_datagram(
                            self.now,
                            from,
                            &t.payload,
                            &mut self.rng,
                        );
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }

    fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        while self.now < end {
            self.deliver();
            let next = self
                .nodes
                .iter()
                .map(|n| n.poll_timeout())
                .min()
                .unwrap()
                .max(self.now);
            self.now = next.min(end);
            for n in &mut self.nodes {
                if n.poll_timeout() <= self.now {
                    n.handle_timeout(self.now, &mut self.rng);
                }
            }
            if self.now == end {
                self.deliver();
                break;
            }
        }
    }
}

/// A node with fresh keys from `rng`, started at time zero.
fn node_with(config: DhtConfig, rng: &mut ChaCha8Rng) -> DhtNode {
    DhtNode::new(KeyPair::generate(rng), config, Timestamp::ZERO, rng)
}

fn quiet() -> DhtConfig {
    DhtConfig {
        lan_discovery: false,
        ..DhtConfig::default()
    }
}

#[test]
fn bootstrapping_adds_both_sides_after_they_answer() {
    let mut net = Net::new(2, 1, quiet());
    net.bootstrap(0, 1);
    net.run_for(Duration::from_secs(5));
    let now = net.now;
    let pk1 = net.nodes[1].public_key();
    let pk0 = net.nodes[0].public_key();
    assert!(net.nodes[0].close_nodes(now).iter().any(|n| n.pk == pk1));
    assert!(
        net.nodes[1].close_nodes(now).iter().any(|n| n.pk == pk0),
        "B pings A back and adds it once A answers"
    );
    assert!(net.nodes[1].stats().nodes_answered >= 1);
    assert!(net.nodes[1].stats().pings_sent >= 1);
}

/// A node bootstrapped while its UDP is blocked (no answer ever came) joins once UDP works:
/// it asks its bootstrap nodes again every `REBOOTSTRAP_INTERVAL` while no node is good, and
/// stops asking once one is.
#[test]
fn a_node_whose_udp_was_blocked_at_bootstrap_rejoins_when_it_works() {
    let mut net = Net::new(2, 7, quiet());
    net.blocked.push((0, 1));
    net.bootstrap(0, 1);
    net.run_for(Duration::from_secs(60));
    let pk1 = net.nodes[1].public_key();
    let now = net.now;
    assert!(
        net.nodes[0].close_nodes(now).is_empty(),
        "nothing got through"
    );
    net.blocked.clear();
    net.run_for(rustox_core::dht::timers::REBOOTSTRAP_INTERVAL + Duration::from_secs(12));
    let now = net.now;
    assert!(
        net.nodes[0].close_nodes(now).iter().any(|n| n.pk == pk1),
        "the bootstrap node was asked again and answered"
    );
    // Connected: the bootstrap node is asked no more than by a node that joined at once
    // (the DHT's own rounds: its close list and fake-friend searches).
    let asked_before = net.nodes[1].stats().nodes_answered;
    net.run_for(Duration::from_secs(120));
    let asked = net.nodes[1].stats().nodes_answered - asked_before;
    let mut control = Net::new(2, 7, quiet());
    control.bootstrap(0, 1);
    control.run_for(Duration::from_secs(92));
    let control_before = control.nodes[1].stats().nodes_answered;
    control.run_for(Duration::from_secs(120));
    let control_asked = control.nodes[1].stats().nodes_answered - control_before;
    assert!(
        asked <= control_asked + 2,
        "{asked} get-nodes answered in 120 s once connected, {control_asked} for a node that \
         joined at once"
    );
}

#[test]
fn small_network_converges_to_true_closest() {
    // The 4 closest (MAX_SENT_NODES): a get-nodes for a key returns the 4 closest its
    // responder knows, so those are the nodes the protocol guarantees to find. Ranks 5–8
    // are found only by chance: with seed 2, two nodes in each other's bucket 2 (ranks 6
    // and 7) never meet in 240 s because 4 closer nodes always fill every answer.
    const K_CLOSEST: usize = 4;
    let mut net = Net::new(40, 2, quiet());
    for i in 1..40 {
        net.bootstrap(i, 0);
    }
    net.run_for(Duration::from_secs(60));
    let now = net.now;
    let all: Vec<PublicKey> = net.nodes.iter().map(|n| n.public_key()).collect();
    for n in &net.nodes {
        let me = n.public_key();
        let truth: Vec<PublicKey> = all.iter().copied().filter(|k| *k != me).collect();
        let have: Vec<PublicKey> = n.close_nodes(now).iter().map(|x| x.pk).collect();
        let missing = missing_closest(&me, n.close_list(), &truth, &have, K_CLOSEST);
        assert!(
            missing.is_empty(),
            "a node misses {} of its closest nodes",
            missing.len()
        );
    }
}

/// An attacker that answers nothing but sends send-nodes with made-up sendbacks and
/// get-nodes from thousands of keys cannot put a single node into the table.
#[test]
fn table_cannot_be_filled_with_nodes_that_never_answered() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let victim_keys = KeyPair::generate(&mut rng);
    let victim_pk = victim_keys.public;
    let config = DhtConfig {
        guard: GuardConfig {
            rate: None,
            burst: 1.0,
            ..GuardConfig::default()
        },
        ..quiet()
    };
    let mut node = DhtNode::new(victim_keys, config, Timestamp::ZERO, &mut rng);
    let mut now = Timestamp::from_secs(1);
    for i in 0..2000u32 {
        let attacker = KeyPair::generate(&mut rng);
        let key = PrecomputedKey::new(&victim_pk, &attacker.secret).unwrap();
        let from: SocketAddr = format!("10.{}.{}.1:1000", i / 250, i % 250)
            .parse()
            .unwrap();
        let fake = PackedNode::udp(
            "10.9.9.9:1".parse().unwrap(),
            KeyPair::generate(&mut rng).public,
        );
        let resp = DhtMessage::NodesResponse(NodesResponse {
            nodes: vec![fake],
            sendback: rng.next_u64(),
        });
        let req = DhtMessage::NodesRequest(NodesRequest {
            searched: victim_pk,
            sendback: 1,
        });
        for msg in [resp, req] {
            let bytes = msg.seal(&attacker.public, &key, &Nonce::random(&mut rng));
            node.handle_datagram(now, from, &bytes, &mut rng).unwrap();
        }
        now += Duration::from_millis(5);
        node.handle_timeout(now, &mut rng);
        while node.poll_transmit(now, &mut rng).is_some() {}
    }
    assert_eq!(node.close_list().iter().count(), 0);
    assert_eq!(node.stats().responses_unsolicited, 2000);
    // The strangers were pinged in batches of at most 32 every 2 s, not 2000 times.
    assert!(
        node.stats().pings_sent <= 32 * 6,
        "pings sent: {}",
        node.stats().pings_sent
    );
}

#[test]
fn a_flood_from_one_source_is_rate_limited_before_decryption() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut node = node_with(quiet(), &mut rng);
    let pk = node.public_key();
    let attacker = KeyPair::generate(&mut rng);
    let key = PrecomputedKey::new(&pk, &attacker.secret).unwrap();
    let from: SocketAddr = "192.0.2.1:5".parse().unwrap();
    let now = Timestamp::from_secs(1);
    let mut answered = 0;
    for _ in 0..1000 {
        let bytes = DhtMessage::Ping(Ping {
            response: false,
            id: 1,
        })
        .seal(&attacker.public, &key, &Nonce::random(&mut rng));
        let _ = node.handle_datagram(now, from, &bytes, &mut rng);
        while node.poll_transmit(now, &mut rng).is_some() {
            answered += 1;
        }
    }
    assert_eq!(answered, 64, "the burst of the default limit");
    assert_eq!(node.gate_stats().rate_limited, 1000 - 64);
}

/// Pings from fresh keys and many (spoofed) sources pass every per-source limit; what bounds
/// their key agreements is the gate's budget for all sources together. A peer whose key is
/// agreed already is answered all through the flood, and a new peer once it stops (issue
/// #15).
#[test]
fn a_flood_of_fresh_keys_from_many_sources_costs_at_most_the_key_budget() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mut node = node_with(quiet(), &mut rng);
    let pk = node.public_key();
    let ping = |sender: &KeyPair, rng: &mut ChaCha8Rng| {
        let key = PrecomputedKey::new(&pk, &sender.secret).unwrap();
        DhtMessage::Ping(Ping {
            response: false,
            id: 1,
        })
        .seal(&sender.public, &key, &Nonce::random(rng))
    };
    let answers_to = |node: &mut DhtNode, now, to: SocketAddr, rng: &mut ChaCha8Rng| {
        let mut n = 0;
        while let Some(t) = node.poll_transmit(now, rng) {
            n += usize::from(t.dst == to);
        }
        n
    };
    let honest = KeyPair::generate(&mut rng);
    let honest_from: SocketAddr = "198.51.100.7:33445".parse().unwrap();
    let t0 = Timestamp::from_secs(1);
    node.handle_datagram(t0, honest_from, &ping(&honest, &mut rng), &mut rng)
        .unwrap();
    assert!(answers_to(&mut node, t0, honest_from, &mut rng) >= 1);

    // 4000 fresh keys from 4000 addresses over 0.4 s (10 000/s), the honest peer pinging
    // between them 40 times.
    let limit = GuardConfig::default().key_agreements.unwrap();
    let flood: Vec<Vec<u8>> = (0..4000)
        .map(|_| ping(&KeyPair::generate(&mut rng), &mut rng))
        .collect();
    let before = node.key_agreements();
    let (mut opened, mut honest_answered) = (0u64, 0);
    let mut now = t0;
    for (i, bytes) in flood.iter().enumerate() {
        now = t0 + Duration::from_micros(100 * i as u64);
        let from = SocketAddr::from(([10, (i / 250) as u8, (i % 250) as u8, 1], 33445));
        opened += u64::from(node.handle_datagram(now, from, bytes, &mut rng).is_ok());
        while node.poll_transmit(now, &mut rng).is_some() {}
        if i % 100 == 99 {
            node.handle_datagram(now, honest_from, &ping(&honest, &mut rng), &mut rng)
                .expect("a key agreed before the flood needs no budget");
            honest_answered += answers_to(&mut node, now, honest_from, &mut rng);
        }
    }
    let elapsed = now - t0;
    let allowed = TokenBucket::most_in(limit.burst, limit.interval, elapsed);
    let agreed = node.key_agreements() - before;
    assert!(
        agreed <= allowed,
        "{agreed} key agreements, {allowed} allowed"
    );
    assert_eq!(opened, agreed, "each opened ping took one agreement");
    assert!(
        opened + 1 >= allowed,
        "the budget is used: {opened} of {allowed}"
    );
    assert_eq!(node.gate_stats().key_budget, 4000 - opened);
    assert!(
        honest_answered >= 40,
        "{honest_answered} answers to 40 pings"
    );

    // The flood over, a new peer is answered.
    let later = now + limit.interval * 2;
    let newcomer = KeyPair::generate(&mut rng);
    let newcomer_from: SocketAddr = "198.51.100.8:33445".parse().unwrap();
    node.handle_datagram(later, newcomer_from, &ping(&newcomer, &mut rng), &mut rng)
        .unwrap();
    assert!(answers_to(&mut node, later, newcomer_from, &mut rng) >= 1);
}

/// A ping whose sender key has low order is dropped, unanswered and counted: libsodium's
/// `crypto_box_beforenm` refuses such a key (c-toxcore drops the packet), and a key agreed
/// with it would be one anyone can compute.
#[test]
fn a_ping_from_a_low_order_key_is_dropped_unanswered() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut node = node_with(quiet(), &mut rng);
    let peer = KeyPair::generate(&mut rng);
    let key = PrecomputedKey::new(&node.public_key(), &peer.secret).unwrap();
    let mut bytes = DhtMessage::Ping(Ping {
        response: false,
        id: 7,
    })
    .seal(&peer.public, &key, &Nonce::random(&mut rng));
    // [kind][sender pk 32]...: name p − 1, a point of order 2, as the sender.
    let mut p_minus_1 = [0xff; 32];
    p_minus_1[0] = 0xec;
    p_minus_1[31] = 0x7f;
    bytes[1..33].copy_from_slice(&p_minus_1);
    let now = Timestamp::from_secs(1);
    let from: SocketAddr = "192.0.2.1:33445".parse().unwrap();
    assert_eq!(
        node.handle_datagram(now, from, &bytes, &mut rng),
        Err(GateError::LowOrderPublicKey(LowOrderPublicKey))
    );
    assert!(node.poll_transmit(now, &mut rng).is_none());
    assert_eq!(node.gate_stats().low_order_keys, 1);
    assert_eq!(node.gate_stats().malformed, 0);
}

/// A valid ping from UDP port 0 is dropped on arrival: no reply could reach that port, and
/// answering it would only make the OS refuse the send (only a spoofed datagram comes
/// from port 0).
#[test]
fn a_ping_from_port_zero_is_dropped_unanswered() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut node = node_with(quiet(), &mut rng);
    let pk = node.public_key();
    let peer = KeyPair::generate(&mut rng);
    let key = PrecomputedKey::new(&pk, &peer.secret).unwrap();
    let now = Timestamp::from_secs(1);
    let ping = |rng: &mut ChaCha8Rng| {
        DhtMessage::Ping(Ping {
            response: false,
            id: 7,
        })
        .seal(&peer.public, &key, &Nonce::random(rng))
    };
    let spoofed: SocketAddr = "192.0.2.1:0".parse().unwrap();
    assert!(node
        .handle_datagram(now, spoofed, &ping(&mut rng), &mut rng)
        .is_err());
    assert!(node.poll_transmit(now, &mut rng).is_none());
    assert_eq!(node.gate_stats().from_port_zero, 1);
    // The same ping from a real port is answered.
    let honest: SocketAddr = "192.0.2.1:33445".parse().unwrap();
    node.handle_datagram(now, honest, &ping(&mut rng), &mut rng)
        .unwrap();
    let reply = node.poll_transmit(now, &mut rng).expect("a pong");
    assert_eq!(reply.dst, honest);
}

#[test]
fn bytes_sent_to_a_spoofed_source_stay_within_four_times_received() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let config = DhtConfig {
        bootstrap_info: Some(BootstrapInfo {
            version: 1,
            motd: vec![b'm'; 256],
        }),
        guard: GuardConfig {
            rate: None,
            burst: 1.0,
            ..GuardConfig::default()
        },
        ..quiet()
    };
    let mut node = node_with(config, &mut rng);
    let victim: SocketAddr = "198.51.100.7:33445".parse().unwrap();
    let mut now = Timestamp::from_secs(1);
    let (mut sent, mut received) = (0usize, 0usize);
    for _ in 0..500 {
        let req = bootstrap_info::encode_request();
        received += req.len();
        node.handle_datagram(now, victim, &req, &mut rng).unwrap();
        now += Duration::from_millis(10);
        node.handle_timeout(now, &mut rng);
        while let Some(t) = node.poll_transmit(now, &mut rng) {
            if t.dst == victim {
                sent += t.payload.len();
                assert_eq!(bootstrap_info::decode_reply(&t.payload).unwrap().0, 1);
            }
        }
    }
    assert!(sent <= 4 * received, "sent {sent} for {received}");
    assert!(
        sent >= 3 * received,
        "honest requests are still answered: {sent} for {received}"
    );
}

#[test]
fn bootstrap_info_needs_configuration_and_exact_size() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut plain = node_with(quiet(), &mut rng);
    let from: SocketAddr = "127.0.0.1:9".parse().unwrap();
    plain
        .handle_datagram(
            Timestamp::ZERO,
            from,
            &bootstrap_info::encode_request(),
            &mut rng,
        )
        .unwrap();
    assert!(plain.poll_transmit(Timestamp::ZERO, &mut rng).is_none());
    let config = DhtConfig {
        bootstrap_info: Some(BootstrapInfo {
            version: 7,
            motd: b"hi\0".to_vec(),
        }),
        ..quiet()
    };
    let mut boot = node_with(config, &mut rng);
    assert!(boot
        .handle_datagram(
            Timestamp::ZERO,
            from,
            &bootstrap_info::encode_request()[..77],
            &mut rng
        )
        .is_err());
    boot.handle_datagram(
        Timestamp::ZERO,
        from,
        &bootstrap_info::encode_request(),
        &mut rng,
    )
    .unwrap();
    let t = boot.poll_transmit(Timestamp::ZERO, &mut rng).unwrap();
    assert_eq!(t.payload, bootstrap_info::encode_reply(7, b"hi\0"));
}

#[test]
fn lan_discovery_is_honoured_only_from_lan_sources() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut node = node_with(DhtConfig::default(), &mut rng);
    let peer = KeyPair::generate(&mut rng).public;
    let packet = lan_discovery::encode(&peer);
    let t = Timestamp::ZERO;
    node.handle_datagram(t, "8.8.8.8:33445".parse().unwrap(), &packet, &mut rng)
        .unwrap();
    assert!(node.poll_transmit(t, &mut rng).is_none());
    node.handle_datagram(t, "192.168.1.5:33445".parse().unwrap(), &packet, &mut rng)
        .unwrap();
    let out = node.poll_transmit(t, &mut rng).unwrap();
    assert_eq!(out.dst, "192.168.1.5:33445".parse::<SocketAddr>().unwrap());
    assert_eq!(out.payload[0], 0x02);
    assert_eq!(out.payload.len(), 113);
    // The node's own LAN discovery round: 33445 plus ten more ports, to broadcast.
    node.handle_timeout(t, &mut rng);
    let lan: Vec<_> = std::iter::from_fn(|| node.poll_transmit(t, &mut rng))
        .filter(|t| t.payload[0] == 0x21)
        .collect();
    assert_eq!(lan.len(), 11);
    assert!(lan
        .iter()
        .all(|t| t.payload.len() == 33 && t.dst.ip().to_string() == "255.255.255.255"));
}

/// Bootstraps every node of `net` from node 0 and makes nodes `a` and `b` search for each
/// other as friends, with an rng seeded with `seed`; `b`'s public key and that rng.
fn befriend_in_network(net: &mut Net, a: usize, b: usize, seed: u64) -> (PublicKey, ChaCha8Rng) {
    for i in 1..net.nodes.len() {
        net.bootstrap(i, 0);
    }
    let pa = net.nodes[a].public_key();
    let pb = net.nodes[b].public_key();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    assert!(net.nodes[a].add_friend(pb, &mut rng));
    assert!(net.nodes[b].add_friend(pa, &mut rng));
    (pb, rng)
}

/// Two friends in a network find each other's addresses through the DHT, and the friend's
/// close nodes report its address (the input of hole punching, see the next test).
#[test]
fn friends_find_each_other_and_their_close_nodes_report_them() {
    let mut net = Net::new(30, 8, quiet());
    let (a, b) = (5, 17);
    let (pb, _) = befriend_in_network(&mut net, a, b, 80);
    net.run_for(Duration::from_secs(40));
    // They reach each other directly here, so no NAT ping is needed.
    let mut found = false;
    while let Some(e) = net.nodes[a].poll_event() {
        if let rustox_core::dht::DhtEvent::FriendAddr { pk, addr } = e {
            found |= pk == pb && addr == net.addrs[b];
        }
    }
    assert!(found, "A learns B's address through the DHT");
    let s = net.nodes[a].searches().iter().find(|s| s.pk == pb).unwrap();
    let reporting = s
        .clients
        .iter()
        .flat_map(|c| c.assocs())
        .filter(|x| x.returned.is_some())
        .count();
    assert!(
        reporting >= 2,
        "B's close nodes report its address ({reporting})"
    );
}

/// The nodes a correct close list must hold and does not: the `k` closest to `me` by XOR
/// (brute force over all keys), except that a k-bucket holds at most 8, so a node is expected
/// only while its bucket has fewer than 8 expected nodes.
fn missing_closest(
    me: &PublicKey,
    list: &rustox_core::dht::close_list::CloseList,
    truth: &[PublicKey],
    have: &[PublicKey],
    k: usize,
) -> Vec<PublicKey> {
    let mut sorted: Vec<PublicKey> = truth.to_vec();
    sorted.sort_by(|a, b| rustox_core::dht::distance::cmp_distance(me, a, b));
    let mut per_bucket = [0usize; 128];
    let mut expected = 0;
    let mut missing = Vec::new();
    for x in sorted {
        if expected == k {
            break;
        }
        let b = list.bucket_of(&x);
        if per_bucket[b] == 8 {
            continue;
        }
        per_bucket[b] += 1;
        expected += 1;
        if !have.contains(&x) {
            missing.push(x);
        }
    }
    missing
}

/// Two friends that cannot reach each other directly: each learns the other's address from
/// the other's close nodes, so they exchange NAT pings routed through those nodes (0x20,
/// request id 254), and once a response matches, they punch (ping the reported address).
#[test]
fn friends_behind_a_nat_exchange_routed_nat_pings_and_punch() {
    let mut net = Net::new(30, 9, quiet());
    let (a, b) = (4, 21);
    net.blocked.push((a, b));
    let (pb, _) = befriend_in_network(&mut net, a, b, 90);
    net.run_for(Duration::from_secs(60));
    let (sa, sb) = (net.nodes[a].stats(), net.nodes[b].stats());
    assert!(sa.nat_pings_received >= 2, "A got NAT pings: {sa:?}");
    assert!(sb.nat_pings_received >= 2, "B got NAT pings: {sb:?}");
    let routed: u64 = net.nodes.iter().map(|n| n.stats().routed).sum();
    assert!(
        routed >= 4,
        "close nodes routed the 0x20 packets ({routed})"
    );
    // Punching: pings to the friend's reported address (blocked here, so unanswered).
    assert!(sa.pings_sent > 0 && sb.pings_sent > 0);
    assert!(
        !net.nodes[a].close_nodes(net.now).iter().any(|n| n.pk == pb),
        "the NAT held"
    );
}

/// LAN addresses are handed out only to requesters on the LAN (c-toxcore `get_close_nodes`).
#[test]
fn lan_addresses_go_only_to_lan_requesters() {
    let mut net = Net::new(3, 10, quiet());
    net.bootstrap(1, 0);
    net.bootstrap(2, 0);
    net.run_for(Duration::from_secs(5));
    let now = net.now;
    let target = net.nodes[1].public_key();
    let on_lan = net.nodes[0].closest_nodes(now, &target, true);
    assert!(
        on_lan.iter().any(|n| n.pk == target),
        "127.x addresses reach LAN requesters"
    );
    assert!(
        net.nodes[0].closest_nodes(now, &target, false).is_empty(),
        "but never the Internet"
    );
}

#[test]
fn a_friend_reached_directly_is_not_searched_for_until_it_is_not() {
    let mut net = Net::new(30, 9, quiet());
    let (a, b) = (4, 21);
    let (pb, mut rng) = befriend_in_network(&mut net, a, b, 90);
    net.run_for(Duration::from_secs(40));
    while net.nodes[a].poll_event().is_some() {}
    let paused_at = net.now;
    assert!(net.nodes[a].set_search_dormant(net.now, &pb, true, &mut rng));
    assert!(!net.nodes[a].set_search_dormant(net.now, &pb, true, &mut rng));
    // Two ping intervals: no node of B's list is asked again.
    net.run_for(Duration::from_secs(130));
    let asked_since = |net: &Net| {
        let s = net.nodes[a].searches().iter().find(|s| s.pk == pb).unwrap();
        s.clients
            .iter()
            .flat_map(|c| c.assocs())
            .filter(|x| x.last_pinged.is_some_and(|t| t > paused_at))
            .count()
    };
    assert_eq!(asked_since(&net), 0, "a dormant search sends nothing");
    // Resumed (the session left UDP): the search is under way at once and finds B again.
    assert!(net.nodes[a].set_search_dormant(net.now, &pb, false, &mut rng));
    net.run_for(Duration::from_secs(20));
    assert!(asked_since(&net) > 0);
    let mut found = false;
    while let Some(e) = net.nodes[a].poll_event() {
        if let rustox_core::dht::DhtEvent::FriendAddr { pk, addr } = e {
            found |= pk == pb && addr == net.addrs[b];
        }
    }
    assert!(found, "A finds B's address again");
}
