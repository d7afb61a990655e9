//! Hidden benchmark subcommands behind the README's loopback figures.
//!
//! * `bench-crypto`: what one core can seal with the session cipher (XSalsa20-Poly1305 via
//!   the same `PrecomputedKey::encrypt_in_place` the data path calls) over 1400-byte
//!   datagrams — the ceiling a single-threaded sender cannot beat — and, for comparison,
//!   what RustCrypto's `xsalsa20poly1305` crate manages (net_crypto used it until
//!   2026-11-30; its figure is the ceiling earlier README tables were measured against).
//! * `bench-loopback`: the ceiling, then `rustox recv` and `rustox send` as two processes on
//!   127.0.0.1 with one generated file, each reporting its own CPU time; prints MiB/s and
//!   CPU seconds per GiB for each side beside the ceiling.
//!
//! Numbers are printed, never asserted: on a shared machine they vary run to run.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rand::rngs::OsRng;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey};
use serde::Deserialize;

use crate::size::parse_size;

/// Largest net_crypto datagram (protocol.md §2.5).
const DATAGRAM: usize = 1400;
/// The datagram's encrypted part: the box is `[MAC 16][ciphertext]` after 3 header bytes.
const SEALED_PLAINTEXT: usize = DATAGRAM - 3 - 16;
/// File bytes in one full datagram (FILE_DATA payload, protocol.md §3.2).
const FILE_BYTES_PER_DATAGRAM: u64 = 1371;

/// Options of `bench-crypto`.
#[derive(clap::Args, Debug)]
pub struct CryptoArgs {
    /// Datagram bytes to seal.
    #[arg(long, default_value = "512MiB", value_parser = parse_size)]
    size: u64,
}

/// Options of `bench-loopback`.
#[derive(clap::Args, Debug)]
pub struct LoopbackArgs {
    /// Size of the generated file.
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    /// Congestion controller of the sender: bbr (default), cubic, or legacy.
    #[arg(long, default_value = "bbr")]
    controller: String,
    /// Directory for the file and the received copy (default: a fresh one under /tmp,
    /// removed afterwards).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

/// The cipher ceiling.
#[derive(Debug, Clone, Copy)]
pub struct Ceiling {
    /// Datagrams sealed per CPU second.
    pub datagrams_per_s: f64,
}

impl Ceiling {
    /// File MiB per second that rate of datagrams carries.
    pub fn file_mib_per_s(&self) -> f64 {
        self.datagrams_per_s * FILE_BYTES_PER_DATAGRAM as f64 / 1048576.0
    }

