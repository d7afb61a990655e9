//! The simulator core with toy nodes: determinism, scale, link behaviour end to end, and the
//! failure path (seed + replay command).

use std::net::SocketAddr;
use std::time::Duration;

use rustox_auto_tests::toy::{Flooder, Pinger, Sink};
use rustox_net_crypto::Timestamp;
use rustox_simulator::{
    seed_from_env, BottleneckConfig, LinkConfig, LossModel, NodeId, SimNode, Simulator,
};

fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 33445))
}

/// A small mixed network: 20 pingers over lossy, jittery, duplicating, corrupting links.
fn pinger_network(seed: u64) -> (u64, u64, u64) {
    let link = LinkConfig {
        delay: Duration::from_millis(15),
        jitter: rustox_simulator::Jitter {
            amplitude: Duration::from_millis(5),
            correlation: 0.5,
        },
        loss: LossModel::bursts(0.05, 3.0),
        duplicate: 0.01,
        corrupt: 0.01,
        ..LinkConfig::default()
    };
    let mut sim: Simulator<Pinger> = Simulator::new(seed, link);
    let n = 20;
    for i in 0..n {
        let peers = (0..n).filter(|&j| j != i).map(addr).collect();
        sim.add_node_with(vec![addr(i)], |rng| {
            Pinger::new(peers, Duration::from_millis(7), rng)
        })
        .unwrap();
    }
    if let Err(e) = sim.run_until(Timestamp::from_secs(5)) {
        sim.fail(&e);
    }
    let pongs = (0..n)
        .map(|i| sim.node(rustox_simulator::NodeId(i)).pongs)
        .sum();
    (sim.trace().value(), sim.trace().events(), pongs)
}

#[test]
fn same_seed_replays_the_same_packet_trace() {
    let seed = seed_from_env(11);
    let a = pinger_network(seed);
    let b = pinger_network(seed);
    assert_eq!(a, b, "two runs of seed {seed} diverged");
    assert!(
        a.1 > 20_000,
        "the trace covers real traffic: {} events",
        a.1
    );
    let c = pinger_network(seed + 1);
    assert_ne!(a.0, c.0, "a different seed gives a different trace");
}

#[test]
fn five_hundred_nodes_run_quickly_in_virtual_time() {
    let seed = seed_from_env(5);
    let mut sim: Simulator<Pinger> =
        Simulator::new(seed, LinkConfig::with_delay(Duration::from_millis(30)));
    sim.set_trace_enabled(false);
    let n = 500;
    for i in 0..n {
        let peers = (0..n).filter(|&j| j != i).map(addr).collect();
        sim.add_node_with(vec![addr(i)], |rng| {
            Pinger::new(peers, Duration::from_millis(200), rng)
        })
        .unwrap();
    }
    if let Err(e) = sim.run_until(Timestamp::from_secs(10)) {
        sim.fail(&e);
    }
    let sent: u64 = (0..n)
        .map(|i| sim.node(rustox_simulator::NodeId(i)).sent())
        .sum();
    let pongs: u64 = (0..n)
        .map(|i| sim.node(rustox_simulator::NodeId(i)).pongs)
        .sum();
    assert_eq!(sent, 500 * 50, "every node pinged every 200 ms for 10 s");
    // Pings sent in the last 60 ms are still in flight.
    assert!(pongs >= sent - 500 && pongs <= sent, "{pongs} of {sent}");
    let rtt = sim.node(rustox_simulator::NodeId(0)).rtts[0];
    assert_eq!(
        rtt,
        Duration::from_millis(60),
        "no jitter or bottleneck: exactly 2 × 30 ms"
    );
}

/// Sink plus flooder in one node type.
enum Toy {
    Flood(Flooder),
    Sink(Sink),
}

impl SimNode for Toy {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        match self {
            Toy::Flood(f) => f.handle_datagram(now, from, to, bytes),
            Toy::Sink(s) => s.handle_datagram(now, from, to, bytes),
        }
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        match self {
            Toy::Flood(f) => f.handle_timeout(now),
            Toy::Sink(s) => s.handle_timeout(now),
        }
    }
    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        match self {
            Toy::Flood(f) => f.poll_transmit(now),
            Toy::Sink(s) => s.poll_transmit(now),
        }
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        match self {
            Toy::Flood(f) => f.poll_timeout(),
            Toy::Sink(s) => s.poll_timeout(),
        }
    }
    fn check_invariants(&self) -> Result<(), String> {
        match self {
            Toy::Flood(f) => f.check_invariants(),
            Toy::Sink(s) => s.check_invariants(),
        }
    }
}

