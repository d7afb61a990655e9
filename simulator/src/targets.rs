//! The transport's acceptance targets (from docs/transport.md §6 and docs/design.md's four
//! lessons), shared by the scenario tests and the benchmark table so both judge alike.

/// Minimum goodput efficiency for the BBR controller on a profile.
/// The framing ceiling is 1371/1428 = 0.96, times (1 − loss) on lossy paths.
pub fn goodput_target(profile: &str) -> Option<f64> {
    match profile {
        "lan" | "wan20" | "relay500" => Some(0.90),
        "wan100" | "vpn300" | "lossy" => Some(0.85),
        "bursty" | "sat600" => Some(0.75),
        _ => None,
    }
}

/// Profiles on which the ramp target applies.
pub const RAMP_PROFILES: [&str; 3] = ["wan20", "wan100", "vpn300"];

/// Largest time to 90 % of the bottleneck, in RTTs after the first data packet.
pub const RAMP_MAX_RTTS: f64 = 12.0;

/// Largest mean |srtt − true RTT| / true RTT (docs/design.md lesson 1).
pub const RTT_MAX_ERROR: f64 = 0.10;

/// Profiles with no loss at all, where any duplicate at the receiver is a spurious resend.
pub const NO_SPURIOUS_PROFILES: [&str; 2] = ["lan", "wan20"];

/// Profiles with random or bursty loss, where resent bytes are bounded by lost bytes.
pub const LOSSY_PROFILES: [&str; 5] = ["wan100", "vpn300", "lossy", "bursty", "sat600"];

/// Largest retransmitted ÷ lost bytes on lossy profiles (docs/design.md lesson 3).
pub const RESENT_OVER_LOST_MAX: f64 = 1.10;

/// Smallest Jain's fairness index for 2–4 equal flows through one bottleneck.
pub const JAIN_MIN: f64 = 0.9;
