//! What a real driver does between the network and a sans-IO core, as a model the simulator
//! can run (docs/design.md: "a model of what drivers really do").
//!
//! With exact timers and instant reads the simulator flatters the pacer: on real sockets
//! tokio's millisecond timer wakes the sender up to two milliseconds after the pacer's
//! release time, and a pacer that does not allow for that holds BBR to 0.54 of a 20 Mbit/s,
//! 100 ms path where exact timers show 0.92. A node given a [`DriverModel`] is instead
//! driven the way the CLI's tokio loop drives a host (core/src/driver/tokio/session.rs):
//!
//! - **Timer.** The core's deadline is honoured by a timer with a grain and a lateness
//!   ([`TimerModel`]); the node runs when the timer fires, not at the deadline.
//! - **Socket buffer.** Arriving datagrams queue in a bounded receive buffer (the kernel's
//!   `SO_RCVBUF`, counted in its per-datagram truesize); a full buffer drops them.
//! - **Receive batching.** An idle driver notices a readable socket after a wake-up
//!   latency and reads up to one `recvmmsg` batch per loop turn, then drains its outputs
//!   before it reads again.
//! - **CPU.** Each datagram received or sent and each wake-up costs CPU time; while busy
//!   the node handles nothing else, and what arrives waits in the socket buffer.
//!
//! Nodes without a model keep the simulator's exact behaviour (every input handled at the
//! instant it happens), which the scenario tests that set no model, and their seeds, rely
//! on.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::Timestamp;

/// How a driver's timer turns a requested deadline into a wake-up.
#[derive(Debug, Clone, PartialEq)]
pub enum TimerModel {
    /// Wakes exactly at the deadline.
    Exact,
    /// tokio's timer wheel (tokio 1.x `time::Driver`): a deadline is rounded up to the next
    /// millisecond tick of the runtime's clock, and the driver parks in `epoll_wait` for the
    /// whole number of milliseconds from the current tick to that one, counted from the
    /// moment it parks. The wake-up therefore lands at the deadline's tick plus the phase
    /// the loop had within its millisecond when it went to sleep, plus the kernel's timer
    /// slack. A deadline whose tick has already passed fires at once.
    ///
    /// Measured on this project's 2-core VM (tokio 1, current-thread runtime, 300 sleeps per
    /// row): a 20 µs sleep woke 1.05–1.06 ms late (p10–p50), a 1 ms sleep 1.08 ms late, a
    /// 700 µs sleep 0.38 or 1.38 ms late depending on the phase.
    TokioMillis {
        /// Kernel timer slack plus scheduling delay after the tick, drawn uniformly
        /// (default hrtimer slack of a normal thread is 50 µs).
        slack: (Duration, Duration),
    },
    /// A microsecond timer (a `timerfd` with 1 ns timer slack, or a short spin): wakes after
    /// the deadline by a lateness drawn uniformly from the range (scheduling delay).
    Precise {
        /// Lateness range.
        lateness: (Duration, Duration),
    },
}

/// Millisecond grain of tokio's timer wheel.
const TOKIO_TICK: Duration = Duration::from_millis(1);

impl TimerModel {
    /// When a driver that went to sleep at `now`, asking to be woken at `deadline`, wakes.
    pub fn wake_at(&self, now: Timestamp, deadline: Timestamp, rng: &mut ChaCha8Rng) -> Timestamp {
        match self {
            TimerModel::Exact => deadline.max(now),
            TimerModel::TokioMillis { slack } => {
                let tick = TOKIO_TICK.as_micros() as u64;
                let now_us = now.as_micros();
                let now_tick = now_us / tick;
                let deadline_tick = deadline.as_micros().div_ceil(tick);
                if deadline_tick <= now_tick {
                    return now;
                }
                let parked = Duration::from_micros((deadline_tick - now_tick) * tick);
                now + parked + draw(rng, *slack)
            }
            TimerModel::Precise { lateness } => deadline.max(now) + draw(rng, *lateness),
        }
    }
}

/// A uniform draw from `[lo, hi]`.
fn draw(rng: &mut ChaCha8Rng, (lo, hi): (Duration, Duration)) -> Duration {
    if hi <= lo {
        return lo;
    }
    let span = (hi - lo).as_micros() as u64;
    lo + Duration::from_micros(rng.gen_range(0..=span))
}