    /// Datagram MiB per second.
    pub fn wire_mib_per_s(&self) -> f64 {
        self.datagrams_per_s * DATAGRAM as f64 / 1048576.0
    }
}

/// Seals `bytes` worth of datagrams on this thread with our cipher, in place as the data
/// path does, and measures its CPU time.
pub fn measure_ceiling(bytes: u64) -> Ceiling {
    let a = KeyPair::generate(&mut OsRng);
    let b = KeyPair::generate(&mut OsRng);
    let key = PrecomputedKey::new(&b.public, &a.secret);
    let mut nonce = Nonce::random(&mut OsRng);
    let mut plaintext = vec![0x5au8; SEALED_PLAINTEXT];
    measure(bytes, || {
        let mac = key.encrypt_in_place(&nonce, &mut plaintext);
        nonce.increment();
        mac[0]
    })
}

/// The same with RustCrypto's `xsalsa20poly1305` crate (in place too), for comparison.
pub fn measure_crate_ceiling(bytes: u64) -> Ceiling {
    use xsalsa20poly1305::aead::{AeadInPlace, KeyInit};
    let cipher = xsalsa20poly1305::XSalsa20Poly1305::new(&[0x17; 32].into());
    let mut nonce = Nonce::random(&mut OsRng);
    let mut plaintext = vec![0x5au8; SEALED_PLAINTEXT];
    measure(bytes, || {
        let mac = cipher
            .encrypt_in_place_detached(nonce.0.as_slice().into(), &[], &mut plaintext)
            .expect("no associated data");
        nonce.increment();
        mac[0]
    })
}

/// Runs `seal` once per datagram for `bytes` worth of datagrams and measures this thread's
/// CPU time.
fn measure(bytes: u64, mut seal: impl FnMut() -> u8) -> Ceiling {
    let count = (bytes / DATAGRAM as u64).max(1);
    let cpu = rustox_auto_tests::cpu_time::CpuTimer::start();
    let mut checksum = 0u8;
    for _ in 0..count {
        checksum ^= seal();
    }
    let secs = cpu.elapsed().as_secs_f64().max(1e-9);
    // Keeps the loop from being optimised away.
    std::hint::black_box(checksum);
    Ceiling {
        datagrams_per_s: count as f64 / secs,
    }
}

/// Runs `bench-crypto`.
pub fn run_crypto(args: CryptoArgs) -> anyhow::Result<()> {
    for (name, c) in [
        ("ours", measure_ceiling(args.size)),
        (
            "RustCrypto xsalsa20poly1305 0.9",
            measure_crate_ceiling(args.size),
        ),
    ] {
        println!(
            "XSalsa20-Poly1305 ({name}), one core, {DATAGRAM}-byte datagrams: {:.0} datagrams/s = {:.0} MiB/s on the wire = {:.0} MiB/s of file data",
            c.datagrams_per_s,
            c.wire_mib_per_s(),
            c.file_mib_per_s()
        );
    }
    Ok(())
}

/// The JSON summary line of `send` / `recv` (the fields the benchmark needs).
#[derive(Debug, Deserialize)]
struct Summary {
    bytes: u64,
    seconds: f64,
    rtt_ms: Option<f64>,
    resent_packets: u64,
    sha256: String,
    cpu_seconds: Option<f64>,
}

/// Runs `bench-loopback`.
pub fn run_loopback(args: LoopbackArgs) -> anyhow::Result<()> {
    let ceiling = (measure_ceiling(256 << 20), measure_crate_ceiling(256 << 20));
    let (dir, temporary) = match &args.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("rustox-bench-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(dir.join("in"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let result = loopback_in(&args, &dir, ceiling);
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn loopback_in(args: &LoopbackArgs, dir: &Path, ceiling: (Ceiling, Ceiling)) -> anyhow::Result<()> {
    let file = dir.join("bench.bin");
    let _ = std::fs::remove_file(dir.join("in").join("bench.bin"));
    eprintln!("generating {} ...", crate::demo::human_bytes(args.size));
    crate::demo::generate(&file, args.size)?;
    let exe = std::env::current_exe().context("cannot find the rustox binary")?;
    let mut recv = Command::new(&exe)
        .args(["recv", "--listen", "127.0.0.1:0", "--once", "--out"])
        .arg(dir.join("in"))
        .arg("--key-file")
        .arg(dir.join("recv.key"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start rustox recv")?;
    let result = (|| {
        let mut lines = BufReader::new(recv.stdout.take().context("no stdout")?).lines();
        let addr = read_field(&mut lines, "rustox recv listening on ")?;
        let key = read_field(&mut lines, "public key ")?;
        let wall = Instant::now();
        let send = Command::new(&exe)
            .args([
                "send",
                "--to",
                &addr,
                "--key",
                &key,
                "--controller",
                &args.controller,
            ])
            .arg(&file)
            .stderr(Stdio::inherit())
            .output()
            .context("cannot run rustox send")?;
        let wall = wall.elapsed();
        if !send.status.success() {
            bail!("rustox send failed");
        }
        let sent: Summary = last_json(&String::from_utf8_lossy(&send.stdout))?;
        let rest: Vec<String> = lines.collect::<Result<_, _>>()?;
        let received: Summary = last_json(&rest.join("\n"))?;
        report(args, ceiling, &sent, &received, wall);
        Ok(())
    })();
    stop(&mut recv);
    result
}

fn read_field(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    prefix: &str,
) -> anyhow::Result<String> {
    for line in lines {
        let line = line?;
        if let Some(rest) = line.strip_prefix(prefix) {
            return Ok(rest.trim().to_owned());
        }
    }
    bail!("rustox recv ended before printing {prefix:?}")
}

fn last_json(text: &str) -> anyhow::Result<Summary> {
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .context("no JSON summary line")?;
    Ok(serde_json::from_str(line)?)
}

fn stop(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn report(
    args: &LoopbackArgs,
    (ceiling, crate_ceiling): (Ceiling, Ceiling),
    sent: &Summary,
    received: &Summary,
    wall: Duration,
) {
    let gib = sent.bytes as f64 / (1u64 << 30) as f64;
    let mib = sent.bytes as f64 / 1048576.0;
    let rate = |s: &Summary| s.bytes as f64 / 1048576.0 / s.seconds.max(1e-9);
    let per_gib = |s: &Summary| {
        s.cpu_seconds
            .map_or("-".into(), |c| format!("{:.2}", c / gib))
    };
    println!(
        "loopback send → recv, {:.0} MiB, controller {}, measured {}",
        mib,
        args.controller,
        utc_now()
    );
    println!(
        "cipher ceiling (one core, XSalsa20-Poly1305, 1400 B): {:.0} MiB/s of file data ({:.0} MiB/s on the wire); RustCrypto's crate: {:.0} MiB/s of file data",
        ceiling.file_mib_per_s(),
        ceiling.wire_mib_per_s(),
        crate_ceiling.file_mib_per_s()
    );
    let share = |r: f64| {
        format!(
            "{:.0} % of the ceiling, {:.0} % of the crate's",
            r / ceiling.file_mib_per_s() * 100.0,
            r / crate_ceiling.file_mib_per_s() * 100.0
        )
    };
    println!(
        "sender:   {:.0} MiB/s (offer → last ack; {}), CPU {} s/GiB, RTT {} ms, resent {}",
        rate(sent),
        share(rate(sent)),
        per_gib(sent),
        sent.rtt_ms.map_or("-".into(), |r| format!("{r:.3}")),
        sent.resent_packets
    );
    println!(
        "receiver: {:.0} MiB/s (accept → last byte written), CPU {} s/GiB",
        rate(received),
        per_gib(received)
    );
    let end_to_end = mib / wall.as_secs_f64();
    println!(
        "end to end (process start → exit of send, the sender's SHA-256 pass included): {:.0} MiB/s; {}",
        end_to_end,
        share(end_to_end)
    );
    println!(
        "SHA-256 {} ({})",
        if sent.sha256 == received.sha256 {
            "match"
        } else {
            "MISMATCH"
        },
        sent.sha256
    );
}

/// The current UTC time as `YYYY-MM-DD HH:MM` (civil-from-days, Howard Hinnant's algorithm).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}
