//! The node's TCP relay connections on non-blocking std sockets, for the step driver
//! (`tox_iterate`: no runtime, no thread). Each step connects what the node asks for,
//! reads what the sockets hold and writes what the node has queued, never blocking.
//!
//! A step reads at most [`MAX_READS_PER_STEP`] chunks per connection so one busy relay
//! cannot hold the caller; bytes the socket will not take stay in the node's bounded output
//! buffer (the relay client's backpressure).

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};

use rustox_net_crypto::Timestamp;
use socket2::{Domain, Protocol, Socket, Type};

use crate::node::Node;
use crate::relay::client::RelayId;

/// Bytes one read takes.
pub const READ_CHUNK: usize = 64 * 1024;
/// Reads per connection and step at most.
pub const MAX_READS_PER_STEP: usize = 16;

enum Stream {
    /// `connect` returned EINPROGRESS; done once the socket has a peer address.
    Connecting(Socket),
    Open(TcpStream),
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
    /// completed, reads and writes.
    pub fn step(&mut self, node: &mut Node, now: Timestamp) {
        while let Some(id) = node.poll_relay_close() {
            self.streams.remove(&id);
        }
        while let Some((id, addr)) = node.poll_relay_connect(now) {
            match connect(addr) {
                Ok(stream) => {
                    // Loopback may connect at once; step_one reports it either way.
                    self.streams.insert(id, stream);
                }
                Err(_) => node.handle_relay_closed(now, id),
            }
        }
        if self.buf.len() < READ_CHUNK {
            self.buf.resize(READ_CHUNK, 0);
        }
        let ids: Vec<RelayId> = self.streams.keys().copied().collect();
        for id in ids {
            if !self.step_one(node, now, id) {
                self.streams.remove(&id);
                node.handle_relay_closed(now, id);
            }
        }
    }

    /// False when the connection failed or ended.
    fn step_one(&mut self, node: &mut Node, now: Timestamp, id: RelayId) -> bool {
        let Some(stream) = self.streams.get_mut(&id) else {
            return true;
        };
        if let Stream::Connecting(socket) = stream {
            match socket.take_error() {
                Ok(None) => {}
                _ => return false,
            }
            if socket.peer_addr().is_err() {
                return true; // still connecting
            }
            let Ok(s) = socket.try_clone() else {
                return false;
            };
            // The clone shares the connection; the original is replaced (and closed) below.
            let tcp: TcpStream = s.into();
            let _ = tcp.set_nodelay(true);
            *stream = Stream::Open(tcp);
            node.handle_relay_connected(now, id);
        }
        let Some(Stream::Open(tcp)) = self.streams.get_mut(&id) else {
            return true;
        };
        for _ in 0..MAX_READS_PER_STEP {
            match tcp.read(&mut self.buf) {
                Ok(0) => return false,
                Ok(n) => {
                    if let Some(bytes) = self.buf.get(..n) {
                        node.handle_relay_bytes(now, id, bytes);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        loop {
            let Some(bytes) = node.relay_write(id) else {
                return true;
            };
            if bytes.is_empty() {
                return true;
            }
            // In records (relay_socket.rs): c-toxcore relays read whole frames only.
            match super::relay_socket::send_record(tcp, bytes) {
                Ok(0) => return false,
                Ok(n) => node.relay_consume(id, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
}

/// Starts a non-blocking connect.
fn connect(addr: SocketAddr) -> io::Result<Stream> {
    let socket = new_socket(addr)?;
    match socket.connect(&addr.into()) {
        Ok(()) => Ok(Stream::Connecting(socket)),
        Err(e) if in_progress(&e) => Ok(Stream::Connecting(socket)),
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
