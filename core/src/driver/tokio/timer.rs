//! A timer that wakes when the core asked, not up to a millisecond later.
//!
//! tokio's timer wheel has 1 ms slots, and a sleep shorter than that still lasts until the
//! next slot. The transport's pacer releases at most ten packets per burst (pacer.rs), and
//! a late wake forfeits the credit (its idle credit is capped at one burst), so at
//! loopback rates — a burst every ~50 µs — a millisecond timer caps a transfer at ten
//! packets per wake-up, about 13 MiB/s, and at best ~50 MiB/s when acknowledgements
//! happen to wake the loop in between (measured: see the README). A Linux `timerfd`
//! registered with tokio's reactor fires at the requested microsecond, and a timer slack of
//! 1 ns for the driver's thread stops the kernel from deferring it by its default 50 µs.
//!
//! Waits shorter than [`SPIN_BELOW`] are not slept at all: a sleep costs two system calls
//! and a reactor round, more than the wait itself.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

/// Below this, a deadline counts as due now (the loop yields to the reactor and comes back).
pub const SPIN_BELOW: Duration = Duration::from_micros(15);

/// Timer slack asked for the driver thread, in nanoseconds (prctl PR_SET_TIMERSLACK).
const TIMER_SLACK_NS: u64 = 1;

/// `TimerFd` as a raw descriptor for tokio's `AsyncFd`.
struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// A one-shot, re-armable timer on CLOCK_MONOTONIC (the clock `Instant` reads on Linux).
pub struct PreciseTimer {
    fd: AsyncFd<Fd>,
    /// The deadline the timer is armed for. The driver asks again after every wake-up, and
    /// under a flood of datagrams it wakes once per receive batch with the same deadline:
    /// asking again for it costs no `timerfd_settime`.
    armed: Mutex<Option<Instant>>,
}

impl PreciseTimer {
    /// A timer, and a 1 ns timer slack for the calling thread (the driver's). Must be
    /// called inside a tokio runtime.
    pub fn new() -> io::Result<Self> {
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // Best effort: without it wake-ups are up to 50 µs late, which costs rate, not
        // correctness.
        let _ = nix::sys::prctl::set_timerslack(TIMER_SLACK_NS);
        // `AsyncFd::new` is deprecated because a caller could close the descriptor while
        // it is registered; here the `TimerFd` owning it lives inside the `AsyncFd` and is
        // dropped after deregistration, which is the soundness condition. Its replacement
        // (`register`) is `unsafe`, which this crate does not use.
        #[allow(deprecated)]
        let fd = AsyncFd::new(Fd(timer))?;
        Ok(PreciseTimer {
            fd,
            armed: Mutex::new(None),
        })
    }

    /// Completes at `deadline` (at once if it is less than [`SPIN_BELOW`] away).
    pub async fn sleep_until(&self, deadline: Instant) -> io::Result<()> {
        let wait = deadline.saturating_duration_since(Instant::now());
        if wait < SPIN_BELOW {
            tokio::task::yield_now().await;
            return Ok(());
        }
        // Re-arming for another deadline resets the expiry count, so an expiry left over
        // from an earlier, abandoned sleep cannot end this one early (the read below then
        // finds nothing and waits again). Armed for this deadline already, the timer has
        // not expired yet (the deadline is still ahead), so it is left as it is.
        {
            let mut armed = self.armed.lock().unwrap_or_else(PoisonError::into_inner);
            if *armed != Some(deadline) {
                self.fd.get_ref().0.set(
                    Expiration::OneShot(TimeSpec::from_duration(wait)),
                    TimerSetTimeFlags::empty(),
                )?;
                *armed = Some(deadline);
            }
        }
        loop {
            let mut guard = self.fd.readable().await?;
            match guard.try_io(|fd| fd.get_ref().0.wait().map_err(io::Error::from)) {
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn a_sleep_abandoned_and_asked_again_ends_at_its_deadline_not_before() {
        runtime().block_on(async {
            let timer = PreciseTimer::new().expect("a timerfd");
            let deadline = Instant::now() + Duration::from_millis(20);
            // Abandoned after 2 ms, as the driver abandons its sleep when a datagram comes.
            tokio::select! {
                _ = timer.sleep_until(deadline) => panic!("ended 18 ms early"),
                () = tokio::time::sleep(Duration::from_millis(2)) => {}
            }
            // Asked again for the same deadline: the timer is left armed, and still fires.
            timer.sleep_until(deadline).await.expect("the sleep");
            assert!(Instant::now() >= deadline);
        });
    }

    #[test]
    fn an_expiry_of_an_abandoned_deadline_does_not_end_a_later_sleep() {
        runtime().block_on(async {
            let timer = PreciseTimer::new().expect("a timerfd");
            let first = Instant::now() + Duration::from_millis(2);
            tokio::select! {
                _ = timer.sleep_until(first) => {}
                () = std::future::ready(()) => {}
            }
            // The first deadline expires unread while nobody sleeps.
            std::thread::sleep(Duration::from_millis(5));
            let later = Instant::now() + Duration::from_millis(10);
            timer.sleep_until(later).await.expect("the sleep");
            assert!(Instant::now() >= later, "ended by the stale expiry");
        });
    }
}
