//! A datagram from UDP source port 0 must not stop a node (issues #11 and #15): a valid
//! cookie request from port 0 made `rustox recv` answer it, the OS refused the send to
//! port 0 (EINVAL), and the receiver exited. The driver now drops such datagrams on
//! arrival, and a refused send of one datagram is counted, never fatal.
//!
//! The same for `rustox bootstrap`: a DHT get-nodes from port 0 leaves it serving.
//!
//! Sending from port 0 takes a raw socket, so root: outside CI the tests skip without it;
//! under CI (`CI` set, run as root) they must run.

mod common;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::process::Stdio;
use std::time::Duration;

use common::{
    run_with_limit, rustox, start_bootstrap, succeeded, write_pattern, Receiver, Scratch,
};
use rand::rngs::{OsRng, StdRng};
use rand::SeedableRng;
use rustox_core::dht::{DhtConfig, DhtNode};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::{Endpoint, EndpointConfig, Timestamp};
use rustox_testkit::ci::skip_or_fail;
use rustox_testkit::net::free_udp_port;
use socket2::{Domain, Protocol, Socket, Type};

/// A cookie request (docs/protocol.md §2.2) from a fresh identity to the peer with key `peer`
/// at `to`: the first datagram a net_crypto endpoint sends when it dials.
fn cookie_request(to: SocketAddr, peer: PublicKey) -> Vec<u8> {
    let keys = KeyPair::generate(&mut OsRng);
    let mut endpoint = Endpoint::new(
        Timestamp::ZERO,
        keys.clone(),
        keys,
        EndpointConfig {
            transport: Default::default(),
            accept_all: false,
        },
        Box::new(OsRng),
    );
    endpoint
        .connect(Timestamp::ZERO, to, peer, peer)
        .expect("dial the receiver");
    endpoint
        .poll_transmit(Timestamp::ZERO)
        .expect("a cookie request to send")
        .payload
}

/// `payload` as a UDP datagram from port 0 to `to`, through a raw socket (the kernel adds
/// the IPv4 header; a zero UDP checksum means none, RFC 768).
fn send_from_port_zero(to: SocketAddrV4, payload: &[u8]) -> std::io::Result<()> {
    let raw = Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::UDP))?;
    let len = u16::try_from(8 + payload.len()).expect("datagram fits");
    let mut datagram = Vec::with_capacity(8 + payload.len());
    datagram.extend_from_slice(&0u16.to_be_bytes()); // source port 0
    datagram.extend_from_slice(&to.port().to_be_bytes());
    datagram.extend_from_slice(&len.to_be_bytes());
    datagram.extend_from_slice(&0u16.to_be_bytes()); // no checksum
    datagram.extend_from_slice(payload);
    raw.send_to(&datagram, &SocketAddr::V4(to).into())?;
    Ok(())
}

/// Sends `payload` from port 0 and gives the node 300 ms to take it in; `false` when there
/// is no raw socket (skipped, or failed under CI).
fn delivered_from_port_zero(to: SocketAddrV4, payload: &[u8]) -> bool {
    if let Err(e) = send_from_port_zero(to, payload) {
        skip_or_fail(format!(
            "cannot send from port 0 without root (raw socket): {e}"
        ));
        return false;
    }
    std::thread::sleep(Duration::from_millis(300));
    true
}

#[test]
fn a_cookie_request_from_port_zero_does_not_stop_rustox_recv() {
    let dir = Scratch::new("port-zero");
    let original = write_pattern(&dir.path("payload.bin"), 1 << 20, 7);
    let mut receiver = Receiver::start(&dir.path("inbox"), &dir.path("recv.key"));
    let addr: SocketAddrV4 = receiver.addr.parse().expect("an IPv4 address");
    let key_bytes: [u8; 32] = hex::decode(&receiver.key)
        .expect("hex key")
        .try_into()
        .expect("32 bytes");
    let request = cookie_request(SocketAddr::V4(addr), PublicKey(key_bytes));
    if !delivered_from_port_zero(addr, &request) {
        return;
    }
    assert!(
        receiver.child.try_wait().expect("poll recv").is_none(),
        "rustox recv exited after a cookie request from port 0"
    );
    // And it still serves an honest peer.
    let send = run_with_limit(
        rustox()
            .args(["send", "--to", &receiver.addr, "--key", &receiver.key])
            .arg(dir.path("payload.bin")),
        Duration::from_secs(60),
    );
    let sent = succeeded(&send, "send");
    assert_eq!(sent["bytes"], original.len() as u64);
}

#[test]
fn a_get_nodes_from_port_zero_does_not_stop_rustox_bootstrap() {
    let dir = Scratch::new("port-zero-bootstrap");
    // A port free a moment ago (the command prints only the address it was given).
    let port = free_udp_port();
    let (mut boot, key) = start_bootstrap(port, &dir.path("boot.keys"), &[], Stdio::null());
    let pk = PublicKey::from_hex(&key).expect("the node prints its key");
    let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    // A get-nodes for our own key, as a joining node sends it (docs/protocol.md §5.8).
    let mut rng = StdRng::seed_from_u64(5);
    let mut dht = DhtNode::new(
        KeyPair::generate(&mut rng),
        DhtConfig {
            lan_discovery: false,
            ..DhtConfig::default()
        },
        Timestamp::ZERO,
        &mut rng,
    );
    dht.bootstrap(Timestamp::ZERO, SocketAddr::V4(addr), pk, &mut rng);
    let request = dht
        .poll_transmit(Timestamp::ZERO, &mut rng)
        .expect("a get-nodes to send")
        .payload;
    // Give the node time to bind before the raw datagram.
    std::thread::sleep(Duration::from_millis(300));
    if !delivered_from_port_zero(addr, &request) {
        return;
    }
    assert!(
        boot.0.try_wait().expect("poll bootstrap").is_none(),
        "rustox bootstrap exited after a get-nodes from port 0"
    );
    // And it still answers an honest peer.
    let socket = UdpSocket::bind("127.0.0.1:0").expect("a socket");
    socket
        .set_read_timeout(Some(Duration::from_secs(3)))
        .expect("timeout");
    socket.send_to(&request, addr).expect("send");
    let mut answer = [0u8; 2048];
    let (n, from) = socket.recv_from(&mut answer).expect("an answer");
    assert_eq!(from, SocketAddr::V4(addr));
    assert!(n > 0);
}
