//! The relay server against clients made from the wire module, in memory and virtual time.

use std::net::SocketAddr;

use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PublicKey};
use rustox_net_crypto::Timestamp;

use super::*;
use crate::onion::server::{NoNodes, OnionConfig, OnionOutput, OnionServer};
use crate::onion::wire::ip_port::IpPort;
use crate::onion::wire::{kind, response, sendback::ReturnLevel};
use crate::relay::wire::frame::frame_size;
use crate::relay::wire::handshake::{ClientHandshake, SERVER_REPLY_SIZE};
use crate::relay::wire::{FrameDecoder, FrameEncoder, Packet};

/// A relay client: keys, its stream's state, and every packet it has received.
struct Client {
    id: ConnId,
    keys: KeyPair,
    hs: Option<ClientHandshake>,
    reply: ExactBytes<SERVER_REPLY_SIZE>,
    enc: Option<FrameEncoder>,
    dec: Option<FrameDecoder>,
    inbox: Vec<Vec<u8>>,
}

impl Client {
    /// A client on connection `id` that has sent the hello of handshake `hs`.
    fn started(id: ConnId, keys: KeyPair, hs: ClientHandshake) -> Client {
        Client {
            id,
            keys,
            hs: Some(hs),
            reply: ExactBytes::default(),
            enc: None,
            dec: None,
            inbox: Vec::new(),
        }
    }

    fn pk(&self) -> PublicKey {
        self.keys.public
    }

    /// Reads everything the server queued for us.
    fn pump(&mut self, s: &mut RelayServer) {
        let mut bytes = Vec::new();
        loop {
            let record = s.poll_transmit(self.id);
            if record.is_empty() {
                break;
            }
            bytes.extend_from_slice(record);
            let n = record.len();
            s.handle_written(self.id, n);
        }
        self.read(&bytes);
    }

    fn read(&mut self, bytes: &[u8]) {
        let mut input = bytes;
        if let Some(hs) = self.hs.take() {
            match self.reply.fill(&mut input) {
                Some(reply) => {
                    let (enc, dec) = hs.open_reply(reply).unwrap().split();
                    self.enc = Some(enc);
                    self.dec = Some(dec);
                }
                None => {
                    self.hs = Some(hs);
                    return;
                }
            }
        }
        let dec = self.dec.as_mut().unwrap();
        while let Some(p) = dec.decode(&mut input).unwrap() {
            self.inbox.push(p.to_vec());
        }
    }

    fn frame(&mut self, packet: &Packet<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        self.enc
            .as_mut()
            .unwrap()
            .encode(&packet.to_vec(), &mut out)
            .unwrap();
        out
    }

    fn send(
        &mut self,
        s: &mut RelayServer,
        now: Timestamp,
        packet: &Packet<'_>,
        rng: &mut ChaCha8Rng,
    ) {
        let f = self.frame(packet);
        s.handle_bytes(now, self.id, &f, rng);
    }

    /// Packets received so far, parsed, and forgotten.
    fn take(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.inbox)
    }
}

struct Harness {
    s: RelayServer,
    rng: ChaCha8Rng,
    now: Timestamp,
    next_id: u64,
}

fn addr(i: u64) -> SocketAddr {
    SocketAddr::from(([10, 0, (i >> 8) as u8, i as u8], 40000))
}

