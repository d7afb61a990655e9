//! A model of c-toxcore 0.2.18's file sending: net_crypto's send-rate control and RTT
//! (docs/protocol.md §2.10, §2.11), Messenger's file-chunk scheduling (§3.6) and the cadence of
//! the `tox_iterate` loop that runs both, so the simulator and `rustox send --controller
//! legacy` move a file as c-toxcore does. Checked against c-toxcore itself on the emulated
//! links (`real-bench --ctoxcore`: Debian's libtoxcore 0.2.18 and this model, real and
//! simulated, on the same profiles; the figures are in the commit that last changed this
//! file). It reproduces c-toxcore's flaws on purpose:
//!
//! - RTT (`handle_data_packet_core`, `handle_request_packet`): one `rtt_time` starting at
//!   DEFAULT_PING_CONNECTION = 1000 ms, **only ever lowered**, sampled from the packets'
//!   *last* send time (a resend overwrites `sent_time`), so a resent packet whose earlier
//!   copy is acknowledged yields a tiny sample that sticks for the rest of the connection
//!   (PR #1323's 500 ms → 51 ms collapse). The Karn invariant of the other controllers ("no
//!   RTT sample from a resent packet") deliberately does not hold here.
//! - Resend on NACK iff `sent_time + rtt_time < now` (`handle_request_packet`); no
//!   retransmission timer, no PTO; tail loss is repaired only when the peer learns
//!   `buffer_end` from a later packet (a request, at least every
//!   CRYPTO_SEND_PACKET_INTERVAL = 1000 ms).
//! - Rate (`send_crypto_packets`): AIMD on PACKET_COUNTER_AVERAGE_INTERVAL = 50 ms ticks,
//!   `min_speed` = packets written over 12 ticks divided by the *nominal* 600 ms, ×1.2 with
//!   no congestion event for CONGESTION_EVENT_TIMEOUT = 1 s, ×0.9 otherwise, damped when
//!   the send queue exceeds SEND_QUEUE_RATIO = 2 s of rate; token buckets `packets_left`
//!   / `packets_left_requested` refilled from elapsed time; "congestion event" = the
//!   resend pass used up the whole new-data budget.
//! - File chunks (Messenger's `do_reqchunk_filecb`, `send_file_data`): a chunk is written
//!   only while `crypto_num_free_sendqueue_slots` (= `packets_left` on a busy link) is at
//!   least MIN_SLOTS_FREE = 16, so a transfer leaves 16 tokens in the bucket after every
//!   iteration. This is what keeps c-toxcore's congestion events rare: an iteration's
//!   resends start one only when they number more than those 16 plus the iteration's
//!   refill. (A model that let the file drain the bucket to 0 turned every resend into a
//!   congestion event, and ran 10–30× slower than c-toxcore.)
//! - The loop (`tox_iterate` per `tox_iteration_interval`): all of the above runs once per
//!   iteration, at one millisecond clock reading. A sender iterates every
//!   `floor(1000 / packet_send_rate) + 1` ms (net_crypto's `current_sleep_time`), at most
//!   every MIN_RUN_INTERVAL = 50 ms (`messenger_run_interval`); a peer receiving a file
//!   every 1 ms (`m_is_receiving_file`). The 50 ms tick therefore lasts until the first
//!   iteration after 50 ms: up to 100 ms at low rates, where dividing by the nominal
//!   600 ms doubles `min_speed`. Resends go only during an iteration, and a request that
//!   arrives between iterations is judged (`sent_time + rtt_time < now`) at the next one.
//!
//! What it is not: the rest of Messenger and the DHT (their packets are not congestion
//! controlled and small beside a file), `maximum_speed_reached` (a failed `sendto`; the
//! transport's sends do not fail), TCP relays (the fixed 500 ms resend threshold on TCP),
//! and the CPU time a real iteration takes. "Receiving a file" is modelled as receiving
//! lossless packets faster than CRYPTO_PACKET_MIN_RATE.
//!
//! The transport runs it through the [`Controller`] hooks where c-toxcore differs from us
//! (token buckets instead of window and pacer, resend on NACK, no loss detection or PTO,
//! its own RTT and request interval, its own iteration clock); its window and pacing
//! callbacks do nothing.

