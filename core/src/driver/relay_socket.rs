//! How we write to every TCP relay connection (docs/protocol.md §7): our relay client's
//! connections to a relay and our relay server's connections to clients.
//!
//! c-toxcore reads a relay stream only in whole frames, and a segment that ends inside a
//! frame can leave it waiting for the frame's tail behind its own full receive buffer
//! (`relay::record` has the mechanism). So each write is one record of whole frames, as
//! the output buffers cut them, sent with `MSG_EOR`. The kernel's send buffer keeps its
//! autotuned size, as c-toxcore's does: with records, a large one does not overrun a
//! c-toxcore reader, and a small one caps a loopback relay connection near 10 MiB/s
//! (relay-bench's blast).

use std::io;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn records_arrive_whole_and_in_order() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        let records: Vec<Vec<u8>> = (1..=3u8).map(|i| vec![i; 1000 * usize::from(i)]).collect();
        for r in &records {
            assert_eq!(send_record(&stream, r).unwrap(), r.len());
        }
        drop(stream);
        let mut got = Vec::new();
        peer.read_to_end(&mut got).unwrap();
        assert_eq!(got, records.concat());
    }

    #[test]
    fn a_reset_connection_is_an_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (peer, _) = listener.accept().unwrap();
        // Closing with unread data makes the peer send a reset.
        SockRef::from(&peer)
            .set_linger(Some(std::time::Duration::ZERO))
            .unwrap();
        drop(peer);
        let mut failed = false;
        for _ in 0..100 {
            if send_record(&stream, &[0; 1000]).is_err() {
                failed = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(failed, "writes to a reset connection kept succeeding");
    }
}
