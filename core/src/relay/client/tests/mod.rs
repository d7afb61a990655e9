//! [`RelayClients`] against in-memory relays, in virtual time: clients ↔ relay ↔ clients.
//!
//! Two relays stand in: [`ScriptedRelay`], made from the wire module, which routes, relays
//! OOB packets, answers pings and records onion requests as a c-toxcore 0.2.18 relay does
//! (`TCP_server.c`) and can be told to misbehave (fall silent, refuse connections, send a
//! broken frame); and the real [`RelayServer`] (`server.rs`). Bytes cross the "TCP
//! connection" at once and in order; the driver loop is [`Net::pump`], what a real driver
//! does after every input.

mod connection;
mod scripted;
mod server;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PublicKey};
use rustox_net_crypto::Timestamp;

use super::*;
use crate::relay::client::connection::{DEFAULT_OUTPUT_LIMIT, MIN_ONION_REQUEST_SIZE};
use crate::relay::client::set::{AddRelayError, MAX_FAILURES, TCP_CONNECTION_ANNOUNCE_TIMEOUT};
use crate::relay::client::CONTROL_RESERVE;
use crate::relay::server::{ConnId, RelayConfig, RelayServer};
use crate::relay::wire::{
    accept_hello, ExactBytes, FrameDecoder, FrameEncoder, Packet, CLIENT_HELLO_SIZE,
};

const START: Timestamp = Timestamp::from_secs(1000);

/// The event saying the route to `peer` went down.
fn route_down(peer: PublicKey) -> Vec<RelayEvent> {
    vec![RelayEvent::PeerRoute {
        peer,
        online: false,
    }]
}

/// The relay side of one client's TCP connection.
struct Session {
    hello: ExactBytes<CLIENT_HELLO_SIZE>,
    client: Option<PublicKey>,
    enc: Option<FrameEncoder>,
    dec: Option<FrameDecoder>,
    /// Our route ids for this client: id → the peer it asked for.
    routes: BTreeMap<u8, PublicKey>,
    /// Bytes for the client.
    out: Vec<u8>,
    /// Closed by the relay (after a protocol error of the client's).
    closed: bool,
}

impl Session {
    fn send(&mut self, p: &Packet<'_>) {
        if let Some(enc) = self.enc.as_mut() {
            enc.encode(&p.to_vec(), &mut self.out).unwrap();
        }
    }

    fn id_for(&self, peer: &PublicKey) -> Option<u8> {
        self.routes
            .iter()
            .find(|(_, pk)| *pk == peer)
            .map(|(id, _)| *id)
    }
}

/// A scripted relay: routes, OOB, ping/pong, onion requests recorded.
struct ScriptedRelay {
    keys: KeyPair,
    sessions: BTreeMap<u64, Session>,
    answer_pings: bool,
    accept: bool,
    /// Onion request bodies received: `[nonce][rest]`.
    onion: Vec<Vec<u8>>,
    /// Every packet id received from clients, in order.
    received_ids: Vec<u8>,
    /// Pong ids received.
    pongs: Vec<u64>,
    rng: ChaCha8Rng,
}

