//! What a link did, for scenario assertions and the benchmark table.

use rustox_net_crypto::Timestamp;

use super::DropCause;

/// One datagram that crossed the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSample {
    /// When it entered the link.
    pub entered: Timestamp,
    /// Time spent waiting in the bottleneck queue.
    pub queue_delay_us: u32,
    /// Entry to arrival: queueing + serialisation + propagation + jitter.
    pub transit_us: u32,
}

/// Counters per link. Byte counts are wire bytes (UDP payload + IP/UDP headers).
#[derive(Debug, Clone, Default)]
pub struct LinkStats {
    /// Datagrams offered to the link.
    pub packets_in: u64,
    /// Their wire bytes.
    pub bytes_in: u64,
    /// Datagrams that came out (copies from duplication not counted).
    pub packets_out: u64,
    /// Their wire bytes.
    pub bytes_out: u64,
    /// Dropped by random / Gilbert–Elliott loss.
    pub packets_dropped_loss: u64,
    /// Their wire bytes.
    pub bytes_dropped_loss: u64,
    /// Dropped because the bottleneck queue was full.
    pub packets_dropped_queue: u64,
    /// Their wire bytes.
    pub bytes_dropped_queue: u64,
    /// Dropped during an outage.
    pub packets_dropped_outage: u64,
    /// Their wire bytes.
    pub bytes_dropped_outage: u64,
    /// Delivered with a flipped bit (the receiver will drop them on the MAC).
    pub packets_corrupted: u64,
    /// Their wire bytes.
    pub bytes_corrupted: u64,
    /// Delivered twice.
    pub packets_duplicated: u64,
    /// Held back so that later packets overtook them.
    pub packets_reordered: u64,
    /// Per-datagram samples, when the link records them.
    pub samples: Vec<LinkSample>,
}

impl LinkStats {
    pub(super) fn record_drop(&mut self, cause: DropCause, wire: u64) {
        let (p, b) = match cause {
            DropCause::Loss => (&mut self.packets_dropped_loss, &mut self.bytes_dropped_loss),
            DropCause::QueueOverflow => (
                &mut self.packets_dropped_queue,
                &mut self.bytes_dropped_queue,
            ),
            DropCause::Outage => (
                &mut self.packets_dropped_outage,
                &mut self.bytes_dropped_outage,
            ),
        };
        *p += 1;
        *b += wire;
    }

    /// Wire bytes that never reached the far end intact: every drop plus corrupted datagrams.
    pub fn bytes_lost_total(&self) -> u64 {
        self.bytes_dropped_loss
            + self.bytes_dropped_queue
            + self.bytes_dropped_outage
            + self.bytes_corrupted
    }

    /// Datagrams that never reached the far end intact.
    pub fn packets_lost_total(&self) -> u64 {
        self.packets_dropped_loss
            + self.packets_dropped_queue
            + self.packets_dropped_outage
            + self.packets_corrupted
    }

    /// Queueing delays (µs) of datagrams that entered during `[from, to)`.
    pub fn queue_delays_between(
        &self,
        from: Timestamp,
        to: Timestamp,
    ) -> impl Iterator<Item = u32> + '_ {
        self.samples_between(from, to)
            .iter()
            .map(|s| s.queue_delay_us)
    }

    /// Samples of datagrams that entered during `[from, to)` (samples are in entry order).
    pub fn samples_between(&self, from: Timestamp, to: Timestamp) -> &[LinkSample] {
        let lo = self.samples.partition_point(|s| s.entered < from);
        let hi = self.samples.partition_point(|s| s.entered < to);
        &self.samples[lo..hi.max(lo)]
    }
}
