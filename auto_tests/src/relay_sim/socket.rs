//! One end of a simulated TCP connection: what a socket gives the program above it — a
//! connect that completes after a round trip, a byte stream each way with in-order delivery,
//! backpressure on writes, and a reset.
//!
//! Each direction is one flow of the TCP model ([`crate::tcp`]): our [`TcpSender`] in stream
//! mode sends what we write, with CUBIC, SACK recovery and RTO; our [`TcpReceiver`] in
//! stream mode reassembles the peer's bytes and acknowledges them with Linux's delayed-ACK
//! rules. Both flows carry the connection's id, so the peer's receiver takes our data
//! segments and its sender our ACKs. ACKs travel as their own segments rather than riding
//! on data going the other way: on a relay leg one direction carries the file and the other
//! little but requests, so the difference is a few 52-byte ACKs.
//!
//! The handshake is a SYN and a SYN-ACK ([`super::control`]): the client's stream opens
//! when the SYN-ACK arrives, one round trip after the connect, as `connect` returns; the
//! server's opens when it accepts. A SYN is re-sent after 1 s, doubling, six times (Linux
//! `TCP_TIMEOUT_INIT`, `tcp_syn_retries`), then the connect fails.

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::Timestamp;
use rustox_simulator::SimNode;

use super::control::Control;
use crate::tcp::segment::{Segment, KIND_DATA};
use crate::tcp::{StreamOptions, TcpReceiver, TcpSender};

/// The first SYN retransmission timeout: Linux `TCP_TIMEOUT_INIT` (RFC 6298 §2.1).
pub const SYN_TIMEOUT: Duration = Duration::from_secs(1);
/// SYN retransmissions before a connect fails: Linux `tcp_syn_retries` (6, about 127 s).
pub const SYN_RETRIES: u32 = 6;

/// The fault plan drops a data segment only if it carries at least this much: a frame of
/// file data (a relay frame of a full net_crypto packet is 1419 bytes), not a request or an
/// acknowledgement of the relay protocol.
pub const DROPPED_SEGMENT_MIN_PAYLOAD: usize = 1024;

/// What a segment did to the socket, for its owner to pass on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketInput {
    /// Nothing the owner must act on beyond reading.
    Nothing,
    /// The connect completed.
    Connected,
    /// The peer reset the connection (or refused it).
    Reset,
}

/// What one socket saw, for tests and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketStats {
    /// Bytes the application wrote.
    pub bytes_written: u64,
    /// Bytes handed to the application in order.
    pub bytes_read: u64,
    /// The most bytes one arriving segment made readable at once: a retransmission that
    /// fills a gap releases everything held behind it (head-of-line blocking).
    pub largest_release: u64,
    /// The longest time bytes were held above a gap before it filled.
    pub longest_hold: Duration,
    /// Data segments dropped by the fault plan ([`TcpSocket::drop_data_segment_at`]).
    pub segments_dropped: u64,
}

/// The two flows of an open connection.
#[derive(Debug, Clone)]
struct Open {
    sender: TcpSender,
    receiver: TcpReceiver,
}

#[derive(Debug, Clone)]
enum State {
    /// The SYN went out and was re-sent `tries` times; the next one is due at `retry_at`.
    SynSent {
        retry_at: Timestamp,
        tries: u32,
    },
    Open(Box<Open>),
    /// Reset, refused or failed: nothing more goes in or out.
    Closed,
}

/// One connection end.
#[derive(Debug, Clone)]
pub struct TcpSocket {
    conn: u32,
    peer: SocketAddr,
    options: StreamOptions,
    state: State,
    /// Control segments to send, oldest first.
    control: Vec<Control>,
    /// When bytes first waited above a gap, while some do.
    held_since: Option<Timestamp>,
    /// Drop the first large data segment sent at or after this time (a loss on the wire).
    drop_at: Option<Timestamp>,
    stats: SocketStats,
}

impl TcpSocket {
    /// A client's socket: connection `conn` to `peer`, its SYN going out now.
    pub fn connect(now: Timestamp, conn: u32, peer: SocketAddr, options: StreamOptions) -> Self {
        TcpSocket {
            conn,
            peer,
            options,
            state: State::SynSent {
                retry_at: now + SYN_TIMEOUT,
                tries: 0,
            },
            control: vec![Control::Syn(conn)],
            held_since: None,
            drop_at: None,
            stats: SocketStats::default(),
        }
    }