impl Harness {
    fn new(config: RelayConfig) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(1227);
        let keys = KeyPair::generate(&mut rng);
        Harness {
            s: RelayServer::new(keys, config),
            rng,
            now: Timestamp::from_secs(1000),
            next_id: 1,
        }
    }

    /// A client that has sent its hello (not yet its first frame).
    fn hello(&mut self, from: SocketAddr) -> Client {
        let keys = KeyPair::generate(&mut self.rng);
        self.hello_with(keys, from)
    }

    /// As [`Self::hello`], with given keys.
    fn hello_with(&mut self, keys: KeyPair, from: SocketAddr) -> Client {
        let id = ConnId(self.next_id);
        self.next_id += 1;
        self.s.handle_accept(self.now, id, from).unwrap();
        let (hs, hello) = ClientHandshake::new(&keys, &self.s.public_key(), &mut self.rng).unwrap();
        self.s.handle_bytes(self.now, id, &hello, &mut self.rng);
        let mut c = Client::started(id, keys, hs);
        c.pump(&mut self.s);
        assert!(c.enc.is_some(), "no handshake reply");
        c
    }

    /// A confirmed client (its first frame is a ping, answered by a pong).
    fn client(&mut self, from: SocketAddr) -> Client {
        let mut c = self.hello(from);
        self.send(&mut c, &Packet::Ping { ping_id: 77 });
        c.pump(&mut self.s);
        assert_eq!(c.take(), vec![Packet::Pong { ping_id: 77 }.to_vec()]);
        c
    }

    fn send(&mut self, c: &mut Client, p: &Packet<'_>) {
        c.send(&mut self.s, self.now, p, &mut self.rng);
    }

    fn advance(&mut self, secs: u64) {
        self.now += Duration::from_secs(secs);
        self.s.handle_timeout(self.now, &mut self.rng);
    }

    fn closes(&mut self) -> Vec<(ConnId, CloseReason)> {
        std::iter::from_fn(|| self.s.poll_close()).collect()
    }

    /// a and b ask for each other; returns (a's conn id for b, b's for a).
    fn link(&mut self, a: &mut Client, b: &mut Client) -> (u8, u8) {
        self.send(a, &Packet::RoutingRequest { pk: b.pk() });
        self.send(b, &Packet::RoutingRequest { pk: a.pk() });
        a.pump(&mut self.s);
        b.pump(&mut self.s);
        let id_of = |inbox: Vec<Vec<u8>>, peer: PublicKey| {
            let mut route = None;
            let mut connected = false;
            for p in &inbox {
                match Packet::parse(p).unwrap() {
                    Packet::RoutingResponse { conn_id, pk } if pk == peer => route = Some(conn_id),
                    Packet::ConnectNotification { conn_id } => {
                        assert_eq!(Some(conn_id), route);
                        connected = true;
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            assert!(connected, "no connect notification in {inbox:?}");
            route.unwrap()
        };
        (id_of(a.take(), b.pk()), id_of(b.take(), a.pk()))
    }
}

fn small() -> RelayConfig {
    RelayConfig {
        max_per_ip: 1000,
        ..RelayConfig::default()
    }
}

#[test]
fn two_clients_link_up_and_exchange_data_both_ways() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    // A asks first: a route id, but no connect notification until B asks back.
    h.send(&mut a, &Packet::RoutingRequest { pk: b.pk() });
    a.pump(&mut h.s);
    assert_eq!(
        a.take(),
        vec![Packet::RoutingResponse {
            conn_id: 16,
            pk: b.pk()
        }
        .to_vec()]
    );
    h.send(&mut b, &Packet::RoutingRequest { pk: a.pk() });
    a.pump(&mut h.s);
    b.pump(&mut h.s);
    assert_eq!(
        a.take(),
        vec![Packet::ConnectNotification { conn_id: 16 }.to_vec()]
    );
    assert_eq!(
        b.take(),
        vec![
            Packet::RoutingResponse {
                conn_id: 16,
                pk: a.pk()
            }
            .to_vec(),
            Packet::ConnectNotification { conn_id: 16 }.to_vec()
        ]
    );
    for i in 0..50u8 {
        let payload = vec![i; 1 + usize::from(i) * 30];
        h.send(
            &mut a,
            &Packet::Data {
                conn_id: 16,
                payload: &payload,
            },
        );
        h.send(
            &mut b,
            &Packet::Data {
                conn_id: 16,
                payload: &[0x1b, i],
            },
        );
    }
    a.pump(&mut h.s);
    b.pump(&mut h.s);
    let got_b = b.take();
    let got_a = a.take();
    assert_eq!(got_b.len(), 50);
    assert_eq!(got_a.len(), 50);
    for (i, (pb, pa)) in got_b.iter().zip(&got_a).enumerate() {
        let i = i as u8;
        assert_eq!(
            Packet::parse(pb).unwrap(),
            Packet::Data {
                conn_id: 16,
                payload: &vec![i; 1 + usize::from(i) * 30]
            }
        );
        assert_eq!(
            Packet::parse(pa).unwrap(),
            Packet::Data {
                conn_id: 16,
                payload: &[0x1b, i]
            }
        );
    }
    let st = h.s.stats();
    assert_eq!(st.data_forwarded, 100);
    assert_eq!(st.routes_linked, 1);
    assert_eq!(st.confirmed, 2);
}

#[test]
fn ids_differ_per_side_and_a_repeated_request_gets_the_same_id() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    let mut c = h.client(addr(3));
    // A's first route goes to C, so its route to B is 17 while B's route to A is 16.
    h.send(&mut a, &Packet::RoutingRequest { pk: c.pk() });
    a.pump(&mut h.s);
    a.take();
    let (ab, ba) = h.link(&mut a, &mut b);
    assert_eq!((ab, ba), (17, 16));
    h.send(&mut a, &Packet::RoutingRequest { pk: b.pk() });
    a.pump(&mut h.s);
    assert_eq!(
        a.take(),
        vec![Packet::RoutingResponse {
            conn_id: 17,
            pk: b.pk()
        }
        .to_vec()]
    );
    h.send(
        &mut a,
        &Packet::Data {
            conn_id: 17,
            payload: &[1, 2, 3],
        },
    );
    b.pump(&mut h.s);
    assert_eq!(
        b.take(),
        vec![Packet::Data {
            conn_id: 16,
            payload: &[1, 2, 3]
        }
        .to_vec()]
    );
    c.pump(&mut h.s);
    assert!(c.take().is_empty());
}

