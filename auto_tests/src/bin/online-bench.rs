//! `online-bench`: how long two Tox peers take to become online friends through one
//! bootstrap node, in the simulator and on real loopback sockets.
//!
//! ```text
//! cargo build --release -p rustox-auto-tests --bin online-bench
//! target/release/online-bench sim --runs 100          # every profile, p50/p95
//! target/release/online-bench real --runs 5           # rustox and c-toxcore 0.2.18 pairs
//! ```
//!
//! `sim` runs whole `Node`s (a bootstrap node, Alice, Bob) on each link profile; Alice sends
//! a friend request to Bob's Tox ID and Bob accepts. `real` runs the same on loopback with
//! every pairing of rustox (an in-process `Node` on the tokio driver) and c-toxcore (Debian's
//! libtoxcore, `tools/toxfriend.c`), through a rustox bootstrap node and a c-toxcore one.
//! Times are from the start of the pair (the acceptor starts, then the requester at once) to
//! each side's first friend-online callback.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use rustox_auto_tests::ctoxcore::friend::{CPeer, CPeerOptions, PeerLog};
use rustox_auto_tests::ctoxcore::{BuildOptions, PeerBinary};
use rustox_auto_tests::friend_online::{run_friend_online, Friendship, OnlineOptions};
use rustox_auto_tests::live::{rustox_bootstrap, RustoxOptions, RustoxPeer};
use rustox_core::friend::ToxId;
use rustox_net_crypto::crypto::PublicKey;
use rustox_simulator::Profile;

