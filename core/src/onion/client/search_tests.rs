//! The search grid: requests of searches past their beginning share wake-ups, never go
//! out later than 0.2.18 would send them, and a new search keeps its own pace.

use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_net_crypto::crypto::{KeyPair, PrecomputedKey};
use rustox_net_crypto::Timestamp;

use super::super::nodes::NodeAnswer;
use super::*;

fn friend(rng: &mut ChaCha20Rng, run_count: u32) -> Friend {
    let me = KeyPair::generate(rng);
    let them = KeyPair::generate(rng);
    let shared = PrecomputedKey::new(&them.public, &me.secret).expect("a key");
    let mut f = Friend::new(them.public, shared, KeyPair::generate(rng));
    f.run_count = run_count;
    f
}

/// Adds a node that answered a request sent at `pinged`.
fn add_node(rng: &mut ChaCha20Rng, f: &mut Friend, pinged: Timestamp) {
    let answer = NodeAnswer {
        is_stored: false,
        ping_id: None,
        data_pk: None,
    };
    let pk = KeyPair::generate(rng).public;
    let addr: SocketAddr = "10.0.0.1:33445".parse().expect("an address");
    f.list.add(pinged, pk, addr, answer, None, pinged);
}

fn secs(s: f64) -> Timestamp {
    Timestamp::from_micros((s * 1e6) as u64)
}

#[test]
fn the_grid_is_a_power_of_two_no_longer_than_a_quarter_interval_and_none_while_new() {
    assert_eq!(search_grid(3), None);
    assert_eq!(search_grid(16), Some(Duration::from_secs(4)));
    assert_eq!(search_grid(64), Some(Duration::from_secs(16)));
    assert_eq!(search_grid(100), Some(Duration::from_secs(16)));
    assert_eq!(search_grid(3600), Some(SEARCH_GRID_MAX));
}

#[test]
fn a_new_search_is_not_moved() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut f = friend(&mut rng, 0);
    add_node(&mut rng, &mut f, secs(10.3));
    assert_eq!(f.node_due(0), Some(secs(13.3)));
}

#[test]
fn a_backed_off_search_is_asked_on_the_grid_and_never_later_than_its_interval() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for run_count in [6, 8, 10, 14, 30] {
        let mut f = friend(&mut rng, run_count);
        let interval = f.interval_secs();
        let grid = search_grid(interval).expect("a backed-off search");
        for start in [0.0, 7.25, 123.5, 1000.001] {
            f.list.clear();
            add_node(&mut rng, &mut f, secs(start));
            let due = f.node_due(0).expect("due");
            let plain = secs(start) + Duration::from_secs(interval);
            assert_eq!(
                due.as_micros() % grid.as_micros() as u64,
                0,
                "{due:?} on {grid:?}"
            );
            assert!(due <= plain, "{due:?} after 0.2.18's {plain:?}");
            assert!(plain < due + grid, "{due:?} more than a grid early");
        }
    }
}

#[test]
fn friends_due_at_different_instants_within_a_grid_go_in_one_wake_up() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let mut dues = Vec::new();
    for i in 0..50 {
        let mut f = friend(&mut rng, 8);
        // Last asked anywhere within 4 s: all due within one 16 s grid step.
        add_node(&mut rng, &mut f, secs(200.0 + f64::from(i) * 0.08));
        dues.push(f.node_due(0).expect("due"));
    }
    dues.sort();
    dues.dedup();
    assert!(dues.len() <= 2, "{dues:?}");
}

#[test]
fn the_throttle_ends_on_the_grid() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let mut f = friend(&mut rng, 8);
    add_node(&mut rng, &mut f, secs(0.0));
    add_node(&mut rng, &mut f, secs(0.0));
    // The friend's last request went out off the grid: the next waits for the throttle's
    // end, then for the grid.
    f.time_last_pinged = Some(secs(61.5));
    let grid = search_grid(f.interval_secs()).expect("a grid");
    let due = f.node_due(0).expect("due");
    assert!(due >= secs(61.5) + Duration::from_secs(f.interval_secs() / 4));
    assert_eq!(due.as_micros() % grid.as_micros() as u64, 0);
}
