//! UDP sockets for the drivers (socket2, no `unsafe`).

use std::io;
use std::net::{SocketAddr, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

/// Receive buffer asked of the kernel: 4 MiB absorbs a burst of ~30 000 get-nodes while a
/// worker is busy (the kernel caps it at `net.core.rmem_max`).
pub const RECV_BUFFER: usize = 4 << 20;

/// A UDP socket bound to `addr`. With `reuse_port`, several sockets (one per worker) can be
/// bound to the same address and Linux spreads datagrams over them by a hash of the source
/// address and port; IPv6 sockets accept IPv4 too (dual stack).
pub fn bind_udp(addr: SocketAddr, reuse_port: bool) -> std::io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        socket.set_only_v6(false)?;
    }
    #[cfg(unix)]
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    let _ = socket.set_recv_buffer_size(RECV_BUFFER);
    let _ = socket.set_broadcast(true);
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

/// Wakes a thread blocked in `recv_from` on this socket: on Linux `shutdown(SHUT_RD)` makes
/// the read return at once (1 ms in the opentracker measurements), without a signal handler
/// or `unsafe`, and without a receive timeout that would wake every worker on every tick.
pub fn wake_reader(socket: &UdpSocket) {
    let _ = socket2::SockRef::from(socket).shutdown(std::net::Shutdown::Read);
}

/// `recvfrom` that tolerates a missing source address: after [`wake_reader`], Linux returns
/// 0 bytes with no address, on which `std`'s `UdpSocket::recv_from` panics (an assertion on
/// the address length). `Ok(None)` means "woken, no datagram".
pub fn recv_from(
    socket: &UdpSocket,
    buf: &mut [u8],
) -> std::io::Result<Option<(usize, SocketAddr)>> {
    use nix::sys::socket::{recvfrom, SockaddrStorage};
    use std::os::fd::AsRawFd;
    let (len, addr) =
        recvfrom::<SockaddrStorage>(socket.as_raw_fd(), buf).map_err(std::io::Error::from)?;
    let addr = addr.and_then(|a| {
        a.as_sockaddr_in()
            .map(|v4| SocketAddr::V4(std::net::SocketAddrV4::from(*v4)))
            .or_else(|| {
                a.as_sockaddr_in6()
                    .map(|v6| SocketAddr::V6(std::net::SocketAddrV6::from(*v6)))
            })
    });
    Ok(addr.map(|a| (len, a)))
}

/// `send_to` that works on dual-stack sockets: an IPv6 socket cannot send to a plain IPv4
/// address (`EAFNOSUPPORT`), so the address is given in its IPv4-mapped form there.
pub fn send_to(
    socket: &UdpSocket,
    bytes: &[u8],
    dst: SocketAddr,
    ipv6_socket: bool,
) -> std::io::Result<usize> {
    socket.send_to(bytes, for_socket(dst, ipv6_socket))
}

/// The destination as a socket of that family needs it.
pub fn for_socket(dst: SocketAddr, ipv6_socket: bool) -> SocketAddr {
    match dst {
        SocketAddr::V4(v4) if ipv6_socket => {
            SocketAddr::new(std::net::IpAddr::V6(v4.ip().to_ipv6_mapped()), v4.port())
        }
        other => other,
    }
}

/// Kernel buffer asked for in each direction: 4 MiB holds ~2900 full datagrams, several
/// pacing bursts plus a scheduling hiccup of the reading thread at loopback rates (the
/// default ~208 KiB overflows within a millisecond at 250 MiB/s). The kernel caps it at
/// `net.core.rmem_max` / `wmem_max`.
pub const NODE_BUFFER_BYTES: usize = 4 << 20;

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

/// A node's non-blocking UDP socket bound to `addr`, with large buffers and broadcast
/// allowed (LAN discovery, docs/protocol.md §5.7); an IPv6 address also takes IPv4 (dual stack;
/// IPv4 peers then appear IPv4-mapped, which the node folds back). Bound before any
/// runtime exists, so a command can print its address, or fail on a port in use, first.
pub fn bind(addr: SocketAddr) -> Result<std::net::UdpSocket, BindError> {
    let classify = |source: io::Error| match source.kind() {
        io::ErrorKind::AddrInUse => BindError::InUse { addr },
        io::ErrorKind::AddrNotAvailable => BindError::NotLocal { addr },
        _ => BindError::Other { addr, source },
    };
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(classify)?;
    if addr.is_ipv6() {
        let _ = socket.set_only_v6(false);
    }
    let _ = socket.set_broadcast(true);
    let _ = socket.set_recv_buffer_size(NODE_BUFFER_BYTES);
    let _ = socket.set_send_buffer_size(NODE_BUFFER_BYTES);
    socket.bind(&addr.into()).map_err(classify)?;
    socket.set_nonblocking(true).map_err(classify)?;
    Ok(socket.into())
}

/// The IPv4 broadcast addresses of the interfaces that are up, loopback excepted: where LAN
/// discovery must go to reach a LAN (c-toxcore reads them with `SIOCGIFBRDADDR`). Empty when
/// the OS will not say.
pub fn interface_broadcasts() -> Vec<std::net::IpAddr> {
    use nix::net::if_::InterfaceFlags;
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for ifa in addrs {
        if !ifa.flags.contains(InterfaceFlags::IFF_UP)
            || ifa.flags.contains(InterfaceFlags::IFF_LOOPBACK)
            || !ifa.flags.contains(InterfaceFlags::IFF_BROADCAST)
        {
            continue;
        }
        let Some(b) = ifa.broadcast.as_ref().and_then(|b| b.as_sockaddr_in()) else {
            continue;
        };
        let ip = std::net::IpAddr::V4(b.ip());
        if !out.contains(&ip) {
            out.push(ip);
        }
    }
    out
}
