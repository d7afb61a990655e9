//! `dht-load`: load a DHT node with get-nodes requests on loopback and report answered
//! requests per second and the node's CPU time per request.
//!
//! The generator prebuilds one get-nodes packet per source key (many keys, so the node pays a
//! key agreement whenever its shared-key cache misses, as a public bootstrap node does) and
//! sends them round-robin from 16 sockets on distinct loopback addresses (127.0.1.x), keeping
//! a bounded window of unanswered requests. It never decrypts replies: it counts send-nodes
//! datagrams (kind 0x04) so that its own CPU stays small beside the node's.
//!
//! Modes:
//! * default: starts `rustox bootstrap` (the binary next to this one) with 1 and 2 workers in
//!   each UDP layout, and Debian's `tox-bootstrapd` if installed, and prints one table;
//! * `--target HOST:PORT --key HEX [--pid PID]`: loads any running node.
//!
//! `--isolate` re-runs everything inside a new network namespace that has only `lo`, so
//! tox-bootstrapd (which has no bind-address option) is reachable on loopback only.
//!
//! CPU per request = (utime + stime of the node's process, from /proc/PID/stat) / answered.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::dht::wire::dht_packet::{DhtMessage, Envelope};
use rustox_core::dht::wire::nodes::NodesRequest;
use rustox_core::dht::wire::ping::Ping;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, PublicKey};
use rustox_testkit::bootstrapd;