impl ScriptedRelay {
    fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        ScriptedRelay {
            keys: KeyPair::generate(&mut rng),
            sessions: BTreeMap::new(),
            answer_pings: true,
            accept: true,
            onion: Vec::new(),
            received_ids: Vec::new(),
            pongs: Vec::new(),
            rng,
        }
    }

    fn session_of(&self, pk: &PublicKey) -> Option<u64> {
        self.sessions
            .iter()
            .find(|(_, s)| s.client.as_ref() == Some(pk) && !s.closed)
            .map(|(k, _)| *k)
    }

    fn open(&mut self, key: u64) {
        self.sessions.insert(
            key,
            Session {
                hello: ExactBytes::default(),
                client: None,
                enc: None,
                dec: None,
                routes: BTreeMap::new(),
                out: Vec::new(),
                closed: false,
            },
        );
    }

    /// The client closed its socket: its peers' routes go offline.
    fn close(&mut self, key: u64) {
        let Some(s) = self.sessions.remove(&key) else {
            return;
        };
        let Some(me) = s.client else { return };
        for peer in s.routes.values() {
            if let Some(k) = self.session_of(peer) {
                let other = self.sessions.get_mut(&k).unwrap();
                if let Some(id) = other.id_for(&me) {
                    other.send(&Packet::DisconnectNotification { conn_id: id });
                }
            }
        }
    }

    fn receive(&mut self, key: u64, mut bytes: &[u8]) {
        let s = self.sessions.get_mut(&key).unwrap();
        if s.client.is_none() {
            let Some(hello) = s.hello.fill(&mut bytes).copied() else {
                return;
            };
            let accepted = accept_hello(&self.keys.secret, &hello, &mut self.rng).unwrap();
            s.out.extend_from_slice(&accepted.reply);
            s.client = Some(accepted.client_pk);
            let (enc, dec) = accepted.keys.split();
            s.enc = Some(enc);
            s.dec = Some(dec);
        }
        let mut plains = Vec::new();
        let dec = s.dec.as_mut().unwrap();
        while let Some(p) = dec.decode(&mut bytes).expect("client frames open") {
            plains.push(p.to_vec());
        }
        for p in plains {
            self.handle(key, &p);
        }
    }

    fn handle(&mut self, key: u64, plain: &[u8]) {
        let packet = Packet::parse(plain).expect("client packets parse");
        self.received_ids.push(packet.id());
        let me = self.sessions[&key].client.unwrap();
        match packet {
            Packet::RoutingRequest { pk } => {
                let s = self.sessions.get_mut(&key).unwrap();
                let id = match s.id_for(&pk) {
                    Some(id) => id,
                    None => {
                        let id = (16..=255u8).find(|i| !s.routes.contains_key(i)).unwrap();
                        s.routes.insert(id, pk);
                        id
                    }
                };
                s.send(&Packet::RoutingResponse { conn_id: id, pk });
                if let Some(k) = self.session_of(&pk) {
                    let other = self.sessions.get_mut(&k).unwrap();
                    if let Some(other_id) = other.id_for(&me) {
                        other.send(&Packet::ConnectNotification { conn_id: other_id });
                        let s = self.sessions.get_mut(&key).unwrap();
                        s.send(&Packet::ConnectNotification { conn_id: id });
                    }
                }
            }
            Packet::DisconnectNotification { conn_id } => {
                let s = self.sessions.get_mut(&key).unwrap();
                let Some(peer) = s.routes.remove(&conn_id) else {
                    return;
                };
                if let Some(k) = self.session_of(&peer) {
                    let other = self.sessions.get_mut(&k).unwrap();
                    if let Some(other_id) = other.id_for(&me) {
                        other.send(&Packet::DisconnectNotification { conn_id: other_id });
                    }
                }
            }
            Packet::Ping { ping_id } => {
                if self.answer_pings {
                    let s = self.sessions.get_mut(&key).unwrap();
                    s.send(&Packet::Pong { ping_id });
                }
            }
            Packet::Pong { ping_id } => self.pongs.push(ping_id),
            Packet::OobSend { dest, data } => {
                if let Some(k) = self.session_of(&dest) {
                    let other = self.sessions.get_mut(&k).unwrap();
                    other.send(&Packet::OobRecv { sender: me, data });
                }
            }
            Packet::Data { conn_id, payload } => {
                let peer = self.sessions[&key].routes[&conn_id];
                if let Some(k) = self.session_of(&peer) {
                    let other = self.sessions.get_mut(&k).unwrap();
                    if let Some(other_id) = other.id_for(&me) {
                        other.send(&Packet::Data {
                            conn_id: other_id,
                            payload,
                        });
                    }
                }
            }
            Packet::OnionRequest { nonce, plain } => {
                let mut body = nonce.0.to_vec();
                body.extend_from_slice(plain);
                self.onion.push(body);
            }
            other => panic!("unexpected packet from a client: {other:?}"),
        }
    }

    /// Sends `packet` to the client with key `client`.
    fn send_to(&mut self, client: &PublicKey, packet: &Packet<'_>) {
        let k = self.session_of(client).unwrap();
        self.sessions.get_mut(&k).unwrap().send(packet);
    }

    /// Sends raw bytes to the client with key `client`.
    fn send_raw_to(&mut self, client: &PublicKey, bytes: &[u8]) {
        let k = self.session_of(client).unwrap();
        self.sessions
            .get_mut(&k)
            .unwrap()
            .out
            .extend_from_slice(bytes);
    }
}

