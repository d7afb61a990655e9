//! Properties of a whole session under a hostile link: loss in both directions, and copies of
//! earlier datagrams injected again (replays). Every lossless payload arrives exactly once
//! and in order, no lossy payload arrives twice, and every replay is refused as such.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use common::{Pair, Side};
use proptest::prelude::*;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rustox_net_crypto::{ConnectionEvent, DropReason};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn lossless_arrives_once_in_order_and_replays_are_refused(
        seed in any::<u64>(),
        loss_percent in 0u32..25,
        messages in 1usize..120,
    ) {
        let mut p = Pair::new(seed % 1000);
        let (a, b) = p.establish(Side::A);
        let rng = Rc::new(RefCell::new(rand_chacha::ChaCha8Rng::seed_from_u64(seed)));
        let r = rng.clone();
        p.filter = Some(Box::new(move |_, _| r.borrow_mut().next_u32() % 100 >= loss_percent));

        let payload = |i: usize| {
            let mut v = vec![16 + (i % 170) as u8];
            v.extend_from_slice(&(i as u32).to_be_bytes());
            v.resize(5 + (i * 37) % 900, 0xAB);
            v
        };
        for i in 0..messages {
            let now = p.now;
            p.a.endpoint
                .connection_mut(a)
                .unwrap()
                .send_lossless(now, &payload(i))
                .unwrap();
            // Lossy datagrams wait in a 64-deep queue: let them out now and then.
            p.b.endpoint
                .connection_mut(b)
                .unwrap()
                .send_lossy(now, &[210, (i % 256) as u8, 1])
                .unwrap();
            if i % 32 == 31 {
                p.flush();
            }
        }

        let mut replays = 0u64;
        let mut injected = 0u64;
        let end = p.now + Duration::from_secs(120);
        while p.now < end {
            let step_end = p.now + Duration::from_millis(50);
            p.run_until(step_end, |_| false);
            for (side, id) in [(Side::A, a), (Side::B, b)] {
                let conn = p.node(side).endpoint.connection(id).expect("still open");
                if let Err(broken) = conn.transport().check_invariants() {
                    prop_assert!(false, "{:?} transport invariant: {}", side, broken);
                }
            }
            // Re-inject a random earlier data packet in each direction.
            for side in [Side::A, Side::B] {
                let sent = p.sent(side, 0x1b);
                if !sent.is_empty() {
                    let pick = rng.borrow_mut().next_u32() as usize % sent.len();
                    let datagram = sent[pick].transmit.payload.clone();
                    injected += 1;
                    match p.deliver(side.other(), &datagram) {
                        Err(DropReason::ReplayedNonce) | Err(DropReason::StaleNonce) => replays += 1,
                        // A copy whose original was lost on the link is new to the receiver: a
                        // late packet, which may carry an acknowledgement or a packet number
                        // the receiver has moved past.
                        Ok(())
                        | Err(DropReason::DuplicatePacket)
                        | Err(DropReason::AckOutsideWindow)
                        | Err(DropReason::PacketOutsideWindow) => {}
                        other => prop_assert!(false, "unexpected result for a copy: {:?}", other),
                    }
                }
            }
            let done = p.connection_events(Side::B).iter()
                .filter(|e| matches!(e, ConnectionEvent::Lossless(_))).count() == messages;
            if done {
                break;
            }
        }
        let got: Vec<Vec<u8>> = p.connection_events(Side::B).into_iter().filter_map(|e| match e {
            ConnectionEvent::Lossless(v) => Some(v),
            _ => None,
        }).collect();
        prop_assert_eq!(got.len(), messages);
        for (i, v) in got.iter().enumerate() {
            prop_assert_eq!(v, &payload(i));
        }
        let mut lossy: Vec<Vec<u8>> = p.connection_events(Side::A).into_iter().filter_map(|e| match e {
            ConnectionEvent::Lossy(v) => Some(v),
            _ => None,
        }).collect();
        let total = lossy.len();
        lossy.sort();
        lossy.dedup();
        prop_assert_eq!(lossy.len(), total, "a lossy payload was delivered twice");
        prop_assert!(total <= messages);
        let counted = p.a.endpoint.drop_counters().get(DropReason::ReplayedNonce)
            + p.b.endpoint.drop_counters().get(DropReason::ReplayedNonce)
            + p.a.endpoint.drop_counters().get(DropReason::StaleNonce)
            + p.b.endpoint.drop_counters().get(DropReason::StaleNonce);
        prop_assert_eq!(counted, replays);
        // Copies of delivered originals are replays; copies of lost ones may be accepted.
        prop_assert!(injected > 0);
    }
}

#[test]
fn lossless_arrives_once_in_order_over_a_lossy_link_without_replays() {
    for seed in 0..20u64 {
        let mut p = Pair::new(seed);
        let (a, _) = p.establish(Side::A);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        p.filter = Some(Box::new(move |_, _| rng.next_u32() % 100 >= 5));
        for i in 0..100u32 {
            let now = p.now;
            let mut v = vec![16u8];
            v.extend_from_slice(&i.to_be_bytes());
            p.a.endpoint
                .connection_mut(a)
                .unwrap()
                .send_lossless(now, &v)
                .unwrap();
        }
        p.run_until(p.now + Duration::from_secs(60), |p| {
            p.connection_events(Side::B)
                .iter()
                .filter(|e| matches!(e, ConnectionEvent::Lossless(_)))
                .count()
                == 100
        });
        let got: Vec<Vec<u8>> = p
            .connection_events(Side::B)
            .into_iter()
            .filter_map(|e| match e {
                ConnectionEvent::Lossless(v) => Some(v),
                _ => None,
            })
            .collect();
        assert_eq!(got.len(), 100, "seed {seed}");
        for (i, v) in got.iter().enumerate() {
            assert_eq!(&v[1..], &(i as u32).to_be_bytes(), "seed {seed}");
        }
    }
}
