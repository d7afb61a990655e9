//! `rustox sim`: the deterministic simulator (rustox-simulator) from the command line. One
//! transfer per controller over a named link profile, the same seed for each, printed as a
//! comparison table; with `--plot`, cumulative MiB delivered over time as an SVG.
//!
//! Figures are virtual-time measurements: a row replays bit for bit from its seed on any
//! machine. Only the CPU column depends on the machine.

use std::path::PathBuf;

use anyhow::Context;
use rustox_core::transport::{ControllerKind, Timestamp};
use rustox_simulator::{
    controller_name, deadline_for, run_transfer, setup_pair, Profile, SimError, TransferMetrics,
    TransferSpec,
};

use crate::controller::parse_controller;
use crate::plot::{plot_cumulative, Curve};
use crate::size::parse_size;

/// Options of `rustox sim`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Link profile: lan, wan20, wan100, vpn300, lossy, bursty, sat600, relay500.
    #[arg(long, value_parser = parse_profile)]
    profile: Profile,
    /// Bytes to transfer.
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    size: u64,
    /// Controllers to compare (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "bbr,cubic,legacy", value_parser = parse_controller)]
    controller: Vec<ControllerKind>,
    /// Seed of the run (links, loss, keys): the same seed replays the same run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Draw cumulative MiB over time, one curve per controller, into this SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// One JSON object per controller instead of the table.
    #[arg(long)]
    json: bool,
}

/// The profile with this name; the error text is what clap shows after "invalid value".
fn parse_profile(name: &str) -> Result<Profile, String> {
    Profile::by_name(name.trim()).ok_or_else(|| {
        let names: Vec<&str> = Profile::all().iter().map(|p| p.name).collect();
        format!(
            "unknown profile {name:?} (choose one of {})",
            names.join(", ")
        )
    })
}

/// One controller's outcome.
struct Outcome {
    metrics: TransferMetrics,
    curve: Option<Curve>,
}

/// Runs `rustox sim`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut controllers = args.controller.clone();
    controllers.dedup();
    eprintln!(
        "simulating {} of {} over {} (RTT {} ms, {} Mbit/s, seed {}) ...",
        crate::demo::human_bytes(args.size),
        controllers
            .iter()
            .map(|c| controller_name(*c))
            .collect::<Vec<_>>()
            .join(", "),
        args.profile.name,
        args.profile.rtt.as_micros() as f64 / 1e3,
        args.profile.rate_bps as f64 / 1e6,
        args.seed
    );
    // One thread per controller: each run is independent and single-threaded.
    let outcomes: Vec<anyhow::Result<Outcome>> = std::thread::scope(|scope| {
        let handles: Vec<_> = controllers
            .iter()
            .map(|&controller| {
                let spec =
                    TransferSpec::new(args.profile.clone(), controller, args.seed, args.size);
                let want_curve = args.plot.is_some();
                scope.spawn(move || simulate(&spec, want_curve))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a simulation thread failed")))
            })
            .collect()
    });
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect::<anyhow::Result<_>>()?;
    if args.json {
        for o in &outcomes {
            println!("{}", serde_json::to_string(&o.metrics)?);
        }
    } else {
        print_table(&args.profile, &outcomes);
    }
    if let Some(path) = &args.plot {
        let curves: Vec<Curve> = outcomes.iter().filter_map(|o| o.curve.clone()).collect();
        let title = format!(
            "{}: {} over {} ms RTT, {} Mbit/s (seed {})",
            args.profile.name,
            crate::demo::human_bytes(args.size),
            args.profile.rtt.as_micros() as f64 / 1e3,
            args.profile.rate_bps as f64 / 1e6,
            args.seed
        );
        plot_cumulative(path, &title, &curves)
            .with_context(|| format!("cannot draw {}", path.display()))?;
        eprintln!("plot written to {}", path.display());
    }
    Ok(())
}

/// Measures one transfer and, if asked, replays it (same seed, same run) to record the
/// receiver's cumulative deliveries for the plot.
fn simulate(spec: &TransferSpec, want_curve: bool) -> anyhow::Result<Outcome> {
    let metrics = run_transfer(spec).map_err(sim_error)?;
    let curve = if want_curve {
        Some(delivery_curve(spec)?)
    } else {
        None
    };
    Ok(Outcome { metrics, curve })
}

/// Cumulative MiB delivered against seconds since the first data packet.
fn delivery_curve(spec: &TransferSpec) -> anyhow::Result<Curve> {
    let mut pair = setup_pair(spec).map_err(sim_error)?;
    let b = pair.b;
    pair.sim
        .run_while(deadline_for(&spec.profile, spec.bytes), |sim| {
            !sim.node(b)
                .incoming()
                .first()
                .is_some_and(|t| t.receiver.is_complete())
        })
        .map_err(sim_error)?;
    let start = pair
        .sim
        .node(pair.a)
        .outgoing()
        .first()
        .and_then(|t| t.sender.first_send())
        .unwrap_or(Timestamp::ZERO);
    let points = pair
        .sim
        .node(b)
        .incoming()
        .first()
        .map(|t| {
            t.receiver
                .deliveries()
                .iter()
                .map(|&(at, bytes)| {
                    (
                        at.saturating_duration_since(start).as_secs_f64(),
                        bytes as f64 / 1048576.0,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Curve {
        label: controller_name(spec.controller).to_owned(),
        points,
    })
}

fn sim_error(e: SimError) -> anyhow::Error {
    anyhow::anyhow!("simulation failed: {e}")
}

fn opt(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{:.*}", digits, x * scale))
}

fn print_table(profile: &Profile, outcomes: &[Outcome]) {
    println!(
        "profile {}: RTT {} ms, bottleneck {} Mbit/s, loss {:?}",
        profile.name,
        profile.rtt.as_micros() as f64 / 1e3,
        profile.rate_bps as f64 / 1e6,
        profile.loss
    );
    println!(
        "{:<8} {:>5} {:>9} {:>9} {:>6} {:>8} {:>8} {:>9} {:>8} {:>8} {:>7}",
        "ctrl",
        "done",
        "time s",
        "Mbit/s",
        "eff %",
        "ramp RTT",
        "resent",
        "resent/lost",
        "RTT err%",
        "queue95",
        "cpu s"
    );
    for o in outcomes {
        let m = &o.metrics;
        let mbit = if m.transfer_time_s > 0.0 {
            m.bytes_delivered as f64 * 8.0 / m.transfer_time_s / 1e6
        } else {
            0.0
        };
        println!(
            "{:<8} {:>5} {:>9.1} {:>9.2} {:>6.1} {:>8} {:>8} {:>11} {:>8} {:>8} {:>7.1}",
            m.controller,
            if m.completed { "yes" } else { "NO" },
            m.transfer_time_s,
            mbit,
            m.goodput_efficiency * 100.0,
            opt(m.time_to_90_rtts, 1.0, 1),
            m.packets_resent,
            opt(m.resent_over_lost, 1.0, 2),
            opt(m.rtt_error, 100.0, 1),
            opt(m.queue_delay_p95_ms, 1.0, 1),
            m.cpu_seconds
        );
        if let Some(e) = &m.error {
            println!("         error: {e}");
        }
    }
    println!(
        "time: first data packet to last byte (virtual); eff: goodput / bottleneck; ramp: RTTs to 90 % \
         of the bottleneck; resent/lost: retransmitted / lost wire bytes; queue95: p95 queueing delay, ms"
    );
}
