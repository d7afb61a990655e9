//! The emulator thread: reads IP packets from both TUN devices, passes each through its
//! direction's [`Link`], and writes it into the other namespace when the model says it
//! arrives.
//!
//! Release precision is the whole point (a 1428-byte packet lasts 11.4 µs at 1 Gbit/s, so
//! up to ~90 000 releases a second), hence one thread with non-blocking descriptors, `ppoll`
//! with a nanosecond timeout under a 1 ns timer slack (the default 50 µs slack would delay
//! every wake-up by up to that much), and spinning instead of sleeping when the next release
//! is closer than [`EmulatorOptions::spin`]. Every release's lateness is recorded, so a run
//! shows whether the instrument kept up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use tun_rs::SyncDevice;

use super::packet::{link_split, parse};
use super::plain::DirectionModel;
use super::stats::{DirectionStats, EmulatorStats, FlowTable, LinkCounters};

/// Largest packet read from a TUN device: the devices run without offloads, so packets are
/// at most one MTU, but a full IPv4 datagram costs nothing to allow.
const READ_BUFFER: usize = 65_536;
/// Packets read from one device per loop turn before due releases are looked at again, so a
/// burst on one side cannot delay the other side's releases by more than this many reads.
const READ_BATCH: usize = 32;
/// Longest single sleep: bounds how long [`Engine::run`] takes to notice the stop flag.
const MAX_SLEEP: Duration = Duration::from_millis(5);
/// How often the shared snapshot is refreshed.
const PUBLISH_EVERY: Duration = Duration::from_millis(20);

/// Tuning of the emulator loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmulatorOptions {
    /// Spin rather than sleep when the next release is at most this far away. `ppoll`'s
    /// wake-up latency on a VM is typically 5–60 µs, so sleeping until `due − spin` and
    /// spinning the rest keeps releases within a few µs; the price is CPU while busy.
    pub spin: Duration,
    /// Most packets in flight (queued at the bottleneck or propagating) per direction; a
    /// bound on memory. Beyond it packets are dropped and counted in
    /// [`DirectionStats::pending_overflow`]. 262 144 packets hold 2.5 s at 1 Gbit/s.
    pub max_pending: usize,
    /// Interval of the per-flow delivery series.
    pub flow_interval: Duration,
    /// SCHED_FIFO priority for the emulator thread (`chrt`), `None` to stay a normal
    /// thread. On a machine whose cores are shared with the endpoints (and with builds), a
    /// normal thread woken from `ppoll` waits behind whatever runs there, and its releases
    /// come milliseconds late; a real-time thread preempts them. The kernel's RT throttling
    /// (95 % of each second by default) keeps a spinning emulator from starving a core.
    pub realtime_priority: Option<u8>,
    /// Run each direction through the plain link (`plain.rs`: delay, rate and a drop-tail
    /// queue of waiting bytes only) instead of the profile's model.
    pub plain: bool,
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        EmulatorOptions {
            spin: Duration::from_micros(50),
            max_pending: 262_144,
            flow_interval: Duration::from_secs(1),
            realtime_priority: Some(10),
            plain: false,
        }
    }
}

/// A packet in flight.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    /// Model arrival time, ns since the emulator's origin.
    at_ns: u64,
    /// Tie-break: first in, first out among equal arrival times.
    seq: u64,
    packet: Vec<u8>,
}

/// One direction: its link model, the packets in flight, and what it delivered per flow.
struct Direction {
    link: DirectionModel,
    pending: BinaryHeap<Reverse<Pending>>,
    stats: DirectionStats,
    flows: FlowTable,
}

impl Direction {
    fn next_due(&self) -> Option<u64> {
        self.pending.peek().map(|Reverse(p)| p.at_ns)
    }

    fn snapshot(&self) -> DirectionStats {
        DirectionStats {
            link: LinkCounters::from(self.link.stats()),
            flows: self.flows.flows().to_vec(),
            untracked_bytes: self.flows.untracked_bytes(),
            ..self.stats.clone()
        }
    }
}

/// What the thread hands back when stopped.
pub(super) struct EngineOutput {
    pub(super) stats: EmulatorStats,
    pub(super) a_to_b: DirectionModel,
    pub(super) b_to_a: DirectionModel,
}

/// The loop's state. Index 0 is namespace A's device and the A → B direction; index 1 is B.
pub(super) struct Engine {
    devices: [SyncDevice; 2],
    directions: [Direction; 2],
    origin: Instant,
    options: EmulatorOptions,
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<EmulatorStats>>,
    stats: EmulatorStats,
    seq: u64,
    buf: Vec<u8>,
}

