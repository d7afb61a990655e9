//! The transport's deadlines: [`Transport::poll_timeout`] says when the driver must call
//! back, [`Transport::handle_timeout`] runs what has expired.

use super::cc::MAX_PACKET;
use super::Transport;
use crate::Timestamp;

impl Transport {
    /// The earliest time `handle_timeout` or `poll_send`/`poll_request` has work.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut t = self.request_due();
        let mut consider = |x: Option<Timestamp>| {
            if let Some(x) = x {
                t = t.min(x);
            }
        };
        consider(self.loss_timer);
        consider(self.pto_deadline());
        if !self.probe_queue.is_empty() {
            consider(Some(Timestamp::ZERO));
        }
        if let Some(l) = self.legacy.as_deref() {
            consider(Some(l.next_tick()));
            // c-toxcore's sender iterates about every 1000/rate ms (`crypto_run_interval`),
            // refilling its token buckets each time; model that cadence.
            consider(Some(l.next_refill()));
            if !self.control_queue.is_empty() {
                consider(Some(Timestamp::ZERO));
            }
        } else {
            // Only wait for the pacer when the window would let the packet go; a
            // window-limited sender waits for an ack instead.
            let cwnd = self.cc.window();
            let resend_ready = !self.resend_queue.is_empty();
            let bulk_ready =
                !self.bulk_queue.is_empty() && self.bytes_in_flight + MAX_PACKET <= cwnd;
            if resend_ready || !self.control_queue.is_empty() || bulk_ready {
                consider(Some(self.pacer.release_time(self.pacing_rate())));
            }
        }
        Some(t)
    }

    /// Run expired timers (loss timer, PTO, request timer, legacy ticks).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.loss_timer.is_some_and(|t| t <= now) {
            self.detect_lost(now);
        }
        if self.pto_deadline().is_some_and(|t| t <= now) {
            self.on_pto(now);
        }
        if let Some(l) = self.legacy.as_mut() {
            l.refill(now);
            l.tick(now, self.send.len());
        }
    }
}
