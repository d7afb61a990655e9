//! A simulated host running one `rustox_net_crypto::Endpoint` and the bulk application.
//!
//! The node is the "driver" of docs/design.md principle 1 in miniature: every input goes to the
//! endpoint with `now`, then the node drains events (handing lossless payloads to the bulk
//! receivers) and tops up each outgoing transfer to the session's `send_budget` — pulling
//! from the session instead of pushing into a deep queue (docs/transport.md §3.9).

use std::net::SocketAddr;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::{
    ConnectionEvent, ConnectionId, ConnectionStatus, ControllerKind, Endpoint, EndpointConfig,
    EndpointEvent, SendError, Timestamp, TransportConfig, TransportStats,
};

use super::bulk::{BulkReceiver, BulkSender};
use crate::node::SimNode;

/// Re-read each connection's memory use every this many pumps (it may walk the arrays).
const MEMORY_SAMPLE_EVERY: u64 = 64;

/// An outgoing bulk transfer.
#[derive(Debug)]
pub struct OutgoingTransfer {
    /// The session carrying it.
    pub id: ConnectionId,
    /// The application state.
    pub sender: BulkSender,
    /// When the session came up.
    pub established_at: Option<Timestamp>,
}

/// An incoming bulk transfer.
#[derive(Debug)]
pub struct IncomingTransfer {
    /// The session carrying it.
    pub id: ConnectionId,
    /// The verifying receiver.
    pub receiver: BulkReceiver,
}

/// One host: an endpoint plus its transfers.
pub struct NetCryptoNode {
    endpoint: Endpoint,
    real_pk: PublicKey,
    dht_pk: PublicKey,
    outgoing: Vec<OutgoingTransfer>,
    incoming: Vec<IncomingTransfer>,
    /// Key and size every incoming transfer is expected to carry.
    expect: Option<(u64, u64)>,
    error: Option<String>,
    pumps: u64,
    peak_memory: usize,
}

impl std::fmt::Debug for NetCryptoNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetCryptoNode")
            .field("outgoing", &self.outgoing)
            .field("incoming", &self.incoming)
            .finish()
    }
}

impl NetCryptoNode {
    /// A host whose keys and endpoint randomness come from `rng` (the node's seeded stream).
    pub fn new(
        now: Timestamp,
        mut rng: ChaCha8Rng,
        controller: ControllerKind,
        accept_all: bool,
    ) -> Self {
        let real = KeyPair::generate(&mut rng);
        let dht = KeyPair::generate(&mut rng);
        let (real_pk, dht_pk) = (real.public, dht.public);
        let mut endpoint_seed = [0u8; 32];
        rng.fill_bytes(&mut endpoint_seed);
        let endpoint_rng = ChaCha8Rng::from_seed(endpoint_seed);
        let config = EndpointConfig {
            transport: TransportConfig {
                controller,
                ..Default::default()
            },
            accept_all,
        };
        let endpoint = Endpoint::new(now, real, dht, config, Box::new(endpoint_rng));
        NetCryptoNode {
            endpoint,
            real_pk,
            dht_pk,
            outgoing: Vec::new(),
            incoming: Vec::new(),
            expect: None,
            error: None,
            pumps: 0,
            peak_memory: 0,
        }
    }

    /// Long-term public key.
    pub fn real_pk(&self) -> PublicKey {
        self.real_pk
    }

    /// DHT public key.
    pub fn dht_pk(&self) -> PublicKey {
        self.dht_pk
    }

    /// The endpoint, for inspection.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Accept a session from `peer` and expect it to deliver `total` bytes keyed `key`.
    pub fn expect_transfer(&mut self, peer: PublicKey, key: u64, total: u64) {
        self.endpoint.allow_peer(peer);
        self.expect = Some((key, total));
    }

    /// Open a session to the peer and send it `total` bytes keyed `key` once it is up.
    pub fn start_transfer(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        peer_real: PublicKey,
        peer_dht: PublicKey,
        key: u64,
        total: u64,
    ) -> Result<ConnectionId, String> {
        let id = self
            .endpoint
            .connect(now, addr, peer_real, peer_dht)
            .map_err(|e| e.to_string())?;
        self.outgoing.push(OutgoingTransfer {
            id,
            sender: BulkSender::new(key, total),
            established_at: None,
        });
        Ok(id)
    }

    /// Outgoing transfers.
    pub fn outgoing(&self) -> &[OutgoingTransfer] {
        &self.outgoing
    }

    /// Incoming transfers.
    pub fn incoming(&self) -> &[IncomingTransfer] {
        &self.incoming
    }

    /// Transport statistics of a session.
    pub fn stats(&self, id: ConnectionId) -> Option<TransportStats> {
        self.endpoint.connection(id).map(|c| c.transport().stats())
    }

    /// Largest memory use of any one session seen so far (sampled).
    pub fn peak_session_memory(&self) -> usize {
        self.peak_memory
    }

