//! A call in simulated time (`rustox_auto_tests::av_sim`: two clients running the call
//! engine on the stand-in codecs over one net_crypto session on a named path): audio arrives
//! in time and nearly all of it, and pictures keep coming.
//!
//! The figures are simulated, so they may be asserted; `SIM_SEED` replays another seed.

use rustox_auto_tests::av_sim::{run, Config};
use rustox_simulator::{seed_from_env, Profile};

#[test]
fn a_call_alone_on_wan20_hears_audio_within_one_way_delay_plus_60_ms() {
    let seed = seed_from_env(1);
    let config = Config::new(Profile::wan20(), seed, 5, false);
    let o = run(&config).unwrap_or_else(|e| panic!("{e}; replay: SIM_SEED={seed}"));
    let f = &o.forward;
    let replay = format!("{f:?}; failures {:?}; replay: SIM_SEED={seed}", o.failures);
    assert!(
        f.audio_sent >= 240,
        "5 s of 20 ms frames were handed over: {replay}"
    );
    let p95 = f.audio_p95_ms.expect("audio came out");
    assert!(
        p95 <= o.one_way_ms + 60.0,
        "audio p95 {p95:.1} ms within one-way {} ms + 60: {replay}",
        o.one_way_ms
    );
    assert!(f.audio_lost_pct < 1.0, "under 1 % of audio lost: {replay}");
    assert!(
        f.video_fps >= 25.0,
        "pictures keep coming at nearly 30 a second: {replay}"
    );
    assert_eq!(f.video_frozen, 0, "no freeze on a clean path: {replay}");
}

/// The same call with no path estimate handed to the engine: its rates are the clients'
/// (64 kbit/s audio, 2500 kbit/s video) as a c-toxcore engine's would be, so this checks
/// the media path itself — signalling, RTP over the session's lossy packets, the jitter
/// buffer, the stand-in codecs — end to end.
#[test]
fn a_call_at_the_clients_rates_on_wan20_hears_audio_within_one_way_delay_plus_60_ms() {
    let seed = seed_from_env(1);
    let mut config = Config::new(Profile::wan20(), seed, 5, false);
    config.plan.path_estimates = false;
    let o = run(&config).unwrap_or_else(|e| panic!("{e}; replay: SIM_SEED={seed}"));
    let f = &o.forward;
    let replay = format!("{f:?}; failures {:?}; replay: SIM_SEED={seed}", o.failures);
    assert!(f.audio_sent >= 240, "{replay}");
    let p95 = f.audio_p95_ms.expect("audio came out");
    assert!(
        p95 <= o.one_way_ms + 60.0,
        "audio p95 {p95:.1} ms: {replay}"
    );
    assert!(
        p95 >= o.one_way_ms,
        "no frame beats the propagation delay: {replay}"
    );
    assert!(f.audio_lost_pct < 1.0, "{replay}");
    assert!(f.video_fps >= 25.0, "{replay}");
    assert_eq!(f.video_frozen, 0, "{replay}");
    let video = f.video_kbps.expect("video bytes were counted");
    assert!(
        (2000.0..3500.0).contains(&video),
        "video at about the clients' 2500 kbit/s: {replay}"
    );
    assert!(o.failures.is_empty(), "{replay}");
}
