//! Two engines in memory: audio and video flowing over lossy, jittery links in simulated
//! time; latency, concealment, rates, key frames, forged packets.

use std::collections::HashMap;
use std::time::Duration;

use rustox_net_crypto::Timestamp;

use super::tests_support::*;
use super::*;
use crate::av::codec::YuvFrame;

/// Sends `frames` audio frames from a every 20 ms (marks 1..), runs 1 s more, and returns
/// the latency of each mark received at b (ms) and the concealed frames b played.
fn audio_run(p: &mut Pair, frames: i16) -> (Vec<u64>, usize) {
    let mut sent: HashMap<i16, Timestamp> = HashMap::new();
    for mark in 1..=frames {
        p.a_sends_audio(mark).unwrap();
        sent.insert(mark, p.now);
        p.run_ms(20);
    }
    p.run_ms(1000);
    let mut latencies = Vec::new();
    let mut concealed = 0;
    for (at, e) in &p.b_events {
        if let AvEvent::AudioFrame {
            pcm,
            channels,
            sampling_rate,
            ..
        } = e
        {
            assert_eq!((*channels, *sampling_rate), (1, 48000));
            assert_eq!(pcm.len(), 960);
            if pcm[0] == CONCEALED {
                concealed += 1;
            } else if let Some(t) = sent.get(&pcm[0]) {
                latencies.push(at.saturating_duration_since(*t).as_millis() as u64);
            }
        }
    }
    (latencies, concealed)
}

fn p95(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[(v.len() * 95 / 100).min(v.len() - 1)]
}

#[test]
fn audio_flows_in_order_with_small_latency_on_a_clean_link() {
    let mut p = Pair::new(11, Link::default());
    p.connect((48, 0), (48, 0));
    let (mut lat, concealed) = audio_run(&mut p, 200);
    assert_eq!(lat.len(), 200, "every frame arrives");
    assert_eq!(concealed, 0);
    let p95 = p95(&mut lat);
    println!("clean link: p95 {p95} ms");
    assert!(p95 <= 30 + 60, "p95 {p95} ms");
    let s = p.b.stats();
    assert_eq!(s.audio_frames_received, 200);
    assert_eq!(p.a.stats().audio_frames_sent, 200);
    assert_eq!(p.b.iteration_interval(), Duration::from_millis(20));
}

#[test]
fn audio_over_a_jittery_link_stays_within_one_way_plus_60_ms() {
    let link = Link {
        one_way: Duration::from_millis(50),
        jitter: Duration::from_millis(30),
        loss: 0.0,
    };
    let mut p = Pair::new(12, link);
    p.connect((48, 0), (48, 0));
    let (mut lat, concealed) = audio_run(&mut p, 500);
    let p95 = p95(&mut lat);
    let s = p.b.stats();
    println!(
        "jitter 30 ms: p95 {p95} ms, received {}, concealed {concealed}, late {}",
        lat.len(),
        s.audio_frames_late
    );
    assert!(p95 <= 50 + 60, "p95 {p95} ms");
    assert!(lat.len() >= 490, "{} of 500 played", lat.len());
}

#[test]
fn five_percent_loss_is_concealed_with_fec_and_counted() {
    let link = Link {
        one_way: Duration::from_millis(20),
        jitter: Duration::from_millis(5),
        loss: 0.05,
    };
    let mut p = Pair::new(13, link);
    p.connect((48, 0), (48, 0));
    let (lat, concealed) = audio_run(&mut p, 1000);
    let s = p.b.stats();
    println!(
        "5 % loss: received {}, concealed {concealed}, stats {:?}",
        lat.len(),
        s
    );
    assert!(
        (900..=990).contains(&lat.len()),
        "{} frames decoded",
        lat.len()
    );
    assert!(concealed > 20, "lost frames concealed: {concealed}");
    assert_eq!(s.audio_frames_concealed as usize, concealed);
    // Every frame sent is either played or concealed (gaps at the very end excepted).
    assert!(lat.len() + concealed >= 995);
}

fn picture(mark: u8, w: u16, h: u16) -> (Vec<u8>, Vec<u8>) {
    let y = vec![mark; usize::from(w) * usize::from(h)];
    let c = vec![128; usize::from(w).div_ceil(2) * usize::from(h).div_ceil(2)];
    (y, c)
}

fn send_picture(p: &mut Pair, mark: u8, w: u16, h: u16) -> Result<(), SendFrameError> {
    let (y, c) = picture(mark, w, h);
    let f = YuvFrame {
        width: w,
        height: h,
        y: &y,
        u: &c,
        v: &c,
    };
    p.a.send_video_frame(p.now, F, &f)
}

