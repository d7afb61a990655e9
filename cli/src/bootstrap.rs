//! `rustox bootstrap`: a long-running DHT bootstrap node (docs/protocol.md §5.8).
//!
//! Prints its public key, answers ping, get-nodes and bootstrap-info, serves the onion and,
//! with `--tcp-ports`, a TCP relay; logs statistics, and shuts down cleanly on
//! SIGINT/SIGTERM. The node itself is `rustox_core::bootstrap_node`;
//! this file only parses options, installs the signal handlers (before any worker thread
//! exists) and waits.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::bootstrap_node::{self, BootstrapNode, BootstrapOptions};
use rustox_core::crypto::PublicKey;
use rustox_core::dht::DhtNode;
use rustox_core::driver::tokio::dht as tokio_driver;
use rustox_core::driver::workers::UdpMode;
use rustox_core::driver::Clock;
use rustox_core::relay::server::RelayConfig;

/// Options of `rustox bootstrap`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// UDP port.
    #[arg(long, default_value_t = 33445)]
    port: u16,
    /// Address to listen on ("::" = IPv6 and IPv4).
    #[arg(long, default_value = "::")]
    bind: IpAddr,
    /// Worker threads, each with its own socket.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Key file (created if missing; same format as tox-bootstrapd's).
    #[arg(long, default_value = "rustox-bootstrap.keys")]
    keys: PathBuf,
    /// Message of the day sent in bootstrap-info replies.
    #[arg(long, default_value = "rustox bootstrap node")]
    motd: String,
    /// Per-source datagram rate limit (per second); 0 disables it (load tests only).
    #[arg(long, default_value_t = 32.0)]
    rate_limit: f64,
    /// UDP path: "reuseport" (socket per worker), "shared" (one socket), "tokio" (one async task).
    #[arg(long, default_value = "reuseport")]
    udp: String,
    /// Answer and send LAN discovery.
    #[arg(long)]
    lan_discovery: bool,
    /// Seconds between statistics lines.
    #[arg(long, default_value_t = 60)]
    stats_interval: u64,
    /// Bootstrap from another node: HOST:PORT:PUBLIC_KEY_HEX (repeatable).
    #[arg(long = "node")]
    nodes: Vec<String>,
    /// Serve a TCP relay on these ports (comma-separated, e.g. 33445,3389,443), as
    /// tox-bootstrapd's `tcp_relay_ports`. None by default.
    #[arg(long, value_delimiter = ',')]
    tcp_ports: Vec<u16>,
    /// TCP relay: connections at most from one IPv4 address or IPv6 /64.
    #[arg(long, default_value_t = RelayConfig::default().max_per_ip)]
    tcp_max_per_ip: usize,
    /// TCP relay: connections at most in all.
    #[arg(long, default_value_t = RelayConfig::default().max_connections)]
    tcp_max_connections: usize,
}

fn parse_node(s: &str) -> anyhow::Result<(SocketAddr, PublicKey)> {
    let (addr, key) = s.rsplit_once(':').context("expected HOST:PORT:KEY")?;
    let addr: SocketAddr = addr
        .parse()
        .with_context(|| format!("bad address {addr}"))?;
    let pk = PublicKey::from_hex(key).context("bad public key")?;
    Ok((addr, pk))
}

/// Runs the node until SIGINT or SIGTERM.
pub fn run(args: Args) -> anyhow::Result<()> {
    let opts = BootstrapOptions {
        ip: args.bind,
        port: args.port,
        workers: args.workers.max(1),
        mode: if args.udp == "shared" {
            UdpMode::Shared
        } else {
            UdpMode::ReusePort
        },
        keys: args.keys.clone(),
        motd: args.motd.clone(),
        rate: (args.rate_limit > 0.0).then_some(args.rate_limit),
        lan_discovery: args.lan_discovery,
        bootstrap: args
            .nodes
            .iter()
            .map(|s| parse_node(s))
            .collect::<anyhow::Result<_>>()?,
        tcp_ports: args.tcp_ports.clone(),
        relay: RelayConfig {
            max_per_ip: args.tcp_max_per_ip,
            max_connections: args.tcp_max_connections,
            ..RelayConfig::default()
        },
    };
    if args.udp == "tokio" && !opts.tcp_ports.is_empty() {
        anyhow::bail!("--tcp-ports needs the worker UDP path (--udp reuseport or shared)");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        // Signal handlers first, before any thread exists.
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        // State before listeners: the key file is read or created here.
        let (keys, created) = bootstrap_node::load_keys(&opts)?;
        let interval = Duration::from_secs(args.stats_interval.max(1));
        println!("{}", keys.public.to_hex());
        eprintln!(
            "rustox bootstrap: {} key from {}, listening on {} ({} worker(s), {})",
            if created { "new" } else { "loaded" },
            opts.keys.display(),
            SocketAddr::new(opts.ip, opts.port),
            opts.workers,
            args.udp
        );
        if args.udp == "tokio" {
            let socket =
                rustox_core::driver::socket::bind_udp(SocketAddr::new(opts.ip, opts.port), false)?;
            socket.set_nonblocking(true)?;
            let socket = tokio::net::UdpSocket::from_std(socket)?;
            let clock = Clock::default();
            let mut rng = StdRng::from_entropy();
            let mut node = DhtNode::new(
                keys,
                bootstrap_node::dht_config(&opts),
                clock.now(),
                &mut rng,
            );
            for (addr, pk) in &opts.bootstrap {
                node.bootstrap(clock.now(), *addr, *pk, &mut rng);
            }
            let mut last = std::time::Instant::now();
            let mut on_tick =
                |n: &DhtNode, now| {
                    if last.elapsed() >= interval {
                        last = std::time::Instant::now();
                        let (g, d) = (n.gate_stats(), n.stats());
                        eprintln!(
                        "close_nodes={} in={} out={} pings={} get_nodes={} info={} rate_limited={}",
                        n.close_list().good_count(now), g.datagrams_in, g.datagrams_out,
                        d.pings_answered, d.nodes_answered, d.info_answered, g.rate_limited
                    );
                    }
                };
            let shutdown = async {
                tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
            };
            tokio_driver::run(&mut node, &socket, clock, &mut rng, shutdown, &mut on_tick).await?;
            eprintln!("rustox bootstrap: shut down");
            return Ok(());
        }
        let mut node = BootstrapNode::start(keys, &opts)?;
        let tcp = node.runner().tcp_addrs();
        if !tcp.is_empty() {
            let list: Vec<String> = tcp.iter().map(|a| a.to_string()).collect();
            eprintln!("rustox bootstrap: TCP relay on {}", list.join(", "));
        }
        let mut ticker = tokio::time::interval(interval);
        ticker.tick().await;
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = ticker.tick() => eprintln!("{}", node.stats_line()),
            }
        }
        eprintln!("{}", node.stats_line());
        node.shutdown();
        eprintln!("rustox bootstrap: shut down");
        Ok(())
    })
}
