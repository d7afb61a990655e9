//! `--ctoxcore`: c-toxcore 0.2.18 itself on the emulated link, beside `rustox send
//! --controller legacy` (real), the simulator's legacy model and `rustox send` with BBR
//! (real), one profile at a time: claims against c-toxcore come from c-toxcore itself, and
//! the legacy model either matches it within 20 % or says what it is.
//!
//! The c-toxcore pair is `tools/toxcore_file_peer.c` on Debian's libtoxcore (see
//! `rustox_auto_tests::ctoxcore`): the receiver in namespace B, the sender in A
//! bootstrapping off the receiver's DHT node, so everything between them crosses the
//! emulated link. Goodput is the receiver's, from its accept (FILECONTROL RESUME) to the
//! last byte, as for `rustox recv`; the sender's (accept to the final zero-length chunk
//! request) when the receiver reported nothing. The ~10 s c-toxcore takes to bring the
//! friend online is outside that figure.

use std::path::Path;
use std::time::{Duration, Instant};

use rustox_auto_tests::ctoxcore::{
    run_transfer as run_ctoxcore_transfer, ContentCheck, Discovery, PeerBinary, TransferOptions,
};
use rustox_auto_tests::emulator::{CliOutcome, CliTransfer, EmulatorReport, Side};
use rustox_net_crypto::ControllerKind;
use rustox_simulator::{run_transfer, Profile, SimError, TransferMetrics};
use serde::Serialize;

use crate::mixed::{chunks, peer_binary_if, peer_in, RealRun};
use crate::runs::{
    deadline, host_drops, link_figures, load_average, sim_spec, source_file, testbed,
    transfer_spec, CpuMeter, LinkFigures, Setup, FIRST_PORT,
};
use crate::table::{opt, Table};
use crate::Args;

/// The sizes of the c-toxcore comparison: c-toxcore ramps up slowly (its rate grows ×1.2 per 50 ms tick over
/// what it sent in the last 600 ms), so a short transfer would measure mostly the ramp.
/// 16 MiB on the ≤ 10 Mbit/s paths (vpn300, lossy), 32 MiB above.
const SMALL_PATH_BPS: u64 = 10_000_000;
const SMALL_PATH_SIZE: u64 = 16 << 20;
const LARGE_PATH_SIZE: u64 = 32 << 20;

/// What the mode can run per profile (`--ctoxcore-columns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// c-toxcore 0.2.18 itself.
    CToxcore,
    /// `rustox send --controller legacy` through the emulator.
    LegacyReal,
    /// The simulator's legacy model.
    LegacySim,
    /// `rustox send` with BBR through the emulator.
    BbrReal,
}

impl Column {
    pub fn by_name(name: &str) -> Option<Column> {
        match name.to_ascii_lowercase().as_str() {
            "ctoxcore" | "c-toxcore" => Some(Column::CToxcore),
            "legacy" => Some(Column::LegacyReal),
            "sim" => Some(Column::LegacySim),
            "bbr" => Some(Column::BbrReal),
            _ => None,
        }
    }
}

