//! The session's life, its refusals in toxav.c's order before any engine work, a session
//! outliving its Tox, group audio's refusals, and NULL everywhere.

use std::ptr::{null, null_mut};

use super::*;
use crate::handle::Tox;
use crate::types::{
    Toxav_Err_Answer, Toxav_Err_Bit_Rate_Set, Toxav_Err_Call, Toxav_Err_Call_Control,
    Toxav_Err_New, Toxav_Err_Send_Frame,
};

fn new_tox() -> *mut Tox {
    let options = crate::options::Tox_Options {
        ipv6_enabled: false,
        local_discovery_enabled: false,
        start_port: 41400,
        end_port: 41500,
        ..crate::options::Tox_Options::default()
    };
    // SAFETY: valid options, no error pointer.
    let tox = unsafe { crate::lifecycle::tox_new(&options, null_mut()) };
    assert!(!tox.is_null());
    tox
}

#[test]
fn one_session_per_tox_and_a_new_one_after_kill() {
    let tox = new_tox();
    // SAFETY (every call): a live Tox, sessions from toxav_new, valid error pointers.
    unsafe {
        let mut err = Toxav_Err_New::MALLOC;
        assert!(toxav_new(null_mut(), &mut err).is_null());
        assert_eq!(err, Toxav_Err_New::NULL);
        let av = toxav_new(tox, &mut err);
        assert_eq!(err, Toxav_Err_New::OK);
        assert!(!av.is_null());
        assert_eq!(toxav_get_tox(av), tox);
        assert!(toxav_new(tox, &mut err).is_null());
        assert_eq!(err, Toxav_Err_New::MULTIPLE);
        assert_eq!(toxav_iteration_interval(av), IDLE_ITERATION_INTERVAL_MS);
        toxav_kill(av);
        let again = toxav_new(tox, &mut err);
        assert_eq!(err, Toxav_Err_New::OK, "a killed session makes room");
        assert!(!again.is_null());
        toxav_kill(again);
        crate::lifecycle::tox_kill(tox);
    }
}

/// The checks toxav.c makes before a call exists, in its order: the bit rate before the
/// friend for `toxav_call`, the friend before the bit rate everywhere else; an offline
/// friend cannot be called.
#[test]
fn refusals_come_in_toxav_c_order() {
    let tox = new_tox();
    // SAFETY (every call): a live Tox and session, valid error pointers.
    unsafe {
        let av = toxav_new(tox, null_mut());
        let mut e = Toxav_Err_Call::OK;
        assert!(!toxav_call(av, 7, 5, 0, &mut e));
        assert_eq!(e, Toxav_Err_Call::INVALID_BIT_RATE);
        assert!(!toxav_call(av, 7, 48, 0, &mut e));
        assert_eq!(e, Toxav_Err_Call::FRIEND_NOT_FOUND);
        assert_eq!(
            crate::friends::tox_friend_add_norequest(tox, [5u8; 32].as_ptr(), null_mut()),
            0
        );
        assert!(!toxav_call(av, 0, 48, 5000, &mut e));
        assert_eq!(e, Toxav_Err_Call::FRIEND_NOT_CONNECTED);
        assert!(!toxav_call(av, 0, 511, 0, &mut e));
        assert_eq!(e, Toxav_Err_Call::INVALID_BIT_RATE);

        let mut e = Toxav_Err_Answer::OK;
        assert!(!toxav_answer(av, 7, 5, 0, &mut e));
        assert_eq!(e, Toxav_Err_Answer::FRIEND_NOT_FOUND);
        assert!(!toxav_answer(av, 0, 5, 0, &mut e));
        assert_eq!(e, Toxav_Err_Answer::INVALID_BIT_RATE);

        let mut e = Toxav_Err_Bit_Rate_Set::OK;
        assert!(!toxav_audio_set_bit_rate(av, 7, 5, &mut e));
        assert_eq!(e, Toxav_Err_Bit_Rate_Set::FRIEND_NOT_FOUND);
        assert!(!toxav_audio_set_bit_rate(av, 0, 5, &mut e));
        assert_eq!(e, Toxav_Err_Bit_Rate_Set::INVALID_BIT_RATE);
        assert!(!toxav_video_set_bit_rate(av, 7, 500, &mut e));
        assert_eq!(e, Toxav_Err_Bit_Rate_Set::FRIEND_NOT_FOUND);

        let mut e = Toxav_Err_Call_Control::OK;
        assert!(!toxav_call_control(av, 7, 2, &mut e));
        assert_eq!(e, Toxav_Err_Call_Control::FRIEND_NOT_FOUND);

        let mut e = Toxav_Err_Send_Frame::OK;
        let pcm = [0i16; 960];
        assert!(!toxav_audio_send_frame(
            av,
            7,
            pcm.as_ptr(),
            960,
            1,
            48000,
            &mut e
        ));
        assert_eq!(e, Toxav_Err_Send_Frame::FRIEND_NOT_FOUND);
        assert!(!toxav_audio_send_frame(
            av,
            7,
            null(),
            960,
            1,
            48000,
            &mut e
        ));
        assert_eq!(e, Toxav_Err_Send_Frame::FRIEND_NOT_FOUND);
        assert!(!toxav_video_send_frame(
            av,
            7,
            4,
            4,
            null(),
            null(),
            null(),
            &mut e
        ));
        assert_eq!(e, Toxav_Err_Send_Frame::FRIEND_NOT_FOUND);
        toxav_kill(av);
        crate::lifecycle::tox_kill(tox);
    }
}

