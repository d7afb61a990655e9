//! NGC group discovery through our DHT nodes (c-toxcore 0.2.20 peers, Debian trixie's
//! libtoxcore2, fetched by `tools/fetch_toxcore_0_2_20.sh`): a founder creates a public group
//! and a joiner joins it by chat id, both knowing only the first of twelve rustox nodes joined
//! into one DHT; the joiner must hear the founder's message. The time is printed; the bound
//! asserted is functional (before our nodes passed and answered the extended announce 0x87,
//! this took 52 s). `group-bench` measures the same setups side by side.
//!
//! Ports 381xx. With `CI` set, a missing 0.2.20 peer fails the test; otherwise it returns at
//! once with a notice.

use std::time::Duration;

use rustox_auto_tests::ctoxcore::group::{group_tool_or_skip, run_discovery, DhtNet, NodeKind};

/// A generous functional bound: the joiner must hear the founder within it.
const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn group_found_through_twelve_rustox_nodes() {
    let Some(tool) = group_tool_or_skip() else {
        return;
    };
    let net = DhtNet::start(NodeKind::Rustox, 12, 38101).expect("start twelve rustox nodes");
    let times = run_discovery(&tool, &net.first(), (38131, 38132), LIMIT)
        .expect("the joiner hears the founder through twelve rustox nodes");
    let (stored, sent) = net.rustox_group_announces();
    eprintln!(
        "twelve rustox nodes: joined after {:?} s, founder's message after {:.1} s; \
         group announces stored {stored}, sent {sent}",
        times.joined, times.message
    );
    for (i, s) in net.rustox_onion_stats().iter().enumerate() {
        eprintln!(
            "node {i}: onion in {} relayed {:?} announces {} group stored {} sent {} drops {:?}",
            s.datagrams_in,
            s.requests_relayed,
            s.announces_answered,
            s.group_announces_stored,
            s.group_announces_sent,
            s.drops
        );
    }
    assert!(stored > 0, "the peers' group announces reached our nodes");
}
