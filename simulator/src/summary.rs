//! The one JSON line `rustox send` and `rustox recv` print per transfer, so scripts and
//! benchmarks read the same figures a person sees; the test rig parses it with this type.

use std::time::Duration;

use rustox_core::transport::TransportStats;
use serde::{Deserialize, Serialize};

/// One finished transfer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TransferSummary {
    /// File bytes transferred.
    pub bytes: u64,
    /// From the offer to the last byte (sender: acknowledged; receiver: written).
    pub seconds: f64,
    /// `bytes × 8 / seconds`, in 10⁶ bit/s.
    pub goodput_mbit: f64,
    /// The session's smoothed RTT at the end, if it had samples.
    pub rtt_ms: Option<f64>,
    /// Data packets this side sent again.
    pub resent_packets: u64,
    /// SHA-256 of the file, hex (the sender's hash of its source; the receiver's hash of
    /// what it wrote).
    pub sha256: String,
    /// CPU seconds this process used in total (all threads, user + system).
    pub cpu_seconds: Option<f64>,
    /// Receiver: the offer's file id, hex (the content's SHA-256 from a rustox sender,
    /// an opaque id from others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    /// Receiver: whether the file was verified against its sender, and how:
    /// `sha256-file-id` (its SHA-256 equals the file id) or `unverified (opaque file id)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
    /// Sender found by Tox ID: seconds from start until the friend was online.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub friend_online_seconds: Option<f64>,
}

impl TransferSummary {
    /// Fills in the rates from the raw figures.
    pub fn new(
        bytes: u64,
        elapsed: Duration,
        stats: Option<&TransportStats>,
        sha256: [u8; 32],
    ) -> Self {
        let seconds = elapsed.as_secs_f64();
        TransferSummary {
            bytes,
            seconds,
            goodput_mbit: if seconds > 0.0 {
                round3(bytes as f64 * 8.0 / seconds / 1e6)
            } else {
                0.0
            },
            rtt_ms: stats
                .and_then(|s| s.smoothed_rtt)
                .map(|d| round3(d.as_secs_f64() * 1000.0)),
            resent_packets: stats.map_or(0, |s| s.packets_resent),
            sha256: hex::encode(sha256),
            cpu_seconds: process_cpu_seconds(),
            file_id: None,
            verified: None,
            friend_online_seconds: None,
        }
    }

    /// The JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Three decimals are all these figures can claim; more is float noise in the JSON.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// CPU time of this process (user + system, all threads) from `/proc/self/stat`, fields 14
/// and 15 in clock ticks. Linux's USER_HZ is 100 on every architecture it exports to user
/// space, so a tick is 10 ms — coarse, but a 1 GiB transfer takes seconds.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may contain spaces; fields after it follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}
