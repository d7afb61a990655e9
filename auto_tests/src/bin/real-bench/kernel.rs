//! `--kernel-link`: rustox and TCP CUBIC, each alone, across a veth pair shaped by the
//! kernel's tbf ([`rustox_auto_tests::kernel_link`]): the shallow-buffer case with no
//! userspace emulator taking CPU from the endpoints (docs/benchmarks.md "Shallow buffers").
//!
//! Utilisation is file (or iperf3 payload) bits per second ÷ the shaped rate; the rate
//! counts Ethernet frames, so even a perfect sender stays below 1: its ceiling is printed
//! beside it. Packets resent are the sender's own count ÷ the frames it offered to the
//! shaper (passed + dropped).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rustox_auto_tests::emulator::{CliTransfer, Side, TwoHosts};
use rustox_auto_tests::kernel_link::{KernelLink, KernelProfile, QdiscCounters, TbfConfig};
use rustox_simulator::{controller_name, FULL_PAYLOAD, FULL_WIRE_PACKET};
use serde::Serialize;

use crate::runs::{load_average, source_file, transfer_spec, CpuMeter, Setup, FIRST_PORT};
use crate::table::{opt, Table};
use crate::tcp::{reap, spawn_quiet, wait_iperf, IPERF_PORT};
use crate::Args;

/// Default size: this many seconds at the shaped rate, within the bounds below.
const SIZE_SECONDS: f64 = 8.0;
const SIZE_MIN: u64 = 16 << 20;
const SIZE_MAX: u64 = 512 << 20;
/// A run is abandoned after this many times its ideal duration plus the slack.
const TIMEOUT_FACTOR: f64 = 20.0;
const TIMEOUT_SLACK: Duration = Duration::from_secs(30);
/// A TCP segment's payload with Linux's default timestamps option: 1500 − 20 − 20 − 12.
const TCP_PAYLOAD: u64 = 1448;
/// The IP packet carrying it.
const TCP_IP_PACKET: u64 = 1500;

/// One flow alone on the shaped link.
#[derive(Debug, Serialize)]
pub struct KernelRow {
    pub link: String,
    pub flow: String,
    pub seed: u64,
    pub bytes: u64,
    pub mbit: Option<f64>,
    pub utilisation: Option<f64>,
    /// Utilisation of a sender that fills every frame and never waits.
    pub ceiling: f64,
    pub resent: Option<u64>,
    /// Resent ÷ frames offered to the A → B shaper.
    pub resent_share: Option<f64>,
    pub qdisc: QdiscCounters,
    pub sender_cpu_s: Option<f64>,
    pub receiver_cpu_s: Option<f64>,
    pub cpu_idle: Option<f64>,
    pub load1: Option<f64>,
    pub error: Option<String>,
    pub tbf: TbfConfig,
}

pub fn run_kernel(args: &Args, setup: &Setup, size: Option<u64>) -> Result<(), String> {
    let mut profiles = Vec::new();
    for name in &args.kernel_link {
        let mut p =
            KernelProfile::by_name(name).ok_or_else(|| format!("unknown kernel link {name}"))?;
        if let Some(b) = args.tbf_burst {
            p.tbf.burst_bytes = b;
        }
        if let Some(l) = args.tbf_limit {
            p.tbf.limit_bytes = l;
        }
        p.tbf.validate().map_err(|e| e.to_string())?;
        profiles.push(p);
    }
    let flows: Vec<&str> = args.kernel_flows.iter().map(String::as_str).collect();
    let mut rows = Vec::new();
    for p in &profiles {
        let bytes = size.unwrap_or_else(|| auto_size(p.tbf.rate_bps));
        let file = source_file(&setup.work, bytes)?;
        for seed in args.seed..args.seed + args.runs {
            for &flow in &flows {
                eprintln!(
                    "real-bench: kernel link {} ({} bit/s, burst {} B, limit {} B), {flow}, {} MiB ...",
                    p.name,
                    p.tbf.rate_bps,
                    p.tbf.burst_bytes,
                    p.tbf.limit_bytes,
                    bytes >> 20
                );
                let row = match flow {
                    "rustox" => kernel_rustox(p, seed, setup, &file, bytes)?,
                    "cubic" => kernel_cubic(p, seed, bytes)?,
                    other => return Err(format!("unknown --kernel-flows entry {other}")),
                };
                if args.json {
                    println!("{}", serde_json::to_string(&row).unwrap_or_default());
                }
                rows.push(row);
            }
        }
    }
    if !args.json {
        print_rows(&rows, setup);
    }
    Ok(())
}

/// About [`SIZE_SECONDS`] at `rate_bps`, whole MiB, within the bounds.
fn auto_size(rate_bps: u64) -> u64 {
    let bytes = (rate_bps as f64 / 8.0 * SIZE_SECONDS) as u64;
    (bytes >> 20 << 20).clamp(SIZE_MIN, SIZE_MAX)
}

fn deadline(rate_bps: u64, bytes: u64) -> Instant {
    let ideal = bytes as f64 * 8.0 / rate_bps as f64;
    Instant::now() + Duration::from_secs_f64(ideal * TIMEOUT_FACTOR) + TIMEOUT_SLACK
}

fn empty_row(p: &KernelProfile, flow: String, seed: u64, bytes: u64, ceiling: f64) -> KernelRow {
    KernelRow {
        link: p.name.to_owned(),
        flow,
        seed,
        bytes,
        mbit: None,
        utilisation: None,
        ceiling,
        resent: None,
        resent_share: None,
        qdisc: QdiscCounters::default(),
        sender_cpu_s: None,
        receiver_cpu_s: None,
        cpu_idle: None,
        load1: None,
        error: None,
        tbf: p.tbf,
    }
}