#[derive(Parser, Debug)]
#[command(about = "Load a DHT node with get-nodes requests and measure it")]
struct Args {
    /// Node to load (HOST:PORT); without it, rustox and tox-bootstrapd are started here.
    #[arg(long)]
    target: Option<SocketAddr>,
    /// The target's DHT public key (hex).
    #[arg(long)]
    key: Option<String>,
    /// The target's process id, for its CPU time.
    #[arg(long)]
    pid: Option<u32>,
    /// Distinct source keys.
    #[arg(long, default_value_t = 10_000)]
    keys: usize,
    /// Seconds measured per row (after 1 s of warm-up).
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Seconds of warm-up before measuring (pings from the node are answered meanwhile, so
    /// its table fills with our keys and its answers carry nodes).
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    /// Unanswered requests allowed in flight.
    #[arg(long, default_value_t = 256)]
    window: usize,
    /// Run inside a fresh network namespace with only loopback.
    #[arg(long)]
    isolate: bool,
    /// Skip tox-bootstrapd.
    #[arg(long)]
    no_c: bool,
    /// Rows to run, comma-separated: reuseport1, reuseport2, shared2, tokio1, c (default: all).
    #[arg(long)]
    rows: Option<String>,
    /// Instead of loading: start `rustox bootstrap --workers 2` idle for this many seconds
    /// and report its threads' context switches (how often idle workers wake).
    #[arg(long)]
    idle: Option<u64>,
    /// Runs of every row (rows interleaved); the table shows medians.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
}

/// One measured row.
struct Row {
    name: String,
    sent: u64,
    answered: u64,
    secs: f64,
    cpu: Option<Duration>,
    nodes_per_answer: f64,
}

fn main() {
    let args = Args::parse();
    if args.isolate && std::env::var_os("DHT_LOAD_IN_NETNS").is_none() {
        let me = std::env::current_exe().expect("own path");
        let rest: Vec<String> = std::env::args().skip(1).collect();
        let status = Command::new("unshare")
            .arg("-n")
            .arg(me)
            .args(rest)
            .env("DHT_LOAD_IN_NETNS", "1")
            .status()
            .expect("unshare -n (needs root)");
        std::process::exit(status.code().unwrap_or(1));
    }
    if std::env::var_os("DHT_LOAD_IN_NETNS").is_some() {
        let _ = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status();
    }
    if let Some(secs) = args.idle {
        idle_wakeups(secs);
        return;
    }
    let wanted = |row: &str| {
        args.rows
            .as_deref()
            .map(|r| r.split(',').any(|x| x.trim() == row))
            .unwrap_or(true)
    };
    let mut rows = Vec::new();
    if let Some(target) = args.target {
        let pk = PublicKey::from_hex(args.key.as_deref().unwrap_or(""))
            .expect("--key HEX is required with --target");
        rows.push(load(&args, "target", target, pk, args.pid));
    } else {
        let rustox = sibling("rustox");
        let configs: &[(&str, usize)] = &[
            ("reuseport", 1),
            ("reuseport", 2),
            ("shared", 2),
            ("tokio", 1),
        ];
        for _ in 0..args.repeat.max(1) {
            for (i, (mode, workers)) in configs.iter().enumerate() {
                if !wanted(&format!("{mode}{workers}")) {
                    continue;
                }
                let port = 37000 + i as u16;
                let (mut child, pk) = start_rustox(&rustox, port, mode, *workers);
                let name = format!("rustox {mode} workers={workers}");
                rows.push(load(
                    &args,
                    &name,
                    SocketAddr::from(([127, 0, 0, 1], port)),
                    pk,
                    Some(child.id()),
                ));
                stop(&mut child);
            }
            if !args.no_c && wanted("c") {
                match start_tox_bootstrapd(37100) {
                    Some((mut child, pk)) => {
                        rows.push(load(
                            &args,
                            "tox-bootstrapd 0.2.18",
                            SocketAddr::from(([127, 0, 0, 1], 37100)),
                            pk,
                            Some(child.id()),
                        ));
                        stop(&mut child);
                    }
                    None => eprintln!(
                        "tox-bootstrapd not found (apt-get install toxcore-utils); row skipped"
                    ),
                }
            }
        }
    }
    let rows = medians(rows);
    println!();
    println!(
        "get-nodes load, {} source keys, window {}, {} s per row, {} CPUs",
        args.keys,
        args.window,
        args.seconds,
        num_cpus()
    );
    println!("| node | sent/s | answered/s | answered % | nodes/answer | node CPU µs/request |");
    println!("|------|-------:|-----------:|-----------:|-------------:|--------------------:|");
    for r in &rows {
        let cpu = r
            .cpu
            .map(|c| format!("{:.1}", c.as_secs_f64() * 1e6 / r.answered.max(1) as f64))
            .unwrap_or_else(|| "n/a".into());
        println!(
            "| {} | {:.0} | {:.0} | {:.1} | {:.2} | {} |",
            r.name,
            r.sent as f64 / r.secs,
            r.answered as f64 / r.secs,
            100.0 * r.answered as f64 / r.sent.max(1) as f64,
            r.nodes_per_answer,
            cpu
        );
    }
}

/// One row per name: the run with the median answered rate, CPU per request the median too.
fn medians(rows: Vec<Row>) -> Vec<Row> {
    let mut names: Vec<String> = Vec::new();
    for r in &rows {
        if !names.contains(&r.name) {
            names.push(r.name.clone());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut runs: Vec<&Row> = rows.iter().filter(|r| r.name == name).collect();
            runs.sort_by(|a, b| {
                (a.answered as f64 / a.secs).total_cmp(&(b.answered as f64 / b.secs))
            });
            let mid = runs[runs.len() / 2];
            let mut per_req: Vec<Duration> = runs
                .iter()
                .filter_map(|r| r.cpu.map(|c| c / r.answered.max(1) as u32))
                .collect();
            per_req.sort();
            let cpu = per_req
                .get(per_req.len() / 2)
                .map(|d| *d * mid.answered.max(1) as u32);
            Row {
                name: format!("{name} (n={})", runs.len()),
                sent: mid.sent,
                answered: mid.answered,
                secs: mid.secs,
                cpu,
                nodes_per_answer: mid.nodes_per_answer,
            }
        })
        .collect()
}

/// Context switches of every thread of an idle `rustox bootstrap --workers 2` over `secs`.
fn idle_wakeups(secs: u64) {
    let rustox = sibling("rustox");
    let (mut child, _) = start_rustox(&rustox, 37200, "reuseport", 2);
    let count = |pid: u32| -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            let name = status
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("Name:")
                .trim()
                .to_string();
            let switches: u64 = status
                .lines()
                .filter(|l| l.contains("ctxt_switches"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
            out.push((name, switches));
        }
        out.sort();
        out
    };
    let before = count(child.id());
    std::thread::sleep(Duration::from_secs(secs));
    let after = count(child.id());
    stop(&mut child);
    println!("| thread | context switches in {secs} s idle |");
    println!("|--------|------:|");
    for ((name, a), (_, b)) in before.iter().zip(after.iter()) {
        println!("| {name} | {} |", b.saturating_sub(*a));
    }
}

fn num_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn sibling(name: &str) -> PathBuf {
    let me = std::env::current_exe().expect("own path");
    let path = me.with_file_name(name);
    if !path.exists() {
        eprintln!(
            "{} not found: build it with `cargo build --release -p rustox`",
            path.display()
        );
        std::process::exit(2);
    }
    path
}

fn start_rustox(bin: &Path, port: u16, mode: &str, workers: usize) -> (Child, PublicKey) {
    let dir = std::env::temp_dir().join(format!("dht-load-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(bin)
        .args([
            "bootstrap",
            "--bind",
            "127.0.0.1",
            "--rate-limit",
            "0",
            "--stats-interval",
            "3600",
        ])
        .args([
            "--port",
            &port.to_string(),
            "--workers",
            &workers.to_string(),
            "--udp",
            mode,
        ])
        .arg("--keys")
        .arg(dir.join("keys"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rustox bootstrap");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let pk = PublicKey::from_hex(line.trim()).expect("rustox prints its key first");
    std::thread::sleep(Duration::from_millis(300));
    (child, pk)
}

fn start_tox_bootstrapd(port: u16) -> Option<(Child, PublicKey)> {
    let dir = std::env::temp_dir().join(format!("dht-load-tbd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let keys = dir.join("keys");
    let conf = bootstrapd::Config {
        motd: Some("tox-bootstrapd".into()),
        ..bootstrapd::Config::udp(port)
    }
    .write(&dir)
    .ok()?;
    let child = Command::new(bootstrapd::PROGRAM)
        .args(bootstrapd::args(&conf))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // The keys file is [public key 32][secret key 32]; it appears once the daemon is up.
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if let Ok(bytes) = std::fs::read(&keys) {
            if bytes.len() == 64 {
                std::thread::sleep(Duration::from_millis(300));
                return Some((child, PublicKey::from_slice(&bytes)?));
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

/// utime + stime of a process.
fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(Duration::from_millis(ticks * 10))
}

fn load(args: &Args, name: &str, target: SocketAddr, pk: PublicKey, pid: Option<u32>) -> Row {
    const SOCKETS: usize = 16;
    let mut rng = StdRng::seed_from_u64(1);
    let mut keys: Vec<(PublicKey, PrecomputedKey)> = Vec::with_capacity(args.keys);
    let packets: Vec<Vec<u8>> = (0..args.keys)
        .map(|i| {
            let kp = KeyPair::generate(&mut rng);
            let key =
                PrecomputedKey::new(&pk, &kp.secret).expect("generated keys have large order");
            let msg = DhtMessage::NodesRequest(NodesRequest {
                searched: kp.public,
                sendback: i as u64,
            });
            let bytes = msg.seal(&kp.public, &key, &Nonce::random(&mut rng));
            keys.push((kp.public, key));
            bytes
        })
        .collect();
    let sockets: Vec<UdpSocket> = (0..SOCKETS as u8)
        .map(|i| {
            let ip = if target.ip().is_loopback() {
                IpAddr::V4(Ipv4Addr::new(127, 0, 1, i + 1))
            } else {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            };
            let s = UdpSocket::bind(SocketAddr::new(ip, 0)).expect("bind generator socket");
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let mut buf = [0u8; 2048];
    let mut node_bytes = 0u64;
    // (pings received, pings answered, other datagrams)
    let mut pings = (0u64, 0u64, 0u64);
    // Packet (= key) p always leaves from socket p % 16, so a ping the node sends back to a
    // key arrives on that socket and is answered by trying that socket's keys: the node
    // then adds our keys to its table, and its answers carry real node lists.
    let mut run = |dur: Duration, node_bytes: &mut u64| -> (u64, u64, f64) {
        let (mut sent, mut answered, mut inflight) = (0u64, 0u64, 0usize);
        let mut next = 0usize;
        let start = Instant::now();
        let mut last_progress = Instant::now();
        while start.elapsed() < dur {
            while inflight < args.window {
                let p = next % packets.len();
                if sockets[p % SOCKETS].send_to(&packets[p], target).is_err() {
                    break;
                }
                next += 1;
                sent += 1;
                inflight += 1;
            }
            let mut got = 0;
            for (si, s) in sockets.iter().enumerate() {
                while let Ok((n, from)) = s.recv_from(&mut buf) {
                    if n >= 82 && buf[0] == 0x04 {
                        got += 1;
                        *node_bytes += (n - 82) as u64;
                    } else if n == 82 && buf[0] == 0x00 {
                        let ok = answer_ping(&buf[..n], si, SOCKETS, &keys, s, from, &mut rng);
                        pings.0 += 1;
                        pings.1 += u64::from(ok);
                    } else {
                        pings.2 += 1;
                    }
                }
            }
            if got > 0 {
                answered += got;
                inflight = inflight.saturating_sub(got as usize);
                last_progress = Instant::now();
            } else if last_progress.elapsed() > Duration::from_millis(20) {
                // Requests were dropped somewhere: stop waiting for them.
                inflight = 0;
                last_progress = Instant::now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        (sent, answered, start.elapsed().as_secs_f64())
    };
    run(Duration::from_secs(args.warmup), &mut node_bytes);
    node_bytes = 0;
    let cpu0 = pid.and_then(process_cpu);
    let (sent, answered, secs) = run(Duration::from_secs(args.seconds), &mut node_bytes);
    let cpu = match (cpu0, pid.and_then(process_cpu)) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    // Packed IPv4 nodes are 39 bytes each.
    let nodes_per_answer = node_bytes as f64 / 39.0 / answered.max(1) as f64;
    eprintln!("{name}: sent {sent}, answered {answered} in {secs:.1} s, {nodes_per_answer:.2} nodes per answer; pings from the node received/answered {}/{}, other datagrams {}", pings.0, pings.1, pings.2);
    Row {
        name: name.to_string(),
        sent,
        answered,
        secs,
        cpu,
        nodes_per_answer,
    }
}

/// Answers a ping the node sent to one of our keys (tried among the keys of socket `si`).
fn answer_ping(
    bytes: &[u8],
    si: usize,
    sockets: usize,
    keys: &[(PublicKey, PrecomputedKey)],
    socket: &UdpSocket,
    from: SocketAddr,
    rng: &mut StdRng,
) -> bool {
    let Ok(env) = Envelope::parse(bytes) else {
        return false;
    };
    for (pk, key) in keys.iter().skip(si).step_by(sockets) {
        if let Ok(DhtMessage::Ping(p)) = env.open(key) {
            let reply = DhtMessage::Ping(Ping {
                response: true,
                id: p.id,
            });
            let _ = socket.send_to(&reply.seal(pk, key, &Nonce::random(rng)), from);
            return true;
        }
    }
    false
}
