//! Untrusted audio frames into libopus through rustox-codec's decoder: normal decoding, FEC
//! rebuilding from the packet, and concealment after it. The first byte picks the decoder's
//! sampling rate and channels (as a packet's announced format picks them in a call), the rest
//! is the packet.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_codec::audio::{MAX_FRAME_DURATION_MS, SAMPLING_RATES};
use rustox_codec::AudioDecoder;

fuzz_target!(|data: &[u8]| {
    let Some((&format, packet)) = data.split_first() else {
        return;
    };
    let rate = SAMPLING_RATES[usize::from(format & 0x7) % SAMPLING_RATES.len()];
    let channels = 1 + (format >> 3 & 1);
    let mut decoder = AudioDecoder::new(rate, channels).expect("a supported format");
    let max = (rate * MAX_FRAME_DURATION_MS / 1000) as usize;
    let mut out = Vec::new();
    if let Ok(samples) = decoder.decode(packet, &mut out) {
        assert!(samples <= max);
        assert_eq!(out.len(), samples * usize::from(channels));
    }
    let frame = rate as usize / 50;
    out.clear();
    if let Ok(samples) = decoder.decode_fec(packet, frame, &mut out) {
        assert_eq!(out.len(), samples * usize::from(channels));
    }
    out.clear();
    let samples = decoder.conceal(frame, &mut out).expect("concealment of a 20 ms frame");
    assert_eq!(out.len(), samples * usize::from(channels));
    let _ = AudioDecoder::packet_channels(packet);
});
