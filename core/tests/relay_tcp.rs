//! The bootstrap node's TCP relay on real loopback sockets (docs/protocol.md §7): clients made
//! from the wire module connect on either port, route to each other, exchange data and OOB
//! packets, and use the relay as the first hop of an onion path whose other hops are the
//! node's own UDP side.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::bootstrap_node::{self, BootstrapNode, BootstrapOptions};
use rustox_core::dht::PackedNode;
use rustox_core::onion::wire::announce::{
    AnnounceRequest, AnnounceResponseEnvelope, AnnounceStatus,
};
use rustox_core::onion::wire::request::OnionPath;
use rustox_core::relay::server::RelayConfig;
use rustox_core::relay::wire::handshake::SERVER_REPLY_SIZE;
use rustox_core::relay::wire::{ClientHandshake, FrameDecoder, FrameEncoder, Packet};
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, PublicKey};

/// A blocking relay client.
struct Client {
    keys: KeyPair,
    stream: TcpStream,
    enc: FrameEncoder,
    dec: FrameDecoder,
    pending: Vec<u8>,
}

impl Client {
    fn connect(relay: SocketAddr, relay_pk: &PublicKey, rng: &mut StdRng) -> Client {
        let keys = KeyPair::generate(rng);
        let mut stream = TcpStream::connect(relay).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let (hs, hello) = ClientHandshake::new(&keys, relay_pk, rng)
            .expect("the relay's key is not of small order");
        stream.write_all(&hello).unwrap();
        let mut reply = [0u8; SERVER_REPLY_SIZE];
        stream.read_exact(&mut reply).unwrap();
        let (enc, dec) = hs.open_reply(&reply).unwrap().split();
        let mut c = Client {
            keys,
            stream,
            enc,
            dec,
            pending: Vec::new(),
        };
        // The first frame confirms the connection.
        c.send(&Packet::Ping { ping_id: 1 });
        assert_eq!(c.recv(), Packet::Pong { ping_id: 1 }.to_vec());
        c
    }

    fn send(&mut self, p: &Packet<'_>) {
        let mut f = Vec::new();
        self.enc.encode(&p.to_vec(), &mut f).unwrap();
        self.stream.write_all(&f).unwrap();
    }

    /// The next packet (pings from the server are answered and skipped).
    fn recv(&mut self) -> Vec<u8> {
        let mut buf = [0u8; 4096];
        loop {
            let mut input: &[u8] = &self.pending;
            let got = self.dec.decode(&mut input).unwrap().map(|p| p.to_vec());
            let rest = input.to_vec();
            self.pending = rest;
            if let Some(p) = got {
                if let Ok(Packet::Ping { ping_id }) = Packet::parse(&p) {
                    self.send(&Packet::Pong { ping_id });
                    continue;
                }
                return p;
            }
            let n = self.stream.read(&mut buf).expect("a packet from the relay");
            assert!(n > 0, "relay closed the connection");
            self.pending.extend_from_slice(&buf[..n]);
        }
    }
}

