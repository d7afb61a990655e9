//! The epoch guard (loss_epoch.rs) driven through the controller: on a path whose peer's
//! ack delay dwarfs its RTT an overflowing epoch bounds the pacer to what the path carried
//! and the bound holds without feeding the bandwidth filter; on a long path the same loss
//! is left to the round-based guard.

use std::time::Duration;

use super::*;

const PATH_BW: u64 = 12_000_000;

fn at(us: u64) -> Timestamp {
    Timestamp::from_micros(us)
}

/// A BBR cruising in ProbeBW on a path of `min_rtt`, its filter at [`PATH_BW`], with an
/// estimator that has seen one sample of `min_rtt` and no request (ack delay: the 25 ms
/// default).
fn cruising(min_rtt: Duration) -> (Bbr, RttEstimator) {
    let mut b = Bbr::new(at(0));
    b.mode = Mode::ProbeBw;
    b.filled_pipe = true;
    b.cycle_index = 2;
    b.pacing_gain = 1.0;
    b.cwnd_gain = CWND_GAIN;
    b.max_bw.reset(0, PATH_BW);
    b.min_rtt = Some(min_rtt);
    b.min_rtt_stamp = at(0);
    let mut rtt = RttEstimator::new();
    rtt.on_sample(at(0), min_rtt);
    (b, rtt)
}

/// One ack at `now` that ends a round, with the running totals and a sample at `rate`.
fn ack(now: Timestamp, delivered: u64, lost: u64, rate: u64, round: u64) -> AckEvent {
    AckEvent {
        now,
        bytes_acked: 13_730,
        newly_delivered: 13_730,
        rtt_sample: None,
        round_marker: Some(round),
        bytes_in_flight: 20_000,
        delivered: round + 1,
        delivered_total: delivered,
        lost,
        sample: Some(RateSample {
            delivery_rate: rate,
            delivered: 13_730,
            interval: Duration::from_millis(1),
            is_app_limited: false,
            tx_in_flight: 20_000,
            lost: 0,
            prior_delivered: round,
        }),
        newest_acked_sent: now,
        app_limited: false,
    }
}

/// Runs acks 1 ms apart from `from` ms for `ms` ms, each delivering 12 kB and losing
/// `lost_per_ack`; returns the totals after.
fn run(
    b: &mut Bbr,
    rtt: &RttEstimator,
    from: u64,
    ms: u64,
    totals: (u64, u64),
    lost_per_ack: u64,
    rate: u64,
) -> (u64, u64) {
    let (mut delivered, mut lost) = totals;
    for i in from..from + ms {
        delivered += 12_000;
        lost += lost_per_ack;
        b.on_ack(&ack(at(i * 1000), delivered, lost, rate, i), rtt);
    }
    (delivered, lost)
}

#[test]
fn an_overflowing_short_path_is_paced_at_what_it_carried_and_the_bound_holds() {
    // The kernel token bucket: 25 µs, requests a few ms apart; 7 % of each epoch lost.
    let (mut b, rtt) = cruising(Duration::from_micros(25));
    let lost_per_ack = 12_000 * 7 / 93;
    let totals = run(&mut b, &rtt, 1, 40, (0, 0), lost_per_ack, PATH_BW);
    let lo = b
        .bounds
        .bw_lo
        .expect("the epoch's overflow bounds the rate");
    let expected = PATH_BW as f64 * (1.0 - 0.07 - EPOCH_LOSS_THRESH);
    assert!(
        (lo as f64 - expected).abs() < PATH_BW as f64 * 0.01,
        "bw_lo {lo}, expected ~{expected:.0}"
    );
    assert!(b.hold_until.is_some());
    assert!(b.pacing_rate(&rtt).unwrap() < lo);
    // Lower samples while bounded do not replace the path's figure, however many rounds
    // pass (the window would otherwise forget it).
    let totals = run(&mut b, &rtt, 41, 400, totals, 0, PATH_BW / 2);
    assert_eq!(b.max_bw.get(), Some(PATH_BW));
    // Epochs without loss grew the bound back toward the path, still under it.
    let grown = b.bounds.bw_lo.expect("still held");
    assert!(grown > lo, "grown {grown} from {lo}");
    assert!(grown < PATH_BW);
    // After the hold, probe-up lifts it, from the bound, not the old figure.
    let _ = run(&mut b, &rtt, 441, 3_200, totals, 0, PATH_BW / 2);
    assert_eq!(b.hold_until, None);
    assert_eq!(b.bounds.bw_lo, None);
    assert!(b.max_bw.get().unwrap() < PATH_BW);
}

#[test]
fn a_long_paths_loss_is_left_to_the_round_judge() {
    // 60 ms with the same loss rate: the RTT can vouch for random loss here, and a flat
    // path's loss must not cut the rate (lossy, wan100, vpn300).
    let (mut b, rtt) = cruising(Duration::from_millis(60));
    let lost_per_ack = 12_000 * 7 / 93;
    let _ = run(&mut b, &rtt, 1, 200, (0, 0), lost_per_ack, PATH_BW);
    assert_eq!(b.hold_until, None);
}
