//! The call peer (`tools/toxav_peer.c`): one ToxAV client built from one source against
//! Debian's `tox.h` and `toxav.h`, pinned by RPATH either to Debian's libtoxcore.so.2
//! (c-toxcore 0.2.18) or to a copy of rustox's, so a call test compares the libraries and not
//! two clients. Its options, READY line and friend/conference commands are those of the
//! conference peer, so [`ConfPeer`] drives it; this module adds the build, a net of peers on
//! one tox-bootstrapd ([`AvNet`]), the readers of its frame lines ([`AudioFrame`],
//! [`VideoFrame`], [`GroupFrame`], [`SentAudio`]) and the waits a call test is written with.
//!
//! The C file's header documents the commands, the lines, the tone analysis, the mark signal
//! (sent frame `i` is a tone of 400 + 100·(i mod 16) Hz) and the video pattern (a frame's
//! number in a 4 × 5 grid of luma cells with a check nibble), the same as rustox's
//! `core/src/av/signal.rs`; [`mark_latencies`] pairs marks sent and heard for a mouth-to-ear
//! latency.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustox_testkit::c::{self, pkg_config, Cc};
use rustox_testkit::net::free_udp_port;
use sha2::{Digest, Sha256};

use super::bootstrap::{BootstrapNode, BootstrapOptions, BootstrapSpec};
use super::build::{default_cache_dir, unique_suffix};
use super::conference::{rustox_library, ConferenceBinary, Implementation};
use super::conference_peer::{ConfOptions, ConfPeer, Line};
use super::error::CToxcoreError;
use super::launch::Launch;

/// The peer's source.
pub const AV_PEER_SOURCE: &str = include_str!("../../tools/toxav_peer.c");

/// Optimised like a release client; warnings shown, never fatal.
const CFLAGS: [&str; 4] = ["-O2", "-std=c11", "-Wall", "-Wextra"];

/// How often a wait on a count of lines looks again.
const POLL: Duration = Duration::from_millis(100);

/// The mark signal's first tone and spacing (the C file's header).
pub const MARK_BASE_HZ: f64 = 400.0;
/// The spacing of the mark tones.
pub const MARK_STEP_HZ: f64 = 100.0;
/// How many marks before they repeat (one per 20 ms frame: 320 ms).
pub const MARK_COUNT: u64 = 16;