#[test]
fn a_route_to_oneself_or_beyond_240_is_refused_with_id_0() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let own = a.pk();
    h.send(&mut a, &Packet::RoutingRequest { pk: own });
    for i in 0..241u32 {
        let mut pk = [0u8; 32];
        pk[..4].copy_from_slice(&i.to_be_bytes());
        h.send(&mut a, &Packet::RoutingRequest { pk: PublicKey(pk) });
    }
    a.pump(&mut h.s);
    let ids: Vec<u8> = a
        .take()
        .iter()
        .map(|p| match Packet::parse(p).unwrap() {
            Packet::RoutingResponse { conn_id, .. } => conn_id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids.len(), 242);
    assert_eq!(ids[0], 0);
    assert_eq!(ids[1..241], (16..=255).collect::<Vec<u8>>()[..]);
    assert_eq!(ids[241], 0);
}

#[test]
fn data_on_a_pending_route_is_dropped_and_on_a_free_slot_closes() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let b = h.client(addr(2));
    h.send(&mut a, &Packet::RoutingRequest { pk: b.pk() });
    h.send(
        &mut a,
        &Packet::Data {
            conn_id: 16,
            payload: &[1],
        },
    );
    assert_eq!(h.s.stats().dropped(RelayDrop::RouteNotLinked), 1);
    assert!(h.closes().is_empty());
    h.send(
        &mut a,
        &Packet::Data {
            conn_id: 17,
            payload: &[1],
        },
    );
    assert_eq!(h.closes(), vec![(a.id, CloseReason::BadPacket)]);
    assert_eq!(h.s.connections(), 1);
}

/// What a client hears when the peer on its route `conn_id` goes away.
fn disconnected(conn_id: u8) -> Vec<Vec<u8>> {
    vec![Packet::DisconnectNotification { conn_id }.to_vec()]
}

#[test]
fn disconnect_and_close_take_the_route_down_and_a_return_relinks() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    let (ab, ba) = h.link(&mut a, &mut b);
    // A removes the route: B is told, and its slot waits for A again.
    h.send(&mut a, &Packet::DisconnectNotification { conn_id: ab });
    b.pump(&mut h.s);
    assert_eq!(b.take(), disconnected(ba));
    h.send(
        &mut b,
        &Packet::Data {
            conn_id: ba,
            payload: &[9],
        },
    );
    assert_eq!(h.s.stats().dropped(RelayDrop::RouteNotLinked), 1);
    // A asks again: linked at once, since B never gave up its slot.
    h.send(&mut a, &Packet::RoutingRequest { pk: b.pk() });
    a.pump(&mut h.s);
    b.pump(&mut h.s);
    assert_eq!(a.take().len(), 2);
    assert_eq!(
        b.take(),
        vec![Packet::ConnectNotification { conn_id: ba }.to_vec()]
    );
    // A's socket closes: B is told again.
    h.s.handle_closed(a.id);
    b.pump(&mut h.s);
    assert_eq!(b.take(), disconnected(ba));
    assert!(h.closes().is_empty(), "the driver already knows");
    assert_eq!(h.s.stats().closed_by_peer, 1);
    // A comes back on a new connection and asks for B: the route is up again.
    let mut a2 = h.hello_with(a.keys.clone(), addr(1));
    h.send(&mut a2, &Packet::RoutingRequest { pk: b.pk() });
    a2.pump(&mut h.s);
    b.pump(&mut h.s);
    assert_eq!(
        a2.take(),
        vec![
            Packet::RoutingResponse {
                conn_id: 16,
                pk: b.pk()
            }
            .to_vec(),
            Packet::ConnectNotification { conn_id: 16 }.to_vec()
        ]
    );
    assert_eq!(
        b.take(),
        vec![Packet::ConnectNotification { conn_id: ba }.to_vec()]
    );
}

#[test]
fn a_newer_connection_with_the_same_key_replaces_the_older() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    let (_, ba) = h.link(&mut a, &mut b);
    let mut a2 = h.hello_with(a.keys.clone(), addr(3));
    // Only the first frame authenticates the new connection; until then A keeps its place.
    assert!(h.closes().is_empty());
    h.send(&mut a2, &Packet::Ping { ping_id: 5 });
    assert_eq!(h.closes(), vec![(a.id, CloseReason::Replaced)]);
    b.pump(&mut h.s);
    assert_eq!(b.take(), disconnected(ba));
    // OOB for A's key now reaches the new connection.
    h.send(
        &mut b,
        &Packet::OobSend {
            dest: a.pk(),
            data: b"hi",
        },
    );
    a2.pump(&mut h.s);
    assert_eq!(
        a2.take(),
        vec![
            Packet::Pong { ping_id: 5 }.to_vec(),
            Packet::OobRecv {
                sender: b.pk(),
                data: b"hi"
            }
            .to_vec()
        ]
    );
}

