//! The simulator's rows: rustox's call engine on the stand-in codecs, over one net_crypto
//! session per call on the profile's link model ([`rustox_auto_tests::av_sim`]).

use std::panic::{catch_unwind, AssertUnwindSafe};

use rustox_auto_tests::av_sim::{run, Config};
use rustox_simulator::Profile;

use crate::table::Row;

/// One simulated call. A panic in the engine becomes the row's error, so the other rows
/// still print.
pub fn row(
    profile: &Profile,
    seed: u64,
    seconds: u64,
    with_file: bool,
    video_kbps: u32,
    follow: bool,
    path_estimates: bool,
) -> Row {
    let mut config = Config::new(profile.clone(), seed, seconds, with_file);
    config.plan.video_kbps = video_kbps;
    config.plan.follow_suggestions = follow;
    config.plan.path_estimates = path_estimates;
    let outcome = catch_unwind(AssertUnwindSafe(|| run(&config)));
    let (figures, note) = match outcome {
        Ok(Ok(o)) => {
            let mut notes = Vec::new();
            if o.lossy_refused > 0 {
                notes.push(format!(
                    "{} lossy packets refused by the session",
                    o.lossy_refused
                ));
            }
            if let Some(v) = o.last_video_suggestion {
                notes.push(format!("last video bit rate suggested {v} kbit/s"));
            }
            if let Some(a) = o.min_audio_suggestion {
                notes.push(format!("lowest audio bit rate suggested {a} kbit/s"));
            }
            if !o.failures.is_empty() {
                let shown: Vec<_> = o.failures.iter().take(3).cloned().collect();
                notes.push(format!(
                    "{} failures, first: {}",
                    o.failures.len(),
                    shown.join("; ")
                ));
            }
            (Ok(o.forward), (!notes.is_empty()).then(|| notes.join("; ")))
        }
        Ok(Err(e)) => (Err(e.to_string()), None),
        Err(panic) => (
            Err(format!(
                "the engine panicked: {}",
                crate::panic_message(panic.as_ref())
            )),
            None,
        ),
    };
    Row {
        instrument: "sim",
        profile: profile.name.to_string(),
        implementation: if path_estimates {
            "rustox".into()
        } else {
            "rustox, no path estimate".into()
        },
        with_file,
        one_way_ms: profile.rtt.as_secs_f64() * 1000.0 / 2.0,
        link_bps: profile.rate_bps,
        figures,
        note,
    }
}
