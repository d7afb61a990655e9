//! Two engines in memory: signalling, controls, bit rates, errors, end of calls.

use std::time::Duration;

use super::tests_support::*;
use super::*;

const S_A: u32 = FriendCallState::SENDING_A;
const S_V: u32 = FriendCallState::SENDING_V;
const R_A: u32 = FriendCallState::ACCEPTING_A;
const R_V: u32 = FriendCallState::ACCEPTING_V;

#[test]
fn call_rings_is_answered_and_the_caller_hears_the_peers_capabilities() {
    let mut p = Pair::new(1, Link::default());
    p.a.call(p.now, F, 48, 0).unwrap();
    assert!(p.a.in_call(F));
    assert_eq!(p.a.call_count(), 1);
    p.run_ms(100);
    let calls: Vec<_> = p
        .b_events
        .iter()
        .filter_map(|(_, e)| match e {
            AvEvent::Call {
                friend,
                audio,
                video,
            } => Some((*friend, *audio, *video)),
            _ => None,
        })
        .collect();
    assert_eq!(calls, vec![(F, true, false)]);
    assert!(p.b.in_call(F));
    // Not answered yet: no frames, no bit-rate changes.
    assert_eq!(p.a_sends_audio(1), Err(SendFrameError::FriendNotInCall));
    assert_eq!(
        p.a.set_audio_bit_rate(p.now, F, 32),
        Err(BitRateError::FriendNotInCall)
    );
    p.b.answer(p.now, F, 64, 2000).unwrap();
    p.run_ms(100);
    // toxav.c `callback_start`: the caller hears the callee's capabilities.
    assert_eq!(Pair::states(&p.a_events), vec![S_A | S_V | R_A | R_V]);
    // The callee hears nothing on its own answer (toxav.c reports no state there).
    assert_eq!(Pair::states(&p.b_events), Vec::<u32>::new());
    assert_eq!(p.a_sends_audio(1), Ok(()));
    assert_eq!(
        p.a.self_capabilities(F),
        Some((S_A | R_A | R_V) as u8),
        "a sends audio only"
    );
}

#[test]
fn commands_refused_with_toxavs_errors() {
    let mut p = Pair::new(2, Link::default());
    let now = p.now;
    assert_eq!(p.a.call(now, F, 5, 0), Err(CallError::InvalidBitRate));
    assert_eq!(p.a.call(now, F, 511, 0), Err(CallError::InvalidBitRate));
    assert_eq!(p.a.call_count(), 0, "a refused call leaves nothing");
    assert_eq!(
        p.a.answer(now, F, 48, 0),
        Err(AnswerError::FriendNotCalling)
    );
    assert_eq!(
        p.a.control(now, F, CallControl::Pause),
        Err(ControlError::FriendNotInCall)
    );
    assert_eq!(
        p.a.set_video_bit_rate(now, F, 100),
        Err(BitRateError::FriendNotInCall)
    );
    // Any u32 is a valid video rate in 0.2.18.
    p.a.call(now, F, 0, u32::MAX).unwrap();
    assert_eq!(p.a.call(now, F, 48, 0), Err(CallError::AlreadyInCall));
    // Ringing: only CANCEL applies.
    assert_eq!(
        p.a.control(now, F, CallControl::MuteAudio),
        Err(ControlError::FriendNotInCall)
    );
    p.run_ms(100);
    assert_eq!(
        p.b.answer(p.now, F, 600, 0),
        Err(AnswerError::InvalidBitRate)
    );
    p.b.answer(p.now, F, 48, 0).unwrap();
    p.run_ms(100);
    assert_eq!(
        p.a.control(p.now, F, CallControl::Resume),
        Err(ControlError::InvalidTransition),
        "not paused"
    );
    assert_eq!(
        p.a.set_audio_bit_rate(p.now, F, 1000),
        Err(BitRateError::InvalidBitRate)
    );
    // a sends no audio (rate 0): its audio frames are disabled; b's video likewise.
    assert_eq!(p.a_sends_audio(3), Err(SendFrameError::PayloadTypeDisabled));
}

