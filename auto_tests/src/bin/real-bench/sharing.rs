//! Several rustox transfers through one link, and how flows shared it (also used by the
//! TCP mode).

use std::path::PathBuf;
use std::time::Duration;

use rustox_auto_tests::emulator::{
    merged, overlap, rates_bps, shares_by_half, shares_per_interval, CliOutcome, CliTransfer,
    EmulatorReport, PROTO_UDP,
};
use rustox_simulator::{controller_name, jain_index, Profile};
use serde::Serialize;

use crate::runs::{
    deadline, host_drops, link_figures, source_file, testbed, transfer_spec, CpuMeter, LinkFigures,
    Setup, FIRST_PORT,
};
use crate::table::{idle_and_load, lateness, opt, percent, Table};
use crate::{auto_size, Args};

/// One flow of a sharing run.
#[derive(Debug, Serialize)]
pub struct FlowRow {
    pub name: String,
    /// File size (rustox flows).
    pub mib: Option<u64>,
    /// The flow's own report: goodput and duration (receiver), resent and RTT (sender).
    pub recv_mbit: Option<f64>,
    pub seconds: Option<f64>,
    pub resent: Option<u64>,
    pub rtt_ms: Option<f64>,
    pub error: Option<String>,
    /// IP-level rate while all flows were active, Mbit/s.
    pub overlap_mbit: Option<f64>,
    /// That rate ÷ bottleneck rate.
    pub overlap_share: Option<f64>,
    /// Its part of what all flows delivered while all were active.
    pub pair_share: Option<f64>,
    /// That part over the first and the second half of the window.
    pub halves: Option<(f64, f64)>,
    /// Largest 1 s rate while it was the only flow delivering, ÷ bottleneck rate.
    pub alone_share: Option<f64>,
    /// IP bytes delivered per second (emulator arrival times).
    pub mbit_per_second: Vec<f64>,
}

/// A sharing run.
#[derive(Debug, Serialize)]
pub struct SharingRun {
    pub profile: String,
    pub controller: String,
    pub seed: u64,
    /// Seconds (emulator time) of the overlap the shares are computed over.
    pub overlap_s: Option<(usize, usize)>,
    /// Seconds from the start of the first flow to the start of the last (`--start-offset`).
    pub start_offset_s: f64,
    /// The emulated link: the profile's model or the plain one.
    pub link_model: &'static str,
    /// Per second of the window: each flow's part of what all delivered.
    pub shares_per_second: Vec<Vec<Option<f64>>>,
    pub jain: Option<f64>,
    pub flows: Vec<FlowRow>,
    pub link: LinkFigures,
}

pub fn run_flows(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    size: Option<u64>,
    flow_sizes: &[u64],
) -> Result<(), String> {
    for profile in profiles {
        let sizes: Vec<u64> = if flow_sizes.is_empty() {
            vec![size.unwrap_or_else(|| auto_size(profile)); usize::from(args.flows)]
        } else {
            flow_sizes.to_vec()
        };
        let files = sizes
            .iter()
            .map(|&b| Ok((source_file(&setup.work, b)?, b)))
            .collect::<Result<Vec<_>, String>>()?;
        for seed in args.seed..args.seed + args.runs {
            eprintln!(
                "real-bench: {} × {} rustox, {} seed {seed}, MiB {:?} ...",
                profile.name,
                files.len(),
                controller_name(setup.controller),
                sizes.iter().map(|b| b >> 20).collect::<Vec<_>>()
            );
            let run = sharing_rustox(profile, seed, setup, &files)?;
            report_sharing(args, profile, &run);
        }
    }
    if !args.no_sim && !args.json {
        println!(
            "\n(No simulated column: the simulator runs one transfer per pair of hosts; a \
             cross-traffic model is the lead's to add.)"
        );
    }
    Ok(())
}

