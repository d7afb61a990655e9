//! Bandwidth reports, lossy packet 196 (docs/protocol.md §13.3): the parser on any bytes
//! (what parses encodes back to the same bytes) and the monitor fed with arbitrary counts,
//! reports and times: nothing panics, ratios are within 0..=1, reports parse.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::av::bwc::{BwcMonitor, BwcReport};
use rustox_net_crypto::Timestamp;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = BwcReport::parse(data) {
        assert_eq!(r.encode(), data);
    }
    let mut now = 0u64;
    let mut m = BwcMonitor::new(Timestamp::from_millis(now));
    for step in data.chunks(5) {
        let mut v = [0u8; 4];
        for (d, s) in v.iter_mut().zip(step.iter().skip(1)) {
            *d = *s;
        }
        let value = u32::from_be_bytes(v);
        match step[0] & 3 {
            0 => m.add_received(value),
            1 => m.add_lost(value),
            2 => now = now.saturating_add(u64::from(value >> 16)),
            _ => {
                let r = BwcReport {
                    lost: value >> 8,
                    received: value,
                };
                if let Some(ratio) = m.handle_report(Timestamp::from_millis(now), r) {
                    assert!((0.0..=1.0).contains(&ratio));
                }
            }
        }
        if let Some(p) = m.poll_report(Timestamp::from_millis(now)) {
            let r = BwcReport::parse(&p).expect("a report parses");
            assert!(r.lost > 0);
        }
    }
});
