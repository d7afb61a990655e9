//! Which timers wake an idle node: one node bootstrapped off another, 60 s of virtual time.
use rustox_auto_tests::tox_node::{SimToxNode, SimToxOptions};
use rustox_core::node::NodeOptions;
use rustox_net_crypto::Timestamp;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

fn main() {
    let t0 = Timestamp::ZERO;
    let mut boot = SimToxNode::new(
        t0,
        1,
        SimToxOptions {
            node: NodeOptions::default(),
        },
    );
    let mut a = SimToxNode::new(
        t0,
        2,
        SimToxOptions {
            node: NodeOptions::default(),
        },
    );
    let ba: SocketAddr = "10.0.0.1:33445".parse().unwrap();
    let aa: SocketAddr = "10.0.0.2:33445".parse().unwrap();
    a.bootstrap(t0, ba, boot.node.dht_public_key());
    let mut now = t0;
    let mut wire: Vec<(Timestamp, bool, Vec<u8>)> = Vec::new();
    let mut tally: BTreeMap<&'static str, u32> = BTreeMap::new();
    let end = t0 + Duration::from_secs(60);
    let mut wakes = 0;
    while now < end {
        while let Some(t) = a.node.poll_transmit(now) {
            wire.push((now + Duration::from_millis(10), true, t.payload));
        }
        while let Some(t) = boot.node.poll_transmit(now) {
            if t.destination == aa {
                wire.push((now + Duration::from_millis(10), false, t.payload));
            }
        }
        let ta = a.node.poll_timeout().unwrap_or(end);
        let tb = boot.node.poll_timeout().unwrap_or(end);
        let tw = wire.iter().map(|w| w.0).min().unwrap_or(end);
        let next = ta.min(tb).min(tw).max(now);
        now = next;
        if now >= end {
            break;
        }
        if ta <= now {
            wakes += 1;
            let dht = a.node.dht().poll_timeout();
            let ep = a.node.endpoint().poll_timeout();
            let who = if dht <= now {
                "dht"
            } else if ep.is_some_and(|t| t <= now) {
                "endpoint"
            } else {
                "other (onion client/server, feed, friends)"
            };
            *tally.entry(who).or_default() += 1;
            a.node.handle_timeout(now);
        }
        if tb <= now {
            boot.node.handle_timeout(now);
        }
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut wire)
            .into_iter()
            .partition(|w| w.0 <= now);
        wire = rest;
        for (_, to_boot, p) in due {
            if to_boot {
                boot.node.handle_datagram(now, aa, &p)
            } else {
                a.node.handle_datagram(now, ba, &p)
            }
        }
    }
    println!("{wakes} timer wake-ups in 60 s: {tally:?}");
    let s = a.node.onion_client_stats();
    println!(
        "onion: announce_requests={} search={} paths_created={} path_nodes={}",
        s.announce_requests, s.search_requests, s.paths_created, s.path_nodes
    );
}
