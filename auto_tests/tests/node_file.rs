//! A file through two whole nodes (Messenger, friend_connection, net_crypto, the file layer)
//! keeps the transport's efficiency and arrives verified, with chat flowing beside it.
//! Simulated time is deterministic, so efficiencies are asserted.

use rustox_auto_tests::node_transfer::run_node_transfer;
use rustox_net_crypto::ControllerKind;
use rustox_simulator::{run_transfer, seed_from_env, Profile, TransferSpec};

#[test]
fn the_whole_node_keeps_within_5_percent_of_the_transport_alone() {
    let seed = seed_from_env(1);
    for profile in [Profile::lan(), Profile::wan20(), Profile::wan100()] {
        let node = run_node_transfer(&profile, seed, 8 << 20);
        assert!(node.verified, "{}: {node:?}", profile.name);
        assert!(
            node.chat_messages > 0,
            "{}: no chat during the file",
            profile.name
        );
        let mut spec = TransferSpec::new(profile.clone(), ControllerKind::Bbr, seed, 8 << 20);
        spec.driver = None;
        let alone = run_transfer(&spec).expect("transfer").goodput_efficiency;
        assert!(
            node.efficiency >= alone * 0.95,
            "{}: whole node {:.3} vs transport {:.3}",
            profile.name,
            node.efficiency,
            alone
        );
    }
}