/// The first 8 bytes of the SHA-256 of `parts` (each followed by a 0 byte), in hex.
fn tag(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for p in parts {
        hasher.update(p);
        hasher.update([0]);
    }
    hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write_then_rename(dest: &Path, bytes: &[u8]) -> Result<(), CToxcoreError> {
    let tmp = dest.with_extension(format!("tmp-{}", unique_suffix()));
    std::fs::write(&tmp, bytes)
        .map_err(|e| CToxcoreError::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, dest)
        .map_err(|e| CToxcoreError::io(format!("renaming to {}", dest.display()), e))
}

/// Compiles the peer against Debian's headers, linked with `-L lib_dir -ltoxcore` and pinned
/// to `lib_dir`; cached under a name from the source, header, flags and `key`.
fn compile(name: &str, lib_dir: &Path, key: &str) -> Result<PathBuf, CToxcoreError> {
    let cache = default_cache_dir();
    let cflags = pkg_config("pkg-config", &["--cflags"], &["toxcore"])
        .map_err(|e| CToxcoreError::from_build(e, Path::new(name)))?;
    let binary = cache.join(format!(
        "{name}-{}",
        tag(&[
            AV_PEER_SOURCE.as_bytes(),
            c::HEADER.as_bytes(),
            cflags.join(" ").as_bytes(),
            key.as_bytes(),
        ])
    ));
    if binary.is_file() {
        return Ok(binary);
    }
    std::fs::create_dir_all(&cache)
        .map_err(|e| CToxcoreError::io(format!("creating {}", cache.display()), e))?;
    let source = cache.join(format!("{name}-{}.c", unique_suffix()));
    write_then_rename(&source, AV_PEER_SOURCE.as_bytes())?;
    let built = Cc::new("cc")
        .args(CFLAGS)
        .args(cflags)
        .testkit_header()
        .arg(&source)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-ltoxcore")
        .arg("-lm")
        .pin_library_dir(lib_dir)
        .build(&binary)
        .map_err(|e| CToxcoreError::from_build(e, &source));
    let _ = std::fs::remove_file(&source);
    built.map(|()| binary)
}

/// Builds (or reuses) the peer on Debian's c-toxcore 0.2.18.
pub fn ctoxcore_av_binary() -> Result<ConferenceBinary, CToxcoreError> {
    let dir = c::library_dir("pkg-config", "toxcore")
        .map_err(|e| CToxcoreError::from_build(e, Path::new("toxav_peer")))?;
    let dir = PathBuf::from(dir);
    let path = compile("toxav_peer-ctoxcore", &dir, &dir.display().to_string())?;
    Ok(ConferenceBinary {
        implementation: Implementation::CToxcore,
        path,
        library: dir.join("libtoxcore.so.2"),
    })
}

/// Builds (or reuses) the peer on rustox's library (built first when missing or stale), pinned
/// to a copy named after the library's hash: a rebuild never changes a running peer's library.
pub fn rustox_av_binary() -> Result<ConferenceBinary, CToxcoreError> {
    let lib = rustox_library()?;
    let bytes = std::fs::read(&lib)
        .map_err(|e| CToxcoreError::io(format!("reading {}", lib.display()), e))?;
    let lib_tag = tag(&[&bytes]);
    let lib_dir = default_cache_dir().join(format!("rustox-lib-{lib_tag}"));
    let pinned = lib_dir.join("libtoxcore.so.2");
    if !pinned.is_file() {
        std::fs::create_dir_all(&lib_dir)
            .map_err(|e| CToxcoreError::io(format!("creating {}", lib_dir.display()), e))?;
        write_then_rename(&pinned, &bytes)?;
    }
    // The linker looks for `libtoxcore.so`; the loader for the SONAME, `libtoxcore.so.2`.
    let link_name = lib_dir.join("libtoxcore.so");
    if !link_name.exists() {
        let _ = std::os::unix::fs::symlink("libtoxcore.so.2", &link_name);
    }
    let path = compile("toxav_peer-rustox", &lib_dir, &lib_tag)?;
    Ok(ConferenceBinary {
        implementation: Implementation::Rustox,
        path,
        library: pinned,
    })
}

/// The peer for `implementation`, built once per process; `None` (after
/// [`rustox_testkit::ci::skip_or_fail`]) when a dependency is missing outside CI.
pub fn av_binary_or_skip(implementation: Implementation) -> Option<ConferenceBinary> {
    static BUILT: OnceLock<Mutex<Vec<ConferenceBinary>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(Vec::new()));
    let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(b) = built.iter().find(|b| b.implementation == implementation) {
        return Some(b.clone());
    }
    let result = match implementation {
        Implementation::CToxcore => ctoxcore_av_binary(),
        // Debian's headers are needed for both; c-toxcore's absence is the clearer report.
        Implementation::Rustox => ctoxcore_av_binary().and_then(|_| rustox_av_binary()),
    };
    match result {
        Ok(b) => {
            built.push(b.clone());
            Some(b)
        }
        Err(e) if e.is_missing_dependency() => {
            rustox_testkit::ci::skip_or_fail(format!("{e} (apt-get install libtoxcore-dev)"));
            None
        }
        Err(e) => panic!(
            "cannot build the call peer on {}: {e}",
            implementation.name()
        ),
    }
}

/// Call peers on either implementation around one tox-bootstrapd on loopback.
pub struct AvNet {
    /// The DHT node every peer bootstraps from.
    pub bootstrap: BootstrapNode,
    binaries: Vec<ConferenceBinary>,
}

