//! One transfer per profile and seed: the real run beside the simulated one.

use std::path::Path;

use rustox_auto_tests::emulator::{CliOutcome, CliTransfer};
use rustox_net_crypto::ControllerKind;
use rustox_simulator::{controller_name, run_transfer, Profile, SimError, TransferMetrics};
use serde::Serialize;

use crate::runs::{
    deadline, host_drops, link_figures, sim_spec, source_file, testbed, transfer_spec, CpuMeter,
    LinkFigures, Setup, FIRST_PORT,
};
use crate::table::{idle_and_load, lateness, opt, percent, Table};
use crate::{auto_size, Args};

/// One profile/seed: the real run beside the simulated one.
#[derive(Debug, Serialize)]
pub struct SingleRow {
    pub profile: String,
    pub controller: String,
    pub seed: u64,
    pub bytes: u64,
    /// Sender's goodput (offer to last acknowledgement), Mbit/s.
    pub real_send_mbit: Option<f64>,
    /// Receiver's goodput (accept to last byte written), Mbit/s.
    pub real_recv_mbit: Option<f64>,
    /// Receiver's goodput ÷ bottleneck rate; the sender's when the receiver reported
    /// nothing (see `real_efficiency_side`).
    pub real_efficiency: Option<f64>,
    /// "recv" or "send": whose goodput `real_efficiency` is.
    pub real_efficiency_side: Option<&'static str>,
    pub real_resent: Option<u64>,
    pub real_rtt_ms: Option<f64>,
    /// Seconds of the transfer (receiver's, else sender's).
    pub real_seconds: Option<f64>,
    /// CPU seconds of the whole sender process (its file hash included) and receiver
    /// process: near `real_seconds` means that endpoint was CPU-bound.
    pub real_cpu_send_s: Option<f64>,
    pub real_cpu_recv_s: Option<f64>,
    pub real_error: Option<String>,
    pub sim_efficiency: Option<f64>,
    pub sim_resent: Option<u64>,
    pub sim_rtt_ms: Option<f64>,
    pub sim_error: Option<String>,
    /// real_efficiency ÷ sim_efficiency.
    pub ratio: Option<f64>,
    pub link: Option<LinkFigures>,
}

pub fn run_single(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    size: Option<u64>,
) -> Result<(), String> {
    let mut rows = Vec::new();
    for profile in profiles {
        let bytes = size.unwrap_or_else(|| auto_size(profile));
        let file = source_file(&setup.work, bytes)?;
        for seed in args.seed..args.seed + args.runs {
            eprintln!(
                "real-bench: {} {} seed {seed}, {} MiB ...",
                profile.name,
                controller_name(setup.controller),
                bytes >> 20
            );
            let (outcome, link) = match real_single(profile, seed, setup, &file, bytes) {
                Ok((o, l)) => (Some(o), Some(l)),
                Err(e) => {
                    eprintln!("real-bench: {e}");
                    (None, None)
                }
            };
            let sim = (!args.no_sim).then(|| {
                run_transfer(&sim_spec(
                    profile,
                    setup.controller,
                    seed,
                    bytes,
                    &setup.sim_driver,
                ))
            });
            let row = single_row(profile, setup.controller, seed, bytes, outcome, link, sim);
            if args.json {
                println!("{}", serde_json::to_string(&row).unwrap_or_default());
            }
            rows.push(row);
        }
    }
    if !args.json {
        print_single_table(&rows, &args.sim_driver);
    }
    Ok(())
}

pub fn real_single(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    file: &Path,
    bytes: u64,
) -> Result<(CliOutcome, LinkFigures), String> {
    let cpu = CpuMeter::start();
    let bed = testbed(profile, seed, setup)?;
    let mut transfer = CliTransfer::start_receiver(&bed, transfer_spec(setup, FIRST_PORT, file))
        .map_err(|e| e.to_string())?;
    transfer.start_sender(&bed).map_err(|e| e.to_string())?;
    let outcome = transfer.wait(deadline(profile, bytes, 1));
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    Ok((outcome, link_figures(&report, drops, &cpu)))
}

