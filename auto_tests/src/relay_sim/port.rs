//! A simulated host's TCP port: its address, the node's relay connections
//! ([`RelaySockets`]) and, on a relay host, the relay server ([`SimRelayServer`]). The host
//! sends segments from this address and UDP from its first, so the simulator routes both
//! over the same links (one access link per host pair) and the host tells them apart by the
//! address they arrive on.

use std::net::SocketAddr;

use rustox_core::node::Node;
use rustox_net_crypto::Timestamp;

use super::client::RelaySockets;
use super::control::{Arrival, Control};
use super::server::SimRelayServer;
use crate::tcp::StreamOptions;

/// One host's TCP side.
#[derive(Debug)]
pub struct TcpPort {
    addr: SocketAddr,
    clients: RelaySockets,
    server: Option<SimRelayServer>,
}

impl TcpPort {
    /// A port at `addr` whose client sockets are set with `options`.
    pub fn new(addr: SocketAddr, options: StreamOptions) -> Self {
        TcpPort {
            addr,
            clients: RelaySockets::new(options),
            server: None,
        }
    }

    /// The port's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve as a TCP relay on this port.
    pub fn serve(&mut self, server: SimRelayServer) {
        self.server = Some(server);
    }

    /// The node's relay connections.
    pub fn clients(&self) -> &RelaySockets {
        &self.clients
    }

    /// The node's relay connections, to inject faults.
    pub fn clients_mut(&mut self) -> &mut RelaySockets {
        &mut self.clients
    }

    /// The relay server, on a relay host.
    pub fn server(&self) -> Option<&SimRelayServer> {
        self.server.as_ref()
    }

    /// A segment arrived on the port: a connection of the node's, or one to the relay.
    pub fn handle_segment(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        node: &mut Node,
    ) {
        let syn = matches!(Control::parse(bytes), Some(Control::Syn(_)));
        let segment = Arrival {
            from,
            to: self.addr,
            bytes,
        };
        if !syn && self.clients.owns(from, bytes) {
            self.clients.handle_segment(now, segment, node);
        } else if let Some(server) = self.server.as_mut() {
            server.handle_segment(now, segment);
        }
    }

    /// Timers due on the port.
    pub fn handle_timeout(&mut self, now: Timestamp, node: &mut Node) {
        self.clients.handle_timeout(now, node);
        if let Some(server) = self.server.as_mut() {
            server.handle_timeout(now);
        }
    }

    /// Moves bytes between the sockets and what sits above them; true if it called into
    /// the node.
    pub fn pump(&mut self, now: Timestamp, node: &mut Node) -> bool {
        if let Some(server) = self.server.as_mut() {
            server.pump(now);
        }
        self.clients.pump(now, node)
    }

    /// The next segment to send, with its destination.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.server
            .as_mut()
            .and_then(SimRelayServer::poll_transmit)
            .or_else(|| self.clients.poll_transmit())
    }

    /// When [`Self::handle_timeout`] should next run.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        [
            self.clients.poll_timeout(),
            self.server.as_ref().and_then(SimRelayServer::poll_timeout),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The sockets' TCP invariants.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.clients.check_invariants()?;
        self.server
            .as_ref()
            .map_or(Ok(()), SimRelayServer::check_invariants)
    }
}
