//! Two whole nodes become online friends through one bootstrap node, in the simulator, on
//! every link profile (issue #11's goal: within 1 s + 6 RTT of start). Failing seeds
//! replay with SIM_SEED.

use std::time::Duration;

use rustox_auto_tests::friend_online::{run_friend_online, Friendship, OnlineOptions};
use rustox_auto_tests::{seed_from_env, Profile};

/// The goal for two nodes: one second plus six round trips.
fn goal(profile: &Profile) -> Duration {
    Duration::from_secs(1) + profile.rtt * 6
}

fn check(profile: Profile, friendship: Friendship, seeds: u64) {
    let base = seed_from_env(11);
    for seed in base..base + seeds {
        let mut options = OnlineOptions::new(profile.clone(), seed);
        options.friendship = friendship;
        let report = run_friend_online(&options);
        let both = report.both_online().unwrap_or_else(|| {
            panic!("{profile} {friendship:?} seed {seed}: not both online: {report:?}")
        });
        assert!(
            both <= goal(&profile),
            "{profile} {friendship:?} seed {seed}: online after {both:?} > {:?}: {report:?}",
            goal(&profile)
        );
    }
}

#[test]
fn a_friend_request_brings_both_online_within_the_goal_on_every_profile() {
    for profile in Profile::all() {
        check(profile, Friendship::Request, 5);
    }
}

#[test]
fn friends_added_by_key_come_online_within_the_goal_on_every_profile() {
    for profile in Profile::all() {
        check(profile, Friendship::Mutual, 5);
    }
}
