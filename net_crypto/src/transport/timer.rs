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
        consider(self.cc.tick_deadline());
        consider(self.cc.refill_deadline());
        // Only wait for the pacer when the window would let the packet go; a
        // window-limited sender waits for an ack instead. A controller that does not pace
        // sends resends and bulk data on its refills, control packets at once.
        let cwnd = self.cc.window();
        let resend_ready = !self.resend_queue.is_empty();
        let bulk_ready = !self.bulk_queue.is_empty() && self.bytes_in_flight + MAX_PACKET <= cwnd;
        let paced_ready = self.cc.paces() && (resend_ready || bulk_ready);
        if paced_ready || !self.control_queue.is_empty() {
            consider(Some(self.pacer.release_time(self.pacing_rate())));
        }
        Some(t)
    }

    /// Run expired timers (loss timer, PTO), then the controller's own clock.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.loss_timer.is_some_and(|t| t <= now) {
            self.detect_lost(now);
        }
        if self.pto_deadline().is_some_and(|t| t <= now) {
            self.on_pto(now);
        }
        self.cc.on_iteration(now, self.send.len());
    }
}
