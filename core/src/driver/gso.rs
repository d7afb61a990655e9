//! UDP generic segmentation offload (Linux `UDP_SEGMENT`): consecutive datagrams of one size
//! to one peer leave in a single `sendmsg`, and the kernel cuts them apart late in its
//! stack, so the per-datagram cost of the system call and of the UDP/IP layers is paid once
//! per batch. Bulk data is all full 1400-byte datagrams, which is the case this serves.

use std::io::{self, IoSlice};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, SockaddrStorage};

use super::socket::for_socket;

/// Most segments per send: the kernel's limit (UDP_MAX_SEGMENTS) is 64 or 128.
pub const MAX_SEGMENTS: usize = 64;
/// Most bytes per send: the whole batch must fit one (unsegmented) UDP datagram's length
/// field, 65 535 bytes with the headers — EMSGSIZE otherwise. 60 000 leaves room for them
/// and holds 42 full net_crypto datagrams.
pub const MAX_BYTES: usize = 60_000;

/// The errors with which a kernel refuses `UDP_SEGMENT` itself: EIO, EINVAL, ENOPROTOOPT,
/// EOPNOTSUPP.
pub fn is_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(5 | 22 | 92 | 95))
}

/// Datagrams waiting to leave together.
#[derive(Debug, Default)]
pub struct Batch {
    /// Segmentation offload is used: asked for, and the kernel has not refused it (no
    /// `UDP_SEGMENT`, or a device without checksum offload: EIO); once refused, datagrams
    /// leave one by one.
    offload: bool,
    buf: Vec<u8>,
    segment: usize,
    count: usize,
    destination: Option<SocketAddr>,
    /// A datagram written after the batch that could not join it; it starts the next one.
    held: Vec<u8>,
    held_destination: Option<SocketAddr>,
}

/// What [`Batch::append_with`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// There was no datagram.
    Nothing,
    /// The datagram joined the batch.
    Joined,
    /// The datagram cannot join (another peer or size, or the batch is full): send the batch;
    /// the datagram is held and starts the next one.
    SendFirst,
}

impl Batch {
    /// An empty batch; `offload` asks for segmentation offload.
    pub fn new(offload: bool) -> Self {
        Batch {
            offload,
            ..Batch::default()
        }
    }

    /// Whether runs of datagrams leave in one segmented send (the tokio session asks).
    #[cfg(feature = "tokio")]
    pub fn offload(&self) -> bool {
        self.offload
    }

    /// Lets `write` append the next datagram at the end of the batch's buffer — the session
    /// seals it in place there — and returns its destination (`None`: nothing to send).
    /// Appending first and checking after saves a copy per datagram; the rare datagram that
    /// does not fit is moved aside.
    pub fn append_with(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Option<SocketAddr>,
    ) -> Appended {
        if self.held_destination.is_some() {
            return Appended::SendFirst;
        }
        if self.buf.capacity() == 0 {
            // Room for a full batch plus the one datagram that may overshoot it.
            self.buf.reserve(MAX_BYTES + 2048);
        }
        let before = self.buf.len();
        let Some(destination) = write(&mut self.buf) else {
            self.buf.truncate(before);
            return Appended::Nothing;
        };
        let len = self.buf.len() - before;
        if self.count == 0 {
            self.destination = Some(destination);
            self.segment = len;
        } else if self.destination != Some(destination)
            || len != self.segment
            || self.count == MAX_SEGMENTS
            || self.buf.len() > MAX_BYTES
        {
            self.held.clear();
            self.held.extend_from_slice(&self.buf[before..]);
            self.buf.truncate(before);
            self.held_destination = Some(destination);
            return Appended::SendFirst;
        }
        self.count += 1;
        Appended::Joined
    }

    /// The batch ready to leave, if any.
    pub fn pending(&self) -> Option<Pending<'_>> {
        let destination = self.destination?;
        Some(Pending {
            destination,
            bytes: &self.buf,
            segment: self.segment,
            count: self.count,
        })
    }

    /// The pending batch left (or was given up): empty it, and let the held datagram start
    /// the next one. `offload_refused`: the kernel refused segmentation itself, so from now
    /// on datagrams leave one by one.
    pub fn sent(&mut self, offload_refused: bool) {
        if offload_refused {
            self.offload = false;
        }
        self.destination = None;
        self.buf.clear();
        self.count = 0;
        if let Some(held) = self.held_destination.take() {
            self.buf.extend_from_slice(&self.held);
            self.destination = Some(held);
            self.segment = self.held.len();
            self.count = 1;
        }
    }
}

/// A batch ready to leave: `count` datagrams of `segment` bytes (the last may be shorter)
/// to one destination.
#[derive(Debug, Clone, Copy)]
pub struct Pending<'a> {
    /// Where to.
    pub destination: SocketAddr,
    /// The datagrams, back to back.
    pub bytes: &'a [u8],
    /// Bytes per datagram.
    pub segment: usize,
    /// How many datagrams.
    pub count: usize,
}