use std::time::Duration;

use super::{AckEvent, Controller, LossEvent, NackResponse, MAX_PACKET};
use crate::transport::rtt::RttEstimator;
use crate::transport::TransportStats;
use crate::Timestamp;

/// PACKET_COUNTER_AVERAGE_INTERVAL (ms).
const TICK_MS: u64 = 50;
/// CONGESTION_QUEUE_ARRAY_SIZE.
const QUEUE_ARRAY: usize = 12;
/// CONGESTION_LAST_SENT_ARRAY_SIZE.
const LAST_SENT_ARRAY: usize = 24;
/// CONGESTION_EVENT_TIMEOUT (ms).
const CONGESTION_EVENT_TIMEOUT_MS: u64 = 1000;
/// SEND_QUEUE_RATIO.
const SEND_QUEUE_RATIO: f64 = 2.0;
/// CRYPTO_PACKET_MIN_RATE (packets/s).
const MIN_RATE: f64 = 4.0;
/// CRYPTO_MIN_QUEUE_LENGTH.
const MIN_QUEUE_LENGTH: u32 = 64;
/// Messenger's MIN_SLOTS_FREE (CRYPTO_MIN_QUEUE_LENGTH / 4): free send-queue slots a file
/// transfer leaves for other packets (`do_reqchunk_filecb`, `send_file_data`).
const MIN_SLOTS_FREE: u32 = 16;
/// Messenger's MIN_RUN_INTERVAL (ms): the longest sleep `messenger_run_interval` asks for.
const MAX_ITERATION_MS: u64 = 50;
/// How long after an iteration began its resend pass may still send: c-toxcore does the
/// whole pass at one `current_time_monotonic` reading (ms resolution); our driver may
/// poll a little after the wake-up it was given.
const ITERATION_WINDOW_US: u64 = 1000;
/// DEFAULT_PING_CONNECTION: initial `rtt_time` (ms).
const INITIAL_RTT_MS: u64 = 1000;
/// CRYPTO_SEND_PACKET_INTERVAL (ms): idle request interval.
const REQUEST_INTERVAL_MS: f64 = 1000.0;
/// REQUEST_PACKETS_COMPARE_CONSTANT as 0.18 really computes it (0.125 × 100).
const REQUEST_COMPARE: f64 = 12.5;

/// c-toxcore's per-connection congestion state.
#[derive(Debug, Clone)]
pub(crate) struct Legacy {
    rtt_time_ms: u64,
    rtt_samples: u64,
    latest_sample_ms: Option<u64>,
    // (a) measurement tick
    packet_counter: u32,
    packet_counter_set_ms: u64,
    recv_rate: f64,
    packets_sent: u32,
    packets_resent: u32,
    queue_size: [u32; QUEUE_ARRAY],
    sent: [u32; LAST_SENT_ARRAY],
    resent: [u32; LAST_SENT_ARRAY],
    counter: usize,
    send_rate: f64,
    send_rate_requested: f64,
    last_congestion_event_ms: u64,
    // (b) token buckets
    first_run: bool,
    packets_left: u32,
    packets_left_requested: u32,
    last_left_set_ms: u64,
    last_left_requested_set_ms: u64,
    left_remainder: f64,
    left_requested_remainder: f64,
    // the tox_iterate loop
    /// When the next iteration is due (ms).
    next_iteration_ms: u64,
    /// When the last iteration ran.
    last_iteration: Option<Timestamp>,
    /// A resend waits for the next iteration.
    resend_waiting: bool,
}