impl AvNet {
    /// Builds the peer for each implementation in `needed` and starts tox-bootstrapd on a
    /// free port; `None` (after `skip_or_fail`) when something is missing outside CI.
    pub fn start(needed: &[Implementation]) -> Option<AvNet> {
        let mut binaries = Vec::new();
        for &i in needed {
            binaries.push(av_binary_or_skip(i)?);
        }
        let bootstrap = match BootstrapNode::start(&BootstrapOptions::default()) {
            Ok(b) => b,
            Err(e) if e.is_missing_dependency() => {
                rustox_testkit::ci::skip_or_fail(e);
                return None;
            }
            Err(e) => panic!("tox-bootstrapd: {e}"),
        };
        Some(AvNet {
            bootstrap,
            binaries,
        })
    }

    /// The bootstrap node as the peers reach it.
    pub fn spec(&self) -> BootstrapSpec {
        self.bootstrap.spec("127.0.0.1")
    }

    /// The peer program for `implementation`.
    pub fn binary(&self, implementation: Implementation) -> &ConferenceBinary {
        self.binaries
            .iter()
            .find(|b| b.implementation == implementation)
            .unwrap_or_else(|| panic!("{} was not built for this net", implementation.name()))
    }

    /// Starts a peer named `name` on a free port, bootstrapped to the node.
    pub fn peer(&self, name: &str, implementation: Implementation) -> ConfPeer {
        self.peer_launched(name, implementation, Launch::direct())
    }

    /// [`AvNet::peer`] started through `launch` (e.g. inside a network namespace).
    pub fn peer_launched(
        &self,
        name: &str,
        implementation: Implementation,
        launch: Launch,
    ) -> ConfPeer {
        let options = ConfOptions {
            bootstrap: vec![self.spec()],
            port: free_udp_port(),
            name: Some(name.to_string()),
            launch,
            ..ConfOptions::default()
        };
        ConfPeer::start(name, self.binary(implementation), &options)
            .unwrap_or_else(|e| panic!("starting {name}: {e}"))
    }
}

/// A received audio frame (`AFRAME`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AudioFrame {
    /// CLOCK_MONOTONIC seconds when the library handed it over.
    pub t: f64,
    /// From this friend.
    pub friend: u32,
    /// Samples per channel.
    pub samples: u32,
    /// Channels.
    pub channels: u32,
    /// Sampling rate.
    pub rate: u32,
    /// Dominant frequency of channel 0 (0 when silent).
    pub hz: f64,
    /// The mark it carries, if any.
    pub mark: Option<u64>,
    /// RMS level.
    pub rms: f64,
}

fn float(l: &Line, i: usize) -> Option<f64> {
    l.word(i).and_then(|w| w.parse().ok())
}

fn mark(l: &Line, i: usize) -> Option<u64> {
    l.word(i).and_then(|w| w.parse().ok())
}

impl AudioFrame {
    /// Reads an `AFRAME` line.
    pub fn parse(l: &Line) -> Option<AudioFrame> {
        if l.tag != "AFRAME" {
            return None;
        }
        Some(AudioFrame {
            t: l.t,
            friend: l.num(0)?,
            samples: l.num(1)?,
            channels: l.num(2)?,
            rate: l.num(3)?,
            hz: float(l, 4)?,
            mark: mark(l, 5),
            rms: float(l, 6)?,
        })
    }
}

/// A received conference audio frame (`GFRAME`).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupFrame {
    /// CLOCK_MONOTONIC seconds when the library handed it over.
    pub t: f64,
    /// The conference.
    pub conf: u32,
    /// The peer number.
    pub peer: u32,
    /// The peer's public key (upper-case hex).
    pub pk: String,
    /// Dominant frequency (0 when silent).
    pub hz: f64,
    /// The mark it carries, if any.
    pub mark: Option<u64>,
    /// RMS level.
    pub rms: f64,
}

impl GroupFrame {
    /// Reads a `GFRAME` line.
    pub fn parse(l: &Line) -> Option<GroupFrame> {
        if l.tag != "GFRAME" {
            return None;
        }
        Some(GroupFrame {
            t: l.t,
            conf: l.num(0)?,
            peer: l.num(1)?,
            pk: l.word(2)?.to_string(),
            hz: float(l, 6)?,
            mark: mark(l, 7),
            rms: float(l, 8)?,
        })
    }
}

