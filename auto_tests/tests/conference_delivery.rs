//! Conference delivery in simulated time (`rustox_auto_tests::conference_sim`, the engine of
//! `rustox_core::conference`): members joined along a chain of friends, on a lossy path,
//! leaving and coming back, every message reaches every online member, and in time.
//!
//! The figures are simulated, so they may be asserted; `SIM_SEED` replays another seed.

use std::time::Duration;

use rustox_auto_tests::conference_sim::{run, Config};
use rustox_simulator::{seed_from_env, LossModel, Profile};

/// 12 members on `lossy` (60 ms) at 5 % loss, members leaving at 10 % a minute (ten times
/// the benchmark's rate, so that a short run sees several leave and come back), three
/// minutes of a message a second.
fn small_case(seed: u64) -> Config {
    let profile = Profile::lossy().with_loss(LossModel::Random(0.05));
    let mut cfg = Config::new(12, profile, seed);
    cfg.churn_per_minute = 0.10;
    cfg.message_phase = Duration::from_secs(180);
    cfg
}

#[test]
fn every_message_reaches_every_online_member_with_5_percent_loss_and_churn() {
    let seed = seed_from_env(7);
    let cfg = small_case(seed);
    let r = run(&cfg);
    let replay = format!("replay: SIM_SEED={seed}");
    assert_eq!(
        r.joined, 12,
        "the chain of invitations joins everyone; {replay}"
    );
    assert!(
        r.churn_events >= 1,
        "members left and came back: {r:?}; {replay}"
    );
    assert_eq!(r.messages, 180, "{replay}");
    assert_eq!(r.send_failures, 0, "{replay}");
    assert!(
        r.mean_targets > 8.0,
        "most members are online for most messages: {}; {replay}",
        r.mean_targets
    );
    assert_eq!(r.missed, 0, "{replay}");
    assert_eq!(r.reached_all, r.messages, "{replay}");
    // p95 within the path's RTT × the message's hops + 100 ms.
    let within = r.within_budget as f64 / r.reached_all as f64;
    assert!(
        within >= 0.95,
        "{within} within RTT × hops + 100 ms; {replay}"
    );
    let p95 = r.time_to_all_quantile(0.95).unwrap();
    let hops = r.hops_quantile(0.95).unwrap();
    assert!(
        p95 <= 60.0 * f64::from(hops) + 100.0,
        "p95 {p95} ms over {hops} hops; {replay}"
    );
    // Every chat packet paid net_crypto's 27-byte header and MAC at least once.
    assert!(r.bytes_per_message_per_peer() > 27.0);
}

#[test]
fn a_member_back_from_a_restart_hears_messages_again() {
    // It rejoins through its friends with the conference it saved (the CONFERENCES
    // section's codec in between) and hears what is sent once it is back.
    let seed = seed_from_env(11);
    let mut cfg = small_case(seed);
    cfg.message_phase = Duration::from_secs(360);
    let r = run(&cfg);
    assert!(
        r.heard_after_return > 0,
        "{} messages heard after a return; replay: SIM_SEED={seed}",
        r.heard_after_return
    );
    assert_eq!(r.missed, 0, "replay: SIM_SEED={seed}");
}

#[test]
fn a_run_replays_from_its_seed() {
    let mut cfg = small_case(3);
    cfg.message_phase = Duration::from_secs(60);
    let (a, b) = (run(&cfg), run(&cfg));
    assert_eq!(a.time_to_all_ms, b.time_to_all_ms);
    assert_eq!(
        (a.chat_bytes, a.other_bytes, a.churn_events),
        (b.chat_bytes, b.other_bytes, b.churn_events)
    );
}

#[test]
fn a_message_nobody_can_forward_is_counted_as_missed() {
    // A path that loses every lossless packet twelve times in a row delivers each one a
    // dozen RTTs late: over 600 ms on `lossy`, and a window of 100 ms misses them all. The
    // measurement can tell a failure from a success.
    let mut cfg = small_case(5);
    cfg.profile = Profile::lossy().with_loss(LossModel::Random(1.0));
    cfg.message_phase = Duration::from_secs(30);
    cfg.churn_per_minute = 0.0;
    cfg.window = Duration::from_millis(100);
    let r = run(&cfg);
    assert!(r.messages > 0);
    assert_eq!(r.reached_all, 0, "{r:?}");
    assert!(r.missed > 0);
}