impl Legacy {
    pub(crate) fn new(now: Timestamp) -> Self {
        Self {
            rtt_time_ms: INITIAL_RTT_MS,
            rtt_samples: 0,
            latest_sample_ms: None,
            packet_counter: 0,
            packet_counter_set_ms: now.as_millis(),
            recv_rate: 0.0,
            packets_sent: 0,
            packets_resent: 0,
            queue_size: [0; QUEUE_ARRAY],
            sent: [0; LAST_SENT_ARRAY],
            resent: [0; LAST_SENT_ARRAY],
            counter: 0,
            send_rate: MIN_RATE,
            send_rate_requested: MIN_RATE,
            last_congestion_event_ms: 0,
            first_run: true,
            packets_left: 0,
            packets_left_requested: 0,
            last_left_set_ms: 0,
            last_left_requested_set_ms: 0,
            left_remainder: 0.0,
            left_requested_remainder: 0.0,
            next_iteration_ms: 0,
            last_iteration: None,
            resend_waiting: false,
        }
    }

    /// c-toxcore's `rtt_time`.
    fn rtt(&self) -> Duration {
        Duration::from_millis(self.rtt_time_ms)
    }
    fn latest_sample(&self) -> Option<Duration> {
        self.latest_sample_ms.map(Duration::from_millis)
    }
    fn rtt_samples(&self) -> u64 {
        self.rtt_samples
    }
    #[cfg(test)]
    fn packets_left(&self) -> u32 {
        self.packets_left
    }

    /// `packet_send_rate` in packets per second.
    fn send_rate(&self) -> f64 {
        self.send_rate
    }

    /// An RTT candidate: the (overwritten) send time of an acknowledged packet (§2.6 step 6),
    /// timed at the iteration that handles the ack ([`Self::handled_at_ms`]): c-toxcore
    /// reads its clock once at the start of `tox_iterate` (`mono_time_update`) and handles
    /// the packets `networking_poll` finds then, so an ack that arrives between iterations
    /// yields a sample up to one iteration (2–50 ms) longer than the path. Timing it at the
    /// ack's arrival instead let `rtt_time` fall that much lower, which at low rates (50 ms
    /// iterations after a congestion event) meant more resends of packets still on their
    /// way: the 2 Mbit/s, 150 ms, 1 % path (`slow150`, 4 MiB, seeds 1–3) ran at 0.66, 0.72,
    /// 0.74 Mbit/s against c-toxcore's 0.74–1.10 on real sockets; timed at the iteration,
    /// 0.80, 1.05, 0.82.
    fn on_rtt_candidate(&mut self, now: Timestamp, sent_time: Timestamp) {
        let sample = self
            .handled_at_ms(now)
            .saturating_sub(sent_time.as_millis());
        self.rtt_samples += 1;
        self.latest_sample_ms = Some(sample);
        // "if (rtt_time < conn->rtt_time) conn->rtt_time = rtt_time": only ever lowered.
        self.rtt_time_ms = self.rtt_time_ms.min(sample);
    }

    /// §2.7: a NACKed packet is resent iff `sent_time + rtt_time < now`, `now` being the
    /// iteration that handles the request.
    fn should_resend(&self, now: Timestamp, last_sent: Timestamp) -> bool {
        last_sent.as_millis() + self.rtt_time_ms < self.handled_at_ms(now)
    }

    /// `tox_iteration_interval` (ms) as the state stands: 1 while a file is being received
    /// (`m_is_receiving_file`; here: lossless packets arriving faster than
    /// CRYPTO_PACKET_MIN_RATE), else `messenger_run_interval` = min(`current_sleep_time`,
    /// MIN_RUN_INTERVAL), where `send_crypto_packets` sets `current_sleep_time` to
    /// `floor(1000 / packet_send_rate) + 1` when the rate counts (above 1.5 ×
    /// CRYPTO_PACKET_MIN_RATE), else to CRYPTO_SEND_PACKET_INTERVAL.
    fn iteration_interval_ms(&self) -> u64 {
        if self.recv_rate > MIN_RATE {
            return 1;
        }
        if self.send_rate > MIN_RATE * 1.5 {
            return ((1000.0 / self.send_rate) as u64 + 1).min(MAX_ITERATION_MS);
        }
        MAX_ITERATION_MS
    }

