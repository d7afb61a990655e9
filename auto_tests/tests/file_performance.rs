//! How fast files move: a single transfer's goodput efficiency stays within 5 % of the
//! bulk-data transport figure on the same path (the file layer's pull model costs almost
//! nothing), four concurrent transfers share wan100 fairly (Jain's index ≥ 0.9 over the
//! middle 80 % of the run), and a chat message sent every 500 ms during a full-speed
//! transfer arrives within 2.5 × RTT + 50 ms (p95) — docs/transport.md §3.9, §6.

use std::time::Duration;

use rustox_net_crypto::{ControllerKind, Timestamp};
use rustox_simulator::{
    run_transfer, seed_from_env as seed, FileRun, FileSpec, Profile, TransferSpec,
};

const MIB: u64 = 1 << 20;

/// Allowed shortfall of the file transfer's goodput against bulk data on the same path.
const GOODPUT_TOLERANCE: f64 = 0.05;

fn goodput_matches_bulk(profile: Profile) {
    let name = profile.name;
    // 32 MiB: the size transport-bench reports its bulk figures for.
    let bytes = 32 * MIB;
    let s = seed(0x600d);
    let mut run = FileRun::new(FileSpec::new(
        profile.clone(),
        ControllerKind::Bbr,
        s,
        vec![bytes],
    ));
    assert!(run.run(), "{name}: file transfer did not finish");
    let file = run
        .goodput_efficiency()
        .expect("finished runs have an efficiency");
    let bulk = run_transfer(&TransferSpec::new(profile, ControllerKind::Bbr, s, bytes))
        .unwrap_or_else(|e| panic!("{name}: bulk run failed: {e}"));
    assert!(bulk.completed, "{name}: bulk run did not finish");
    eprintln!(
        "{name}: file {file:.3} vs bulk {:.3} goodput efficiency",
        bulk.goodput_efficiency
    );
    assert!(
        file >= bulk.goodput_efficiency * (1.0 - GOODPUT_TOLERANCE),
        "{name}: file transfer efficiency {file:.3} is more than 5 % below bulk {:.3}",
        bulk.goodput_efficiency
    );
}

#[test]
fn file_goodput_within_5_percent_of_bulk_wan20() {
    goodput_matches_bulk(Profile::wan20());
}

#[test]
fn file_goodput_within_5_percent_of_bulk_wan100() {
    goodput_matches_bulk(Profile::wan100());
}

#[test]
fn file_goodput_within_5_percent_of_bulk_vpn300() {
    goodput_matches_bulk(Profile::vpn300());
}

#[test]
fn file_goodput_within_5_percent_of_bulk_lossy() {
    goodput_matches_bulk(Profile::lossy());
}

#[test]
fn file_four_concurrent_transfers_share_wan100_fairly() {
    let spec = FileSpec::new(
        Profile::wan100(),
        ControllerKind::Bbr,
        seed(0xfa1),
        vec![8 * MIB; 4],
    );
    let mut run = FileRun::new(spec);
    assert!(run.run(), "not all four transfers finished");
    for (i, id) in run.file_ids.iter().enumerate() {
        assert_eq!(run.receiver().files[id].sha256(), *id, "file {i} differs");
    }
    let jain = run.jain_middle_80().expect("progress recorded");
    eprintln!("wan100, 4 transfers: Jain's index {jain:.4}");
    assert!(jain >= 0.9, "Jain's index {jain:.3} < 0.9");
}

/// Virtual time the Legacy run is given: c-toxcore's controller may not finish 64 MiB on
/// these paths in any reasonable time, and its chat figure is only printed for comparison.
const LEGACY_WINDOW: Duration = Duration::from_secs(60);

/// p95 one-way latency of chat messages during a full-speed transfer, ms, and the count.
fn chat_p95(profile: &Profile, controller: ControllerKind) -> (Option<f64>, usize) {
    // 64 MiB: tens of messages (a p95 over 16 would be the maximum).
    let mut spec = FileSpec::new(profile.clone(), controller, seed(0xc4a7), vec![64 * MIB]);
    spec.chat_interval = Some(Duration::from_millis(500));
    let legacy = controller == ControllerKind::Legacy;
    if legacy {
        spec.deadline = spec.deadline.min(Timestamp::ZERO + LEGACY_WINDOW);
    }
    let mut run = FileRun::new(spec);
    let done = run.run();
    assert!(done || legacy, "{}: transfer did not finish", profile.name);
    let n = run.receiver().chat_latencies.len();
    (run.chat_p95_ms(), n)
}

fn chat_is_not_stuck_behind_file_data(profile: Profile) {
    let bound = 2.5 * profile.rtt.as_secs_f64() * 1000.0 + 50.0;
    let (bbr, n) = chat_p95(&profile, ControllerKind::Bbr);
    let (legacy, n_legacy) = chat_p95(&profile, ControllerKind::Legacy);
    let bbr = bbr.expect("chat messages arrived");
    eprintln!(
        "{}: chat p95 {bbr:.1} ms (bbr, {n} messages), {} ms (legacy, {n_legacy} messages); bound {bound:.0} ms",
        profile.name,
        legacy.map_or("-".to_owned(), |l| format!("{l:.1}")),
    );
    assert!(n >= 4, "too few chat messages ({n}) to judge");
    assert!(
        bbr <= bound,
        "{}: chat p95 {bbr:.1} ms > {bound:.0} ms",
        profile.name
    );
}

#[test]
fn file_chat_latency_during_transfer_wan100() {
    chat_is_not_stuck_behind_file_data(Profile::wan100());
}

#[test]
fn file_chat_latency_during_transfer_vpn300() {
    chat_is_not_stuck_behind_file_data(Profile::vpn300());
}