fn video_marks(p: &Pair) -> Vec<(u8, u16, u16)> {
    p.b_events
        .iter()
        .filter_map(|(_, e)| match e {
            AvEvent::VideoFrame {
                y, width, height, ..
            } => Some((y[0], *width, *height)),
            _ => None,
        })
        .collect()
}

#[test]
fn video_frames_arrive_split_and_reassembled_and_resize() {
    let mut p = Pair::new(14, Link::default());
    p.connect((48, 2000), (48, 0));
    for mark in 1..=10u8 {
        send_picture(&mut p, mark, 64, 48).unwrap();
        p.run_ms(33);
    }
    send_picture(&mut p, 11, 32, 16).unwrap();
    p.run_ms(200);
    let marks = video_marks(&p);
    assert_eq!(marks.len(), 11);
    assert_eq!(marks[0], (1, 64, 48));
    assert_eq!(marks[10], (11, 32, 16));
    let a = p.a.stats();
    assert_eq!(a.video_frames_sent, 11);
    assert_eq!(p.b.stats().video_frames_received, 11);
    // Frames of 2000 kbit/s at 30 fps (8 kB; key frames 33 kB) span several packets.
    assert!(a.video_frames_sent < 200);
}

#[test]
fn a_lost_video_frame_makes_the_receiver_ask_for_a_key_frame() {
    let mut p = Pair::new(15, Link::default());
    p.connect((0, 500), (48, 0));
    // Past the first key frames.
    for mark in 1..=10u8 {
        send_picture(&mut p, mark, 32, 32).unwrap();
        p.run_ms(33);
    }
    assert_eq!(p.a.stats().keyframe_requests_received, 0);
    p.drop_from_a = Some(crate::av::rtp::PACKET_ID_VIDEO);
    send_picture(&mut p, 11, 32, 32).unwrap();
    p.run_ms(33);
    p.drop_from_a = None;
    send_picture(&mut p, 12, 32, 32).unwrap();
    p.run_ms(100);
    assert_eq!(p.b.stats().keyframe_requests_sent, 1);
    assert_eq!(p.a.stats().keyframe_requests_received, 1);
    assert!(p.b.stats().video_frames_dropped >= 1);
    // The next frame a sends is a key frame: b stops asking.
    send_picture(&mut p, 13, 32, 32).unwrap();
    p.run_ms(400);
    send_picture(&mut p, 14, 32, 32).unwrap();
    p.run_ms(100);
    assert_eq!(p.b.stats().keyframe_requests_sent, 1);
}

#[test]
fn a_path_estimate_lowers_the_video_rate_and_suggests_it() {
    let mut p = Pair::new(16, Link::default());
    p.connect((48, 5000), (48, 0));
    send_picture(&mut p, 1, 64, 64).unwrap();
    assert_eq!(p.a.encoder_bit_rates(F).unwrap().1, 5_000_000);
    p.a.handle_path(
        p.now,
        F,
        PathEstimate {
            rtt: Duration::from_millis(60),
            bandwidth_bps: 1_000_000,
        },
    );
    p.pump();
    let suggested: Vec<u32> = p
        .a_events
        .iter()
        .filter_map(|(_, e)| match e {
            AvEvent::VideoBitRate { bit_rate, .. } => Some(*bit_rate),
            _ => None,
        })
        .collect();
    assert_eq!(suggested, vec![720]);
    send_picture(&mut p, 2, 64, 64).unwrap();
    assert_eq!(p.a.encoder_bit_rates(F).unwrap(), (0, 720_000));
    // Audio keeps its rate on a link that carries it.
    p.a_sends_audio(1).unwrap();
    assert_eq!(p.a.encoder_bit_rates(F).unwrap().0, 48_000);
}

#[test]
fn loss_reports_suggest_a_lower_video_rate_as_toxav() {
    let link = Link {
        one_way: Duration::from_millis(20),
        jitter: Duration::ZERO,
        loss: 0.3,
    };
    let mut p = Pair::new(17, link);
    p.connect((48, 1000), (48, 0));
    for mark in 0..120u8 {
        send_picture(&mut p, mark, 64, 64).unwrap();
        p.run_ms(33);
    }
    let suggested: Vec<u32> = p
        .a_events
        .iter()
        .filter_map(|(_, e)| match e {
            AvEvent::VideoBitRate { bit_rate, .. } => Some(*bit_rate),
            _ => None,
        })
        .collect();
    println!("suggestions under 30 % loss: {suggested:?}");
    assert!(!suggested.is_empty());
    assert!(suggested.iter().all(|&r| r < 1000 && r > 300));
}

