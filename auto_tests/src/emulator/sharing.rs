//! How flows shared the emulated link: each flow's rate over the time all of them were
//! active — the input to Jain's index ([`rustox_simulator::jain_index`], docs/transport.md §6) and to
//! the share against a TCP flow. Rates over whole transfers would not do: a flow that
//! finishes first leaves the link to the other, which then looks like unfairness.

use std::ops::Range;
use std::time::Duration;

use super::stats::FlowSeries;

/// Bytes per interval of several flows summed (e.g. iperf3's control and data
/// connections, which share a port), as one series.
pub fn merged(series: &[&FlowSeries]) -> Vec<u64> {
    let len = series
        .iter()
        .map(|s| s.bytes_per_interval.len())
        .max()
        .unwrap_or(0);
    let mut out = vec![0; len];
    for s in series {
        for (i, b) in s.bytes_per_interval.iter().enumerate() {
            out[i] += b;
        }
    }
    out
}

/// Intervals during which every series was delivering: from the latest first delivery to
/// the earliest last one, without those two boundary intervals (a flow starts or ends part
/// way through them) when that leaves any. `None` if the flows never overlapped.
pub fn overlap(series: &[Vec<u64>]) -> Option<Range<usize>> {
    let mut start = 0;
    let mut end = usize::MAX;
    for s in series {
        let first = s.iter().position(|&b| b > 0)?;
        let last = s.iter().rposition(|&b| b > 0)?;
        start = start.max(first);
        end = end.min(last);
    }
    if series.is_empty() || start > end {
        return None;
    }
    Some(if end > start + 1 {
        start + 1..end
    } else {
        start..end + 1
    })
}

/// Mean bit rate of each series over `range` of intervals of length `interval`.
pub fn rates_bps(series: &[Vec<u64>], range: Range<usize>, interval: Duration) -> Vec<f64> {
    let seconds = interval.as_secs_f64() * range.len() as f64;
    series
        .iter()
        .map(|s| {
            let bytes: u64 = s.get(range.clone()).map_or(0, |r| r.iter().sum());
            if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds
            } else {
                0.0
            }
        })
        .collect()
}

/// Each flow's part of what all of them delivered, interval by interval over `range`
/// (`None` for an interval in which nothing was delivered): shows a share that drifts,
/// which the mean over the window hides.
pub fn shares_per_interval(series: &[Vec<u64>], range: Range<usize>) -> Vec<Vec<Option<f64>>> {
    range
        .map(|t| {
            let at = |s: &Vec<u64>| s.get(t).copied().unwrap_or(0);
            let total: u64 = series.iter().map(at).sum();
            series
                .iter()
                .map(|s| (total > 0).then(|| at(s) as f64 / total as f64))
                .collect()
        })
        .collect()
}

/// Each flow's part of the bytes all delivered over the first and over the second half of
/// `range` (the middle interval of an odd count goes to neither).
pub fn shares_by_half(series: &[Vec<u64>], range: Range<usize>) -> [Vec<f64>; 2] {
    let half = range.len() / 2;
    let first = range.start..range.start + half;
    let second = range.end - half..range.end;
    [first, second].map(|r| {
        let bytes: Vec<u64> = series
            .iter()
            .map(|s| s.get(r.clone()).map_or(0, |x| x.iter().sum()))
            .collect();
        let total: u64 = bytes.iter().sum();
        bytes
            .iter()
            .map(|&b| {
                if total > 0 {
                    b as f64 / total as f64
                } else {
                    0.0
                }
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_drops_the_partial_boundary_intervals() {
        let a = vec![0, 5, 10, 10, 10, 10, 3, 0];
        let b = vec![0, 0, 0, 7, 10, 10, 10, 10];
        assert_eq!(overlap(&[a.clone(), b.clone()]), Some(4..6));
        let rates = rates_bps(&[a, b], 4..6, Duration::from_secs(1));
        assert_eq!(rates, vec![80.0, 80.0]);
        assert_eq!(overlap(&[vec![1, 0, 0], vec![0, 0, 1]]), None);
        assert_eq!(overlap(&[vec![0, 1], vec![0, 1]]), Some(1..2));
    }

    #[test]
    fn a_late_joiner_window_starts_when_it_delivers_and_ends_with_the_first_to_stop() {
        // TCP from second 0, rustox joins at 3 and finishes at 8; TCP runs on to 10.
        let tcp = vec![9, 10, 10, 10, 4, 4, 5, 6, 8, 10, 10];
        let rustox = vec![0, 0, 0, 2, 6, 6, 5, 4, 1, 0, 0];
        let window = overlap(&[rustox.clone(), tcp.clone()]).unwrap();
        assert_eq!(window, 4..8, "whole seconds 4–7");
        let per = shares_per_interval(&[rustox.clone(), tcp.clone()], window.clone());
        assert_eq!(per[0], vec![Some(0.6), Some(0.4)]);
        assert_eq!(per[3], vec![Some(0.4), Some(0.6)], "drifted down");
        let [first, second] = shares_by_half(&[rustox, tcp], window);
        assert_eq!(first, vec![0.6, 0.4]);
        assert!((second[0] - 0.45).abs() < 1e-12, "9 of 20");
        assert_eq!(
            shares_per_interval(&[vec![0, 0], vec![0, 0]], 0..1),
            vec![vec![None, None]]
        );
    }
}