#[test]
fn oob_reaches_only_a_confirmed_client_with_that_key() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    let pending = h.hello(addr(3));
    h.send(
        &mut a,
        &Packet::OobSend {
            dest: b.pk(),
            data: &[7; 1024],
        },
    );
    h.send(
        &mut a,
        &Packet::OobSend {
            dest: pending.pk(),
            data: &[1],
        },
    );
    h.send(
        &mut a,
        &Packet::OobSend {
            dest: PublicKey([3; 32]),
            data: &[1],
        },
    );
    b.pump(&mut h.s);
    assert_eq!(
        b.take(),
        vec![Packet::OobRecv {
            sender: a.pk(),
            data: &[7; 1024]
        }
        .to_vec()]
    );
    let st = h.s.stats();
    assert_eq!(st.oob_forwarded, 1);
    assert_eq!(st.dropped(RelayDrop::OobUnknownDestination), 2);
    // More than 1024 bytes of OOB data is a bad packet: 0.2.18 closes the connection.
    let mut long = vec![6u8];
    long.extend_from_slice(b.pk().as_bytes());
    long.extend_from_slice(&[0; 1025]);
    let mut frame = Vec::new();
    a.enc.as_mut().unwrap().encode(&long, &mut frame).unwrap();
    h.s.handle_bytes(h.now, a.id, &frame, &mut h.rng);
    assert_eq!(h.closes(), vec![(a.id, CloseReason::BadPacket)]);
}

#[test]
fn pings_every_30_s_and_closes_10_s_after_an_unanswered_one() {
    let mut h = Harness::new(small());
    let mut good = h.client(addr(1));
    let mut mute = h.client(addr(2));
    assert_eq!(h.s.poll_timeout(), Some(h.now + TCP_PING_FREQUENCY));
    h.advance(29);
    good.pump(&mut h.s);
    assert!(good.take().is_empty());
    h.advance(1);
    good.pump(&mut h.s);
    mute.pump(&mut h.s);
    let ping = good.take();
    assert_eq!(ping.len(), 1);
    let Packet::Ping { ping_id } = Packet::parse(&ping[0]).unwrap() else {
        panic!("{ping:?}")
    };
    assert_ne!(ping_id, 0);
    assert_eq!(mute.take().len(), 1);
    // A wrong id does not count; the right one does.
    h.send(
        &mut good,
        &Packet::Pong {
            ping_id: ping_id.wrapping_add(1),
        },
    );
    h.send(&mut good, &Packet::Pong { ping_id });
    h.advance(9);
    assert!(h.closes().is_empty());
    h.advance(1);
    assert_eq!(h.closes(), vec![(mute.id, CloseReason::PingTimeout)]);
    // The next ping comes 30 s after the last.
    h.advance(19);
    good.pump(&mut h.s);
    assert!(good.take().is_empty());
    h.advance(1);
    good.pump(&mut h.s);
    assert_eq!(good.take().len(), 1);
    assert_eq!(h.s.stats().pings_sent, 3);
    // A pong with id 0 closes the connection, as in 0.2.18.
    h.send(&mut good, &Packet::Pong { ping_id: 0 });
    assert_eq!(h.closes(), vec![(good.id, CloseReason::BadPacket)]);
}

#[test]
fn the_hello_and_first_frame_must_arrive_within_10_s() {
    let mut h = Harness::new(small());
    h.s.handle_accept(h.now, ConnId(50), addr(9)).unwrap();
    let half = h.hello(addr(10));
    let mut done = h.hello(addr(11));
    h.advance(9);
    h.send(&mut done, &Packet::Ping { ping_id: 1 });
    h.advance(1);
    let mut closes = h.closes();
    closes.sort();
    assert_eq!(
        closes,
        vec![
            (half.id, CloseReason::HandshakeTimeout),
            (ConnId(50), CloseReason::HandshakeTimeout)
        ]
    );
    assert_eq!(h.s.connections(), 1);
    assert_eq!(h.s.confirmed_connections(), 1);
}

