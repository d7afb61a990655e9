//! A profile's path split into the two TCP legs of a relayed path, and the round trip such
//! a path has when nothing queues on it.
//!
//! A relayed profile's RTT is the end-to-end RTT between the two nodes: node → relay →
//! node and back crosses four one-way leg delays, so each is RTT / 4 (relay500: 125 ms).
//! Every leg direction keeps the profile's bottleneck rate and buffer (the relay's and the
//! nodes' access links; the path's rate is the same however it is cut), and the profile's
//! one-way loss `p` is split so that the two legs in a row lose `p`:
//! 1 − (1 − p_leg)² = p (for Gilbert–Elliott bursts each state's loss is split so; the two
//! legs' chains run independently, so bursts only approximate the profile's). Jitter is
//! split evenly.

use std::time::Duration;

use rustox_simulator::{BottleneckConfig, Jitter, LinkConfig, LossModel, Profile};

use crate::tcp::{ETHERNET_MTU, IPV4_TCP_HEADERS};

/// Bytes a relay frame adds around a net_crypto datagram (docs/protocol.md §7): the frame's
/// 2-byte length, the 16-byte MAC of its box, and the connection id byte of a data packet.
pub const RELAY_FRAME_OVERHEAD: u64 = 2 + 16 + 1;

/// One leg direction of `profile`'s relayed path.
pub fn leg_config(profile: &Profile) -> LinkConfig {
    let mut base = profile.link_config();
    base.delay = profile.rtt / 4;
    base.loss = split_loss(profile.loss);
    base.jitter = Jitter {
        amplitude: profile.jitter.amplitude / 2,
        correlation: profile.jitter.correlation,
    };
    base.bottleneck = Some(BottleneckConfig {
        rate_bps: profile.rate_bps,
        queue_bytes: profile.buffer_bytes,
    });
    base
}

/// The per-leg loss whose two legs in a row lose what `loss` loses.
pub fn split_loss(loss: LossModel) -> LossModel {
    let half = |p: f64| 1.0 - (1.0 - p.clamp(0.0, 1.0)).sqrt();
    match loss {
        LossModel::None => LossModel::None,
        LossModel::Random(p) => LossModel::Random(half(p)),
        LossModel::GilbertElliott {
            p,
            r,
            loss_bad,
            loss_good,
        } => LossModel::GilbertElliott {
            p,
            r,
            loss_bad: half(loss_bad),
            loss_good: half(loss_good),
        },
    }
}

/// Wire bytes a net_crypto datagram of `datagram` bytes costs on a leg, in a stream of
/// full TCP segments: its relay frame, plus its share of each 1500-byte segment's headers.
pub fn leg_wire_bytes(datagram: u64) -> f64 {
    let mss = (ETHERNET_MTU - IPV4_TCP_HEADERS) as f64;
    (datagram + RELAY_FRAME_OVERHEAD) as f64 * ETHERNET_MTU as f64 / mss
}

/// The round trip of a full data packet and its acknowledgement through both legs when no
/// queue holds either back: four one-way delays, plus the serialisation of the data
/// packet's bytes on each forward leg (a relay forwards a frame once it has read all of it)
/// and of a request packet's on each reverse leg. This is the truth a session's smoothed
/// RTT is compared with on a relayed path: what it would read if neither the transport nor
/// the TCP legs queued anything.
pub fn base_rtt(profile: &Profile, data_datagram: u64, ack_datagram: u64) -> Duration {
    let bytes_per_sec = profile.rate_bytes_per_sec();
    let serialise = |datagram: u64| {
        // A whole segment must arrive before the relay (or the node) reads its bytes.
        let segment = (datagram + RELAY_FRAME_OVERHEAD)
            .min((ETHERNET_MTU - IPV4_TCP_HEADERS) as u64)
            + IPV4_TCP_HEADERS as u64;
        Duration::from_secs_f64(2.0 * segment as f64 / bytes_per_sec)
    };
    profile.rtt + serialise(data_datagram) + serialise(ack_datagram)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay500_legs_add_up_to_the_profile() {
        let p = Profile::relay500();
        let leg = leg_config(&p);
        assert_eq!(leg.delay, Duration::from_millis(125));
        assert_eq!(leg.bottleneck.map(|b| b.rate_bps), Some(2_000_000));
        // 500 ms + 2 × (1400 + 19 + 52) B and 2 × (60 + 19 + 52) B at 250 kB/s.
        let rtt = base_rtt(&p, 1400, 60);
        assert_eq!(rtt.as_micros(), 500_000 + 11_768 + 1_048);
    }

    #[test]
    fn two_legs_lose_what_the_profile_loses() {
        let LossModel::Random(leg) = split_loss(LossModel::Random(0.03)) else {
            panic!()
        };
        let both = 1.0 - (1.0 - leg) * (1.0 - leg);
        assert!((both - 0.03).abs() < 1e-12);
        assert!((leg_wire_bytes(1400) - 1419.0 * 1500.0 / 1448.0).abs() < 1e-9);
    }
}
