//! Persistent congestion (RFC 9002 §7.6, docs/transport.md §3.5): a forward-path outage much
//! longer than the PTO loses every packet across it, and the window falls to its minimum;
//! random loss on a working path never gets that far.
#[path = "transport_harness.rs"]
mod harness;
use harness::{LinkConfig, Pair};
use rustox_net_crypto::transport::ControllerKind;
use std::time::Duration;

/// 20 ms each way, 100 Mbit/s, a 1 MB buffer, `loss` random loss.
fn path(loss: f64) -> LinkConfig {
    LinkConfig {
        delay: Duration::from_millis(20),
        jitter: Duration::ZERO,
        rate: 12_500_000,
        buffer: 1_000_000,
        loss,
        duplicate: 0.0,
        drop_first_data: 0,
    }
}

#[test]
fn an_outage_of_two_seconds_is_persistent_congestion_and_the_transfer_recovers() {
    for kind in [ControllerKind::Bbr, ControllerKind::Cubic] {
        let mut p = Pair::new(kind, path(0.0), path(0.0), 7);
        p.a.to_send += 20_000;
        assert!(p.run_until(Duration::from_secs(60), |p| p.b.expect_bulk >= 3_000));
        let cwnd_before = p.stats_a().cwnd_bytes;
        // The forward path goes dark for two seconds (about 30 PTO bases of this path).
        p.ab.cfg.loss = 1.0;
        let until = p.now + Duration::from_secs(2);
        p.run_until(Duration::from_secs(3), |p| p.now >= until);
        p.ab.cfg.loss = 0.0;
        let declared = p.run_until(Duration::from_secs(10), |p| {
            p.stats_a().persistent_congestion > 0
        });
        let stats = p.stats_a();
        assert!(declared, "{kind:?}: no persistent congestion: {stats:?}");
        assert!(
            stats.cwnd_bytes < cwnd_before / 4,
            "{kind:?}: window {} after persistent congestion, {cwnd_before} before",
            stats.cwnd_bytes
        );
        let target = p.a.next_seq + p.a.to_send;
        assert!(
            p.run_until(Duration::from_secs(120), |p| p.b.expect_bulk >= target),
            "{kind:?}: transfer did not finish after the outage: {:?}",
            p.stats_a()
        );
        assert!(
            p.a.errors.is_empty() && p.b.errors.is_empty(),
            "{:?} {:?}",
            p.a.errors,
            p.b.errors
        );
    }
}

#[test]
fn random_loss_is_never_persistent_congestion() {
    for kind in [ControllerKind::Bbr, ControllerKind::Cubic] {
        let mut p = Pair::new(kind, path(0.03), path(0.03), 11);
        p.transfer(20_000, Duration::from_secs(300))
            .expect("transfer finishes");
        let stats = p.stats_a();
        assert!(stats.packets_declared_lost > 100, "{stats:?}");
        assert_eq!(stats.persistent_congestion, 0, "{kind:?}: {stats:?}");
    }
}
