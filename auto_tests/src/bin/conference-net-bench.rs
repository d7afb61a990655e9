//! `conference-net-bench`: conferences of real processes on real sockets, side by side: the
//! mixed conference (the same C client, `tools/toxconference.c`, alternating along the chain
//! between c-toxcore 0.2.18's libtoxcore.so.2 and rustox's) and an all-c-toxcore one of the
//! same size, on loopback and through an emulated link.
//!
//! ```text
//! cargo build --release -p rustox-ffi -p rustox-auto-tests --bin conference-net-bench
//! target/release/conference-net-bench --peers 16 --messages 40
//! ```
//!
//! Each run starts a tox-bootstrapd and `--peers` clients, makes neighbours along a chain
//! friends, invites along the chain (each peer joins through the previous one) and waits
//! until every peer counts all of them online. Then the peers take turns sending
//! `--messages` messages, one every `--gap-ms`; a message's delivery time is the last other
//! peer's receipt stamp minus the sender's stamp of the send (CLOCK_MONOTONIC, which every
//! process on the machine shares). CPU per message is the user + system time of all the
//! clients (utime + stime in `/proc/PID/stat`, 10 ms ticks) from the first send until the
//! last receipt, divided by the messages; printed as is and less the clients' CPU over an
//! idle window of the same length as the sending just before it (their pings and DHT).
//!
//! The emulated link: this kernel has no netem qdisc (`CONFIG_NET_SCH_NETEM` is not set), so
//! the instrument is the project's userspace link emulator (`auto_tests/src/emulator`): two
//! network namespaces, each on a TUN device, a thread moving every IP packet between them
//! through the simulator's link model with `--delay-ms` one way and `--loss` random loss
//! each way. Even peers of the chain (and the bootstrap node) run in namespace A, odd peers
//! in B, so every invite and every chain neighbour's traffic crosses the link; peers on the
//! same side reach each other without it. Needs root.
//!
//! Nothing is asserted: the figures are printed, with the lost messages counted.

use std::time::{Duration, Instant, SystemTime};

use clap::Parser;
use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::{chain, receipts, ChainLimits, ConfNet};
use rustox_auto_tests::ctoxcore::conference_peer::{ConfOptions, ConfPeer};
use rustox_auto_tests::ctoxcore::Launch;
use rustox_auto_tests::emulator::{Side, Testbed, TestbedConfig};
use rustox_simulator::{utc_minute, LinkConfig, LossModel};

#[derive(Parser, Debug)]
#[command(
    about = "Conferences of real processes: mixed rustox/c-toxcore vs all c-toxcore, delivery time and CPU per message"
)]
struct Args {
    /// Peers in each conference.
    #[arg(long, default_value_t = 16)]
    peers: usize,
    /// Messages sent in each run (the peers take turns).
    #[arg(long, default_value_t = 40)]
    messages: usize,
    /// Milliseconds between two messages.
    #[arg(long, default_value_t = 250)]
    gap_ms: u64,
    /// The links, comma-separated: loopback, emulated.
    #[arg(long, default_value = "loopback,emulated")]
    links: String,
    /// The conferences, comma-separated: mixed, c-toxcore, rustox.
    #[arg(long, default_value = "mixed,c-toxcore")]
    kinds: String,
    /// The emulated link's one-way delay in milliseconds.
    #[arg(long, default_value_t = 20)]
    delay_ms: u64,
    /// The emulated link's random loss each way, in percent.
    #[arg(long, default_value_t = 2.0)]
    loss: f64,
    /// Seed of the emulated link's loss.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seconds a message may take to reach every peer before it counts as lost.
    #[arg(long, default_value_t = 20)]
    deadline: u64,
}