/// The receive buffer a datagram of `len` bytes occupies in the kernel: Linux charges a
/// socket the truesize of its skb, a 2 KiB data buffer for any MTU-sized datagram plus the
/// sk_buff itself (~256 B). Smaller datagrams are charged the same slab.
pub fn socket_truesize(len: usize) -> u64 {
    const SKB_OVERHEAD: u64 = 256;
    let data = (len as u64).next_power_of_two().max(512);
    data + SKB_OVERHEAD
}

/// Everything a driver adds between the network and the core.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverModel {
    /// The timer.
    pub timer: TimerModel,
    /// From a datagram landing in an idle driver's socket to the driver running (epoll
    /// wake-up of a parked thread).
    pub rx_wake_latency: Duration,
    /// Datagrams read per loop turn (core/src/driver/batch_recv.rs: 32 `recvmmsg` slots).
    pub rx_batch: usize,
    /// The socket's receive buffer in truesize bytes ([`socket_truesize`]). The CLI asks for
    /// 4 MiB; Linux doubles the request and caps it at twice `net.core.rmem_max`.
    pub rx_buffer_bytes: u64,
    /// CPU per datagram received (read, open, process).
    pub cpu_per_rx: Duration,
    /// CPU per datagram sent (seal, send).
    pub cpu_per_tx: Duration,
    /// CPU per loop turn (the system calls of a wake-up).
    pub cpu_per_wake: Duration,
}

impl DriverModel {
    /// The CLI's tokio loop as it runs on tokio's millisecond timer (the CLI itself sleeps on
    /// the precise timer, [`DriverModel::cli`]). CPU costs from `rustox bench-loopback` on this VM
    /// (2.9 s/GiB sender, 3.7 s/GiB receiver, 1371-byte chunks: 3.7 and 4.7 µs per
    /// datagram, kernel included; the per-packet share of a busy loop is lower, so 3 µs
    /// each).
    pub fn tokio_millis() -> Self {
        DriverModel {
            timer: TimerModel::TokioMillis {
                slack: (Duration::from_micros(50), Duration::from_micros(120)),
            },
            rx_wake_latency: Duration::from_micros(20),
            rx_batch: 32,
            rx_buffer_bytes: 8 << 20,
            cpu_per_rx: Duration::from_micros(3),
            cpu_per_tx: Duration::from_micros(3),
            cpu_per_wake: Duration::from_micros(5),
        }
    }

    /// The model of the driver `rustox send`/`recv` run (core/src/driver/tokio/session.rs): the
    /// precise timer.
    pub fn cli() -> Self {
        DriverModel::precise()
    }

    /// The same loop with a microsecond timer (timerfd, 1 ns timer slack).
    pub fn precise() -> Self {
        DriverModel {
            timer: TimerModel::Precise {
                lateness: (Duration::from_micros(5), Duration::from_micros(40)),
            },
            ..DriverModel::tokio_millis()
        }
    }
}

/// The driver models by name (`exact` is no model: inputs handled the instant they happen).
pub fn driver_by_name(name: &str) -> Result<Option<DriverModel>, String> {
    match name {
        "exact" => Ok(None),
        "tokio" => Ok(Some(DriverModel::tokio_millis())),
        "precise" => Ok(Some(DriverModel::precise())),
        "cli" => Ok(Some(DriverModel::cli())),
        other => Err(format!(
            "unknown driver model {other} (exact, tokio, precise, cli)"
        )),
    }
}

/// A simulated driver's own counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Loop turns (timer or readable wake-ups).
    pub wakeups: u64,
    /// Datagrams dropped because the socket's receive buffer was full.
    pub rx_buffer_drops: u64,
    /// Largest receive-buffer occupancy seen, truesize bytes.
    pub rx_buffer_peak: u64,
    /// Sum of timer wake-up lateness (wake − requested deadline), µs.
    pub timer_lateness_us: u64,
    /// Timer wake-ups whose lateness is in `timer_lateness_us`.
    pub timer_wakeups: u64,
}

