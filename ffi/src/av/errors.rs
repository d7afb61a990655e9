//! The engine's and the node's refusals in toxav.h's codes, and toxav.c's bit-rate checks.
//!
//! toxav.c checks in a fixed order, which each entry point keeps: the friend (the node's
//! `AvAccessError`), the bit rates (here, before the engine), then the call (the engine's
//! errors). A session whose Tox was killed answers as for an unknown friend.

use rustox_core::av::{AnswerError, BitRateError, CallError, ControlError, SendFrameError};
use rustox_core::node::AvAccessError;

use crate::types::{
    Toxav_Err_Answer, Toxav_Err_Bit_Rate_Set, Toxav_Err_Call, Toxav_Err_Call_Control,
    Toxav_Err_Send_Frame,
};

/// toxav.c's `audio_bit_rate_invalid` for a nonzero rate: Opus carries 6 to 510 kbit/s
/// (RFC 6716 section 2.1.1). 0 means "do not send audio" and is always valid.
pub fn audio_bit_rate_valid(kbps: u32) -> bool {
    kbps == 0 || (6..=510).contains(&kbps)
}

/// toxav.c's `video_bit_rate_invalid` (`bit_rate > UINT32_MAX`): every `uint32_t` is a
/// valid video bit rate.
pub fn video_bit_rate_valid(_kbps: u32) -> bool {
    true
}

/// `toxav_call`'s code for what the node or the engine said.
pub fn call_code(result: Option<Result<Result<(), CallError>, AvAccessError>>) -> Toxav_Err_Call {
    match result {
        None | Some(Err(AvAccessError::FriendNotFound)) => Toxav_Err_Call::FRIEND_NOT_FOUND,
        Some(Err(AvAccessError::FriendNotConnected)) => Toxav_Err_Call::FRIEND_NOT_CONNECTED,
        // Calls are on while the session lives; toxav.c's allocation failures are MALLOC.
        Some(Err(AvAccessError::Disabled)) => Toxav_Err_Call::MALLOC,
        Some(Ok(Ok(()))) => Toxav_Err_Call::OK,
        Some(Ok(Err(CallError::AlreadyInCall))) => Toxav_Err_Call::FRIEND_ALREADY_IN_CALL,
        Some(Ok(Err(CallError::InvalidBitRate))) => Toxav_Err_Call::INVALID_BIT_RATE,
        Some(Ok(Err(CallError::Codec | CallError::TooMany))) => Toxav_Err_Call::MALLOC,
    }
}

/// `toxav_answer`'s code for what the node or the engine said.
pub fn answer_code(
    result: Option<Result<Result<(), AnswerError>, AvAccessError>>,
) -> Toxav_Err_Answer {
    match result {
        None | Some(Err(AvAccessError::FriendNotFound)) => Toxav_Err_Answer::FRIEND_NOT_FOUND,
        Some(Err(AvAccessError::FriendNotConnected | AvAccessError::Disabled)) => {
            Toxav_Err_Answer::FRIEND_NOT_CALLING
        }
        Some(Ok(Ok(()))) => Toxav_Err_Answer::OK,
        Some(Ok(Err(AnswerError::FriendNotCalling))) => Toxav_Err_Answer::FRIEND_NOT_CALLING,
        Some(Ok(Err(AnswerError::InvalidBitRate))) => Toxav_Err_Answer::INVALID_BIT_RATE,
        Some(Ok(Err(AnswerError::CodecInitialization))) => Toxav_Err_Answer::CODEC_INITIALIZATION,
    }
}

/// `toxav_call_control`'s code for what the node or the engine said.
pub fn control_code(
    result: Option<Result<Result<(), ControlError>, AvAccessError>>,
) -> Toxav_Err_Call_Control {
    match result {
        None | Some(Err(AvAccessError::FriendNotFound)) => Toxav_Err_Call_Control::FRIEND_NOT_FOUND,
        Some(Err(AvAccessError::FriendNotConnected | AvAccessError::Disabled)) => {
            Toxav_Err_Call_Control::FRIEND_NOT_IN_CALL
        }
        Some(Ok(Ok(()))) => Toxav_Err_Call_Control::OK,
        Some(Ok(Err(ControlError::FriendNotInCall))) => Toxav_Err_Call_Control::FRIEND_NOT_IN_CALL,
        Some(Ok(Err(ControlError::InvalidTransition))) => {
            Toxav_Err_Call_Control::INVALID_TRANSITION
        }
    }
}