fn start(dir: &str) -> (BootstrapNode, PublicKey) {
    let dir = std::env::temp_dir().join(format!("rustox-relay-{dir}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let opts = BootstrapOptions {
        ip: "127.0.0.1".parse().unwrap(),
        port: 0,
        keys: dir.join("keys"),
        tcp_ports: vec![0, 0],
        relay: RelayConfig {
            max_per_ip: 64,
            ..RelayConfig::default()
        },
        ..BootstrapOptions::default()
    };
    let (keys, _) = bootstrap_node::load_keys(&opts).unwrap();
    let pk = keys.public;
    (BootstrapNode::start(keys, &opts).unwrap(), pk)
}

#[test]
fn two_clients_route_through_the_relay_and_exchange_data_and_oob() {
    let (node, pk) = start("route");
    let ports = node.runner().tcp_addrs();
    assert_eq!(ports.len(), 2);
    let mut rng = StdRng::seed_from_u64(14);
    let mut a = Client::connect(ports[0], &pk, &mut rng);
    let mut b = Client::connect(ports[1], &pk, &mut rng);

    a.send(&Packet::RoutingRequest { pk: b.keys.public });
    assert_eq!(
        a.recv(),
        Packet::RoutingResponse {
            conn_id: 16,
            pk: b.keys.public
        }
        .to_vec()
    );
    b.send(&Packet::RoutingRequest { pk: a.keys.public });
    assert_eq!(
        b.recv(),
        Packet::RoutingResponse {
            conn_id: 16,
            pk: a.keys.public
        }
        .to_vec()
    );
    assert_eq!(
        b.recv(),
        Packet::ConnectNotification { conn_id: 16 }.to_vec()
    );
    assert_eq!(
        a.recv(),
        Packet::ConnectNotification { conn_id: 16 }.to_vec()
    );

    // 300 packets each way, every byte checked.
    for i in 0..300u32 {
        let mut payload = vec![0x1b; 1 + (i as usize * 7) % 2000];
        payload[1..]
            .iter_mut()
            .enumerate()
            .for_each(|(j, b)| *b = (i as usize + j) as u8);
        a.send(&Packet::Data {
            conn_id: 16,
            payload: &payload,
        });
        assert_eq!(
            b.recv(),
            Packet::Data {
                conn_id: 16,
                payload: &payload
            }
            .to_vec()
        );
        b.send(&Packet::Data {
            conn_id: 16,
            payload: &payload[..payload.len() / 2 + 1],
        });
        assert_eq!(
            a.recv(),
            Packet::Data {
                conn_id: 16,
                payload: &payload[..payload.len() / 2 + 1]
            }
            .to_vec()
        );
    }
    b.send(&Packet::OobSend {
        dest: a.keys.public,
        data: b"cookie request",
    });
    assert_eq!(
        a.recv(),
        Packet::OobRecv {
            sender: b.keys.public,
            data: b"cookie request"
        }
        .to_vec()
    );

    // B leaves: A is told.
    drop(b);
    assert_eq!(
        a.recv(),
        Packet::DisconnectNotification { conn_id: 16 }.to_vec()
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let stats = loop {
        let s = node.runner().stats().relay.unwrap();
        if s.connections == 1 || Instant::now() > deadline {
            break s;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(stats.connections, 1);
    assert_eq!(stats.stats.data_forwarded, 600);
    assert_eq!(stats.stats.oob_forwarded, 1);
    assert_eq!(stats.stats.routes_linked, 1);
    node.shutdown();
}

#[test]
fn the_relay_is_the_first_hop_of_an_onion_path() {
    let (mut node, pk) = start("onion");
    let tcp = node.runner().tcp_addrs()[0];
    let udp = PackedNode::udp(node.runner().local_addr(), pk);
    let mut rng = StdRng::seed_from_u64(15);
    let mut a = Client::connect(tcp, &pk, &mut rng);
    // Path: the relay (over TCP), then the node's UDP side twice; the node is also D.
    let relay_node = PackedNode {
        addr: tcp,
        tcp: true,
        pk,
    };
    let path = OnionPath::new(&a.keys, [relay_node, udp, udp], &mut rng).unwrap();
    let real = KeyPair::generate(&mut rng);
    let req = AnnounceRequest {
        ping_id: [0; 32],
        searched_pk: real.public,
        data_pk: KeyPair::generate(&mut rng).public,
        sendback: [9; 8],
    };
    let key = PrecomputedKey::new(&pk, &real.secret).unwrap();
    let payload = req.seal(&real.public, &key, &Nonce::random(&mut rng));
    let body = path.tcp_request(udp.addr, &payload, &mut rng).unwrap();
    let nonce = Nonce::from_slice(&body).unwrap();
    a.send(&Packet::OnionRequest {
        nonce,
        plain: &body[24..],
    });
    let reply = a.recv();
    let Ok(Packet::OnionResponse { data }) = Packet::parse(&reply) else {
        panic!("expected an onion response, got {reply:?}")
    };
    let env = AnnounceResponseEnvelope::parse(data).unwrap();
    assert_eq!(env.sendback, [9; 8]);
    let opened = env.open(&key).unwrap();
    assert!(
        matches!(opened.status, AnnounceStatus::NotStored(_)),
        "{opened:?}"
    );
    // The relay thread publishes its counters after the pass that wrote the response, so
    // the client may read the response a moment before they say so.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut s = node.runner().stats();
    while s
        .relay
        .as_ref()
        .is_some_and(|r| r.stats.onion_responses == 0)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(5));
        s = node.runner().stats();
    }
    assert_eq!(s.onion.tcp_requests_relayed, 1);
    assert_eq!(s.relay.unwrap().stats.onion_responses, 1);
    assert!(node.stats_line().contains("tcp_onion_resp=1"));
    node.shutdown();
}
