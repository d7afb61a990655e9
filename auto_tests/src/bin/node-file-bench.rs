//! `node-file-bench`: a file between two whole nodes (Messenger, friend_connection, net_crypto,
//! the file layer) on every link profile, beside the transport alone on the same profile and
//! seed, with the chat latency during the transfer. The aim: the whole node within 3 % of
//! the transport alone's efficiency, without a worse chat p95.
//!
//! ```text
//! cargo run --release -p rustox-auto-tests --bin node-file-bench -- --mib 16
//! ```
//!
//! A relayed profile (relay500) runs the whole nodes through the simulated TCP relay
//! (`relay_sim`) while "transport alone" stays one UDP link of the same shape (a net_crypto
//! pair has no relay client), so its "node ÷ transport" is the relay's cost as well as the
//! node's; a second table gives what the relay run measured.

use clap::Parser;
use rustox_auto_tests::node_transfer::{run_node_transfer_with, NodeTransferOptions};
use rustox_auto_tests::relay_sim::figures::RelayFigures;
use rustox_net_crypto::ControllerKind;
use rustox_simulator::{run_transfer, Profile, TransferSpec};

#[derive(Parser, Debug)]
#[command(about = "A file through the whole node beside the transport alone, per profile")]
struct Args {
    /// File size, MiB.
    #[arg(long, default_value_t = 16)]
    mib: u64,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Profiles, comma-separated (default: all).
    #[arg(long)]
    profiles: Option<String>,
    /// The relay's sockets run Nagle's algorithm, as c-toxcore's relay (tox-bootstrapd)
    /// leaves them (default TCP_NODELAY, as `rustox bootstrap --tcp-ports` sets them).
    #[arg(long)]
    relay_nagle: bool,
}

fn main() {
    let args = Args::parse();
    let profiles: Vec<Profile> = match &args.profiles {
        Some(list) => list
            .split(',')
            .filter_map(|n| Profile::by_name(n.trim()))
            .collect(),
        None => Profile::all(),
    };
    println!(
        "{} MiB, BBR, seed {}, exact timing (no driver model) on both sides",
        args.mib, args.seed
    );
    let mut options = NodeTransferOptions::default();
    options.relay_sockets.nagle = args.relay_nagle;
    let mut relayed: Vec<(&'static str, RelayFigures)> = Vec::new();
    println!("| profile | whole node | transport alone | node ÷ transport | same from the accept | chat p95 ms during the file | messages | verified | friend KiB idle | friend KiB peak |");
    println!("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|");
    for profile in profiles {
        let bytes = args.mib << 20;
        let node = run_node_transfer_with(&profile, args.seed, bytes, &options);
        let mut spec = TransferSpec::new(profile.clone(), ControllerKind::Bbr, args.seed, bytes);
        spec.driver = None;
        let transport = run_transfer(&spec)
            .map(|m| m.goodput_efficiency)
            .unwrap_or(0.0);
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {:.1} | {:.1} |",
            profile.name,
            node.efficiency,
            transport,
            if transport > 0.0 {
                node.efficiency / transport
            } else {
                0.0
            },
            if transport > 0.0 {
                node.efficiency_from_accept / transport
            } else {
                0.0
            },
            node.chat_p95_ms.map_or("-".into(), |p| format!("{p:.1}")),
            node.chat_messages,
            node.verified,
            node.friend_bytes_idle as f64 / 1024.0,
            node.friend_bytes_peak as f64 / 1024.0,
        );
        if let Some(r) = node.relay {
            relayed.push((profile.name, r));
        }
    }
    if relayed.is_empty() {
        return;
    }
    println!();
    println!(
        "Through the relay ({}): the session's smoothed RTT every half RTT from 4 RTTs after the accept, against the path's base RTT",
        if args.relay_nagle {
            "the relay's sockets with Nagle on, the nodes' TCP_NODELAY"
        } else {
            "TCP_NODELAY on every socket"
        }
    );
    println!("| profile | base RTT ms | srtt median ms | mean error | max error | lowest srtt ÷ base | friend online s | leg retransmits | longest hold ms | relay drops | unsent | resent | declared lost |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let pct = |x: Option<f64>| x.map_or("-".into(), |x| format!("{:.1} %", 100.0 * x));
    for (name, r) in relayed {
        println!(
            "| {name} | {:.1} | {} | {} | {} | {} | {} | {} + {} | {:.0} | {} | {} | {} | {} |",
            r.base_rtt.as_secs_f64() * 1000.0,
            r.srtt_median()
                .map_or("-".into(), |d| format!("{:.1}", d.as_secs_f64() * 1000.0)),
            pct(r.rtt_error_mean()),
            pct(r.rtt_error_max()),
            r.srtt_floor_ratio()
                .map_or("-".into(), |x| format!("{x:.3}")),
            r.online_at
                .map_or("-".into(), |t| format!("{:.1}", t.as_micros() as f64 / 1e6)),
            r.legs[0].segments_retransmitted,
            r.legs[1].segments_retransmitted,
            r.legs
                .iter()
                .map(|l| l.receiver.longest_hold.as_secs_f64() * 1000.0)
                .fold(0.0, f64::max),
            r.relay_drops(),
            r.relay_unsent.0 + r.relay_unsent.1,
            r.sender.packets_resent,
            r.sender.packets_declared_lost,
        );
    }
}