/// Fills the figures every flow has: utilisation, resent share, the shaper's counters.
fn finish_row(row: &mut KernelRow, link: &KernelLink, cpu: &CpuMeter) {
    row.qdisc = link.qdisc(Side::A).unwrap_or_default();
    row.utilisation = row.mbit.map(|m| m * 1e6 / link.tbf().rate_bps as f64);
    let offered = row.qdisc.packets + row.qdisc.drops;
    row.resent_share = row
        .resent
        .filter(|_| offered > 0)
        .map(|r| r as f64 / offered as f64);
    row.cpu_idle = cpu.idle_fraction();
    row.load1 = load_average();
}

fn kernel_rustox(
    p: &KernelProfile,
    seed: u64,
    setup: &Setup,
    file: &Path,
    bytes: u64,
) -> Result<KernelRow, String> {
    let ceiling = TbfConfig::payload_ceiling(FULL_PAYLOAD, FULL_WIRE_PACKET);
    let name = format!("rustox {}", controller_name(setup.controller));
    let mut row = empty_row(p, name, seed, bytes, ceiling);
    let cpu = CpuMeter::start();
    let link = KernelLink::new(p.tbf).map_err(|e| e.to_string())?;
    let mut transfer = CliTransfer::start_receiver(&link, transfer_spec(setup, FIRST_PORT, file))
        .map_err(|e| e.to_string())?;
    transfer.start_sender(&link).map_err(|e| e.to_string())?;
    let outcome = transfer.wait(deadline(p.tbf.rate_bps, bytes));
    match (&outcome.sender, &outcome.receiver) {
        (Ok(s), Ok(r)) => {
            row.mbit = Some(r.goodput_mbit);
            row.resent = Some(s.resent_packets);
            row.sender_cpu_s = s.cpu_seconds;
            row.receiver_cpu_s = r.cpu_seconds;
        }
        (Err(e), _) | (_, Err(e)) => row.error = Some(e.clone()),
    }
    finish_row(&mut row, &link, &cpu);
    Ok(row)
}

fn kernel_cubic(p: &KernelProfile, seed: u64, bytes: u64) -> Result<KernelRow, String> {
    let ceiling = TbfConfig::payload_ceiling(TCP_PAYLOAD, TCP_IP_PACKET);
    let mut row = empty_row(p, "iperf3 cubic".into(), seed, bytes, ceiling);
    let cpu = CpuMeter::start();
    let link = KernelLink::new(p.tbf).map_err(|e| e.to_string())?;
    let port = IPERF_PORT.to_string();
    let server = spawn_quiet(
        link.command(Side::B, "iperf3")
            .args(["-s", "-1", "-p", &port]),
    )?;
    // The server needs a moment to listen; the client retries nothing.
    std::thread::sleep(Duration::from_millis(300));
    let client = link
        .command(Side::A, "iperf3")
        .args(["-c", &link.addr(Side::B).to_string(), "-p", &port])
        .args(["-n", &bytes.to_string(), "-C", "cubic", "-J"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start iperf3: {e}"))?;
    match wait_iperf(client, deadline(p.tbf.rate_bps, bytes)) {
        Ok(t) => {
            row.mbit = Some(t.mbit);
            row.resent = Some(t.retransmits);
        }
        Err(e) => row.error = Some(e),
    }
    reap(server);
    finish_row(&mut row, &link, &cpu);
    Ok(row)
}

fn print_rows(rows: &[KernelRow], setup: &Setup) {
    println!(
        "\n### Kernel-shaped veth link (tbf on each egress; no delay, jitter or loss: the \
         kernel has no netem), controller {}\n",
        controller_name(setup.controller)
    );
    let mut t = Table::new(&[
        "link",
        "flow",
        "MiB",
        "Mbit/s",
        "utilisation",
        "ceiling",
        "resent",
        "resent %",
        "shaper drops",
        "CPU s send / recv",
        "idle CPU / load",
    ]);
    for r in rows {
        t.row(vec![
            format!(
                "{} ({} Mbit/s, limit {} B, burst {} B)",
                r.link,
                r.tbf.rate_bps / 1_000_000,
                r.tbf.limit_bytes,
                r.tbf.burst_bytes
            ),
            r.flow.clone(),
            (r.bytes >> 20).to_string(),
            opt(r.mbit, 1),
            opt(r.utilisation, 3),
            format!("{:.3}", r.ceiling),
            r.resent.map_or("–".into(), |v| v.to_string()),
            opt(r.resent_share.map(|s| s * 100.0), 2),
            r.qdisc.drops.to_string(),
            format!("{} / {}", opt(r.sender_cpu_s, 1), opt(r.receiver_cpu_s, 1)),
            format!(
                "{} / {}",
                r.cpu_idle
                    .map_or("–".into(), |v| format!("{:.0} %", v * 100.0)),
                opt(r.load1, 1)
            ),
        ]);
    }
    t.print();
    for r in rows {
        if let Some(e) = &r.error {
            println!("- {} {} seed {}: {e}", r.link, r.flow, r.seed);
        }
    }
    println!(
        "\nCeiling: payload ÷ Ethernet frame when every frame is full (rustox 1371 file bytes \
         in 1442, TCP 1448 in 1514 with timestamps). Resent %: the sender's resent packets ÷ \
         frames offered to the A → B shaper (passed + dropped)."
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_are_eight_seconds_within_bounds() {
        assert_eq!(auto_size(100_000_000), 95 << 20);
        assert_eq!(auto_size(1_000_000_000), SIZE_MAX);
        assert_eq!(auto_size(1_000_000), SIZE_MIN);
    }
}