/// toxav.h asks for the session to be killed first; one that outlives its Tox refuses
/// everything as for an unknown friend and is still freed cleanly.
#[test]
fn a_session_outliving_its_tox_fails_cleanly() {
    let tox = new_tox();
    // SAFETY (every call): the session is live; its Tox is killed and never reached.
    unsafe {
        let av = toxav_new(tox, null_mut());
        let mut called = 0u32;
        toxav_callback_call(av, None, (&mut called as *mut u32).cast());
        crate::lifecycle::tox_kill(tox);
        let mut e = Toxav_Err_Call::OK;
        assert!(!toxav_call(av, 0, 48, 0, &mut e));
        assert_eq!(e, Toxav_Err_Call::FRIEND_NOT_FOUND);
        let mut e = Toxav_Err_Call_Control::OK;
        assert!(!toxav_call_control(av, 0, 2, &mut e));
        assert_eq!(e, Toxav_Err_Call_Control::FRIEND_NOT_FOUND);
        toxav_iterate(av);
        toxav_audio_iterate(av);
        toxav_video_iterate(av);
        assert_eq!(toxav_iteration_interval(av), IDLE_ITERATION_INTERVAL_MS);
        assert_eq!(
            toxav_audio_iteration_interval(av),
            IDLE_ITERATION_INTERVAL_MS
        );
        toxav_kill(av);
    }
}

/// groupav.c's -1 cases: a text conference, audio already on or off, NULL samples, a
/// cookie that is not an A/V one.
#[test]
fn group_audio_refusals() {
    let tox = new_tox();
    // SAFETY (every call): a live Tox; buffers as long as said.
    unsafe {
        let text = crate::conference::tox_conference_new(tox, null_mut());
        assert_eq!(text, 0);
        assert!(!toxav_groupchat_av_enabled(tox, text));
        assert_eq!(toxav_groupchat_enable_av(tox, text, None, null_mut()), -1);
        assert_eq!(toxav_groupchat_disable_av(tox, text), -1);
        let av = toxav_add_av_groupchat(tox, None, null_mut());
        assert_eq!(av, 1);
        assert!(toxav_groupchat_av_enabled(tox, 1));
        assert_eq!(toxav_groupchat_enable_av(tox, 1, None, null_mut()), -1);
        let pcm = [0i16; 960];
        assert_eq!(toxav_group_send_audio(tox, 1, null(), 960, 1, 48000), -1);
        assert_eq!(
            toxav_group_send_audio(tox, 1, pcm.as_ptr(), 960, 3, 48000),
            -1
        );
        assert_eq!(
            toxav_group_send_audio(tox, 9, pcm.as_ptr(), 960, 1, 48000),
            -1
        );
        assert_eq!(toxav_groupchat_disable_av(tox, 1), 0);
        assert!(!toxav_groupchat_av_enabled(tox, 1));
        assert_eq!(toxav_groupchat_disable_av(tox, 1), -1);
        assert_eq!(
            toxav_group_send_audio(tox, 1, pcm.as_ptr(), 960, 1, 48000),
            -1
        );
        assert_eq!(toxav_groupchat_enable_av(tox, 1, None, null_mut()), 0);
        assert!(toxav_groupchat_av_enabled(tox, 1));
        let mut cookie = [0u8; 35];
        assert_eq!(
            toxav_join_av_groupchat(tox, 0, cookie.as_ptr(), 35, None, null_mut()),
            -1,
            "a text cookie"
        );
        cookie[2] = 1;
        assert_eq!(
            toxav_join_av_groupchat(tox, 0, cookie.as_ptr(), 34, None, null_mut()),
            -1,
            "a short cookie"
        );
        assert_eq!(
            toxav_join_av_groupchat(tox, 0, cookie.as_ptr(), 35, None, null_mut()),
            -1,
            "no friend 0"
        );
        crate::lifecycle::tox_kill(tox);
    }
}

/// NULL instead of a session or a Tox: every function fails without touching anything.
#[test]
fn null_is_refused_everywhere() {
    let av = null_mut();
    // SAFETY (every call): NULL is never dereferenced, error pointers are valid.
    unsafe {
        toxav_kill(av);
        assert!(toxav_get_tox(av).is_null());
        assert_eq!(toxav_iteration_interval(av), 200);
        assert_eq!(toxav_audio_iteration_interval(av), 200);
        assert_eq!(toxav_video_iteration_interval(av), 200);
        toxav_iterate(av);
        toxav_audio_iterate(av);
        toxav_video_iterate(av);
        toxav_callback_call(av, None, null_mut());
        toxav_callback_call_state(av, None, null_mut());
        toxav_callback_audio_bit_rate(av, None, null_mut());
        toxav_callback_video_bit_rate(av, None, null_mut());
        toxav_callback_audio_receive_frame(av, None, null_mut());
        toxav_callback_video_receive_frame(av, None, null_mut());
        let mut e = Toxav_Err_Call::OK;
        assert!(!toxav_call(av, 0, 48, 5000, &mut e));
        assert_eq!(e, Toxav_Err_Call::FRIEND_NOT_FOUND);
        let mut e = Toxav_Err_Bit_Rate_Set::OK;
        assert!(!toxav_video_set_bit_rate(av, 0, 5000, &mut e));
        assert_eq!(e, Toxav_Err_Bit_Rate_Set::FRIEND_NOT_FOUND);
        let tox = null_mut();
        assert_eq!(toxav_add_av_groupchat(tox, None, null_mut()), -1);
        assert_eq!(
            toxav_join_av_groupchat(tox, 0, null(), 35, None, null_mut()),
            -1
        );
        assert_eq!(toxav_group_send_audio(tox, 0, null(), 960, 1, 48000), -1);
        assert_eq!(toxav_groupchat_enable_av(tox, 0, None, null_mut()), -1);
        assert_eq!(toxav_groupchat_disable_av(tox, 0), -1);
        assert!(!toxav_groupchat_av_enabled(tox, 0));
    }
}
