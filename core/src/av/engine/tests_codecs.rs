//! Calls on the project's codecs: the simulator's stand-in and (with the `codecs` feature)
//! libopus and libvpx. A tone sent at a known frequency arrives at that frequency through
//! loss and jitter; numbered test pictures arrive recognisable.

use std::time::Duration;

use super::tests_support::*;
use super::*;
use crate::av::codec::{CodecFactory, StandInCodecs, YuvFrame};
use crate::av::signal::{decode_pattern, estimate_frequency, pattern_picture, Tone};

const RATE: u32 = 48000;
const FRAME: usize = 960;

/// a sends `frames` 20 ms frames of a `hz` tone; returns b's audio (first channel) and the
/// frames b played and concealed.
fn tone_call(p: &mut Pair, hz: f64, frames: usize) -> (Vec<i16>, u64, u64) {
    p.connect((48, 0), (48, 0));
    let mut tone = Tone::new(hz, RATE, 1, 10_000);
    for _ in 0..frames {
        let pcm = tone.frame(FRAME);
        p.a.send_audio_frame(p.now, F, &pcm, FRAME, 1, RATE)
            .unwrap();
        p.run_ms(20);
    }
    p.run_ms(1000);
    let mut heard = Vec::new();
    for (_, e) in &p.b_events {
        if let AvEvent::AudioFrame {
            pcm,
            channels,
            sampling_rate,
            ..
        } = e
        {
            assert_eq!(*sampling_rate, RATE);
            heard.extend(pcm.iter().step_by(usize::from(*channels)));
        }
    }
    let s = p.b.stats();
    (heard, s.audio_frames_received, s.audio_frames_concealed)
}

/// a sends `count` numbered pictures at 30 per second; returns the numbers b recognised.
fn picture_call(p: &mut Pair, width: u16, height: u16, count: u16) -> Vec<u16> {
    p.connect((0, 800), (48, 0));
    for n in 0..count {
        let pic = pattern_picture(width, height, n);
        let f = YuvFrame {
            width,
            height,
            y: &pic.y,
            u: &pic.u,
            v: &pic.v,
        };
        p.a.send_video_frame(p.now, F, &f).unwrap();
        p.run_ms(33);
    }
    p.run_ms(500);
    p.b_events
        .iter()
        .filter_map(|(_, e)| match e {
            AvEvent::VideoFrame {
                width, height, y, ..
            } => decode_pattern(*width, *height, y),
            _ => None,
        })
        .collect()
}

fn lossy() -> Link {
    Link {
        one_way: Duration::from_millis(40),
        jitter: Duration::from_millis(10),
        loss: 0.05,
    }
}

fn check_tone(name: &str, hz: f64, heard: &[i16], received: u64, concealed: u64) {
    let f = estimate_frequency(heard, 1, RATE).expect("a tone");
    println!(
        "{name}: {hz} Hz heard as {f:.1} Hz; {received} frames decoded, {concealed} concealed"
    );
    assert!((f - hz).abs() < hz * 0.03, "{f} Hz");
    assert!(concealed > 0, "5 % loss was concealed");
    assert!(received + concealed >= 195, "{received} + {concealed}");
}

fn stand_in() -> Box<dyn CodecFactory> {
    Box::new(StandInCodecs)
}

#[test]
fn stand_in_tone_arrives_at_its_frequency_through_loss() {
    let mut p = Pair::with_codecs(31, lossy(), stand_in);
    let (heard, received, concealed) = tone_call(&mut p, 1000.0, 200);
    check_tone("stand-in", 1000.0, &heard, received, concealed);
}

#[test]
fn stand_in_pictures_arrive_recognisable() {
    let mut p = Pair::with_codecs(32, Link::default(), stand_in);
    let seen = picture_call(&mut p, 160, 120, 30);
    assert_eq!(seen, (0..30).collect::<Vec<u16>>());
}

#[cfg(feature = "codecs")]
mod system {
    use super::*;
    use crate::av::codec::SystemCodecs;

    fn system() -> Box<dyn CodecFactory> {
        Box::new(SystemCodecs)
    }

    #[test]
    fn opus_tone_arrives_at_its_frequency_through_loss_with_fec() {
        let mut p = Pair::with_codecs(33, lossy(), system);
        let (heard, received, concealed) = tone_call(&mut p, 440.0, 200);
        check_tone("opus", 440.0, &heard, received, concealed);
    }

    #[test]
    fn vp8_pictures_arrive_recognisable() {
        let mut p = Pair::with_codecs(34, Link::default(), system);
        let seen = picture_call(&mut p, 320, 240, 30);
        println!("vp8: recognised {} of 30", seen.len());
        assert!(seen.len() >= 28, "{seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "in order: {seen:?}");
    }
}
