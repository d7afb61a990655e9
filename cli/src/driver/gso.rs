//! UDP generic segmentation offload (Linux `UDP_SEGMENT`): consecutive datagrams of one size
//! to one peer leave in a single `sendmsg`, and the kernel cuts them apart late in its
//! stack, so the per-datagram cost of the system call and of the UDP/IP layers is paid once
//! per batch. Bulk data is all full 1400-byte datagrams, which is the case this serves.

use std::io::{self, IoSlice};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, SockaddrStorage};
use tokio::io::Interest;
use tokio::net::UdpSocket;

/// Most segments per send: the kernel's limit (UDP_MAX_SEGMENTS) is 64 or 128.
pub const MAX_SEGMENTS: usize = 64;
/// Most bytes per send: the whole batch must fit one (unsegmented) UDP datagram's length
/// field, 65 535 bytes with the headers — EMSGSIZE otherwise. 60 000 leaves room for them
/// and holds 42 full net_crypto datagrams.
pub const MAX_BYTES: usize = 60_000;

/// Set once the kernel refused a segmented send (no `UDP_SEGMENT`, or a device without
/// checksum offload: EIO): from then on datagrams leave one by one.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// Whether the kernel refused segmentation offload in this process.
pub fn refused() -> bool {
    REFUSED.load(Ordering::Relaxed)
}

/// The errors with which a kernel refuses `UDP_SEGMENT` itself: EIO, EINVAL, ENOPROTOOPT,
/// EOPNOTSUPP.
fn is_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(5 | 22 | 92 | 95))
}

/// Datagrams waiting to leave together.
#[derive(Debug, Default)]
pub struct Batch {
    buf: Vec<u8>,
    segment: usize,
    count: usize,
    destination: Option<SocketAddr>,
}

impl Batch {
    /// Adds a datagram if it can join the batch; false when the batch must be sent first.
    pub fn push(&mut self, destination: SocketAddr, payload: &[u8]) -> bool {
        if self.count == 0 {
            self.destination = Some(destination);
            self.segment = payload.len();
        } else if self.destination != Some(destination)
            || payload.len() != self.segment
            || self.count == MAX_SEGMENTS
            || self.buf.len() + payload.len() > MAX_BYTES
        {
            return false;
        }
        self.buf.extend_from_slice(payload);
        self.count += 1;
        true
    }

    /// Sends the batch (one plain datagram when alone) and empties it.
    pub async fn send(&mut self, socket: &UdpSocket) -> Result<(), (SocketAddr, io::Error)> {
        let Some(destination) = self.destination.take() else {
            return Ok(());
        };
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
                REFUSED.store(true, Ordering::Relaxed);
                self.send_one_by_one(socket, destination).await
            }
            other => other,
        };
        self.buf.clear();
        self.count = 0;
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
