//! Opus through rustox-codec, configured as c-toxcore's audio.c: tones survive a round trip,
//! FEC rebuilds a lost frame, the bit rate changes mid-stream, every rate and channel count
//! toxav accepts works, and bad input is an error.

use rustox_codec::audio::{valid_frame_size, SAMPLING_RATES};
use rustox_codec::{AudioDecoder, AudioEncoder, Error};
use std::f64::consts::PI;

/// `frames` frames of `ms` ms of a `freq` Hz tone, interleaved over `channels`.
fn tone(freq: f64, rate: u32, channels: u8, samples: usize, start: usize) -> Vec<i16> {
    let mut pcm = Vec::with_capacity(samples * usize::from(channels));
    for n in start..start + samples {
        let s = (8000.0 * (2.0 * PI * freq * n as f64 / f64::from(rate)).sin()) as i16;
        for _ in 0..channels {
            pcm.push(s);
        }
    }
    pcm
}

/// Power of `freq` in `x` (Goertzel).
fn power(x: &[f64], freq: f64, rate: u32) -> f64 {
    let w = 2.0 * PI * freq / f64::from(rate);
    let c = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0, 0.0);
    for &v in x {
        let s = v + c * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    s1 * s1 + s2 * s2 - c * s1 * s2
}

/// The strongest frequency of 1 Hz steps between 100 and 2000 Hz in the first channel.
fn dominant(pcm: &[i16], channels: u8, rate: u32) -> f64 {
    let x: Vec<f64> = pcm
        .iter()
        .step_by(usize::from(channels))
        .map(|&s| f64::from(s))
        .collect();
    (100..2000)
        .map(f64::from)
        .max_by(|a, b| power(&x, *a, rate).total_cmp(&power(&x, *b, rate)))
        .unwrap()
}

fn rms(pcm: &[i16]) -> f64 {
    (pcm.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>() / pcm.len().max(1) as f64).sqrt()
}

/// Encodes `frames` 20 ms frames of a tone and decodes them, returning the packets and PCM.
fn round_trip(rate: u32, channels: u8, freq: f64, frames: usize) -> (Vec<Vec<u8>>, Vec<i16>) {
    let mut enc = AudioEncoder::new(48_000, rate, channels).unwrap();
    let mut dec = AudioDecoder::new(rate, channels).unwrap();
    let samples = rate as usize / 50;
    let mut packets = Vec::new();
    let mut pcm = Vec::new();
    for f in 0..frames {
        let input = tone(freq, rate, channels, samples, f * samples);
        let mut out = vec![0u8; samples + 4];
        let n = enc.encode(&input, &mut out).unwrap();
        assert!(n > 0);
        out.truncate(n);
        assert_eq!(dec.decode(&out, &mut pcm).unwrap(), samples);
        packets.push(out);
    }
    (packets, pcm)
}

#[test]
fn tone_comes_back_at_its_frequency() {
    let (_, pcm) = round_trip(48_000, 1, 440.0, 50);
    // Skip the first 200 ms (codec start-up).
    let f = dominant(&pcm[9600..], 1, 48_000);
    assert!((f - 440.0).abs() <= 2.0, "440 Hz came back at {f} Hz");
    assert!(
        rms(&pcm[9600..]) > 2000.0,
        "tone too quiet: {}",
        rms(&pcm[9600..])
    );
}

#[test]
fn every_rate_and_channel_count_toxav_accepts() {
    for rate in SAMPLING_RATES {
        for channels in [1u8, 2] {
            let (packets, pcm) = round_trip(rate, channels, 440.0, 25);
            assert_eq!(pcm.len(), 25 * rate as usize / 50 * usize::from(channels));
            assert_eq!(
                AudioDecoder::packet_channels(&packets[10]).unwrap(),
                channels
            );
            let skip = rate as usize / 5 * usize::from(channels);
            let f = dominant(&pcm[skip..], channels, rate);
            assert!(
                (f - 440.0).abs() <= 3.0,
                "{rate} Hz × {channels}: tone at {f} Hz"
            );
        }
    }
    for rate in [0, 11_025, 22_050, 44_100, 96_000] {
        assert_eq!(
            AudioEncoder::new(48_000, rate, 1).unwrap_err(),
            Error::SamplingRate(rate)
        );
        assert_eq!(
            AudioDecoder::new(rate, 1).unwrap_err(),
            Error::SamplingRate(rate)
        );
    }
    for channels in [0u8, 3, 255] {
        assert_eq!(
            AudioEncoder::new(48_000, 48_000, channels).unwrap_err(),
            Error::Channels(channels)
        );
    }
}

#[test]
fn every_frame_duration_toxav_accepts() {
    for rate in SAMPLING_RATES {
        let mut enc = AudioEncoder::new(32_000, rate, 1).unwrap();
        let mut dec = AudioDecoder::new(rate, 1).unwrap();
        for tenth_ms in [25, 50, 100, 200, 400, 600] {
            let samples = rate as usize * tenth_ms / 10_000;
            assert!(valid_frame_size(samples, rate));
            let mut out = vec![0u8; 4000];
            let n = enc
                .encode(&tone(440.0, rate, 1, samples, 0), &mut out)
                .unwrap();
            let mut pcm = Vec::new();
            assert_eq!(dec.decode(&out[..n], &mut pcm).unwrap(), samples);
        }
        let bad = rate as usize * 30 / 1000;
        let err = enc.encode(&vec![0; bad], &mut [0u8; 4000]).unwrap_err();
        assert_eq!(
            err,
            Error::FrameSize {
                samples: bad,
                sampling_rate: rate
            }
        );
    }
    let mut stereo = AudioEncoder::new(32_000, 48_000, 2).unwrap();
    assert!(matches!(
        stereo.encode(&[0; 1921], &mut [0u8; 4000]),
        Err(Error::Interleave { .. })
    ));
}

