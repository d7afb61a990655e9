use rustox_auto_tests::tox_node::{SimToxNode, SimToxOptions};
use rustox_core::node::NodeOptions;
use rustox_net_crypto::Timestamp;
use rustox_simulator::{Profile, Simulator};
use std::net::SocketAddr;
use std::time::Duration;

fn main() {
    let profile = Profile::by_name(&std::env::args().nth(1).unwrap_or("lan".into())).unwrap();
    let mut link = profile.link_config();
    link.record_samples = false;
    let mut sim: Simulator<SimToxNode> = Simulator::new(11, link);
    let t0 = Timestamp::ZERO;
    let plain = || SimToxOptions {
        node: NodeOptions::default(),
    };
    let b = SimToxNode::new(t0, 100, plain());
    let addr = |i: u8| SocketAddr::from(([10, 0, 0, i], 33445));
    let (bpk, baddr) = (b.node.dht_public_key(), addr(1));
    let mut alice = SimToxNode::new(t0, 101, plain());
    let mut bob = SimToxNode::new(
        t0,
        102,
        SimToxOptions {
            node: NodeOptions {
                accept_strangers: true,
                ..NodeOptions::default()
            },
        },
    );
    alice.bootstrap(t0, baddr, bpk);
    bob.bootstrap(t0, baddr, bpk);
    let apk = alice.node.public_key();
    bob.node.add_friend_norequest(t0, apk).unwrap();
    alice
        .node
        .add_friend_norequest(t0, bob.node.public_key())
        .unwrap();
    sim.add_node(vec![baddr], b);
    let a = sim.add_node(vec![addr(2)], alice).unwrap();
    let bb = sim.add_node(vec![addr(3)], bob).unwrap();
    let mut next = Duration::from_millis(0);
    while sim.now() < Timestamp::ZERO + Duration::from_secs(6) {
        if !sim.step().unwrap() {
            break;
        }
        let now = sim.now() - Timestamp::ZERO;
        if now >= next {
            next += Duration::from_millis(
                std::env::var("STEP")
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(250),
            );
            for (name, id) in [("alice", a), ("bob", bb)] {
                let n = &sim.node(id).node;
                let s = n.onion_client_stats();
                let Some(&f) = n.friends().first() else {
                    println!("{:>6.3} {name}: no friend yet", now.as_secs_f64());
                    continue;
                };
                let srch = n
                    .dht()
                    .searches()
                    .iter()
                    .filter(|s| !s.fake)
                    .map(|s| s.clients.len())
                    .collect::<Vec<_>>();
                println!("{:>6.3} {name}: log={:?} ign={} ts={:?} sess={:?} srch={:?} onion={} ann={}/{} search={} resp={} dhtpk sent={} acc={} | node dhtpk rx={} routed={} bad={} | friend dht={:?} online={} | dht conn={} close={} paths={} nopath={} ratelim={}",
                    now.as_secs_f64(), sim.node(id).log.online, n.stats().packets_ignored, n.session_stats(f).map(|t| (t.packets_sent, t.packets_received)), n.endpoint().connection_ids().iter().map(|i| n.endpoint().connection(*i).map(|c| format!("{:?}", c.status()))).collect::<Vec<_>>(), srch, n.is_onion_connected(), s.announced_on, s.announce_nodes, s.search_requests, s.announce_responses, s.dht_pk_sent, s.dht_pk_accepted,
                    n.stats().dht_pks_received, n.stats().dht_pks_routed, n.stats().bad_dht_pks,
                    n.friend_dht_key(f).map(|k| k.to_hex()[..8].to_string()), n.is_friend_online(f), n.is_connected(), n.dht().close_nodes(sim.now()).len(), s.path_nodes, s.no_path, s.rate_limited);
            }
        }
    }
}
