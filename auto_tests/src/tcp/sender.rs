//! The sending end of a bulk TCP flow: Linux's congestion-control state machine with CUBIC,
//! reduced to what a bulk transfer exercises.
//!
//! States (Linux `icsk_ca_state`): **Open** — slow start (HyStart++ in the initial one) or
//! CUBIC congestion avoidance; **Recovery** — entered when the scoreboard first marks a
//! segment lost: one CUBIC reduction, then Proportional Rate Reduction (RFC 6937, Linux
//! `tcp_cwnd_reduction`) sets the window per ACK until everything outstanding at entry is
//! acknowledged, when cwnd = ssthresh; **Loss** — after an RTO: everything in flight is
//! presumed lost, cwnd = 1, slow start back to ssthresh while re-sending.
//!
//! Sending: whenever an input opens the window, lost segments first (lowest sequence first),
//! then new data, as many as `in flight < cwnd` allows, back to back — no pacing.
//!
//! What it sends: a bulk sender ([`TcpSender::new`]) sends its flow's pattern, `total` bytes
//! or forever, and is always window-limited. A stream sender ([`TcpSender::stream`]) sends
//! what an application [wrote](TcpSender::write) — a socket under a relay connection — so
//! it has what a socket adds for an application that is not always ahead of the window: a
//! send buffer with Linux's autotuned limit (backpressure: a write takes only what fits),
//! Linux's cwnd-limited check (the window grows only while it is what limits the sender,
//! `tcp_is_cwnd_limited`), and optionally Nagle's algorithm.
//!
//! Not modelled (documented so the gaps are known): Tail Loss Probe and RACK's reordering
//! timer, F-RTO and undo of spurious reductions, the cwnd-limited check for bulk senders
//! (their growth is instead capped by [`super::WINDOW_BYTES`]; they are never
//! application-limited before their last window), restarting from the initial window after
//! an idle period (`tcp_slow_start_after_idle`), TSO/GSO bursts, and the connection
//! handshake (the flow starts established, with the initial window; a stream's owner
//! models the handshake's round trip before creating it).

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::Timestamp;
use rustox_simulator::SimNode;

use super::cubic::Cubic;
use super::hystart::{HyStart, Verdict};
use super::payload;
use super::rtt::RttEstimator;
use super::scoreboard::{Delivery, Scoreboard};
use super::segment::{echoed_rtt, encode_data, timestamp_clock, Header, Segment};
use super::send_buffer::SendBuffer;
use super::stats::{RoundSample, SlowStartExit, TcpSenderStats};
use super::{mss_for, WINDOW_BYTES};

/// Initial window, segments: RFC 6928, Linux `TCP_INIT_CWND`.
pub const INITIAL_WINDOW: f64 = 10.0;

/// Linux's congestion-control state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    /// Slow start or congestion avoidance.
    Open,
    /// Fast recovery after SACK-detected loss.
    Recovery,
    /// Recovering after a retransmission timeout.
    Loss,
}

/// How a stream sender's socket is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamOptions {
    /// Nagle's algorithm as Linux runs it (RFC 896 with Minshall's variant,
    /// `tcp_nagle_check`): a segment shorter than the MSS waits while an earlier short
    /// segment is unacknowledged. Off is `TCP_NODELAY`.
    pub nagle: bool,
}

/// A stream sender's application side: the bytes written, the socket options, and Linux's
/// record of whether the window is what limits sending (`tcp_cwnd_validate`).
#[derive(Debug, Clone)]
struct Stream {
    buf: SendBuffer,
    options: StreamOptions,
    /// The window limited sending during the current window's worth of data
    /// (`is_cwnd_limited`).
    cwnd_limited: bool,
    /// Most segments outstanding during it (`max_packets_out`).
    max_out: usize,
    /// Where it ends (`cwnd_usage_seq`).
    usage_end: u64,
    /// One past the last short segment sent (`snd_sml`).
    short_end: u64,
}

/// Proportional Rate Reduction state (RFC 6937 §3).
#[derive(Debug, Clone, Copy, Default)]
struct Prr {
    /// cwnd when recovery began (RecoverFS, Linux `prior_cwnd`).
    prior_cwnd: f64,
    /// Segments delivered since recovery began.
    delivered: u64,
    /// Segments sent since recovery began.
    out: u64,
}

