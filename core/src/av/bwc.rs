//! The bandwidth controller's reports (`toxav/bwcontroller.c`; docs/protocol.md §13.3): the
//! receiver of a call's media counts the bytes it received and lost, and every 950 ms, when
//! something was lost, tells the sender on lossy friend packet 196; the sender turns a
//! report into a loss ratio for its bit rate.
//!
//! | length | content |
//! |---|---|
//! | 1 | `196` (`BWC_PACKET_ID`) |
//! | 4 | bytes lost since the last report, big-endian |
//! | 4 | bytes received since the last report, big-endian |
//!
//! [`BwcMonitor`] is one call's `BWController`, both halves: the receiver's counting
//! (`bwc_add_lost`, `bwc_add_recv`, `send_update`) and the sender's reading (`on_update`).
//! c-toxcore decides whether to report when a count is added; sans-IO, the decision is
//! [`BwcMonitor::poll_report`]; polled after every non-zero count, where c-toxcore calls
//! `send_update`, it sends the same reports at the same moments (checked against
//! bwcontroller.c itself in core/tests/av_wire_ctoxcore.rs). 0.2.18 averages nothing: the
//! loss ratio of each accepted report goes to the layer above as it is.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::time::Duration;

use rustox_net_crypto::wire::Reader;
use rustox_net_crypto::Timestamp;

/// `BWC_PACKET_ID`.
pub const PACKET_ID_BWC: u8 = 196;
/// The packet's length, id byte included (`sizeof(struct BWCMessage) + 1`).
pub const BWC_PACKET_LEN: usize = 9;
/// `BWC_SEND_INTERVAL_MS`: reports are more than this apart, and a sender ignores a
/// report that comes sooner than this after the last one it took.
pub const SEND_INTERVAL: Duration = Duration::from_millis(950);
/// `BWC_AVG_LOSS_OVER_CYCLES_COUNT`: a report needs more than this many received counts
/// (`bwc_add_recv` calls with a non-zero count) since the last one.
pub const MIN_COUNTS_PER_REPORT: u32 = 30;

/// Why a packet 196 was refused (`bwc_handle_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BwcError {
    /// Not [`BWC_PACKET_LEN`] bytes.
    #[error("bandwidth report of {0} bytes, expected 9")]
    Length(usize),
    /// The first byte is not [`PACKET_ID_BWC`].
    #[error("not a bandwidth report")]
    WrongId,
}

/// `struct BWCMessage`: one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BwcReport {
    /// Bytes lost since the last report.
    pub lost: u32,
    /// Bytes received since the last report.
    pub received: u32,
}

impl BwcReport {
    /// `bwc_handle_data`: exactly 9 bytes, id first.
    pub fn parse(packet_with_id: &[u8]) -> Result<BwcReport, BwcError> {
        if packet_with_id.len() != BWC_PACKET_LEN {
            return Err(BwcError::Length(packet_with_id.len()));
        }
        let mut r = Reader::new(packet_with_id);
        let short = |_| BwcError::Length(packet_with_id.len());
        if r.u8().map_err(short)? != PACKET_ID_BWC {
            return Err(BwcError::WrongId);
        }
        let lost = r.u32_be().map_err(short)?;
        let received = r.u32_be().map_err(short)?;
        Ok(BwcReport { lost, received })
    }

    /// The packet as `send_update` writes it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(BWC_PACKET_LEN);
        out.push(PACKET_ID_BWC);
        out.extend_from_slice(&self.lost.to_be_bytes());
        out.extend_from_slice(&self.received.to_be_bytes());
        out
    }

    /// `lost / (received + lost)`, as `on_update` hands it on; `None` when nothing was
    /// lost (c-toxcore then calls nobody).
    pub fn loss_ratio(&self) -> Option<f32> {
        if self.lost == 0 {
            return None;
        }
        let total = u64::from(self.lost).saturating_add(u64::from(self.received));
        Some((f64::from(self.lost) / total as f64) as f32)
    }
}

/// One call's bandwidth controller: see the module comment.
#[derive(Debug, Clone)]
pub struct BwcMonitor {
    lost: u32,
    received: u32,
    /// `packet_loss_counted_cycles`.
    counts: u32,
    last_sent: Timestamp,
    last_taken: Option<Timestamp>,
    rejected: u64,
}

impl BwcMonitor {
    /// `bwc_new`: the first report can go 950 ms after `now`.
    pub fn new(now: Timestamp) -> BwcMonitor {
        BwcMonitor {
            lost: 0,
            received: 0,
            counts: 0,
            last_sent: now,
            last_taken: None,
            rejected: 0,
        }
    }

    /// `bwc_add_lost`.
    pub fn add_lost(&mut self, bytes: u32) {
        self.lost = self.lost.saturating_add(bytes);
    }

