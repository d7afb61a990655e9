//! The one UDP socket each node owns (socket2 for the buffer sizes, no `unsafe`).

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};

/// Kernel buffer asked for in each direction: 4 MiB holds ~2900 full datagrams, several
/// pacing bursts plus a scheduling hiccup of the reading thread at loopback rates (the
/// default ~208 KiB overflows within a millisecond at 250 MiB/s). The kernel caps it at
/// `net.core.rmem_max` / `wmem_max`.
const BUFFER_BYTES: usize = 4 << 20;

/// Why a socket could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// Another process holds the port.
    #[error("cannot listen on {addr}: the port is already in use (another rustox running?)")]
    InUse {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address is not one of this machine's.
    #[error("cannot listen on {addr}: that address is not assigned to this machine")]
    NotLocal {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Anything else the OS refused.
    #[error("cannot listen on {addr}")]
    Other {
        /// The address asked for.
        addr: SocketAddr,
        /// What the OS said.
        source: io::Error,
    },
}

/// A non-blocking UDP socket bound to `addr` with large buffers, ready for
/// `tokio::net::UdpSocket::from_std` (bound before any runtime exists, so a command can
/// print its address, or fail on a port in use, first).
pub fn bind(addr: SocketAddr) -> Result<std::net::UdpSocket, BindError> {
    let classify = |source: io::Error| match source.kind() {
        io::ErrorKind::AddrInUse => BindError::InUse { addr },
        io::ErrorKind::AddrNotAvailable => BindError::NotLocal { addr },
        _ => BindError::Other { addr, source },
    };
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(classify)?;
    let _ = socket.set_recv_buffer_size(BUFFER_BYTES);
    let _ = socket.set_send_buffer_size(BUFFER_BYTES);
    socket.bind(&addr.into()).map_err(classify)?;
    socket.set_nonblocking(true).map_err(classify)?;
    Ok(socket.into())
}
