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
//! As far as we can tell the overflow is the loopback device's doing: it hands the
//! sender's segments to the receiver whole (up to 64 KB each), so the receiver is charged
//! for the sender's buffers, and a window the reader advertised in good faith overruns its
//! memory. Bounding our send buffer keeps those segments small. On a network device the
//! receiver builds its own buffers and the kernel's autotuned default is kept: a bound
//! there would cap a relay connection at about the buffer per round trip, and nothing was
//! seen to need it.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;

use socket2::SockRef;

/// `SO_SNDBUF` asked for relay connections to a loopback address; Linux doubles it for its
/// bookkeeping (16 KiB in all) and turns send-buffer autotuning off. Measured with the
/// interop tests of auto_tests/tests/relay_udp_off_interop.rs run three at a time on a
/// 2-core machine: 8 KiB passed every run; 16 KiB and 32 KiB left a c-toxcore client behind
/// a rustox relay stalled in some runs. A loopback round trip is tens of µs, so the bound
/// still lets a relay connection carry hundreds of Mbit/s (relay-bench).
pub const LOOPBACK_RELAY_SEND_BUFFER: usize = 8 * 1024;

/// The send buffer to ask for a relay connection to `peer`: [`LOOPBACK_RELAY_SEND_BUFFER`]
/// on loopback, else `None` (the kernel's autotuned default).
pub fn relay_send_buffer(peer: SocketAddr) -> Option<usize> {
    peer.ip()
        .is_loopback()
        .then_some(LOOPBACK_RELAY_SEND_BUFFER)
}

/// Sets [`relay_send_buffer`] on the socket of a relay connection to `peer` (before
/// `connect` for a client, right after `accept` for the server); a no-op off loopback.
pub fn bound_relay_send_buffer(socket: &impl AsFd, peer: SocketAddr) -> io::Result<()> {
    match relay_send_buffer(peer) {
        Some(size) => SockRef::from(socket).set_send_buffer_size(size),
        None => Ok(()),
    }
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
    fn only_loopback_peers_are_bounded() {
        assert_eq!(
            relay_send_buffer("127.0.0.1:33445".parse().unwrap()),
            Some(LOOPBACK_RELAY_SEND_BUFFER)
        );
        assert_eq!(
            relay_send_buffer("[::1]:33445".parse().unwrap()),
            Some(LOOPBACK_RELAY_SEND_BUFFER)
        );
        assert_eq!(relay_send_buffer("192.0.2.7:443".parse().unwrap()), None);
    }
}