/// The bit-rate setters' code for what the node or the engine said.
pub fn bit_rate_code(
    result: Option<Result<Result<(), BitRateError>, AvAccessError>>,
) -> Toxav_Err_Bit_Rate_Set {
    match result {
        None | Some(Err(AvAccessError::FriendNotFound)) => Toxav_Err_Bit_Rate_Set::FRIEND_NOT_FOUND,
        Some(Err(AvAccessError::FriendNotConnected | AvAccessError::Disabled)) => {
            Toxav_Err_Bit_Rate_Set::FRIEND_NOT_IN_CALL
        }
        Some(Ok(Ok(()))) => Toxav_Err_Bit_Rate_Set::OK,
        Some(Ok(Err(BitRateError::FriendNotInCall))) => Toxav_Err_Bit_Rate_Set::FRIEND_NOT_IN_CALL,
        Some(Ok(Err(BitRateError::InvalidBitRate))) => Toxav_Err_Bit_Rate_Set::INVALID_BIT_RATE,
    }
}

/// The frame senders' code for what the node or the engine said. `null_input`: the client
/// passed a NULL buffer, which the engine was handed as an empty frame; toxav.c reports
/// NULL after its call checks and before it looks at the frame, so the engine's call
/// refusals stand and its verdict on the empty frame becomes `NULL`.
pub fn send_frame_code(
    result: Option<Result<Result<(), SendFrameError>, AvAccessError>>,
    null_input: bool,
) -> Toxav_Err_Send_Frame {
    match result {
        None | Some(Err(AvAccessError::FriendNotFound)) => Toxav_Err_Send_Frame::FRIEND_NOT_FOUND,
        Some(Err(AvAccessError::FriendNotConnected | AvAccessError::Disabled)) => {
            Toxav_Err_Send_Frame::FRIEND_NOT_IN_CALL
        }
        Some(Ok(Err(SendFrameError::FriendNotInCall))) => Toxav_Err_Send_Frame::FRIEND_NOT_IN_CALL,
        Some(Ok(Err(SendFrameError::PayloadTypeDisabled))) => {
            Toxav_Err_Send_Frame::PAYLOAD_TYPE_DISABLED
        }
        Some(Ok(_)) if null_input => Toxav_Err_Send_Frame::NULL,
        Some(Ok(Ok(()))) => Toxav_Err_Send_Frame::OK,
        Some(Ok(Err(SendFrameError::Invalid))) => Toxav_Err_Send_Frame::INVALID,
        Some(Ok(Err(SendFrameError::RtpFailed))) => Toxav_Err_Send_Frame::RTP_FAILED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_bit_rates_are_opus_rates() {
        assert!(audio_bit_rate_valid(0));
        assert!(!audio_bit_rate_valid(5));
        assert!(audio_bit_rate_valid(6));
        assert!(audio_bit_rate_valid(510));
        assert!(!audio_bit_rate_valid(511));
        assert!(video_bit_rate_valid(u32::MAX));
    }

    #[test]
    fn codes_keep_toxav_c_order() {
        assert_eq!(call_code(None), Toxav_Err_Call::FRIEND_NOT_FOUND);
        assert_eq!(
            call_code(Some(Err(AvAccessError::FriendNotConnected))),
            Toxav_Err_Call::FRIEND_NOT_CONNECTED
        );
        assert_eq!(
            call_code(Some(Ok(Err(CallError::AlreadyInCall)))),
            Toxav_Err_Call::FRIEND_ALREADY_IN_CALL
        );
        assert_eq!(
            send_frame_code(Some(Ok(Err(SendFrameError::Invalid))), true),
            Toxav_Err_Send_Frame::NULL
        );
        assert_eq!(
            send_frame_code(Some(Ok(Err(SendFrameError::FriendNotInCall))), true),
            Toxav_Err_Send_Frame::FRIEND_NOT_IN_CALL
        );
        assert_eq!(
            send_frame_code(Some(Ok(Err(SendFrameError::PayloadTypeDisabled))), true),
            Toxav_Err_Send_Frame::PAYLOAD_TYPE_DISABLED
        );
        assert_eq!(
            send_frame_code(Some(Ok(Err(SendFrameError::Invalid))), false),
            Toxav_Err_Send_Frame::INVALID
        );
    }
}
