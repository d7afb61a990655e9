//! The bootstrap node serves the onion on real loopback sockets: a client announces itself
//! (ping id round trip, then `is_stored` 2), a second client finds it (`is_stored` 1) and
//! sends it onion data, which arrives as a 0x86. The node is all three relays and the
//! announce node, so every hop crosses the socket.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::bootstrap_node::{self, BootstrapNode, BootstrapOptions};
use rustox_core::dht::PackedNode;
use rustox_core::driver::workers::UdpMode;
use rustox_core::onion::wire::announce::{
    AnnounceRequest, AnnounceResponse, AnnounceResponseEnvelope, AnnounceStatus,
};
use rustox_core::onion::wire::data::{self, DataResponse};
use rustox_core::onion::wire::request::OnionPath;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, PublicKey};

struct Client {
    sock: UdpSocket,
    real: KeyPair,
    data: KeyPair,
    path: OnionPath,
}

impl Client {
    fn new(node: PackedNode, rng: &mut StdRng) -> Client {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let dht = KeyPair::generate(rng);
        Client {
            sock,
            real: KeyPair::generate(rng),
            data: KeyPair::generate(rng),
            path: OnionPath::new(&dht, [node; 3], rng).unwrap(),
        }
    }

    fn send(&self, dest: SocketAddr, payload: &[u8], rng: &mut StdRng) {
        let packet = self.path.request(dest, payload, rng).unwrap();
        self.sock
            .send_to(&packet, self.path.nodes()[0].addr)
            .unwrap();
    }

    fn recv(&self) -> Vec<u8> {
        let mut buf = [0u8; 2048];
        let (n, from) = self.sock.recv_from(&mut buf).expect("an onion response");
        assert_eq!(from, self.path.nodes()[0].addr);
        buf[..n].to_vec()
    }

    fn announce(
        &self,
        node: &PackedNode,
        sender: &KeyPair,
        req: AnnounceRequest,
        rng: &mut StdRng,
    ) -> AnnounceResponse {
        let key = PrecomputedKey::new(&node.pk, &sender.secret).unwrap();
        self.send(
            node.addr,
            &req.seal(&sender.public, &key, &Nonce::random(rng)),
            rng,
        );
        let reply = self.recv();
        let env = AnnounceResponseEnvelope::parse(&reply).unwrap();
        assert_eq!(env.sendback, req.sendback);
        env.open(&key).unwrap()
    }
}

#[test]
fn bootstrap_node_relays_stores_announces_and_forwards_data() {
    let dir = std::env::temp_dir().join(format!("rustox-bootstrap-onion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let opts = BootstrapOptions {
        ip: "127.0.0.1".parse().unwrap(),
        port: 0,
        workers: 2,
        mode: UdpMode::ReusePort,
        keys: dir.join("keys"),
        ..BootstrapOptions::default()
    };
    let (keys, _) = bootstrap_node::load_keys(&opts).unwrap();
    let pk = keys.public;
    let mut node = BootstrapNode::start(keys, &opts).unwrap();
    let me = PackedNode::udp(node.runner().local_addr(), pk);
    let mut rng = StdRng::seed_from_u64(17);
    let a = Client::new(me, &mut rng);
    let b = Client::new(me, &mut rng);

    let real_a = KeyPair::from_secret(a.real.secret.clone());
    let announce = |ping_id| AnnounceRequest {
        ping_id,
        searched_pk: a.real.public,
        data_pk: a.data.public,
        sendback: [7; 8],
    };
    let first = a.announce(&me, &real_a, announce([0; 32]), &mut rng);
    let AnnounceStatus::NotStored(ping_id) = first.status else {
        panic!("first announce: {first:?}")
    };
    let second = a.announce(&me, &real_a, announce(ping_id), &mut rng);
    assert!(
        matches!(second.status, AnnounceStatus::Stored(_)),
        "{second:?}"
    );

    let search_key = KeyPair::generate(&mut rng);
    let search = AnnounceRequest {
        ping_id: [0; 32],
        searched_pk: a.real.public,
        data_pk: PublicKey([0; 32]),
        sendback: [8; 8],
    };
    let found = b.announce(&me, &search_key, search, &mut rng);
    assert_eq!(found.status, AnnounceStatus::Found(a.data.public));

    let nonce = Nonce::random(&mut rng);
    let message = b"\x20\0\0\0\0hello over the onion".to_vec();
    let key = PrecomputedKey::new(&a.real.public, &b.real.secret).unwrap();
    let inner = data::seal_inner(&b.real.public, &key, &nonce, &message).unwrap();
    let request =
        data::seal_request(&a.real.public, &a.data.public, &nonce, &inner, &mut rng).unwrap();
    b.send(me.addr, &request, &mut rng);
    let got = a.recv();
    let opened = DataResponse::parse(&got)
        .unwrap()
        .open(&a.data.secret)
        .unwrap();
    assert_eq!(opened.sender_real_pk, b.real.public);
    assert_eq!(
        opened
            .open(&PrecomputedKey::new(&b.real.public, &a.real.secret).unwrap())
            .unwrap(),
        message
    );

    let s = node.runner().stats();
    assert_eq!(s.onion.announces_answered, 3);
    assert_eq!(s.onion.announces_stored, 1);
    assert_eq!(s.onion.data_forwarded, 1);
    assert_eq!(s.onion.requests_relayed, [4, 4, 4]);
    assert_eq!(s.onion.responses_relayed, [4, 4, 4]);
    assert_eq!(s.onion.total_dropped(), 0);
    assert_eq!(s.onion_announced, 1);
    let line = node.stats_line();
    assert!(
        line.contains("announce_stored=1 search_found=1 announced=1 onion_data=1 onion_dropped=0"),
        "{line}"
    );
    node.shutdown();
    std::fs::remove_dir_all(&dir).unwrap();
}
