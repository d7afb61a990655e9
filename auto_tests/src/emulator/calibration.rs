//! Checking the instrument: how late does the emulator timestamp what enters it, and what
//! would that lateness alone cost at a bottleneck?
//!
//! A sender in namespace A paces UDP datagrams evenly (spinning, no timer) and records when
//! it handed each to the kernel; the path has only a propagation delay, so every datagram
//! has a link sample, in order, carrying the emulator's entry timestamp. The difference is
//! the emulator's input lag. The bottleneck the profile would have is then replayed offline
//! (the same [`Bottleneck`] code) three times: on the ideal schedule, on the real send times
//! (the sender's own jitter), and on the emulator's entry times. Drops in the last that are
//! not in the second were made by the instrument, not by the sender.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use rustox_simulator::{Admission, Bottleneck, BottleneckConfig, LinkConfig};
use serde::Serialize;

use super::hosts::Side;
use super::stats::{LatenessHistogram, LatenessSummary};
use super::testbed::{Testbed, TestbedConfig};
use super::{EmulatorError, EmulatorOptions};

/// IPv4 + UDP header bytes around each calibration datagram's payload.
const HEADERS: usize = 28;
/// Attempts at a datagram the kernel refused (ENOBUFS) before the calibration fails.
const SEND_RETRIES: u32 = 1000;

/// What to offer.
#[derive(Debug, Clone)]
pub struct CalibrationSpec {
    /// Offered rate in IP bits per second.
    pub rate_bps: u64,
    /// IP packet size (a full net_crypto datagram is 1428).
    pub packet_bytes: usize,
    /// How long to send.
    pub duration: Duration,
    /// One-way delay of the path (the emulator holds packets this long).
    pub delay: Duration,
    /// The bottleneck replayed offline.
    pub bottleneck: BottleneckConfig,
    /// The emulator's options.
    pub options: EmulatorOptions,
}

/// What the calibration measured.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationReport {
    /// Datagrams sent.
    pub packets: u64,
    /// Achieved send rate, IP bits per second.
    pub sent_bps: f64,
    /// The sender's own lateness against its schedule.
    pub send_lateness: LatenessSummary,
    /// Emulator entry timestamp − send time: the instrument's input lag.
    pub entry_lag: LatenessSummary,
    /// Bottleneck drops had every packet left exactly on schedule.
    pub drops_on_schedule: u64,
    /// Bottleneck drops at the real send times.
    pub drops_at_send_times: u64,
    /// Bottleneck drops at the emulator's entry times (what a run's link model sees).
    pub drops_at_entry_times: u64,
    /// The emulator's release lateness.
    pub release_lateness: LatenessSummary,
    /// Fraction of the time the emulator thread was not asleep.
    pub emulator_busy: Option<f64>,
    /// Whether the emulator ran under SCHED_FIFO.
    pub realtime: bool,
}

