//! What a call delivered, from a log of frames handed over and marks that came out: the
//! figures of the calls benchmark (docs/benchmarks.md, "Calls"), the same for the
//! simulator and for real sockets.
//!
//! Times are microseconds on one clock (simulated time, or the monotonic clock both peers
//! of a real run share on one machine).

use std::collections::HashMap;

use rustox_simulator::percentile;

/// A gap between pictures longer than this is a freeze (the measure).
pub const FREEZE_GAP_US: u64 = 200_000;

/// One direction of a call as the two clients saw it.
#[derive(Debug, Clone, Default)]
pub struct CallLog {
    /// When each audio frame was handed to the library, by its index.
    pub audio_sent: Vec<u64>,
    /// (index, time) of each decoded audio frame whose mark was intact.
    pub audio_received: Vec<(u32, u64)>,
    /// Audio frames the receiver's library concealed (loss concealment or FEC); None when
    /// the library does not say.
    pub audio_concealed: Option<u64>,
    /// When each picture was handed to the library, by its index.
    pub video_sent: Vec<u64>,
    /// (index, time) of each decoded picture whose mark was intact.
    pub video_received: Vec<(u32, u64)>,
    /// (time, bytes) of video packets reaching the receiver (empty when not observable).
    pub video_bytes: Vec<(u64, u32)>,
    /// (time, bytes) of audio packets reaching the receiver (empty when not observable).
    pub audio_bytes: Vec<(u64, u32)>,
    /// The file sent on the same friend during the call: (first byte time, time it was
    /// complete, or the end of the run, bytes delivered by then).
    pub file: Option<(u64, u64, u64)>,
}

/// The figures of one call direction over a window of send times.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CallFigures {
    /// Window length, seconds.
    pub seconds: f64,
    /// Audio frames handed over in the window.
    pub audio_sent: u64,
    /// Mouth-to-ear latency of audio, 50th percentile, ms.
    pub audio_p50_ms: Option<f64>,
    /// 95th percentile, ms.
    pub audio_p95_ms: Option<f64>,
    /// Share of audio frames whose mark never came out, percent.
    pub audio_lost_pct: f64,
    /// Share of audio frames concealed by the receiver, percent (None: not observable).
    pub audio_concealed_pct: Option<f64>,
    /// Pictures handed over in the window.
    pub video_sent: u64,
    /// Pictures delivered per second.
    pub video_fps: f64,
    /// Gaps between delivered pictures longer than [`FREEZE_GAP_US`].
    pub video_frozen: u64,
    /// Video bit rate at the receiver, kbit/s (None: not observable).
    pub video_kbps: Option<f64>,
    /// Audio bit rate at the receiver, kbit/s (None: not observable).
    pub audio_kbps: Option<f64>,
    /// File goodput while it ran, Mbit/s.
    pub file_mbps: Option<f64>,
    /// Whether the file completed.
    pub file_complete: bool,
}

fn rate_kbps(samples: &[(u64, u32)], from: u64, to: u64) -> Option<f64> {
    if samples.is_empty() || to <= from {
        return None;
    }
    let bytes: u64 = samples
        .iter()
        .filter(|(t, _)| (from..to).contains(t))
        .map(|&(_, b)| u64::from(b))
        .sum();
    Some(bytes as f64 * 8.0 / ((to - from) as f64 / 1e6) / 1000.0)
}