    /// An application-level failure (data not verifying, session closing mid-transfer).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn fail(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    /// Drain events, feed receivers, top up senders.
    /// The sessions of every transfer, outgoing then incoming.
    fn transfer_ids(&self) -> impl Iterator<Item = ConnectionId> + '_ {
        self.outgoing
            .iter()
            .map(|t| t.id)
            .chain(self.incoming.iter().map(|t| t.id))
    }

    fn pump(&mut self, now: Timestamp) {
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                EndpointEvent::Incoming { id, .. } => match self.expect {
                    Some((key, total)) => self.incoming.push(IncomingTransfer {
                        id,
                        receiver: BulkReceiver::new(key, total),
                    }),
                    None => self.fail(format!("unexpected incoming session {id:?}")),
                },
                EndpointEvent::Connection { id, event } => self.on_connection_event(now, id, event),
            }
        }
        for i in 0..self.outgoing.len() {
            self.fill(now, i);
        }
        self.pumps += 1;
        if self.pumps % MEMORY_SAMPLE_EVERY == 0 {
            let peak = self
                .transfer_ids()
                .filter_map(|id| self.endpoint.connection(id))
                .map(|c| c.memory_usage())
                .max();
            self.peak_memory = self.peak_memory.max(peak.unwrap_or(0));
        }
    }

    fn on_connection_event(&mut self, now: Timestamp, id: ConnectionId, event: ConnectionEvent) {
        match event {
            ConnectionEvent::Established => {
                if let Some(t) = self.outgoing.iter_mut().find(|t| t.id == id) {
                    t.established_at.get_or_insert(now);
                }
            }
            ConnectionEvent::Lossless(payload) => {
                match self.incoming.iter_mut().find(|t| t.id == id) {
                    Some(t) => {
                        if let Err(e) = t.receiver.on_payload(now, &payload) {
                            let msg = format!("session {id:?}: {e}");
                            self.fail(msg);
                        }
                    }
                    None => self.fail(format!(
                        "lossless payload on session {id:?} that carries no incoming transfer"
                    )),
                }
            }
            ConnectionEvent::Lossy(_) => {}
            ConnectionEvent::Closed(reason) => {
                let unfinished = self
                    .incoming
                    .iter()
                    .any(|t| t.id == id && !t.receiver.is_complete())
                    || self
                        .outgoing
                        .iter()
                        .any(|t| t.id == id && !t.sender.is_done());
                if unfinished {
                    self.fail(format!("session {id:?} closed mid-transfer: {reason:?}"));
                }
            }
        }
    }

    fn fill(&mut self, now: Timestamp, index: usize) {
        let transfer = &mut self.outgoing[index];
        let Some(conn) = self.endpoint.connection_mut(transfer.id) else {
            return;
        };
        if conn.status() != ConnectionStatus::Established {
            return;
        }
        let mut budget = conn.send_budget(now);
        while budget > 0 {
            let Some(payload) = transfer.sender.peek_payload() else {
                return;
            };
            match conn.send_bulk(now, &payload) {
                Ok(_) => transfer.sender.advance(now),
                Err(SendError::NoBudget | SendError::QueueFull) => return,
                Err(e) => {
                    let msg = format!("send_bulk on {:?} failed: {e}", transfer.id);
                    self.fail(msg);
                    return;
                }
            }
            budget -= 1;
        }
    }
}

impl SimNode for NetCryptoNode {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, _to: SocketAddr, bytes: &[u8]) {
        // Drops (bad MAC after corruption, unknown sessions) are the endpoint's to count.
        let _ = self.endpoint.handle_datagram(now, from, bytes);
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        self.endpoint.handle_timeout(now);
        self.pump(now);
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        poll_udp_transmit(self, now, |n| &mut n.endpoint, Self::pump)
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.endpoint.poll_timeout()
    }

    fn check_invariants(&self) -> Result<(), String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        for id in self.transfer_ids() {
            if let Some(c) = self.endpoint.connection(id) {
                c.transport()
                    .check_invariants()
                    .map_err(|e| format!("session {id:?}: {e}"))?;
            }
        }
        Ok(())
    }
}

/// The next datagram of a host's endpoint. These hosts have no relays: every session
/// datagram goes over UDP. When the endpoint has nothing, sending may have opened budget
/// (packets left the queue): `top_up` feeds it once and the endpoint is asked again.
pub(crate) fn poll_udp_transmit<H>(
    host: &mut H,
    now: Timestamp,
    endpoint: fn(&mut H) -> &mut Endpoint,
    top_up: fn(&mut H, Timestamp),
) -> Option<(SocketAddr, Vec<u8>)> {
    let udp = |t: rustox_net_crypto::Transmit| t.destination.udp().map(|a| (a, t.payload));
    if let Some(t) = endpoint(host).poll_transmit(now) {
        return udp(t);
    }
    top_up(host, now);
    endpoint(host).poll_transmit(now).and_then(udp)
}
