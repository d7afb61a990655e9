//! One seed for a whole run, and how a failing run tells you to replay it.
//!
//! Every random choice — each node's RNG, each link's loss, jitter and corruption — draws from
//! a ChaCha8 stream derived from the run's seed and the object's index (FoundationDB-style
//! simulation, docs/transport.md §4). The same seed therefore replays the same packet trace.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// The environment variable that overrides a test's seed, so a failure can be replayed.
pub const SEED_ENV: &str = "SIM_SEED";

/// Which family of objects a stream belongs to; keeps node 3 and link 3 on different streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// A node's own randomness (keys, nonces, application choices).
    Node = 1,
    /// A link's loss, jitter, duplication, reordering and corruption draws.
    Link = 2,
    /// Whatever the scenario itself needs (e.g. choosing which peers to ping).
    Scenario = 3,
    /// A node's simulated driver (timer lateness draws, driver_model.rs).
    Driver = 4,
}

/// The ChaCha8 stream for object `index` of `kind` under `seed`.
pub fn derive_rng(seed: u64, kind: StreamKind, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // ChaCha's 64-bit stream id: kind in the top byte, index below — disjoint keystreams.
    rng.set_stream(((kind as u64) << 56) | (index & ((1 << 56) - 1)));
    rng
}

/// The seed a test should use: `SIM_SEED` when set (replaying a failure), else `default`.
pub fn seed_from_env(default: u64) -> u64 {
    std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// The command that replays the current test with `seed`.
///
/// Inside `cargo test` the thread is named after the test and the executable after the test
/// target (plus a hash), which is enough to build an exact command line.
pub fn replay_command(seed: u64) -> String {
    let test = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map(str::to_owned);
    let target = std::env::current_exe().ok().and_then(|p| {
        let stem = p.file_stem()?.to_str()?.to_owned();
        // `transport_scenarios-0123abcd` -> `transport_scenarios`
        Some(match stem.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_owned(),
            _ => stem,
        })
    });
    match (test, target) {
        (Some(test), Some(target)) if target != "transport-bench" => {
            let kind = if target == "rustox_auto_tests" {
                "--lib".to_owned()
            } else {
                format!("--test {target}")
            };
            format!(
                "{SEED_ENV}={seed} cargo test --release -p rustox-auto-tests {kind} -- {test} --exact"
            )
        }
        _ => format!("{SEED_ENV}={seed} <same command>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;

    #[test]
    fn streams_differ_by_kind_and_index_and_repeat_by_seed() {
        let a = derive_rng(7, StreamKind::Node, 3).next_u64();
        assert_eq!(a, derive_rng(7, StreamKind::Node, 3).next_u64());
        assert_ne!(a, derive_rng(7, StreamKind::Link, 3).next_u64());
        assert_ne!(a, derive_rng(7, StreamKind::Node, 4).next_u64());
        assert_ne!(a, derive_rng(8, StreamKind::Node, 3).next_u64());
    }

    #[test]
    fn replay_command_names_the_seed() {
        assert!(replay_command(42).starts_with("SIM_SEED=42 "));
    }
}