#[test]
fn invalid_audio_frames_are_refused() {
    let mut p = Pair::new(3, Link::default());
    p.connect((48, 0), (48, 0));
    let now = p.now;
    let pcm = vec![0i16; 5760 * 2];
    for (samples, channels, rate) in [
        (960, 3, 48000),
        (960, 0, 48000),
        (441, 1, 44100),
        (961, 1, 48000),
        (100, 1, 8000),
    ] {
        assert_eq!(
            p.a.send_audio_frame(now, F, &pcm, samples, channels, rate),
            Err(SendFrameError::Invalid),
            "{samples} {channels} {rate}"
        );
    }
    assert_eq!(
        p.a.send_audio_frame(now, F, &pcm[..100], 960, 1, 48000),
        Err(SendFrameError::Invalid),
        "pcm shorter than the count"
    );
    // Every Opus duration at every rate, mono and stereo.
    for rate in SAMPLING_RATES {
        for tenths in FRAME_DURATIONS_TENTHS_MS {
            let samples = (rate * tenths / 10_000) as usize;
            for channels in [1, 2] {
                assert_eq!(
                    p.a.send_audio_frame(now, F, &pcm, samples, channels, rate),
                    Ok(())
                );
            }
        }
    }
    let y = [0u8; 4];
    let bad = crate::av::codec::YuvFrame {
        width: 2,
        height: 2,
        y: &y,
        u: &y[..1],
        v: &y[..1],
    };
    assert_eq!(
        p.a.send_video_frame(now, F, &bad),
        Err(SendFrameError::PayloadTypeDisabled),
        "no video in this call"
    );
}

#[test]
fn pause_resume_mute_hide_as_toxav() {
    let mut p = Pair::new(4, Link::default());
    p.connect((48, 1000), (48, 1000));
    let all = S_A | S_V | R_A | R_V;
    p.a.control(p.now, F, CallControl::Pause).unwrap();
    assert_eq!(
        p.a.control(p.now, F, CallControl::Pause),
        Err(ControlError::InvalidTransition)
    );
    p.run_ms(100);
    assert_eq!(Pair::states(&p.b_events), vec![0]);
    // b must not send to a paused a; a sends nothing while paused.
    let pcm = [0i16; 960];
    assert_eq!(
        p.b.send_audio_frame(p.now, F, &pcm, 960, 1, 48000),
        Err(SendFrameError::PayloadTypeDisabled)
    );
    assert_eq!(p.a_sends_audio(1), Err(SendFrameError::PayloadTypeDisabled));
    p.a.control(p.now, F, CallControl::Resume).unwrap();
    p.run_ms(100);
    assert_eq!(Pair::states(&p.b_events), vec![0, all]);
    assert_eq!(p.b.send_audio_frame(p.now, F, &pcm, 960, 1, 48000), Ok(()));

    p.b_events.clear();
    p.a.control(p.now, F, CallControl::MuteAudio).unwrap();
    assert_eq!(
        p.a.control(p.now, F, CallControl::MuteAudio),
        Err(ControlError::InvalidTransition)
    );
    p.a.control(p.now, F, CallControl::HideVideo).unwrap();
    assert_eq!(
        p.a.control(p.now, F, CallControl::HideVideo),
        Err(ControlError::InvalidTransition)
    );
    p.run_ms(100);
    assert_eq!(Pair::states(&p.b_events), vec![all & !R_A, S_A | S_V]);
    assert_eq!(
        p.b.send_audio_frame(p.now, F, &pcm, 960, 1, 48000),
        Err(SendFrameError::PayloadTypeDisabled),
        "a is muted"
    );
    p.a.control(p.now, F, CallControl::UnmuteAudio).unwrap();
    p.a.control(p.now, F, CallControl::ShowVideo).unwrap();
    p.run_ms(100);
    assert_eq!(
        Pair::states(&p.b_events),
        vec![all & !R_A, S_A | S_V, all & !R_V, all]
    );
    // toxav.c refuses UNMUTE only when receiving audio is all a call has.
    p.a.set_audio_bit_rate(p.now, F, 0).unwrap();
    p.a.set_video_bit_rate(p.now, F, 0).unwrap();
    p.a.control(p.now, F, CallControl::HideVideo).unwrap();
    assert_eq!(p.a.self_capabilities(F), Some(R_A as u8));
    assert_eq!(
        p.a.control(p.now, F, CallControl::UnmuteAudio),
        Err(ControlError::InvalidTransition)
    );
}

#[test]
fn hangup_by_either_side() {
    for caller_hangs_up in [true, false] {
        let mut p = Pair::new(5, Link::default());
        p.connect((48, 0), (48, 0));
        let (hanger, other_events) = if caller_hangs_up {
            (&mut p.a, false)
        } else {
            (&mut p.b, true)
        };
        hanger.control(p.now, F, CallControl::Cancel).unwrap();
        assert!(!hanger.in_call(F));
        assert_eq!(
            hanger.control(p.now, F, CallControl::Cancel),
            Err(ControlError::FriendNotInCall)
        );
        p.run_ms(100);
        let (heard, own) = if other_events {
            (&p.a_events, &p.b_events)
        } else {
            (&p.b_events, &p.a_events)
        };
        assert_eq!(Pair::states(heard), vec![FriendCallState::FINISHED]);
        assert!(Pair::states(own).is_empty());
        assert_eq!(p.a.call_count() + p.b.call_count(), 0);
        assert_eq!(p.a.iteration_interval(), Duration::from_millis(200));
    }
}