/// A received video frame (`VFRAME`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoFrame {
    /// CLOCK_MONOTONIC seconds when the library handed it over.
    pub t: f64,
    /// From this friend.
    pub friend: u32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// The number the pattern encodes; `None` when the picture is not a readable pattern.
    pub number: Option<u32>,
}

impl VideoFrame {
    /// Reads a `VFRAME` line.
    pub fn parse(l: &Line) -> Option<VideoFrame> {
        if l.tag != "VFRAME" {
            return None;
        }
        Some(VideoFrame {
            t: l.t,
            friend: l.num(0)?,
            width: l.num(1)?,
            height: l.num(2)?,
            number: match l.word(3)? {
                "-1" => None,
                w => Some(w.parse().ok()?),
            },
        })
    }
}

/// An audio frame handed to `toxav_audio_send_frame` (`ASEND`) or `toxav_group_send_audio`
/// (`GSEND`; `friend` is then the conference).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SentAudio {
    /// CLOCK_MONOTONIC seconds just before the call.
    pub t: f64,
    /// The friend (or conference).
    pub friend: u32,
    /// The frame's index in its stream.
    pub index: u64,
    /// Its tone.
    pub hz: f64,
}

impl SentAudio {
    /// Reads an `ASEND` or `GSEND` line.
    pub fn parse(l: &Line) -> Option<SentAudio> {
        if l.tag != "ASEND" && l.tag != "GSEND" {
            return None;
        }
        Some(SentAudio {
            t: l.t,
            friend: l.num(0)?,
            index: l.word(1)?.parse().ok()?,
            hz: float(l, 2)?,
        })
    }
}

/// `peer`'s lines from index `from` on that `read` accepts.
pub fn collect<T>(peer: &ConfPeer, from: usize, read: impl Fn(&Line) -> Option<T>) -> Vec<T> {
    peer.lines().iter().skip(from).filter_map(read).collect()
}

/// Whether `hz` is within `tolerance` (a fraction) of `want`.
pub fn near(hz: f64, want: f64, tolerance: f64) -> bool {
    (hz - want).abs() <= want * tolerance
}

