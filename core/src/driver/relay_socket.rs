//! How we write to every TCP relay connection (protocol.md §7): our relay client's
//! connections to a relay and our relay server's connections to clients.
//!
//! c-toxcore reads a relay stream only in whole frames, and a segment that ends inside a
//! frame can leave it waiting for the frame's tail behind its own full receive buffer
//! (`relay::record` has the mechanism). So each write is one record of whole frames, as
//! the output buffers cut them, sent with `MSG_EOR`; and on loopback the send buffer is
//! bounded ([`LOOPBACK_RELAY_SEND_BUFFER`]), so few records wait in the kernel. On a
//! network device the kernel's autotuned default is kept: a bound there would cap a relay
//! connection at about the buffer per round trip.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;

use socket2::SockRef;

/// Writes `record` (the output buffer's next record) to the relay connection `socket`;
/// how many bytes went (`WouldBlock` when the send buffer is full). `MSG_EOR` keeps the
/// kernel from appending later writes to this record's segment; after a short write the
/// rest goes into the same segment and closes it. `MSG_NOSIGNAL`: a connection the peer
/// reset gives an error, not a SIGPIPE that would kill a client embedding us.
pub fn send_record(socket: &impl AsFd, record: &[u8]) -> io::Result<usize> {
    SockRef::from(socket).send_with_flags(record, nix::libc::MSG_EOR | nix::libc::MSG_NOSIGNAL)
}

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