/// What the harness needs of a relay: the scripted one above, or the real [`RelayServer`].
trait RelayModel {
    fn make(seed: u64) -> Self;
    fn public_key(&self) -> PublicKey;
    /// A client opens a TCP connection; false if refused.
    fn accept(&mut self, now: Timestamp, key: u64, from: SocketAddr) -> bool;
    fn receive(&mut self, now: Timestamp, key: u64, bytes: &[u8]);
    /// Bytes for the client of connection `key`.
    fn take_output(&mut self, key: u64) -> Vec<u8>;
    fn client_closed(&mut self, key: u64);
    /// A connection the relay closed.
    fn poll_closed(&mut self) -> Option<u64>;
    fn poll_timeout(&self) -> Option<Timestamp>;
    fn handle_timeout(&mut self, now: Timestamp);
}

impl RelayModel for ScriptedRelay {
    fn make(seed: u64) -> Self {
        ScriptedRelay::new(seed)
    }
    fn public_key(&self) -> PublicKey {
        self.keys.public
    }
    fn accept(&mut self, _: Timestamp, key: u64, _: SocketAddr) -> bool {
        if self.accept {
            self.open(key);
        }
        self.accept
    }
    fn receive(&mut self, _: Timestamp, key: u64, bytes: &[u8]) {
        ScriptedRelay::receive(self, key, bytes)
    }
    fn take_output(&mut self, key: u64) -> Vec<u8> {
        self.sessions
            .get_mut(&key)
            .map(|s| std::mem::take(&mut s.out))
            .unwrap_or_default()
    }
    fn client_closed(&mut self, key: u64) {
        self.close(key)
    }
    fn poll_closed(&mut self) -> Option<u64> {
        None
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }
    fn handle_timeout(&mut self, _: Timestamp) {}
}

/// The relay server of `relay::server`, with an RNG.
struct ServerRelay {
    server: RelayServer,
    rng: ChaCha8Rng,
}

impl RelayModel for ServerRelay {
    fn make(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let keys = KeyPair::generate(&mut rng);
        ServerRelay {
            server: RelayServer::new(keys, RelayConfig::default()),
            rng,
        }
    }
    fn public_key(&self) -> PublicKey {
        self.server.public_key()
    }
    fn accept(&mut self, now: Timestamp, key: u64, from: SocketAddr) -> bool {
        self.server.handle_accept(now, ConnId(key), from).is_ok()
    }
    fn receive(&mut self, now: Timestamp, key: u64, bytes: &[u8]) {
        self.server
            .handle_bytes(now, ConnId(key), bytes, &mut self.rng)
    }
    fn take_output(&mut self, key: u64) -> Vec<u8> {
        let out = self.server.poll_transmit(ConnId(key)).to_vec();
        self.server.handle_written(ConnId(key), out.len());
        out
    }
    fn client_closed(&mut self, key: u64) {
        self.server.handle_closed(ConnId(key))
    }
    fn poll_closed(&mut self) -> Option<u64> {
        self.server.poll_close().map(|(c, _)| c.0)
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        self.server.poll_timeout()
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        self.server.handle_timeout(now, &mut self.rng)
    }
}

