//! BBR sending to a receiver with c-toxcore 0.2.18's request cadence (the legacy controller
//! on the receiving side requests every 50–1000 ms, never on a hole), as when a rustox node
//! sends a file to a c-toxcore client. Before BBR treated that cadence as ack delay it sat
//! on its 16-packet floor: 0.007 of a gigabit LAN in this scenario (64 MiB), 2.7 Mbit/s on
//! real loopback against c-toxcore itself; now 0.32 and 241 Mbit/s. Simulated time is
//! deterministic, so the efficiencies are asserted.

use rustox_net_crypto::ControllerKind;
use rustox_simulator::{run_transfer, seed_from_env, Profile, TransferSpec};

fn efficiency(profile: Profile) -> f64 {
    let mut spec = TransferSpec::new(profile, ControllerKind::Bbr, seed_from_env(1), 32 << 20);
    spec.receiver_controller = Some(ControllerKind::Legacy);
    let m = run_transfer(&spec).expect("simulation");
    assert!(m.completed, "{m:?}");
    m.goodput_efficiency
}

#[test]
fn bbr_keeps_a_lan_busy_toward_a_c_toxcore_receiver() {
    // The first 0.5–1 s go by before c-toxcore's receiver measures a rate and starts
    // requesting; 32 MiB at a gigabit takes 0.27 s, so this is mostly that wait.
    let e = efficiency(Profile::lan());
    assert!(e >= 0.15, "lan efficiency {e:.3}");
}

#[test]
fn bbr_fills_wan_paths_toward_a_c_toxcore_receiver() {
    // Guards: these held before too (0.82-0.90); the receiver's cadence is small against
    // these paths' RTTs.
    for (profile, floor) in [(Profile::wan100(), 0.85), (Profile::wan20(), 0.8)] {
        let name = profile.name;
        let e = efficiency(profile);
        assert!(e >= floor, "{name} efficiency {e:.3}");
    }
}