impl Engine {
    /// An engine over device A (index 0) and B (index 1), set non-blocking here, whose
    /// clock reads zero at `origin`.
    pub(super) fn new(
        devices: [SyncDevice; 2],
        links: [DirectionModel; 2],
        origin: Instant,
        options: EmulatorOptions,
        stop: Arc<AtomicBool>,
        shared: Arc<Mutex<EmulatorStats>>,
    ) -> std::io::Result<Self> {
        for d in &devices {
            d.set_nonblocking(true)?;
        }
        let interval_ms = options.flow_interval.as_millis() as u64;
        let [a, b] = links;
        let direction = |link| Direction {
            link,
            pending: BinaryHeap::new(),
            stats: DirectionStats {
                interval_ms,
                ..DirectionStats::default()
            },
            flows: FlowTable::default(),
        };
        Ok(Engine {
            devices,
            directions: [direction(a), direction(b)],
            origin,
            options,
            stop,
            shared,
            stats: EmulatorStats::default(),
            seq: 0,
            buf: vec![0; READ_BUFFER],
        })
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Runs until the stop flag is set; returns the links and the final statistics.
    pub(super) fn run(mut self) -> EngineOutput {
        // Without this every ppoll wake-up may come up to the default 50 µs late.
        let _ = nix::sys::prctl::set_timerslack(1);
        if let Some(priority) = self.options.realtime_priority {
            self.stats.realtime = make_realtime(priority);
        }
        let spin_ns = self.options.spin.as_nanos() as u64;
        let mut next_publish = 0;
        while !self.stop.load(Ordering::Relaxed) {
            let mut busy = self.release_due();
            busy |= self.read_from(0);
            busy |= self.read_from(1);
            let now = self.now_ns();
            if now >= next_publish {
                self.publish(now);
                next_publish = now + PUBLISH_EVERY.as_nanos() as u64;
            }
            if busy {
                continue;
            }
            let next_due = self.directions.iter().filter_map(Direction::next_due).min();
            let sleep_ns = match next_due {
                Some(due) => due.saturating_sub(now).saturating_sub(spin_ns),
                None => MAX_SLEEP.as_nanos() as u64,
            };
            if sleep_ns == 0 {
                self.stats.spins += 1;
                std::hint::spin_loop();
                continue;
            }
            self.sleep(Duration::from_nanos(sleep_ns).min(MAX_SLEEP));
        }
        let now = self.now_ns();
        self.publish(now);
        let Engine {
            directions: [a, b],
            stats,
            ..
        } = self;
        EngineOutput {
            stats: EmulatorStats {
                a_to_b: a.snapshot(),
                b_to_a: b.snapshot(),
                ..stats
            },
            a_to_b: a.link,
            b_to_a: b.link,
        }
    }

    /// Sleeps until a device is readable or `timeout` passes.
    fn sleep(&mut self, timeout: Duration) {
        self.stats.sleeps += 1;
        let [a, b] = &self.devices;
        let mut fds = [
            PollFd::new(a.as_fd(), PollFlags::POLLIN),
            PollFd::new(b.as_fd(), PollFlags::POLLIN),
        ];
        let before = Instant::now();
        // EINTR or any other error: the loop simply looks again.
        let _ = ppoll(&mut fds, Some(TimeSpec::from_duration(timeout)), None);
        self.stats.slept_ns += before.elapsed().as_nanos() as u64;
    }

    /// Writes every packet whose arrival time has come; true if any was.
    fn release_due(&mut self) -> bool {
        let now = self.now_ns();
        let interval_ns = (self.options.flow_interval.as_nanos() as u64).max(1);
        let mut released = false;
        for (i, dir) in self.directions.iter_mut().enumerate() {
            let out = &self.devices[1 - i];
            while dir.next_due().is_some_and(|due| due <= now) {
                let Some(Reverse(p)) = dir.pending.pop() else {
                    break;
                };
                released = true;
                self.stats.lateness.record(now - p.at_ns);
                match out.send(&p.packet) {
                    Ok(_) => {
                        dir.stats.packets_released += 1;
                        dir.stats.bytes_released += p.packet.len() as u64;
                        if let Some(info) = parse(&p.packet) {
                            dir.flows.record(
                                info.flow,
                                (p.at_ns / interval_ns) as usize,
                                p.packet.len() as u64,
                            );
                        }
                    }
                    Err(_) => dir.stats.write_errors += 1,
                }
            }
        }
        released
    }

    /// Reads up to [`READ_BATCH`] packets from device `side` into its direction's link;
    /// true if any was read.
    fn read_from(&mut self, side: usize) -> bool {
        let mut any = false;
        for _ in 0..READ_BATCH {
            let n = match self.devices[side].recv(&mut self.buf) {
                Ok(n) => n,
                // WouldBlock: drained. Anything else (the device went away while stopping)
                // ends this turn the same way.
                Err(_) => break,
            };
            any = true;
            let now_ns = self.now_ns();
            let mut packet = self.buf[..n].to_vec();
            let (dst, held) = link_split(&packet);
            let payload = packet.split_off(held);
            let dir = &mut self.directions[side];
            dir.stats.packets_read += 1;
            dir.stats.bytes_read += n as u64;
            let Some(passed) = dir.link.transmit(now_ns, dst, payload) else {
                continue;
            };
            packet.extend_from_slice(&passed.payload);
            let at_ns = passed.at_ns;
            let copies = if passed.duplicate { 2 } else { 1 };
            for copy in 0..copies {
                if dir.pending.len() >= self.options.max_pending {
                    dir.stats.pending_overflow += 1;
                    continue;
                }
                self.seq += 1;
                let packet = if copy + 1 == copies {
                    std::mem::take(&mut packet)
                } else {
                    packet.clone()
                };
                dir.pending.push(Reverse(Pending {
                    at_ns,
                    seq: self.seq,
                    packet,
                }));
            }
            dir.stats.max_pending = dir.stats.max_pending.max(dir.pending.len());
        }
        any
    }

    /// Refreshes the snapshot readers see.
    fn publish(&mut self, now: u64) {
        self.stats.elapsed_ns = now;
        let snapshot = EmulatorStats {
            a_to_b: self.directions[0].snapshot(),
            b_to_a: self.directions[1].snapshot(),
            ..self.stats.clone()
        };
        if let Ok(mut shared) = self.shared.lock() {
            *shared = snapshot;
        }
    }
}

/// Puts the calling thread under SCHED_FIFO at `priority` with `chrt` (no `unsafe` needed
/// for `sched_setscheduler`); false if that failed (not root, no chrt).
fn make_realtime(priority: u8) -> bool {
    let tid = nix::unistd::gettid().to_string();
    std::process::Command::new("chrt")
        .args(["-f", "-p", &priority.to_string(), &tid])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