#[test]
fn hello_and_frames_may_arrive_in_any_chunks() {
    let mut h = Harness::new(small());
    let id = ConnId(7);
    h.s.handle_accept(h.now, id, addr(1)).unwrap();
    let keys = KeyPair::generate(&mut h.rng);
    let (hs, hello) = ClientHandshake::new(&keys, &h.s.public_key(), &mut h.rng).unwrap();
    let mut c = Client::started(id, keys, hs);
    for b in hello[..100].chunks(7) {
        h.s.handle_bytes(h.now, id, b, &mut h.rng);
    }
    assert!(h.s.poll_transmit(id).is_empty());
    h.s.handle_bytes(h.now, id, &hello[100..], &mut h.rng);
    // The reply, read a byte at a time.
    let reply = h.s.poll_transmit(id).to_vec();
    h.s.handle_written(id, reply.len());
    for b in reply.chunks(1) {
        c.read(b);
    }
    let mut stream = c.frame(&Packet::Ping { ping_id: 1 });
    stream.extend(c.frame(&Packet::Ping { ping_id: 2 }));
    for b in stream.chunks(3) {
        h.s.handle_bytes(h.now, id, b, &mut h.rng);
    }
    c.pump(&mut h.s);
    assert_eq!(
        c.take(),
        vec![
            Packet::Pong { ping_id: 1 }.to_vec(),
            Packet::Pong { ping_id: 2 }.to_vec()
        ]
    );
}

#[test]
fn malformed_input_closes_only_that_connection() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    let (ab, ba) = h.link(&mut a, &mut b);
    // A bad hello, a forged frame, an oversized length, a reserved id, a server-only packet.
    let bad_hello = h.hello(addr(3)).id;
    let mut forged = h.client(addr(4));
    let mut too_long = h.client(addr(5));
    let mut reserved = h.client(addr(6));
    let mut wrong_way = h.client(addr(7));
    let x = ConnId(900);
    h.s.handle_accept(h.now, x, addr(8)).unwrap();
    h.s.handle_bytes(h.now, x, &[0x55; 128], &mut h.rng);
    let mut f = forged.frame(&Packet::Ping { ping_id: 3 });
    f[4] ^= 1;
    h.s.handle_bytes(h.now, forged.id, &f, &mut h.rng);
    h.s.handle_bytes(h.now, too_long.id, &[0x08, 0x01], &mut h.rng);
    let mut r = Vec::new();
    reserved
        .enc
        .as_mut()
        .unwrap()
        .encode(&[12, 0], &mut r)
        .unwrap();
    h.s.handle_bytes(h.now, reserved.id, &r, &mut h.rng);
    h.send(&mut wrong_way, &Packet::OnionResponse { data: &[0x84] });
    let _ = (&mut too_long, bad_hello);
    let mut closes = h.closes();
    closes.sort();
    assert_eq!(
        closes,
        vec![
            (forged.id, CloseReason::BadFrame),
            (too_long.id, CloseReason::BadFrame),
            (reserved.id, CloseReason::BadPacket),
            (wrong_way.id, CloseReason::BadPacket),
            (x, CloseReason::BadHandshake),
        ]
    );
    // A and B are untouched.
    h.send(
        &mut a,
        &Packet::Data {
            conn_id: ab,
            payload: b"still here",
        },
    );
    b.pump(&mut h.s);
    assert_eq!(
        b.take(),
        vec![Packet::Data {
            conn_id: ba,
            payload: b"still here"
        }
        .to_vec()]
    );
    // Bytes for a closed or unknown connection are ignored.
    h.s.handle_bytes(h.now, forged.id, &[1, 2, 3], &mut h.rng);
    h.s.handle_bytes(h.now, ConnId(12345), &[1, 2, 3], &mut h.rng);
    assert!(h.closes().is_empty());
}

/// Packet 10 goes to the DHT's forwarding with the connection's index and serial; the reply
/// comes back as packet 11 to that connection only, never to a later one with the same index.
#[test]
fn forward_requests_go_to_the_dht_and_replies_come_back() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    h.send(
        &mut a,
        &Packet::ForwardRequest {
            dest: "1.2.3.4:5".parse().unwrap(),
            data: &[0x93; 10],
        },
    );
    assert!(h.closes().is_empty());
    let req = h.s.poll_forward_request().unwrap();
    assert_eq!(req.dest, "1.2.3.4:5".parse().unwrap());
    assert_eq!(req.data, vec![0x93; 10]);
    assert_eq!(req.client, addr(1));
    assert!(h.s.poll_forward_request().is_none());
    assert_eq!(h.s.stats().forward_requests, 1);
    assert!(h.s.handle_forward_reply(req.con, req.serial, &[0x94; 20]));
    a.pump(&mut h.s);
    assert_eq!(
        a.take(),
        vec![Packet::Forwarding { data: &[0x94; 20] }.to_vec()]
    );
    // A stale serial or an unknown index is dropped and counted.
    assert!(!h.s.handle_forward_reply(req.con, req.serial + 1, &[1]));
    assert!(!h.s.handle_forward_reply(req.con + 1000, req.serial, &[1]));
    assert_eq!(h.s.stats().dropped(RelayDrop::ForwardUnknownConnection), 2);
    assert_eq!(h.s.stats().forward_replies, 1);
}

