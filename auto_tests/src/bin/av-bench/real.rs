//! The real-socket rows: two processes of the call peer (`tools/toxav_peer.c`), both on
//! Debian's c-toxcore 0.2.18 or both on rustox's libtoxcore.so.2, in two network namespaces
//! joined by the project's userspace link emulator with the profile's delay, rate, buffer and
//! loss (`rustox_auto_tests::emulator`), a tox-bootstrapd beside the caller.
//!
//! The caller calls, the callee answers; both send the mark signal (audio frame `i` a tone
//! of 500 + 250·(i mod 16) Hz) and the numbered video pattern. Each peer stamps what it hands
//! to the library and what the library hands back on CLOCK_MONOTONIC, which both share, so a
//! receipt minus the matching send is the mouth-to-ear latency. A receipt's mark names its
//! frame modulo 16; receipts are followed in order from the call's start
//! ([`follow_marks`]).
//!
//! The video bit rate is the caller's friend flow through the emulator (caller's port to the
//! callee's), less the audio stream's wire rate: the libraries do not report
//! encoded sizes. With a file the flow carries the file too, so it is not shown.

use std::time::{Duration, Instant};

use rustox_auto_tests::av_sim::figures::{follow_marks, CallFigures, CallLog};
use rustox_auto_tests::av_sim::FILE_BYTES;
use rustox_auto_tests::ctoxcore::av_peer::{
    av_binary_or_skip, collect, place_call, AudioFrame, SentAudio, VideoFrame, MARK_COUNT,
};
use rustox_auto_tests::ctoxcore::conference::{ConferenceBinary, Implementation};
use rustox_auto_tests::ctoxcore::conference_net::befriend;
use rustox_auto_tests::ctoxcore::conference_peer::{ConfOptions, ConfPeer, Line};
use rustox_auto_tests::ctoxcore::{BootstrapNode, BootstrapOptions, Launch};
use rustox_auto_tests::emulator::{Side, Testbed, TestbedConfig};
use rustox_simulator::Profile;

use crate::table::Row;

/// The audio bit rate both peers call and answer with, kbit/s: the simulator's media plan.
const AUDIO_KBPS: u32 = 64;
/// The video both peers send: the peer's `video` arguments after the friend (FPS W H
/// NOISE), or none.
#[derive(Debug, Clone)]
pub struct Video {
    /// The peer's `video` arguments, e.g. `30 320 240 30`: 30 fps, 320 × 240, a texture
    /// that changes every frame so the encoder has work.
    pub command: Option<String>,
    /// The bit rate both call and answer with, kbit/s.
    pub kbps: u32,
}
/// What the audio stream costs on the wire, kbit/s: per 20 ms frame about 160 bytes of
/// Opus at 64 kbit/s, the 80-byte RTP header and its id byte, net_crypto's 27 bytes and 28
/// of IPv4/UDP (296 bytes, 50 a second).
const AUDIO_WIRE_KBPS: f64 = 118.4;
/// A directory to write both peers' lines to, one file per peer and row.
const DUMP_ENV: &str = "AV_BENCH_DUMP";
/// Time after the call starts before the window opens.
const SETTLE: Duration = Duration::from_secs(2);
/// The friends find each other within this.
const ONLINE_LIMIT: Duration = Duration::from_secs(90);

/// CLOCK_MONOTONIC now, seconds (the peers' stamps).
fn monotonic() -> f64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map_or(0.0, |t| t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9)
}

fn us(t: f64) -> u64 {
    (t.max(0.0) * 1e6) as u64
}

/// One real call: `pair` is the caller's and the callee's library (`mixed`: c-toxcore
/// calls rustox).
pub fn row(
    profile: &Profile,
    video: &Video,
    pair: (Implementation, Implementation),
    seed: u64,
    seconds: u64,
    with_file: bool,
) -> Row {
    let implementation = if pair.0 == pair.1 {
        pair.0.name().to_string()
    } else {
        format!("{} → {}", pair.0.name(), pair.1.name())
    };
    // The harness's waits panic with both peers' lines; that becomes the row's error, so
    // the other rows still run.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(profile, video, pair, seed, seconds, with_file)
    }));
    let (figures, note) = match outcome {
        Ok(Ok((f, n))) => (Ok(f), n),
        Ok(Err(e)) => (Err(e), None),
        Err(panic) => (Err(crate::panic_message(panic.as_ref())), None),
    };
    Row {
        instrument: "real",
        profile: profile.name.to_string(),
        implementation,
        with_file,
        one_way_ms: profile.rtt.as_secs_f64() * 1000.0 / 2.0,
        link_bps: profile.rate_bps,
        figures,
        note,
    }
}