    /// The ms of the iteration that handles an input arriving at `now`: the first one at
    /// or after it (`networking_poll` runs at the start of `tox_iterate`).
    fn handled_at_ms(&self, now: Timestamp) -> u64 {
        let t = now.as_millis();
        if t <= self.next_iteration_ms {
            return self.next_iteration_ms;
        }
        let i = self.iteration_interval_ms();
        self.next_iteration_ms + (t - self.next_iteration_ms).div_ceil(i) * i
    }

    /// One `send_crypto_packets` pass, if an iteration is due at `now`: the tick, then
    /// the refill (the resend pass follows through [`Self::take_resend_token`]).
    fn iterate(&mut self, now: Timestamp, queue_len: u32) {
        let t = now.as_millis();
        if t < self.next_iteration_ms {
            return;
        }
        self.tick(now, queue_len);
        self.refill(now);
        self.last_iteration = Some(now);
        self.resend_waiting = false;
        self.next_iteration_ms = t + self.iteration_interval_ms();
    }

    /// Whether `now` lies within the iteration that ran last (its resend pass).
    fn in_iteration(&self, now: Timestamp) -> bool {
        self.last_iteration
            .is_some_and(|at| now.as_micros() < at.as_micros() + ITERATION_WINDOW_US)
    }

    /// When the next iteration with work runs. Every iteration when they are 2 ms or more
    /// apart (a sender's); at 1 ms (a receiver's) only those where a tick or a refill is
    /// due or a resend waits: the others change nothing.
    fn next_wake(&self) -> Timestamp {
        if self.iteration_interval_ms() > 1 || self.resend_waiting {
            return Timestamp::from_millis(self.next_iteration_ms);
        }
        let tick = self.packet_counter_set_ms + TICK_MS + 1;
        let refill = (self.refill_period_ms(self.send_rate) + self.last_left_set_ms)
            .min(self.refill_period_ms(self.send_rate_requested) + self.last_left_requested_set_ms);
        Timestamp::from_millis(tick.min(refill).max(self.next_iteration_ms))
    }

    /// `(uint64_t)((1000.0 / rate) + 0.5)`: how long a bucket waits between refills (ms).
    fn refill_period_ms(&self, rate: f64) -> u64 {
        ((1000.0 / rate) + 0.5) as u64
    }

    /// A lossless packet was received (`packet_counter++`).
    fn on_received(&mut self) {
        self.packet_counter = self.packet_counter.saturating_add(1);
    }

    /// (a) the measurement tick, if due. `queue_len` = `num_packets_array(send_array)`.
    fn tick(&mut self, now: Timestamp, queue_len: u32) {
        let t = now.as_millis();
        if t <= self.packet_counter_set_ms + TICK_MS {
            return;
        }
        let dt = (t - self.packet_counter_set_ms) as f64;
        self.recv_rate = f64::from(self.packet_counter) / (dt / 1000.0);
        self.packet_counter = 0;
        self.packet_counter_set_ms = t;
        let packets_sent = std::mem::take(&mut self.packets_sent);
        let packets_resent = std::mem::take(&mut self.packets_resent);

        let pos = self.counter % QUEUE_ARRAY;
        self.queue_size[pos] = queue_len;
        let growth =
            i64::from(self.queue_size[pos]) - i64::from(self.queue_size[(pos + 1) % QUEUE_ARRAY]);
        let n_p_pos = self.counter % LAST_SENT_ARRAY;
        self.sent[n_p_pos] = packets_sent;
        self.resent[n_p_pos] = packets_resent;
        self.counter = (self.counter + 1) % (QUEUE_ARRAY * LAST_SENT_ARRAY);

        // "TODO(irungentoo): use real delay"
        let rem = LAST_SENT_ARRAY - QUEUE_ARRAY;
        let delay = ((self.rtt_time_ms as f64 / TICK_MS as f64) + 0.5) as usize;
        let delay = delay.min(rem);
        let (mut total_sent, mut total_resent) = (0i64, 0i64);
        for j in 0..QUEUE_ARRAY {
            let ind = (j + (rem - delay) + n_p_pos) % LAST_SENT_ARRAY;
            total_sent += i64::from(self.sent[ind]);
            total_resent += i64::from(self.resent[ind]);
        }
        if growth > 0 {
            total_sent -= growth;
        } else if total_resent > -growth {
            total_resent = -growth;
        }
        // The nominal 12 × 50 ms, whatever the real tick length was.
        let span_ms = (QUEUE_ARRAY as u64 * TICK_MS) as f64;
        let mut min_speed = 1000.0 * total_sent as f64 / span_ms;
        let min_speed_request = 1000.0 * (total_sent + total_resent) as f64 / span_ms;
        if min_speed < MIN_RATE {
            min_speed = MIN_RATE;
        }
        let ratio = f64::from(queue_len) / min_speed;
        self.send_rate = if ratio > SEND_QUEUE_RATIO && MIN_QUEUE_LENGTH < queue_len {
            min_speed * (1.0 / (ratio / SEND_QUEUE_RATIO))
        } else if self.last_congestion_event_ms + CONGESTION_EVENT_TIMEOUT_MS < t {
            min_speed * 1.2
        } else {
            min_speed * 0.9
        };
        self.send_rate_requested = min_speed_request * 1.2;
        if self.send_rate < MIN_RATE {
            self.send_rate = MIN_RATE;
        }
        if self.send_rate_requested < self.send_rate {
            self.send_rate_requested = self.send_rate;
        }
    }