/// One profile's figures.
#[derive(Debug, Serialize)]
pub struct CToxcoreRow {
    pub profile: String,
    pub seed: u64,
    pub bytes: u64,
    /// c-toxcore's goodput, Mbit/s (receiver's; see the module docs).
    pub ctoxcore_mbit: Option<f64>,
    /// Seconds of that transfer.
    pub ctoxcore_seconds: Option<f64>,
    /// IP packets A → B during the whole c-toxcore run per file chunk (1371 bytes): 1 + the
    /// share of resends and DHT/onion traffic, which is small beside a file.
    pub ctoxcore_packets_per_chunk: Option<f64>,
    /// IP bytes A → B during the whole c-toxcore run per file byte: 1428/1371 = 1.042 for
    /// the headers, plus resends; DHT/onion packets are small, so unlike
    /// `ctoxcore_packets_per_chunk` this is about resends even on a long run.
    pub ctoxcore_wire_per_byte: Option<f64>,
    /// When c-toxcore did not finish: IP megabytes the link delivered A → B until it gave up.
    pub ctoxcore_partial_mb: Option<f64>,
    /// When c-toxcore did not finish: file bytes its sender had handed to c-toxcore by then
    /// (from the peer's timeout message).
    pub ctoxcore_partial_bytes: Option<u64>,
    pub ctoxcore_error: Option<String>,
    pub ctoxcore_link: Option<LinkFigures>,
    pub legacy_real_mbit: Option<f64>,
    pub legacy_real_resent: Option<u64>,
    pub legacy_real_rtt_ms: Option<f64>,
    /// IP packets A → B per file chunk in the real legacy run (see `ctoxcore_packets_per_chunk`).
    pub legacy_real_packets_per_chunk: Option<f64>,
    /// IP bytes A → B per file byte in the real legacy run.
    pub legacy_real_wire_per_byte: Option<f64>,
    pub legacy_real_error: Option<String>,
    pub legacy_real_load: Option<f64>,
    pub legacy_sim_mbit: Option<f64>,
    pub legacy_sim_resent: Option<u64>,
    pub legacy_sim_rtt_ms: Option<f64>,
    pub legacy_sim_error: Option<String>,
    pub bbr_real_mbit: Option<f64>,
    pub bbr_real_error: Option<String>,
    pub bbr_real_load: Option<f64>,
}

pub fn run_ctoxcore(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    size: Option<u64>,
) -> Result<(), String> {
    let columns = args
        .ctoxcore_columns
        .iter()
        .map(|n| Column::by_name(n).ok_or_else(|| format!("unknown column {n}")))
        .collect::<Result<Vec<_>, _>>()?;
    let wants = |c: Column| columns.contains(&c);
    let peer = peer_binary_if(wants(Column::CToxcore))?;
    let timeout = Duration::from_secs_f64(args.ctoxcore_timeout);
    let mut rows = Vec::new();
    for profile in profiles {
        let bytes = size.unwrap_or_else(|| default_size(profile));
        for seed in args.seed..args.seed + args.runs {
            let run = Run {
                profile,
                seed,
                bytes,
                timeout,
            };
            let row = run_row(&run, setup, peer.as_ref(), &wants)?;
            if args.json {
                println!("{}", serde_json::to_string(&row).unwrap_or_default());
            }
            rows.push(row);
        }
    }
    if !args.json {
        print_table(&rows, timeout);
    }
    Ok(())
}

/// One profile and seed to run.
struct Run<'a> {
    profile: &'a Profile,
    seed: u64,
    bytes: u64,
    timeout: Duration,
}

