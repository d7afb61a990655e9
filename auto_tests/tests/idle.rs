//! An idle node sleeps until its next real deadline: in virtual time, with
//! friends online and nothing to say, it wakes about once a second in all, its own timers
//! far less, and an idle friend costs only ALIVEs and their acknowledgements; a hundred
//! offline friends are searched for in shared wake-ups.
//! `rustox_auto_tests::idle` has the scenario; `idle-bench` measures the same on real
//! sockets.

use rustox_auto_tests::idle::{run_idle, run_idle_with};

#[test]
fn one_idle_friend_costs_only_alives_and_the_node_wakes_about_once_a_second() {
    let seconds = 300;
    let (r, _) = run_idle(1, 20, seconds).expect("everyone online");
    eprintln!("{r:?}");
    // FRIEND_PING_INTERVAL is 8 s, answered ALIVEs come sooner (4–8 s): at least one ALIVE
    // per 8 s, each side's at most every 4 s, and an acknowledgement for each received.
    let alives_min = seconds / 8 - 1;
    assert!(
        r.session_packets_sent >= alives_min && r.session_packets_sent <= 2 * seconds / 4,
        "{} session packets in {seconds} s: {r:?}",
        r.session_packets_sent
    );
    let received = r.received.get(&27).copied().unwrap_or(0);
    assert!(
        received >= alives_min && received <= 2 * seconds / 4,
        "{received} session packets received: {r:?}"
    );
    // The DHT's rounds every 5–10 s, the onion's announces, one friend's ALIVE.
    assert!(r.timer_wakeups_per_sec() <= 0.4, "{r:?}");
    assert!(r.wakeups_per_sec() <= 1.3, "{r:?}");
}

#[test]
fn a_hundred_idle_friends_share_their_wake_ups() {
    // The friends came online one after another over 8 s, so their timers start in every
    // phase of the ALIVE interval.
    let (r, _) = run_idle(100, 20, 120).expect("everyone online");
    eprintln!("{r:?}");
    // Every friend's ALIVE goes in the wake-up of the first one due, and the friends' own
    // ALIVEs join that phase: about one friend round per 8 s, not a hundred (124 rounds in
    // these 120 s while SHARE_RELAYS ran on each friend's own timer).
    let friend_rounds = r
        .timer_wakeups
        .iter()
        .filter(|(k, _)| k.contains("friends"))
        .map(|(_, n)| n)
        .sum::<u64>();
    assert!(
        friend_rounds <= 120 / 8 + 2,
        "{friend_rounds} friend timer wake-ups: {r:?}"
    );
    // Friends online over direct UDP are not searched for in the DHT, by us or by them:
    // the searches are paused, and get-nodes and their answers are the DHT's own upkeep
    // (1 084 answers in these 120 s while paused searches still asked every node an answer
    // named).
    assert_eq!(r.searches, (100, 100), "{r:?}");
    assert!(r.received.get(&4).copied().unwrap_or(0) <= 2 * 120, "{r:?}");
    assert!(r.timer_wakeups_per_sec() <= 0.6, "{r:?}");
    // 4.6/s with the two faults above, in this same staggered network.
    assert!(r.wakeups_per_sec() <= 2.0, "{r:?}");
}

#[test]
fn a_hundred_offline_friends_are_searched_for_in_shared_wake_ups() {
    let seconds = 120;
    let (r, _) = run_idle_with(0, 100, 20, seconds).expect("the node starts");
    eprintln!("{r:?}");
    // The searches have backed off (0.2.18's schedule) and go out on a shared grid: the
    // onion client's own timer wakes the node a few times a minute (155 times in these
    // 120 s when each friend's requests went at their own instants).
    let onion_timer = r
        .timer_wakeups
        .iter()
        .filter(|(k, _)| k.contains("onion_client"))
        .map(|(_, n)| n)
        .sum::<u64>();
    assert!(
        onion_timer <= seconds / 2,
        "{onion_timer} onion timer wake-ups: {r:?}"
    );
    // The searches still run: announce responses (0x84) come back.
    assert!(
        r.received.get(&0x84).copied().unwrap_or(0) >= seconds,
        "{r:?}"
    );
    assert!(r.timer_wakeups_per_sec() <= 0.6, "{r:?}");
    assert!(r.wakeups_per_sec() <= 2.0, "{r:?}");
}