/// Sends `total` bytes (or forever) of flow `flow` to a [`super::TcpReceiver`].
#[derive(Debug, Clone)]
pub struct TcpSender {
    flow: u32,
    peer: SocketAddr,
    mss: usize,
    total: Option<u64>,
    start: Timestamp,
    first_send: Option<Timestamp>,
    completed_at: Option<Timestamp>,
    board: Scoreboard,
    rtt: RttEstimator,
    cubic: Cubic,
    hystart: HyStart,
    /// Congestion window, segments.
    cwnd: f64,
    /// Slow-start threshold, segments.
    ssthresh: f64,
    state: CaState,
    /// snd_nxt when Recovery or Loss began (Linux `high_seq`).
    recovery_point: u64,
    prr: Prr,
    rto_at: Option<Timestamp>,
    /// The receiver's latest TSval, echoed in our segments.
    ts_recent: u32,
    round_end: u64,
    rounds: Vec<RoundSample>,
    stats: TcpSenderStats,
    error: Option<String>,
    /// A stream sender's application side; `None` for a bulk sender.
    stream: Option<Box<Stream>>,
}

/// Segments a stream's send buffer holds per segment of window: Linux sizes `sk_sndbuf` to
/// twice the window's memory (`tcp_sndbuf_expand`: 2 × max(cwnd, 10) segments), so an
/// application may keep about one window queued behind the one in flight.
pub const SNDBUF_WINDOWS: f64 = 2.0;

impl TcpSender {
    /// A sender of flow `flow` to `peer` that starts at `start` and sends `total` bytes
    /// (`None`: until the run ends).
    pub fn new(flow: u32, peer: SocketAddr, total: Option<u64>, start: Timestamp) -> Self {
        TcpSender {
            flow,
            peer,
            mss: mss_for(peer),
            total,
            start,
            first_send: None,
            completed_at: None,
            board: Scoreboard::new(),
            rtt: RttEstimator::new(),
            cubic: Cubic::new(),
            hystart: HyStart::new(),
            cwnd: INITIAL_WINDOW,
            ssthresh: f64::INFINITY,
            state: CaState::Open,
            recovery_point: 0,
            prr: Prr::default(),
            rto_at: None,
            ts_recent: 0,
            round_end: 0,
            rounds: Vec::new(),
            stats: TcpSenderStats::default(),
            error: None,
            stream: None,
        }
    }

    /// A sender of flow `flow` to `peer` that sends what is [written](Self::write) to it,
    /// established at `now` (its owner has modelled the handshake).
    pub fn stream(flow: u32, peer: SocketAddr, now: Timestamp, options: StreamOptions) -> Self {
        let mut s = TcpSender::new(flow, peer, None, now);
        s.stream = Some(Box::new(Stream {
            buf: SendBuffer::new(),
            options,
            cwnd_limited: false,
            max_out: 0,
            usage_end: 0,
            short_end: 0,
        }));
        s
    }

    /// The most a stream's send buffer holds, in bytes: [`SNDBUF_WINDOWS`] windows of at
    /// least the initial window, at most [`WINDOW_BYTES`].
    pub fn send_buffer_limit(&self) -> usize {
        let segments = SNDBUF_WINDOWS * self.cwnd.max(INITIAL_WINDOW);
        ((segments * self.mss as f64) as u64).min(WINDOW_BYTES) as usize
    }

    /// Bytes a stream's application may write now (0 for a bulk sender).
    pub fn write_space(&self) -> usize {
        self.stream
            .as_ref()
            .map_or(0, |s| self.send_buffer_limit().saturating_sub(s.buf.len()))
    }

    /// Bytes written and not yet acknowledged (sent or not).
    pub fn buffered(&self) -> usize {
        self.stream.as_ref().map_or(0, |s| s.buf.len())
    }

