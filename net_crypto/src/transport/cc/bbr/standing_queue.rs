//! When a rise of the RTT means a standing queue (docs/transport.md §3.6): the threshold the
//! Startup exit and the loss guard compare a round's minimum RTT against, what it allows for
//! the peer's ack delay, and how a peer that acknowledges slowly (c-toxcore) is told apart.

use std::time::Duration;

use super::params::{MAX_QUEUE_THRESH, MIN_QUEUE_THRESH};
use crate::transport::rtt::RttEstimator;

/// The RTT rise above `min` that means a standing queue: RFC 9406's clamp(min/8, 4 ms,
/// 16 ms), plus [`ack_delay_allowance`]. On a path whose whole buffer holds less than
/// those 4 ms — a gigabit LAN's 1-BDP switch buffer is 0.5 ms — no queue could ever pass
/// it, and neither Startup's nor the loss guard's congestion tests fire however much the
/// buffer drops (on real sockets, ~30 % of packets resent through a 62.5 kB queue): there the
/// floor is a quarter of the minimum RTT.
pub(super) fn queue_threshold(min: Duration, rtt: &RttEstimator) -> Duration {
    let floor = MIN_QUEUE_THRESH.min(min / 4);
    // Twice the RTT variation: these tests read single samples or a round's losses, and on
    // a jittery sub-millisecond path (loopback under load) one variation let reordering's
    // spurious losses plus jitter pass for a congested round.
    (min / 8).clamp(floor, MAX_QUEUE_THRESH) + ack_delay_allowance(min, rtt, 2)
}

/// What the queue tests add for the peer's ack delay, which our RTT samples carry (the
/// wire has no field for it): the estimate, but at most a quarter of the minimum RTT or
/// `variations` times the RTT variation, whichever is larger. On long paths that cap never binds (≤ 25 ms
/// of delay from our receiver against ≥ 100 ms paths); on a LAN the estimate's 1 ms floor
/// (rtt.rs) alone exceeds the largest queue a 1-BDP buffer can hold, while the round
/// minima the tests compare come from the promptly acknowledged packets of each round.
pub(super) fn ack_delay_allowance(min: Duration, rtt: &RttEstimator, variations: u32) -> Duration {
    let ours = rtt
        .peer_ack_delay()
        .min((min / 4).max(rtt.var() * variations));
    ours.max(slow_acker_cadence(rtt).unwrap_or(Duration::ZERO))
}

/// The request cadence of a peer that acknowledges less often than our own ack rule ever
/// would (every 25 ms at the latest): c-toxcore 0.2.18 requests every 50–1000 ms whatever
/// it receives. Every RTT sample then carries up to that much delay, and data sent after
/// a request waits that long for its acknowledgement: it is neither a queue (the delay
/// tests must not see one) nor a reason to stop sending (the window must cover it).
/// Without this, BBR sending to c-toxcore on loopback saw a 25 ms "queue" over a 0.2 ms
/// path, left Startup at once and sat on its 16-packet floor: 2.7 Mbit/s.
pub(super) fn slow_acker_cadence(rtt: &RttEstimator) -> Option<Duration> {
    rtt.peer_request_cadence()
        .filter(|c| *c > SLOW_ACKER_CADENCE)
}

/// Above this request cadence a peer is a slow acknowledger: above our ack rule's 25 ms (a
/// rustox receiver at a low rate, give or take a late timer), below c-toxcore's shortest
/// interval, 50 ms (`PACKET_COUNTER_AVERAGE_INTERVAL`), and below the cadence's first
/// smoothed values against c-toxcore on loopback, 32–39 ms (its first gaps are shorter:
/// the file control packets' headers acknowledge too). At 40 ms BBR judged c-toxcore's
/// cadence a queue in the third request's round, left Startup at 0.76 MB/s, and took ProbeBW
/// five seconds to reach the 50 MB/s that loopback carries (ffi-bench, rustox →
/// c-toxcore, 256 MiB: 23.0 MiB/s).
const SLOW_ACKER_CADENCE: Duration = Duration::from_millis(30);
