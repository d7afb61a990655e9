//! A rustox node with UDP off and a c-toxcore 0.2.18 client with UDP off, whose only way to
//! each other is tox-bootstrapd's TCP relay (docs/protocol.md §7): they reach the
//! onion through it, find each other, become friends, exchange messages, and a 4 MiB file
//! crosses the relay byte for byte.
//!
//! The relay is Debian's tox-bootstrapd (toxcore-utils) with `tcp_relay_ports`; behind it a
//! UDP DHT of the bootstrapd node and two rustox nodes bootstrapped off it, so onion paths
//! starting at the relay (hop A) have hops B and C. Both clients bootstrap off all three
//! (with UDP off they use them only as onion path nodes) and add the relay. The file also
//! crosses a rustox relay in tox-bootstrapd's place, so our server's writes meet c-toxcore's
//! reader too.
//!
//! Ports 372xx. With `CI` set, a missing c-toxcore (tox-bootstrapd, libtoxcore, a C
//! compiler) fails these tests; otherwise they return at once with a notice.

use rustox_auto_tests::live::wait_until;
use std::sync::Arc;
use std::time::Duration;

use rand::{RngCore, SeedableRng};
use rustox_auto_tests::ctoxcore::friend::{CPeer, CPeerOptions, PeerEvent};
use rustox_auto_tests::ctoxcore::{
    file_peer_or_skip, BootstrapNode, BootstrapOptions, PeerBinary, RecvOptions, RecvPeer,
};
use rustox_auto_tests::live::{RelayNetwork, RustoxOptions, RustoxPeer};
use rustox_net_crypto::crypto::PublicKey;

/// How long two TCP-only clients may take to see each other online: c-toxcore's onion over
/// TCP runs on one-second timers; room for a loaded machine.
const ONLINE_LIMIT: Duration = Duration::from_secs(90);

/// The tests of this file run one at a time. c-toxcore reads a relay stream only in whole
/// frames, and when its process is starved of CPU the relay's backlog towards it (in
/// tox-bootstrapd's case written without regard to frame ends) fills its receive buffer with
/// partial frames until the connection stalls and the friend times out: run beside each
/// other on two cores, the three tests' seven processes starve it now and then. The stall is
/// in c-toxcore's hop, not in what these tests check, so they do not compete for the CPU.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The file: large enough for many congestion windows through the relay.
const SIZE: u64 = 4 << 20;

/// tox-bootstrapd (UDP `base`, TCP relay `base + 1`) and two rustox DHT nodes
/// (`base + 2`, `base + 3`).
struct Network {
    _bootstrapd: Option<BootstrapNode>,
    net: RelayNetwork,
}

impl std::ops::Deref for Network {
    type Target = RelayNetwork;

    fn deref(&self) -> &RelayNetwork {
        &self.net
    }
}

/// tox-bootstrapd's network, or `None` (with a notice) when it is missing outside CI.
fn network(base: u16) -> Option<Network> {
    let bootstrapd = match BootstrapNode::start(&BootstrapOptions {
        port: base,
        tcp_relay_ports: vec![base + 1],
        ..BootstrapOptions::default()
    }) {
        Ok(b) => b,
        Err(e) if e.is_missing_dependency() && std::env::var_os("CI").is_none() => {
            eprintln!("NOTICE: {e}; tox-bootstrapd relay test skipped");
            return None;
        }
        Err(e) => panic!("cannot start tox-bootstrapd with a TCP relay: {e}"),
    };
    let key = PublicKey::from_hex(bootstrapd.dht_key()).expect("tox-bootstrapd's key");
    Some(Network {
        _bootstrapd: Some(bootstrapd),
        net: RelayNetwork::behind(base, key, Vec::new()),
    })
}

/// The same network with a rustox relay (`rustox bootstrap --tcp-ports` in process) in
/// tox-bootstrapd's place: the relay at `base + 1`, its DHT node at `base`.
fn rustox_relay_network(base: u16) -> Network {
    Network {
        _bootstrapd: None,
        net: RelayNetwork::rustox(base),
    }
}