    /// (b) token-bucket refill, evaluated on every call as `send_crypto_packets` does.
    fn refill(&mut self, now: Timestamp) {
        let t = now.as_millis();
        if self.first_run {
            self.first_run = false;
            self.last_left_set_ms = t;
            self.last_left_requested_set_ms = t;
            self.packets_left = MIN_QUEUE_LENGTH;
            self.packets_left_requested = MIN_QUEUE_LENGTH;
            return;
        }
        if self.refill_period_ms(self.send_rate) + self.last_left_set_ms <= t {
            let mut n = self.send_rate * ((t - self.last_left_set_ms) as f64 / 1000.0);
            n += self.left_remainder;
            let num = n as u32;
            self.left_remainder = n - f64::from(num);
            let cap = num.saturating_mul(4).saturating_add(MIN_QUEUE_LENGTH);
            if self.packets_left > cap {
                self.packets_left = cap;
            } else {
                self.packets_left = self.packets_left.saturating_add(num);
            }
            self.last_left_set_ms = t;
        }
        if self.refill_period_ms(self.send_rate_requested) + self.last_left_requested_set_ms <= t {
            let mut n =
                self.send_rate_requested * ((t - self.last_left_requested_set_ms) as f64 / 1000.0);
            n += self.left_requested_remainder;
            let num = n as u32;
            self.left_requested_remainder = n - f64::from(num);
            self.packets_left_requested = num;
            self.last_left_requested_set_ms = t;
        }
        if self.packets_left > self.packets_left_requested {
            self.packets_left_requested = self.packets_left;
        }
    }

    /// (d) how many file chunks may be written now, given `pending` packets waiting for
    /// the resend pass. c-toxcore runs the resend pass (c) right after the refill, and
    /// Messenger's `do_reqchunk_filecb` asks for chunks after it in the same iteration, so
    /// resends take their tokens first: `r = min(pending, packets_left_requested)` leave
    /// `packets_left − r` (nothing once `r ≥ packets_left`), of which the file takes all
    /// but MIN_SLOTS_FREE (`crypto_num_free_sendqueue_slots − MIN_SLOTS_FREE`; on a busy
    /// link `packets_left` is the smaller of the two).
    fn write_budget(&self, pending: u32) -> u32 {
        let r = pending.min(self.packets_left_requested);
        self.packets_left
            .saturating_sub(r)
            .saturating_sub(MIN_SLOTS_FREE)
    }

    /// (d) a congestion-controlled packet was written.
    fn on_write(&mut self) {
        self.packets_left = self.packets_left.saturating_sub(1);
        self.packets_left_requested = self.packets_left_requested.saturating_sub(1);
        self.packets_sent = self.packets_sent.saturating_add(1);
    }