    /// `bwc_add_recv`: a zero count is no count.
    pub fn add_received(&mut self, bytes: u32) {
        if bytes == 0 {
            return;
        }
        self.counts = self.counts.saturating_add(1);
        self.received = self.received.saturating_add(bytes);
    }

    /// `send_update`: when more than [`MIN_COUNTS_PER_REPORT`] counts came in and more than
    /// [`SEND_INTERVAL`] passed since the last cycle, the cycle ends: a report (packet 196,
    /// id first) if anything was lost, and the counts start again.
    pub fn poll_report(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        if self.counts <= MIN_COUNTS_PER_REPORT
            || now.saturating_duration_since(self.last_sent) <= SEND_INTERVAL
        {
            return None;
        }
        let report = BwcReport {
            lost: self.lost,
            received: self.received,
        };
        self.counts = 0;
        self.lost = 0;
        self.received = 0;
        self.last_sent = now;
        (report.lost != 0).then(|| report.encode())
    }

    /// `on_update`: the peer's report on what we send. A report sooner than
    /// [`SEND_INTERVAL`] after the last one taken is refused (`None`, counted); a report
    /// without loss is taken and gives `None`; otherwise the loss ratio.
    pub fn handle_report(&mut self, now: Timestamp, report: BwcReport) -> Option<f32> {
        if let Some(last) = self.last_taken {
            if last.saturating_add(SEND_INTERVAL) > now {
                self.rejected = self.rejected.saturating_add(1);
                return None;
            }
        }
        self.last_taken = Some(now);
        report.loss_ratio()
    }

    /// Reports refused for coming too soon.
    pub fn rejected_reports(&self) -> u64 {
        self.rejected
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    #[test]
    fn report_bytes() {
        let r = BwcReport {
            lost: 0x0102_0304,
            received: 0xa0b0_c0d0,
        };
        assert_eq!(r.encode(), [196, 1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd0]);
        assert_eq!(BwcReport::parse(&r.encode()), Ok(r));
    }

    #[test]
    fn wrong_sizes_and_ids_are_refused() {
        let good = BwcReport {
            lost: 1,
            received: 2,
        }
        .encode();
        for n in 0..good.len() {
            assert_eq!(BwcReport::parse(&good[..n]), Err(BwcError::Length(n)));
        }
        let mut long = good.clone();
        long.push(0);
        assert_eq!(BwcReport::parse(&long), Err(BwcError::Length(10)));
        let mut other = good;
        other[0] = 197;
        assert_eq!(BwcReport::parse(&other), Err(BwcError::WrongId));
    }

    #[test]
    fn reports_need_31_counts_and_950_ms_and_loss() {
        let mut m = BwcMonitor::new(ms(1000));
        for _ in 0..31 {
            m.add_received(100);
        }
        m.add_lost(50);
        // 950 ms is not more than 950 ms.
        assert_eq!(m.poll_report(ms(1950)), None);
        let report = m.poll_report(ms(1951)).unwrap();
        assert_eq!(
            BwcReport::parse(&report),
            Ok(BwcReport {
                lost: 50,
                received: 3100
            })
        );
        // A new cycle: 30 counts are not enough.
        for _ in 0..30 {
            m.add_received(100);
        }
        m.add_lost(1);
        assert_eq!(m.poll_report(ms(5000)), None);
        m.add_received(0);
        assert_eq!(m.poll_report(ms(5000)), None);
        m.add_received(1);
        assert!(m.poll_report(ms(5000)).is_some());
        // Without loss the cycle ends without a report.
        for _ in 0..40 {
            m.add_received(100);
        }
        assert_eq!(m.poll_report(ms(7000)), None);
        m.add_lost(5);
        assert_eq!(m.poll_report(ms(7000)), None, "the cycle was reset");
    }

    #[test]
    fn sender_takes_one_report_per_interval() {
        let mut m = BwcMonitor::new(ms(0));
        let r = BwcReport {
            lost: 25,
            received: 75,
        };
        assert_eq!(m.handle_report(ms(10), r), Some(0.25));
        assert_eq!(m.handle_report(ms(959), r), None);
        assert_eq!(m.rejected_reports(), 1);
        assert_eq!(m.handle_report(ms(960), r), Some(0.25));
        assert_eq!(
            m.handle_report(
                ms(2000),
                BwcReport {
                    lost: 0,
                    received: 9
                }
            ),
            None
        );
        assert_eq!(
            BwcReport {
                lost: u32::MAX,
                received: u32::MAX
            }
            .loss_ratio(),
            Some(0.5)
        );
    }

    proptest! {
        #[test]
        fn round_trip(lost: u32, received: u32) {
            let r = BwcReport { lost, received };
            prop_assert_eq!(BwcReport::parse(&r.encode()), Ok(r));
        }

        #[test]
        fn any_bytes_parse_or_refuse(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            if let Ok(r) = BwcReport::parse(&bytes) {
                prop_assert_eq!(r.encode(), bytes);
            }
        }
    }
}