impl DriverStats {
    /// Mean lateness of timer wake-ups.
    pub fn mean_timer_lateness(&self) -> Option<Duration> {
        (self.timer_wakeups > 0)
            .then(|| Duration::from_micros(self.timer_lateness_us / self.timer_wakeups))
    }
}

/// A datagram waiting in a simulated socket's receive buffer.
#[derive(Debug)]
pub(crate) struct Queued {
    pub from: std::net::SocketAddr,
    pub to: std::net::SocketAddr,
    pub payload: Vec<u8>,
}

/// One node's simulated driver: its socket buffer, its CPU and its counters.
#[derive(Debug)]
pub(crate) struct DriverState {
    pub model: DriverModel,
    pub rng: ChaCha8Rng,
    pub socket: std::collections::VecDeque<Queued>,
    pub socket_bytes: u64,
    /// The loop is busy with earlier work until then.
    pub busy_until: Timestamp,
    /// A read of the socket is scheduled.
    pub read_pending: bool,
    pub stats: DriverStats,
}

impl DriverState {
    pub fn new(model: DriverModel, rng: ChaCha8Rng) -> Self {
        DriverState {
            model,
            rng,
            socket: std::collections::VecDeque::new(),
            socket_bytes: 0,
            busy_until: Timestamp::ZERO,
            read_pending: false,
            stats: DriverStats::default(),
        }
    }

    /// A datagram arrives from the network: queued, or dropped if the buffer is full.
    pub fn enqueue(&mut self, datagram: Queued) -> bool {
        let size = socket_truesize(datagram.payload.len());
        if self.socket_bytes + size > self.model.rx_buffer_bytes {
            self.stats.rx_buffer_drops += 1;
            return false;
        }
        self.socket_bytes += size;
        self.stats.rx_buffer_peak = self.stats.rx_buffer_peak.max(self.socket_bytes);
        self.socket.push_back(datagram);
        true
    }

    /// The next datagram a read takes.
    pub fn dequeue(&mut self) -> Option<Queued> {
        let d = self.socket.pop_front()?;
        self.socket_bytes -= socket_truesize(d.payload.len());
        Some(d)
    }

    /// Charges one loop turn that read `rx` and sent `tx` datagrams, starting at `now`.
    pub fn charge(&mut self, now: Timestamp, rx: u64, tx: u64) {
        let m = &self.model;
        let cost = m.cpu_per_wake + m.cpu_per_rx * rx as u32 + m.cpu_per_tx * tx as u32;
        self.busy_until = self.busy_until.max(now) + cost;
        self.stats.wakeups += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    fn us(n: u64) -> Timestamp {
        Timestamp::ZERO + Duration::from_micros(n)
    }

    #[test]
    fn tokio_timer_wakes_at_the_deadline_tick_plus_the_phase() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t = TimerModel::TokioMillis {
            slack: (Duration::from_micros(60), Duration::from_micros(60)),
        };
        // Asleep at 0.06 ms, deadline 0.08 ms: tick 1, parked 1 ms from 0.06 -> 1.12 ms.
        assert_eq!(t.wake_at(us(60), us(80), &mut rng), us(1_120));
        // Deadline 1.06 ms from the same phase: tick 2 -> 2.12 ms.
        assert_eq!(t.wake_at(us(60), us(1_060), &mut rng), us(2_120));
        // Phase 0.4 ms, deadline 0.7 ms: tick 1 -> 1.46 ms (0.76 ms late).
        assert_eq!(t.wake_at(us(400), us(700), &mut rng), us(1_460));
        // A deadline whose tick has passed fires at once.
        assert_eq!(t.wake_at(us(2_500), us(1_900), &mut rng), us(2_500));
    }

    #[test]
    fn precise_timer_is_late_by_its_lateness_only() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t = TimerModel::Precise {
            lateness: (Duration::from_micros(5), Duration::from_micros(40)),
        };
        for d in [10, 333, 5_000] {
            let w = t.wake_at(us(0), us(d), &mut rng);
            assert!(w >= us(d + 5) && w <= us(d + 40), "{w:?}");
        }
    }

    #[test]
    fn truesize_charges_a_full_slab() {
        assert_eq!(socket_truesize(1428), 2048 + 256);
        assert_eq!(socket_truesize(100), 512 + 256);
    }
}