    /// A stream's application writes `bytes`: takes what fits ([`Self::write_space`]) and
    /// returns how much, as a non-blocking `write` does.
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        let n = bytes.len().min(self.write_space());
        if let Some(s) = self.stream.as_mut() {
            s.buf.write(&bytes[..n]);
        }
        n
    }

    /// The flow id.
    pub fn flow(&self) -> u32 {
        self.flow
    }

    /// Payload bytes per full segment.
    pub fn mss(&self) -> usize {
        self.mss
    }

    /// Counters.
    pub fn stats(&self) -> TcpSenderStats {
        self.stats
    }

    /// Congestion window, segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Slow-start threshold, segments (infinite until the first reduction).
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Segments in flight.
    pub fn in_flight(&self) -> usize {
        self.board.in_flight()
    }

    /// Smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }

    /// Smallest RTT sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.rtt.min_rtt()
    }

    /// The current retransmission timeout, backoff included.
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    /// Congestion-control state.
    pub fn state(&self) -> CaState {
        self.state
    }

    /// Where HyStart++ stands (`Done` once the initial slow start is over).
    pub fn hystart_phase(&self) -> super::hystart::Phase {
        self.hystart.phase()
    }

    /// Bytes the receiver has acknowledged cumulatively.
    pub fn bytes_acked(&self) -> u64 {
        self.board.snd_una()
    }

    /// When the first segment left.
    pub fn first_send(&self) -> Option<Timestamp> {
        self.first_send
    }

    /// When the last byte was acknowledged (finite transfers).
    pub fn completed_at(&self) -> Option<Timestamp> {
        self.completed_at
    }

    /// One sample of cwnd, in-flight and SRTT per round trip.
    pub fn rounds(&self) -> &[RoundSample] {
        &self.rounds
    }

    /// A protocol violation seen (an ACK of data never sent), if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn has_new_data(&self) -> bool {
        match &self.stream {
            Some(s) => self.board.snd_nxt() < s.buf.end(),
            None => self.total.is_none_or(|t| self.board.snd_nxt() < t),
        }
    }

    /// Linux's `tcp_cwnd_validate` after a send (`limited`: the window stopped the sender
    /// with data waiting): the record of the current window's use starts over when the
    /// previous window is acknowledged, and otherwise only grows.
    fn note_window_use(&mut self, limited: bool) {
        let (snd_una, snd_nxt, out) = (
            self.board.snd_una(),
            self.board.snd_nxt(),
            self.board.outstanding(),
        );
        if let Some(s) = self.stream.as_mut() {
            if snd_una >= s.usage_end || limited || (!s.cwnd_limited && out > s.max_out) {
                s.cwnd_limited = limited;
                s.max_out = out;
                s.usage_end = snd_nxt;
            }
        }
    }

    /// Whether the window may grow (Linux `tcp_is_cwnd_limited`): it limited sending, or in
    /// slow start it is less than twice what was outstanding. Bulk senders always may.
    fn may_grow(&self) -> bool {
        self.stream.as_ref().is_none_or(|s| {
            s.cwnd_limited || (self.cwnd < self.ssthresh && self.cwnd < 2.0 * s.max_out as f64)
        })
    }

    fn max_cwnd(&self) -> f64 {
        (WINDOW_BYTES / self.mss as u64) as f64
    }

    fn on_ack(&mut self, now: Timestamp, header: Header, sacks: &[(u64, u64)]) {
        let ack = header.number;
        if ack > self.board.snd_nxt() {
            self.error = Some(format!(
                "flow {}: ACK of byte {ack} beyond snd_nxt {}",
                self.flow,
                self.board.snd_nxt()
            ));
            return;
        }
        if ack < self.board.snd_una() {
            // Older than what we know: reordered or duplicated, nothing to learn.
            return;
        }
        self.stats.acks_received += 1;
        self.ts_recent = header.tsval;
        let snd_nxt = self.board.snd_nxt();
        let mut blocks = [(0u64, 0u64); super::segment::MAX_SACK_BLOCKS];
        let mut n = 0;
        for &(s, e) in sacks {
            if s >= ack && e <= snd_nxt {
                blocks[n] = (s, e);
                n += 1;
            }
        }
        let delivery = self.board.on_ack(ack, &blocks[..n]);
        self.stats.bytes_acked = self.board.snd_una();
        let snd_una = self.board.snd_una();
        if let Some(s) = self.stream.as_mut() {
            s.buf.release(snd_una);
        }

        let echoed = || {
            (delivery.segments > 0)
                .then(|| echoed_rtt(now, header.tsecr))
                .flatten()
        };
        if let Some(sample) = delivery.srtt_sent_at().map(|t| now - t).or_else(echoed) {
            self.rtt.on_sample(sample);
        }
        let delay_sample = delivery.newest_sent_at().map(|t| now - t).or_else(echoed);

        if delivery.cumulative_bytes > 0 {
            // RFC 6298 §5.3: restart the timer on an ACK of new data.
            self.rto_at = (self.board.outstanding() > 0).then(|| now + self.rtt.rto());
        }
        if self.total.is_some_and(|t| self.board.snd_una() >= t) && self.completed_at.is_none() {
            self.completed_at = Some(now);
        }

        if self.state != CaState::Open && self.board.snd_una() >= self.recovery_point {
            if self.state == CaState::Recovery {
                // Linux `tcp_end_cwnd_reduction`.
                self.cwnd = self.ssthresh;
            }
            self.state = CaState::Open;
        }
        let newly_lost = self.board.detect_losses();
        self.stats.segments_marked_lost += newly_lost as u64;
        if self.state == CaState::Open && self.board.lost() > 0 {
            self.enter_recovery(now);
        }
        match self.state {
            CaState::Recovery => self.reduce_proportionally(&delivery, newly_lost),
            CaState::Open | CaState::Loss => {
                if delivery.segments > 0 {
                    self.grow(now, delivery.segments as f64, delay_sample);
                }
            }
        }
        if self.board.snd_una() >= self.round_end {
            self.round_end = self.board.snd_nxt();
            self.rounds.push(RoundSample {
                at: now,
                cwnd: self.cwnd,
                in_flight: self.board.in_flight(),
                srtt: self.rtt.srtt(),
                bytes_acked: self.board.snd_una(),
            });
        }
    }

    fn end_slow_start(&mut self, now: Timestamp, how: SlowStartExit) {
        if self.hystart.is_active() {
            self.hystart.on_congestion();
            self.stats.slow_start_exit = Some((now, how));
        }
    }

    fn enter_recovery(&mut self, now: Timestamp) {
        self.stats.loss_episodes += 1;
        self.end_slow_start(now, SlowStartExit::Loss);
        self.ssthresh = self.cubic.on_congestion_event(self.cwnd);
        self.prr = Prr {
            prior_cwnd: self.cwnd,
            delivered: 0,
            out: 0,
        };
        self.recovery_point = self.board.snd_nxt();
        self.state = CaState::Recovery;
    }

    /// RFC 6937 PRR as Linux's `tcp_cwnd_reduction` runs it: while more than ssthresh is in
    /// flight, send in proportion to what is delivered (ssthresh / prior_cwnd of it); below
    /// ssthresh, slow-start back up to it (the reduction bound, PRR-SSRB).
    fn reduce_proportionally(&mut self, delivery: &Delivery, newly_lost: usize) {
        let delivered = delivery.segments;
        if delivered == 0 {
            return;
        }
        self.prr.delivered += delivered;
        let in_flight = self.board.in_flight() as i64;
        let ssthresh = self.ssthresh.floor() as i64;
        let delta = ssthresh - in_flight;
        let out = self.prr.out as i64;
        let sndcnt = if delta < 0 {
            let prior = self.prr.prior_cwnd.max(1.0);
            (ssthresh as f64 * self.prr.delivered as f64 / prior).ceil() as i64 - out
        } else {
            let mut s = (self.prr.delivered as i64 - out).max(delivered as i64);
            if delivery.cumulative_bytes > 0 && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Linux forces the fast retransmit out on entering recovery.
        let sndcnt = sndcnt.max(i64::from(self.prr.out == 0));
        self.cwnd = (in_flight + sndcnt).max(1) as f64;
    }

    /// Slow start (HyStart++ in the initial one) below ssthresh, CUBIC above.
    fn grow(&mut self, now: Timestamp, acked: f64, delay_sample: Option<Duration>) {
        if self.state == CaState::Open && self.hystart.is_active() {
            let verdict =
                self.hystart
                    .on_ack(self.board.snd_una(), self.board.snd_nxt(), delay_sample);
            if verdict == Verdict::EnterCongestionAvoidance {
                self.ssthresh = self.cwnd;
                self.cubic.on_slow_start_exit();
                self.stats.slow_start_exit = Some((now, SlowStartExit::HyStart));
            }
        }
        if self.cwnd < self.ssthresh {
            let increase = if self.hystart.is_active() {
                self.hystart.growth(acked)
            } else {
                acked
            };
            if self.may_grow() {
                self.cwnd = (self.cwnd + increase).min(self.ssthresh);
            }
        } else if self.may_grow() {
            let srtt = self.rtt.srtt().unwrap_or(Duration::ZERO);
            self.cwnd = self.cubic.on_ack(now, self.cwnd, acked, srtt);
        }
        self.cwnd = self.cwnd.min(self.max_cwnd());
    }

    fn on_rto(&mut self, now: Timestamp) {
        self.stats.rto_count += 1;
        self.end_slow_start(now, SlowStartExit::Timeout);
        if self.state == CaState::Open {
            // Linux `tcp_enter_loss` recomputes ssthresh only outside a recovery episode.
            self.ssthresh = self.cubic.on_timeout(self.cwnd);
        } else {
            self.cubic.reset();
        }
        self.board.mark_all_lost();
        self.cwnd = 1.0;
        self.state = CaState::Loss;
        self.recovery_point = self.board.snd_nxt();
        self.rtt.back_off();
        self.rto_at = Some(now + self.rtt.rto());
    }
}