    /// A server's socket for a SYN it accepted: open now, its SYN-ACK going out.
    pub fn accept(now: Timestamp, conn: u32, peer: SocketAddr, options: StreamOptions) -> Self {
        let mut s = TcpSocket::connect(now, conn, peer, options);
        s.control = vec![Control::SynAck(conn)];
        s.open(now);
        s
    }

    fn open(&mut self, now: Timestamp) {
        self.state = State::Open(Box::new(Open {
            sender: TcpSender::stream(self.conn, self.peer, now, self.options),
            receiver: TcpReceiver::stream(self.conn, self.peer),
        }));
    }

    /// The connection's id.
    pub fn conn(&self) -> u32 {
        self.conn
    }

    /// The other end's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Counters.
    pub fn stats(&self) -> SocketStats {
        self.stats
    }

    /// Whether the stream is open.
    pub fn is_open(&self) -> bool {
        matches!(self.state, State::Open(_))
    }

    /// Whether the connection is over (reset, refused, failed).
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed)
    }

    /// Our sending flow, while open.
    pub fn sender(&self) -> Option<&TcpSender> {
        match &self.state {
            State::Open(o) => Some(&o.sender),
            _ => None,
        }
    }

    /// Our receiving flow, while open.
    pub fn receiver(&self) -> Option<&TcpReceiver> {
        match &self.state {
            State::Open(o) => Some(&o.receiver),
            _ => None,
        }
    }

    /// Fault injection: the first data segment of at least [`DROPPED_SEGMENT_MIN_PAYLOAD`]
    /// bytes this socket sends at or after `at` is lost on the wire (the simulator never
    /// sees it). TCP finds the hole from the
    /// peer's SACKs and re-sends it; everything behind it waits in the peer's receiver.
    pub fn drop_data_segment_at(&mut self, at: Timestamp) {
        self.drop_at = Some(at);
    }

    /// Bytes the application may write now.
    pub fn write_space(&self) -> usize {
        self.sender().map_or(0, TcpSender::write_space)
    }

    /// The application writes `bytes`; returns how many the socket took.
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        let n = match &mut self.state {
            State::Open(o) => o.sender.write(bytes),
            _ => 0,
        };
        self.stats.bytes_written += n as u64;
        n
    }

    /// The bytes that arrived in order since the last read.
    pub fn read(&mut self) -> Vec<u8> {
        match &mut self.state {
            State::Open(o) => {
                let b = o.receiver.read();
                self.stats.bytes_read += b.len() as u64;
                b
            }
            _ => Vec::new(),
        }
    }

    /// Closes the connection from our side (the peer hears a RST).
    pub fn reset(&mut self) {
        if !self.is_closed() {
            self.state = State::Closed;
            self.control.push(Control::Rst(self.conn));
        }
    }

    /// A segment of this connection arrived (a control segment or a TCP model segment).
    pub fn handle_segment(&mut self, now: Timestamp, to: SocketAddr, bytes: &[u8]) -> SocketInput {
        if let Some(c) = Control::parse(bytes) {
            return match (c, &self.state) {
                (Control::SynAck(_), State::SynSent { .. }) => {
                    self.open(now);
                    SocketInput::Connected
                }
                (Control::Rst(_), State::Closed) => SocketInput::Nothing,
                (Control::Rst(_), _) => {
                    self.state = State::Closed;
                    SocketInput::Reset
                }
                // A repeated SYN (our SYN-ACK was lost) gets the SYN-ACK again.
                (Control::Syn(_), State::Open(_)) => {
                    self.control.push(Control::SynAck(self.conn));
                    SocketInput::Nothing
                }
                _ => SocketInput::Nothing,
            };
        }
        let State::Open(o) = &mut self.state else {
            return SocketInput::Nothing;
        };
        match Segment::parse(bytes) {
            Ok(Segment::Data { .. }) => {
                let before = o.receiver.bytes_delivered();
                o.receiver.handle_datagram(now, self.peer, to, bytes);
                let released = o.receiver.bytes_delivered() - before;
                self.stats.largest_release = self.stats.largest_release.max(released);
                match (o.receiver.held_bytes() > 0, self.held_since) {
                    (true, None) => self.held_since = Some(now),
                    (false, Some(since)) => {
                        self.stats.longest_hold = self.stats.longest_hold.max(now - since);
                        self.held_since = None;
                    }
                    _ => {}
                }
            }
            Ok(Segment::Ack { .. }) => o.sender.handle_datagram(now, self.peer, to, bytes),
            Err(_) => {}
        }
        SocketInput::Nothing
    }

    /// Timers due: SYN retransmission, RTO, delayed ACK. Returns [`SocketInput::Reset`]
    /// when the connect gave up.
    pub fn handle_timeout(&mut self, now: Timestamp) -> SocketInput {
        match &mut self.state {
            State::SynSent { retry_at, tries } if *retry_at <= now => {
                if *tries >= SYN_RETRIES {
                    self.state = State::Closed;
                    return SocketInput::Reset;
                }
                *tries += 1;
                *retry_at = now + SYN_TIMEOUT * (1 << *tries);
                self.control.push(Control::Syn(self.conn));
            }
            State::Open(o) => {
                if o.sender.poll_timeout().is_some_and(|t| t <= now) {
                    o.sender.handle_timeout(now);
                }
                if o.receiver.poll_timeout().is_some_and(|t| t <= now) {
                    o.receiver.handle_timeout(now);
                }
            }
            _ => {}
        }
        SocketInput::Nothing
    }

    /// The next segment to send to the peer: control first, then ACKs, then data.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        if !self.control.is_empty() {
            return Some(self.control.remove(0).encode());
        }
        let State::Open(o) = &mut self.state else {
            return None;
        };
        if let Some((_, ack)) = o.receiver.poll_transmit(now) {
            return Some(ack);
        }
        loop {
            let (_, seg) = o.sender.poll_transmit(now)?;
            let large = seg.first() == Some(&KIND_DATA)
                && seg.len() >= crate::tcp::SEGMENT_HEADER + DROPPED_SEGMENT_MIN_PAYLOAD;
            match self.drop_at {
                Some(at) if large && now >= at => {
                    self.drop_at = None;
                    self.stats.segments_dropped += 1;
                }
                _ => return Some(seg),
            }
        }
    }

    /// When [`Self::handle_timeout`] should next run.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match &self.state {
            State::SynSent { retry_at, .. } => Some(*retry_at),
            State::Open(o) => [o.sender.poll_timeout(), o.receiver.poll_timeout()]
                .into_iter()
                .flatten()
                .min(),
            State::Closed => None,
        }
    }

    /// The TCP model's own checks on both flows.
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.state {
            State::Open(o) => {
                o.sender.check_invariants()?;
                o.receiver.check_invariants()
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(i: u8) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, i], 443))
    }

    /// Moves every segment from one socket to the other at once (no delay, no loss).
    fn exchange(now: Timestamp, a: &mut TcpSocket, b: &mut TcpSocket) -> Vec<SocketInput> {
        let mut inputs = Vec::new();
        for _ in 0..1000 {
            let mut moved = false;
            while let Some(s) = a.poll_transmit(now) {
                inputs.push(b.handle_segment(now, addr(2), &s));
                moved = true;
            }
            while let Some(s) = b.poll_transmit(now) {
                inputs.push(a.handle_segment(now, addr(1), &s));
                moved = true;
            }
            if !moved {
                break;
            }
        }
        inputs
    }

    #[test]
    fn connect_write_read_and_reset() {
        let t = Timestamp::ZERO;
        let mut c = TcpSocket::connect(t, 5, addr(2), StreamOptions::default());
        assert_eq!(
            c.write(b"early"),
            0,
            "nothing is written before the connect completes"
        );
        let syn = c.poll_transmit(t).unwrap();
        assert_eq!(Control::parse(&syn), Some(Control::Syn(5)));
        let mut s = TcpSocket::accept(t, 5, addr(1), StreamOptions::default());
        let synack = s.poll_transmit(t).unwrap();
        assert_eq!(
            c.handle_segment(t, addr(1), &synack),
            SocketInput::Connected
        );
        let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let mut written = 0;
        let mut got = Vec::new();
        for _ in 0..100 {
            written += c.write(&data[written..]);
            exchange(t, &mut c, &mut s);
            got.extend(s.read());
        }
        assert_eq!(written, data.len());
        assert_eq!(got, data);
        c.reset();
        let inputs = exchange(t, &mut c, &mut s);
        assert!(inputs.contains(&SocketInput::Reset));
        assert!(s.is_closed() && c.is_closed());
    }

    #[test]
    fn bytes_arrive_exactly_and_in_order_through_losses() {
        // 20 ms each way; every 9th segment client → server and every 7th ACK back is lost.
        let one_way = Duration::from_millis(20);
        let mut c = TcpSocket::connect(Timestamp::ZERO, 3, addr(2), StreamOptions::default());
        let mut s: Option<TcpSocket> = None;
        let data: Vec<u8> = (0..400_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let (mut written, mut got) = (0, Vec::new());
        let mut wire: Vec<(Timestamp, bool, Vec<u8>)> = Vec::new();
        let (mut sent_up, mut sent_down) = (0u32, 0u32);
        let mut now = Timestamp::ZERO;
        for _ in 0..200_000 {
            written += c.write(&data[written..]);
            while let Some(seg) = c.poll_transmit(now) {
                sent_up += 1;
                if sent_up % 9 != 0 {
                    wire.push((now + one_way, true, seg));
                }
            }
            if let Some(srv) = s.as_mut() {
                while let Some(seg) = srv.poll_transmit(now) {
                    sent_down += 1;
                    if sent_down % 7 != 0 {
                        wire.push((now + one_way, false, seg));
                    }
                }
            }
            if got.len() == data.len() {
                break;
            }
            let next = wire
                .iter()
                .map(|w| w.0)
                .chain(c.poll_timeout())
                .chain(s.as_ref().and_then(TcpSocket::poll_timeout))
                .min()
                .expect("something to wait for");
            now = next.max(now);
            let (due, rest): (Vec<_>, Vec<_>) = wire.drain(..).partition(|w| w.0 <= now);
            wire = rest;
            for (_, up, seg) in due {
                if up {
                    if s.is_none() && Control::parse(&seg) == Some(Control::Syn(3)) {
                        s = Some(TcpSocket::accept(now, 3, addr(1), StreamOptions::default()));
                    }
                    if let Some(srv) = s.as_mut() {
                        srv.handle_segment(now, addr(2), &seg);
                        got.extend(srv.read());
                    }
                } else {
                    c.handle_segment(now, addr(1), &seg);
                }
            }
            c.handle_timeout(now);
            if let Some(srv) = s.as_mut() {
                srv.handle_timeout(now);
            }
            c.check_invariants().unwrap();
        }
        assert_eq!(got.len(), data.len(), "all delivered by {now:?}");
        assert!(got == data, "in order and exact");
        let retransmitted = c.sender().map_or(0, |t| t.stats().retransmitted_segments);
        assert!(retransmitted > 0);
        let server = s.expect("accepted").stats();
        assert!(
            server.largest_release > 1448,
            "a filled hole released more than a segment"
        );
        assert!(
            server.longest_hold >= one_way * 2,
            "{:?}",
            server.longest_hold
        );
    }

    #[test]
    fn writes_stop_at_the_send_buffer_limit() {
        let t = Timestamp::ZERO;
        let mut c = TcpSocket::connect(t, 1, addr(2), StreamOptions::default());
        let _ = c.poll_transmit(t);
        c.handle_segment(t, addr(2), &Control::SynAck(1).encode());
        let limit = c.sender().unwrap().send_buffer_limit();
        assert_eq!(limit, 2 * 10 * 1448, "two initial windows");
        assert_eq!(c.write(&vec![0; 1 << 20]), limit);
        assert_eq!(c.write_space(), 0);
    }

    #[test]
    fn an_unanswered_syn_is_retried_then_the_connect_fails() {
        let mut c = TcpSocket::connect(Timestamp::ZERO, 1, addr(2), StreamOptions::default());
        let mut syns = 0;
        let mut now = Timestamp::ZERO;
        loop {
            while c.poll_transmit(now).is_some() {
                syns += 1;
            }
            let Some(t) = c.poll_timeout() else { break };
            now = t;
            if c.handle_timeout(now) == SocketInput::Reset {
                break;
            }
        }
        assert_eq!(syns, 1 + SYN_RETRIES);
        assert!(c.is_closed());
        assert_eq!(now, Timestamp::from_secs(127), "1 + 2 + 4 + … + 64 s");
    }
}