#[test]
fn connection_limits_in_all_per_address_and_for_handshakes() {
    let mut h = Harness::new(RelayConfig {
        max_connections: 6,
        max_per_ip: 2,
        max_handshaking: 4,
        ..RelayConfig::default()
    });
    let now = h.now;
    let v6 = |s: &str| -> SocketAddr { s.parse().unwrap() };
    assert_eq!(h.s.handle_accept(now, ConnId(1), addr(1)), Ok(()));
    assert_eq!(h.s.handle_accept(now, ConnId(2), addr(1)), Ok(()));
    assert_eq!(
        h.s.handle_accept(now, ConnId(3), addr(1)),
        Err(Refused::TooManyFromAddress)
    );
    // An IPv4-mapped address is the same source; IPv6 sources count by /64.
    assert_eq!(
        h.s.handle_accept(now, ConnId(3), v6("[::ffff:10.0.0.1]:1")),
        Err(Refused::TooManyFromAddress)
    );
    assert_eq!(
        h.s.handle_accept(now, ConnId(3), v6("[2001:db8::1]:1")),
        Ok(())
    );
    assert_eq!(
        h.s.handle_accept(now, ConnId(4), v6("[2001:db8::2]:1")),
        Ok(())
    );
    assert_eq!(
        h.s.handle_accept(now, ConnId(5), v6("[2001:db8::3]:1")),
        Err(Refused::TooManyFromAddress)
    );
    // A fifth handshake evicts the oldest.
    assert_eq!(h.s.handle_accept(now, ConnId(5), addr(5)), Ok(()));
    assert_eq!(h.closes(), vec![(ConnId(1), CloseReason::HandshakeEvicted)]);
    assert_eq!(
        h.s.handle_accept(now, ConnId(2), addr(6)),
        Err(Refused::DuplicateId)
    );
    // Confirmed connections leave room for handshakes, up to the total.
    h.s.handle_closed(ConnId(2));
    let _a = h.client(addr(7));
    let _b = h.client(addr(8));
    assert!(h.closes().is_empty());
    assert_eq!(h.s.handle_accept(now, ConnId(6), addr(6)), Ok(()));
    assert_eq!(
        h.s.handle_accept(now, ConnId(10), addr(10)),
        Err(Refused::TooManyConnections)
    );
    assert_eq!(h.s.stats().refused, [1, 3]);
    // A closed connection frees its address's count.
    h.s.handle_closed(ConnId(3));
    assert_eq!(
        h.s.handle_accept(now, ConnId(11), v6("[2001:db8::9]:1")),
        Ok(())
    );
}

#[test]
fn silent_sockets_cannot_keep_an_honest_client_out() {
    let mut h = Harness::new(RelayConfig {
        max_handshaking: 8,
        ..small()
    });
    // The handshake slots are full of sockets that never speak, and more keep coming.
    for i in 0..8 {
        h.s.handle_accept(h.now, ConnId(1000 + i), addr(50))
            .unwrap();
    }
    let mut a = h.client(addr(1));
    h.s.handle_accept(h.now, ConnId(2000), addr(50)).unwrap();
    let b = h.client(addr(2));
    // Each honest client evicted one silent socket, the oldest, and got through.
    let mut closes = h.closes();
    closes.sort();
    assert_eq!(
        closes,
        vec![
            (ConnId(1000), CloseReason::HandshakeEvicted),
            (ConnId(1001), CloseReason::HandshakeEvicted),
        ]
    );
    h.send(
        &mut a,
        &Packet::OobSend {
            dest: b.pk(),
            data: b"in",
        },
    );
    assert_eq!(h.s.stats().oob_forwarded, 1);
    assert_eq!(h.s.confirmed_connections(), 2);
}

