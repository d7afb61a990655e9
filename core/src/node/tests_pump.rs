//! When the node tops up its friends' file layers: after inputs and after sending, not on
//! every poll that finds nothing to send (a C client's driver polls several times a step).

use std::time::Duration;

use super::tests::node;
use super::*;

/// Polls `node` until it has nothing to send; returns how many datagrams it sent.
fn drain(node: &mut Node, now: Timestamp) -> usize {
    std::iter::from_fn(|| node.poll_transmit(now)).count()
}

#[test]
fn polls_that_find_nothing_do_not_top_up_the_files() {
    let mut a = node(1, false);
    let now = Timestamp::from_millis(5);
    a.handle_timeout(now);
    drain(&mut a, now);
    let pumps = a.stats().file_pumps;
    for _ in 0..100 {
        assert!(a.poll_transmit(now).is_none());
    }
    assert_eq!(
        a.stats().file_pumps,
        pumps,
        "nothing was sent or received: the budget the last top-up saw is unchanged"
    );
    // An input tops them up once.
    let later = now + Duration::from_millis(1);
    a.handle_timeout(later);
    assert_eq!(a.stats().file_pumps, pumps + 1);
}
