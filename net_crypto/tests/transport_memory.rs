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

/// A peer that sends only packets past a hole (the first never comes) would make a receive
/// array hold its whole window, 32 768 payloads. With an endpoint's memory budget, it holds
/// what the budget allows while it is alone and no more than its share once another session
/// holds bytes, and an honest transfer through the same budget on a lossy path (whose
/// receive array must hold what arrives past each loss) finishes as fast as it does alone.
#[test]
fn a_pinning_peer_holds_at_most_the_budget_and_an_honest_lossy_transfer_keeps_its_speed() {
    use rustox_net_crypto::transport::{ArrayBudget, TransportError, MAX_PAYLOAD};
    let link = LinkConfig {
        delay: Duration::from_millis(25),
        jitter: Duration::ZERO,
        rate: 2_500_000,
        buffer: 250_000,
        loss: 0.02,
        duplicate: 0.0,
        drop_first_data: 0,
    };
    const PACKETS: u64 = 6000;
    let mut alone = Pair::new(ControllerKind::Bbr, link.clone(), link.clone(), 11);
    let alone_done = alone
        .transfer(PACKETS, Duration::from_secs(120))
        .expect("the transfer alone finishes");

    // A budget of 1 MiB: about eight times the path's 125 KB bandwidth-delay product, so a
    // session's share (half, with two sessions holding bytes) is still plenty for it.
    let budget = ArrayBudget::new(1 << 20);
    let mut pinner = Transport::new(Timestamp::ZERO, TransportConfig::default());
    pinner.set_array_budget(budget.clone());
    let payload = [0xa0u8; MAX_PAYLOAD];
    let mut refused = 0u32;
    for pn in 1..32_768u32 {
        match pinner.on_lossless(Timestamp::ZERO, pn, &payload) {
            Ok(()) => {}
            Err(TransportError::OverBudget) => refused += 1,
            Err(e) => panic!("packet {pn}: {e}"),
        }
    }
    let pinned = pinner.array_bytes();
    assert!(pinned <= 1 << 20, "the pinner holds {pinned} bytes");
    assert!(
        pinned > (1 << 20) - 2 * MAX_PAYLOAD,
        "alone it may use the budget"
    );
    assert!(refused > 30_000, "{refused} refused");

    let mut attacked = Pair::new(ControllerKind::Bbr, link.clone(), link, 11);
    attacked.b.t.set_array_budget(budget.clone());
    attacked.a.to_send = PACKETS;
    let mut peak = 0;
    let ok = attacked.run_until(Duration::from_secs(120), |p| {
        peak = peak.max(budget.held());
        p.b.expect_bulk >= PACKETS
    });
    assert!(ok, "the honest transfer finishes beside the pinner");
    assert!(peak <= 2 << 20, "all arrays together held {peak} bytes");
    assert_eq!(pinner.array_bytes(), pinned, "the pinner got no more");
    let attacked_done = attacked.now;
    let (alone_s, attacked_s) = (alone_done.as_secs_f64(), attacked_done.as_secs_f64());
    eprintln!("alone {alone_s:.2} s, beside the pinner {attacked_s:.2} s, peak {peak} B");
    assert!(
        attacked_s <= alone_s * 1.05,
        "beside the pinner {attacked_s:.2} s, alone {alone_s:.2} s"
    );
}