#[test]
fn a_slow_reader_stays_bounded_and_data_for_it_is_dropped() {
    let limit = 16 * 1024;
    let mut h = Harness::new(RelayConfig {
        output_limit: limit,
        ..small()
    });
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    let (ab, _) = h.link(&mut a, &mut b);
    // B stops reading; A sends 10 MB.
    let payload = [0x1b; 1400];
    for _ in 0..7500 {
        h.send(
            &mut a,
            &Packet::Data {
                conn_id: ab,
                payload: &payload,
            },
        );
        assert!(h.s.queued(b.id) <= limit);
    }
    let st = h.s.stats();
    assert!(st.data_forwarded <= (limit / 1400) as u64, "{st:?}");
    assert_eq!(st.data_forwarded + st.dropped(RelayDrop::OutputFull), 7500);
    assert!(h.closes().is_empty());
    // Control frames still fit: B still gets its pings, and answers keep it alive.
    let before = h.s.queued(b.id);
    h.advance(30);
    assert_eq!(h.s.queued(b.id), before + frame_size(9));
    b.pump(&mut h.s);
    let got = b.take();
    assert_eq!(got.len() as u64, st.data_forwarded + 1);
    // Once B reads, data flows again.
    h.send(
        &mut a,
        &Packet::Data {
            conn_id: ab,
            payload: &payload,
        },
    );
    assert_eq!(h.s.stats().data_forwarded, st.data_forwarded + 1);
}

#[test]
fn a_client_that_never_reads_its_control_frames_is_closed() {
    let mut h = Harness::new(RelayConfig {
        output_limit: 1024,
        ..small()
    });
    let mut a = h.client(addr(1));
    let mut n = 0;
    while h.s.connections() == 1 {
        h.send(&mut a, &Packet::Ping { ping_id: 1 });
        n += 1;
        assert!(h.s.queued(a.id) <= 1024 + CONTROL_RESERVE);
        assert!(n < 10_000);
    }
    assert_eq!(h.closes(), vec![(a.id, CloseReason::SlowReader)]);
    assert_eq!(n, (1024 + CONTROL_RESERVE) / 27 + 1);
}

#[test]
fn poll_ready_names_each_connection_with_output_once() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    while h.s.poll_ready().is_some() {}
    h.send(&mut a, &Packet::Ping { ping_id: 1 });
    h.send(&mut a, &Packet::Ping { ping_id: 2 });
    h.send(
        &mut a,
        &Packet::OobSend {
            dest: b.pk(),
            data: &[1],
        },
    );
    let mut ready: Vec<ConnId> = std::iter::from_fn(|| h.s.poll_ready()).collect();
    ready.sort();
    assert_eq!(ready, vec![a.id, b.id]);
    // Written in part: not named again until more output arrives.
    let n = h.s.poll_transmit(a.id).len();
    h.s.handle_written(a.id, n - 1);
    assert_eq!(h.s.poll_ready(), None);
    a.pump(&mut h.s);
    b.pump(&mut h.s);
    assert_eq!(h.s.poll_ready(), None);
    assert_eq!(h.s.poll_transmit(a.id), &[] as &[u8]);
}

/// An onion path whose first hop is the relay: request out as 0x81, the 0x8e back to the
/// client as packet 9.
#[test]
fn onion_requests_leave_as_hop_a_and_responses_come_back_as_packet_9() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut onion = OnionServer::new(
        &KeyPair::generate(&mut h.rng),
        OnionConfig::default(),
        h.now,
        &mut h.rng,
    );
    // [ipport B][PK2][box]: B at 192.0.2.1:33445.
    let mut plain = IpPort::Udp("192.0.2.1:33445".parse().unwrap())
        .encode()
        .to_vec();
    plain.extend_from_slice(&[0x42; 32 + 200]);
    h.send(
        &mut a,
        &Packet::OnionRequest {
            nonce: Nonce([8; 24]),
            plain: &plain,
        },
    );
    let req = h.s.poll_onion_request().unwrap();
    assert_eq!(req.conn, a.id);
    assert_eq!(req.client, addr(1));
    let t = onion
        .handle_tcp_request(
            h.now,
            req.client,
            &req.source,
            &req.nonce,
            &req.plain,
            &mut h.rng,
        )
        .unwrap();
    assert_eq!(t.dst, "192.0.2.1:33445".parse::<SocketAddr>().unwrap());
    assert_eq!(t.payload[0], kind::REQUEST_1);
    assert_eq!(&t.payload[1..25], &[8; 24]);
    assert_eq!(&t.payload[25..25 + 232], &plain[19..]);
    let sendback = &t.payload[25 + 232..];
    assert_eq!(sendback.len(), 59);
    // B answers with 0x8e carrying our sendback.
    let resp =
        response::encode(ReturnLevel::One, sendback, &[kind::ANNOUNCE_RESPONSE; 100]).unwrap();
    let out = onion
        .handle_datagram_with_tcp(
            h.now,
            "192.0.2.1:33445".parse().unwrap(),
            &resp,
            &NoNodes,
            &mut h.rng,
        )
        .unwrap();
    let OnionOutput::TcpClient { dest, response } = out else {
        panic!("{out:?}")
    };
    assert_eq!(dest, req.source);
    assert!(h.s.handle_onion_response(&dest, &response));
    a.pump(&mut h.s);
    assert_eq!(
        a.take(),
        vec![Packet::OnionResponse {
            data: &[kind::ANNOUNCE_RESPONSE; 100]
        }
        .to_vec()]
    );
    // Once A is gone (even if the driver reuses its id), the response goes nowhere.
    h.s.handle_closed(a.id);
    assert!(!h.s.handle_onion_response(&dest, &response));
    h.s.handle_accept(h.now, a.id, addr(1)).unwrap();
    assert!(!h.s.handle_onion_response(&dest, &response));
    assert_eq!(h.s.stats().dropped(RelayDrop::OnionUnknownConnection), 2);
    // A node without a TCP relay drops such a response.
    assert_eq!(
        onion.handle_datagram(
            h.now,
            "192.0.2.1:33445".parse().unwrap(),
            &resp,
            &NoNodes,
            &mut h.rng
        ),
        Err(crate::onion::server::OnionDrop::TcpReturn)
    );
}