    /// (c) may the resend pass send one more packet?
    fn can_resend(&self) -> bool {
        self.packets_left_requested > 0
    }

    /// (c) the resend pass sent one packet; per packet this is c-toxcore's batch rule
    /// "if r < packets_left: packets_left −= r, else congestion event".
    fn on_resend(&mut self, now: Timestamp) {
        self.packets_left_requested = self.packets_left_requested.saturating_sub(1);
        self.packets_resent = self.packets_resent.saturating_add(1);
        if self.packets_left > 1 {
            self.packets_left -= 1;
        } else {
            self.packets_left = 0;
            self.last_congestion_event_ms = now.as_millis();
        }
    }

    /// Window in bytes equivalent to the token bucket (for statistics only).
    fn window_bytes(&self) -> u64 {
        u64::from(self.packets_left) * MAX_PACKET
    }
}

/// The model behind the transport's controller hooks (each hook's doc says what c-toxcore
/// does there). It has no window and no pacing rate: its token buckets limit the sender.
impl Controller for Legacy {
    fn on_sent(&mut self, _: Timestamp, _: u64, _: u64) {}
    fn on_ack(&mut self, _: &AckEvent, _: &RttEstimator) {}
    fn on_loss(&mut self, _: &LossEvent, _: &RttEstimator) {}
    fn on_spurious_loss(&mut self) {}
    fn window(&self) -> u64 {
        u64::MAX
    }
    fn pacing_rate(&self, _: &RttEstimator) -> Option<u64> {
        None
    }
    fn in_slow_start(&self) -> bool {
        false
    }

    fn paces(&self) -> bool {
        false
    }

    /// Tokens change only in an iteration (the refill); between iterations a write takes
    /// what the last one left, like a client answering a chunk request late.
    fn bulk_write_budget(&self, _: Timestamp, pending_resends: u32) -> Option<u32> {
        Some(self.write_budget(pending_resends))
    }

    fn admit_bulk_write(&mut self, _: Timestamp, pending_resends: u32) -> bool {
        self.write_budget(pending_resends) > 0
    }

    fn on_bulk_write(&mut self) {
        self.on_write();
    }

    /// `send_requested_packets` runs once per iteration, right after the refill; a resend
    /// NACKed between iterations waits for the next one.
    fn take_resend_token(&mut self, now: Timestamp) -> bool {
        if !self.in_iteration(now) {
            self.resend_waiting = true;
            return false;
        }
        if !self.can_resend() {
            return false;
        }
        self.on_resend(now);
        true
    }

    fn on_iteration(&mut self, now: Timestamp, send_queue_len: u32) {
        self.iterate(now, send_queue_len);
    }

    /// The tick is part of the iteration ([`Self::refill_deadline`]).
    fn tick_deadline(&self) -> Option<Timestamp> {
        None
    }

    /// The next iteration of the `tox_iterate` loop that has work.
    fn refill_deadline(&self) -> Option<Timestamp> {
        Some(self.next_wake())
    }

    fn on_nack(&self, now: Timestamp, last_sent: Timestamp) -> NackResponse {
        if self.should_resend(now, last_sent) {
            NackResponse::Resend
        } else {
            NackResponse::Ignore
        }
    }

    fn detects_loss(&self) -> bool {
        false
    }

    fn uses_rtt_estimator(&self) -> bool {
        false
    }

    fn on_acked_send_time(&mut self, now: Timestamp, last_sent: Timestamp) {
        self.on_rtt_candidate(now, last_sent);
    }

    fn fill_stats(&self, _: &RttEstimator, s: &mut TransportStats) {
        let has = self.rtt_samples() > 0;
        s.smoothed_rtt = Some(self.rtt());
        s.min_rtt = has.then(|| self.rtt());
        s.latest_rtt = self.latest_sample();
        s.rtt_var = None;
        s.rtt_samples = self.rtt_samples();
        s.cwnd_bytes = self.window_bytes();
        s.pacing_rate = (self.send_rate() * MAX_PACKET as f64) as u64;
    }

    fn on_packet_received(&mut self) {
        self.on_received();
    }

