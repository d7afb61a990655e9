//! What wakes an idle node with friends online, by cause: a small simulated network (one
//! bootstrap node, `--fillers` plain nodes, node A and `--friends` friends of A), 20 ms
//! between any two nodes. After everyone is online and a settling minute, A's wake-ups over
//! `--seconds` of virtual time are counted, and its heap is measured (by dropping it under a
//! counting allocator): an instant at which A handles a datagram or a
//! timer is one wake-up, tallied by the timers due and the datagrams' first bytes.
//!
//! ```text
//! cargo run --release -p rustox-auto-tests --example idle_trace -- 1 20 300
//! ```
use rustox_auto_tests::node::SimNode;
use rustox_auto_tests::tox_node::{SimToxNode, SimToxOptions};
use rustox_core::node::NodeOptions;
use rustox_net_crypto::Timestamp;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::net::SocketAddr;
use std::time::Duration;

#[global_allocator]
static HEAP: rustox_auto_tests::heap_meter::CountingAlloc =
    rustox_auto_tests::heap_meter::CountingAlloc;

fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, (i / 250) as u8, 1 + (i % 250) as u8], 33445))
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("counts: friends fillers seconds"))
        .collect();
    let friends = args.first().copied().unwrap_or(1);
    let fillers = args.get(1).copied().unwrap_or(20);
    let seconds = args.get(2).copied().unwrap_or(300) as u64;
    let t0 = Timestamp::ZERO;
    let one_way = Duration::from_millis(20);
    // 0: bootstrap, 1: A, 2..2+friends: friends, then fillers.
    let n = 2 + friends + fillers;
    let mut nodes: Vec<SimToxNode> = (0..n)
        .map(|i| {
            let node = NodeOptions {
                accept_strangers: i == 1,
                ..NodeOptions::default()
            };
            SimToxNode::new(t0, 100 + i as u64, SimToxOptions { node })
        })
        .collect();
    let boot_pk = nodes[0].node.dht_public_key();
    for node in nodes.iter_mut().skip(1) {
        node.bootstrap(t0, addr(0), boot_pk);
    }
    let a_id = nodes[1].node.tox_id();
    for f in nodes.iter_mut().skip(2).take(friends) {
        f.node.add_friend(t0, &a_id, b"hi").expect("add");
    }
    let by_addr: BTreeMap<SocketAddr, usize> = (0..n).map(|i| (addr(i), i)).collect();
    // (arrival, sequence, from, to, payload)
    let mut wire: BinaryHeap<Reverse<(Timestamp, u64, usize, usize, Vec<u8>)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut now = t0;
    let mut window: Option<(Timestamp, Timestamp)> = None;
    let mut wakes = 0u64;
    let mut timer_tally: BTreeMap<String, u64> = BTreeMap::new();
    let mut packet_tally: BTreeMap<u8, u64> = BTreeMap::new();
    let mut wake_instants: BTreeSet<Timestamp> = BTreeSet::new();
    let hard_end = t0 + Duration::from_secs(600 + seconds);
    loop {
        // Send everything due.
        for i in 0..n {
            while let Some((dst, payload)) = nodes[i].poll_transmit(now) {
                if let Some(&to) = by_addr.get(&dst) {
                    seq += 1;
                    wire.push(Reverse((now + one_way, seq, i, to, payload)));
                }
            }
        }
        if window.is_none() {
            let online = nodes[1].log.online.len() >= friends
                && nodes
                    .iter()
                    .skip(2)
                    .take(friends)
                    .all(|f| !f.log.online.is_empty());
            if online {
                let start = now + Duration::from_secs(60);
                window = Some((start, start + Duration::from_secs(seconds)));
                println!("all online at {:.2} s", now.as_secs_f64());
            }
        }
        if let Some((_, end)) = window {
            if now >= end {
                break;
            }
        }
        if now >= hard_end {
            println!("not everyone came online");
            return;
        }
        let next_timer = nodes
            .iter()
            .filter_map(|x| x.poll_timeout())
            .min()
            .unwrap_or(hard_end);
        let next_wire = wire.peek().map(|Reverse(w)| w.0).unwrap_or(hard_end);
        now = next_timer.min(next_wire).max(now);
        let counting = window.is_some_and(|(s, e)| now >= s && now < e);
        // Timers.
        for i in 0..n {
            if nodes[i].poll_timeout().is_some_and(|t| t <= now) {
                if i == 1 && counting {
                    let due = nodes[1].node.due_timers(now);
                    let causes: Vec<&str> = [
                        ("dht", due.dht),
                        ("onion_server", due.onion_server),
                        ("onion_client", due.onion_client),
                        ("sessions", due.sessions),
                        ("friends", due.friends),
                    ]
                    .iter()
                    .filter(|c| c.1)
                    .map(|c| c.0)
                    .collect();
                    *timer_tally.entry(causes.join("+")).or_default() += 1;
                    wake_instants.insert(now);
                }
                nodes[i].handle_timeout(now);
            }
        }
        // Datagrams.
        while wire.peek().is_some_and(|Reverse(w)| w.0 <= now) {
            let Reverse((_, _, from, to, payload)) = wire.pop().expect("peeked");
            if to == 1 && counting {
                *packet_tally.entry(payload[0]).or_default() += 1;
                wake_instants.insert(now);
            }
            nodes[to].handle_datagram(now, addr(from), addr(to), &payload);
        }
    }
    wakes += wake_instants.len() as u64;
    println!(
        "A, {friends} friends online, {fillers} other nodes: {wakes} wake-ups in {seconds} s = {:.2}/s",
        wakes as f64 / seconds as f64
    );
    println!("timer wake-ups by due timers: {timer_tally:?}");
    println!("datagrams received by first byte: {packet_tally:?}");
    let before = rustox_auto_tests::heap_meter::live_bytes().unwrap_or(0);
    let a = nodes.remove(1);
    let friend_memory: usize = (0..friends as u32)
        .filter_map(|f| a.node.friend_memory(rustox_core::node::FriendNumber(f)))
        .sum();
    drop(a);
    let after = rustox_auto_tests::heap_meter::live_bytes().unwrap_or(0);
    println!(
        "A's heap: {:.1} KiB ({:.1} KiB in its friends' records and sessions)",
        before.saturating_sub(after) as f64 / 1024.0,
        friend_memory as f64 / 1024.0
    );
}
