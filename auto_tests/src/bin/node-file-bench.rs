//! `node-file-bench`: a file between two whole nodes (Messenger, friend_connection, net_crypto,
//! the file layer) on every link profile, beside the transport alone on the same profile and
//! seed, with the chat latency during the transfer (issue #12's "within 3 % of net_crypto-only
//! efficiency, chat p95 as today or better").
//!
//! ```text
//! cargo run --release -p rustox-auto-tests --bin node-file-bench -- --mib 16
//! ```

use clap::Parser;
use rustox_auto_tests::node_transfer::run_node_transfer;
use rustox_auto_tests::profiles::Profile;
use rustox_auto_tests::transfer::{run_transfer, TransferSpec};
use rustox_net_crypto::ControllerKind;

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
    println!("| profile | whole node | transport alone | node ÷ transport | same from the accept | chat p95 ms during the file | messages | verified | friend KiB idle | friend KiB peak |");
    println!("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|");
    for profile in profiles {
        let bytes = args.mib << 20;
        let node = run_node_transfer(&profile, args.seed, bytes);
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
    }
}