/// One run's figures.
struct Row {
    kind: String,
    link: String,
    setup_s: f64,
    delivered: usize,
    sent: usize,
    p50_ms: f64,
    p95_ms: f64,
    max_ms: f64,
    cpu_per_msg_ms: f64,
    raw_cpu_per_msg_ms: f64,
    idle_cpu_pct: f64,
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("conference-net-bench: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    let args = Args::parse();
    let command: Vec<String> = std::env::args().collect();
    let mut rows = Vec::new();
    for link in args.links.split(',') {
        for kind in args.kinds.split(',') {
            let implementations: Vec<Implementation> = (0..args.peers)
                .map(|i| match kind {
                    "c-toxcore" => Ok(CToxcore),
                    "rustox" => Ok(Rustox),
                    "mixed" if i % 2 == 0 => Ok(CToxcore),
                    "mixed" => Ok(Rustox),
                    other => Err(format!("unknown kind {other}")),
                })
                .collect::<Result<_, _>>()?;
            eprintln!("running {kind} on {link} ...");
            match run(&args, link, kind, &implementations) {
                Ok(row) => rows.push(row),
                Err(e) => eprintln!("{kind} on {link} failed: {e}"),
            }
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "conference-net-bench, {}: `{}`",
        utc_minute(SystemTime::now()),
        command.join(" ")
    );
    println!();
    println!(
        "{} processes per conference (tools/toxconference.c; mixed: c-toxcore 0.2.18 and rustox alternating along \
         the invite chain), {} messages {} ms apart; emulated link: userspace emulator, {} ms one way, {} % random \
         loss each way; {cores} cores, load average at start {}.",
        args.peers,
        args.messages,
        args.gap_ms,
        args.delay_ms,
        args.loss,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!();
    println!("| conference | link | set-up s | delivered to all | p50 ms | p95 ms | max ms | CPU ms/message, all peers | the same less idle | idle CPU %, all peers |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {:.1} | {}/{} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.1} |",
            r.kind,
            r.link,
            r.setup_s,
            r.delivered,
            r.sent,
            r.p50_ms,
            r.p95_ms,
            r.max_ms,
            r.raw_cpu_per_msg_ms,
            r.cpu_per_msg_ms,
            r.idle_cpu_pct
        );
    }
    Ok(())
}

fn run(
    args: &Args,
    link: &str,
    kind: &str,
    implementations: &[Implementation],
) -> Result<Row, String> {
    let testbed = match link {
        "loopback" => None,
        "emulated" => {
            let config = LinkConfig {
                delay: Duration::from_millis(args.delay_ms),
                loss: if args.loss > 0.0 {
                    LossModel::Random(args.loss / 100.0)
                } else {
                    LossModel::None
                },
                ..LinkConfig::default()
            };
            Some(
                Testbed::new(TestbedConfig::symmetric(config, args.seed))
                    .map_err(|e| format!("emulated link: {e}"))?,
            )
        }
        other => return Err(format!("unknown link {other}")),
    };
    let side_launch = |side: Side| match &testbed {
        Some(t) => Launch::prefixed(["ip", "netns", "exec", t.namespace(side)]),
        None => Launch::direct(),
    };
    let net = ConfNet::start_with(implementations, side_launch(Side::A))
        .ok_or("a dependency is missing")?;
    let boot = match &testbed {
        Some(t) => net.bootstrap.spec(t.addr(Side::A).to_string()),
        None => net.spec(),
    };
    let started = Instant::now();
    let conference = chain(implementations, ChainLimits::default(), |i, imp| {
        let side = if i % 2 == 0 { Side::A } else { Side::B };
        let options = ConfOptions {
            bootstrap: vec![boot.clone()],
            // In a namespace of its own c-toxcore's range is free; on loopback, any free port.
            port: if testbed.is_some() {
                0
            } else {
                rustox_testkit::net::free_udp_port()
            },
            name: Some(format!("p{i}")),
            launch: side_launch(side),
            ..ConfOptions::default()
        };
        ConfPeer::start(&format!("p{i}"), net.binary(imp), &options)
            .unwrap_or_else(|e| panic!("starting p{i}: {e}"))
    })?;
    let setup_s = started.elapsed().as_secs_f64();
    let mut peers = conference.peers;
    let confs = conference.confs;
    let pids: Vec<u32> = peers.iter().map(ConfPeer::pid).collect();
    let window = Duration::from_millis(args.gap_ms * args.messages as u64);

    std::thread::sleep(Duration::from_secs(2));
    let idle_start = cpu_seconds(&pids);
    std::thread::sleep(window);
    let idle = cpu_seconds(&pids) - idle_start;

    let busy_start = cpu_seconds(&pids);
    let mut sent = Vec::new();
    for m in 0..args.messages {
        let sender = m % peers.len();
        let text = format!("bench message {m} from p{sender}");
        let from = peers[sender].mark();
        peers[sender].cmd(&format!("msg {} {text}", confs[sender]))?;
        let t = peers[sender]
            .lines()
            .get(from..)
            .and_then(|l| l.iter().find(|l| l.tag == "OK").map(|l| l.t))
            .ok_or("no stamp on the send")?;
        sent.push((sender, text, t));
        std::thread::sleep(Duration::from_millis(args.gap_ms));
    }
    let mut times = Vec::new();
    let deadline = Duration::from_secs(args.deadline);
    for (sender, text, t) in &sent {
        if let Ok(r) = receipts(&peers, &confs, *sender, text, deadline) {
            let last = r.iter().copied().fold(f64::MIN, f64::max);
            times.push((last - t) * 1000.0);
        }
    }
    let busy = cpu_seconds(&pids) - busy_start;
    for p in &mut peers {
        p.quit(Duration::from_secs(5));
    }
    drop(testbed);
    times.sort_by(f64::total_cmp);
    let pct = |q: f64| nearest_rank(&times, q);
    Ok(Row {
        kind: kind.to_string(),
        link: link.to_string(),
        setup_s,
        delivered: times.len(),
        sent: sent.len(),
        p50_ms: pct(0.50),
        p95_ms: pct(0.95),
        max_ms: times.last().copied().unwrap_or(f64::NAN),
        cpu_per_msg_ms: (busy - idle).max(0.0) * 1000.0 / sent.len().max(1) as f64,
        raw_cpu_per_msg_ms: busy * 1000.0 / sent.len().max(1) as f64,
        idle_cpu_pct: idle * 100.0 / window.as_secs_f64(),
    })
}

/// The user + system CPU seconds of these processes so far (`/proc/PID/stat` fields 14 and
/// 15, in clock ticks of `sysconf(_SC_CLK_TCK)`).
fn cpu_seconds(pids: &[u32]) -> f64 {
    let tick = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    pids.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| {
            // The command name (field 2) is in parentheses and may hold spaces.
            let after = stat.rsplit_once(')')?.1;
            let f: Vec<&str> = after.split_whitespace().collect();
            let utime: f64 = f.get(11)?.parse().ok()?;
            let stime: f64 = f.get(12)?.parse().ok()?;
            Some((utime + stime) / tick)
        })
        .sum()
}

/// The nearest-rank `q` quantile (0..=1) of sorted values; NaN when there are none.
fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
