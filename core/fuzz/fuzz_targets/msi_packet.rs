//! MSI, friend packet 69 (docs/protocol.md §13.1): the parser on any bytes (what parses
//! re-encodes into something that parses the same), then two call state machines driven by
//! arbitrary packets, commands and friends going offline: nothing panics, queues and the
//! call table stay within their bounds, and a packet exchange between the two settles.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::av::msi::{Msi, MsiMessage, MAX_CALLS, MAX_QUEUED};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = MsiMessage::parse(data) {
        assert_eq!(MsiMessage::parse(&m.encode()), Ok(m));
    }
    // Steps: an op byte, then its operands.
    let mut msi = [Msi::new(), Msi::new()];
    let mut it = data.chunks(4);
    while let Some(step) = it.next() {
        let [op, a, b, c] = <[u8; 4]>::try_from(step).unwrap_or([step[0], 0, 0, 0]);
        let side = usize::from(op & 1);
        let friend = u32::from(a & 3);
        match op >> 1 & 7 {
            0 => {
                let _ = msi[side].invite(friend, b);
            }
            1 => {
                let _ = msi[side].answer(friend, b);
            }
            2 => {
                let _ = msi[side].hangup(friend);
            }
            3 => {
                let _ = msi[side].change_capabilities(friend, b);
            }
            4 => msi[side].handle_friend_offline(friend),
            5 => {
                // A packet 69: `c`, then up to three more 4-byte steps of the input.
                let mut raw = vec![69u8, c];
                for chunk in it.by_ref().take(usize::from(b & 3)) {
                    raw.extend_from_slice(chunk);
                }
                msi[side].handle_packet(friend, &raw);
            }
            _ => {
                // Deliver what each side queued to the other (friend 0 both ways).
                let mut rounds = 0;
                loop {
                    let mut moved = false;
                    for from in 0..2 {
                        while let Some((_, p)) = msi[from].poll_send() {
                            msi[1 - from].handle_packet(0, &p);
                            moved = true;
                        }
                    }
                    if !moved {
                        break;
                    }
                    rounds += 1;
                    assert!(rounds < 16, "signalling does not settle");
                }
                while msi[side].poll_event().is_some() {}
            }
        }
        for m in &msi {
            assert!(m.call_count() <= MAX_CALLS.min(4));
        }
    }
    for m in &mut msi {
        assert!(std::iter::from_fn(|| m.poll_send()).count() <= MAX_QUEUED);
    }
});
