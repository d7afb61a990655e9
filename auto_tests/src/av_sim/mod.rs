//! Calls in simulated time: two clients on one of the simulator's named paths
//! (`rustox_simulator::Profile`), each running the call engine (`rustox_core::av::Calls`,
//! on the deterministic stand-in codecs) on the lossless and lossy packets of one real
//! net_crypto session, optionally with a file crossing the same session during the call.
//!
//! The caller dials, calls once the session is up, the callee answers; both hand over
//! 20 ms audio frames and video pictures at their real cadence, each marked with its index
//! (`rustox_core::av::signal`: a tone per frame index modulo 16, a numbered test picture);
//! the receiving client logs when a mark comes out. The figures
//! ([`figures::CallFigures`]) are of the caller→callee direction — the one the file takes —
//! over a window of send times: after a settling time for a call alone, and from the file's
//! offer until it completes (or the call's end) for a call with a file.
//!
//! Everything derives from one seed: a run replays exactly.

pub mod figures;
pub mod host;

use std::time::Duration;

use rustox_net_crypto::Timestamp;
use rustox_simulator::{host_addr, NodeId, Profile, Simulator};

use figures::{follow_marks, CallFigures, CallLog};
use host::{CallHost, MediaPlan};
use rustox_core::av::signal::MARK_COUNT;

/// The file the measure sends during a call: 32 MiB.
pub const FILE_BYTES: u64 = 32 << 20;

/// Time after the call starts before the window opens: the engine's rate settles.
pub const SETTLE: Duration = Duration::from_secs(2);

/// One simulated call.
#[derive(Debug, Clone)]
pub struct Config {
    /// The path between the two clients.
    pub profile: Profile,
    /// Every random draw derives from this.
    pub seed: u64,
    /// Length of the measured window (a call alone), or the most a file window lasts.
    pub seconds: u64,
    /// A file crosses the same friend's session during the call.
    pub with_file: bool,
    /// Its size.
    pub file_bytes: u64,
    /// What both clients send.
    pub plan: MediaPlan,
}

impl Config {
    /// A call of `seconds` on `profile` with the default media plan.
    pub fn new(profile: Profile, seed: u64, seconds: u64, with_file: bool) -> Self {
        Config {
            profile,
            seed,
            seconds,
            with_file,
            file_bytes: FILE_BYTES,
            plan: MediaPlan::default(),
        }
    }
}

/// What one simulated call gave.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Caller → callee (the file's direction).
    pub forward: CallFigures,
    /// Callee → caller.
    pub reverse: CallFigures,
    /// The profile's bottleneck, bits/s.
    pub link_bps: u64,
    /// One-way propagation delay, ms.
    pub one_way_ms: f64,
    /// Lossy packets the sessions refused (queue full), both sides.
    pub lossy_refused: u64,
    /// The last video bit rate the caller's engine suggested, kbit/s.
    pub last_video_suggestion: Option<u32>,
    /// The lowest audio bit rate the caller's engine suggested, kbit/s.
    pub min_audio_suggestion: Option<u32>,
    /// Problems the clients ran into (refused commands, a session closing).
    pub failures: Vec<String>,
}

/// Why a simulated call could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum AvSimError {
    /// The simulator failed (an invariant, a livelock).
    #[error("simulation: {0}")]
    Sim(String),
    /// The call never started.
    #[error("the call did not start within {0:?} (failures: {1:?})")]
    NoCall(Duration, Vec<String>),
}

struct Run {
    sim: Simulator<CallHost>,
}

impl Run {
    fn to(&mut self, t: Timestamp) -> Result<(), AvSimError> {
        self.sim
            .run_until(t)
            .map_err(|e| AvSimError::Sim(format!("seed {}: {e}", self.sim.seed())))
    }
    fn concealed(&self, id: NodeId) -> u64 {
        self.sim.node(id).calls().stats().audio_frames_concealed
    }
}