/// The columns `wants` for one profile and seed.
fn run_row(
    run: &Run,
    setup: &Setup,
    peer: Option<&PeerBinary>,
    wants: &dyn Fn(Column) -> bool,
) -> Result<CToxcoreRow, String> {
    let Run {
        profile,
        seed,
        bytes,
        timeout,
    } = *run;
    let mut row = CToxcoreRow::new(profile, seed, bytes);
    if let Some(peer) = peer {
        eprintln!(
            "real-bench: {} seed {seed} c-toxcore, {} MiB (cap {:.0} s) ...",
            profile.name,
            bytes >> 20,
            timeout.as_secs_f64()
        );
        match ctoxcore_run(profile, seed, setup, peer, bytes, timeout) {
            Ok(run) => row.set_ctoxcore(run, bytes),
            Err(e) => row.ctoxcore_error = Some(e),
        }
    }
    let file = if wants(Column::LegacyReal) || wants(Column::BbrReal) {
        Some(source_file(&setup.work, bytes)?)
    } else {
        None
    };
    if let (true, Some(file)) = (wants(Column::LegacyReal), &file) {
        eprintln!("real-bench: {} seed {seed} rustox legacy ...", profile.name);
        let r = rustox_run(
            profile,
            seed,
            setup,
            ControllerKind::Legacy,
            file,
            bytes,
            timeout,
        );
        row.legacy_real_mbit = r.mbit;
        row.legacy_real_resent = r.resent;
        row.legacy_real_rtt_ms = r.rtt_ms;
        if r.error.is_none() {
            row.legacy_real_packets_per_chunk = Some(r.packets_per_chunk);
            row.legacy_real_wire_per_byte = Some(r.wire_per_byte);
        }
        row.legacy_real_error = r.error;
        row.legacy_real_load = r.load;
    }
    if wants(Column::LegacySim) {
        eprintln!(
            "real-bench: {} seed {seed} simulated legacy ...",
            profile.name
        );
        let spec = sim_spec(
            profile,
            ControllerKind::Legacy,
            seed,
            bytes,
            &setup.sim_driver,
        );
        row.set_sim(profile, run_transfer(&spec));
    }
    if let (true, Some(file)) = (wants(Column::BbrReal), &file) {
        eprintln!("real-bench: {} seed {seed} rustox bbr ...", profile.name);
        let r = rustox_run(
            profile,
            seed,
            setup,
            ControllerKind::Bbr,
            file,
            bytes,
            timeout,
        );
        row.bbr_real_mbit = r.mbit;
        row.bbr_real_error = r.error;
        row.bbr_real_load = r.load;
    }
    Ok(row)
}

/// The c-toxcore comparison's transfer size for `profile`.
pub fn default_size(profile: &Profile) -> u64 {
    if profile.rate_bps <= SMALL_PATH_BPS {
        SMALL_PATH_SIZE
    } else {
        LARGE_PATH_SIZE
    }
}

/// A c-toxcore → c-toxcore transfer as one cell of `--pairings`.
pub fn ctoxcore_pair(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    peer: &PeerBinary,
    bytes: u64,
    timeout: Duration,
) -> RealRun {
    match ctoxcore_run(profile, seed, setup, peer, bytes, timeout) {
        Ok(run) => {
            let mut row = CToxcoreRow::new(profile, seed, bytes);
            let link = run.link.clone();
            row.set_ctoxcore(run, bytes);
            RealRun {
                mbit: row.ctoxcore_mbit,
                packets_per_chunk: row.ctoxcore_packets_per_chunk,
                dropped: Some((link.loss_drops, link.queue_drops)),
                error: row.ctoxcore_error,
                link: Some(link),
            }
        }
        Err(e) => RealRun {
            error: Some(e),
            ..RealRun::default()
        },
    }
}

/// One c-toxcore transfer through the emulator.
struct CToxcoreRun {
    outcome: Result<rustox_auto_tests::ctoxcore::TransferReport, String>,
    report: EmulatorReport,
    link: LinkFigures,
}

fn ctoxcore_run(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    peer: &PeerBinary,
    bytes: u64,
    timeout: Duration,
) -> Result<CToxcoreRun, String> {
    let cpu = CpuMeter::start();
    let bed = testbed(profile, seed, setup)?;
    let mut options = TransferOptions::loopback(bytes);
    options.discovery = Discovery::Direct {
        recv_host: bed.addr(Side::B).to_string(),
    };
    // The C peer checks every byte against its pattern without a file on disk.
    options.check = ContentCheck::Pattern;
    options.recv = peer_in(&bed, Side::B, seed, timeout);
    options.send = peer_in(&bed, Side::A, seed, timeout);
    let started = Instant::now();
    let outcome = run_ctoxcore_transfer(peer, &options).map_err(|e| {
        format!(
            "{e} after {:.0} s",
            Instant::now().duration_since(started).as_secs_f64()
        )
    });
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    let link = link_figures(&report, drops, &cpu);
    Ok(CToxcoreRun {
        outcome,
        report,
        link,
    })
}

