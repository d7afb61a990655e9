//! Every deadline of the transport as one table, quinn-proto style (`connection/timer.rs`):
//! [`Timer`] names the entries, [`TimerTable`] holds one `Option<Timestamp>` per entry in a
//! fixed array, [`Transport::poll_timeout`] is the table's earliest entry and
//! [`Transport::handle_timeout`] runs the expired ones in table order.
//!
//! Loss detection arms its deadline where it computes it ([`Transport::detect_lost`]). The
//! other deadlines follow from state that almost every input moves (the RTT, the queues,
//! the pacer, the receive window, the controller's clock), so [`Transport::deadline`]
//! derives each from that state whenever the table is built, and an entry is never stale.

use super::Transport;
use crate::Timestamp;

/// One deadline of the transport.
///
/// `handle_timeout` acts on [`Timer::LossDetection`] and [`Timer::Pto`]. The others wake
/// the driver for work that a poll does ([`Timer::Request`]: `poll_request`;
/// [`Timer::Pacing`], [`Timer::Probe`]: `poll_send`) or that the controller's own clock
/// does on every `handle_timeout` ([`Timer::ControllerTick`], [`Timer::TokenRefill`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// The earliest time a NACKed or overtaken packet in flight crosses the loss time
    /// threshold (docs/transport.md §3.5, RFC 9002 §6.1.2). Armed by loss detection.
    LossDetection,
    /// The probe timeout while anything is in flight (RFC 9002 §6.2.1).
    Pto,
    /// Our next request packet is due (docs/transport.md §3.4, or the controller's interval).
    Request,
    /// The pacer releases the next packet ready to go (docs/transport.md §3.7).
    Pacing,
    /// PTO probes wait: they go at once, past pacer and window (RFC 9002 §6.2.4).
    Probe,
    /// The controller's measurement tick (the legacy model's 50 ms, docs/protocol.md §2.10 (a)).
    ControllerTick,
    /// The controller's token refill (the legacy model's `crypto_run_interval`,
    /// docs/protocol.md §2.10 (e)).
    TokenRefill,
}

impl Timer {
    /// Every timer, in the order `handle_timeout` visits them: loss detection before the
    /// PTO, whose deadline it can cancel by emptying the flight.
    pub(super) const VALUES: [Self; 7] = [
        Self::LossDetection,
        Self::Pto,
        Self::Request,
        Self::Pacing,
        Self::Probe,
        Self::ControllerTick,
        Self::TokenRefill,
    ];
}

/// One optional deadline per [`Timer`]: a fixed array, no allocation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct TimerTable {
    deadlines: [Option<Timestamp>; Timer::VALUES.len()],
}

impl TimerTable {
    /// Sets (`Some`) or stops (`None`) `timer`.
    pub(super) fn set(&mut self, timer: Timer, at: Option<Timestamp>) {
        self.deadlines[timer as usize] = at;
    }

    /// When `timer` expires, if it is set.
    pub(super) fn get(&self, timer: Timer) -> Option<Timestamp> {
        self.deadlines[timer as usize]
    }

    /// The earliest deadline in the table.
    pub(super) fn next_expiry(&self) -> Option<Timestamp> {
        self.deadlines.iter().flatten().min().copied()
    }
}

impl Transport {
    /// The deadline of `timer` as the state stands now.
    pub(super) fn deadline(&self, timer: Timer) -> Option<Timestamp> {
        match timer {
            Timer::LossDetection => self.loss_timer,
            Timer::Pto => self.pto_deadline(),
            Timer::Request => self.request_due(),
            Timer::Pacing => self.pacer_release(),
            Timer::Probe => (!self.probe_queue.is_empty()).then_some(Timestamp::ZERO),
            Timer::ControllerTick => self.cc.tick_deadline(),
            Timer::TokenRefill => self.cc.refill_deadline(),
        }
    }

    /// The table as the state stands now.
    fn timer_table(&self) -> TimerTable {
        let mut table = TimerTable::default();
        for timer in Timer::VALUES {
            table.set(timer, self.deadline(timer));
        }
        table
    }

    /// The earliest time `handle_timeout` or `poll_send`/`poll_request` has work: the
    /// earliest entry of the timer table; `None` when the session is idle (nothing to send,
    /// acknowledge or time).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.timer_table().next_expiry()
    }

    /// Runs the expired timers in table order, then one pass of the controller's clock:
    /// the legacy model refills its token buckets on every call, as c-toxcore's
    /// `send_crypto_packets` does on every iteration of its loop, whatever woke it.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        let mut table = self.timer_table();
        for timer in Timer::VALUES {
            if table.get(timer).is_none_or(|at| at > now) {
                continue;
            }
            match timer {
                Timer::LossDetection => self.detect_lost(now),
                Timer::Pto => self.on_pto(now),
                // The driver's next poll_request / poll_send does this work.
                Timer::Request | Timer::Pacing | Timer::Probe => continue,
                // The controller's clock, run below on every call.
                Timer::ControllerTick | Timer::TokenRefill => continue,
            }
            // A handler can move the later deadlines (loss detection that empties the
            // flight cancels the PTO).
            table = self.timer_table();
        }
        self.cc.on_iteration(now, self.send.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_expiry_is_the_earliest_set_entry() {
        let mut table = TimerTable::default();
        assert_eq!(table.next_expiry(), None);
        table.set(Timer::Request, Some(Timestamp::from_millis(30)));
        table.set(Timer::Pto, Some(Timestamp::from_millis(20)));
        table.set(Timer::TokenRefill, Some(Timestamp::from_millis(25)));
        assert_eq!(table.next_expiry(), Some(Timestamp::from_millis(20)));
        table.set(Timer::Pto, None);
        assert_eq!(table.get(Timer::Pto), None);
        assert_eq!(table.next_expiry(), Some(Timestamp::from_millis(25)));
    }

    #[test]
    fn every_timer_has_its_own_entry() {
        let mut table = TimerTable::default();
        for (i, timer) in Timer::VALUES.into_iter().enumerate() {
            table.set(timer, Some(Timestamp::from_millis(i as u64)));
        }
        for (i, timer) in Timer::VALUES.into_iter().enumerate() {
            assert_eq!(table.get(timer), Some(Timestamp::from_millis(i as u64)));
        }
    }
}
