//! `conference-bench`: how conferences deliver, in simulated time (`auto_tests/src/conference_sim`).
//!
//! ```text
//! cargo build --release -p rustox-auto-tests --bin conference-bench
//! target/release/conference-bench            # 10, 50, 200 members × lan, wan100, lossy × own loss and 5 %
//! target/release/conference-bench --quick    # 10 members, lan and lossy, 2 minutes
//! ```
//!
//! Each row is one seeded run: the members join along a chain of friends, then for
//! `--minutes` a member picked at random sends a message each second while members leave and
//! come back (`--churn` % of them per minute). The engines are rustox's, whose rules are
//! c-toxcore 0.2.18's (group.c): at these sizes no rule differs, so these are c-toxcore's
//! figures too. Columns: links each member holds at the end; messages sent; members online for each (on average, the sender
//! not counted); the share that reached every online member within
//! 30 s; (message, member) pairs missed; time until the last online member had it (p50, p95);
//! the most hops a message took (p95); the share within RTT × hops + 100 ms; wire bytes of
//! chat packets per message per member (net_crypto data packets, resends included); other
//! conference bytes per member per minute; heap per engine; how long the chain of
//! invitations took.

use std::process::ExitCode;

use clap::Parser;
use rustox_auto_tests::conference_sim::{run, Config, Report};
use rustox_simulator::{LossModel, Profile};

#[global_allocator]
static HEAP: rustox_auto_tests::heap_meter::CountingAlloc =
    rustox_auto_tests::heap_meter::CountingAlloc;

#[derive(Parser, Debug)]
#[command(
    about = "Conference delivery in simulated time: share delivered, time to all, bytes, memory"
)]
struct Args {
    /// Conference sizes.
    #[arg(long, value_delimiter = ',', default_values_t = [10usize, 50, 200])]
    peers: Vec<usize>,
    /// Link profiles (lan wan20 wan100 vpn300 lossy bursty sat600 relay500).
    #[arg(long, value_delimiter = ',', default_values_t = ["lan".to_string(), "wan100".to_string(), "lossy".to_string()])]
    profiles: Vec<String>,
    /// Random loss in percent to run each profile with besides its own ("own" for the
    /// profile's).
    #[arg(long, value_delimiter = ',', default_values_t = ["own".to_string(), "5".to_string()])]
    loss: Vec<String>,
    /// Members leaving (and coming back) per minute, percent.
    #[arg(long, default_value_t = 1.0)]
    churn: f64,
    /// Minutes of messages.
    #[arg(long, default_value_t = 10)]
    minutes: u64,
    /// The seed.
    #[arg(long, default_value_t = 24)]
    seed: u64,
    /// A small run: 10 members, lan and lossy, own loss and 5 %, 2 minutes.
    #[arg(long)]
    quick: bool,
}

fn main() -> ExitCode {
    let mut args = Args::parse();
    if args.quick {
        args.peers = vec![10];
        args.profiles = vec!["lan".into(), "lossy".into()];
        args.minutes = 2;
    }
    let mut rows = Vec::new();
    for name in &args.profiles {
        let Some(base) = Profile::by_name(name) else {
            eprintln!("conference-bench: no link profile named {name}");
            return ExitCode::FAILURE;
        };
        for loss in &args.loss {
            let profile = if loss == "own" {
                base.clone()
            } else {
                match loss.parse::<f64>() {
                    Ok(pct) if (0.0..100.0).contains(&pct) => {
                        base.clone().with_loss(LossModel::Random(pct / 100.0))
                    }
                    _ => {
                        eprintln!("conference-bench: --loss takes percents or `own`, not {loss}");
                        return ExitCode::FAILURE;
                    }
                }
            };
            for &peers in &args.peers {
                let mut cfg = Config::new(peers, profile.clone(), args.seed);
                cfg.churn_per_minute = args.churn / 100.0;
                cfg.message_phase = std::time::Duration::from_secs(args.minutes * 60);
                let report = run(&cfg);
                eprintln!("done: {peers} members on {name}, loss {loss}");
                rows.push((cfg, report));
            }
        }
    }
    println!(
        "| members | profile | RTT ms | loss % | churn %/min | links/member | messages | online/msg | reached all | missed | p50 ms | p95 ms | hops p95 | within RTT×hops+100 ms | chat B/msg/member | other B/member/min | heap/member | join s |"
    );
    println!(
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (cfg, r) in &rows {
        println!("{}", row(cfg, r));
    }
    println!(
        "\nseed {}; churn events per row: {}; send refusals: {}",
        args.seed,
        rows.iter()
            .map(|(_, r)| r.churn_events.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        rows.iter().map(|(_, r)| r.send_failures).sum::<usize>()
    );
    ExitCode::SUCCESS
}

fn row(cfg: &Config, r: &Report) -> String {
    let ms = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.0}"));
    let heap = r.heap_per_peer.map_or("–".to_string(), |h| {
        format!("{:.1} KiB", h as f64 / 1024.0)
    });
    let within = if r.reached_all == 0 {
        0.0
    } else {
        r.within_budget as f64 / r.reached_all as f64
    };
    format!(
        "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {:.1} | {:.2} % | {} | {} | {} | {} | {:.1} % | {:.0} | {:.0} | {} | {:.0} |",
        r.peers,
        cfg.profile.name,
        cfg.profile.rtt.as_secs_f64() * 1000.0,
        cfg.profile.loss.mean_loss() * 100.0,
        cfg.churn_per_minute * 100.0,
        r.links_per_peer,
        r.messages,
        r.mean_targets,
        r.delivered_share() * 100.0,
        r.missed,
        ms(r.time_to_all_quantile(0.5)),
        ms(r.time_to_all_quantile(0.95)),
        r.hops_quantile(0.95).map_or("–".to_string(), |h| h.to_string()),
        within * 100.0,
        r.bytes_per_message_per_peer(),
        r.other_bytes_per_peer_per_minute(),
        heap,
        r.join_secs,
    )
}