fn sink(sim: &Simulator<Toy>, id: NodeId) -> &Sink {
    match sim.node(id) {
        Toy::Sink(s) => s,
        Toy::Flood(_) => unreachable!("node is a sink"),
    }
}

/// A sink at `addr(2)` that requires in-order delivery, and a flooder at `addr(1)` sending
/// it `count` datagrams of `size` bytes, one every `interval`.
fn flooder_and_sink(
    sim: &mut Simulator<Toy>,
    size: usize,
    interval: Duration,
    count: u64,
) -> (NodeId, NodeId) {
    let s = sim
        .add_node(
            vec![addr(2)],
            Toy::Sink(Sink {
                require_order: true,
                ..Sink::default()
            }),
        )
        .unwrap();
    let f = sim
        .add_node(
            vec![addr(1)],
            Toy::Flood(Flooder::new(addr(2), size, interval, count)),
        )
        .unwrap();
    (f, s)
}

#[test]
fn bottleneck_caps_throughput_and_drops_tail_bytes() {
    // Offer 20 Mbit/s (1372-byte datagrams = 1400 wire bytes every 560 µs) into 10 Mbit/s.
    let mut sim: Simulator<Toy> = Simulator::new(seed_from_env(3), LinkConfig::default());
    let count = 10_000;
    let (f, s) = flooder_and_sink(&mut sim, 1372, Duration::from_micros(560), count);
    let (fwd, _) = sim.connect(
        f,
        s,
        LinkConfig {
            delay: Duration::from_millis(10),
            bottleneck: Some(BottleneckConfig {
                rate_bps: 10_000_000,
                queue_bytes: 70_000,
            }),
            record_samples: true,
            ..LinkConfig::default()
        },
        LinkConfig::default(),
    );
    if let Err(e) = sim.run_until(Timestamp::from_secs(60)) {
        sim.fail(&e);
    }
    let got = &sink(&sim, s).received;
    let stats = sim.link(fwd).stats();
    assert_eq!(
        got.len() as u64 + stats.packets_dropped_queue,
        count,
        "every datagram delivered or counted as dropped"
    );
    assert_eq!(stats.bytes_dropped_loss, 0);
    // Delivered rate equals the bottleneck rate while it is saturated.
    let (first, last) = (got[0].1, got[got.len() - 1].1);
    let rate = (got.len() - 1) as f64 * 1400.0 * 8.0 / (last - first).as_secs_f64();
    assert!((rate / 10e6 - 1.0).abs() < 0.001, "{rate}");
    // 70 000 bytes hold 50 packets counting the one in service, so a packet waits behind at
    // most 49 × 1.12 ms = 54.88 ms.
    let max_q = stats
        .samples
        .iter()
        .map(|s| s.queue_delay_us)
        .max()
        .unwrap();
    assert!((54_000..=54_880).contains(&max_q), "{max_q} µs");
    assert!(
        stats.packets_dropped_queue > 4_000,
        "half the offered load is dropped"
    );
}

#[test]
fn random_loss_and_outage_are_counted_separately() {
    let mut sim: Simulator<Toy> = Simulator::new(seed_from_env(4), LinkConfig::default());
    let s = sim
        .add_node(vec![addr(2)], Toy::Sink(Sink::default()))
        .unwrap();
    let f = sim
        .add_node(
            vec![addr(1)],
            Toy::Flood(Flooder::new(addr(2), 100, Duration::from_millis(1), 10_000)),
        )
        .unwrap();
    let (fwd, _) = sim.connect(
        f,
        s,
        LinkConfig {
            loss: LossModel::Random(0.1),
            outages: vec![(Timestamp::from_secs(2), Timestamp::from_secs(3))],
            ..LinkConfig::default()
        },
        LinkConfig::default(),
    );
    sim.run_until(Timestamp::from_secs(20)).unwrap();
    let st = sim.link(fwd).stats();
    assert_eq!(st.packets_dropped_outage, 1000);
    assert!(
        (st.packets_dropped_loss as f64 / 9000.0 - 0.1).abs() < 0.015,
        "{}",
        st.packets_dropped_loss
    );
    assert_eq!(
        sink(&sim, s).received.len() as u64,
        10_000 - st.packets_dropped_outage - st.packets_dropped_loss
    );
    assert!(sink(&sim, s)
        .received
        .iter()
        .all(|r| r.1 < Timestamp::from_secs(2) || r.1 >= Timestamp::from_secs(3)));
}

