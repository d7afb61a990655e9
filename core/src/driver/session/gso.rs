//! UDP generic segmentation offload (Linux `UDP_SEGMENT`): consecutive datagrams of one size
//! to one peer leave in a single `sendmsg`, and the kernel cuts them apart late in its
//! stack, so the per-datagram cost of the system call and of the UDP/IP layers is paid once
//! per batch. Bulk data is all full 1400-byte datagrams, which is the case this serves.

use std::io::{self, IoSlice};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, SockaddrStorage};
use tokio::io::Interest;
use tokio::net::UdpSocket;

/// Most segments per send: the kernel's limit (UDP_MAX_SEGMENTS) is 64 or 128.
pub const MAX_SEGMENTS: usize = 64;
/// Most bytes per send: the whole batch must fit one (unsegmented) UDP datagram's length
/// field, 65 535 bytes with the headers — EMSGSIZE otherwise. 60 000 leaves room for them
/// and holds 42 full net_crypto datagrams.
pub const MAX_BYTES: usize = 60_000;

/// The errors with which a kernel refuses `UDP_SEGMENT` itself: EIO, EINVAL, ENOPROTOOPT,
/// EOPNOTSUPP.
fn is_refusal(e: &io::Error) -> bool {
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

    /// Whether runs of datagrams leave in one segmented send.
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

    /// Sends the batch (one plain datagram when alone) and empties it.
    pub async fn send(&mut self, socket: &UdpSocket) -> Result<(), (SocketAddr, io::Error)> {
        let Some(destination) = self.destination.take() else {
            return Ok(());
        };
        debug_assert!(self.count > 0);
        let result = if self.count == 1 {
            socket.send_to(&self.buf, destination).await.map(drop)
        } else {
            let segment = self.segment as u16;
            let addr = SockaddrStorage::from(destination);
            let buf = &self.buf;
            socket
                .async_io(Interest::WRITABLE, || {
                    let iov = [IoSlice::new(buf)];
                    let cmsg = [ControlMessage::UdpGsoSegments(&segment)];
                    sendmsg(
                        socket.as_raw_fd(),
                        &iov,
                        &cmsg,
                        MsgFlags::empty(),
                        Some(&addr),
                    )
                    .map(drop)
                    .map_err(io::Error::from)
                })
                .await
        };
        let result = match result {
            Err(e) if self.count > 1 && is_refusal(&e) => {
                // Offload is at fault only if the same datagrams go out one by one; EINVAL
                // also means a destination no datagram can go to (port 0), and that must
                // not switch offload off for every peer.
                let one_by_one = self.send_one_by_one(socket, destination).await;
                if one_by_one.is_ok() {
                    self.offload = false;
                }
                one_by_one
            }
            other => other,
        };
        self.buf.clear();
        self.count = 0;
        if let Some(held) = self.held_destination.take() {
            self.buf.extend_from_slice(&self.held);
            self.destination = Some(held);
            self.segment = self.held.len();
            self.count = 1;
        }
        result.map_err(|e| (destination, e))
    }

    /// The batch's datagrams as separate sends (the fallback when offload is refused).
    async fn send_one_by_one(&self, socket: &UdpSocket, destination: SocketAddr) -> io::Result<()> {
        for datagram in self.buf.chunks(self.segment) {
            socket.send_to(datagram, destination).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(len: usize, tag: u8) -> Vec<u8> {
        (0..len).map(|i| tag.wrapping_add(i as u8)).collect()
    }

    /// Datagrams appended in place leave in order and byte for byte; one of another size is
    /// held back, starts the next batch, and is not lost or duplicated.
    #[tokio::test]
    async fn appended_datagrams_arrive_in_order_and_a_misfit_starts_the_next_batch() {
        let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
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
                Appended::SendFirst => batch.send(&tx).await.unwrap(),
            }
        }
        batch.send(&tx).await.unwrap();
        use Appended::*;
        assert_eq!(
            outcomes,
            [Joined, Joined, Joined, SendFirst, Joined, Nothing]
        );
        for expected in &sent {
            let mut buf = [0u8; 2048];
            let n = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv(&mut buf))
                .await
                .expect("datagram arrives")
                .unwrap();
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
