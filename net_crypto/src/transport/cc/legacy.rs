//! A faithful model of c-toxcore 0.2.18's send-rate control and RTT (protocol.md §2.10,
//! §2.11), so it can be measured beside our controllers in the simulator. It reproduces
//! the flaws on purpose:
//!
//! - RTT: one `rtt_time` starting at 1000 ms, **only ever lowered**, sampled from the
//!   packets' *last* send time (c-toxcore overwrites `sent_time` on resend), so a resent
//!   packet whose original copy is acked yields a tiny sample that sticks for the rest of
//!   the connection (PR #1323's 500 ms → 51 ms collapse). The Karn invariant of the other
//!   controllers ("no RTT sample from a resent packet") deliberately does not hold here.
//! - Resend on NACK iff `sent_time + rtt_time < now`; no retransmission timer, no PTO;
//!   tail loss is repaired only when the peer learns `buffer_end` from a later packet.
//! - Rate: AIMD on 50 ms ticks, `min_speed` = packets sent over 12 ticks divided by the
//!   *nominal* 600 ms, ×1.2 with no congestion event for 1 s, ×0.9 otherwise, damped when
//!   the send queue exceeds 2 s of rate; token buckets `packets_left` /
//!   `packets_left_requested` refilled from elapsed time; "congestion event" = resends used
//!   up the whole new-data budget.
//!
//! Time is kept in whole milliseconds, as c-toxcore's `current_time_monotonic`.
//!
//! The transport runs it through the [`Controller`] hooks where c-toxcore differs from us
//! (token buckets instead of window and pacer, resend on NACK, no loss detection or PTO,
//! its own RTT and request interval); its window and pacing callbacks do nothing.

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

    /// An RTT candidate: the (overwritten) send time of an acknowledged packet (§2.6 step 6).
    fn on_rtt_candidate(&mut self, now: Timestamp, sent_time: Timestamp) {
        let sample = now.as_millis().saturating_sub(sent_time.as_millis());
        self.rtt_samples += 1;
        self.latest_sample_ms = Some(sample);
        // "if (rtt_time < conn->rtt_time) conn->rtt_time = rtt_time": only ever lowered.
        self.rtt_time_ms = self.rtt_time_ms.min(sample);
    }

    /// §2.7: a NACKed packet is resent iff `sent_time + rtt_time < now`.
    fn should_resend(&self, now: Timestamp, last_sent: Timestamp) -> bool {
        last_sent.as_millis() + self.rtt_time_ms < now.as_millis()
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
        if ((1000.0 / self.send_rate) + 0.5) as u64 + self.last_left_set_ms <= t {
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
        if ((1000.0 / self.send_rate_requested) + 0.5) as u64 + self.last_left_requested_set_ms <= t
        {
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

    /// (d) how many congestion-controlled packets may be written now, given `pending`
    /// packets waiting for the resend pass. c-toxcore runs the resend pass (c) right after
    /// the refill, before the application writes new data on its next iterate, so resends
    /// take their tokens first: `r = min(pending, packets_left_requested)` leave
    /// `packets_left − r` (or nothing once `r ≥ packets_left`).
    fn write_budget(&self, pending: u32) -> u32 {
        let r = pending.min(self.packets_left_requested);
        self.packets_left.saturating_sub(r)
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

    fn bulk_write_budget(&self, now: Timestamp, pending_resends: u32) -> Option<u32> {
        let mut refilled = self.clone();
        refilled.refill(now);
        Some(refilled.write_budget(pending_resends))
    }

    fn admit_bulk_write(&mut self, now: Timestamp, pending_resends: u32) -> bool {
        self.refill(now);
        self.write_budget(pending_resends) > 0
    }

    fn on_bulk_write(&mut self) {
        self.on_write();
    }

    fn take_resend_token(&mut self, now: Timestamp) -> bool {
        if !self.can_resend() {
            return false;
        }
        self.on_resend(now);
        true
    }

    fn on_iteration(&mut self, now: Timestamp, send_queue_len: u32) {
        self.refill(now);
        self.tick(now, send_queue_len);
    }

    /// `now > packet_counter_set + 50 ms`.
    fn tick_deadline(&self) -> Option<Timestamp> {
        Some(Timestamp::from_millis(
            self.packet_counter_set_ms + TICK_MS + 1,
        ))
    }

    /// The earlier of the two buckets' refills.
    fn refill_deadline(&self) -> Option<Timestamp> {
        // At least 1 ms ahead: c-toxcore's clock has ms resolution, and a refill period
        // that rounds to 0 ms must not ask for a wake-up "now" forever.
        let a = (((1000.0 / self.send_rate) + 0.5) as u64).max(1) + self.last_left_set_ms;
        let b = (((1000.0 / self.send_rate_requested) + 0.5) as u64).max(1)
            + self.last_left_requested_set_ms;
        Some(Timestamp::from_millis(a.min(b)))
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

    /// The request interval of `send_crypto_packets` (§2.7).
    fn request_interval(&self, recv_len: u32) -> Option<Duration> {
        if self.recv_rate <= MIN_RATE {
            return Some(Duration::from_millis(REQUEST_INTERVAL_MS as u64));
        }
        let i1 = REQUEST_COMPARE * (self.recv_rate + 1.0) / (f64::from(recv_len) + 1.0);
        let i2 = 1000.0 * MIN_RATE / self.recv_rate + 50.0;
        let ms = i1.min(i2).clamp(TICK_MS as f64, REQUEST_INTERVAL_MS);
        Some(Duration::from_millis(ms as u64))
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
}
