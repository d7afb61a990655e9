//! relay-bench: the rustox TCP relay against c-toxcore's (tox-bootstrapd 0.2.18) on
//! loopback. Each relay runs as a process of its own, so its CPU time and resident memory
//! can be read from /proc; the load is the same for both.
//!
//! * **File**: two c-toxcore 0.2.18 clients with UDP off (`tools/toxcore_file_peer.c`) move a
//!   file through the relay; the relay is their only path (onion hop A into a DHT of the
//!   relay node and two rustox nodes, then a route). Goodput as the sender measures it.
//! * **Blast**: two probe clients (`relay_probe`) linked through the relay; one pushes
//!   1400-byte data packets as fast as the relay reads them (for at most 20 s), the other
//!   reads. Goodput is what arrived; the rest was dropped by the relay's backpressure. The
//!   relay's CPU seconds (user + system, /proc/PID/stat) per GiB that arrived.
//! * **Idle**: N probe connections, each past its handshake and first frame, then nothing.
//!   The relay's resident memory grows by so much per connection; connections per GiB is
//!   what that allows. Kernel socket buffers are not in that figure (they are the kernel's,
//!   the same for both relays).
//! * **rustox file**: a file between two UDP-off `rustox send/recv` processes (the `rustox`
//!   binary beside this one) through the relay, found by Tox ID through the same DHT.
//! * **Switch** (`--switch`, root): `relay_switch`'s network-namespace scenario, the time
//!   from UDP unblocked to the session running over UDP.
//!
//! usage: relay-bench [--rustox-file-mib 64] [--switch] [--file-mib 8] [--blast-mib 512]
//! [--idle 4000] [--only rustox|c-toxcore]
//! (`--serve UDP TCP` is internal: the rustox relay process, what `rustox bootstrap
//! --tcp-ports` runs, with the per-address limits lifted for a loopback load.)

use std::io::{BufRead, BufReader, ErrorKind};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_auto_tests::ctoxcore::{
    run_transfer, BootstrapNode, BootstrapOptions, BootstrapSpec, BuildOptions, Discovery,
    Friendship, PeerBinary, TransferOptions,
};
use rustox_auto_tests::live::rustox_bootstrap;
use rustox_auto_tests::relay_probe::{linked_pair, RelayProbe};
use rustox_core::bootstrap_node::{
    self, BootstrapNode as RustoxNode, BootstrapOptions as RustoxOptions,
};
use rustox_core::relay::server::RelayConfig;
use rustox_core::relay::wire::Packet;
use rustox_net_crypto::crypto::PublicKey;

#[derive(Parser, Debug)]
struct Args {
    /// File size for the c-toxcore transfer, MiB (0 skips it).
    #[arg(long, default_value_t = 8)]
    file_mib: u64,
    /// Bytes the probe pair pushes through one route, MiB (0 skips it).
    #[arg(long, default_value_t = 512)]
    blast_mib: u64,
    /// Idle connections for the memory figure (0 skips it).
    #[arg(long, default_value_t = 4000)]
    idle: usize,
    /// File size between two UDP-off rustox CLI nodes (`rustox send/recv --no-udp
    /// --tcp-relay`), MiB (0 skips it; needs `rustox` beside this binary).
    #[arg(long, default_value_t = 64)]
    rustox_file_mib: u64,
    /// Also run the network-namespace path switch (root): time from UDP unblocked to the
    /// session running over UDP (`rustox_auto_tests::relay_switch`).
    #[arg(long)]
    switch: bool,
    /// Run only this relay: "rustox" or "c-toxcore".
    #[arg(long)]
    only: Option<String>,
    /// Internal: serve a rustox relay on these UDP and TCP ports and print its key.
    #[arg(long, num_args = 2)]
    serve: Option<Vec<u16>>,
}

/// A relay under test: its process, addresses and key.
struct Relay {
    name: &'static str,
    pid: u32,
    udp: SocketAddr,
    tcp: SocketAddr,
    pk: PublicKey,
    _child: RelayChild,
}