struct Client {
    relays: RelayClients,
    rng: ChaCha8Rng,
    dht: PublicKey,
    addr: SocketAddr,
    /// Open sockets: relay id → (relay address, relay connection key).
    sockets: BTreeMap<RelayId, (SocketAddr, u64)>,
    events: Vec<(Timestamp, RelayEvent)>,
    /// Bytes the driver may still write (None: no limit), for sockets that stop draining.
    write_budget: Option<usize>,
    connects: Vec<(Timestamp, SocketAddr)>,
}

/// Clients and relays in virtual time.
struct Net<R> {
    now: Timestamp,
    relays: BTreeMap<SocketAddr, R>,
    clients: Vec<Client>,
    next_key: u64,
}

/// The network of the scripted relay.
type World = Net<ScriptedRelay>;

fn addr(n: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, n], 33445))
}

impl<R: RelayModel> Net<R> {
    fn new(relays: u8, clients: u64) -> Self {
        Self::with_config(relays, clients, RelayClientConfig::default())
    }

    fn with_config(relays: u8, clients: u64, config: RelayClientConfig) -> Self {
        let relays = (1..=relays)
            .map(|n| (addr(n), R::make(u64::from(n) * 1000)))
            .collect();
        let clients = (0..clients)
            .map(|c| {
                let mut rng = ChaCha8Rng::seed_from_u64(c + 1);
                let dht = KeyPair::generate(&mut rng);
                Client {
                    dht: dht.public,
                    addr: SocketAddr::from(([192, 168, 0, c as u8 + 1], 40000)),
                    relays: RelayClients::new(dht, config),
                    rng,
                    sockets: BTreeMap::new(),
                    events: Vec::new(),
                    write_budget: None,
                    connects: Vec::new(),
                }
            })
            .collect();
        Net {
            now: START,
            relays,
            clients,
            next_key: 0,
        }
    }

    fn relay_pk(&self, n: u8) -> PublicKey {
        self.relays[&addr(n)].public_key()
    }

    fn dht(&self, c: usize) -> PublicKey {
        self.clients[c].dht
    }

    fn add_relay(&mut self, c: usize, n: u8) {
        let pk = self.relay_pk(n);
        self.clients[c]
            .relays
            .add_relay(self.now, addr(n), pk)
            .unwrap();
        self.pump();
    }

    fn add_peer_relay(&mut self, c: usize, peer: usize, n: u8) {
        let (pk, peer) = (self.relay_pk(n), self.dht(peer));
        self.clients[c]
            .relays
            .add_peer_relay(self.now, peer, addr(n), pk)
            .unwrap();
        self.pump();
    }

    /// What a driver does after every input, until nothing moves.
    fn pump(&mut self) {
        for _ in 0..1000 {
            let mut moved = false;
            for c in 0..self.clients.len() {
                moved |= self.pump_client(c);
            }
            // Connections the relays closed.
            for (a, relay) in self.relays.iter_mut() {
                while let Some(key) = relay.poll_closed() {
                    for client in &mut self.clients {
                        let id = client
                            .sockets
                            .iter()
                            .find(|(_, s)| **s == (*a, key))
                            .map(|(id, _)| *id);
                        if let Some(id) = id {
                            client.sockets.remove(&id);
                            client.relays.handle_closed(self.now, id);
                            moved = true;
                        }
                    }
                }
            }
            // Relay → client bytes.
            for client in &mut self.clients {
                for (id, (a, key)) in client.sockets.clone() {
                    let bytes = self.relays.get_mut(&a).unwrap().take_output(key);
                    if !bytes.is_empty() {
                        client.relays.handle_bytes(self.now, id, &bytes);
                        moved = true;
                    }
                }
            }
            if !moved {
                return;
            }
        }
        panic!("driver loop does not settle");
    }

