//! One rustox transfer next to one iperf3 TCP CUBIC flow, the rustox sender starting
//! `--start-offset` seconds after iperf3's client.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustox_auto_tests::emulator::{CliTransfer, Side, PROTO_TCP, PROTO_UDP};
use rustox_simulator::{controller_name, Profile};

use crate::runs::{
    deadline, host_drops, link_figures, source_file, testbed, transfer_spec, CpuMeter, Setup,
    FIRST_PORT,
};
use crate::sharing::{report_sharing, series_to_port, sharing_run, FlowRow, SharingRun};
use crate::{auto_size, Args};

/// iperf3's port.
pub const IPERF_PORT: u16 = 5201;

pub fn run_tcp(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    size: Option<u64>,
    offset: Duration,
) -> Result<(), String> {
    Command::new("iperf3")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .map_err(|_| "iperf3 is not installed: apt-get install -y iperf3".to_owned())?;
    for profile in profiles {
        let bytes = size.unwrap_or_else(|| auto_size(profile));
        let file = source_file(&setup.work, bytes)?;
        for seed in args.seed..args.seed + args.runs {
            eprintln!(
                "real-bench: {} rustox {} vs iperf3 cubic, seed {seed}, {} MiB, {:.1} s later ...",
                profile.name,
                controller_name(setup.controller),
                bytes >> 20,
                offset.as_secs_f64()
            );
            let run = sharing_tcp(profile, seed, setup, &file, bytes, offset)?;
            report_sharing(args, profile, &run);
        }
    }
    Ok(())
}

pub fn sharing_tcp(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    file: &Path,
    bytes: u64,
    offset: Duration,
) -> Result<SharingRun, String> {
    let cpu = CpuMeter::start();
    let bed = testbed(profile, seed, setup)?;
    // iperf3 runs as long as the rustox transfer would at half the link, plus margin, so
    // the two overlap for the whole transfer if the sharing is fair.
    let half_link_s = bytes as f64 * 8.0 / (profile.rate_bps as f64 / 2.0);
    let tcp_seconds = (half_link_s * 1.5 + offset.as_secs_f64()).ceil() as u64 + 5;
    let server = spawn_quiet(bed.command(Side::B, "iperf3").args([
        "-s",
        "-1",
        "-p",
        &IPERF_PORT.to_string(),
    ]))?;
    let mut transfer = CliTransfer::start_receiver(&bed, transfer_spec(setup, FIRST_PORT, file))
        .map_err(|e| e.to_string())?;
    let client = bed
        .command(Side::A, "iperf3")
        .args(["-c", &bed.addr(Side::B).to_string()])
        .args(["-p", &IPERF_PORT.to_string()])
        .args(["-t", &tcp_seconds.to_string()])
        .args(["-C", "cubic", "-J"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start iperf3: {e}"))?;
    std::thread::sleep(offset);
    transfer.start_sender(&bed).map_err(|e| e.to_string())?;
    let outcome = transfer.wait(deadline(profile, bytes, 2));
    let tcp = wait_iperf(
        client,
        Instant::now() + Duration::from_secs(tcp_seconds + 30),
    );
    reap(server);
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    let link = link_figures(&report, drops, &cpu);
    let series = vec![
        series_to_port(&report, PROTO_UDP, FIRST_PORT),
        series_to_port(&report, PROTO_TCP, IPERF_PORT),
    ];
    let mut rustox = FlowRow::empty(format!("rustox {}", controller_name(setup.controller)));
    rustox.mib = Some(bytes >> 20);
    rustox.fill_from(&outcome);
    let mut iperf = FlowRow::empty("iperf3 cubic".into());
    match tcp {
        Ok(t) => {
            iperf.recv_mbit = Some(t.mbit);
            iperf.seconds = Some(t.seconds);
            iperf.resent = Some(t.retransmits);
        }
        Err(e) => iperf.error = Some(e),
    }
    let mut run = sharing_run(
        profile,
        setup,
        seed,
        vec![rustox, iperf],
        series,
        &report,
        link,
    );
    run.start_offset_s = offset.as_secs_f64();
    Ok(run)
}

/// What iperf3's client reported.
pub struct IperfResult {
    pub mbit: f64,
    pub seconds: f64,
    pub retransmits: u64,
}

pub fn wait_iperf(mut child: Child, deadline: Instant) -> Result<IperfResult, String> {
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(out) = stdout.as_mut() {
            let _ = std::io::Read::read_to_string(out, &mut text);
        }
        text
    });
    let status = wait_until(&mut child, deadline);
    let text = reader.join().unwrap_or_default();
    if status != Some(true) {
        return Err("iperf3 client failed or timed out".into());
    }
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("iperf3 -J output: {e}"))?;
    let sent = &json["end"]["sum_sent"];
    let received = &json["end"]["sum_received"];
    Ok(IperfResult {
        mbit: received["bits_per_second"].as_f64().unwrap_or(0.0) / 1e6,
        seconds: received["seconds"].as_f64().unwrap_or(0.0),
        retransmits: sent["retransmits"].as_u64().unwrap_or(0),
    })
}

/// Waits for `child` until `deadline`, then kills it; `Some(success)` if it exited alone.
pub fn wait_until(child: &mut Child, deadline: Instant) -> Option<bool> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status.success()),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

pub fn spawn_quiet(cmd: &mut Command) -> Result<Child, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))
}

/// Gives a server that should have exited a moment, then kills it.
pub fn reap(mut child: Child) {
    let _ = wait_until(&mut child, Instant::now() + Duration::from_secs(2));
}
