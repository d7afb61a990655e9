//! Checking the instrument (`emulator::calibrate`) for each profile.

use std::time::Duration;

use rustox_auto_tests::emulator::{calibrate, CalibrationSpec};
use rustox_simulator::{BottleneckConfig, Profile, FULL_WIRE_PACKET};

use crate::runs::{load_average, Setup};
use crate::table::{lateness, opt, percent, Table};
use crate::Args;

/// Length of a calibration flow.
pub const CALIBRATION_TIME: Duration = Duration::from_secs(3);

/// A perfectly paced UDP flow of full datagrams at `load` × each profile's rate: the
/// emulator's input lag, and the bottleneck drops it alone would cause
/// (`emulator::calibrate`).
pub fn run_calibration(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    load: f64,
) -> Result<(), String> {
    let mut t = Table::new(&[
        "profile",
        "offered / sent Mbit/s",
        "packets",
        "send late p50/p99/max µs (≥1 ms)",
        "entry lag p50/p99/max µs (≥1 ms)",
        "drops: schedule / send times / entry times",
        "release late p50/p99/max µs (≥1 ms)",
        "emu busy",
        "load",
    ]);
    for profile in profiles {
        let rate_bps = (profile.rate_bps as f64 * load) as u64;
        let spec = CalibrationSpec {
            rate_bps,
            packet_bytes: FULL_WIRE_PACKET as usize,
            duration: CALIBRATION_TIME,
            delay: profile.rtt / 2,
            bottleneck: BottleneckConfig {
                rate_bps: profile.rate_bps,
                queue_bytes: profile.buffer_bytes,
            },
            options: setup.options.clone(),
        };
        eprintln!(
            "real-bench: calibrating {} at {:.1} Mbit/s ...",
            profile.name,
            rate_bps as f64 / 1e6
        );
        let r = calibrate(&spec).map_err(|e| e.to_string())?;
        if args.json {
            println!(
                "{}",
                serde_json::json!({"profile": profile.name, "offered_bps": rate_bps,
                    "calibration": r, "load1": load_average()})
            );
            continue;
        }
        t.row(vec![
            profile.name.to_owned(),
            format!("{:.1} / {:.1}", rate_bps as f64 / 1e6, r.sent_bps / 1e6),
            r.packets.to_string(),
            lateness(&r.send_lateness),
            lateness(&r.entry_lag),
            format!(
                "{} / {} / {}",
                r.drops_on_schedule, r.drops_at_send_times, r.drops_at_entry_times
            ),
            lateness(&r.release_lateness),
            percent(r.emulator_busy),
            opt(load_average(), 1),
        ]);
    }
    if !args.json {
        t.print();
        println!(
            "\nA paced UDP flow through a delay-only path; its profile's bottleneck is replayed \
             offline on the schedule, on the real send times and on the emulator's entry \
             timestamps. Drops at entry times beyond those at send times are the instrument's."
        );
    }
    Ok(())
}