#[test]
fn cancel_while_ringing_and_a_call_after() {
    let mut p = Pair::new(6, Link::default());
    p.a.call(p.now, F, 48, 0).unwrap();
    p.run_ms(100);
    p.a.control(p.now, F, CallControl::Cancel).unwrap();
    p.run_ms(100);
    assert_eq!(Pair::states(&p.b_events), vec![FriendCallState::FINISHED]);
    assert!(!p.b.in_call(F));
    p.b_events.clear();
    // The callee rejects: the caller hears FINISHED.
    p.a.call(p.now, F, 48, 0).unwrap();
    p.run_ms(100);
    p.b.control(p.now, F, CallControl::Cancel).unwrap();
    p.run_ms(100);
    assert_eq!(Pair::states(&p.a_events), vec![FriendCallState::FINISHED]);
    assert_eq!(p.a.call_count() + p.b.call_count(), 0);
    p.a_events.clear();
    p.b_events.clear();
    p.connect((48, 0), (48, 0));
    assert!(p.a.in_call(F) && p.b.in_call(F));
}

#[test]
fn a_friend_going_offline_ends_the_call_with_error() {
    let mut p = Pair::new(7, Link::default());
    p.connect((48, 0), (48, 0));
    p.b.handle_friend_offline(p.now, F);
    p.pump();
    assert_eq!(Pair::states(&p.b_events), vec![FriendCallState::ERROR]);
    assert!(!p.b.in_call(F));
    // A call to a friend that goes offline while ringing ends too.
    let mut q = Pair::new(8, Link::default());
    q.a.call(q.now, F, 48, 0).unwrap();
    q.a.handle_friend_offline(q.now, F);
    q.pump();
    assert_eq!(Pair::states(&q.a_events), vec![FriendCallState::ERROR]);
    assert_eq!(q.a.call_count(), 0);
}

#[test]
fn bit_rates_changed_mid_call() {
    let mut p = Pair::new(9, Link::default());
    p.connect((48, 500), (48, 0));
    assert_eq!(p.a_sends_audio(1), Ok(()));
    assert_eq!(p.a.encoder_bit_rates(F), Some((48_000, 0)));
    // Non-zero to non-zero: the encoder only, no signalling.
    p.a.set_audio_bit_rate(p.now, F, 24).unwrap();
    p.run_ms(50);
    assert!(Pair::states(&p.b_events).is_empty());
    assert_eq!(p.a_sends_audio(2), Ok(()));
    assert_eq!(p.a.encoder_bit_rates(F), Some((24_000, 0)));
    // To 0: the peer hears a's audio stop; sending is disabled.
    p.a.set_audio_bit_rate(p.now, F, 0).unwrap();
    p.run_ms(50);
    assert_eq!(Pair::states(&p.b_events), vec![S_V | R_A | R_V]);
    assert_eq!(p.a_sends_audio(3), Err(SendFrameError::PayloadTypeDisabled));
    // Back from 0.
    p.a.set_audio_bit_rate(p.now, F, 32).unwrap();
    p.a.set_video_bit_rate(p.now, F, 0).unwrap();
    p.run_ms(50);
    assert_eq!(
        Pair::states(&p.b_events),
        vec![S_V | R_A | R_V, S_A | S_V | R_A | R_V, S_A | R_A | R_V]
    );
    assert_eq!(p.a_sends_audio(4), Ok(()));
    assert_eq!(p.a.encoder_bit_rates(F).unwrap().0, 32_000);
}

#[test]
fn calls_are_bounded() {
    let mut calls = Calls::new(Box::new(MarkCodecs));
    let now = rustox_net_crypto::Timestamp::from_secs(1);
    for f in 0..MAX_CALLS as u32 {
        calls.call(now, f, 48, 0).unwrap();
    }
    assert_eq!(calls.call(now, 5000, 48, 0), Err(CallError::TooMany));
    assert_eq!(calls.call_count(), MAX_CALLS);
    let mut n = 0;
    while calls.poll_transmit().is_some() {
        n += 1;
    }
    assert_eq!(n, MAX_CALLS, "one invitation each");
}
