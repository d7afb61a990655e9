//! Batched receives: one `recvmmsg` fills up to [`SLOTS`] datagrams, and with UDP generic
//! receive offload (`UDP_GRO`, best effort) a slot may hold a whole run of equal-sized
//! datagrams from one peer — on loopback, a `UDP_SEGMENT` send (gso.rs) arrives as one
//! slot, uncut. Either way the per-datagram cost of a system call is paid once per batch.
//! The buffers are allocated once per socket; nothing is allocated per datagram.

use std::io::{self, IoSliceMut};
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use nix::sys::socket::{
    recvmmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags, MultiHeaders, SockaddrStorage,
};

/// Datagrams (or GRO runs) one system call can return.
pub const SLOTS: usize = 32;
/// Bytes per slot: a GRO run is at most one (unsegmented) UDP datagram, 64 KiB; without
/// GRO a slot holds one datagram and only its first bytes are used.
const SLOT_BYTES: usize = 65_536;
/// Without GRO, a datagram longer than this is someone else's (net_crypto's are at most
/// 1400 bytes) and arrives truncated into a parse error, as it did with one read per call.
const PLAIN_SLOT_BYTES: usize = 2048;

/// One received slot: where it came from, its length and its GRO segment size.
#[derive(Debug, Clone, Copy)]
struct Slot {
    from: SocketAddr,
    len: usize,
    segment: usize,
}

/// Reusable state for [`RecvBatch::recv`].
pub struct RecvBatch {
    headers: MultiHeaders<SockaddrStorage>,
    buf: Vec<u8>,
    slot_bytes: usize,
    slots: Vec<Slot>,
    gro: bool,
    /// nix's `recvmmsg` leaves each header's control length as the kernel last wrote it:
    /// a slot that received a datagram without a GRO message has no room for one next
    /// time (MSG_CTRUNC, segment size lost). Such headers are rebuilt before the next call
    /// (one allocation per such batch, none per datagram).
    stale_headers: bool,
}

/// Fresh headers, with room for the GRO segment size when `gro`.
fn headers(gro: bool) -> MultiHeaders<SockaddrStorage> {
    MultiHeaders::preallocate(SLOTS, gro.then(|| nix::cmsg_space!(i32)))
}

impl RecvBatch {
    /// Buffers for `socket`; with `gro`, asks the kernel for receive offload (when it
    /// refuses, a slot is one datagram and the buffers are small).
    pub fn new(socket: &impl AsFd, gro: bool) -> Self {
        let gro = gro && setsockopt(socket, sockopt::UdpGroSegment, &true).is_ok();
        let slot_bytes = if gro { SLOT_BYTES } else { PLAIN_SLOT_BYTES };
        RecvBatch {
            headers: headers(gro),
            buf: vec![0u8; SLOTS * slot_bytes],
            slot_bytes,
            slots: Vec::with_capacity(SLOTS),
            gro,
            stale_headers: false,
        }
    }

    /// One non-blocking `recvmmsg`: the slots filled, or `WouldBlock` when nothing was
    /// waiting (an async driver calls it inside its reactor's `try_io`, which then clears
    /// the socket's readiness).
    pub fn recv(&mut self, socket: BorrowedFd<'_>) -> io::Result<usize> {
        self.slots.clear();
        if self.stale_headers {
            self.headers = headers(self.gro);
            self.stale_headers = false;
        }
        let gro = self.gro;
        let RecvBatch {
            headers,
            buf,
            slot_bytes,
            slots,
            stale_headers,
            ..
        } = self;
        {
            let mut chunks = buf.chunks_exact_mut(*slot_bytes);
            let mut iovs: [[IoSliceMut; 1]; SLOTS] =
                std::array::from_fn(|_| [IoSliceMut::new(chunks.next().expect("SLOTS chunks"))]);
            let results = recvmmsg(
                socket.as_raw_fd(),
                headers,
                iovs.iter_mut(),
                MsgFlags::MSG_DONTWAIT,
                None,
            )
            .map_err(io::Error::from)?;
            for msg in results {
                let Some(from) = msg.address.as_ref().and_then(socket_addr) else {
                    continue;
                };
                let mut segment = None;
                if let Ok(cmsgs) = msg.cmsgs() {
                    for cmsg in cmsgs {
                        if let ControlMessageOwned::UdpGroSegments(size) = cmsg {
                            segment = usize::try_from(size).ok();
                        }
                    }
                }
                *stale_headers |= gro && segment.is_none();
                let segment = segment.unwrap_or(msg.bytes);
                slots.push(Slot {
                    from,
                    len: msg.bytes,
                    segment,
                });
            }
        }
        Ok(self.slots.len())
    }

    /// Every datagram of the last [`RecvBatch::recv`], in arrival order.
    pub fn for_each(&self, mut f: impl FnMut(SocketAddr, &[u8])) {
        for (i, slot) in self.slots.iter().enumerate() {
            let start = i * self.slot_bytes;
            let data = &self.buf[start..start + slot.len.min(self.slot_bytes)];
            if slot.segment == 0 || slot.segment >= data.len() {
                f(slot.from, data);
            } else {
                for datagram in data.chunks(slot.segment) {
                    f(slot.from, datagram);
                }
            }
        }
    }
}

/// The sender's address, IPv4 or IPv6.
fn socket_addr(addr: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = addr.as_sockaddr_in() {
        return Some(SocketAddr::V4(SocketAddrV4::from(*v4)));
    }
    addr.as_sockaddr_in6()
        .map(|v6| SocketAddr::V6(SocketAddrV6::from(*v6)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::gso;
    use std::net::UdpSocket;
    use std::time::{Duration, Instant};

    /// Waits (up to 5 s) until `batch` has read something, then returns every datagram it
    /// holds.
    fn receive(batch: &mut RecvBatch, socket: &UdpSocket) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match batch.recv(socket.as_fd()) {
                Ok(n) if n > 0 => {
                    let mut out = Vec::new();
                    batch.for_each(|_, d| out.push(d.to_vec()));
                    return out;
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
            assert!(Instant::now() < deadline, "nothing arrived within 5 s");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A segmented send and plain sends, alternating (the plain ones leave a header without
    /// a GRO message behind, which must not cost the next run its segment size), arrive
    /// as the datagrams that were sent, in order.
    #[test]
    fn segmented_and_plain_datagrams_arrive_as_sent() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_nonblocking(true).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        let mut batch = RecvBatch::new(&rx, true);
        let mut expected = Vec::new();
        let mut got = Vec::new();
        for round in 0..4u8 {
            let plain = vec![round; 40 + round as usize];
            tx.send_to(&plain, to).unwrap();
            expected.push(plain);
            got.extend(receive(&mut batch, &rx));
            assert_eq!(got.len(), expected.len(), "round {round}");
            let mut out = gso::Batch::new(true);
            for i in 0..5u8 {
                let d = vec![round * 16 + i; 1400];
                let joined = out.append_with(|buf| {
                    buf.extend_from_slice(&d);
                    Some(to)
                });
                assert_eq!(joined, gso::Appended::Joined);
                expected.push(d);
            }
            gso::send_now(&mut out, &tx, false).unwrap();
            got.extend(receive(&mut batch, &rx));
            assert_eq!(got.len(), expected.len(), "round {round}");
        }
        assert_eq!(got, expected);
    }
}