impl CallLog {
    /// The figures of frames handed over in `[from, to)` (µs). Frames that arrive after
    /// `to` still count: the run goes on long enough for the last ones to come out.
    /// [`CallLog::audio_concealed`] is taken as the count over the same span.
    pub fn figures(&self, from: u64, to: u64, file_size: u64) -> CallFigures {
        let seconds = to.saturating_sub(from) as f64 / 1e6;
        let in_window = |t: u64| (from..to).contains(&t);
        // Audio: first arrival of each mark.
        let mut first: HashMap<u32, u64> = HashMap::new();
        for &(i, t) in &self.audio_received {
            first.entry(i).or_insert(t);
        }
        let mut sent = 0u64;
        let mut lost = 0u64;
        let mut latencies: Vec<u32> = Vec::new();
        for (i, &t) in self.audio_sent.iter().enumerate() {
            if !in_window(t) {
                continue;
            }
            sent += 1;
            match first.get(&(i as u32)) {
                Some(&r) => latencies.push(u32::try_from(r.saturating_sub(t)).unwrap_or(u32::MAX)),
                None => lost += 1,
            }
        }
        let pct = |n: u64| {
            if sent == 0 {
                0.0
            } else {
                n as f64 * 100.0 / sent as f64
            }
        };
        let ms = |v: Option<u32>| v.map(|us| f64::from(us) / 1000.0);
        let p50 = ms(percentile(&mut latencies.clone(), 0.50));
        let p95 = ms(percentile(&mut latencies, 0.95));
        // Video: arrivals of pictures sent in the window, first copy of each.
        let mut seen = HashMap::new();
        for &(i, t) in &self.video_received {
            seen.entry(i).or_insert(t);
        }
        let mut arrivals: Vec<u64> = seen
            .iter()
            .filter(|(i, _)| {
                self.video_sent
                    .get(**i as usize)
                    .is_some_and(|&s| in_window(s))
            })
            .map(|(_, &t)| t)
            .collect();
        arrivals.sort_unstable();
        let video_sent = self.video_sent.iter().filter(|&&t| in_window(t)).count() as u64;
        let frozen = if video_sent == 0 {
            0
        } else if arrivals.is_empty() {
            1
        } else {
            arrivals
                .windows(2)
                .filter(|w| w[1] - w[0] > FREEZE_GAP_US)
                .count() as u64
        };
        let (file_mbps, file_complete) = match self.file {
            Some((start, end, bytes)) if end > start => (
                Some(bytes as f64 * 8.0 / ((end - start) as f64 / 1e6) / 1e6),
                bytes >= file_size,
            ),
            Some((_, _, bytes)) => (None, bytes >= file_size),
            None => (None, false),
        };
        CallFigures {
            seconds,
            audio_sent: sent,
            audio_p50_ms: p50,
            audio_p95_ms: p95,
            audio_lost_pct: pct(lost),
            audio_concealed_pct: self.audio_concealed.map(|c| pct(c.min(sent))),
            video_sent,
            video_fps: if seconds > 0.0 {
                arrivals.len() as f64 / seconds
            } else {
                0.0
            },
            video_frozen: frozen,
            video_kbps: rate_kbps(&self.video_bytes, from, to),
            audio_kbps: rate_kbps(&self.audio_bytes, from, to),
            file_mbps,
            file_complete,
        }
    }
}

