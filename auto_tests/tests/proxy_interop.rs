//! TCP relays through real proxies: Debian's `microsocks` (SOCKS5) and `tinyproxy` (HTTP
//! CONNECT).
//!
//! The transfer tests put a rustox node in a network namespace whose only way out is a veth
//! pair to the proxy (`ProxyOnlyNamespace`): the relay, the DHT nodes and a c-toxcore 0.2.18
//! receiver (UDP off) live outside, on loopback, where the node cannot reach them but
//! through the proxy. The node is started with UDP *on* and a proxy, which turns UDP off as
//! c-toxcore does; it befriends the c-toxcore client through a rustox relay and sends it a
//! file, which c-toxcore checks byte for byte against its SHA-256 file id.
//!
//! The refusal tests run the real proxies on loopback: one that wants a password, one that
//! cannot reach the relay, one whose rules forbid the port, and one killed: each gives its
//! typed error, promptly.
//!
//! Ports 378xx. With `CI` set, a missing proxy, c-toxcore or `ip netns` (root) fails these
//! tests; otherwise they return at once with a notice.

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rand::{RngCore, SeedableRng};
use rustox_auto_tests::ctoxcore::friend::PeerEvent;
use rustox_auto_tests::ctoxcore::{BuildOptions, PeerBinary, RecvOptions, RecvPeer};
use rustox_auto_tests::live::{RelayNetwork, RustoxOptions, RustoxPeer};
use rustox_auto_tests::proxies::{ProxyOnlyNamespace, ProxyPolicy, ProxyProcess};
use rustox_core::driver::tokio::relays::open;
use rustox_core::proxy::{ProxyConfig, ProxyError, ProxyKind};

/// The file: enough for many windows through the proxy and the relay, short to run.
const SIZE: u64 = 2 << 20;

/// Skips (with a notice) outside CI when `what` is missing; fails in CI.
fn skip_or_fail(what: &str, missing: bool, e: &dyn std::fmt::Display) {
    if missing && std::env::var_os("CI").is_none() {
        eprintln!("NOTICE: {e}; proxy test skipped ({what})");
    } else {
        panic!("{what}: {e}");
    }
}

fn proxy(kind: ProxyKind, listen: SocketAddr, policy: &ProxyPolicy) -> Option<ProxyProcess> {
    match ProxyProcess::start(kind, listen, policy) {
        Ok(p) => Some(p),
        Err(e) => {
            skip_or_fail("start the proxy", e.is_missing_dependency(), &e);
            None
        }
    }
}

fn namespace(index: u8) -> Option<ProxyOnlyNamespace> {
    match ProxyOnlyNamespace::create(index) {
        Ok(ns) => Some(ns),
        Err(e) => {
            // Without root (or iproute2) there are no namespaces.
            let missing = !nix::unistd::Uid::effective().is_root();
            skip_or_fail("create a network namespace", missing, &e);
            None
        }
    }
}

fn file_peer() -> Option<PeerBinary> {
    match PeerBinary::build(&BuildOptions::default()) {
        Ok(b) => Some(b),
        Err(e) => {
            skip_or_fail("build the c-toxcore peer", e.is_missing_dependency(), &e);
            None
        }
    }
}