impl SimNode for TcpSender {
    fn handle_datagram(&mut self, now: Timestamp, _: SocketAddr, _: SocketAddr, bytes: &[u8]) {
        match Segment::parse(bytes) {
            Ok(Segment::Ack { header, sacks }) if header.flow == self.flow => {
                self.on_ack(now, header, sacks.as_slice())
            }
            _ => self.stats.malformed += 1,
        }
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        if self.rto_at.is_some_and(|t| t <= now) {
            if self.board.outstanding() > 0 {
                self.on_rto(now);
            } else {
                self.rto_at = None;
            }
        }
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        if now < self.start || self.error.is_some() {
            return None;
        }
        let window = self.cwnd.floor().max(1.0) as usize;
        if self.board.in_flight() >= window {
            if self.has_new_data() || self.board.lost() > 0 {
                self.note_window_use(true);
            }
            return None;
        }
        let seg = match self.board.retransmit_next_lost(now) {
            Some(seg) => {
                self.stats.retransmitted_segments += 1;
                seg
            }
            None => {
                if !self.has_new_data() {
                    return None;
                }
                let remaining = match &self.stream {
                    Some(s) => s.buf.end() - self.board.snd_nxt(),
                    None => self.total.map_or(u64::MAX, |t| t - self.board.snd_nxt()),
                };
                let len = remaining.min(self.mss as u64);
                if self.board.outstanding_bytes() + len > WINDOW_BYTES {
                    return None;
                }
                if let Some(s) = &self.stream {
                    let short = len < self.mss as u64;
                    if short
                        && s.options.nagle
                        && self.board.outstanding() > 0
                        && s.short_end > self.board.snd_una()
                    {
                        return None;
                    }
                }
                let seg = self.board.send_new(len as u32, now);
                if let Some(s) = self.stream.as_mut() {
                    if len < self.mss as u64 {
                        s.short_end = seg.end();
                    }
                }
                seg
            }
        };
        self.note_window_use(false);
        self.stats.segments_sent += 1;
        if self.state == CaState::Recovery {
            self.prr.out += 1;
        }
        self.first_send.get_or_insert(now);
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
        let header = Header {
            number: seg.seq,
            tsval: timestamp_clock(now),
            tsecr: self.ts_recent,
            flow: self.flow,
        };
        let flow = self.flow;
        let stream = self.stream.as_deref();
        let bytes = encode_data(&header, seg.len as usize, |p| match stream {
            Some(s) => s.buf.copy_out(seg.seq, p),
            None => payload::fill(flow, seg.seq, p),
        });
        Some((self.peer, bytes))
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        if self.first_send.is_none() && self.start > Timestamp::ZERO && self.stream.is_none() {
            return Some(self.start);
        }
        self.rto_at
    }

    fn check_invariants(&self) -> Result<(), String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.board.check()?;
        if self.board.outstanding_bytes() > WINDOW_BYTES {
            return Err(format!(
                "{} bytes outstanding, window {WINDOW_BYTES}",
                self.board.outstanding_bytes()
            ));
        }
        if self.cwnd.is_nan() || self.cwnd < 1.0 {
            return Err(format!("cwnd {} below one segment", self.cwnd));
        }
        if self.board.outstanding() > 0 && self.rto_at.is_none() {
            return Err("data outstanding without a retransmission timer".into());
        }
        if let Some(s) = &self.stream {
            if s.buf.end() - s.buf.len() as u64 != self.board.snd_una()
                || s.buf.end() < self.board.snd_nxt()
            {
                return Err(format!(
                    "send buffer [{}, {}) does not hold [snd_una {}, snd_nxt {})",
                    s.buf.end() - s.buf.len() as u64,
                    s.buf.end(),
                    self.board.snd_una(),
                    self.board.snd_nxt()
                ));
            }
        }
        Ok(())
    }
}