/// Runs a calibration flow through a fresh testbed.
pub fn calibrate(spec: &CalibrationSpec) -> Result<CalibrationReport, EmulatorError> {
    let link = LinkConfig {
        delay: spec.delay,
        record_samples: true,
        ..LinkConfig::default()
    };
    let mut config = TestbedConfig::symmetric(link, 0);
    config.options = spec.options.clone();
    let bed = Testbed::new(config)?;
    let tx = bed.udp_socket(Side::A, 0)?;
    // Nobody reads it: datagrams beyond its buffer are dropped in B, after the emulator.
    let rx = bed.udp_socket(Side::B, 0)?;
    let to = rx
        .local_addr()
        .map_err(|e| EmulatorError::Child(format!("receiver address: {e}")))?;
    tx.connect(to)
        .map_err(|e| EmulatorError::Child(format!("connect: {e}")))?;
    let payload = vec![0x5a_u8; spec.packet_bytes.saturating_sub(HEADERS).max(1)];
    let interval_ns =
        (spec.packet_bytes as u128 * 8 * 1_000_000_000 / u128::from(spec.rate_bps.max(1))) as u64;
    let count = (spec.duration.as_nanos() as u64 / interval_ns.max(1)).max(1);
    let origin = bed.origin();
    let (sent_ns, schedule_ns) = paced_send(&tx, &payload, origin, interval_ns, count)?;
    // Let the last packets through before stopping.
    std::thread::sleep(spec.delay + Duration::from_millis(50));
    let report = bed.finish()?;
    drop(rx);
    let samples = &report.a_to_b.samples;
    if samples.len() != sent_ns.len() {
        return Err(EmulatorError::Child(format!(
            "{} datagrams sent but {} entered the link",
            sent_ns.len(),
            samples.len()
        )));
    }
    let mut send_lateness = LatenessHistogram::default();
    let mut entry_lag = LatenessHistogram::default();
    let mut entry_ns = Vec::with_capacity(samples.len());
    for ((sample, &sent), &due) in samples.iter().zip(&sent_ns).zip(&schedule_ns) {
        send_lateness.record(sent.saturating_sub(due));
        let entered = sample.entered.as_micros() * 1000;
        // Entry times are whole microseconds: up to 1 µs below the send time is rounding.
        entry_lag.record(entered.saturating_sub(sent));
        entry_ns.push(entered);
    }
    let span_ns = sent_ns.last().copied().unwrap_or(0) - sent_ns.first().copied().unwrap_or(0);
    Ok(CalibrationReport {
        packets: sent_ns.len() as u64,
        sent_bps: if span_ns > 0 {
            (sent_ns.len() - 1) as f64 * spec.packet_bytes as f64 * 8.0 / (span_ns as f64 / 1e9)
        } else {
            0.0
        },
        send_lateness: send_lateness.summary(),
        entry_lag: entry_lag.summary(),
        drops_on_schedule: replay(&schedule_ns, spec.packet_bytes, spec.bottleneck),
        drops_at_send_times: replay(&sent_ns, spec.packet_bytes, spec.bottleneck),
        drops_at_entry_times: replay(&entry_ns, spec.packet_bytes, spec.bottleneck),
        release_lateness: report.stats.lateness.summary(),
        emulator_busy: report.stats.busy_fraction(),
        realtime: report.stats.realtime,
    })
}

/// Sends `count` datagrams every `interval_ns`, spinning between them; returns when each
/// was handed to the kernel and when it was due, both in ns since `origin`. A sender that
/// fell behind sends at once (a burst), as a real pacer catching up would.
fn paced_send(
    tx: &UdpSocket,
    payload: &[u8],
    origin: Instant,
    interval_ns: u64,
    count: u64,
) -> Result<(Vec<u64>, Vec<u64>), EmulatorError> {
    let since = |t: Instant| t.duration_since(origin).as_nanos() as u64;
    let start = since(Instant::now()) + 1_000_000;
    let mut sent = Vec::with_capacity(count as usize);
    let mut due_all = Vec::with_capacity(count as usize);
    for i in 0..count {
        let due = start + i * interval_ns;
        let mut now = since(Instant::now());
        while now < due {
            std::hint::spin_loop();
            now = since(Instant::now());
        }
        // A full device queue (ENOBUFS) refuses the datagram before the emulator: retry a
        // little, then give up (the caller sees fewer datagrams than scheduled).
        let mut tries = 0;
        while let Err(e) = tx.send(payload) {
            tries += 1;
            if tries > SEND_RETRIES {
                return Err(EmulatorError::Child(format!("calibration send: {e}")));
            }
            std::thread::yield_now();
        }
        sent.push(now);
        due_all.push(due);
    }
    Ok((sent, due_all))
}

/// Drop-tail drops of packets of `bytes` offered at `times_ns` to `bottleneck`.
fn replay(times_ns: &[u64], bytes: usize, bottleneck: BottleneckConfig) -> u64 {
    let mut b = Bottleneck::new(bottleneck.rate_bps, bottleneck.queue_bytes);
    times_ns
        .iter()
        .filter(|&&t| b.offer(t, bytes as u64) == Admission::Overflow)
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_drops_only_what_overflows() {
        let b = BottleneckConfig {
            rate_bps: 8_000_000, // 1 byte per µs
            queue_bytes: 3000,
        };
        // Evenly spaced at the rate: nothing queues.
        let even: Vec<u64> = (0..100).map(|i| i * 1_000_000).collect();
        assert_eq!(replay(&even, 1000, b), 0);
        // All at once: three fit.
        assert_eq!(replay(&[0; 10], 1000, b), 7);
    }
}