/// `real_single` with at least `limit` for the transfer (c-toxcore and the legacy model
/// may need far longer than the other modes' deadline, 20× the ideal time, on sat600), and
/// the IP packets the A → B link was offered.
fn real_rustox(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    file: &Path,
    bytes: u64,
    limit: Duration,
) -> Result<(CliOutcome, LinkFigures, (u64, u64)), String> {
    let cpu = CpuMeter::start();
    let bed = testbed(profile, seed, setup)?;
    let mut transfer = CliTransfer::start_receiver(&bed, transfer_spec(setup, FIRST_PORT, file))
        .map_err(|e| e.to_string())?;
    transfer.start_sender(&bed).map_err(|e| e.to_string())?;
    let outcome = transfer.wait(deadline(profile, bytes, 1).max(Instant::now() + limit));
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    let link = report.stats.a_to_b.link;
    Ok((
        outcome,
        link_figures(&report, drops, &cpu),
        (link.packets_in, link.bytes_in),
    ))
}

/// What a real rustox run gave.
pub struct RustoxRun {
    pub mbit: Option<f64>,
    pub resent: Option<u64>,
    pub rtt_ms: Option<f64>,
    /// IP packets A → B per file chunk.
    pub packets_per_chunk: f64,
    /// IP bytes A → B per file byte.
    pub wire_per_byte: f64,
    pub error: Option<String>,
    pub load: Option<f64>,
}

pub fn rustox_run(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    controller: ControllerKind,
    file: &Path,
    bytes: u64,
    limit: Duration,
) -> RustoxRun {
    let setup = Setup {
        rustox: setup.rustox.clone(),
        sim_driver: setup.sim_driver.clone(),
        controller,
        work: setup.work.clone(),
        options: setup.options.clone(),
    };
    match real_rustox(profile, seed, &setup, file, bytes, limit) {
        Ok((outcome, link, (packets, wire_bytes))) => {
            let goodput = match (&outcome.receiver, &outcome.sender) {
                (Ok(r), _) => Some(r.goodput_mbit),
                (Err(_), Ok(s)) => Some(s.goodput_mbit),
                _ => None,
            };
            let error = match (&outcome.sender, &outcome.receiver) {
                (Err(e), _) | (_, Err(e)) => Some(e.clone()),
                _ => None,
            };
            let sender = outcome.sender.as_ref().ok();
            RustoxRun {
                mbit: goodput,
                resent: sender.map(|s| s.resent_packets),
                rtt_ms: sender.and_then(|s| s.rtt_ms),
                packets_per_chunk: packets as f64 / chunks(bytes),
                wire_per_byte: wire_bytes as f64 / bytes.max(1) as f64,
                error,
                load: link.load1,
            }
        }
        Err(e) => RustoxRun {
            mbit: None,
            resent: None,
            rtt_ms: None,
            packets_per_chunk: 0.0,
            wire_per_byte: 0.0,
            error: Some(e),
            load: load_average(),
        },
    }
}

impl CToxcoreRow {
    fn new(profile: &Profile, seed: u64, bytes: u64) -> Self {
        CToxcoreRow {
            profile: profile.name.to_owned(),
            seed,
            bytes,
            ctoxcore_mbit: None,
            ctoxcore_seconds: None,
            ctoxcore_packets_per_chunk: None,
            ctoxcore_wire_per_byte: None,
            ctoxcore_partial_mb: None,
            ctoxcore_partial_bytes: None,
            ctoxcore_error: None,
            ctoxcore_link: None,
            legacy_real_mbit: None,
            legacy_real_resent: None,
            legacy_real_rtt_ms: None,
            legacy_real_packets_per_chunk: None,
            legacy_real_wire_per_byte: None,
            legacy_real_error: None,
            legacy_real_load: None,
            legacy_sim_mbit: None,
            legacy_sim_resent: None,
            legacy_sim_rtt_ms: None,
            legacy_sim_error: None,
            bbr_real_mbit: None,
            bbr_real_error: None,
            bbr_real_load: None,
        }
    }