impl Pending<'_> {
    /// One non-blocking system call: a plain `sendto` for one datagram, a `sendmsg` with
    /// `UDP_SEGMENT` for several. `destination` is the pending one in the form the socket
    /// needs (IPv4-mapped on a dual-stack socket).
    pub fn send_once(&self, socket: BorrowedFd<'_>, destination: SocketAddr) -> io::Result<()> {
        let addr = SockaddrStorage::from(destination);
        let iov = [IoSlice::new(self.bytes)];
        let segment = self.segment as u16;
        let gso = [ControlMessage::UdpGsoSegments(&segment)];
        let cmsgs: &[ControlMessage] = if self.count > 1 { &gso } else { &[] };
        sendmsg(
            socket.as_raw_fd(),
            &iov,
            cmsgs,
            MsgFlags::MSG_DONTWAIT,
            Some(&addr),
        )
        .map(drop)
        .map_err(io::Error::from)
    }

    /// Each datagram with its own `sendto` (the fallback when the kernel refuses
    /// segmentation); stops at the first error.
    pub fn send_one_by_one(
        &self,
        socket: BorrowedFd<'_>,
        destination: SocketAddr,
    ) -> io::Result<()> {
        let addr = SockaddrStorage::from(destination);
        for datagram in self.bytes.chunks(self.segment.max(1)) {
            sendmsg::<SockaddrStorage>(
                socket.as_raw_fd(),
                &[IoSlice::new(datagram)],
                &[],
                MsgFlags::MSG_DONTWAIT,
                Some(&addr),
            )
            .map_err(io::Error::from)?;
        }
        Ok(())
    }
}

/// Sends `batch` on a blocking-free path (the `io` driver, the C API): one try, no waiting.
/// A full socket buffer (`WouldBlock`) loses the batch like a congested link would, and the
/// error is returned for the node to count. Offload is switched off only if the same
/// datagrams then go out one by one: EINVAL also means a destination no datagram can go to
/// (port 0), and that must not switch offload off for every peer.
pub fn send_now(
    batch: &mut Batch,
    socket: &UdpSocket,
    ipv6_socket: bool,
) -> Result<(), (SocketAddr, io::Error)> {
    let Some(pending) = batch.pending() else {
        return Ok(());
    };
    let destination = pending.destination;
    let to = for_socket(destination, ipv6_socket);
    let fd = socket.as_fd();
    let mut refused = false;
    let result = match pending.send_once(fd, to) {
        Err(e) if pending.count > 1 && is_refusal(&e) => {
            let one_by_one = pending.send_one_by_one(fd, to);
            refused = one_by_one.is_ok();
            one_by_one
        }
        other => other,
    };
    batch.sent(refused);
    result.map_err(|e| (destination, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(len: usize, tag: u8) -> Vec<u8> {
        (0..len).map(|i| tag.wrapping_add(i as u8)).collect()
    }

    /// Datagrams appended in place leave in order and byte for byte; one of another size is
    /// held back, starts the next batch, and is not lost or duplicated.
    #[test]
    fn appended_datagrams_arrive_in_order_and_a_misfit_starts_the_next_batch() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        let sent = [
            datagram(1400, 1),
            datagram(1400, 2),
            datagram(1400, 3),
            datagram(700, 4),
            datagram(700, 5),
        ];
        let mut batch = Batch::new(true);
        let mut outcomes = Vec::new();
        let mut next = sent.iter();
        loop {
            let outcome = batch.append_with(|buf| {
                let d = next.next()?;
                buf.extend_from_slice(d);
                Some(to)
            });
            outcomes.push(outcome);
            match outcome {
                Appended::Nothing => break,
                Appended::Joined => {}
                Appended::SendFirst => send_now(&mut batch, &tx, false).unwrap(),
            }
        }
        send_now(&mut batch, &tx, false).unwrap();
        use Appended::*;
        assert_eq!(
            outcomes,
            [Joined, Joined, Joined, SendFirst, Joined, Nothing]
        );
        for expected in &sent {
            let mut buf = [0u8; 2048];
            let n = rx.recv(&mut buf).expect("the datagram arrives");
            assert_eq!(&buf[..n], &expected[..]);
        }
    }

    #[test]
    fn a_full_batch_asks_to_be_sent() {
        let to: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let mut batch = Batch::new(true);
        let fits = MAX_BYTES / 1400;
        for _ in 0..fits {
            assert_eq!(
                batch.append_with(|b| {
                    b.extend_from_slice(&[7; 1400]);
                    Some(to)
                }),
                Appended::Joined
            );
        }
        assert_eq!(
            batch.append_with(|b| {
                b.extend_from_slice(&[7; 1400]);
                Some(to)
            }),
            Appended::SendFirst
        );
        // Until sent, nothing more is taken.
        assert_eq!(batch.append_with(|_| unreachable!()), Appended::SendFirst);
        assert_eq!(batch.count, fits);
    }
}