pub fn sharing_rustox(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    files: &[(PathBuf, u64)],
) -> Result<SharingRun, String> {
    let cpu = CpuMeter::start();
    let bed = testbed(profile, seed, setup)?;
    let ports: Vec<u16> = (0..files.len() as u16).map(|i| FIRST_PORT + i).collect();
    let mut transfers = Vec::new();
    for (&port, (file, _)) in ports.iter().zip(files) {
        transfers.push(
            CliTransfer::start_receiver(&bed, transfer_spec(setup, port, file))
                .map_err(|e| e.to_string())?,
        );
    }
    for t in &mut transfers {
        t.start_sender(&bed).map_err(|e| e.to_string())?;
    }
    let total: u64 = files.iter().map(|(_, b)| b).sum();
    let until = deadline(profile, total, 1);
    let outcomes: Vec<CliOutcome> = transfers.into_iter().map(|t| t.wait(until)).collect();
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    let link = link_figures(&report, drops, &cpu);
    let series: Vec<Vec<u64>> = ports
        .iter()
        .map(|&p| series_to_port(&report, PROTO_UDP, p))
        .collect();
    let rows = ports
        .iter()
        .zip(&outcomes)
        .zip(files)
        .map(|((port, o), (_, bytes))| {
            let mut row = FlowRow::empty(format!("rustox :{port}"));
            row.mib = Some(bytes >> 20);
            row.fill_from(o);
            row
        })
        .collect();
    Ok(sharing_run(
        profile, setup, seed, rows, series, &report, link,
    ))
}

impl FlowRow {
    pub fn empty(name: String) -> Self {
        FlowRow {
            name,
            mib: None,
            recv_mbit: None,
            seconds: None,
            resent: None,
            rtt_ms: None,
            error: None,
            overlap_mbit: None,
            overlap_share: None,
            pair_share: None,
            halves: None,
            alone_share: None,
            mbit_per_second: Vec::new(),
        }
    }

    pub fn fill_from(&mut self, o: &CliOutcome) {
        self.recv_mbit = o.receiver.as_ref().ok().map(|r| r.goodput_mbit);
        self.seconds = o.receiver.as_ref().ok().map(|r| r.seconds);
        self.resent = o.sender.as_ref().ok().map(|s| s.resent_packets);
        self.rtt_ms = o.sender.as_ref().ok().and_then(|s| s.rtt_ms);
        self.error = match (&o.sender, &o.receiver) {
            (Err(e), _) | (_, Err(e)) => Some(e.clone()),
            _ => None,
        };
    }
}

/// Bytes per interval delivered A → B to `port` over `protocol` (all such flows summed).
pub fn series_to_port(report: &EmulatorReport, protocol: u8, port: u16) -> Vec<u64> {
    let flows: Vec<_> = report
        .stats
        .a_to_b
        .flows
        .iter()
        .filter(|f| f.flow.protocol == protocol && f.flow.dst.port() == port)
        .collect();
    merged(&flows)
}

/// Shares over the overlap, per-second rates, and each flow's best second alone.
#[allow(clippy::too_many_arguments)]
pub fn sharing_run(
    profile: &Profile,
    setup: &Setup,
    seed: u64,
    mut rows: Vec<FlowRow>,
    series: Vec<Vec<u64>>,
    report: &EmulatorReport,
    link: LinkFigures,
) -> SharingRun {
    let interval = Duration::from_millis(report.stats.a_to_b.interval_ms.max(1));
    let rate = profile.rate_bps as f64;
    let window = overlap(&series);
    let rates = window
        .clone()
        .map(|w| rates_bps(&series, w, interval))
        .unwrap_or_default();
    let total: f64 = rates.iter().sum();
    let halves = window.clone().map(|w| shares_by_half(&series, w));
    let shares_per_second = window
        .clone()
        .map(|w| shares_per_interval(&series, w))
        .unwrap_or_default();
    let per_s = |b: u64| b as f64 * 8.0 / interval.as_secs_f64() / 1e6;
    for (i, row) in rows.iter_mut().enumerate() {
        row.overlap_mbit = rates.get(i).map(|r| r / 1e6);
        row.overlap_share = rates.get(i).map(|r| r / rate);
        row.pair_share = rates.get(i).filter(|_| total > 0.0).map(|r| r / total);
        row.halves = halves.as_ref().map(|[a, b]| (a[i], b[i]));
        row.mbit_per_second = series[i].iter().map(|&b| per_s(b)).collect();
        // Intervals where only this flow delivered, boundary intervals excluded.
        row.alone_share = (1..series[i].len().saturating_sub(1))
            .filter(|&t| {
                series[i][t] > 0
                    && series
                        .iter()
                        .enumerate()
                        .all(|(j, s)| j == i || s.get(t).copied().unwrap_or(0) == 0)
                    && series[i][t - 1] > 0
                    && series[i][t + 1] > 0
            })
            .map(|t| series[i][t] as f64 * 8.0 / interval.as_secs_f64() / rate)
            .reduce(f64::max);
    }
    SharingRun {
        profile: profile.name.to_owned(),
        controller: controller_name(setup.controller).to_owned(),
        seed,
        overlap_s: window.map(|w| (w.start, w.end)),
        start_offset_s: 0.0,
        link_model: if setup.options.plain {
            "plain"
        } else {
            "profile"
        },
        shares_per_second,
        jain: (!rates.is_empty()).then(|| jain_index(&rates)),
        flows: rows,
        link,
    }
}