#[test]
fn forged_and_garbage_packets_are_counted_and_change_nothing() {
    let mut p = Pair::new(18, Link::default());
    p.connect((48, 1000), (48, 1000));
    let before_calls = (p.a.call_count(), p.b.call_count());
    let mut rng_state = 0x1234_5678u64;
    let mut next = || {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        rng_state
    };
    let ids = [
        crate::av::msi::PACKET_ID_MSI,
        crate::av::rtp::PACKET_ID_AUDIO,
        crate::av::rtp::PACKET_ID_VIDEO,
        crate::av::bwc::PACKET_ID_BWC,
        PACKET_ID_KEYFRAME_REQUEST,
        198,
    ];
    for i in 0..3000usize {
        let len = (next() % 200) as usize;
        let mut pkt: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if !pkt.is_empty() {
            pkt[0] = ids[i % ids.len()];
        }
        if i % ids.len() == 0 {
            p.b.handle_msi(p.now, F, &pkt);
        } else {
            p.b.handle_media(p.now, F, &pkt);
        }
    }
    p.b.handle_media(p.now, F, &[]);
    p.b.handle_msi(p.now, F, &[]);
    p.pump();
    let s = p.b.stats();
    println!("garbage: {s:?}");
    assert!(s.packets_malformed > 1000, "{s:?}");
    assert_eq!((p.a.call_count(), p.b.call_count()), before_calls);
    assert_eq!(s.audio_frames_received, 0);
    assert!(
        !p.b_events
            .iter()
            .any(|(_, e)| matches!(e, AvEvent::State { .. } | AvEvent::Call { .. })),
        "no state change"
    );
    // The call still works.
    p.a_sends_audio(77).unwrap();
    p.run_ms(200);
    assert!(p
        .b_events
        .iter()
        .any(|(_, e)| matches!(e, AvEvent::AudioFrame { pcm, .. } if pcm.first() == Some(&77))));
}

#[test]
fn iteration_interval_and_timeouts() {
    let mut p = Pair::new(19, Link::default());
    assert_eq!(p.a.iteration_interval(), Duration::from_millis(200));
    assert_eq!(p.a.poll_timeout(), None);
    p.connect((48, 0), (48, 0));
    assert!(p.b.poll_timeout().is_some());
    for mark in 0..5 {
        p.a_sends_audio(mark).unwrap();
        p.run_ms(20);
    }
    assert_eq!(p.b.iteration_interval(), Duration::from_millis(20));
}

#[test]
fn a_new_rate_or_channel_count_recreates_the_codecs_at_both_ends() {
    let mut p = Pair::new(20, Link::default());
    p.connect((48, 0), (48, 0));
    let formats = [(48000u32, 1u8), (16000, 2), (8000, 1), (48000, 2)];
    for (rate, channels) in formats {
        let samples = (rate / 50) as usize;
        let pcm = vec![7i16; samples * usize::from(channels)];
        for _ in 0..3 {
            p.a.send_audio_frame(p.now, F, &pcm, samples, channels, rate)
                .unwrap();
            p.run_ms(20);
        }
    }
    p.run_ms(500);
    let mut seen: Vec<(u32, u8, usize)> = Vec::new();
    for (_, e) in &p.b_events {
        if let AvEvent::AudioFrame {
            pcm,
            channels,
            sampling_rate,
            ..
        } = e
        {
            let entry = (*sampling_rate, *channels, pcm.len());
            if seen.last() != Some(&entry) {
                seen.push(entry);
            }
        }
    }
    assert_eq!(
        seen,
        vec![
            (48000, 1, 960),
            (16000, 2, 640),
            (8000, 1, 160),
            (48000, 2, 1920)
        ]
    );
}

#[test]
fn a_link_too_small_for_the_audio_lowers_it_too() {
    let mut p = Pair::new(22, Link::default());
    p.connect((64, 500), (48, 0));
    p.a.handle_path(
        p.now,
        F,
        PathEstimate {
            rtt: Duration::from_millis(300),
            bandwidth_bps: 80_000,
        },
    );
    p.pump();
    let audio: Vec<u32> = p
        .a_events
        .iter()
        .filter_map(|(_, e)| match e {
            AvEvent::AudioBitRate { bit_rate, .. } => Some(*bit_rate),
            _ => None,
        })
        .collect();
    assert_eq!(audio, vec![12]);
    p.a_sends_audio(1).unwrap();
    send_picture(&mut p, 1, 32, 32).unwrap();
    assert_eq!(p.a.encoder_bit_rates(F), Some((12_000, 16_000)));
}
