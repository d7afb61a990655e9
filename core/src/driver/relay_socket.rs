//! The kernel send buffer of every TCP relay connection we write to (protocol.md §7): our
//! relay client's connections to a relay and our relay server's connections to clients.
//!
//! c-toxcore 0.2.18 reads a relay stream one whole frame at a time (`TCP_common.c`
//! `read_packet_TCP_secure_connection` waits until the kernel holds the frame's every
//! byte) from a socket whose receive buffer it never sizes. A burst far larger than that
//! buffer fills it, the kernel starts dropping what arrives, and the stream can stop with
//! the head of a frame readable and its tail behind a hole: the reader waits for the tail,
//! its full buffer advertises a zero window, and the sender can only probe. Nothing moves
//! again until the relay's ping timeout closes the connection, taking every friend and
//! onion path on it along. Seen on loopback with Linux's autotuned send buffer: a file's
//! first flight (~700 KB) stalled both tox-bootstrapd and a c-toxcore client this way
//! (`ss -tm`: 1 413 bytes unread holding 122 KB of receive memory, zero window, the
//! sender in persist backoff); with this bound the same transfer completes
//! (auto_tests/tests/relay_udp_off_interop.rs).
//!
//! Bounding our send buffer bounds what can be in flight towards the reader. The cost is
//! throughput on long paths: at most about the buffer per round trip. Loopback gets a
//! tighter bound: there the receiver is charged for the sender's own buffers (the kernel
//! hands the sender's segments over whole, up to 64 KB each), so a 64 KiB bound still
//! overran a c-toxcore client reading slowly on a loaded machine, and a loopback round trip
//! is short enough that the tighter bound costs no throughput.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;

use socket2::SockRef;

/// `SO_SNDBUF` asked for relay connections. Linux doubles it for its bookkeeping (64 KiB
/// in all), half of the 128 KiB receive buffer a c-toxcore peer starts with
/// (`net.ipv4.tcp_rmem` default); setting it also turns off send-buffer autotuning.
/// Throughput per relay connection stays under about 64 KiB per round trip: ~500 Mbit/s
/// on loopback, ~26 Mbit/s at 20 ms, ~5 Mbit/s at 100 ms.
pub const RELAY_SEND_BUFFER: usize = 32 * 1024;

/// `SO_SNDBUF` asked for relay connections to a loopback address (16 KiB in all).
pub const LOOPBACK_RELAY_SEND_BUFFER: usize = 8 * 1024;

/// The send buffer for a relay connection to `peer`.
pub fn relay_send_buffer(peer: SocketAddr) -> usize {
    if peer.ip().is_loopback() {
        LOOPBACK_RELAY_SEND_BUFFER
    } else {
        RELAY_SEND_BUFFER
    }
}

/// Sets [`relay_send_buffer`] on the socket of a relay connection to `peer` (before
/// `connect` for a client, right after `accept` for the server).
pub fn bound_relay_send_buffer(socket: &impl AsFd, peer: SocketAddr) -> io::Result<()> {
    SockRef::from(socket).set_send_buffer_size(relay_send_buffer(peer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_applied_and_autotuning_is_off() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let peer = listener.local_addr().unwrap();
        let before = SockRef::from(&stream).send_buffer_size().unwrap();
        bound_relay_send_buffer(&stream, peer).unwrap();
        let after = SockRef::from(&stream).send_buffer_size().unwrap();
        // Linux reports twice what was asked (its bookkeeping share).
        assert_eq!(after, 2 * LOOPBACK_RELAY_SEND_BUFFER, "before: {before}");
    }

    #[test]
    fn loopback_peers_get_the_tighter_bound() {
        assert_eq!(
            relay_send_buffer("127.0.0.1:33445".parse().unwrap()),
            LOOPBACK_RELAY_SEND_BUFFER
        );
        assert_eq!(
            relay_send_buffer("[::1]:33445".parse().unwrap()),
            LOOPBACK_RELAY_SEND_BUFFER
        );
        assert_eq!(
            relay_send_buffer("192.0.2.7:443".parse().unwrap()),
            RELAY_SEND_BUFFER
        );
    }
}