    /// The request interval of `send_crypto_packets` (§2.7). Its tests are strict in
    /// whole ms (`now - last_request_packet_sent > interval`, `1000 + last < now`), so a
    /// request goes 1 ms after the interval has passed.
    fn request_interval(&self, recv_len: u32) -> Option<Duration> {
        let ms = if self.recv_rate <= MIN_RATE {
            REQUEST_INTERVAL_MS
        } else {
            let i1 = REQUEST_COMPARE * (self.recv_rate + 1.0) / (f64::from(recv_len) + 1.0);
            let i2 = 1000.0 * MIN_RATE / self.recv_rate + 50.0;
            i1.min(i2).clamp(TICK_MS as f64, REQUEST_INTERVAL_MS)
        };
        Some(Duration::from_millis(ms as u64 + 1))
    }

    fn sends_tail_entries(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_only_ever_falls() {
        let mut l = Legacy::new(Timestamp::ZERO);
        l.on_rtt_candidate(Timestamp::from_millis(600), Timestamp::from_millis(100));
        assert_eq!(l.rtt(), Duration::from_millis(500));
        l.on_rtt_candidate(Timestamp::from_millis(1000), Timestamp::from_millis(995));
        assert_eq!(l.rtt(), Duration::from_millis(5));
        l.on_rtt_candidate(Timestamp::from_millis(2000), Timestamp::from_millis(1000));
        assert_eq!(l.rtt(), Duration::from_millis(5));
    }

    #[test]
    fn an_ack_between_iterations_is_timed_at_the_iteration_that_handles_it() {
        let mut l = Legacy::new(Timestamp::ZERO);
        l.on_iteration(Timestamp::ZERO, 0);
        assert_eq!(l.iteration_interval_ms(), MAX_ITERATION_MS);
        // A packet sent at 0 ms acknowledged at 20 ms is read at the 50 ms iteration.
        l.on_rtt_candidate(Timestamp::from_millis(20), Timestamp::ZERO);
        assert_eq!(l.rtt(), Duration::from_millis(50));
        assert_eq!(l.latest_sample(), Some(Duration::from_millis(50)));
    }

    #[test]
    fn buckets_start_at_64_and_rate_grows_by_1_2_per_tick() {
        let mut l = Legacy::new(Timestamp::ZERO);
        l.refill(Timestamp::ZERO);
        assert_eq!(l.packets_left(), 64);
        // Send 60 packets per tick for 40 ticks with an empty queue: the rate follows
        // 1.2 × (sent over 12 ticks / 0.6 s).
        let mut t = Timestamp::ZERO;
        for _ in 0..40 {
            for _ in 0..60 {
                l.on_write();
            }
            t += Duration::from_millis(51);
            l.tick(t, 0);
        }
        // 60 per 51 ms tick / (0.6 s nominal per 12 ticks) = 1200 pkt/s, × 1.2.
        assert!((l.send_rate() - 1440.0).abs() < 1.0, "{}", l.send_rate());
    }

    /// Runs iterations from `from` until `until` the way the transport would: whenever
    /// the model asks to be woken.
    fn run_until(l: &mut Legacy, from: Timestamp, until: Timestamp) -> Vec<u64> {
        let mut woken = Vec::new();
        let mut t = from;
        while t <= until {
            l.on_iteration(t, 0);
            woken.push(t.as_millis());
            t = l
                .refill_deadline()
                .unwrap()
                .max(t + Duration::from_millis(1));
        }
        woken
    }

    #[test]
    fn a_file_leaves_min_slots_free_tokens_and_small_resend_batches_are_no_congestion() {
        let t = Timestamp::from_millis(10);
        let mut l = Legacy::new(Timestamp::ZERO);
        l.on_iteration(t, 0);
        // do_reqchunk_filecb: min(packets_left, free slots) − MIN_SLOTS_FREE chunks, and
        // pending resends take their tokens first.
        assert_eq!(l.write_budget(0), 64 - 16);
        assert_eq!(l.write_budget(8), 64 - 8 - 16);
        for _ in 0..48 {
            assert!(l.admit_bulk_write(t, 0));
            l.on_bulk_write();
        }
        assert!(!l.admit_bulk_write(t, 0));
        assert_eq!(l.packets_left(), 16);
        // Fifteen resends (fewer than packets_left): no congestion event.
        for _ in 0..15 {
            assert!(l.take_resend_token(t));
        }
        assert_eq!(l.last_congestion_event_ms, 0);
        assert_eq!(l.packets_left(), 1);
        // The sixteenth uses up the new-data budget: a congestion event.
        assert!(l.take_resend_token(t));
        assert_eq!(l.packets_left(), 0);
        assert_eq!(l.last_congestion_event_ms, 10);
    }

    #[test]
    fn a_sender_iterates_every_1000_over_rate_plus_1_ms_and_its_tick_waits_for_an_iteration() {
        let mut l = Legacy::new(Timestamp::ZERO);
        l.send_rate = 100.0;
        l.send_rate_requested = 100.0;
        l.on_iteration(Timestamp::ZERO, 0);
        assert_eq!(l.iteration_interval_ms(), 11);
        let woken = run_until(
            &mut l,
            Timestamp::from_millis(11),
            Timestamp::from_millis(55),
        );
        assert_eq!(woken, vec![11, 22, 33, 44, 55]);
        // The tick ran at 55 ms, the first iteration after 50 ms, not at 51 ms.
        assert_eq!(l.packet_counter_set_ms, 55);
    }

    #[test]
    fn at_low_rates_iterations_are_50_ms_apart_so_the_tick_lasts_100_ms() {
        let mut l = Legacy::new(Timestamp::ZERO);
        l.on_iteration(Timestamp::ZERO, 0);
        assert_eq!(l.iteration_interval_ms(), MAX_ITERATION_MS);
        let woken = run_until(
            &mut l,
            Timestamp::from_millis(50),
            Timestamp::from_millis(100),
        );
        assert_eq!(woken, vec![50, 100]);
        // `now > packet_counter_set + 50` first holds at 100 ms.
        assert_eq!(l.packet_counter_set_ms, 100);
    }

    #[test]
    fn a_resend_waits_for_the_next_iteration_and_its_nack_is_judged_then() {
        let mut l = Legacy::new(Timestamp::ZERO);
        l.on_iteration(Timestamp::ZERO, 0);
        l.rtt_time_ms = 100;
        // A request at 20 ms is handled by the iteration at 50 ms: a packet sent at
        // 0 ms is older than rtt_time then only if 0 + 100 < 50 — no.
        assert!(!l.should_resend(Timestamp::from_millis(20), Timestamp::ZERO));
        // At 120 ms it is handled at 150 ms: resent.
        assert!(l.should_resend(Timestamp::from_millis(120), Timestamp::ZERO));
        // Between iterations no resend goes; the next iteration is at 50 ms.
        assert!(!l.take_resend_token(Timestamp::from_millis(20)));
        assert_eq!(l.refill_deadline(), Some(Timestamp::from_millis(50)));
        l.on_iteration(Timestamp::from_millis(50), 0);
        assert!(l.take_resend_token(Timestamp::from_micros(50_400)));
    }

    #[test]
    fn a_receiver_iterates_every_ms_but_wakes_only_for_work() {
        let mut l = Legacy::new(Timestamp::ZERO);
        l.on_iteration(Timestamp::ZERO, 0);
        for _ in 0..100 {
            l.on_packet_received();
        }
        // The tick at 50 ms (iterations 50 ms apart at first) sees 100 packets: 1000 pkt/s.
        l.on_iteration(Timestamp::from_millis(50), 0);
        l.on_iteration(Timestamp::from_millis(100), 0);
        assert!(l.recv_rate > MIN_RATE);
        assert_eq!(l.iteration_interval_ms(), 1);
        // Next work: the refill of the 4 pkt/s buckets (250 ms after 0 ms), or the tick
        // 51 ms after the last one (at 100 ms): 151 ms.
        assert_eq!(l.refill_deadline(), Some(Timestamp::from_millis(151)));
    }
}