pub fn report_sharing(args: &Args, profile: &Profile, run: &SharingRun) {
    if args.json {
        println!("{}", serde_json::to_string(run).unwrap_or_default());
        return;
    }
    println!(
        "\n### {} ({} Mbit/s, {} ms, {} B queue, {} link), {}, seed {}\n",
        profile.name,
        profile.rate_bps / 1_000_000,
        profile.rtt.as_secs_f64() * 1000.0,
        profile.buffer_bytes,
        run.link_model,
        run.controller,
        run.seed,
    );
    let mut t = Table::new(&[
        "flow",
        "MiB",
        "own Mbit/s",
        "s",
        "resent",
        "RTT ms",
        "Mbit/s while all active",
        "share of link",
        "share of the pair",
        "first / second half",
        "best 1 s alone",
    ]);
    for f in &run.flows {
        t.row(vec![
            f.name.clone(),
            f.mib.map_or("–".into(), |m| m.to_string()),
            opt(f.recv_mbit, 1),
            opt(f.seconds, 1),
            f.resent.map_or("–".into(), |v| v.to_string()),
            opt(f.rtt_ms, 1),
            opt(f.overlap_mbit, 1),
            percent(f.overlap_share),
            percent(f.pair_share),
            f.halves.map_or("–".into(), |(a, b)| {
                format!("{} / {}", percent(Some(a)), percent(Some(b)))
            }),
            percent(f.alone_share),
        ]);
    }
    t.print();
    match (run.jain, run.overlap_s) {
        (Some(j), Some((a, b))) => println!(
            "\nWindow: seconds {a}–{b} of the link's clock ({} s: from the first whole second \
             in which every flow delivered to the last before the first flow stopped; the \
             last flow started {:.1} s after the first). Jain's index over it: {j:.3}",
            b - a,
            run.start_offset_s
        ),
        _ => println!("\nThe flows never delivered at the same time."),
    }
    for f in &run.flows {
        if let Some(e) = &f.error {
            println!("- {}: {e}", f.name);
        }
    }
    let l = &run.link;
    println!(
        "Link: {} loss / {} queue drops, queue p95 {} ms; emulator lateness p50/p99/max \
         (≥1 ms) {} µs; host drops tun {} rcvbuf {}; idle CPU / load {}",
        l.loss_drops,
        l.queue_drops,
        opt(l.queue_p95_ms, 1),
        lateness(&l.lateness),
        l.host_drops.tun,
        l.host_drops.udp_rcvbuf,
        idle_and_load(l)
    );
    let len = run
        .flows
        .iter()
        .map(|f| f.mbit_per_second.len())
        .max()
        .unwrap_or(0);
    let mut header = vec!["s".to_owned()];
    header.extend(run.flows.iter().map(|f| format!("{} Mbit/s", f.name)));
    let first = run.flows.first().map_or("", |f| f.name.as_str());
    let share_header = format!("{first}'s part");
    header.push(share_header);
    let window_start = run.overlap_s.map_or(usize::MAX, |(a, _)| a);
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut s = Table::new(&header_refs);
    for i in 0..len {
        let mut row = vec![i.to_string()];
        row.extend(
            run.flows
                .iter()
                .map(|f| opt(f.mbit_per_second.get(i).copied(), 1)),
        );
        let part = i
            .checked_sub(window_start)
            .and_then(|k| run.shares_per_second.get(k))
            .and_then(|shares| shares.first().copied().flatten());
        row.push(percent(part));
        s.row(row);
    }
    println!(
        "\nPer second (IP bytes at the emulator's arrival times; the part only inside the \
         window):\n"
    );
    s.print();
}