/// Pairs received marks with sent frames when a mark names its frame only modulo `count`
/// (the audio marks repeat every 16 frames, 320 ms): `(index, receipt time)` of the first
/// receipt of each frame. `sent[i]` is frame `i`'s send time (`u64::MAX`: not sent);
/// `receipts` are every decoded frame in order of arrival, `(time, mark)`, with `None` for
/// one whose mark could not be read (silence, concealment, a codec too coarse for the tone).
///
/// The first readable receipt is the latest frame of its mark sent before it (the call has
/// just started: the delay is well under a period). After that, every decoded frame is one
/// frame slot, so a readable receipt `n` decodes after the last match is near frame
/// `last + n`: it is the frame of its mark, after the last match and sent before the
/// receipt, nearest to that. This holds through unreadable stretches, losses (fewer than
/// half a period of them between two readable frames) and a delay that grows past the
/// period behind a file. The same mark again right after a match (a frame spread over two
/// decodes, a concealed repeat) is not a new frame.
pub fn follow_marks(sent: &[u64], receipts: &[(u64, Option<u64>)], count: u64) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    let sent_at = |i: u64| sent.get(i as usize).copied().filter(|&s| s != u64::MAX);
    // The last match and the decodes since.
    let mut last: Option<u64> = None;
    let mut since = 0u64;
    for &(t, mark) in receipts {
        since += 1;
        let Some(k) = mark.map(|k| k % count) else {
            continue;
        };
        let index = match last {
            None => (0..sent.len() as u64)
                .rev()
                .find(|&i| i % count == k && sent_at(i).is_some_and(|s| s <= t)),
            Some(l) if since == 1 && l % count == k => None,
            Some(l) => {
                let expected = l + since;
                let first = l + 1 + (k + count - (l + 1) % count) % count;
                (0..)
                    .map(|j| first + j * count)
                    .take_while(|&i| sent_at(i).is_some_and(|s| s <= t))
                    .min_by_key(|&i| i.abs_diff(expected))
            }
        };
        if let Some(index) = index {
            last = Some(index);
            since = 0;
            out.push((u32::try_from(index).unwrap_or(u32::MAX), t));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_count_latency_loss_and_freezes() {
        let mut log = CallLog::default();
        for i in 0..100u32 {
            log.audio_sent.push(u64::from(i) * 20_000);
            if i % 10 != 3 {
                // 40 ms for most, 90 ms for every fifth.
                let d = if i % 5 == 0 { 90_000 } else { 40_000 };
                log.audio_received.push((i, u64::from(i) * 20_000 + d));
            }
        }
        for i in 0..30u32 {
            log.video_sent.push(u64::from(i) * 33_333);
            if !(10..20).contains(&i) {
                log.video_received.push((i, u64::from(i) * 33_333 + 50_000));
            }
        }
        let f = log.figures(0, 2_000_000, 0);
        assert_eq!(f.audio_sent, 100);
        assert!((f.audio_lost_pct - 10.0).abs() < 1e-9);
        assert_eq!(f.audio_p50_ms, Some(40.0));
        assert_eq!(f.audio_p95_ms, Some(90.0));
        assert_eq!(f.video_sent, 30);
        assert_eq!(
            f.video_frozen, 1,
            "ten pictures missing is one freeze of 366 ms"
        );
        assert!((f.video_fps - 10.0).abs() < 1e-9);
    }

    #[test]
    fn marks_are_followed_past_their_period_and_through_losses() {
        let sent: Vec<u64> = (0..100).map(|i| i * 20_000).collect();
        // 50 ms at first, then 450 ms (beyond the marks' 320 ms period); frame 40 lost,
        // frame 41 heard twice (a concealed repeat).
        let mut heard = Vec::new();
        for i in 0..100u64 {
            let delay = if i < 30 { 50_000 } else { 450_000 };
            if i == 40 {
                continue;
            }
            heard.push((i * 20_000 + delay, Some(i % 16)));
            if i == 41 {
                heard.push((i * 20_000 + delay + 20_000, Some(i % 16)));
            }
        }
        let m = follow_marks(&sent, &heard, 16);
        assert_eq!(m.len(), 99, "every heard frame once");
        assert!(m.iter().all(|&(i, _)| i != 40));
        assert_eq!(
            m[80],
            (81, 81 * 20_000 + 450_000),
            "the delay, not modulo 320 ms"
        );
    }

    #[test]
    fn sparse_marks_keep_their_delay() {
        // 150 ms one way; only the frames of mark 0 can be read (a codec at a rate too low
        // for the higher tones), so readable receipts are a period apart.
        let sent: Vec<u64> = (0..200).map(|i| i * 20_000).collect();
        let heard: Vec<(u64, Option<u64>)> = (0..200u64)
            .map(|i| (i * 20_000 + 150_000, (i % 16 == 0).then_some(0)))
            .collect();
        let m = follow_marks(&sent, &heard, 16);
        assert_eq!(m.len(), 200 / 16 + 1);
        for (n, &(i, t)) in m.iter().enumerate() {
            assert_eq!(u64::from(i), n as u64 * 16);
            assert_eq!(t - u64::from(i) * 20_000, 150_000);
        }
    }
}