pub fn single_row(
    profile: &Profile,
    controller: ControllerKind,
    seed: u64,
    bytes: u64,
    outcome: Option<CliOutcome>,
    link: Option<LinkFigures>,
    sim: Option<Result<TransferMetrics, SimError>>,
) -> SingleRow {
    let (send, recv) = match &outcome {
        Some(o) => (o.sender.clone(), o.receiver.clone()),
        None => (Err("no run".into()), Err("no run".into())),
    };
    let (real_efficiency, real_efficiency_side) = match (&recv, &send) {
        (Ok(r), _) => (Some(r.goodput_mbit), Some("recv")),
        (Err(_), Ok(s)) => (Some(s.goodput_mbit), Some("send")),
        _ => (None, None),
    };
    let real_efficiency = real_efficiency.map(|mbit| mbit * 1e6 / profile.rate_bps as f64);
    let real_error = match (&send, &recv) {
        (Err(e), _) | (_, Err(e)) => Some(e.clone()),
        _ => None,
    };
    let (sim_ok, sim_error) = match sim {
        Some(Ok(m)) if m.completed => (Some(m), None),
        Some(Ok(m)) => (
            None,
            Some(m.error.unwrap_or_else(|| "did not complete".into())),
        ),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, None),
    };
    let sim_efficiency = sim_ok.as_ref().map(|m| m.goodput_efficiency);
    SingleRow {
        profile: profile.name.to_owned(),
        controller: controller_name(controller).to_owned(),
        seed,
        bytes,
        real_send_mbit: send.as_ref().ok().map(|s| s.goodput_mbit),
        real_recv_mbit: recv.as_ref().ok().map(|r| r.goodput_mbit),
        real_efficiency,
        real_efficiency_side,
        real_resent: send.as_ref().ok().map(|s| s.resent_packets),
        real_rtt_ms: send.as_ref().ok().and_then(|s| s.rtt_ms),
        real_seconds: recv.as_ref().ok().or(send.as_ref().ok()).map(|r| r.seconds),
        real_cpu_send_s: send.as_ref().ok().and_then(|s| s.cpu_seconds),
        real_cpu_recv_s: recv.as_ref().ok().and_then(|r| r.cpu_seconds),
        real_error,
        sim_efficiency,
        sim_resent: sim_ok.as_ref().map(|m| m.packets_resent),
        sim_rtt_ms: sim_ok.as_ref().and_then(|m| m.final_srtt_ms),
        sim_error,
        ratio: real_efficiency
            .zip(sim_efficiency)
            .filter(|(_, s)| *s > 0.0)
            .map(|(r, s)| r / s),
        link,
    }
}

pub fn print_single_table(rows: &[SingleRow], sim_driver: &str) {
    let mut t = Table::new(&[
        "profile",
        "ctrl",
        "seed",
        "MiB",
        "real Mbit/s send/recv",
        "real η",
        "sim η",
        "real/sim",
        "resent real/sim",
        "RTT ms real/sim",
        "s / CPU s send/recv",
        "link drops loss/queue",
        "queue p95 ms",
        "emu late p50/p99/max µs (≥1 ms)",
        "emu busy",
        "host drops tun/rcvbuf",
        "idle CPU / load",
    ]);
    for r in rows {
        let link = r.link.as_ref();
        t.row(vec![
            r.profile.clone(),
            r.controller.clone(),
            r.seed.to_string(),
            format!("{}", r.bytes >> 20),
            format!(
                "{} / {}",
                opt(r.real_send_mbit, 1),
                opt(r.real_recv_mbit, 1)
            ),
            match r.real_efficiency_side {
                Some("send") => format!("{} (send)", opt(r.real_efficiency, 3)),
                _ => opt(r.real_efficiency, 3),
            },
            opt(r.sim_efficiency, 3),
            opt(r.ratio, 2),
            format!(
                "{} / {}",
                r.real_resent.map_or("–".into(), |v| v.to_string()),
                r.sim_resent.map_or("–".into(), |v| v.to_string())
            ),
            format!("{} / {}", opt(r.real_rtt_ms, 1), opt(r.sim_rtt_ms, 1)),
            format!(
                "{} / {} / {}",
                opt(r.real_seconds, 1),
                opt(r.real_cpu_send_s, 1),
                opt(r.real_cpu_recv_s, 1)
            ),
            link.map_or("–".into(), |l| {
                format!("{} / {}", l.loss_drops, l.queue_drops)
            }),
            opt(link.and_then(|l| l.queue_p95_ms), 1),
            link.map_or("–".into(), |l| lateness(&l.lateness)),
            percent(link.and_then(|l| l.emulator_busy)),
            link.map_or("–".into(), |l| {
                format!("{} / {}", l.host_drops.tun, l.host_drops.udp_rcvbuf)
            }),
            link.map_or("–".into(), idle_and_load),
        ]);
    }
    t.print();
    if rows
        .iter()
        .any(|r| r.link.as_ref().is_some_and(|l| !l.realtime))
    {
        println!("- the emulator thread ran at normal priority (SCHED_FIFO off or refused)");
    }
    for r in rows {
        if let Some(e) = &r.real_error {
            println!("- {} seed {}: real run failed: {e}", r.profile, r.seed);
        }
        if let Some(e) = &r.sim_error {
            println!("- {} seed {}: simulation failed: {e}", r.profile, r.seed);
        }
    }
    println!(
        "\nη = file bytes / (time × bottleneck rate). Real η: the receiver's time (accept to \
         last byte written), or with \"(send)\" the sender's (offer to last acknowledgement) \
         when the receiver failed. Sim η: first data packet to last byte, simulated hosts \
         under the `{sim_driver}` driver model. Resent and RTT: the sender's (final smoothed \
         RTT). s / CPU s: the transfer's seconds and each process's CPU seconds (the \
         sender's include hashing the file first; near the transfer's seconds: CPU-bound). Link drops and queue delay: the emulated A→B link. Emu late: how long after its \
         model arrival time the emulator wrote each packet (in brackets: how many ≥ 1 ms); emu busy: share of the time its \
         thread was not asleep. Host drops: kernel drops outside the model (TUN queue, UDP \
         receive buffers). Idle CPU: the machine's idle share during the \
         run (near 0: CPU-bound); load: 1-minute load average at its end (2 cores)."
    );
}