#[test]
#[should_panic(expected = "SIM_SEED=78 cargo test --release -p rustox-auto-tests --test sim_core")]
fn failing_run_panics_with_replay_command() {
    let mut sim: Simulator<Toy> = Simulator::new(
        78,
        LinkConfig {
            duplicate: 1.0,
            ..LinkConfig::default()
        },
    );
    sim.add_node(
        vec![addr(2)],
        Toy::Sink(Sink {
            require_order: true,
            ..Sink::default()
        }),
    )
    .unwrap();
    sim.add_node(
        vec![addr(1)],
        Toy::Flood(Flooder::new(addr(2), 100, Duration::from_millis(1), 10)),
    )
    .unwrap();
    if let Err(e) = sim.run_until(Timestamp::from_secs(1)) {
        sim.fail(&e);
    }
}

/// A node that always claims work is due now and never does any.
struct Spinner;

impl SimNode for Spinner {
    fn handle_datagram(&mut self, _: Timestamp, _: SocketAddr, _: SocketAddr, _: &[u8]) {}
    fn handle_timeout(&mut self, _: Timestamp) {}
    fn poll_transmit(&mut self, _: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        None
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        Some(Timestamp::ZERO)
    }
}

#[test]
fn a_deadline_stuck_in_the_past_is_reported_as_livelock() {
    let mut sim: Simulator<Spinner> = Simulator::new(1, LinkConfig::default());
    sim.add_node(vec![addr(1)], Spinner).unwrap();
    match sim.run_until(Timestamp::from_secs(1)) {
        Err(rustox_simulator::SimError::Livelock {
            node: 0,
            deadline: Some(t),
            ..
        }) => assert_eq!(t, Timestamp::ZERO),
        other => panic!("expected a livelock, got {other:?}"),
    }
}

#[test]
fn a_node_receives_on_each_of_its_addresses() {
    let mut sim: Simulator<Toy> = Simulator::new(
        seed_from_env(6),
        LinkConfig::with_delay(Duration::from_millis(1)),
    );
    let s = sim
        .add_node(vec![addr(2), addr(3)], Toy::Sink(Sink::default()))
        .unwrap();
    assert!(
        sim.add_node(vec![addr(3)], Toy::Sink(Sink::default()))
            .is_none(),
        "an address has one owner"
    );
    sim.add_node(
        vec![addr(1)],
        Toy::Flood(Flooder::new(addr(2), 50, Duration::from_millis(1), 5)),
    )
    .unwrap();
    sim.add_node(
        vec![addr(4)],
        Toy::Flood(Flooder::new(addr(3), 50, Duration::from_millis(1), 7)),
    )
    .unwrap();
    sim.add_node(
        vec![addr(5)],
        Toy::Flood(Flooder::new(addr(9), 50, Duration::from_millis(1), 3)),
    )
    .unwrap();
    sim.run_until(Timestamp::from_secs(1)).unwrap();
    assert_eq!(sink(&sim, s).received.len(), 12);
    assert_eq!(sim.stats().unroutable, 3, "nobody owns 10.0.0.9");
}