    fn pump_client(&mut self, c: usize) -> bool {
        let now = self.now;
        let mut moved = false;
        let client = &mut self.clients[c];
        while let Some(id) = client.relays.poll_close() {
            if let Some((a, key)) = client.sockets.remove(&id) {
                self.relays.get_mut(&a).unwrap().client_closed(key);
            }
            moved = true;
        }
        while let Some((id, a)) = client.relays.poll_connect(now) {
            client.connects.push((now, a));
            moved = true;
            let key = self.next_key;
            self.next_key += 1;
            if self
                .relays
                .get_mut(&a)
                .unwrap()
                .accept(now, key, client.addr)
            {
                client.sockets.insert(id, (a, key));
                client.relays.handle_connected(now, id, &mut client.rng);
            } else {
                client.relays.handle_closed(now, id);
            }
        }
        let ids: Vec<RelayId> = client.sockets.keys().copied().collect();
        for id in ids {
            let Some(bytes) = client.relays.poll_write(id) else {
                continue;
            };
            let n = client
                .write_budget
                .map_or(bytes.len(), |b| b.min(bytes.len()));
            if n == 0 {
                continue;
            }
            let bytes = bytes[..n].to_vec();
            if let Some(b) = client.write_budget.as_mut() {
                *b -= n;
            }
            client.relays.consume(id, n);
            let (a, key) = client.sockets[&id];
            self.relays.get_mut(&a).unwrap().receive(now, key, &bytes);
            moved = true;
        }
        while let Some(e) = client.relays.poll_event() {
            client.events.push((now, e));
            moved = true;
        }
        moved
    }

    /// Runs every timer until `until`, jumping from deadline to deadline.
    fn run_until(&mut self, until: Timestamp) {
        self.pump();
        loop {
            let next = self
                .clients
                .iter()
                .filter_map(|c| c.relays.poll_timeout())
                .chain(self.relays.values().filter_map(|r| r.poll_timeout()))
                .min()
                .map_or(until, |t| t.max(self.now));
            if next > until {
                self.now = until;
                self.pump();
                return;
            }
            self.now = next;
            for c in &mut self.clients {
                c.relays.handle_timeout(self.now, &mut c.rng);
            }
            for r in self.relays.values_mut() {
                r.handle_timeout(self.now);
            }
            self.pump();
            if next == until {
                return;
            }
        }
    }

    fn run_for(&mut self, d: Duration) {
        self.run_until(self.now + d);
    }

    fn events(&self, c: usize) -> Vec<RelayEvent> {
        self.clients[c]
            .events
            .iter()
            .map(|(_, e)| e.clone())
            .collect()
    }

    fn take_events(&mut self, c: usize) -> Vec<RelayEvent> {
        std::mem::take(&mut self.clients[c].events)
            .into_iter()
            .map(|(_, e)| e)
            .collect()
    }

    fn data_from(&mut self, c: usize, from: usize) -> Vec<Vec<u8>> {
        let from = self.dht(from);
        self.take_events(c)
            .into_iter()
            .filter_map(|e| match e {
                RelayEvent::Data { from: f, data } if f == from => Some(data),
                _ => None,
            })
            .collect()
    }

    fn send(&mut self, c: usize, to: usize, data: &[u8]) -> Result<(), RelaySendError> {
        let to = self.dht(to);
        let r = self.clients[c].relays.send_to_peer(self.now, &to, data);
        self.pump();
        r
    }

    fn online(&self, c: usize, peer: usize) -> bool {
        self.clients[c].relays.is_peer_online(&self.dht(peer))
    }

    fn connected(&self, c: usize) -> Vec<SocketAddr> {
        let mut v: Vec<_> = self.clients[c]
            .relays
            .connected_relays()
            .map(|(a, _)| a)
            .collect();
        v.sort();
        v
    }
}
