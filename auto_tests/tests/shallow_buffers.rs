//! Shallow buffers (simulator/src/profiles.rs `shallow100`, `shallow1g`): a queue of a few
//! packets on a short path, the shape of a kernel token bucket on a veth pair or a home
//! router's port. BBR's probes and its random-loss compensation must not overflow it: the
//! link filled, at most 1 % of the packets resent, under the CLI's driver model (its timer
//! lateness makes the bursts a real host makes).
//!
//! TCP CUBIC through the same kernel-shaped links on real sockets: 0.955 of 100 Mbit/s
//! with a 12.5 kB queue and nothing resent, 0.88 of 1 Gbit/s with 62.5 kB.

use rustox_net_crypto::ControllerKind;
use rustox_simulator::{
    replay_command, run_transfer, seed_from_env, DriverModel, Profile, TransferSpec, FULL_PAYLOAD,
};

fn fills_without_resends(profile: Profile, mib: u64, efficiency: f64) {
    let seed = seed_from_env(1);
    let spec = TransferSpec {
        driver: Some(DriverModel::cli()),
        ..TransferSpec::new(profile, ControllerKind::Bbr, seed, mib << 20)
    };
    let m = run_transfer(&spec).unwrap_or_else(|e| panic!("{e}"));
    let packets = (m.bytes / FULL_PAYLOAD) as f64;
    let resent = m.packets_resent as f64 / packets;
    eprintln!(
        "{} seed {}: η {:.3}, {} of {packets} packets resent ({:.2} %), queue p95 {:?} ms",
        m.profile,
        m.seed,
        m.goodput_efficiency,
        m.packets_resent,
        resent * 100.0,
        m.queue_delay_p95_ms
    );
    assert!(
        m.completed,
        "{} incomplete\nreplay: {}",
        m.profile,
        replay_command(seed)
    );
    assert!(
        m.goodput_efficiency >= efficiency,
        "{}: goodput efficiency {:.3} < {efficiency}\nreplay: {}",
        m.profile,
        m.goodput_efficiency,
        replay_command(seed)
    );
    assert!(
        resent <= 0.01,
        "{}: {:.2} % of packets resent\nreplay: {}",
        m.profile,
        resent * 100.0,
        replay_command(seed)
    );
}

#[test]
fn bbr_fills_100_mbit_s_through_a_12_5_kb_queue_resending_under_one_percent() {
    fills_without_resends(Profile::shallow100(), 32, 0.93);
}

#[test]
fn bbr_fills_1_gbit_s_through_a_62_5_kb_queue_resending_under_one_percent() {
    fills_without_resends(Profile::shallow1g(), 128, 0.90);
}
