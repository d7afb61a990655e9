//! Memory (requirement 10): an idle transport costs a few hundred bytes; a busy one grows
//! with data in flight and gives it back.

#[path = "transport_harness.rs"]
mod harness;

use std::time::Duration;

use harness::{LinkConfig, Pair};
use rustox_net_crypto::transport::{ControllerKind, Transport, TransportConfig};
use rustox_net_crypto::Timestamp;

#[test]
fn idle_transport_costs_a_few_hundred_bytes() {
    for kind in [
        ControllerKind::Bbr,
        ControllerKind::Cubic,
        ControllerKind::Legacy,
    ] {
        let t = Transport::new(
            Timestamp::ZERO,
            TransportConfig {
                controller: kind,
                ..Default::default()
            },
        );
        let heap = t.memory_usage();
        let total = heap + std::mem::size_of::<Transport>();
        eprintln!(
            "{kind:?}: idle heap {heap} B, struct {} B",
            std::mem::size_of::<Transport>()
        );
        assert!(heap <= 1024, "{kind:?}: heap {heap}");
        assert!(total <= 4096, "{kind:?}: total {total}");
    }
}

#[test]
fn busy_transport_gives_memory_back_when_drained() {
    let link = LinkConfig {
        delay: Duration::from_millis(50),
        jitter: Duration::ZERO,
        rate: 2_500_000,
        buffer: 500_000,
        loss: 0.01,
        duplicate: 0.0,
        drop_first_data: 0,
    };
    let mut p = Pair::new(ControllerKind::Bbr, link.clone(), link, 5);
    p.a.to_send = 3000;
    let mut peak = 0;
    p.run_until(Duration::from_secs(30), |p| {
        peak = peak.max(p.a.t.memory_usage());
        p.b.expect_bulk >= 3000
    });
    assert_eq!(p.b.expect_bulk, 3000);
    // Let the last acks arrive.
    p.run_until(Duration::from_secs(3), |_| false);
    let idle_a = p.a.t.memory_usage();
    let idle_b = p.b.t.memory_usage();
    eprintln!("busy peak {peak} B, drained sender {idle_a} B, receiver {idle_b} B");
    assert!(peak > 100_000, "peak {peak} should reflect data in flight");
    assert!(
        idle_a <= 2048,
        "sender kept {idle_a} bytes after draining (peak {peak})"
    );
    assert!(idle_b <= 1024, "receiver kept {idle_b} bytes");
}