#[test]
fn fec_rebuilds_a_lost_frame_from_the_next_packet() {
    let (packets, reference) = round_trip(48_000, 1, 440.0, 30);
    let mut dec = AudioDecoder::new(48_000, 1).unwrap();
    let mut pcm = Vec::new();
    let lost = 20;
    for p in &packets[..lost] {
        dec.decode(p, &mut pcm).unwrap();
    }
    let mut rebuilt = Vec::new();
    assert_eq!(
        dec.decode_fec(&packets[lost + 1], 960, &mut rebuilt)
            .unwrap(),
        960
    );
    assert_eq!(rebuilt.len(), 960);
    let level = rms(&rebuilt);
    assert!(
        level > 1000.0,
        "the FEC frame is (nearly) silent: rms {level}"
    );
    let f = dominant(&rebuilt, 1, 48_000);
    assert!((f - 440.0).abs() <= 5.0, "FEC frame at {f} Hz");
    // The rebuilt frame is close to what the real packet decodes to.
    let real = &reference[lost * 960..(lost + 1) * 960];
    let diff: Vec<i16> = real
        .iter()
        .zip(&rebuilt)
        .map(|(a, b)| a.saturating_sub(*b))
        .collect();
    assert!(
        rms(&diff) < rms(real),
        "FEC frame unlike the lost one: {} vs {}",
        rms(&diff),
        rms(real)
    );
    // Then the next packet decodes normally.
    let mut next = Vec::new();
    assert_eq!(dec.decode(&packets[lost + 1], &mut next).unwrap(), 960);
}

#[test]
fn concealment_gives_a_frame_of_the_right_length() {
    let (packets, _) = round_trip(24_000, 2, 440.0, 10);
    let mut dec = AudioDecoder::new(24_000, 2).unwrap();
    let mut pcm = Vec::new();
    for p in &packets {
        dec.decode(p, &mut pcm).unwrap();
    }
    let mut concealed = Vec::new();
    assert_eq!(dec.conceal(480, &mut concealed).unwrap(), 480);
    assert_eq!(concealed.len(), 960);
    assert!(dec.conceal(0, &mut concealed).is_err());
    assert!(dec.conceal(481, &mut concealed).is_err());
    assert!(dec.conceal(24_000, &mut concealed).is_err());
}

#[test]
fn bit_rate_changes_mid_stream() {
    let mut enc = AudioEncoder::new(64_000, 48_000, 1).unwrap();
    let mut dec = AudioDecoder::new(48_000, 1).unwrap();
    let mut sizes = [0usize; 2];
    let mut pcm = Vec::new();
    for f in 0..100 {
        if f == 50 {
            enc.set_bit_rate(16_000).unwrap();
            assert_eq!(enc.bit_rate(), 16_000);
        }
        let mut out = [0u8; 1500];
        let n = enc
            .encode(&tone(440.0, 48_000, 1, 960, f * 960), &mut out)
            .unwrap();
        if (10..50).contains(&f) {
            sizes[0] += n;
        } else if f >= 60 {
            sizes[1] += n;
        }
        dec.decode(&out[..n], &mut pcm).unwrap();
    }
    let (high, low) = (sizes[0] as f64 / 40.0, sizes[1] as f64 / 40.0);
    // 64 kbit/s of 20 ms frames is 160 bytes, 16 kbit/s 40 bytes.
    assert!(
        high > 2.5 * low,
        "64 kbit/s frames {high} B, 16 kbit/s {low} B"
    );
    let f = dominant(&pcm[80 * 960..], 1, 48_000);
    assert!(
        (f - 440.0).abs() <= 3.0,
        "after the change the tone is at {f} Hz"
    );
    assert_eq!(enc.set_bit_rate(0).unwrap_err(), Error::BitRate(0));
    // A new rate or channel count makes a new encoder (audio.c's reconfigure).
    enc.reconfigure(24_000, 16_000, 2).unwrap();
    assert_eq!(
        (enc.sampling_rate(), enc.channels(), enc.bit_rate()),
        (16_000, 2, 24_000)
    );
    assert!(enc.reconfigure(24_000, 44_100, 2).is_err());
    assert_eq!((enc.sampling_rate(), enc.channels()), (16_000, 2));
}

#[test]
fn garbage_packets_are_errors() {
    let mut dec = AudioDecoder::new(48_000, 2).unwrap();
    let mut pcm = Vec::new();
    assert_eq!(dec.decode(&[], &mut pcm).unwrap_err(), Error::EmptyPacket);
    assert!(dec.decode(&vec![0u8; 70_000], &mut pcm).is_err());
    // Code 3 with a zero frame count is invalid (RFC 6716 §3.2.5).
    assert!(dec.decode(&[0x03, 0x00], &mut pcm).is_err());
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for len in 1..400 {
        let packet: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let before = pcm.len();
        if let Ok(n) = dec.decode(&packet, &mut pcm) {
            assert_eq!(pcm.len() - before, n * 2);
        }
    }
}
