//! `rustox`: the project's front door.
//!
//! Each subcommand lives in its own module; this file only parses the command line and turns
//! every error into one line on stderr and a non-zero exit (no panics, no backtraces).

use clap::{Parser, Subcommand};

mod bootstrap;

#[derive(Parser)]
#[command(name = "rustox", version, about = "A Tox-compatible messenger core")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a DHT bootstrap node.
    Bootstrap(bootstrap::Args),
}

fn main() {
    let cli = Cli::parse();
    let result: anyhow::Result<()> = match cli.command {
        Command::Bootstrap(args) => bootstrap::run(args),
    };
    if let Err(err) = result {
        eprintln!("rustox: {err:#}");
        std::process::exit(1);
    }
}
