//! The pull model (docs/transport.md §3.9): chunks are requested only as the session's budget
//! allows, never queue beyond it, and concurrent transfers share it by deficit round-robin.

mod common;

use common::{content, Pair};
use rustox_file_transfer::testing::PacketClass;

#[test]
fn no_budget_means_no_chunk_requests_and_no_data() {
    let mut p = Pair::new();
    p.a.send(p.now, content(100_000, 1), b"x");
    for _ in 0..20 {
        p.step(0);
    }
    assert!(p.a.app.requests.is_empty());
    assert_eq!(p.a.session.bulk_bytes_sent, 0);
}

#[test]
fn requests_per_poll_never_exceed_the_budget_even_when_unanswered() {
    let mut p = Pair::new();
    p.a.app.answer_requests = false;
    for i in 0..3 {
        p.a.send(p.now, content(100_000, i), b"x");
    }
    p.step(0);
    p.step(0);
    for budget in [1usize, 5, 3, 0, 7] {
        let before = p.a.app.requests.len();
        p.step(budget);
        let outstanding = p.a.app.requests.len();
        // Unanswered requests count against later budgets: at most `budget` in total.
        assert!(outstanding <= 7, "{outstanding} requests outstanding");
        assert!(outstanding - before <= budget);
    }
}

#[test]
fn a_chat_message_waits_behind_at_most_one_budget_of_file_data() {
    let mut p = Pair::new();
    p.a.send(p.now, content(1_000_000, 2), b"big");
    p.run_until(8, 100, |p| p.a.session.bulk_bytes_sent > 50_000);
    // The layer above queues a chat message between two polls.
    let budget = 8;
    p.a.session.grant(budget);
    let now = p.now;
    p.a.ft.poll_send(now, &mut p.a.session);
    p.a.handle_events(now);
    use rustox_file_transfer::Session;
    p.a.session.send_lossless(now, &[64, b'h', b'i']).unwrap();
    let queued: Vec<PacketClass> = p.a.session.outbox.iter().map(|(_, c, _)| *c).collect();
    let ahead = queued
        .iter()
        .take_while(|c| **c == PacketClass::Bulk)
        .count();
    assert!(
        ahead <= budget,
        "{ahead} file packets queued ahead of the chat message"
    );
    assert_eq!(*queued.last().unwrap(), PacketClass::Control);
}

#[test]
fn four_transfers_share_the_budget_within_one_chunk() {
    for budget in [1usize, 3, 5, 16] {
        let mut p = Pair::new();
        let files: Vec<u32> = (0..4)
            .map(|i| p.a.send(p.now, content(2_000_000, i), b"f"))
            .collect();
        for step in 0..400 {
            p.step(budget);
            if step % 50 == 49 {
                let got: Vec<usize> = (0..4u32)
                    .map(|i| p.b.app.received.get(&((i + 1) << 16)).map_or(0, Vec::len))
                    .collect();
                let max = *got.iter().max().unwrap();
                let min = *got.iter().min().unwrap();
                assert!(min > 0, "budget {budget}: a transfer starved: {got:?}");
                assert!(
                    max - min <= 1371,
                    "budget {budget}, step {step}: bytes per transfer {got:?}"
                );
            }
        }
        assert_eq!(files, [0, 1, 2, 3]);
    }
}

#[test]
fn a_paused_transfer_gives_its_share_to_the_others() {
    let mut p = Pair::new();
    for i in 0..2 {
        p.a.send(p.now, content(500_000, i), b"f");
    }
    p.run_until(4, 100, |p| p.a.session.bulk_bytes_sent > 20_000);
    p.a.ft
        .control(
            p.now,
            &mut p.a.session,
            0,
            rustox_file_transfer::FileControl::Pause,
        )
        .unwrap();
    let before = p.a.ft.transfer(1).unwrap().transferred;
    for _ in 0..10 {
        p.step(4);
    }
    let after = p.a.ft.transfer(1).unwrap().transferred;
    assert_eq!(
        after - before,
        10 * 4 * 1371,
        "the unpaused transfer takes the whole budget"
    );
}
