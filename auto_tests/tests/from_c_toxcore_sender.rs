//! c-toxcore 0.2.18's sender (the legacy model) sending to rustox's receiver, against the
//! same sender sending to c-toxcore's receiver (the legacy controller's request cadence):
//! a c-toxcore friend must send to a rustox user at least as fast as to a c-toxcore user.
//!
//! Our receiver's prompt requests made such a sender resend each hole again and again
//! (its `rtt_time` collapses to a few ms, and every request naming a hole whose repair is
//! still on its way starts another resend), and its rate fell with the congestion events
//! those resends caused: 0.62–0.97× on wan100, vpn300, lossy, jitter50 and bursty. The
//! receiver now recognises the sender by its 1 s request cadence and holds requests back
//! while a named hole's repair is due (net_crypto's transport/sender_watch.rs). Simulated
//! time is deterministic (seed 1, the sizes of `real-bench --pairings`), so the figures
//! are asserted.

use rustox_net_crypto::ControllerKind;
use rustox_simulator::{run_transfer, Profile, TransferMetrics, TransferSpec};

/// One simulated transfer from the legacy model to a receiver running `receiver`.
fn legacy_to(profile: &Profile, receiver: ControllerKind, bytes: u64) -> TransferMetrics {
    let mut spec = TransferSpec::new(profile.clone(), ControllerKind::Legacy, 1, bytes);
    spec.receiver_controller = Some(receiver);
    let m = run_transfer(&spec).expect("simulation");
    assert!(m.completed, "{} to {receiver:?}: {m:?}", profile.name);
    m
}

/// (to rustox's receiver, to c-toxcore's cadence): goodput efficiencies and resends.
fn pair(profile: &Profile, bytes: u64) -> (TransferMetrics, TransferMetrics) {
    (
        legacy_to(profile, ControllerKind::Bbr, bytes),
        legacy_to(profile, ControllerKind::Legacy, bytes),
    )
}

fn profile(name: &str) -> Profile {
    Profile::by_name(name).expect("a named profile")
}

#[test]
fn a_c_toxcore_sender_is_at_least_as_fast_toward_us_as_toward_c_toxcore() {
    // Before the hold: 0.86, 0.97, 1.02, 0.85, 0.62, 1.13; now 1.04, 1.07, 1.27, 1.01,
    // 1.10, 1.13 (seeds 2–3: wan100 0.94, 1.14; lossy 0.97, 1.06; slow150 1.01, 1.27;
    // jitter50 1.03, 1.01; bursty 1.08, 1.02; wan20 1.13, 1.13).
    for (name, mib) in [
        ("wan100", 32),
        ("lossy", 16),
        ("slow150", 4),
        ("jitter50", 32),
        ("bursty", 32),
        ("wan20", 32),
    ] {
        let (to_us, to_c) = pair(&profile(name), mib << 20);
        let ratio = to_us.goodput_efficiency / to_c.goodput_efficiency;
        assert!(
            ratio >= 1.0,
            "{name}: {:.3} toward us, {:.3} toward c-toxcore ({ratio:.2}×)",
            to_us.goodput_efficiency,
            to_c.goodput_efficiency
        );
    }
}

#[test]
fn on_vpn300_it_comes_close_and_resends_less_than_toward_c_toxcore() {
    // Not yet at 1.0 on this 300 ms path on seed 1 (0.92×; before the hold 0.63×): the
    // floor keeps what was gained. Seeds 2–3 give 1.10× and 1.11× (c-toxcore's own figure
    // varies most here: 2.8–4.8 Mbit/s on real sockets, 2.8–4.7 in the model). Resends
    // per lost packet fall below c-toxcore's cadence's on wan100 and vpn300.
    let (to_us, to_c) = pair(&profile("vpn300"), 16 << 20);
    let ratio = to_us.goodput_efficiency / to_c.goodput_efficiency;
    assert!(ratio >= 0.9, "vpn300: {ratio:.2}× c-toxcore's receiver");
    for (name, mib) in [("wan100", 32), ("vpn300", 16)] {
        let (to_us, to_c) = pair(&profile(name), mib << 20);
        // Both over the link's lost bytes: the same unit on both sides.
        let per_loss = |m: &TransferMetrics| m.packets_resent as f64 / m.link_bytes_lost as f64;
        assert!(
            per_loss(&to_us) < per_loss(&to_c),
            "{name}: resent {} toward us, {} toward c-toxcore",
            to_us.packets_resent,
            to_c.packets_resent
        );
    }
}

#[test]
fn a_rustox_sender_is_not_taken_for_c_toxcore() {
    // BBR to our receiver is unchanged by the hold: on lossy (3 % loss, holes nearly all
    // the time) holding requests would cost BBR a third of its rate (9.20 → 6.66 Mbit/s
    // when forced on in the simulator).
    let p = profile("lossy");
    let m = run_transfer(&TransferSpec::new(
        p.clone(),
        ControllerKind::Bbr,
        1,
        16 << 20,
    ))
    .expect("simulation");
    assert!(m.completed);
    let mbit = m.goodput_efficiency * p.rate_bps as f64 / 1e6;
    assert!(mbit >= 9.0, "BBR on lossy: {mbit:.2} Mbit/s");
}