/// A node whose only route out is a `kind` proxy sends [`SIZE`] bytes to a c-toxcore
/// receiver through a relay. Ports `base`..`base + 9`; namespace `index`.
fn file_through_proxy(kind: ProxyKind, base: u16, index: u8) {
    let Some(binary) = file_peer() else { return };
    let Some(ns) = namespace(index) else { return };
    let listen = SocketAddr::new(ns.outer.into(), base + 9);
    let Some(proxy) = proxy(kind, listen, &ProxyPolicy::default()) else {
        return;
    };
    let net = RelayNetwork::rustox(base);
    // The isolation holds: from inside, neither the relay nor anything but the proxy's
    // address answers.
    let relay_addr = net.relay.0;
    let direct = ns
        .run_inside(|| TcpStream::connect_timeout(&relay_addr, Duration::from_secs(1)))
        .expect("run inside the namespace");
    assert!(direct.is_err(), "the relay is reachable without the proxy");
    let mut c = RecvPeer::start(
        &binary,
        &RecvOptions::tcp_only(base + 5, &net.dht, &net.relay, SIZE),
    )
    .expect("start the c-toxcore receiver");
    let c_id = c.ready().address.parse().expect("the receiver's Tox ID");
    let mut content = vec![0u8; SIZE as usize];
    rand_chacha::ChaCha8Rng::seed_from_u64(22).fill_bytes(&mut content);
    let options = RustoxOptions {
        port: base + 6,
        bootstrap: net.dht.clone(),
        tcp_relays: vec![net.relay],
        // UDP is left on: the proxy turns it off.
        no_udp: false,
        proxy: Some(proxy.config()),
        request: Some(c_id),
        send_file: Some(Arc::new(content)),
        ..RustoxOptions::default()
    };
    let r = ns
        .run_inside(|| RustoxPeer::start(options))
        .expect("run inside the namespace")
        .expect("start the rustox node");
    let summary = c.summary_beside(&r.log);
    summary.assert_file_by_relay(SIZE, &r.log, "the relay");
    assert!(
        !r.log.has(|e| matches!(e, PeerEvent::Friend(_, 2))),
        "rustox used UDP: {:?}",
        r.log.events()
    );
    eprintln!(
        "rustox behind {kind:?} → c-toxcore: online after {:?} s, {:?} Mbit/s",
        summary.time_to_friend_online, summary.goodput_mbit
    );
    drop(r);
}

#[test]
fn a_node_whose_only_way_out_is_socks5_sends_a_file_to_c_toxcore() {
    file_through_proxy(ProxyKind::Socks5, 37801, 1);
}

#[test]
fn a_node_whose_only_way_out_is_http_connect_sends_a_file_to_c_toxcore() {
    file_through_proxy(ProxyKind::Http, 37821, 2);
}

/// Opens a relay connection to `relay` through `proxy` as the tokio driver does, within a
/// bound a hang would exceed.
fn open_through(relay: SocketAddr, proxy: ProxyConfig) -> Result<(), ProxyError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        match tokio::time::timeout(Duration::from_secs(15), open(relay, Some(proxy))).await {
            Err(_) => panic!("opening through {proxy} hung"),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.expect("a proxy error")),
        }
    })
}

#[test]
fn real_proxies_connect_and_refuse_with_clear_errors() {
    let lo = |port| SocketAddr::from(([127, 0, 0, 1], port));
    let net = RelayNetwork::rustox(37841);
    let relay = net.relay.0;
    let Some(socks) = proxy(ProxyKind::Socks5, lo(37851), &ProxyPolicy::default()) else {
        return;
    };
    let Some(http) = proxy(ProxyKind::Http, lo(37852), &ProxyPolicy::default()) else {
        return;
    };
    assert_eq!(open_through(relay, socks.config()), Ok(()));
    assert_eq!(open_through(relay, http.config()), Ok(()));
    // Nothing listens at the relay's address: SOCKS5 says "connection refused" (reply 5).
    let dead = lo(37849);
    let e = open_through(dead, socks.config()).unwrap_err();
    assert_eq!(e, ProxyError::Socks5Refused(5));
    assert!(e.to_string().contains("connection refused"), "{e}");
    // ...and tinyproxy answers with an HTTP error.
    let e = open_through(dead, http.config()).unwrap_err();
    assert!(matches!(e, ProxyError::HttpRefused(500..=599, _)), "{e}");
    // A SOCKS5 proxy that wants a password.
    let policy = ProxyPolicy {
        require_password: true,
        ..ProxyPolicy::default()
    };
    let Some(locked) = proxy(ProxyKind::Socks5, lo(37853), &policy) else {
        return;
    };
    assert_eq!(
        open_through(relay, locked.config()),
        Err(ProxyError::Socks5AuthRequired)
    );
    // An HTTP proxy whose rules forbid the relay's port: 403.
    let policy = ProxyPolicy {
        connect_port: Some(443),
        ..ProxyPolicy::default()
    };
    let Some(strict) = proxy(ProxyKind::Http, lo(37854), &policy) else {
        return;
    };
    let e = open_through(relay, strict.config()).unwrap_err();
    assert!(matches!(e, ProxyError::HttpRefused(403, _)), "{e}");
    // A proxy that died: nothing listens any more.
    let mut socks = socks;
    let config = socks.config();
    socks.kill();
    assert_eq!(
        open_through(relay, config),
        Err(ProxyError::Connect(std::io::ErrorKind::ConnectionRefused))
    );
}
