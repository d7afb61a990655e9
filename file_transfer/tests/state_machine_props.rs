//! Property: any sequence of peer packets and API calls leaves the state machine
//! consistent — no panic, at most 256 transfers per direction, no incoming transfer past
//! its announced size, and a bounded event queue (docs/design.md principles 3 and 5).

use proptest::prelude::*;
use rustox_file_transfer::testing::MockSession;
use rustox_file_transfer::MAX_PENDING_EVENTS;
use rustox_file_transfer::{FileControl, FileKind, FileTransfers};
use rustox_net_crypto::Timestamp;

#[derive(Debug, Clone)]
enum Step {
    Peer(Vec<u8>),
    Send(u64),
    Control(u32, u8),
    Seek(u32, u64),
    Chunk(u32, u64, usize),
    Poll(usize),
    Drain,
    Offline,
}

/// Payloads biased towards the three file ids with small file numbers, so that they hit
/// live transfers often.
fn peer_payload() -> impl Strategy<Value = Vec<u8>> {
    let slot = 0u8..4;
    prop_oneof![
        (
            slot.clone(),
            0u32..3,
            prop_oneof![Just(0u64), 1u64..5000, Just(u64::MAX)],
            proptest::collection::vec(any::<u8>(), 0..8)
        )
            .prop_map(|(n, kind, size, name)| {
                let mut p = vec![80, n];
                p.extend_from_slice(&kind.to_be_bytes());
                p.extend_from_slice(&size.to_be_bytes());
                p.extend_from_slice(&[0; 32]);
                p.extend_from_slice(&name);
                p
            }),
        (0u8..3, slot.clone(), 0u8..5, any::<u64>()).prop_map(|(d, n, c, pos)| {
            let mut p = vec![81, d, n, c];
            if c == 3 {
                p.extend_from_slice(&(pos % 6000).to_be_bytes());
            }
            p
        }),
        (slot, prop_oneof![Just(1371usize), 0usize..1372]).prop_map(|(n, len)| {
            let mut p = vec![82, n];
            p.resize(2 + len, 0xAB);
            p
        }),
        proptest::collection::vec(any::<u8>(), 0..50),
    ]
}

fn file_number() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..4, (0u32..4).prop_map(|n| (n + 1) << 16), any::<u32>()]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => peer_payload().prop_map(Step::Peer),
        1 => prop_oneof![Just(0u64), 1u64..5000, Just(u64::MAX)].prop_map(Step::Send),
        1 => (file_number(), 0u8..3).prop_map(|(f, c)| Step::Control(f, c)),
        1 => (file_number(), 0u64..6000).prop_map(|(f, p)| Step::Seek(f, p)),
        2 => (file_number(), 0u64..6000, 0usize..1400).prop_map(|(f, p, l)| Step::Chunk(f, p, l)),
        2 => (0usize..8).prop_map(Step::Poll),
        1 => Just(Step::Drain),
        1 => Just(Step::Offline),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn any_sequence_keeps_the_state_consistent(steps in proptest::collection::vec(step(), 0..120)) {
        let mut ft = FileTransfers::new();
        let mut session = MockSession::new();
        let now = Timestamp::ZERO;
        for step in steps {
            match step {
                Step::Peer(p) => { let _ = ft.handle_packet(now, &p); }
                Step::Send(size) => { let _ = ft.file_send(now, &mut session, FileKind::Data, size, [1; 32], b"f"); }
                Step::Control(f, c) => {
                    let c = [FileControl::Resume, FileControl::Pause, FileControl::Cancel][usize::from(c)];
                    let _ = ft.control(now, &mut session, f, c);
                }
                Step::Seek(f, p) => { let _ = ft.seek(now, &mut session, f, p); }
                Step::Chunk(f, p, l) => {
                    session.grant(1);
                    let _ = ft.send_chunk(now, &mut session, f, p, &vec![0; l]);
                }
                Step::Poll(b) => { session.grant(b); let _ = ft.poll_send(now, &mut session); }
                Step::Drain => { while ft.poll_event().is_some() {} session.drain(); }
                Step::Offline => ft.friend_offline(),
            }
            let (out, inc) = ft.active();
            prop_assert!(out <= 256 && inc <= 256);
            for n in 0..4u32 {
                if let Some(t) = ft.transfer((n + 1) << 16) {
                    prop_assert!(t.transferred <= t.info.size);
                }
                if let Some(t) = ft.transfer(n) {
                    prop_assert!(t.transferred <= t.info.size);
                }
            }
        }
        let mut events = 0;
        while ft.poll_event().is_some() { events += 1; }
        prop_assert!(events <= MAX_PENDING_EVENTS + 256);
    }
}
