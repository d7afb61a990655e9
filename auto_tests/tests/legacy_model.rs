//! The legacy model against c-toxcore 0.2.18 itself: in the simulator, the model
//! moves a file within 20 % of what c-toxcore moved on the same emulated link.
//!
//! The reference figures are c-toxcore's own goodput (Mbit/s of file bytes, receiver's
//! accept to last byte), measured with `real-bench --ctoxcore` (tools/toxcore_file_peer.c on
//! Debian's libtoxcore 0.2.18 through the emulator, link seed 1, 2-core VM, load average
//! below 3): every run of that seed, at `real-bench --ctoxcore`'s default sizes (16 MiB up
//! to 10 Mbit/s, 32 MiB above). The model's figure is deterministic
//! (virtual time, seed 1, the CLI driver model `real-bench` uses). c-toxcore varies from run
//! to run; the band is around the median of its runs.
//!
//! Not here: sat600, where c-toxcore needs ~270 s for 8 MiB (one run, 0.25 Mbit/s; the
//! model gives 0.20 in the simulator and 0.21 real), too few runs for a band; vpn300 on
//! other seeds, where c-toxcore itself ranged from 2.85 to 4.33 Mbit/s (its RTT collapse
//! sometimes ends in a resend storm and a restart from the minimum rate, as the model's
//! does).

use rustox_net_crypto::ControllerKind;
use rustox_simulator::{run_transfer, Profile, TransferSpec};

/// The link seed the reference runs used.
const SEED: u64 = 1;
/// How far the model may be from c-toxcore's median: within 20 %.
const TOLERANCE: f64 = 0.20;

/// Simulates the model on `profile` and checks its goodput against c-toxcore's `runs`.
fn within_band(profile: Profile, mib: u64, runs: &[f64]) {
    let spec = TransferSpec::new(profile.clone(), ControllerKind::Legacy, SEED, mib << 20);
    let m = run_transfer(&spec).unwrap_or_else(|e| panic!("{}: {e}", profile.name));
    assert!(m.completed, "{}: did not complete: {m:?}", profile.name);
    let mbit = m.goodput_efficiency * profile.rate_bps as f64 / 1e6;
    let mut sorted = runs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let ratio = mbit / median;
    eprintln!(
        "{}: model {mbit:.2} Mbit/s, c-toxcore median {median:.2} of {runs:?}: {ratio:.2}",
        profile.name
    );
    assert!(
        (1.0 - TOLERANCE..=1.0 + TOLERANCE).contains(&ratio),
        "{}: model {mbit:.2} Mbit/s is {ratio:.2}× c-toxcore's {median:.2}",
        profile.name
    );
}

#[test]
fn legacy_model_is_within_20_percent_of_c_toxcore_on_lossy() {
    within_band(Profile::lossy(), 16, &[6.29, 6.45, 6.30, 6.44]);
}

#[test]
fn legacy_model_is_within_20_percent_of_c_toxcore_on_vpn300() {
    within_band(Profile::vpn300(), 16, &[4.62, 4.47, 4.76]);
}

#[test]
fn legacy_model_is_within_20_percent_of_c_toxcore_on_wan100() {
    within_band(Profile::wan100(), 32, &[11.41, 11.20, 11.64]);
}

#[test]
fn legacy_model_is_within_20_percent_of_c_toxcore_on_wan20() {
    within_band(Profile::wan20(), 32, &[26.24, 25.87, 23.97]);
}

/// slow150 (2 Mbit/s, 150 ms, 1 %): c-toxcore's runs of seed 1 with `real-bench
/// --pairings` (4 MiB; 2026-12-07, load average 7–20 during two of them). The model gave
/// 0.66 here while it timed its RTT samples at the ack's arrival rather than at the
/// iteration that reads them (cc/legacy.rs, `on_rtt_candidate`).
#[test]
fn legacy_model_is_within_20_percent_of_c_toxcore_on_slow150() {
    within_band(Profile::slow150(), 4, &[1.10, 0.96, 0.95]);
}

#[test]
fn legacy_model_is_within_20_percent_of_c_toxcore_on_bursty() {
    within_band(Profile::bursty(), 32, &[11.97, 10.69, 11.45]);
}
