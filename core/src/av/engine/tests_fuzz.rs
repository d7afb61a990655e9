//! Arbitrary input to an engine in a call: raw packets of every id the engine takes, and
//! well-formed RTP headers around arbitrary payloads (any sequence number, timestamp, offset
//! and length), interleaved with arbitrary steps of time. Nothing panics, nothing grows
//! past its bounds, and the call's state does not change. (The MSI answers a message that
//! does not parse with an error, which ends the call at the sender as msi.c does; so only
//! the receiving engine's call is checked.)

use std::time::Duration;

use proptest::prelude::*;

use super::tests_support::*;
use super::*;
use crate::av::rtp::{MediaKind, RtpHeader, RTP_HEADER_LEN};

fn rtp_packet(kind: MediaKind, h: (u16, u32, u64, u32, u32), payload: &[u8]) -> Vec<u8> {
    let (sequence, timestamp, flags, offset, length) = h;
    let header = RtpHeader {
        version: 2,
        payload_type: kind.payload_type(),
        sequence,
        timestamp,
        flags: flags & 3,
        offset_full: offset,
        data_length_full: length,
        offset_lower: offset as u16,
        data_length_lower: length as u16,
        ..RtpHeader::default()
    };
    let mut p = vec![kind.packet_id()];
    p.extend_from_slice(&header.encode());
    p.extend_from_slice(payload);
    assert!(p.len() > RTP_HEADER_LEN);
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn arbitrary_packets_never_panic_nor_change_the_call(
        input in proptest::collection::vec(
            (
                0u8..8,
                (any::<u16>(), any::<u32>(), any::<u64>(), 0u32..4000, 0u32..4000),
                proptest::collection::vec(any::<u8>(), 1..1400),
                0u64..300,
            ),
            1..120,
        )
    ) {
        let mut p = Pair::new(21, Link::default());
        p.connect((48, 1000), (48, 1000));
        let ids = [69u8, 192, 193, 195, 196, 197];
        for (kind, header, mut payload, step_ms) in input {
            let packet = match kind {
                0 => rtp_packet(MediaKind::Audio, header, &payload),
                1 => {
                    // A plausible audio payload: a valid rate prefix.
                    let mut body = 48000u32.to_be_bytes().to_vec();
                    body.extend_from_slice(&payload);
                    rtp_packet(MediaKind::Audio, header, &body)
                }
                2 => rtp_packet(MediaKind::Video, header, &payload),
                k => {
                    payload[0] = ids[usize::from(k) % ids.len()];
                    payload
                }
            };
            if packet[0] == 69 {
                // A well-formed MSI message from the friend (a hang-up, say) is the friend's
                // right; only what does not parse must change nothing.
                if crate::av::msi::MsiMessage::parse(&packet).is_ok() {
                    continue;
                }
                p.b.handle_msi(p.now, F, &packet);
            } else {
                p.b.handle_media(p.now, F, &packet);
            }
            p.now += Duration::from_millis(step_ms);
            p.step();
            prop_assert!(p.b_events.len() <= MAX_QUEUED_EVENTS);
        }
        p.run_ms(2000);
        prop_assert!(p.b.in_call(F));
        let changed = p
            .b_events
            .iter()
            .any(|(_, e)| matches!(e, AvEvent::State { .. } | AvEvent::Call { .. }));
        prop_assert!(!changed);
        prop_assert!(p.b.audio_playout_delay(F).unwrap() <= Duration::from_millis(
            crate::av::jitter::MAX_DELAY_MS
        ));
    }
}
