//! The relay client against c-toxcore 0.2.18's TCP relay (Debian's `tox-bootstrapd` with its
//! relay on), on loopback sockets driven by a minimal blocking driver (docs/protocol.md §7): two
//! clients meet on the relay and exchange data both ways; a third receives an OOB packet;
//! and the connections outlive the relay's ping deadline (it pings after 30 s and drops a
//! client whose pong is 10 s late), so our pongs are what c-toxcore expects.
//!
//! Fails, not skips, when `tox-bootstrapd` is missing: a C relay our code did not write is
//! the judge of wire compatibility.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustox_core::relay::client::{RelayClientConfig, RelayClients, RelayEvent, RelayId};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;
use rustox_testkit::bootstrapd::{self, Bootstrapd};
use rustox_testkit::net::{free_tcp_port, free_udp_port};
use rustox_testkit::temp::TempDir;

/// tox-bootstrapd with its TCP relay on one port; killed when dropped.
struct CRelay {
    _daemon: Bootstrapd,
    addr: SocketAddr,
    pk: PublicKey,
    _dir: TempDir,
}

fn start_c_relay() -> CRelay {
    let dir = TempDir::new("rustox-relay-client", &free_udp_port().to_string());
    let (udp, tcp) = (free_udp_port(), free_tcp_port());
    let daemon = Bootstrapd::start(
        &bootstrapd::Config {
            tcp_relay_ports: vec![tcp],
            ..bootstrapd::Config::udp(udp)
        },
        dir.path(),
    )
    .expect("tox-bootstrapd (Debian's toxcore-utils) must be installed for this test");
    let pk = PublicKey::from_hex(daemon.public_key()).expect("a 64-digit key");
    let addr = SocketAddr::from(([127, 0, 0, 1], tcp));
    // The relay listens once the key is printed, but give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(addr).is_err() {
        assert!(
            Instant::now() < deadline,
            "tox-bootstrapd's relay never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    CRelay {
        _daemon: daemon,
        addr,
        pk,
        _dir: dir,
    }
}

/// One node's relay clients and the sockets the driver holds for them.
struct Driver {
    relays: RelayClients,
    rng: ChaCha8Rng,
    dht: PublicKey,
    sockets: BTreeMap<RelayId, TcpStream>,
    events: Vec<RelayEvent>,
}

impl Driver {
    fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let keys = KeyPair::generate(&mut rng);
        Driver {
            dht: keys.public,
            relays: RelayClients::new(keys, RelayClientConfig::default()),
            rng,
            sockets: BTreeMap::new(),
            events: Vec::new(),
        }
    }

    /// One pass of what a driver does: sockets in and out, timers, events.
    fn step(&mut self, now: Timestamp) {
        while let Some(id) = self.relays.poll_close() {
            self.sockets.remove(&id);
        }
        while let Some((id, addr)) = self.relays.poll_connect(now) {
            match TcpStream::connect(addr) {
                Ok(s) => {
                    s.set_nonblocking(true).unwrap();
                    s.set_nodelay(true).unwrap();
                    self.sockets.insert(id, s);
                    self.relays.handle_connected(now, id, &mut self.rng);
                }
                Err(_) => self.relays.handle_closed(now, id),
            }
        }
        let ids: Vec<RelayId> = self.sockets.keys().copied().collect();
        for id in ids {
            let mut buf = [0u8; 65536];
            loop {
                let read = self.sockets.get_mut(&id).map(|s| s.read(&mut buf));
                match read {
                    Some(Ok(0)) => {
                        self.sockets.remove(&id);
                        self.relays.handle_closed(now, id);
                        break;
                    }
                    Some(Ok(n)) => self.relays.handle_bytes(now, id, &buf[..n]),
                    Some(Err(e)) if e.kind() == ErrorKind::WouldBlock => break,
                    Some(Err(_)) => {
                        self.sockets.remove(&id);
                        self.relays.handle_closed(now, id);
                        break;
                    }
                    None => break,
                }
            }
            while let (Some(bytes), Some(s)) =
                (self.relays.poll_write(id), self.sockets.get_mut(&id))
            {
                match s.write(bytes) {
                    Ok(n) if n > 0 => self.relays.consume(id, n),
                    _ => break,
                }
            }
        }
        if self.relays.poll_timeout().is_some_and(|t| t <= now) {
            self.relays.handle_timeout(now, &mut self.rng);
        }
        while let Some(e) = self.relays.poll_event() {
            self.events.push(e);
        }
    }
}

struct World {
    start: Instant,
    nodes: Vec<Driver>,
}

impl World {
    fn now(&self) -> Timestamp {
        Timestamp::from_micros(self.start.elapsed().as_micros() as u64)
    }

