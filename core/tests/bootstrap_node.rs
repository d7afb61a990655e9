//! The bootstrap node as `rustox bootstrap` runs it: the key survives a restart, and ping,
//! get-nodes and bootstrap-info are answered over real loopback sockets.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::bootstrap_node::{self, BootstrapNode, BootstrapOptions, BOOTSTRAP_VERSION};
use rustox_core::dht::wire::bootstrap_info;
use rustox_core::dht::wire::dht_packet::{DhtMessage, Envelope};
use rustox_core::dht::wire::nodes::NodesRequest;
use rustox_core::dht::wire::ping::Ping;
use rustox_core::driver::workers::UdpMode;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, PublicKey};

fn exchange(sock: &UdpSocket, to: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    sock.send_to(bytes, to).unwrap();
    let mut buf = [0u8; 2048];
    let (n, _) = sock.recv_from(&mut buf).expect("an answer");
    buf[..n].to_vec()
}

fn ask(sock: &UdpSocket, to: SocketAddr, pk: &PublicKey, msg: DhtMessage) -> DhtMessage {
    let mut rng = StdRng::seed_from_u64(9);
    let me = KeyPair::generate(&mut rng);
    let key = PrecomputedKey::new(pk, &me.secret).unwrap();
    let mut reply = exchange(
        sock,
        to,
        &msg.seal(&me.public, &key, &Nonce::random(&mut rng)),
    );
    // The node pings back whoever contacted it (to learn whether it is a node to keep);
    // that request is not the answer.
    loop {
        let env = Envelope::parse(&reply).unwrap();
        assert_eq!(env.sender, *pk);
        match env.open(&key).unwrap() {
            DhtMessage::Ping(Ping {
                response: false, ..
            }) => {
                let mut buf = [0u8; 2048];
                let (n, _) = sock.recv_from(&mut buf).expect("an answer");
                reply = buf[..n].to_vec();
            }
            answer => return answer,
        }
    }
}

/// Asks the node at `to` (key `pk`) a ping with `id`; its answer.
fn ping(sock: &UdpSocket, to: SocketAddr, pk: &PublicKey, id: u64) -> DhtMessage {
    ask(
        sock,
        to,
        pk,
        DhtMessage::Ping(Ping {
            response: false,
            id,
        }),
    )
}

/// The answer to a ping with `id`.
fn pong(id: u64) -> DhtMessage {
    DhtMessage::Ping(Ping { response: true, id })
}

#[test]
fn key_survives_restart_and_requests_are_answered() {
    let dir = std::env::temp_dir().join(format!("rustox-bootstrap-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let opts = BootstrapOptions {
        ip: "127.0.0.1".parse().unwrap(),
        port: 36550,
        workers: 2,
        mode: UdpMode::ReusePort,
        keys: dir.join("keys"),
        motd: "hello from rustox".into(),
        ..BootstrapOptions::default()
    };
    let (keys, created) = bootstrap_node::load_keys(&opts).unwrap();
    assert!(created);
    let first_pk = keys.public;
    let mut node = BootstrapNode::start(keys, &opts).unwrap();
    let to: SocketAddr = "127.0.0.1:36550".parse().unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();

    let reply = exchange(&sock, to, &bootstrap_info::encode_request());
    let (version, motd) = bootstrap_info::decode_reply(&reply).unwrap();
    assert_eq!(version, BOOTSTRAP_VERSION);
    assert_eq!(motd, b"hello from rustox\0");

    assert_eq!(ping(&sock, to, &first_pk, 77), pong(77));
    let nodes = ask(
        &sock,
        to,
        &first_pk,
        DhtMessage::NodesRequest(NodesRequest {
            searched: first_pk,
            sendback: 5,
        }),
    );
    assert!(matches!(nodes, DhtMessage::NodesResponse(r) if r.sendback == 5));
    assert!(node.stats_line().contains("pings=1"));
    node.shutdown();

    // Restart: same key, same answers.
    let (keys, created) = bootstrap_node::load_keys(&opts).unwrap();
    assert!(!created);
    assert_eq!(keys.public, first_pk);
    let node = BootstrapNode::start(keys, &opts).unwrap();
    assert_eq!(ping(&sock, to, &first_pk, 78), pong(78));
    node.shutdown();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Bound to `[::]` (the CLI default), the node answers IPv4 clients: replies go out in the
/// IPv4-mapped form an IPv6 socket needs.
#[test]
fn dual_stack_node_answers_ipv4_clients() {
    let dir = std::env::temp_dir().join(format!("rustox-bootstrap-v6-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let opts = BootstrapOptions {
        ip: "::".parse().unwrap(),
        port: 36551,
        keys: dir.join("keys"),
        ..BootstrapOptions::default()
    };
    let (keys, _) = bootstrap_node::load_keys(&opts).unwrap();
    let pk = keys.public;
    let node = BootstrapNode::start(keys, &opts).unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let to: SocketAddr = "127.0.0.1:36551".parse().unwrap();
    assert_eq!(ping(&sock, to, &pk, 1), pong(1));
    node.shutdown();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The thin tokio driver: a node on a dual-stack socket answers a ping and stops when told.
#[test]
fn tokio_driver_answers_and_shuts_down() {
    use rustox_core::dht::{DhtConfig, DhtNode};
    use rustox_core::driver::tokio::dht as tokio_driver;
    use rustox_core::driver::{socket, Clock};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut rng = StdRng::seed_from_u64(3);
    let keys = KeyPair::generate(&mut rng);
    let pk = keys.public;
    let std_sock = socket::bind_udp("[::]:36552".parse().unwrap(), false).unwrap();
    std_sock.set_nonblocking(true).unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let client = std::thread::spawn(move || {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let pong = ask(
            &sock,
            "127.0.0.1:36552".parse().unwrap(),
            &pk,
            DhtMessage::Ping(Ping {
                response: false,
                id: 9,
            }),
        );
        let _ = stop_tx.send(());
        pong
    });
    rt.block_on(async {
        let sock = tokio::net::UdpSocket::from_std(std_sock).unwrap();
        let clock = Clock::default();
        let config = DhtConfig {
            lan_discovery: false,
            ..DhtConfig::default()
        };
        let mut node = DhtNode::new(keys, config, clock.now(), &mut rng);
        let shutdown = async {
            let _ = stop_rx.await;
        };
        tokio_driver::run(&mut node, &sock, clock, &mut rng, shutdown, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(node.stats().pings_answered, 1);
    });
    assert_eq!(
        client.join().unwrap(),
        DhtMessage::Ping(Ping {
            response: true,
            id: 9
        })
    );
}
