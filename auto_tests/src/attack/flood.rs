//! A paced datagram flood: one thread, a target rate, a [`Source`] of datagrams and the
//! [`Outlet`]s they leave from.
//!
//! Pacing is in ticks of [`TICK`]: each tick sends what the rate owes since the start, at
//! most [`MAX_TICKS_BEHIND`] ticks' worth, so a descheduled flood resumes at its rate
//! instead of bursting (what it could not send is counted as missed, not sent later).

use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::socket::{
    sendto, socket, AddressFamily, MsgFlags, SockFlag, SockProtocol, SockType, SockaddrIn,
};

/// The flood's pacing interval: 1 ms, the finest sleep Linux keeps (default timer slack is
/// 50 µs), so 50 000 packets/s go out as 50-packet batches.
pub const TICK: Duration = Duration::from_millis(1);

/// How far a flood may fall behind its schedule before it gives the backlog up: 10 ticks,
/// one scheduler time slice.
const MAX_TICKS_BEHIND: u64 = 10;

/// What a flood sends next.
pub trait Source: Send {
    /// Writes the next datagram into `out` (empty on entry) and returns the index of the
    /// outlet it leaves from.
    fn next(&mut self, out: &mut Vec<u8>) -> usize;
}

/// A fixed pool of datagrams replayed in order, spread round-robin over `outlets` outlets.
pub struct Pool {
    packets: Vec<Vec<u8>>,
    outlets: usize,
    at: usize,
}

impl Pool {
    /// Replays `packets` over `outlets` outlets (both at least one).
    pub fn new(packets: Vec<Vec<u8>>, outlets: usize) -> Self {
        debug_assert!(!packets.is_empty() && outlets > 0);
        Pool {
            packets,
            outlets: outlets.max(1),
            at: 0,
        }
    }
}

impl Source for Pool {
    fn next(&mut self, out: &mut Vec<u8>) -> usize {
        if let Some(p) = self.packets.get(self.at % self.packets.len().max(1)) {
            out.extend_from_slice(p);
        }
        let outlet = self.at % self.outlets;
        self.at = self.at.wrapping_add(1);
        outlet
    }
}

/// Where a datagram leaves from.
pub enum Outlet {
    /// An ordinary UDP socket (its bound address is the source).
    Udp(UdpSocket),
    /// A raw IPv4 socket writing UDP headers with source port 0 (needs root or
    /// CAP_NET_RAW): the kernel adds the IP header, a zero checksum means none (RFC 768).
    PortZero(OwnedFd),
}

impl Outlet {
    /// A UDP socket bound to `ip` on a port the OS picks.
    pub fn udp(ip: std::net::Ipv4Addr) -> io::Result<Outlet> {
        UdpSocket::bind(SocketAddrV4::new(ip, 0)).map(Outlet::Udp)
    }

    /// A raw socket for source port 0; fails without root.
    pub fn port_zero() -> io::Result<Outlet> {
        socket(
            AddressFamily::Inet,
            SockType::Raw,
            SockFlag::empty(),
            SockProtocol::Udp,
        )
        .map(Outlet::PortZero)
        .map_err(io::Error::from)
    }

    fn send(&self, payload: &[u8], to: SocketAddrV4, scratch: &mut Vec<u8>) -> io::Result<()> {
        match self {
            Outlet::Udp(socket) => socket.send_to(payload, to).map(|_| ()),
            Outlet::PortZero(fd) => {
                let len = u16::try_from(8 + payload.len())
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
                scratch.clear();
                scratch.extend_from_slice(&0u16.to_be_bytes()); // source port 0
                scratch.extend_from_slice(&to.port().to_be_bytes());
                scratch.extend_from_slice(&len.to_be_bytes());
                scratch.extend_from_slice(&0u16.to_be_bytes()); // no checksum
                scratch.extend_from_slice(payload);
                sendto(
                    fd.as_raw_fd(),
                    scratch,
                    &SockaddrIn::from(to),
                    MsgFlags::empty(),
                )
                .map(|_| ())
                .map_err(io::Error::from)
            }
        }
    }
}

/// What a flood did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FloodReport {
    /// Datagrams the kernel took.
    pub sent: u64,
    /// Datagrams the kernel refused (ENOBUFS and the like).
    pub errors: u64,
    /// Datagrams the schedule owed that the thread never got to send.
    pub missed: u64,
    /// How long it ran.
    pub seconds: f64,
}

impl FloodReport {
    /// Datagrams per second the kernel took.
    pub fn achieved_rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.sent as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// A running flood.
pub struct Flood {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<FloodReport>>,
}

impl Flood {
    /// Starts sending `rate` datagrams per second from `source` to `to`.
    pub fn start(
        to: SocketAddr,
        rate: u64,
        outlets: Vec<Outlet>,
        mut source: Box<dyn Source>,
    ) -> io::Result<Flood> {
        let SocketAddr::V4(to) = to else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the flood speaks IPv4 only",
            ));
        };
        if outlets.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no outlets"));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("attack-flood".into())
            .spawn(move || {
                let mut report = FloodReport::default();
                let start = Instant::now();
                let per_tick = (rate as f64 * TICK.as_secs_f64()).ceil() as u64;
                let cap = per_tick.max(1) * MAX_TICKS_BEHIND;
                let mut owed_done = 0u64;
                let mut packet = Vec::with_capacity(2048);
                let mut scratch = Vec::with_capacity(2048);
                while !flag.load(Ordering::Relaxed) {
                    let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
                    let mut batch = due.saturating_sub(owed_done);
                    if batch > cap {
                        report.missed += batch - cap;
                        owed_done += batch - cap;
                        batch = cap;
                    }
                    for _ in 0..batch {
                        packet.clear();
                        let i = source.next(&mut packet);
                        let outlet = &outlets[i % outlets.len()];
                        match outlet.send(&packet, to, &mut scratch) {
                            Ok(()) => report.sent += 1,
                            Err(_) => report.errors += 1,
                        }
                    }
                    owed_done += batch;
                    std::thread::sleep(TICK);
                }
                report.seconds = start.elapsed().as_secs_f64();
                report
            })?;
        Ok(Flood {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the flood and reports what it did.
    pub fn stop(mut self) -> FloodReport {
        self.halt()
    }

    fn halt(&mut self) -> FloodReport {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.halt();
    }
}
