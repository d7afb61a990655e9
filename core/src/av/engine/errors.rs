//! The commands' refusals that are the engine's (toxav.h's `Toxav_Err_*`; the friend checks
//! — `FRIEND_NOT_FOUND`, `FRIEND_NOT_CONNECTED` — are the node's).

/// `toxav_call`'s refusals that are the engine's (`Toxav_Err_Call`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// `FRIEND_ALREADY_IN_CALL`
    #[error("already in a call with this friend")]
    AlreadyInCall,
    /// `INVALID_BIT_RATE`
    #[error("invalid bit rate")]
    InvalidBitRate,
    /// `MALLOC`: a codec could not be created.
    #[error("the call's codecs could not be created")]
    Codec,
    /// `TOO_MANY`-like bound: more calls than [`Calls`] keeps (c-toxcore has none; `MALLOC`).
    #[error("too many calls")]
    TooMany,
}

/// `toxav_answer`'s refusals that are the engine's (`Toxav_Err_Answer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// `CODEC_INITIALIZATION`
    #[error("the call's codecs could not be created")]
    CodecInitialization,
    /// `FRIEND_NOT_CALLING`
    #[error("the friend is not calling")]
    FriendNotCalling,
    /// `INVALID_BIT_RATE`
    #[error("invalid bit rate")]
    InvalidBitRate,
}

/// `toxav_call_control`'s refusals that are the engine's (`Toxav_Err_Call_Control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// `FRIEND_NOT_IN_CALL`
    #[error("not in a call with this friend")]
    FriendNotInCall,
    /// `INVALID_TRANSITION`
    #[error("that control does not apply in the call's state")]
    InvalidTransition,
}

/// The bit-rate setters' refusals (`Toxav_Err_Bit_Rate_Set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BitRateError {
    /// `INVALID_BIT_RATE`
    #[error("invalid bit rate")]
    InvalidBitRate,
    /// `FRIEND_NOT_IN_CALL`
    #[error("not in a call with this friend")]
    FriendNotInCall,
}

/// The frame senders' refusals (`Toxav_Err_Send_Frame`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendFrameError {
    /// `FRIEND_NOT_IN_CALL`
    #[error("not in a call with this friend")]
    FriendNotInCall,
    /// `INVALID`: bad sample count, channels, rate or picture size.
    #[error("invalid frame")]
    Invalid,
    /// `PAYLOAD_TYPE_DISABLED`: the call does not send this kind (bit rate 0, muted, hidden).
    #[error("this kind is disabled in the call")]
    PayloadTypeDisabled,
    /// `RTP_FAILED`: the encoder failed.
    #[error("encoding or packetising failed")]
    RtpFailed,
}
