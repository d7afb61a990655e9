//! The node's TCP relay connections on non-blocking std sockets, for the step driver
//! (`tox_iterate`: no runtime, no thread). Each step connects what the node asks for,
//! reads what the sockets hold and writes what the node has queued, never blocking.
//!
//! A step reads at most [`MAX_READS_PER_STEP`] chunks per connection so one busy relay
//! cannot hold the caller; bytes the socket will not take stay in the node's bounded output
//! buffer (the relay client's backpressure).
//!
//! With a proxy ([`Node::relay_proxy`]) the socket connects to the proxy, and the node hears
//! of the connection only once the proxy opened the tunnel (`proxy_stream.rs`); a proxy that
//! fails is reported with its reason ([`Node::handle_relay_proxy_failed`]).

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};

use rustox_net_crypto::Timestamp;
use socket2::{Domain, Protocol, Socket, Type};

use super::proxy_stream::step_handshake;
use crate::node::Node;
use crate::proxy::{ProxyError, ProxyHandshake};
use crate::relay::client::RelayId;

/// Bytes one read takes.
pub const READ_CHUNK: usize = 64 * 1024;
/// Reads per connection and step at most.
pub const MAX_READS_PER_STEP: usize = 16;

enum Stream {
    /// `connect` returned EINPROGRESS; done once the socket has a peer address. The relay's
    /// address (the socket's peer is the proxy when there is one).
    Connecting(Socket, SocketAddr),
    /// Connected to the proxy, asking it for a tunnel to the relay.
    Proxying(TcpStream, Box<ProxyHandshake>),
    Open(TcpStream),
}

/// How a connection's step ended.
enum Outcome {
    Alive,
    Closed,
    ProxyFailed(ProxyError),
}

/// The relay connections of one node.
#[derive(Default)]
pub struct RelayStreams {
    streams: HashMap<RelayId, Stream>,
    buf: Vec<u8>,
}

impl RelayStreams {
    /// True while some connection exists (the caller keeps its step interval short while a
    /// relay may deliver bytes).
    pub fn is_active(&self) -> bool {
        !self.streams.is_empty()
    }

    /// One pass over the relay connections: closes, new connections, connects that
    /// completed, proxy handshakes, reads and writes.
    pub fn step(&mut self, node: &mut Node, now: Timestamp) {
        while let Some(id) = node.poll_relay_close() {
            // The node gave up on it; still at the proxy, that is the proxy's doing.
            if let Some(Stream::Proxying(..)) = self.streams.remove(&id) {
                node.handle_relay_proxy_failed(now, id, ProxyError::Timeout);
            }
        }
        let proxy = node.relay_proxy();
        while let Some((id, addr)) = node.poll_relay_connect(now) {
            match connect(proxy.map_or(addr, |p| p.addr)) {
                Ok(socket) => {
                    // Loopback may connect at once; step_one reports it either way.
                    self.streams.insert(id, Stream::Connecting(socket, addr));
                }
                Err(e) if proxy.is_some() => {
                    node.handle_relay_proxy_failed(now, id, ProxyError::Connect(e.kind()))
                }
                Err(_) => node.handle_relay_closed(now, id),
            }
        }
        if self.buf.len() < READ_CHUNK {
            self.buf.resize(READ_CHUNK, 0);
        }
        let ids: Vec<RelayId> = self.streams.keys().copied().collect();
        for id in ids {
            match self.step_one(node, now, id) {
                Outcome::Alive => {}
                Outcome::Closed => {
                    self.streams.remove(&id);
                    node.handle_relay_closed(now, id);
                }
                Outcome::ProxyFailed(e) => {
                    self.streams.remove(&id);
                    node.handle_relay_proxy_failed(now, id, e);
                }
            }
        }
    }

    fn step_one(&mut self, node: &mut Node, now: Timestamp, id: RelayId) -> Outcome {
        let Some(stream) = self.streams.get_mut(&id) else {
            return Outcome::Alive;
        };
        let proxy = node.relay_proxy();
        if let Stream::Connecting(socket, target) = stream {
            let failed = |e: io::Error| match proxy {
                Some(_) => Outcome::ProxyFailed(ProxyError::Connect(e.kind())),
                None => Outcome::Closed,
            };
            match socket.take_error() {
                Ok(None) => {}
                Ok(Some(e)) | Err(e) => return failed(e),
            }
            if socket.peer_addr().is_err() {
                return Outcome::Alive; // still connecting
            }
            let s = match socket.try_clone() {
                Ok(s) => s,
                Err(e) => return failed(e),
            };
            // The clone shares the connection; the original is replaced (and closed) below.
            let tcp: TcpStream = s.into();
            let _ = tcp.set_nodelay(true);
            match proxy {
                Some(p) => {
                    let handshake = ProxyHandshake::new(p.kind, *target);
                    *stream = Stream::Proxying(tcp, Box::new(handshake));
                }
                None => {
                    *stream = Stream::Open(tcp);
                    node.handle_relay_connected(now, id);
                }
            }
        }
        if let Some(Stream::Proxying(tcp, handshake)) = self.streams.get_mut(&id) {
            match step_handshake(tcp, handshake, &mut self.buf) {
                Ok(None) => return Outcome::Alive,
                Err(e) => return Outcome::ProxyFailed(e),
                Ok(Some(relay_bytes)) => {
                    let Some(Stream::Proxying(tcp, _)) = self.streams.remove(&id) else {
                        return Outcome::Closed;
                    };
                    self.streams.insert(id, Stream::Open(tcp));
                    node.handle_relay_connected(now, id);
                    if !relay_bytes.is_empty() {
                        node.handle_relay_bytes(now, id, &relay_bytes);
                    }
                }
            }
        }
        let Some(Stream::Open(tcp)) = self.streams.get_mut(&id) else {
            return Outcome::Alive;
        };
        for _ in 0..MAX_READS_PER_STEP {
            match tcp.read(&mut self.buf) {
                Ok(0) => return Outcome::Closed,
                Ok(n) => {
                    if let Some(bytes) = self.buf.get(..n) {
                        node.handle_relay_bytes(now, id, bytes);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Outcome::Closed,
            }
        }
        loop {
            let Some(bytes) = node.relay_write(id) else {
                return Outcome::Alive;
            };
            if bytes.is_empty() {
                return Outcome::Alive;
            }
            // In records (relay_socket.rs): c-toxcore relays read whole frames only.
            match super::relay_socket::send_record(tcp, bytes) {
                Ok(0) => return Outcome::Closed,
                Ok(n) => node.relay_consume(id, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Outcome::Alive,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Outcome::Closed,
            }
        }
    }
}

/// Starts a non-blocking connect.
fn connect(addr: SocketAddr) -> io::Result<Socket> {
    let socket = new_socket(addr)?;
    match socket.connect(&addr.into()) {
        Ok(()) => Ok(socket),
        Err(e) if in_progress(&e) => Ok(socket),
        Err(e) => Err(e),
    }
}

fn new_socket(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

fn in_progress(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(nix::libc::EINPROGRESS)
}