#[test]
fn udp_off_rustox_and_c_toxcore_befriend_and_talk_through_tox_bootstrapd() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(bin) = rustox_auto_tests::ctoxcore::friend::friend_binary_or_skip() else {
        return;
    };
    let Some(net) = network(37201) else { return };
    let c = CPeer::start(
        &bin,
        &CPeerOptions {
            bootstrap: net.dht.clone(),
            tcp_relays: vec![net.relay],
            no_udp: true,
            accept: true,
            say: Some("hi from c-toxcore".into()),
            ..CPeerOptions::default()
        },
    )
    .expect("start the c-toxcore client");
    let r = RustoxPeer::start(RustoxOptions {
        port: 37205,
        bootstrap: net.dht.clone(),
        tcp_relays: vec![net.relay],
        no_udp: true,
        request: Some(c.tox_id),
        say: Some("hi from rustox".into()),
        ..RustoxOptions::default()
    })
    .expect("start the rustox node");
    let talked = wait_until(ONLINE_LIMIT, || {
        c.log.message().is_some() && r.log.message().is_some()
    });
    assert!(
        talked,
        "no messages both ways within {ONLINE_LIMIT:?}\n c-toxcore: {:?}\n rustox: {:?}",
        c.log.events(),
        r.log.events()
    );
    assert_eq!(c.log.message().as_deref(), Some("hi from rustox"));
    assert_eq!(r.log.message().as_deref(), Some("hi from c-toxcore"));
    // Both saw the friend over TCP (1), never UDP (2).
    for (name, log) in [("c-toxcore", &c.log), ("rustox", &r.log)] {
        assert!(
            log.has(|e| matches!(e, PeerEvent::Friend(_, 1))),
            "{name}: {:?}",
            log.events()
        );
        assert!(
            !log.has(|e| matches!(e, PeerEvent::Friend(_, 2))),
            "{name} used UDP: {:?}",
            log.events()
        );
    }
    eprintln!(
        "online through tox-bootstrapd's relay: c-toxcore {:.2} s, rustox {:.2} s",
        c.log.friend_online().unwrap_or(-1.0),
        r.log.friend_online().unwrap_or(-1.0)
    );
}

#[test]
fn a_file_from_a_udp_off_rustox_node_crosses_tox_bootstrapd_to_c_toxcore_byte_exact() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(binary) = file_peer_or_skip() else {
        return;
    };
    let Some(net) = network(37211) else { return };
    file_through_relay(&binary, &net, 37215, "tox-bootstrapd");
}

/// The same transfer through a rustox relay: our server's writes towards a c-toxcore client
/// (which reads whole frames only, relay_socket.rs) with a fast rustox sender behind them.
#[test]
fn a_file_from_a_udp_off_rustox_node_crosses_a_rustox_relay_to_c_toxcore_byte_exact() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(binary) = file_peer_or_skip() else {
        return;
    };
    let net = rustox_relay_network(37221);
    file_through_relay(&binary, &net, 37225, "a rustox relay");
}

/// A UDP-off rustox node (UDP port `port + 1`) sends [`SIZE`] bytes to a UDP-off c-toxcore
/// receiver (UDP port `port`) whose only path is `net`'s relay; c-toxcore checks every byte.
fn file_through_relay(binary: &PeerBinary, net: &Network, port: u16, relay_name: &str) {
    let mut c = RecvPeer::start(
        binary,
        &RecvOptions::tcp_only(port, &net.dht, &net.relay, SIZE),
    )
    .expect("start the c-toxcore receiver");
    let c_id = c.ready().address.parse().expect("the receiver's Tox ID");
    let mut content = vec![0u8; SIZE as usize];
    rand_chacha::ChaCha8Rng::seed_from_u64(14).fill_bytes(&mut content);
    let r = RustoxPeer::start(RustoxOptions {
        port: port + 1,
        bootstrap: net.dht.clone(),
        tcp_relays: vec![net.relay],
        no_udp: true,
        request: Some(c_id),
        send_file: Some(Arc::new(content)),
        ..RustoxOptions::default()
    })
    .expect("start the rustox node");
    let summary = c.summary_beside(&r.log);
    summary.assert_file_by_relay(SIZE, &r.log, "a relay");
    assert!(summary.in_order, "{summary:?}");
    eprintln!(
        "rustox → c-toxcore through {relay_name}: online after {:?} s, {:?} Mbit/s",
        summary.time_to_friend_online, summary.goodput_mbit
    );
}