#[derive(Parser, Debug)]
#[command(about = "Time for two Tox peers to become online friends")]
struct Args {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// The simulator: every profile, many seeds.
    Sim {
        /// Runs (seeds) per profile.
        #[arg(long, default_value_t = 100)]
        runs: u64,
        /// Profiles, comma-separated (default: all).
        #[arg(long)]
        profiles: Option<String>,
        /// Both add each other by key instead of request-and-accept.
        #[arg(long)]
        mutual: bool,
    },
    /// Real loopback sockets: rustox and c-toxcore in every pairing.
    Real {
        /// Runs per pairing.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Give up on a run after this many seconds.
        #[arg(long, default_value_t = 60)]
        limit: u64,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.mode {
        Mode::Sim {
            runs,
            profiles,
            mutual,
        } => run_sim(runs, profiles.as_deref(), mutual),
        Mode::Real { runs, limit } => run_real(runs, Duration::from_secs(limit)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("online-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The value below which a fraction `q` of the sorted `xs` lie.
fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let i = ((xs.len() as f64 - 1.0) * q).round() as usize;
    xs[i.min(xs.len() - 1)]
}

fn run_sim(runs: u64, profiles: Option<&str>, mutual: bool) -> Result<(), String> {
    let profiles: Vec<Profile> = match profiles {
        None => Profile::all(),
        Some(list) => list
            .split(',')
            .map(|n| Profile::by_name(n.trim()).ok_or_else(|| format!("no profile {n:?}")))
            .collect::<Result<_, _>>()?,
    };
    let friendship = if mutual {
        Friendship::Mutual
    } else {
        Friendship::Request
    };
    println!("friend online through one bootstrap node, simulator, {friendship:?}, {runs} seeds per profile");
    println!(
        "| profile | RTT | online | p50 s | p95 s | max s | goal s (1 s + 6 RTT) | datagrams p50 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for profile in profiles {
        let mut times = Vec::new();
        let mut datagrams = Vec::new();
        for seed in 1..=runs {
            let mut options = OnlineOptions::new(profile.clone(), seed);
            options.friendship = friendship;
            let report = run_friend_online(&options);
            if let Some(t) = report.both_online() {
                times.push(t.as_secs_f64());
                datagrams.push(report.datagrams as f64);
            }
        }
        times.sort_by(f64::total_cmp);
        datagrams.sort_by(f64::total_cmp);
        let goal = 1.0 + 6.0 * profile.rtt.as_secs_f64();
        println!(
            "| {} | {} ms | {}/{} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} |",
            profile.name,
            profile.rtt.as_millis(),
            times.len(),
            runs,
            quantile(&times, 0.5),
            quantile(&times, 0.95),
            times.last().copied().unwrap_or(f64::NAN),
            goal,
            quantile(&datagrams, 0.5),
        );
    }
    Ok(())
}

/// Which implementation a peer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Rustox,
    CToxcore,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Rustox => "rustox",
            Side::CToxcore => "c-toxcore",
        }
    }
}

/// A running peer of either kind.
enum Peer {
    Rustox(RustoxPeer),
    C(CPeer),
}

impl Peer {
    fn log(&self) -> &PeerLog {
        match self {
            Peer::Rustox(p) => &p.log,
            Peer::C(p) => &p.log,
        }
    }
}

/// A running bootstrap node of either kind; dropping it stops it.
enum Boot {
    Rustox(rustox_core::driver::workers::NodeRunner),
    C(CPeer),
}

impl Boot {
    fn spec(&self) -> (SocketAddr, PublicKey) {
        match self {
            Boot::Rustox(r) => (r.local_addr(), r.public_key()),
            Boot::C(c) => (c.addr(), c.dht_pk),
        }
    }
}

fn start_boot(side: Side, bin: &PeerBinary) -> Result<Boot, String> {
    Ok(match side {
        Side::Rustox => {
            Boot::Rustox(rustox_bootstrap(0).map_err(|e| format!("rustox bootstrap node: {e}"))?)
        }
        Side::CToxcore => {
            Boot::C(CPeer::start(bin.path(), &CPeerOptions::default()).map_err(|e| e.to_string())?)
        }
    })
}

/// Starts a peer of `side` through `boot`: one that sends a friend request to `request`,
/// or without one, one that accepts the requests it gets.
fn start_peer(
    bin: &PeerBinary,
    side: Side,
    boot: (SocketAddr, PublicKey),
    request: Option<ToxId>,
) -> Result<Peer, String> {
    let accept = request.is_none();
    Ok(match side {
        Side::Rustox => Peer::Rustox(
            RustoxPeer::start(RustoxOptions {
                bootstrap: vec![boot],
                request,
                accept,
                ..RustoxOptions::default()
            })
            .map_err(|e| e.to_string())?,
        ),
        Side::CToxcore => Peer::C(
            CPeer::start(
                bin.path(),
                &CPeerOptions {
                    bootstrap: vec![boot],
                    request,
                    accept,
                    ..CPeerOptions::default()
                },
            )
            .map_err(|e| e.to_string())?,
        ),
    })
}

/// One pair: the acceptor starts, then the requester sends it a friend request. Returns
/// the seconds until each saw the other online, from the acceptor's start.
fn run_pair(
    bin: &PeerBinary,
    boot: (SocketAddr, PublicKey),
    requester: Side,
    acceptor: Side,
    limit: Duration,
) -> Result<Option<(f64, f64)>, String> {
    let t0 = Instant::now();
    let acc = start_peer(bin, acceptor, boot, None)?;
    let id = match &acc {
        Peer::Rustox(p) => p.tox_id,
        Peer::C(p) => p.tox_id,
    };
    let offset = t0.elapsed().as_secs_f64();
    let req = start_peer(bin, requester, boot, Some(id))?;
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if let (Some(a), Some(r)) = (acc.log().friend_online(), req.log().friend_online()) {
            return Ok(Some((a, r + offset)));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(None)
}

fn run_real(runs: usize, limit: Duration) -> Result<(), String> {
    let bin = PeerBinary::build_friend(&BuildOptions::default()).map_err(|e| e.to_string())?;
    println!("friend online on loopback through one bootstrap node, {runs} runs per pairing");
    println!("(seconds from the acceptor's start; the requester starts right after it)");
    println!("| bootstrap | requester → acceptor | online | both p50 | both max | acceptor p50 | requester p50 |");
    println!("|---|---|---|---|---|---|---|");
    let sides = [Side::Rustox, Side::CToxcore];
    for boot_side in sides {
        for requester in sides {
            for acceptor in sides {
                let (mut both, mut acc, mut req) = (Vec::new(), Vec::new(), Vec::new());
                for _ in 0..runs {
                    let boot = start_boot(boot_side, &bin)?;
                    if let Some((a, r)) = run_pair(&bin, boot.spec(), requester, acceptor, limit)? {
                        both.push(a.max(r));
                        acc.push(a);
                        req.push(r);
                    }
                }
                for v in [&mut both, &mut acc, &mut req] {
                    v.sort_by(f64::total_cmp);
                }
                println!(
                    "| {} | {} → {} | {}/{} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    boot_side.name(),
                    requester.name(),
                    acceptor.name(),
                    both.len(),
                    runs,
                    quantile(&both, 0.5),
                    both.last().copied().unwrap_or(f64::NAN),
                    quantile(&acc, 0.5),
                    quantile(&req, 0.5),
                );
            }
        }
    }
    Ok(())
}