/// The relay's process, stopped when dropped (tox-bootstrapd's by its own handle's drop).
enum RelayChild {
    Rustox(Child),
    CToxcore(#[allow(dead_code)] BootstrapNode),
}

impl Drop for RelayChild {
    fn drop(&mut self) {
        if let RelayChild::Rustox(c) = self {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    // A port free for both TCP and UDP at the time of asking.
    loop {
        let t = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = t.local_addr().expect("addr").port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn wait_listening(addr: SocketAddr) {
    let end = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < end, "relay at {addr} never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn start_rustox() -> Relay {
    let (udp, tcp) = (free_port(), free_port());
    let mut child = Command::new(std::env::current_exe().expect("own path"))
        .args(["--serve", &udp.to_string(), &tcp.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the rustox relay");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("its key");
    let pk = PublicKey::from_hex(line.trim()).expect("a key");
    let tcp = SocketAddr::from(([127, 0, 0, 1], tcp));
    wait_listening(tcp);
    Relay {
        name: "rustox",
        pid: child.id(),
        udp: SocketAddr::from(([127, 0, 0, 1], udp)),
        tcp,
        pk,
        _child: RelayChild::Rustox(child),
    }
}

fn start_ctoxcore() -> Relay {
    let (udp, tcp) = (free_port(), free_port());
    let node = BootstrapNode::start(&BootstrapOptions {
        port: udp,
        tcp_relay_ports: vec![tcp],
        ..BootstrapOptions::default()
    })
    .expect("start tox-bootstrapd (Debian's toxcore-utils)");
    let tcp = SocketAddr::from(([127, 0, 0, 1], tcp));
    wait_listening(tcp);
    Relay {
        name: "tox-bootstrapd 0.2.18",
        pid: node.pid(),
        udp: SocketAddr::from(([127, 0, 0, 1], udp)),
        tcp,
        pk: PublicKey::from_hex(node.dht_key()).expect("its key"),
        _child: RelayChild::CToxcore(node),
    }
}

/// The relay process: a rustox bootstrap node with a TCP relay, as `rustox bootstrap
/// --tcp-ports` runs it, but with limits that let one address open thousands of connections.
fn serve(udp: u16, tcp: u16) {
    let dir = std::env::temp_dir().join(format!("relay-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let opts = RustoxOptions {
        ip: "127.0.0.1".parse().expect("ip"),
        port: udp,
        keys: dir.join("keys"),
        tcp_ports: vec![tcp],
        relay: RelayConfig {
            max_connections: 1 << 20,
            max_per_ip: 1 << 20,
            max_handshaking: 1 << 16,
            ..RelayConfig::default()
        },
        ..RustoxOptions::default()
    };
    let (keys, _) = bootstrap_node::load_keys(&opts).expect("keys");
    println!("{}", keys.public.to_hex());
    let node = RustoxNode::start(keys, &opts).expect("start");
    // Runs until our parent closes stdin (or kills us).
    let mut sink = String::new();
    while std::io::stdin()
        .read_line(&mut sink)
        .map(|n| n > 0)
        .unwrap_or(false)
    {}
    node.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

/// User + system CPU seconds of `pid` (USER_HZ is 100 on Linux).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) as f64 / 100.0
}

/// Resident memory of `pid`, bytes.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[derive(Debug, Default, Clone, Copy)]
struct Row {
    rustox_file_mbit: Option<f64>,
    rustox_online_s: Option<f64>,
    file_mbit: Option<f64>,
    file_online_s: Option<f64>,
    blast_mib_s: Option<f64>,
    blast_arrived: Option<f64>,
    cpu_per_gib: Option<f64>,
    rss_per_conn: Option<f64>,
    idle_held: Option<usize>,
}

fn file(relay: &Relay, mib: u64) -> (Option<f64>, Option<f64>) {
    let binary = PeerBinary::build(&BuildOptions::default()).expect("build the c-toxcore peer");
    // Two rustox DHT nodes beside the relay node, so onion paths have hops B and C.
    let nodes: Vec<_> = (0..2)
        .map(|_| {
            let n = rustox_bootstrap(free_port()).expect("a DHT node");
            n.bootstrap(relay.udp, relay.pk);
            n
        })
        .collect();
    let spec = |addr: SocketAddr, pk: &PublicKey| BootstrapSpec {
        host: addr.ip().to_string(),
        port: addr.port(),
        dht_key: pk.to_hex(),
    };
    let mut dht = vec![spec(relay.udp, &relay.pk)];
    dht.extend(nodes.iter().map(|n| spec(n.local_addr(), &n.public_key())));
    let mut options = TransferOptions::loopback(mib << 20);
    options.discovery = Discovery::Nodes(dht);
    options.friendship = Friendship::Mutual;
    options.allow_tcp = true;
    for peer in [&mut options.recv, &mut options.send] {
        peer.port = free_port();
        peer.udp = false;
        peer.tcp_relays = vec![spec(relay.tcp, &relay.pk)];
        peer.timeout = Duration::from_secs(600);
    }
    match run_transfer(&binary, &options) {
        Ok(r) if r.recv.verified && r.recv.friend_connection == "tcp" => {
            (r.send.goodput_mbit, r.recv.time_to_friend_online)
        }
        Ok(r) => {
            eprintln!("{}: file transfer not verified over TCP: {r:?}", relay.name);
            (None, None)
        }
        Err(e) => {
            eprintln!("{}: file transfer failed: {e}", relay.name);
            (None, None)
        }
    }
}

/// A file between two UDP-off rustox CLI processes through the relay: (sender's goodput
/// Mbit/s, seconds from the sender's start to the friend online).
fn rustox_file(relay: &Relay, mib: u64) -> (Option<f64>, Option<f64>) {
    let rustox = match rustox_auto_tests::emulator::rustox_beside_current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return (None, None);
        }
    };
    let nodes: Vec<_> = (0..2)
        .map(|_| {
            let n = rustox_bootstrap(free_port()).expect("a DHT node");
            n.bootstrap(relay.udp, relay.pk);
            n
        })
        .collect();
    let mut network = vec![
        "--no-udp".to_owned(),
        "--tcp-relay".into(),
        format!("{}:{}", relay.tcp, relay.pk.to_hex()),
        "--bootstrap".into(),
        format!("{}:{}", relay.udp, relay.pk.to_hex()),
    ];
    for n in &nodes {
        network.extend([
            "--bootstrap".into(),
            format!("{}:{}", n.local_addr(), n.public_key().to_hex()),
        ]);
    }
    let dir = std::env::temp_dir().join(format!("relay-bench-file-{}", std::process::id()));
    let _ = std::fs::create_dir_all(dir.join("in"));
    let source = dir.join("file.bin");
    {
        let mut rng = StdRng::from_entropy();
        let mut data = vec![0u8; (mib << 20) as usize];
        rand::RngCore::fill_bytes(&mut rng, &mut data);
        std::fs::write(&source, &data).expect("write the file");
    }
    let mut recv = Command::new(&rustox)
        .args(["recv", "--listen", "127.0.0.1:0", "--once", "--out"])
        .arg(dir.join("in"))
        .arg("--key-file")
        .arg(dir.join("recv.key"))
        .args(&network)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rustox recv");
    let mut out = BufReader::new(recv.stdout.take().expect("stdout"));
    let mut id = String::new();
    let mut line = String::new();
    while out.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
        if let Some(rest) = line.strip_prefix("tox id ") {
            id = rest.trim().to_owned();
            break;
        }
        line.clear();
    }
    let sent = Command::new(&rustox)
        .args(["send", "--to", &id])
        .args(&network)
        .arg(&source)
        .output()
        .expect("run rustox send");
    let _ = recv.kill();
    let _ = recv.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let summary: Option<serde_json::Value> = String::from_utf8_lossy(&sent.stdout)
        .lines()
        .find_map(|l| serde_json::from_str(l).ok());
    match summary {
        Some(v) if sent.status.success() => (
            v.get("goodput_mbit").and_then(|x| x.as_f64()),
            v.get("friend_online_seconds").and_then(|x| x.as_f64()),
        ),
        _ => {
            let err = String::from_utf8_lossy(&sent.stderr);
            let tail: Vec<&str> = err.lines().rev().take(4).collect();
            eprintln!(
                "{}: rustox send failed ({}): {}",
                relay.name,
                sent.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            );
            (None, None)
        }
    }
}

/// (MiB/s that arrived, fraction of sent bytes that arrived, relay CPU s per GiB arrived)
fn blast(relay: &Relay, mib: u64) -> (f64, f64, f64) {
    let mut rng = StdRng::from_entropy();
    let (mut a, ab, mut b, _) = linked_pair(relay.tcp, &relay.pk, &mut rng).expect("link a pair");
    b.stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut bytes = 0u64;
            let mut last = Instant::now();
            loop {
                match b.recv() {
                    Ok(p) => {
                        if let Ok(Packet::Data { payload, .. }) = Packet::parse(&p) {
                            bytes += payload.len() as u64;
                            last = Instant::now();
                        }
                    }
                    Err(e)
                        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
                            && !done.load(Ordering::Relaxed) => {}
                    Err(_) => return (bytes, last),
                }
            }
        })
    };
    let payload = [0x1b; 1400];
    let total = mib << 20;
    let cpu0 = cpu_seconds(relay.pid);
    let start = Instant::now();
    let mut sent = 0u64;
    while sent < total && start.elapsed() < Duration::from_secs(20) {
        for _ in 0..32 {
            a.queue(&Packet::Data {
                conn_id: ab,
                payload: &payload,
            })
            .expect("seal");
            sent += payload.len() as u64;
        }
        a.flush().expect("send");
    }
    std::thread::sleep(Duration::from_millis(300));
    done.store(true, Ordering::Relaxed);
    let (arrived, last) = reader.join().expect("reader");
    let cpu = cpu_seconds(relay.pid) - cpu0;
    let secs = last.duration_since(start).as_secs_f64().max(1e-6);
    let gib = arrived as f64 / (1u64 << 30) as f64;
    (
        arrived as f64 / secs / (1 << 20) as f64,
        arrived as f64 / sent as f64,
        cpu / gib.max(1e-12),
    )
}

/// Descriptors `pid` has open.
fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// (RSS bytes per idle connection, connections the relay held at the reading). Connections
/// are opened from [`IDLE_THREADS`] threads at once: tox-bootstrapd serves handshakes once
/// per 30 ms main-loop turn, so one at a time would take longer than its 30 s ping interval,
/// and probes that do not read would be dropped for not answering before the reading.
fn idle(relay: &Relay, n: usize) -> (f64, usize) {
    let mut rng = StdRng::from_entropy();
    // One probe first, so that first-connection allocations are not counted per connection.
    let warm = RelayProbe::connect(relay.tcp, &relay.pk, &mut rng).expect("connect");
    std::thread::sleep(Duration::from_millis(300));
    let before = rss_bytes(relay.pid);
    let fds_before = fd_count(relay.pid);
    let started = Instant::now();
    let (tcp, pk) = (relay.tcp, relay.pk);
    let probes: Vec<RelayProbe> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..IDLE_THREADS)
            .map(|t| {
                let count = n / IDLE_THREADS + usize::from(t < n % IDLE_THREADS);
                s.spawn(move || {
                    let mut rng = StdRng::from_entropy();
                    (0..count)
                        .map(|_| RelayProbe::connect(tcp, &pk, &mut rng).expect("connect"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("opener"))
            .collect()
    });
    let opened = started.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_bytes(relay.pid);
    let held = fd_count(relay.pid).saturating_sub(fds_before);
    eprintln!(
        "{}: {n} connections opened in {:.1} s; the relay holds {held} more descriptors",
        relay.name,
        opened.as_secs_f64()
    );
    drop(probes);
    drop(warm);
    (after.saturating_sub(before) as f64 / n as f64, held)
}

/// Threads opening idle connections at once.
const IDLE_THREADS: usize = 32;

fn measure(relay: Relay, args: &Args) -> (&'static str, Row) {
    let mut row = Row::default();
    if args.idle > 0 {
        let (per_conn, held) = idle(&relay, args.idle);
        row.rss_per_conn = Some(per_conn);
        row.idle_held = Some(held);
    }
    if args.blast_mib > 0 {
        let (rate, arrived, cpu) = blast(&relay, args.blast_mib);
        row.blast_mib_s = Some(rate);
        row.blast_arrived = Some(arrived);
        row.cpu_per_gib = Some(cpu);
    }
    if args.rustox_file_mib > 0 {
        let (mbit, online) = rustox_file(&relay, args.rustox_file_mib);
        row.rustox_file_mbit = mbit;
        row.rustox_online_s = online;
    }
    if args.file_mib > 0 {
        let (mbit, online) = file(&relay, args.file_mib);
        row.file_mbit = mbit;
        row.file_online_s = online;
    }
    (relay.name, row)
}

fn main() {
    let args = Args::parse();
    if let Some(ports) = &args.serve {
        serve(ports[0], ports[1]);
        return;
    }
    let mut rows = Vec::new();
    if args.only.as_deref() != Some("c-toxcore") {
        rows.push(measure(start_rustox(), &args));
    }
    if args.only.as_deref() != Some("rustox") {
        rows.push(measure(start_ctoxcore(), &args));
    }
    let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
    println!(
        "\n{} MiB file between two UDP-off rustox nodes (rustox send/recv --no-udp --tcp-relay)",
        args.rustox_file_mib
    );
    println!("| relay | rustox file goodput Mbit/s | friend online s |");
    println!("|---|---:|---:|");
    for (name, r) in &rows {
        println!(
            "| {name} | {} | {} |",
            f(r.rustox_file_mbit, 1),
            f(r.rustox_online_s, 1)
        );
    }
    if args.switch {
        switch_table();
    }
    println!(
        "\n{} MiB file between two TCP-only c-toxcore clients; blast of {} MiB in 1400-byte \
         packets (20 s at most); {} idle connections",
        args.file_mib, args.blast_mib, args.idle
    );
    println!(
        "| relay | file goodput Mbit/s | friend online s | blast MiB/s | blast arrived | relay CPU s/GiB | idle conns held | RSS bytes/idle conn | idle conns per GiB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, r) in rows {
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
            f(r.file_mbit, 1),
            f(r.file_online_s, 1),
            f(r.blast_mib_s, 1),
            r.blast_arrived
                .map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0)),
            f(r.cpu_per_gib, 2),
            r.idle_held.map_or("-".to_string(), |h| h.to_string()),
            f(r.rss_per_conn, 0),
            f(
                r.rss_per_conn
                    .filter(|b| *b > 0.0)
                    .map(|b| (1u64 << 30) as f64 / b),
                0
            ),
        );
    }
}

/// The path switch in network namespaces (root): UDP between two rustox CLI nodes blocked,
/// then unblocked during a transfer through a rustox relay.
fn switch_table() {
    let Ok(rustox) = rustox_auto_tests::emulator::rustox_beside_current_exe() else {
        eprintln!("no rustox binary beside relay-bench: path switch skipped");
        return;
    };
    let dir = std::env::temp_dir().join(format!("relay-bench-switch-{}", std::process::id()));
    let result = rustox_auto_tests::relay_switch::run(&rustox, &dir, "b");
    let _ = std::fs::remove_dir_all(&dir);
    println!("\nPath switch (network namespaces, 30 Mbit/s links, rustox relay; UDP blocked, then unblocked during the second file)");
    println!("| relay-only file | its goodput Mbit/s | second file | its goodput Mbit/s | UDP unblocked -> session over UDP s |");
    println!("|---:|---:|---:|---:|---:|");
    match result {
        Ok(r) => println!(
            "| {} MiB | {:.1} | {} MiB | {:.1} | {:.2} |",
            r.relay_file.0 >> 20,
            r.relay_file.1,
            r.switch_file.0 >> 20,
            r.switch_file.1,
            r.switch_time.as_secs_f64()
        ),
        Err(e) => println!("| failed: {e} | | | | |"),
    }
}