#[test]
fn onion_requests_beyond_the_queue_are_dropped() {
    let mut h = Harness::new(RelayConfig {
        onion_queue: 2,
        ..small()
    });
    let mut a = h.client(addr(1));
    for _ in 0..3 {
        h.send(
            &mut a,
            &Packet::OnionRequest {
                nonce: Nonce([0; 24]),
                plain: &[2; 200],
            },
        );
    }
    assert_eq!(h.s.stats().onion_requests, 2);
    assert_eq!(h.s.stats().dropped(RelayDrop::OnionQueueFull), 1);
    assert!(h.s.poll_onion_request().is_some());
    assert!(h.s.poll_onion_request().is_some());
    assert!(h.s.poll_onion_request().is_none());
}

#[test]
fn an_idle_connection_holds_no_buffers() {
    let mut h = Harness::new(small());
    let mut a = h.client(addr(1));
    let mut b = h.client(addr(2));
    let (ab, _) = h.link(&mut a, &mut b);
    for _ in 0..20 {
        h.send(
            &mut a,
            &Packet::Data {
                conn_id: ab,
                payload: &[0; 2000],
            },
        );
    }
    b.pump(&mut h.s);
    h.advance(30);
    b.pump(&mut h.s);
    a.pump(&mut h.s);
    for id in [a.id, b.id] {
        let c = &h.s.conns[&id];
        assert!(c.out.is_empty());
        assert!(c.out.capacity() <= 128, "{}", c.out.capacity());
        assert!(c.hello.is_none());
        let dec = c.session.as_ref().unwrap().dec.as_ref().unwrap();
        assert_eq!(dec.heap_bytes(), 0);
        assert!(h.s.heap_bytes(id) <= 512, "{}", h.s.heap_bytes(id));
    }
}

proptest! {
    /// Arbitrary bytes to arbitrary connections, accepts, closes and timers: nothing panics,
    /// every bound holds, and the counters agree with the connections held.
    #[test]
    fn arbitrary_input_keeps_every_bound(
        ops in proptest::collection::vec(
            (0u8..5, 0u64..6, proptest::collection::vec(any::<u8>(), 0..300)), 1..60),
    ) {
        let config = RelayConfig {
            max_connections: 4,
            max_per_ip: 3,
            max_handshaking: 3,
            output_limit: 512,
            onion_queue: 4,
            ..RelayConfig::default()
        };
        let mut h = Harness::new(config);
        let mut real = [h.client(addr(100)), h.client(addr(101))];
        let (x, y) = real.split_at_mut(1);
        let (xy, _) = h.link(&mut x[0], &mut y[0]);
        for (op, conn, bytes) in ops {
            let id = ConnId(conn);
            match op {
                0 => { let _ = h.s.handle_accept(h.now, id, addr(conn % 3)); }
                1 => h.s.handle_bytes(h.now, id, &bytes, &mut h.rng),
                2 => h.s.handle_closed(id),
                3 => h.advance(u64::from(bytes.first().copied().unwrap_or(5))),
                _ => {
                    let p = Packet::Data { conn_id: xy, payload: &[1; 900] };
                    if h.s.client_key(real[0].id).is_some() {
                        h.send(&mut real[0], &p);
                    }
                }
            }
            prop_assert!(h.s.connections() <= 4);
            for c in h.s.conns.values() {
                prop_assert!(c.out.len() <= 512 + CONTROL_RESERVE + SERVER_REPLY_SIZE);
            }
            prop_assert_eq!(h.s.timers.len(), h.s.conns.len());
            prop_assert!(h.s.onion.len() <= 4);
            while h.s.poll_onion_request().is_some() {}
            while h.s.poll_close().is_some() {}
        }
        let st = h.s.stats();
        let closed: u64 = st.closed.iter().sum::<u64>() + st.closed_by_peer;
        prop_assert_eq!(st.accepted - closed, h.s.connections() as u64);
    }
}