    fn set_ctoxcore(&mut self, run: CToxcoreRun, bytes: u64) {
        let packets = run.report.stats.a_to_b.link.packets_in as f64;
        match run.outcome {
            Ok(report) => {
                let recv = report.recv.goodput_mbit.zip(report.recv.seconds);
                let send = report.send.goodput_mbit.zip(report.send.seconds);
                if let Some((mbit, seconds)) = recv.or(send) {
                    self.ctoxcore_mbit = Some(mbit);
                    self.ctoxcore_seconds = Some(seconds);
                }
                if !report.recv.verified {
                    self.ctoxcore_error = Some("the receiver's content check failed".into());
                }
                self.ctoxcore_packets_per_chunk = Some(packets / chunks(bytes));
                self.ctoxcore_wire_per_byte =
                    Some(run.report.stats.a_to_b.link.bytes_in as f64 / bytes.max(1) as f64);
            }
            Err(e) => {
                self.ctoxcore_partial_mb =
                    Some(run.report.stats.a_to_b.link.bytes_out as f64 / 1e6);
                self.ctoxcore_partial_bytes = bytes_in_timeout_message(&e);
                self.ctoxcore_error = Some(e);
            }
        }
        self.ctoxcore_link = Some(run.link);
    }

    fn set_sim(&mut self, profile: &Profile, sim: Result<TransferMetrics, SimError>) {
        match sim {
            Ok(m) => {
                let mbit = if m.completed {
                    m.goodput_efficiency * profile.rate_bps as f64 / 1e6
                } else {
                    m.bytes_delivered as f64 * 8.0 / m.transfer_time_s.max(1e-9) / 1e6
                };
                self.legacy_sim_mbit = Some(mbit);
                self.legacy_sim_resent = Some(m.packets_resent);
                self.legacy_sim_rtt_ms = m.final_srtt_ms;
                if !m.completed {
                    self.legacy_sim_error = Some(format!(
                        "did not complete: {:.1} of {:.1} MiB in {:.0} s (Mbit/s of that part)",
                        m.bytes_delivered as f64 / 1048576.0,
                        m.bytes as f64 / 1048576.0,
                        m.transfer_time_s
                    ));
                }
            }
            Err(e) => self.legacy_sim_error = Some(e.to_string()),
        }
    }
}

/// The byte count of the C peer's "no complete transfer within S s (N bytes)".
fn bytes_in_timeout_message(message: &str) -> Option<u64> {
    let end = message.find(" bytes)")?;
    let start = message[..end].rfind('(')? + 1;
    message[start..end].parse().ok()
}

/// `a / b` with two decimals, or a dash.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    opt(a.zip(b).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b), 2)
}

