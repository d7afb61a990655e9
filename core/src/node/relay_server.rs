//! The node's side of a TCP relay server run by the same instance (`Tox_Options.tcp_port`,
//! c-toxcore 0.2.18 `new_messenger`: `new_TCP_server` with the DHT keys and the instance's
//! onion). The server itself runs in the driver (`driver::instance_relay`); what it shares
//! with the node is the onion server and forwarding, as at a bootstrap node:
//!
//! * its clients' onion requests (TCP packet 8) enter the node's onion server as hop A
//!   ([`Node::handle_relay_onion_request`]) and leave as UDP datagrams like any other;
//! * a response that comes back to hop A for one of those clients is queued for the server
//!   ([`Node::poll_relay_onion_response`]) instead of being dropped;
//! * its clients' forward requests (TCP packet 10) leave through the node's forwarding as
//!   0x91 ([`Node::handle_relay_forward_request`]), and a forward reply (0x92) whose
//!   sendback names one of them is queued for the server as TCP packet 11
//!   ([`Node::poll_relay_forward_reply`]).
//!
//! Without a relay server ([`Node::serve_relay_onion`] never called) responses and replies
//! for TCP clients are dropped, so nothing a stranger sends can fill the queues.

use std::collections::VecDeque;

use rustox_net_crypto::Timestamp;

use super::Node;
use crate::onion::server::OnionOutput;
use crate::onion::wire::ip_port::IpPort;
use crate::relay::server::{ForwardRequest, OnionRequest};

/// Responses held for the relay server between two driver passes; more are dropped (the
/// client's onion layer retries). At most one arrives per datagram read, and the driver
/// drains the queue after every read batch: the bound only matters when it does not.
pub const MAX_RELAY_ONION_RESPONSES: usize = 1024;

/// The responses and forward replies waiting for the relay server, and what was dropped.
#[derive(Debug, Default)]
pub(super) struct RelayOnion {
    responses: VecDeque<(IpPort, Vec<u8>)>,
    /// Forward replies: the connection's index, its serial, the reply; bounded by
    /// [`MAX_RELAY_ONION_RESPONSES`] as the responses are.
    forward_replies: VecDeque<(u32, u64, Vec<u8>)>,
    /// Responses dropped because the queue was full.
    pub(super) dropped: u64,
}

impl Node {
    /// Makes the node's onion server the onion relay of a TCP relay server the driver runs
    /// under the node's DHT key: responses for its clients are kept for
    /// [`Node::poll_relay_onion_response`].
    pub fn serve_relay_onion(&mut self) {
        if self.relay_onion.is_none() {
            self.relay_onion = Some(RelayOnion::default());
        }
    }

    /// True when a relay server of this instance shares the onion server.
    pub fn serves_relay_onion(&self) -> bool {
        self.relay_onion.is_some()
    }

    /// An onion request from a client of the instance's relay server: the node's onion
    /// server sends it on as hop A (dropped, and counted there, when it is malformed or the
    /// client's address is over its rate).
    pub fn handle_relay_onion_request(&mut self, now: Timestamp, request: &OnionRequest) {
        if let Ok(t) = self.onion_server.handle_tcp_request(
            now,
            request.client,
            &request.source,
            &request.nonce,
            &request.plain,
            self.rng.as_mut(),
        ) {
            self.onion_out.push_back(t);
        }
    }

    /// The next onion response for a client of the relay server: the sendback address that
    /// names its connection, and the response (TCP packet 9).
    pub fn poll_relay_onion_response(&mut self) -> Option<(IpPort, Vec<u8>)> {
        self.relay_onion.as_mut()?.responses.pop_front()
    }

    /// A forward request from a client of the instance's relay server: the node's
    /// forwarding sends it on as a 0x91 (dropped, and counted there, when it is too long or
    /// the client's address is over its rate).
    pub fn handle_relay_forward_request(&mut self, now: Timestamp, request: &ForwardRequest) {
        if let Ok(t) = self.announce_server.handle_tcp_forward(
            now,
            request.client,
            request.con,
            request.serial,
            request.dest,
            &request.data,
        ) {
            self.onion_out.push_back(t);
        }
    }

    /// The next forward reply for a client of the relay server: the connection's index,
    /// its serial and the reply (TCP packet 11).
    pub fn poll_relay_forward_reply(&mut self) -> Option<(u32, u64, Vec<u8>)> {
        self.relay_onion.as_mut()?.forward_replies.pop_front()
    }

    /// A forward reply for a client of the relay server, kept for the driver; dropped
    /// without a relay server or when the queue is full.
    pub(super) fn queue_relay_forward_reply(&mut self, con: u32, id: u64, data: Vec<u8>) {
        let Some(r) = self.relay_onion.as_mut() else {
            return;
        };
        if r.forward_replies.len() >= MAX_RELAY_ONION_RESPONSES {
            r.dropped += 1;
        } else {
            r.forward_replies.push_back((con, id, data));
        }
    }

    /// Onion responses and forward replies for relay clients dropped because the driver
    /// did not take them.
    pub fn relay_onion_dropped(&self) -> u64 {
        self.relay_onion.as_ref().map_or(0, |r| r.dropped)
    }

    /// An onion-server datagram when a relay server shares the onion server.
    pub(super) fn onion_datagram_with_relay(
        &mut self,
        now: Timestamp,
        from: std::net::SocketAddr,
        datagram: &[u8],
    ) {
        let out = self.onion_server.handle_datagram_with_tcp(
            now,
            from,
            datagram,
            &self.dht,
            self.rng.as_mut(),
        );
        match out {
            Ok(OnionOutput::Udp(t)) => self.onion_out.push_back(t),
            Ok(OnionOutput::TcpClient { dest, response }) => {
                let Some(r) = self.relay_onion.as_mut() else {
                    return;
                };
                if r.responses.len() >= MAX_RELAY_ONION_RESPONSES {
                    r.dropped += 1;
                } else {
                    r.responses.push_back((dest, response));
                }
            }
            // Counted by reason inside the server.
            Err(_) => {}
        }
    }
}
