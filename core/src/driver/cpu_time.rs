//! CPU time of the calling thread, for "simulated MiB per CPU second".
//!
//! Wall time would be misleading on a shared machine (and when profiles run in parallel), so
//! we read the scheduler's per-thread accounting from `/proc/thread-self/schedstat` (first
//! field: nanoseconds on CPU, Linux ≥ 3.17). Elsewhere we fall back to wall time and say so.

use std::time::{Duration, Instant};

/// A start point for measuring the CPU time this thread uses.
#[derive(Debug, Clone, Copy)]
pub struct CpuTimer {
    start_cpu: Option<Duration>,
    start_wall: Instant,
}

impl CpuTimer {
    /// Start measuring now.
    pub fn start() -> Self {
        CpuTimer {
            start_cpu: thread_cpu_time(),
            start_wall: Instant::now(),
        }
    }

    /// CPU time used by this thread since `start` (wall time if the kernel does not tell).
    pub fn elapsed(&self) -> Duration {
        match (self.start_cpu, thread_cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => self.start_wall.elapsed(),
        }
    }
}

/// Nanoseconds this thread has spent on a CPU, if the kernel exposes it.
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}