    /// Runs every driver until `done` holds or `limit` passes; whether it held.
    fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&mut World) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let now = self.now();
            for d in &mut self.nodes {
                d.step(now);
            }
            if done(self) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn data(&mut self, at: usize, from: usize) -> Vec<Vec<u8>> {
        let from = self.nodes[from].dht;
        let mut out = Vec::new();
        self.nodes[at].events.retain(|e| match e {
            RelayEvent::Data { from: f, data } if *f == from => {
                out.push(data.clone());
                false
            }
            _ => true,
        });
        out
    }
}

#[test]
fn our_client_speaks_to_c_toxcores_relay() {
    let relay = start_c_relay();
    let mut w = World {
        start: Instant::now(),
        nodes: (1..=3).map(Driver::new).collect(),
    };
    let now = w.now();
    let (a, b, c) = (w.nodes[0].dht, w.nodes[1].dht, w.nodes[2].dht);
    w.nodes[0]
        .relays
        .add_peer_relay(now, b, relay.addr, relay.pk)
        .unwrap();
    w.nodes[0]
        .relays
        .add_peer_relay(now, c, relay.addr, relay.pk)
        .unwrap();
    w.nodes[1]
        .relays
        .add_peer_relay(now, a, relay.addr, relay.pk)
        .unwrap();
    w.nodes[2]
        .relays
        .add_relay(now, relay.addr, relay.pk)
        .unwrap();

    // Handshakes with the C relay, then the route a ↔ b (both asked).
    let up = w.run_until(Duration::from_secs(10), |w| {
        w.nodes[0].relays.is_peer_online(&b) && w.nodes[1].relays.is_peer_online(&a)
    });
    assert!(
        up,
        "route a ↔ b through c-toxcore's relay; events {:?}",
        w.nodes[0].events
    );
    for n in 0..3 {
        assert!(
            w.nodes[n].events.contains(&RelayEvent::RelayUp {
                addr: relay.addr,
                pk: relay.pk
            }),
            "node {n}: {:?}",
            w.nodes[n].events
        );
    }
    assert!(!w.nodes[0].relays.is_peer_online(&c), "c never asked for a");

    // Data both ways, in order.
    for i in 0..100u8 {
        let now = w.now();
        w.nodes[0]
            .relays
            .send_to_peer(now, &b, &[0x1b, i, 1])
            .unwrap();
        w.nodes[1]
            .relays
            .send_to_peer(now, &a, &[0x1b, i, 2])
            .unwrap();
        w.nodes[0].step(now);
        w.nodes[1].step(now);
    }
    let (mut at_b, mut at_a) = (Vec::new(), Vec::new());
    let arrived = w.run_until(Duration::from_secs(5), |w| {
        at_b.extend(w.data(1, 0));
        at_a.extend(w.data(0, 1));
        at_b.len() >= 100 && at_a.len() >= 100
    });
    assert!(arrived, "{} and {} of 100 arrived", at_b.len(), at_a.len());
    assert_eq!(
        at_b,
        (0..100u8).map(|i| vec![0x1b, i, 1]).collect::<Vec<_>>()
    );
    assert_eq!(
        at_a,
        (0..100u8).map(|i| vec![0x1b, i, 2]).collect::<Vec<_>>()
    );

    // No route to c: the packet goes OOB, and c, which does not list a, sees it as OOB.
    let now = w.now();
    w.nodes[0]
        .relays
        .send_to_peer(now, &c, b"\x18cookie request")
        .unwrap();
    let oob = RelayEvent::Oob {
        relay_addr: relay.addr,
        relay_pk: relay.pk,
        from: a,
        data: b"\x18cookie request".to_vec(),
    };
    assert!(
        w.run_until(Duration::from_secs(5), |w| w.nodes[2].events.contains(&oob)),
        "OOB through c-toxcore's relay: {:?}",
        w.nodes[2].events
    );

    // Past the relay's first ping (30 s) and its pong deadline (10 s): nobody is dropped.
    let dropped = w.run_until(Duration::from_secs(42), |w| {
        w.nodes.iter().any(|d| {
            d.events
                .iter()
                .any(|e| matches!(e, RelayEvent::RelayDown { .. }))
        })
    });
    assert!(!dropped, "a relay connection went down");
    let now = w.now();
    w.nodes[1]
        .relays
        .send_to_peer(now, &a, b"\x1bstill")
        .unwrap();
    let mut got = Vec::new();
    assert!(w.run_until(Duration::from_secs(5), |w| {
        got.extend(w.data(0, 1));
        !got.is_empty()
    }));
    assert_eq!(got, vec![b"\x1bstill".to_vec()]);
}
