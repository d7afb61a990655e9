//! The arrays under random loss, duplication and reordering deliver every lossless packet
//! exactly once and in order (requirement 3; proptest over two Transports in virtual time).

#[path = "transport_harness.rs"]
mod harness;

use std::time::Duration;

use harness::{LinkConfig, Pair};
use proptest::prelude::*;
use rustox_net_crypto::transport::ControllerKind;

fn lossy(delay_ms: u64, jitter_ms: u64, loss: f64, dup: f64) -> LinkConfig {
    LinkConfig {
        delay: Duration::from_millis(delay_ms),
        jitter: Duration::from_millis(jitter_ms),
        rate: 2_000_000,
        buffer: 200_000,
        loss,
        duplicate: dup,
        drop_first_data: 0,
    }
}

fn check_transfer(kind: ControllerKind, delay: u64, jitter: u64, loss: f64, dup: f64, seed: u64) {
    let mut p = Pair::new(
        kind,
        lossy(delay, jitter, loss, dup),
        lossy(delay, jitter, loss, dup),
        seed,
    );
    p.a.control_every = 17;
    p.a.payload_len = 700;
    let n = 400;
    let done = p.transfer(n, Duration::from_secs(600));
    assert!(
        p.a.errors.is_empty(),
        "A: {:?}",
        &p.a.errors[..p.a.errors.len().min(5)]
    );
    assert!(
        p.b.errors.is_empty(),
        "B: {:?}",
        &p.b.errors[..p.b.errors.len().min(5)]
    );
    assert!(
        done.is_some(),
        "not finished: B got {} of {n}; stats {:?}",
        p.b.expect_bulk,
        p.a.t.stats()
    );
    assert_eq!(p.b.expect_bulk, n);
    // Control packets came through too, in order.
    p.run_until(Duration::from_secs(60), |p| {
        p.b.expect_control == p.a.next_control
    });
    assert_eq!(p.b.expect_control, p.a.next_control);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn lossy_reordering_duplicating_link_delivers_everything_once_in_order(
        delay in 1u64..150,
        jitter in 0u64..30,
        loss in 0.0f64..0.25,
        dup in 0.0f64..0.05,
        seed in any::<u64>(),
        kind in prop_oneof![Just(ControllerKind::Bbr), Just(ControllerKind::Cubic), Just(ControllerKind::Legacy)],
    ) {
        check_transfer(kind, delay, jitter, loss, dup, seed);
    }
}

/// No random loss: the only losses are drop-tail overflows at the bottleneck, so every
/// resend must repair a real drop and the receiver never sees a duplicate.
#[test]
fn lossless_link_has_no_spurious_resends_and_no_duplicates() {
    for kind in [ControllerKind::Bbr, ControllerKind::Cubic] {
        let mut p = Pair::new(kind, lossy(20, 0, 0.0, 0.0), lossy(20, 0, 0.0, 0.0), 1);
        assert!(p.transfer(2000, Duration::from_secs(120)).is_some());
        let a = p.a.t.stats();
        let b = p.b.t.stats();
        assert!(
            a.packets_resent <= p.ab.dropped,
            "{kind:?}: resent {} > dropped {}: {a:?}",
            a.packets_resent,
            p.ab.dropped
        );
        assert_eq!(b.duplicates_received, 0, "{kind:?}");
        assert_eq!(a.spurious_losses, 0, "{kind:?}");
        if kind == ControllerKind::Bbr {
            // BBR paces at the bottleneck rate and never overflows this 200 KB buffer.
            assert_eq!(a.packets_resent, 0, "{a:?}");
        }
    }
}

#[test]
fn heavy_loss_still_completes() {
    check_transfer(ControllerKind::Bbr, 50, 10, 0.4, 0.0, 7);
}