fn print_table(rows: &[CToxcoreRow], timeout: Duration) {
    let mut t = Table::new(&[
        "profile",
        "seed",
        "MiB",
        "c-toxcore real",
        "rustox legacy real",
        "sim legacy",
        "rustox bbr real",
        "bbr/c-toxcore",
        "legacy real/c-toxcore",
        "sim/c-toxcore",
        "c-toxcore s",
        "pkts per chunk c-tox/legacy",
        "wire B per file B c-tox/legacy",
        "legacy resent real/sim",
        "legacy RTT ms real/sim",
        "load c-tox/legacy/bbr",
    ]);
    for r in rows {
        let ctox = match (r.ctoxcore_mbit, r.ctoxcore_partial_mb) {
            (Some(m), _) => format!("{m:.2}"),
            (None, Some(mb)) => match r.ctoxcore_partial_bytes {
                Some(b) => format!(
                    "timeout ({:.1} of {:.1} MB sent, {mb:.1} MB on the link)",
                    b as f64 / 1e6,
                    r.bytes as f64 / 1e6
                ),
                None => format!("timeout ({mb:.1} MB on the link)"),
            },
            (None, None) => "–".into(),
        };
        let sim = match (&r.legacy_sim_error, r.legacy_sim_mbit) {
            (Some(_), Some(m)) => format!("{m:.2} (unfinished)"),
            (_, m) => opt(m, 2),
        };
        t.row(vec![
            r.profile.clone(),
            r.seed.to_string(),
            format!("{}", r.bytes >> 20),
            ctox,
            opt(r.legacy_real_mbit, 2),
            sim,
            opt(r.bbr_real_mbit, 2),
            ratio(r.bbr_real_mbit, r.ctoxcore_mbit),
            ratio(r.legacy_real_mbit, r.ctoxcore_mbit),
            ratio(r.legacy_sim_mbit, r.ctoxcore_mbit),
            opt(r.ctoxcore_seconds, 1),
            format!(
                "{} / {}",
                opt(r.ctoxcore_packets_per_chunk, 3),
                opt(r.legacy_real_packets_per_chunk, 3)
            ),
            format!(
                "{} / {}",
                opt(r.ctoxcore_wire_per_byte, 3),
                opt(r.legacy_real_wire_per_byte, 3)
            ),
            format!(
                "{} / {}",
                r.legacy_real_resent.map_or("–".into(), |v| v.to_string()),
                r.legacy_sim_resent.map_or("–".into(), |v| v.to_string())
            ),
            format!(
                "{} / {}",
                opt(r.legacy_real_rtt_ms, 1),
                opt(r.legacy_sim_rtt_ms, 1)
            ),
            format!(
                "{} / {} / {}",
                opt(r.ctoxcore_link.as_ref().and_then(|l| l.load1), 1),
                opt(r.legacy_real_load, 1),
                opt(r.bbr_real_load, 1)
            ),
        ]);
    }
    t.print();
    for r in rows {
        for (what, e) in [
            ("c-toxcore", &r.ctoxcore_error),
            ("rustox legacy", &r.legacy_real_error),
            ("sim legacy", &r.legacy_sim_error),
            ("rustox bbr", &r.bbr_real_error),
        ] {
            if let Some(e) = e {
                println!("- {} seed {}: {what}: {e}", r.profile, r.seed);
            }
        }
    }
    println!(
        "\nMbit/s of file bytes. c-toxcore real: tools/toxcore_file_peer.c on Debian's \
         libtoxcore 0.2.18, receiver's accept to last byte (the ~10 s to bring the friend \
         online excluded), capped at {:.0} s per peer (the rustox runs get at least as \
         long). rustox real: `rustox recv`'s accept to last byte written. Sim: the \
         simulator's legacy model, first data packet to last byte. Pkts per chunk: IP \
         packets A → B per 1371-byte chunk, for c-toxcore in the whole run (1 + resends + \
         DHT/onion traffic, which adds up on a long run), for rustox legacy real likewise \
         (1 + resends + requests). Wire B per file B: IP bytes A → B per file byte (1.042 = \
         headers only; DHT/onion packets are small). RTT: the sender's final figure (the \
         legacy model's rtt_time). Load: 1-minute load average at the end of each run (2 \
         cores).",
        timeout.as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_count_of_a_timeout_message_is_read() {
        let e = "send exited (exit status: 2) before its summary; its stderr ends with: \
                 toxcore_file_peer: error: no complete transfer within 600 s (19045932 bytes) \
                 after 600 s";
        assert_eq!(bytes_in_timeout_message(e), Some(19_045_932));
        assert_eq!(bytes_in_timeout_message("no such line"), None);
    }

    #[test]
    fn issue_sizes_are_16_mib_up_to_10_mbit_and_32_above() {
        assert_eq!(default_size(&Profile::vpn300()), 16 << 20);
        assert_eq!(default_size(&Profile::lossy()), 16 << 20);
        assert_eq!(default_size(&Profile::wan100()), 32 << 20);
        assert_eq!(default_size(&Profile::wan20()), 32 << 20);
    }
}
