//! BBR sending to a receiver with c-toxcore 0.2.18's request cadence, per profile.
use rustox_net_crypto::ControllerKind;
use rustox_simulator::{run_transfer, Profile, TransferSpec};

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    for p in Profile::all() {
        if !names.is_empty() && !names.iter().any(|n| n == p.name) {
            continue;
        }
        for recv in [ControllerKind::Bbr, ControllerKind::Legacy] {
            let mib: u64 = std::env::var("MIB")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(8);
            let mut spec = TransferSpec::new(p.clone(), ControllerKind::Bbr, 1, mib << 20);
            spec.receiver_controller = Some(recv);
            let m = run_transfer(&spec).expect("simulation");
            println!(
                "{:>9} recv={:?}: completed={} eff {:.3} in {:.1} s",
                p.name, recv, m.completed, m.goodput_efficiency, m.transfer_time_s
            );
        }
    }
}
