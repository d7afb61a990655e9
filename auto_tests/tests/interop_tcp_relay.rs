//! c-toxcore 0.2.18 clients with UDP off, whose only way to each other is a rustox TCP
//! relay (docs/protocol.md §7): they reach the onion through it (packet 8 sent on as
//! hop A into a small UDP DHT of rustox nodes, packet 9 back), find each other, become
//! friends, exchange messages, and move a file over the relay's routes.
//!
//! The DHT is three rustox nodes on loopback: the relay node itself and two more bootstrapped
//! off it. The clients `tox_bootstrap` off all three (with UDP off, c-toxcore uses such nodes
//! only as onion path nodes) and `tox_add_tcp_relay` the relay.
//!
//! Ports 371xx. With `CI` set, a missing c-toxcore fails these tests; otherwise they return
//! at once with a notice.

use rustox_auto_tests::live::wait_until;
use std::net::SocketAddr;
use std::time::Duration;

use rustox_auto_tests::ctoxcore::friend::{CPeer, CPeerOptions, PeerEvent};
use rustox_auto_tests::ctoxcore::{
    file_peer_or_skip, run_transfer, BootstrapSpec, Discovery, Friendship, TransferOptions,
};
use rustox_auto_tests::live::{rustox_bootstrap, rustox_relay};
use rustox_core::driver::workers::NodeRunner;
use rustox_core::relay::server::RelayConfig;
use rustox_net_crypto::crypto::PublicKey;

/// How long two TCP-only clients may take to see each other online. c-toxcore's onion over
/// TCP runs on the same one-second timers as over UDP; this leaves room for a loaded machine.
const ONLINE_LIMIT: Duration = Duration::from_secs(90);

/// The relay node (UDP `base`, TCP `base + 1`) and two DHT nodes (`base + 2`, `base + 3`).
struct Network {
    relay: NodeRunner,
    tcp: SocketAddr,
    _nodes: Vec<NodeRunner>,
    dht: Vec<(SocketAddr, PublicKey)>,
}

fn network(base: u16) -> Network {
    let relay = rustox_relay(base, base + 1, RelayConfig::default()).expect("start the relay");
    let tcp = relay.tcp_addrs()[0];
    let mut dht = vec![(relay.local_addr(), relay.public_key())];
    let mut nodes = Vec::new();
    for port in [base + 2, base + 3] {
        let n = rustox_bootstrap(port).expect("start a DHT node");
        n.bootstrap(relay.local_addr(), relay.public_key());
        relay.bootstrap(n.local_addr(), n.public_key());
        dht.push((n.local_addr(), n.public_key()));
        nodes.push(n);
    }
    Network {
        relay,
        tcp,
        _nodes: nodes,
        dht,
    }
}

#[test]
fn tcp_only_c_toxcore_clients_befriend_and_talk_through_a_rustox_relay() {
    let Some(bin) = rustox_auto_tests::ctoxcore::friend::friend_binary_or_skip() else {
        return;
    };
    let net = network(37101);
    let options = |say: &str| CPeerOptions {
        bootstrap: net.dht.clone(),
        tcp_relays: vec![(net.tcp, net.relay.public_key())],
        no_udp: true,
        say: Some(say.into()),
        ..CPeerOptions::default()
    };
    let b = CPeer::start(
        &bin,
        &CPeerOptions {
            accept: true,
            ..options("hi from b")
        },
    )
    .expect("start b");
    let a = CPeer::start(
        &bin,
        &CPeerOptions {
            request: Some(b.tox_id),
            ..options("hi from a")
        },
    )
    .expect("start a");
    let online = wait_until(ONLINE_LIMIT, || {
        a.log.message().is_some() && b.log.message().is_some()
    });
    let relay = net.relay.stats();
    assert!(
        online,
        "not both online with messages within {ONLINE_LIMIT:?}\n a: {:?}\n b: {:?}\n relay: {:?}\n onion: {:?}",
        a.log.events(),
        b.log.events(),
        relay.relay,
        relay.onion
    );
    assert_eq!(a.log.message().as_deref(), Some("hi from b"));
    assert_eq!(b.log.message().as_deref(), Some("hi from a"));
    // Both saw themselves and the friend connected over TCP (status 1), never UDP.
    for (name, peer) in [("a", &a), ("b", &b)] {
        assert!(
            peer.log.has(|e| matches!(e, PeerEvent::Friend(_, 1))),
            "{name}: {:?}",
            peer.log.events()
        );
        assert!(
            !peer
                .log
                .has(|e| matches!(e, PeerEvent::Friend(_, 2) | PeerEvent::SelfStatus(2))),
            "{name} used UDP: {:?}",
            peer.log.events()
        );
    }
    let r = relay.relay.expect("relay stats");
    assert!(
        r.stats.onion_requests > 0 && r.stats.onion_responses > 0,
        "{r:?}"
    );
    assert!(
        r.stats.routes_linked >= 1 && r.stats.data_forwarded > 0,
        "{r:?}"
    );
    eprintln!(
        "online through the relay: a {:.2} s, b {:.2} s; relay: {r:?}",
        a.log.friend_online().unwrap_or(-1.0),
        b.log.friend_online().unwrap_or(-1.0)
    );
}

#[test]
fn a_file_crosses_a_rustox_relay_between_tcp_only_c_toxcore_clients() {
    let Some(binary) = file_peer_or_skip() else {
        return;
    };
    let net = network(37111);
    let spec = |(addr, pk): &(SocketAddr, PublicKey)| BootstrapSpec::at(*addr, pk);
    let mut options = TransferOptions::loopback(4 << 20);
    options.discovery = Discovery::Nodes(net.dht.iter().map(spec).collect());
    options.friendship = Friendship::Mutual;
    options.allow_tcp = true;
    for (peer, port) in [(&mut options.recv, 37115), (&mut options.send, 37116)] {
        peer.port = port;
        peer.udp = false;
        peer.tcp_relays = vec![spec(&(net.tcp, net.relay.public_key()))];
        peer.timeout = Duration::from_secs(150);
    }
    let report = run_transfer(&binary, &options).expect("the transfer runs");
    assert!(report.recv.verified, "{report:?}");
    assert_eq!(report.recv.bytes, 4 << 20);
    assert_eq!(report.recv.friend_connection, "tcp", "{report:?}");
    let r = net.relay.stats().relay.expect("relay stats");
    assert!(r.stats.data_bytes_forwarded > 4 << 20, "{r:?}");
    eprintln!(
        "4 MiB through the relay in {:.2} s ({:.1} Mbit/s); relay: {r:?}",
        report.send.seconds.unwrap_or(-1.0),
        report.send.goodput_mbit.unwrap_or(-1.0)
    );
}
