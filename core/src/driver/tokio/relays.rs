//! The node's TCP relay connections under tokio (docs/protocol.md §7): one task per
//! connection owns its socket; the session loop hands it bytes to write and gets back what
//! it read, so the node stays single-threaded and sans-IO.
//!
//! Backpressure both ways: a task writes one chunk at a time and holds at most
//! [`WRITE_QUEUE`] chunks; while they wait, the loop leaves the rest in the node's output
//! buffer, which refuses data beyond its bound (the relay client's `Full`, which the
//! transport sees as a full path). A task sends what it reads through a channel of
//! [`READ_QUEUE`] chunks and stops reading while the loop has not taken them, so a fast
//! relay cannot make us buffer without bound.
//!
//! With a proxy ([`Node::relay_proxy`]) a task connects to the proxy and runs its handshake
//! (`proxy.rs`) before it reports the connection up; a proxy that fails is reported with its
//! reason ([`Node::handle_relay_proxy_failed`]).

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ::tokio::io::{AsyncReadExt, Interest};
use ::tokio::net::tcp::OwnedWriteHalf;
use ::tokio::net::{TcpSocket, TcpStream};
use ::tokio::sync::mpsc;
use rustox_net_crypto::Timestamp;

use super::proxy::run_handshake;
use crate::driver::relay_socket::send_record;
use crate::node::Node;
use crate::proxy::{ProxyConfig, ProxyError, ProxyHandshake};
use crate::relay::client::RelayId;

/// Chunks waiting for one connection's task to write.
pub const WRITE_QUEUE: usize = 16;
/// Chunks read by all tasks and not yet handed to the node.
pub const READ_QUEUE: usize = 64;
/// Bytes one read takes from a socket at most.
pub const READ_CHUNK: usize = 64 * 1024;
/// How long a TCP connect (and a proxy's handshake) may take; the relay client gives up on
/// its own after its handshake timeout (10 s), this only frees the task.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a connection's task reports.
#[derive(Debug)]
pub enum RelayIo {
    /// The TCP connection is up.
    Connected,
    /// Bytes read.
    Bytes(Vec<u8>),
    /// The task wrote everything it was given: the loop may hand it more.
    Writable,
    /// The connection failed or ended.
    Closed,
    /// The proxy did not open a tunnel to the relay; the connection is gone.
    ProxyFailed(ProxyError),
}

/// The loop's side of the relay connections.
pub struct RelaySockets {
    from_tasks: mpsc::Receiver<(RelayId, RelayIo)>,
    to_loop: mpsc::Sender<(RelayId, RelayIo)>,
    writers: HashMap<RelayId, mpsc::Sender<Vec<u8>>>,
}

impl Default for RelaySockets {
    fn default() -> Self {
        let (to_loop, from_tasks) = mpsc::channel(READ_QUEUE);
        RelaySockets {
            from_tasks,
            to_loop,
            writers: HashMap::new(),
        }
    }
}

impl RelaySockets {
    /// Opens the connections the node asks for, closes those it gives up, and moves the
    /// bytes it has to write to their tasks (as much as their queues take).
    pub fn service(&mut self, node: &mut Node, now: Timestamp) {
        while let Some(id) = node.poll_relay_close() {
            // Dropping the sender ends the task, which drops the socket.
            self.writers.remove(&id);
        }
        let proxy = node.relay_proxy();
        while let Some((id, addr)) = node.poll_relay_connect(now) {
            let (tx, rx) = mpsc::channel(WRITE_QUEUE);
            self.writers.insert(id, tx);
            ::tokio::spawn(connection(id, addr, proxy, rx, self.to_loop.clone()));
        }
        for (&id, tx) in &self.writers {
            while let Some(bytes) = node.relay_write(id) {
                if bytes.is_empty() {
                    break;
                }
                let n = bytes.len();
                match tx.try_send(bytes.to_vec()) {
                    Ok(()) => node.relay_consume(id, n),
                    Err(_) => break,
                }
            }
        }
    }

    /// The next report of a connection's task (for the loop's `select!`).
    pub async fn next(&mut self) -> Option<(RelayId, RelayIo)> {
        self.from_tasks.recv().await
    }