#[test]
fn a_busy_driver_reads_in_batches_and_drops_what_its_socket_buffer_cannot_hold() {
    use rustox_simulator::{socket_truesize, DriverModel};
    // 1372-byte datagrams every 2 µs into a driver that needs 5 µs per datagram and whose
    // socket holds 100 of them: it keeps up with two fifths of the offered load.
    let mut sim: Simulator<Toy> = Simulator::new(seed_from_env(3), LinkConfig::default());
    let count = 5_000;
    let (f, s) = flooder_and_sink(&mut sim, 1372, Duration::from_micros(2), count);
    sim.connect(f, s, LinkConfig::default(), LinkConfig::default());
    let model = DriverModel {
        rx_buffer_bytes: 100 * socket_truesize(1372),
        cpu_per_rx: Duration::from_micros(5),
        ..DriverModel::precise()
    };
    sim.set_driver(s, Some(model));
    if let Err(e) = sim.run_until(Timestamp::from_secs(1)) {
        sim.fail(&e);
    }
    let got = sink(&sim, s).received.len() as u64;
    let driver = sim.driver_stats(s).expect("the sink has a driver");
    assert_eq!(
        got + driver.rx_buffer_drops,
        count,
        "every datagram read or dropped at the socket"
    );
    assert!(driver.rx_buffer_drops > count / 2, "{driver:?}");
    assert!(driver.rx_buffer_peak <= 100 * socket_truesize(1372));
    // Reads come 32 at a time while the socket is full, so far fewer loop turns than
    // datagrams.
    assert!(
        driver.wakeups * 4 < got,
        "{} turns for {got} datagrams",
        driver.wakeups
    );
}

#[test]
fn a_departed_node_hears_nothing_more_and_its_peers_lose_their_answers() {
    let mut sim: Simulator<Pinger> = Simulator::new(
        seed_from_env(9),
        LinkConfig::with_delay(Duration::from_millis(10)),
    );
    let a = sim
        .add_node_with(vec![addr(1)], |rng| {
            Pinger::new(vec![addr(2)], Duration::from_millis(100), rng)
        })
        .unwrap();
    let b = sim
        .add_node_with(vec![addr(2)], |rng| {
            Pinger::new(vec![addr(1)], Duration::from_millis(100), rng)
        })
        .unwrap();
    if let Err(e) = sim.run_until(Timestamp::from_secs(1)) {
        sim.fail(&e);
    }
    // Leaves with pings in flight towards it.
    sim.remove_node(b);
    let (b_sent, b_pongs, a_pongs) = (sim.node(b).sent(), sim.node(b).pongs, sim.node(a).pongs);
    if let Err(e) = sim.run_until(Timestamp::from_secs(2)) {
        sim.fail(&e);
    }
    assert!(sim.is_departed(b) && !sim.is_departed(a));
    assert_eq!(sim.node(b).sent(), b_sent, "no timer fires after departure");
    assert_eq!(
        sim.node(b).pongs,
        b_pongs,
        "nothing is delivered after departure"
    );
    assert!(
        sim.node(a).pongs <= a_pongs + 1,
        "at most a pong already in flight reaches the peer"
    );
    let stats = sim.stats();
    assert!(
        stats.unroutable >= 9,
        "pings to the released address: {stats:?}"
    );
}

#[test]
fn a_shared_default_link_keeps_a_fixed_delay_and_counts_every_pair() {
    let mut sim: Simulator<Pinger> = Simulator::new(
        seed_from_env(10),
        LinkConfig::with_delay(Duration::from_millis(25)),
    );
    sim.share_default_link(true);
    let n = 10;
    for i in 0..n {
        let peers = (0..n).filter(|&j| j != i).map(addr).collect();
        sim.add_node_with(vec![addr(i)], |rng| {
            Pinger::new(peers, Duration::from_millis(50), rng)
        })
        .unwrap();
    }
    if let Err(e) = sim.run_until(Timestamp::from_secs(2)) {
        sim.fail(&e);
    }
    let shared = sim.route(NodeId(0), NodeId(1));
    assert_eq!(shared, None, "no per-pair route is made");
    for i in 0..n {
        let p = sim.node(NodeId(i));
        assert!(p.pongs > 30, "node {i}: {} pongs", p.pongs);
        assert!(p.rtts.iter().all(|r| *r == Duration::from_millis(50)));
    }
    let link = sim.link(rustox_simulator::LinkId(0));
    let sent: u64 = (0..n).map(|i| sim.node(NodeId(i)).sent()).sum();
    assert!(link.stats().packets_in >= 2 * sent - 2 * n as u64);
}
