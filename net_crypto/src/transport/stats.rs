//! Counters and estimates a transport exposes (tests, simulator, benchmarks, CLI).

use std::time::Duration;

use super::Transport;

/// Counters and estimates, for tests, benchmarks and the CLI.
#[derive(Debug, Clone, Default)]
pub struct TransportStats {
    /// Smoothed RTT, once a sample exists (legacy: c-toxcore's min-only `rtt_time`).
    pub smoothed_rtt: Option<Duration>,
    /// RTT variance.
    pub rtt_var: Option<Duration>,
    /// Windowed minimum RTT.
    pub min_rtt: Option<Duration>,
    /// Latest RTT sample.
    pub latest_rtt: Option<Duration>,
    /// Number of RTT samples taken (never from resent packets, except legacy).
    pub rtt_samples: u64,
    /// Congestion window in bytes.
    pub cwnd_bytes: u64,
    /// Pacing rate in bytes per second.
    pub pacing_rate: u64,
    /// Payload bytes sent and not yet acknowledged or declared lost.
    pub bytes_in_flight: u64,
    /// Lossless packets sent for the first time / their payload bytes.
    pub packets_sent: u64,
    /// Payload bytes of first transmissions.
    pub bytes_sent: u64,
    /// Retransmissions / their payload bytes.
    pub packets_resent: u64,
    /// Payload bytes of retransmissions.
    pub bytes_resent: u64,
    /// Packets declared lost.
    pub packets_declared_lost: u64,
    /// Losses later found spurious (the original copy was delivered).
    pub spurious_losses: u64,
    /// Lossless packets the receiver got twice (truth for spurious resends).
    pub duplicates_received: u64,
    /// Lossless payload bytes delivered in order to the layer above.
    pub bytes_delivered: u64,
    /// Request packets sent / received.
    pub requests_sent: u64,
    /// Request packets received.
    pub requests_received: u64,
    /// Lossless packets acknowledged (cumulatively or by request).
    pub packets_acked: u64,
    /// Payload bytes declared lost.
    pub bytes_declared_lost: u64,
    /// Probe timeouts that fired (tail-loss probes sent).
    pub pto_count: u64,
    /// Times persistent congestion was declared (RFC 9002 §7.6): the window fell to its
    /// minimum.
    pub persistent_congestion: u64,
    /// Lossless packets received (first copies).
    pub packets_received: u64,
    /// Estimated peer ack delay (gap between its requests while data is outstanding).
    pub peer_ack_delay: Option<Duration>,
    /// The controller is in startup / slow start.
    pub in_slow_start: bool,
    /// Packets queued and not yet sent once, plus packets waiting for a resend.
    pub send_queue_len: u64,
    /// Current packet-count threshold of loss detection (adaptive, docs/transport.md §3.5).
    pub loss_packet_threshold: u32,
    /// Second copies of repairs sent at a transfer's tail on a randomly lossy path (sender.rs
    /// `at_the_tail`); also counted in `packets_resent`.
    pub tail_copies: u64,
    /// How late the driver's wake-ups run, as the pacer's burst credit covers it (the larger
    /// of the driver's declared and the measured lateness, pacer.rs).
    pub wake_lateness: Option<Duration>,
    /// Times the session's data moved between direct UDP and a TCP relay
    /// (`Transport::on_path_change`).
    pub path_changes: u64,
}

impl Transport {
    /// Counters and estimates.
    pub fn stats(&self) -> TransportStats {
        let mut s = self.stats.clone();
        self.cc.fill_stats(&self.rtt, &mut s);
        s.bytes_in_flight = self.bytes_in_flight;
        s.in_slow_start = self.cc.in_slow_start();
        s.send_queue_len =
            (self.control_queue.len() + self.bulk_queue.len() + self.resend_queue.len()) as u64;
        s.loss_packet_threshold = self.loss.pkt_thresh();
        s.wake_lateness = self.cc.paces().then(|| self.pacer.last_wake_lateness());
        s
    }
}
