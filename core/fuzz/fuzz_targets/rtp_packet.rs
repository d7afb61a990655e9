//! RTP packets 192 and 193 (docs/protocol.md §13.2): the header parser on any bytes (what
//! parses re-encodes to the same 80 bytes, padding aside), and one packet into an audio and
//! a video receiver: nothing panics, frames stay within their bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::av::rtp::{MediaKind, RtpHeader, RtpReceiver, MAX_VIDEO_FRAME_LEN};
use rustox_net_crypto::Timestamp;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = RtpHeader::parse(data) {
        let enc = h.encode();
        assert_eq!(RtpHeader::parse(&enc), Ok(h));
        assert_eq!(enc[..32], data[..32]);
        assert_eq!(enc[76..], data[76..80]);
    }
    for kind in [MediaKind::Audio, MediaKind::Video] {
        let mut rx = RtpReceiver::new(kind);
        if let Ok(Some(f)) = rx.handle_packet(Timestamp::ZERO, data) {
            assert!(f.data.len() <= MAX_VIDEO_FRAME_LEN as usize);
            assert!(f.data.len() < data.len());
        }
    }
});
