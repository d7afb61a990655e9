//! `rustox`: the project's front door.
//!
//! Each subcommand lives in its own module; this file only parses the command line and turns
//! every error into one line on stderr and a non-zero exit (no panics, no backtraces).

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

mod addr;
mod bench;
mod bootstrap;
mod controller;
mod demo;
mod demo_conference;
mod driver;
mod keys;
mod network;
mod node_addr;
mod plot;
mod profile;
mod progress;
mod proxy_arg;
mod recv;
mod relay_args;
mod send;
mod sim;
mod size;
mod summary;
mod trace_stats;
mod wake_stats;

#[derive(Parser)]
#[command(
    name = "rustox",
    version,
    about = "A Tox-compatible messenger core: encrypted sessions and fast file transfers",
    after_help = "Start with `rustox demo`."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// A bootstrap node and two peers on loopback: a friend request by Tox ID, chat, a
    /// 64 MiB file, then friend-online time, RTT, goodput and the files' SHA-256.
    Demo(demo::Args),
    /// Receive files: print this node's address and Tox ID, accept friend requests and
    /// files, print one JSON line per file.
    Recv(recv::Args),
    /// Send a file to a Tox ID (found through --bootstrap nodes or --lan, befriended first)
    /// or directly to a `rustox recv` at HOST:PORT with --key.
    Send(send::Args),
    /// Compare congestion controllers on a simulated link profile (deterministic).
    Sim(sim::Args),
    /// Run a DHT bootstrap node.
    Bootstrap(bootstrap::Args),
    /// Create or show a Tox profile (c-toxcore's save file format).
    Profile(profile::Args),
    /// Single-core XSalsa20-Poly1305 throughput over 1400-byte packets (the ceiling for
    /// send/recv).
    #[command(hide = true)]
    BenchCrypto(bench::CryptoArgs),
    /// Loopback send → recv of one file as two processes, with CPU time per GiB and the
    /// cipher ceiling beside it.
    #[command(hide = true)]
    BenchLoopback(bench::LoopbackArgs),
}

fn main() {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => exit_on_usage_error(err),
    };
    let result: anyhow::Result<()> = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Recv(args) => recv::run(args),
        Command::Send(args) => send::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Bootstrap(args) => bootstrap::run(args),
        Command::Profile(args) => profile::run(args),
        Command::BenchCrypto(args) => bench::run_crypto(args),
        Command::BenchLoopback(args) => bench::run_loopback(args),
    };
    if let Err(err) = result {
        eprintln!("rustox: {err:#}");
        std::process::exit(1);
    }
}

/// Help and version go out as clap writes them; a usage mistake becomes one line.
fn exit_on_usage_error(err: clap::Error) -> ! {
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => err.exit(),
        _ => {
            eprintln!(
                "rustox: {} (see rustox --help)",
                one_line(&err.render().to_string())
            );
            std::process::exit(2);
        }
    }
}

/// clap's message up to its first blank line, joined into one line, without "error: ".
fn one_line(rendered: &str) -> String {
    rendered
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_owned()
}

/// A panic is a bug, but the person running rustox still gets one line, not a backtrace.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("rustox: internal error (a bug, please report it): {what}{at}");
    }));
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn clap_messages_become_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  --to <TO>\n\nUsage: rustox send --to <TO>\n";
        assert_eq!(
            one_line(rendered),
            "the following required arguments were not provided: --to <TO>"
        );
    }
}
