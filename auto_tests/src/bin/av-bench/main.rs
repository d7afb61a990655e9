//! `av-bench`: calls (ToxAV) on the named link profiles, side by side: mouth-to-ear latency
//! of audio, audio frames lost and concealed, video delivered and frozen, video bit rate
//! against the link, each with the call alone and with a 32 MiB file crossing the same
//! friend during the call.
//!
//! ```text
//! cargo build --release -p rustox-auto-tests --bin av-bench
//! target/release/av-bench --profiles wan20,wan100,vpn300 --seconds 20 --instrument sim
//! ```
//!
//! Instruments:
//! - `sim`: rustox's call engine on the deterministic stand-in codecs, two clients on one
//!   net_crypto session over the profile's link model, in simulated time
//!   (`rustox_auto_tests::av_sim`); the file runs on the same session.
//! - `real`: two processes of the call peer (`tools/toxav_peer.c`) on Debian's c-toxcore
//!   0.2.18 or on rustox's libtoxcore.so.2, in two network namespaces joined by the project's
//!   userspace link emulator with the profile's delay, rate, buffer and loss; needs root.
//!
//! Nothing is asserted: the figures are printed, with the issue's goals as pass/fail marks
//! (audio p95 within one-way delay + 60 ms alone, + 100 ms with a file; under 1 % / 2 % of
//! audio frames lost; video at 0.7 of the link after audio on a call alone).

mod real;
mod sim;
mod table;

use std::process::ExitCode;
use std::time::SystemTime;

use clap::Parser;
use rustox_auto_tests::bench::{run_parallel, worker_count};
use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::emulator::check_prerequisites;
use rustox_simulator::{utc_minute, Profile};

use table::Row;

#[derive(Parser, Debug)]
#[command(
    about = "Calls on the named link profiles: latency, loss, video, with and without a file"
)]
struct Args {
    /// Profiles (comma-separated docs/design.md names).
    #[arg(long, value_delimiter = ',', default_value = "wan20,wan100,vpn300")]
    profiles: Vec<String>,
    /// Seconds of call measured (a call alone; the most a call with a file is measured).
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Only calls with a file crossing the same friend.
    #[arg(long, conflicts_with = "alone")]
    with_file: bool,
    /// Only calls alone.
    #[arg(long)]
    alone: bool,
    /// Implementations (comma-separated): c-toxcore, rustox, mixed (real sockets only: a
    /// c-toxcore caller and a rustox callee).
    #[arg(long, value_delimiter = ',', default_value = "c-toxcore,rustox")]
    sides: Vec<String>,
    /// Instruments (comma-separated): sim, real.
    #[arg(long, value_delimiter = ',', default_value = "sim,real")]
    instrument: Vec<String>,
    /// The video the real peers send: the call peer's `video` arguments (FPS W H NOISE), or
    /// `off` for audio-only calls.
    #[arg(long, default_value = "30 320 240 30")]
    real_video: String,
    /// The video bit rate both clients start at, kbit/s.
    #[arg(long, default_value_t = 2500)]
    video_kbps: u32,
    /// The simulated clients set the bit rates the engine suggests (toxav's bit-rate
    /// callbacks) instead of keeping their own.
    #[arg(long)]
    follow_suggestions: bool,
    /// Also run the simulated calls without handing the session's bandwidth and RTT to the
    /// engine (its rates then follow the clients and the loss reports alone).
    #[arg(long)]
    no_path_too: bool,
    /// Seed of the simulator and of the emulated links' loss.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Simulator rows run on this many threads (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
}

/// A panic's message, first line only (the harness appends both peers' lines).
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into());
    text.lines().next().unwrap_or("").to_string()
}

fn main() -> ExitCode {
    let args = Args::parse();
    match real_main(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("av-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main(args: &Args) -> Result<(), String> {
    let profiles: Vec<Profile> = args
        .profiles
        .iter()
        .map(|n| Profile::by_name(n).ok_or_else(|| format!("unknown profile {n}")))
        .collect::<Result<_, _>>()?;
    let pairs: Vec<(Implementation, Implementation)> = args
        .sides
        .iter()
        .map(|s| match s.as_str() {
            "c-toxcore" => Ok((CToxcore, CToxcore)),
            "rustox" => Ok((Rustox, Rustox)),
            "mixed" => Ok((CToxcore, Rustox)),
            other => Err(format!("unknown side {other}")),
        })
        .collect::<Result<_, _>>()?;
    let modes: Vec<bool> = match (args.alone, args.with_file) {
        (true, _) => vec![false],
        (_, true) => vec![true],
        _ => vec![false, true],
    };
    let mut rows: Vec<Row> = Vec::new();
    for instrument in &args.instrument {
        match instrument.as_str() {
            "sim" => {
                if !args.sides.iter().any(|s| s == "rustox") {
                    continue;
                }
                let paths: &[bool] = if args.no_path_too {
                    &[true, false]
                } else {
                    &[true]
                };
                let mut items: Vec<(Profile, bool, bool)> = Vec::new();
                for p in &profiles {
                    for &e in paths {
                        for &m in &modes {
                            items.push((p.clone(), m, e));
                        }
                    }
                }
                eprintln!("sim: {} calls ...", items.len());
                rows.extend(run_parallel(items, worker_count(args.jobs), |(p, m, e)| {
                    sim::row(
                        &p,
                        args.seed,
                        args.seconds,
                        m,
                        args.video_kbps,
                        args.follow_suggestions,
                        e,
                    )
                }));
            }
            "real" => {
                check_prerequisites().map_err(|e| format!("real sockets: {e}"))?;
                let video = real::Video {
                    command: (args.real_video != "off").then(|| args.real_video.clone()),
                    kbps: args.video_kbps,
                };
                for p in &profiles {
                    for &pair in &pairs {
                        for &m in &modes {
                            eprintln!(
                                "real: {} {}→{} {} ...",
                                p.name,
                                pair.0.name(),
                                pair.1.name(),
                                if m { "with file" } else { "alone" }
                            );
                            rows.push(real::row(p, &video, pair, args.seed, args.seconds, m));
                        }
                    }
                }
            }
            other => return Err(format!("unknown instrument {other}")),
        }
    }
    let command: Vec<String> = std::env::args().collect();
    println!(
        "av-bench, {}: `{}`",
        utc_minute(SystemTime::now()),
        command.join(" ")
    );
    println!();
    println!(
        "Caller → callee (the file's direction); both send 64 kbit/s audio in 20 ms frames and \
         320×240 video at 30 fps starting at 2500 kbit/s (the clients keep their \
         bit rates unless --follow-suggestions; real: the peer's textured pattern). Alone: {} s measured after 2 s of call; with file: from the 32 MiB \
         file's offer until it completes (at most {} s).",
        args.seconds, args.seconds
    );
    println!();
    table::print(&rows);
    Ok(())
}
