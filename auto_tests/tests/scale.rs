//! Issue #11 at CI size: 200 whole Tox nodes with 5 % loss and churn, in which 10 friend
//! pairs find each other. The full 1000-node network is the `scale-sim` benchmark.
//!
//! Virtual time is deterministic, so the simulated times below are asserted as measured
//! (seeds 1–5 gave p50 1.5–2.7 s and max 30.7–30.8 s: a pair whose first DHT-PK
//! announcement is lost waits c-toxcore's 30 s `ONION_DHTPK_SEND_INTERVAL` for the next).
//! Failing seeds replay with SIM_SEED.

use std::time::Duration;

use rustox_auto_tests::heap_meter::CountingAlloc;
use rustox_auto_tests::scale::{run_scale, ScaleOptions};
use rustox_simulator::seed_from_env;

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc;

/// The median pair: a few seconds (the 3-node friend_online goal is 1 s + 6 RTT; a larger,
/// lossy network adds onion-search rounds).
const P50_BOUND: Duration = Duration::from_secs(5);
/// The slowest pair: one lost DHT-PK announcement costs the 30 s resend interval; 15 s on
/// top for the search rounds around it. Two lost in a row would fail this — and be worth
/// looking at.
const MAX_BOUND: Duration = Duration::from_secs(45);
/// Heap per node: measured 964–973 kB (of which 944 kB is allocated when the node is built:
/// fixed-size tables). 25 % headroom.
const HEAP_PER_NODE_BOUND: u64 = 1_250_000;
/// Traffic per node: measured ~15 datagrams/s.
const DATAGRAMS_PER_NODE_SEC_BOUND: f64 = 30.0;

#[test]
fn ten_pairs_find_each_other_in_a_lossy_churning_network_of_two_hundred() {
    let options = ScaleOptions {
        nodes: 200,
        pairs: 10,
        seed: seed_from_env(3),
        ..ScaleOptions::default()
    };
    let report = run_scale(&options).unwrap_or_else(|e| {
        panic!(
            "seed {}: {e} (replay with SIM_SEED={})",
            options.seed, options.seed
        )
    });
    let row = format!(
        "{}\n{}",
        rustox_auto_tests::scale::ScaleReport::header(),
        report.row()
    );
    assert_eq!(report.online.online(), 10, "not every pair online:\n{row}");
    assert!(report.replaced >= 1, "churn happened:\n{row}");
    let p50 = report.online.quantile(0.5).unwrap_or(Duration::MAX);
    let max = report.online.quantile(1.0).unwrap_or(Duration::MAX);
    assert!(p50 <= P50_BOUND, "p50 {p50:?} > {P50_BOUND:?}:\n{row}");
    assert!(max <= MAX_BOUND, "max {max:?} > {MAX_BOUND:?}:\n{row}");
    let heap = report
        .memory
        .heap_per_node
        .expect("counting allocator installed");
    assert!(
        heap > 0 && heap <= HEAP_PER_NODE_BOUND,
        "heap/node {heap} B:\n{row}"
    );
    assert!(
        report.datagrams_per_node_sec() <= DATAGRAMS_PER_NODE_SEC_BOUND,
        "{:.1} datagrams/node/s:\n{row}",
        report.datagrams_per_node_sec()
    );
}