/// Waits until `count(lines from `from`)` reaches `n`; the count on success, else an error
/// with `peer`'s report.
pub fn wait_count(
    peer: &ConfPeer,
    from: usize,
    awaited: &str,
    n: usize,
    limit: Duration,
    count: impl Fn(&[Line]) -> usize,
) -> Result<usize, String> {
    let deadline = Instant::now() + limit;
    loop {
        let lines = peer.lines();
        let have = count(lines.get(from..).unwrap_or(&[]));
        if have >= n {
            return Ok(have);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{}: {have} of {n} {awaited} after {limit:?}\n{}",
                peer.label,
                peer.report()
            ));
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until `peer` received `n` audio frames from `friend` at `hz` (± `tolerance`).
pub fn wait_tone(
    peer: &ConfPeer,
    from: usize,
    friend: u32,
    hz: f64,
    tolerance: f64,
    n: usize,
    limit: Duration,
) -> Result<usize, String> {
    wait_count(
        peer,
        from,
        &format!("audio frames from friend {friend} at {hz} Hz"),
        n,
        limit,
        |lines| {
            lines
                .iter()
                .filter_map(AudioFrame::parse)
                .filter(|f| f.friend == friend && near(f.hz, hz, tolerance))
                .count()
        },
    )
}

/// Waits until `peer` received `n` recognisable video frames from `friend` of `width` x
/// `height`.
pub fn wait_video(
    peer: &ConfPeer,
    from: usize,
    friend: u32,
    (width, height): (u32, u32),
    n: usize,
    limit: Duration,
) -> Result<usize, String> {
    wait_count(
        peer,
        from,
        &format!("recognisable {width}x{height} video frames from friend {friend}"),
        n,
        limit,
        |lines| {
            lines
                .iter()
                .filter_map(VideoFrame::parse)
                .filter(|f| {
                    f.friend == friend
                        && f.number.is_some()
                        && (f.width, f.height) == (width, height)
                })
                .count()
        },
    )
}

/// Waits until `peer` received `n` conference audio frames in `conf` from the peer with key
/// `pk` at `hz` (± `tolerance`), counted from line `from` on.
#[allow(clippy::too_many_arguments)]
pub fn wait_group_tone(
    peer: &ConfPeer,
    from: usize,
    conf: u32,
    pk: &str,
    hz: f64,
    tolerance: f64,
    n: usize,
    limit: Duration,
) -> Result<usize, String> {
    wait_count(
        peer,
        from,
        &format!(
            "conference {conf} audio frames from {} at {hz} Hz",
            &pk[..8]
        ),
        n,
        limit,
        |lines| {
            lines
                .iter()
                .filter_map(GroupFrame::parse)
                .filter(|f| f.conf == conf && f.pk == pk && near(f.hz, hz, tolerance))
                .count()
        },
    )
}

/// The first `STATE` line for `friend` from `from` on whose state `accept` takes.
pub fn wait_state(
    peer: &ConfPeer,
    from: usize,
    friend: u32,
    awaited: &str,
    limit: Duration,
    accept: impl Fn(u32) -> bool,
) -> Result<Line, String> {
    peer.wait_from(from, awaited, limit, |l| {
        l.tag == "STATE" && l.num(0) == Some(friend) && l.num(1).is_some_and(&accept)
    })
}

/// The first `SENDSTATE` line for `friend` and `kind` (`audio`/`video`) from `from` on with
/// result `code` (`Toxav_Err_Send_Frame`).
pub fn wait_send_state(
    peer: &ConfPeer,
    from: usize,
    friend: u32,
    kind: &str,
    code: u32,
    limit: Duration,
) -> Result<Line, String> {
    peer.wait_from(
        from,
        &format!("sending {kind} to friend {friend} with result {code}"),
        limit,
        |l| {
            l.tag == "SENDSTATE"
                && l.num(0) == Some(friend)
                && l.word(1) == Some(kind)
                && l.num(2) == Some(code)
        },
    )
}

/// `Toxav_Friend_Call_State`'s bits (toxav.h).
pub mod call_state {
    /// The call ended with an error (or the friend went offline).
    pub const ERROR: u32 = 1;
    /// The call ended.
    pub const FINISHED: u32 = 2;
    /// The friend sends audio.
    pub const SENDING_A: u32 = 4;
    /// The friend sends video.
    pub const SENDING_V: u32 = 8;
    /// The friend accepts audio.
    pub const ACCEPTING_A: u32 = 16;
    /// The friend accepts video.
    pub const ACCEPTING_V: u32 = 32;
}

/// `Toxav_Err_Send_Frame`'s codes a call test waits for (toxav.h).
pub mod send_result {
    /// Sent.
    pub const OK: u32 = 0;
    /// No call with that friend.
    pub const FRIEND_NOT_IN_CALL: u32 = 3;
    /// Our side or the friend has that kind turned off (paused, muted, hidden).
    pub const PAYLOAD_TYPE_DISABLED: u32 = 6;
}

/// The call state a caller sees once the callee answered with these bit rates: the callee
/// accepts audio and video, and sends what it has a bit rate for (toxav.c's `toxav_answer`).
pub fn answered_state(audio_kbps: u32, video_kbps: u32) -> u32 {
    let mut s = call_state::ACCEPTING_A | call_state::ACCEPTING_V;
    if audio_kbps > 0 {
        s |= call_state::SENDING_A;
    }
    if video_kbps > 0 {
        s |= call_state::SENDING_V;
    }
    s
}

/// `caller` calls its friend `callee_at_caller` with `call` bit rates (kbit/s: audio,
/// video); `callee` must see the call from `caller_at_callee` with the right kinds, answers
/// with `answer` bit rates, and the caller must see the answered state. Panics with both
/// peers' reports on a failure.
pub fn place_call(
    caller: &mut ConfPeer,
    callee_at_caller: u32,
    callee: &mut ConfPeer,
    caller_at_callee: u32,
    call: (u32, u32),
    answer: (u32, u32),
    limit: Duration,
) {
    let callee_from = callee.mark();
    let caller_from = caller.mark();
    caller.must(&format!("call {callee_at_caller} {} {}", call.0, call.1));
    let ring = callee
        .wait_from(callee_from, "CALL", limit, |l| {
            l.tag == "CALL" && l.num(0) == Some(caller_at_callee)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", caller.report()));
    assert_eq!(
        (ring.num(1), ring.num(2)),
        (Some(u32::from(call.0 > 0)), Some(u32::from(call.1 > 0))),
        "{} sees the call's audio and video flags as the caller's bit rates say",
        callee.label
    );
    callee.must(&format!(
        "answer {caller_at_callee} {} {}",
        answer.0, answer.1
    ));
    let want = answered_state(answer.0, answer.1);
    let state = wait_state(
        caller,
        caller_from,
        callee_at_caller,
        "the answered call's state",
        limit,
        |s| s != 0,
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", callee.report()));
    assert_eq!(
        state.num(1),
        Some(want),
        "{}'s first call state after {} answered with {answer:?}\n{}\n{}",
        caller.label,
        callee.label,
        caller.report(),
        callee.report()
    );
}

/// Asserts that `peer` printed no line `what` accepts stamped within `[from_t, to_t]`.
pub fn assert_none_between(
    peer: &ConfPeer,
    from_t: f64,
    to_t: f64,
    described: &str,
    what: impl Fn(&Line) -> bool,
) {
    let lines = peer.lines();
    let found: Vec<&Line> = lines
        .iter()
        .filter(|l| l.t >= from_t && l.t <= to_t && what(l))
        .collect();
    assert!(
        found.is_empty(),
        "{}: {} {described} in {:.2} s from {from_t:.3}, expected none; the first: {:?}\n{}",
        peer.label,
        found.len(),
        to_t - from_t,
        found.first(),
        peer.report()
    );
}

/// Runs `command` on `peer` (panicking on an ERR) and returns the stamp of its OK line.
pub fn must_at(peer: &mut ConfPeer, command: &str) -> f64 {
    let from = peer.mark();
    peer.must(command);
    let name = command.split(' ').next().unwrap_or("");
    peer.lines()
        .iter()
        .skip(from)
        .find(|l| l.tag == "OK" && l.word(0) == Some(name))
        .map_or(0.0, |l| l.t)
}

/// `r`'s value, or a panic with its error and the reports of `others` (the other side of a
/// call: what it printed explains what this side missed).
pub fn or_report<T>(r: Result<T, String>, others: &[&ConfPeer]) -> T {
    r.unwrap_or_else(|e| {
        let reports: Vec<String> = others.iter().map(|p| p.report()).collect();
        panic!("{e}\n{}", reports.join("\n"))
    })
}

/// Asserts that no `tag` (`ABITRATE`/`VBITRATE`) event of `peer` suggests less than `floor`
/// kbit/s. toxav.h's bit-rate callbacks report a link too saturated for the current rates, and
/// c-toxcore reports one only when the receiver loses at least 10 % (toxav.c `callback_bwc`):
/// on loopback a suggestion below the lowest rate a test set tells a client to starve a call
/// for nothing.
pub fn assert_no_rate_cut(peer: &ConfPeer, tag: &str, floor: u32) {
    let cuts: Vec<String> = peer
        .lines()
        .iter()
        .filter(|l| l.tag == tag && l.num(1).is_some_and(|r| r < floor))
        .map(|l| format!("{:.3} {} {}", l.t, l.tag, l.rest))
        .collect();
    assert!(
        cuts.is_empty(),
        "{}: bit-rate events below {floor} kbit/s on an unsaturated loopback link: {cuts:?}",
        peer.label
    );
}

/// The stamp of `peer`'s last line (its clock is the machine's CLOCK_MONOTONIC).
pub fn last_stamp(peer: &ConfPeer) -> f64 {
    peer.lines().last().map_or(0.0, |l| l.t)
}

/// Mouth-to-ear latencies in seconds: each received frame whose mark `k` changed from the
/// frame before it is matched with the last frame sent before it whose index is `k` mod 16;
/// only the first receipt of a mark is counted (a codec spreads a frame over two). Receipts
/// with no sent frame of that mark within 16 frames before them are skipped.
pub fn mark_latencies(sent: &[SentAudio], heard: &[(f64, Option<u64>)]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut previous = None;
    for &(t, m) in heard {
        let Some(k) = m else {
            previous = None;
            continue;
        };
        if previous == Some(k) {
            continue;
        }
        previous = Some(k);
        let before = sent.partition_point(|s| s.t <= t);
        let window = before.saturating_sub(MARK_COUNT as usize);
        if let Some(s) = sent[window..before]
            .iter()
            .rev()
            .find(|s| s.index % MARK_COUNT == k)
        {
            out.push(t - s.t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        let (t, after) = text.split_once(' ').unwrap();
        let (tag, rest) = after.split_once(' ').unwrap();
        Line {
            t: t.parse().unwrap(),
            tag: tag.to_string(),
            rest: rest.to_string(),
        }
    }

    #[test]
    fn frame_lines_read_back() {
        let a = AudioFrame::parse(&line("3.5 AFRAME 1 960 1 48000 440.5 -1 7012")).unwrap();
        assert_eq!((a.friend, a.samples, a.rate), (1, 960, 48000));
        assert_eq!((a.hz, a.mark, a.rms), (440.5, None, 7012.0));
        let m = AudioFrame::parse(&line("3.5 AFRAME 0 960 1 48000 600.0 2 7000")).unwrap();
        assert_eq!(m.mark, Some(2));
        let v = VideoFrame::parse(&line("4.0 VFRAME 0 320 240 77 80")).unwrap();
        assert_eq!((v.width, v.height, v.number), (320, 240, Some(77)));
        let v = VideoFrame::parse(&line("4.0 VFRAME 0 320 240 -1 80")).unwrap();
        assert_eq!(v.number, None);
        let g = GroupFrame::parse(&line("5.0 GFRAME 0 2 ABCD 960 1 48000 1000.0 2 6000")).unwrap();
        assert_eq!(
            (g.conf, g.peer, g.pk.as_str(), g.hz),
            (0, 2, "ABCD", 1000.0)
        );
        let s = SentAudio::parse(&line("6.0 ASEND 0 17 750.0")).unwrap();
        assert_eq!((s.index, s.hz), (17, 750.0));
        assert!(AudioFrame::parse(&line("1.0 VFRAME 0 1 1 1 1 1")).is_none());
        assert!(AudioFrame::parse(&line("1.0 AFRAME 0 x")).is_none());
    }

    #[test]
    fn marks_pair_with_the_last_frame_sent_with_that_index() {
        // Frames every 20 ms from t = 10; each heard 70 ms later, twice (a codec's spread).
        let sent: Vec<SentAudio> = (0..40)
            .map(|i| SentAudio {
                t: 10.0 + 0.02 * i as f64,
                friend: 0,
                index: i,
                hz: MARK_BASE_HZ + MARK_STEP_HZ * (i % MARK_COUNT) as f64,
            })
            .collect();
        let mut heard = Vec::new();
        for s in &sent {
            heard.push((s.t + 0.07, Some(s.index % MARK_COUNT)));
            heard.push((s.t + 0.08, Some(s.index % MARK_COUNT)));
        }
        heard.push((20.0, None));
        let l = mark_latencies(&sent, &heard);
        assert_eq!(l.len(), 40);
        assert!(l.iter().all(|d| (d - 0.07).abs() < 1e-9), "{l:?}");
        // A mark nothing was sent with before it is skipped.
        assert!(mark_latencies(&sent, &[(9.0, Some(3))]).is_empty());
    }
}
