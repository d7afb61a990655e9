//! A conference of 16 processes, every message reaching every peer: peers invited along a
//! chain (each is friends with its two neighbours only, so all but the first join through
//! an introducer and most pairs meet only in the conference), then every peer sends one
//! message and one action and every other peer must receive each from the right key. The
//! mixed conference alternates the implementations along the chain, so every invite crosses
//! from one library to the other; the all-c-toxcore one holds the harness to c-toxcore's own
//! behaviour.
//!
//! With `CI` set, a missing c-toxcore, compiler or tox-bootstrapd fails these tests;
//! otherwise they return at once with a notice.

use std::time::Duration;

use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::{chain, receipts, ChainLimits, ConfNet};

/// The conference's size.
const PEERS: usize = 16;
/// Each message at all 15 other peers.
const DELIVERY_LIMIT: Duration = Duration::from_secs(30);

fn sixteen(implementations: &[Implementation]) {
    assert_eq!(implementations.len(), PEERS);
    let Some(net) = ConfNet::start(implementations) else {
        return;
    };
    let mut conference = chain(implementations, ChainLimits::default(), |i, imp| {
        net.peer(&format!("p{i}"), imp)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..PEERS {
        let conf = conference.confs[i];
        conference.peers[i].must(&format!("msg {conf} message from p{i}"));
        conference.peers[i].must(&format!("action {conf} action from p{i}"));
    }
    let mut lost = Vec::new();
    for i in 0..PEERS {
        for text in [format!("message from p{i}"), format!("action from p{i}")] {
            if let Err(missing) = receipts(
                &conference.peers,
                &conference.confs,
                i,
                &text,
                DELIVERY_LIMIT,
            ) {
                lost.push(format!("{text:?} never reached {missing:?}"));
            }
        }
    }
    assert!(
        lost.is_empty(),
        "messages lost in the conference of {PEERS}:\n{}\n{}",
        lost.join("\n"),
        conference
            .peers
            .iter()
            .map(|p| p.report())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn sixteen_c_toxcore_peers_hear_every_message() {
    sixteen(&[CToxcore; PEERS]);
}

#[test]
fn sixteen_peers_half_rustox_hear_every_message() {
    let mixed: Vec<Implementation> = (0..PEERS)
        .map(|i| if i % 2 == 0 { CToxcore } else { Rustox })
        .collect();
    sixteen(&mixed);
}