/// Runs one call and measures it.
pub fn run(config: &Config) -> Result<Outcome, AvSimError> {
    let mut link = config.profile.link_config();
    link.record_samples = false;
    let mut sim: Simulator<CallHost> = Simulator::new(config.seed, link.clone());
    let plan = config.plan.clone();
    let addr_b = host_addr(2);
    let b = sim
        .add_node_with(vec![addr_b], |rng| {
            CallHost::new(Timestamp::ZERO, rng, plan.clone())
        })
        .ok_or_else(|| AvSimError::Sim("address clash".into()))?;
    let a = sim
        .add_node_with(vec![host_addr(1)], |rng| {
            CallHost::new(Timestamp::ZERO, rng, plan.clone())
        })
        .ok_or_else(|| AvSimError::Sim("address clash".into()))?;
    sim.connect(a, b, link.clone(), link);
    let (a_pk, b_pk, b_dht) = (
        sim.node(a).real_pk(),
        sim.node(b).real_pk(),
        sim.node(b).dht_pk(),
    );
    sim.with_node(b, |n, _| n.allow(a_pk));
    sim.with_node(a, |n, now| n.dial(now, addr_b, b_pk, b_dht));
    let mut run = Run { sim };

    // The call starts: both sides active.
    let start_limit = Timestamp::ZERO + Duration::from_secs(10) + config.profile.rtt * 10;
    let mut t = Timestamp::ZERO;
    let started = loop {
        let (na, nb) = (run.sim.node(a), run.sim.node(b));
        if let (Some(x), Some(y)) = (na.active_at, nb.active_at) {
            break x.max(y);
        }
        if t >= start_limit {
            let mut f = na.failures.clone();
            f.extend(nb.failures.iter().cloned());
            return Err(AvSimError::NoCall(start_limit - Timestamp::ZERO, f));
        }
        t += Duration::from_millis(10);
        run.to(t)?;
    };
    let window_start = started + SETTLE;
    let longest = window_start + Duration::from_secs(config.seconds);
    if config.with_file {
        let size = config.file_bytes;
        run.sim.with_node(a, |n, _| n.plan_file(window_start, size));
    }
    run.to(window_start)?;
    let concealed_at_start = (run.concealed(b), run.concealed(a));
    // The window: a fixed span alone; with a file, until it completes or the span ends.
    let mut window_end = longest;
    let step = Duration::from_millis(50);
    let mut t = window_start;
    while t < longest {
        t = (t + step).min(longest);
        run.to(t)?;
        if config.with_file {
            if let Some(done) = run.sim.node(b).file_done {
                window_end = done;
                break;
            }
        }
    }
    let concealed_at_end = (run.concealed(b), run.concealed(a));
    // Let the last frames of the window come out (a second beyond two round trips),
    // handing over nothing new.
    let settle_out = window_end.max(t) + Duration::from_secs(1) + config.profile.rtt * 2;
    for id in [a, b] {
        run.sim.with_node(id, |n, _| n.media_until = window_end);
    }
    run.to(settle_out)?;

    let (na, nb) = (run.sim.node(a), run.sim.node(b));
    let direction = |tx: &CallHost, rx: &CallHost, concealed: u64, file: bool| CallLog {
        audio_sent: tx.log.audio_sent.clone(),
        audio_received: follow_marks(&tx.log.audio_sent, &rx.audio_marks, u64::from(MARK_COUNT)),
        audio_concealed: Some(concealed),
        video_sent: tx.log.video_sent.clone(),
        video_received: rx.log.video_received.clone(),
        video_bytes: rx.log.video_bytes.clone(),
        audio_bytes: rx.log.audio_bytes.clone(),
        file: if file {
            rx.file_started.map(|s| {
                let end = rx.file_done.unwrap_or(window_end);
                let bytes = rx
                    .file_progress
                    .iter()
                    .take_while(|(at, _)| *at <= end)
                    .last()
                    .map_or(0, |p| p.1);
                (s.as_micros(), end.as_micros(), bytes)
            })
        } else {
            None
        },
    };
    let (from, to) = (window_start.as_micros(), window_end.as_micros());
    let fwd = direction(
        na,
        nb,
        concealed_at_end.0 - concealed_at_start.0,
        config.with_file,
    );
    let rev = direction(nb, na, concealed_at_end.1 - concealed_at_start.1, false);
    let mut failures = na.failures.clone();
    failures.extend(nb.failures.iter().map(|f| format!("callee: {f}")));
    Ok(Outcome {
        forward: fwd.figures(from, to, config.file_bytes),
        reverse: rev.figures(from, to, 0),
        link_bps: config.profile.rate_bps,
        one_way_ms: config.profile.rtt.as_secs_f64() * 1000.0 / 2.0,
        lossy_refused: na.lossy_refused + nb.lossy_refused,
        last_video_suggestion: na.video_suggestions.last().map(|s| s.1),
        min_audio_suggestion: na.audio_suggestions.iter().map(|s| s.1).min(),
        failures,
    })
}