fn side_launch(testbed: &Testbed, side: Side) -> Launch {
    Launch::prefixed(["ip", "netns", "exec", testbed.namespace(side)])
}

fn run(
    profile: &Profile,
    video: &Video,
    pair: (Implementation, Implementation),
    seed: u64,
    seconds: u64,
    with_file: bool,
) -> Result<(CallFigures, Option<String>), String> {
    let caller = av_binary_or_skip(pair.0).ok_or("the call peer could not be built")?;
    let callee = av_binary_or_skip(pair.1).ok_or("the call peer could not be built")?;
    let testbed = Testbed::new(TestbedConfig::from_profile(profile, seed))
        .map_err(|e| format!("emulated link: {e}"))?;
    let bootstrap = BootstrapNode::start(&BootstrapOptions {
        launch: side_launch(&testbed, Side::A),
        ..BootstrapOptions::default()
    })
    .map_err(|e| format!("tox-bootstrapd: {e}"))?;
    let boot = bootstrap.spec(testbed.addr(Side::A).to_string());
    let start = |name: &str, side: Side, binary: &ConferenceBinary| {
        let options = ConfOptions {
            bootstrap: vec![boot.clone()],
            // In a namespace of its own c-toxcore's port range is free.
            port: 0,
            name: Some(name.to_string()),
            launch: side_launch(&testbed, side),
            ..ConfOptions::default()
        };
        ConfPeer::start(name, binary, &options).map_err(|e| format!("starting {name}: {e}"))
    };
    let mut a = start("caller", Side::A, &caller)?;
    let mut b = start("callee", Side::B, &callee)?;
    let (fb, fa) = befriend(&mut a, &mut b, ONLINE_LIMIT);
    let vkbps = if video.command.is_some() {
        video.kbps
    } else {
        0
    };
    place_call(
        &mut a,
        fb,
        &mut b,
        fa,
        (AUDIO_KBPS, vkbps),
        (AUDIO_KBPS, vkbps),
        Duration::from_secs(30),
    );
    for (peer, f) in [(&mut a, fb), (&mut b, fa)] {
        peer.cmd(&format!("marks {f}"))?;
        if let Some(v) = &video.command {
            peer.cmd(&format!("video {f} {v}"))?;
        }
    }
    std::thread::sleep(SETTLE);
    let window_start = monotonic();
    if with_file {
        a.cmd(&format!("sendfile {fb} {}", FILE_BYTES >> 20))?;
    }
    let longest = Instant::now() + Duration::from_secs(seconds);
    let done = |l: &Line| l.tag == "FILE_DONE" && l.num(0) == Some(fa);
    while Instant::now() < longest {
        std::thread::sleep(Duration::from_millis(50));
        if with_file && b.lines().iter().any(done) {
            break;
        }
    }
    let window_end = monotonic();
    for (peer, f) in [(&mut a, fb), (&mut b, fa)] {
        peer.cmd(&format!("tone {f} 0"))?;
        peer.cmd(&format!("video {f} 0"))?;
    }
    std::thread::sleep(Duration::from_secs(1) + profile.rtt * 2);
    let stats = testbed.stats();
    let origin_mono = monotonic() - testbed.origin().elapsed().as_secs_f64();

    let sent: Vec<SentAudio> = collect(&a, 0, SentAudio::parse)
        .into_iter()
        .filter(|s| s.friend == fb)
        .collect();
    let heard: Vec<AudioFrame> = collect(&b, 0, AudioFrame::parse)
        .into_iter()
        .filter(|h| h.friend == fa)
        .collect();
    let mut log = CallLog::default();
    for s in &sent {
        let i = s.index as usize;
        if log.audio_sent.len() <= i {
            log.audio_sent.resize(i + 1, u64::MAX);
        }
        log.audio_sent[i] = us(s.t);
    }
    let receipts: Vec<(u64, Option<u64>)> = heard.iter().map(|h| (us(h.t), h.mark)).collect();
    log.audio_received = follow_marks(&log.audio_sent, &receipts, MARK_COUNT);
    log.audio_concealed = None;
    for l in a
        .lines()
        .iter()
        .filter(|l| l.tag == "VSEND" && l.num(0) == Some(fb))
    {
        if let Some(n) = l.num(1) {
            let n = n as usize;
            if log.video_sent.len() <= n {
                log.video_sent.resize(n + 1, u64::MAX);
            }
            log.video_sent[n] = us(l.t);
        }
    }
    log.video_received = collect(&b, 0, VideoFrame::parse)
        .into_iter()
        .filter(|v| v.friend == fa)
        .filter_map(|v| v.number.map(|n| (n, us(v.t))))
        .collect();
    if with_file {
        let lines = b.lines();
        let offered = lines
            .iter()
            .find(|l| l.tag == "FILE_RECV" && l.num(0) == Some(fa))
            .map(|l| l.t);
        let finished = lines.iter().find(|l| done(l)).map(|l| l.t);
        let bytes = lines
            .iter()
            .filter(|l| {
                matches!(l.tag.as_str(), "FILE_PROGRESS" | "FILE_DONE") && l.num(0) == Some(fa)
            })
            .filter(|l| l.t <= finished.unwrap_or(window_end))
            .filter_map(|l| l.word(2).and_then(|w| w.parse::<u64>().ok()))
            .max()
            .unwrap_or(0);
        log.file = offered.map(|s| (us(s), us(finished.unwrap_or(window_end)), bytes));
    } else {
        // The caller's friend flow through the emulator in the window, less audio.
        let dir = &stats.a_to_b;
        let interval = dir.interval_ms.max(1) as f64 / 1000.0;
        let mut bytes = Vec::new();
        for flow in dir.flows.iter().filter(|f| {
            f.flow.src.port() == a.port && f.flow.dst.port() == b.port && f.flow.protocol == 17
        }) {
            for (i, &n) in flow.bytes_per_interval.iter().enumerate() {
                let t = origin_mono + (i as f64 + 0.5) * interval;
                bytes.push((us(t), n.min(u64::from(u32::MAX)) as u32));
            }
        }
        log.video_bytes = bytes;
        log.audio_bytes = Vec::new();
    }
    if let Some(dir) = std::env::var_os(DUMP_ENV) {
        // Every line of both peers, for looking into a surprising row.
        for p in [&a, &b] {
            let text: String = p
                .lines()
                .iter()
                .map(|l| format!("{:.6} {} {}\n", l.t, l.tag, l.rest))
                .collect();
            let name = format!("{}-{}-{}.txt", profile.name, with_file, p.label);
            let _ = std::fs::write(std::path::Path::new(&dir).join(name), text);
        }
    }
    let handed = (
        sent.iter()
            .filter(|s| (window_start..window_end).contains(&s.t))
            .count() as f64,
        a.lines()
            .iter()
            .filter(|l| l.tag == "VSEND" && (window_start..window_end).contains(&l.t))
            .count() as f64,
    );
    for p in [&mut a, &mut b] {
        p.quit(Duration::from_secs(5));
    }
    drop(bootstrap);
    drop(testbed);
    let mut figures = log.figures(us(window_start), us(window_end), FILE_BYTES);
    let span = (window_end - window_start).max(1e-3);
    let mut notes = vec![format!(
        "the caller handed over {:.1} audio and {:.1} video frames a second",
        handed.0 / span,
        handed.1 / span
    )];
    if !with_file {
        let flow = figures.video_kbps;
        if let Some(k) = flow {
            notes.push(format!(
                "the friend flow caller → callee carried {k:.0} kbit/s"
            ));
        }
        if video.command.is_some() {
            // The flow holds audio too: take out its share.
            figures.video_kbps = flow.map(|k| (k - AUDIO_WIRE_KBPS).max(0.0));
            figures.audio_kbps = Some(AUDIO_WIRE_KBPS);
            notes.push(format!(
                "video kbit/s: that flow less {AUDIO_WIRE_KBPS} kbit/s of audio at 64 kbit/s"
            ));
        } else {
            figures.video_kbps = None;
        }
    }
    Ok((figures, Some(notes.join("; "))))
}
