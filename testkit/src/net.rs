//! Loopback ports the kernel hands out as free at the time of asking.

use std::net::{TcpListener, UdpSocket};

/// A UDP port free on 127.0.0.1 now.
pub fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free UDP port")
        .port()
}

/// A TCP port free on 127.0.0.1 now.
pub fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free TCP port")
        .port()
}