    /// Hands one report to the node.
    pub fn deliver(&mut self, node: &mut Node, now: Timestamp, id: RelayId, io: RelayIo) {
        match io {
            RelayIo::Connected => node.handle_relay_connected(now, id),
            RelayIo::Bytes(bytes) => node.handle_relay_bytes(now, id, &bytes),
            RelayIo::Writable => {}
            RelayIo::Closed => {
                self.writers.remove(&id);
                node.handle_relay_closed(now, id);
            }
            RelayIo::ProxyFailed(e) => {
                self.writers.remove(&id);
                node.handle_relay_proxy_failed(now, id, e);
            }
        }
    }
}

/// A TCP connection to a relay.
async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.connect(addr).await
}

/// A connection to the relay at `addr`, through `proxy` when there is one: the stream and
/// the relay's first bytes that came with the proxy's answer. Errors through a proxy say
/// what the proxy did; without one the connect's own error is enough.
pub async fn open(
    addr: SocketAddr,
    proxy: Option<ProxyConfig>,
) -> Result<(TcpStream, Vec<u8>), Option<ProxyError>> {
    let Some(proxy) = proxy else {
        return connect(addr)
            .await
            .map(|s| (s, Vec::new()))
            .map_err(|_| None);
    };
    let mut stream = connect(proxy.addr)
        .await
        .map_err(|e| Some(ProxyError::Connect(e.kind())))?;
    let _ = stream.set_nodelay(true);
    let first = run_handshake(&mut stream, ProxyHandshake::new(proxy.kind, addr))
        .await
        .map_err(Some)?;
    Ok((stream, first))
}

/// Writes all of `bytes` to a relay connection in records ([`send_record`]): c-toxcore
/// relays read whole frames only.
async fn write_records(writer: &OwnedWriteHalf, mut bytes: &[u8]) -> io::Result<()> {
    let stream: &TcpStream = writer.as_ref();
    while !bytes.is_empty() {
        stream.writable().await?;
        match stream.try_io(Interest::WRITABLE, || send_record(stream, bytes)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One relay connection: connect (through `proxy` when there is one), then read and write
/// until either side ends. Every outcome is reported to `to_loop`.
pub async fn connection(
    id: RelayId,
    addr: SocketAddr,
    proxy: Option<ProxyConfig>,
    mut writes: mpsc::Receiver<Vec<u8>>,
    to_loop: mpsc::Sender<(RelayId, RelayIo)>,
) {
    let opened = match ::tokio::time::timeout(CONNECT_TIMEOUT, open(addr, proxy)).await {
        Ok(opened) => opened,
        Err(_) => Err(proxy.map(|_| ProxyError::Timeout)),
    };
    let (stream, first) = match opened {
        Ok(opened) => opened,
        Err(failure) => {
            let report = failure.map_or(RelayIo::Closed, RelayIo::ProxyFailed);
            let _ = to_loop.send((id, report)).await;
            return;
        }
    };
    let _ = stream.set_nodelay(true);
    if to_loop.send((id, RelayIo::Connected)).await.is_err() {
        return;
    }
    if !first.is_empty() && to_loop.send((id, RelayIo::Bytes(first))).await.is_err() {
        return;
    }
    let (mut reader, writer) = stream.into_split();
    let mut buf = vec![0u8; READ_CHUNK];
    let result: io::Result<()> = loop {
        ::tokio::select! {
            read = reader.read(&mut buf) => match read {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    let chunk = buf.get(..n).map(<[u8]>::to_vec).unwrap_or_default();
                    if to_loop.send((id, RelayIo::Bytes(chunk))).await.is_err() {
                        return;
                    }
                }
                Err(e) => break Err(e),
            },
            chunk = writes.recv() => match chunk {
                Some(chunk) => {
                    if let Err(e) = write_records(&writer, &chunk).await {
                        break Err(e);
                    }
                    if writes.is_empty() {
                        // Best effort: a full channel means the loop wakes anyway.
                        let _ = to_loop.try_send((id, RelayIo::Writable));
                    }
                }
                // The node gave the connection up.
                None => return,
            },
        }
    };
    let _ = result;
    let _ = to_loop.send((id, RelayIo::Closed)).await;
}
