//! The rows of the calls benchmark and the table they print (docs/benchmarks.md, "Calls"),
//! with the goals as pass/fail marks.

use rustox_auto_tests::av_sim::figures::CallFigures;

/// Audio p95 may exceed the one-way delay by this much on a call alone, ms.
pub const GOAL_ALONE_EXTRA_MS: f64 = 60.0;
/// … and during a file transfer on the same friend, ms.
pub const GOAL_FILE_EXTRA_MS: f64 = 100.0;
/// Audio frames lost after FEC, alone / with a file, percent (strictly below).
pub const GOAL_ALONE_LOST_PCT: f64 = 1.0;
/// See [`GOAL_ALONE_LOST_PCT`].
pub const GOAL_FILE_LOST_PCT: f64 = 2.0;
/// Video bit rate as a share of what the link carries after audio (call alone).
pub const GOAL_VIDEO_SHARE: f64 = 0.7;

/// Above this share of audio frames without a readable mark, a latency from the few that
/// are read says nothing (they may be misread tones): it is not shown.
const UNREADABLE_PCT: f64 = 50.0;

/// One measured call.
#[derive(Debug, Clone)]
pub struct Row {
    /// sim or real.
    pub instrument: &'static str,
    /// Profile name.
    pub profile: String,
    /// c-toxcore, rustox or mixed.
    pub implementation: String,
    /// A file crossed the same friend during the call.
    pub with_file: bool,
    /// One-way propagation delay, ms.
    pub one_way_ms: f64,
    /// Bottleneck, bits/s.
    pub link_bps: u64,
    /// The figures, or why there are none.
    pub figures: Result<CallFigures, String>,
    /// Anything worth a footnote (refused sends, failures).
    pub note: Option<String>,
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "–".into(), |x| format!("{x:.decimals$}"))
}

fn mark(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "–",
    }
}

impl Row {
    /// The video share of the link after audio.
    fn video_share(&self, f: &CallFigures) -> Option<f64> {
        let video = f.video_kbps? * 1000.0;
        let audio = f.audio_kbps.unwrap_or(0.0) * 1000.0;
        let room = self.link_bps as f64 - audio;
        (room > 0.0).then(|| video / room)
    }

    /// The goal marks: latency, loss, video (alone only).
    fn goals(&self, f: &CallFigures) -> [Option<bool>; 3] {
        let (extra, lost) = if self.with_file {
            (GOAL_FILE_EXTRA_MS, GOAL_FILE_LOST_PCT)
        } else {
            (GOAL_ALONE_EXTRA_MS, GOAL_ALONE_LOST_PCT)
        };
        let latency = f.audio_p95_ms.map(|p| p <= self.one_way_ms + extra);
        let loss = (f.audio_sent > 0).then_some(f.audio_lost_pct < lost);
        let video = if self.with_file {
            None
        } else {
            self.video_share(f).map(|s| s >= GOAL_VIDEO_SHARE)
        };
        [latency, loss, video]
    }
}

/// Prints the table and its footnotes.
pub fn print(rows: &[Row]) {
    println!(
        "| instrument | profile | implementation | call | audio p50 ms | audio p95 ms | p95 goal ms | lost % | concealed % | video fps | frozen | video kbit/s | of link after audio | file Mbit/s | p95 | lost | video |"
    );
    println!("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|:-:|:-:|");
    let mut notes = Vec::new();
    for r in rows {
        let mode = if r.with_file { "with file" } else { "alone" };
        let goal = r.one_way_ms
            + if r.with_file {
                GOAL_FILE_EXTRA_MS
            } else {
                GOAL_ALONE_EXTRA_MS
            };
        match &r.figures {
            Ok(f) => {
                let mut f = f.clone();
                if f.audio_lost_pct > UNREADABLE_PCT {
                    f.audio_p50_ms = None;
                    f.audio_p95_ms = None;
                    notes.push(format!(
                        "{} {} {} {mode}: {:.0} % of audio frames came out without a readable mark: no latency shown",
                        r.instrument, r.profile, r.implementation, f.audio_lost_pct
                    ));
                }
                let f = &f;
                let [g1, g2, g3] = r.goals(f);
                let file = match (f.file_mbps, r.with_file) {
                    (Some(m), true) if f.file_complete => format!("{m:.1}"),
                    (Some(m), true) => format!("{m:.1} (unfinished)"),
                    _ => "–".into(),
                };
                println!(
                    "| {} | {} | {} | {mode} | {} | {} | {goal:.0} | {:.2} | {} | {:.1} | {} | {} | {} | {file} | {} | {} | {} |",
                    r.instrument,
                    r.profile,
                    r.implementation,
                    opt(f.audio_p50_ms, 1),
                    opt(f.audio_p95_ms, 1),
                    f.audio_lost_pct,
                    opt(f.audio_concealed_pct, 2),
                    f.video_fps,
                    f.video_frozen,
                    opt(f.video_kbps, 0),
                    opt(r.video_share(f), 2),
                    mark(g1),
                    mark(g2),
                    mark(g3),
                );
            }
            Err(e) => {
                println!(
                    "| {} | {} | {} | {mode} | – | – | {goal:.0} | – | – | – | – | – | – | – | – | – | – |",
                    r.instrument, r.profile, r.implementation
                );
                notes.push(format!(
                    "{} {} {} {mode}: no figures: {e}",
                    r.instrument, r.profile, r.implementation
                ));
            }
        }
        if let Some(n) = &r.note {
            notes.push(format!(
                "{} {} {} {mode}: {n}",
                r.instrument, r.profile, r.implementation
            ));
        }
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("- {n}");
        }
    }
}
