//! MSI, the call signalling (`toxav/msi.c`, docs/protocol.md §13.1): lossless friend packet
//! 69 carrying a list of typed fields, and ([`Msi`]) the per-friend call state machine.
//!
//! | length | content |
//! |---|---|
//! | 1 | `69` (`PACKET_ID_MSI`) |
//! | 3 × n | fields: id (1 = request, 2 = error, 3 = capabilities), size (always 1), value |
//! | 1 | `0`, the end marker |
//!
//! The parser follows `msg_parse_in`: the packet's last byte must be 0; fields are read from
//! the front until a field id of 0 (bytes after it are ignored, as c-toxcore ignores them);
//! every field has size 1 and must fit before the last byte; the request must be at most
//! `REQU_POP` (2) and the error at most `MSI_E_UNDISCLOSED` (7); an unknown field id refuses
//! the packet; a repeated field keeps its last value; a packet without a request is refused.
//! The encoder writes what `send_message` writes: request, error, capabilities, end marker.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod state;

pub use state::{Msi, MsiCallState, MsiEvent, MsiStats, MsiUseError, MAX_CALLS, MAX_QUEUED};

use rustox_net_crypto::wire::Reader;

/// `PACKET_ID_MSI` (Messenger.h).
pub const PACKET_ID_MSI: u8 = 69;

/// `MSI_CAP_S_AUDIO` (msi.h): the sender of the field sends audio.
pub const CAP_SEND_AUDIO: u8 = 4;
/// `MSI_CAP_S_VIDEO` (msi.h): the sender of the field sends video.
pub const CAP_SEND_VIDEO: u8 = 8;
/// `MSI_CAP_R_AUDIO` (msi.h): the sender of the field accepts audio.
pub const CAP_RECV_AUDIO: u8 = 16;
/// `MSI_CAP_R_VIDEO` (msi.h): the sender of the field accepts video.
pub const CAP_RECV_VIDEO: u8 = 32;

/// `ID_REQUEST` (msi.c's `MSIHeaderID`).
const FIELD_REQUEST: u8 = 1;
/// `ID_ERROR`.
const FIELD_ERROR: u8 = 2;
/// `ID_CAPABILITIES`.
const FIELD_CAPABILITIES: u8 = 3;
/// The end marker, and the value `msg_parse_in` stops at where a field id would be.
const END: u8 = 0;
/// Every field's value is one byte (`check_size(.., 1)`).
const FIELD_VALUE_LEN: u8 = 1;

/// `MSIRequest` (msi.c): what a message asks of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MsiRequest {
    /// `REQU_INIT` (0): an invitation (with the inviter's capabilities).
    Init,
    /// `REQU_PUSH` (1): an answer, or a change of capabilities during a call.
    Push,
    /// `REQU_POP` (2): hang up, reject, cancel, or (with an error field) a protocol error.
    Pop,
}

impl MsiRequest {
    /// The wire value.
    pub fn to_u8(self) -> u8 {
        match self {
            MsiRequest::Init => 0,
            MsiRequest::Push => 1,
            MsiRequest::Pop => 2,
        }
    }

    /// The request of a wire value (`check_enum_high(.., REQU_POP)`).
    pub fn from_u8(value: u8) -> Option<MsiRequest> {
        match value {
            0 => Some(MsiRequest::Init),
            1 => Some(MsiRequest::Push),
            2 => Some(MsiRequest::Pop),
            _ => None,
        }
    }
}

/// `MSIError` (msi.h): the error a `REQU_POP` may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MsiErrorCode {
    /// `MSI_E_NONE` (0)
    None,
    /// `MSI_E_INVALID_MESSAGE` (1): the peer could not parse our message, or it lacked a field.
    InvalidMessage,
    /// `MSI_E_INVALID_PARAM` (2)
    InvalidParam,
    /// `MSI_E_INVALID_STATE` (3): an invitation while an invitation was pending.
    InvalidState,
    /// `MSI_E_STRAY_MESSAGE` (4): a message for a call the peer does not have.
    StrayMessage,
    /// `MSI_E_SYSTEM` (5): the peer could not create the call.
    System,
    /// `MSI_E_HANDLE` (6): the peer's layer above refused the call.
    Handle,
    /// `MSI_E_UNDISCLOSED` (7)
    Undisclosed,
}

impl MsiErrorCode {
    /// The wire value.
    pub fn to_u8(self) -> u8 {
        match self {
            MsiErrorCode::None => 0,
            MsiErrorCode::InvalidMessage => 1,
            MsiErrorCode::InvalidParam => 2,
            MsiErrorCode::InvalidState => 3,
            MsiErrorCode::StrayMessage => 4,
            MsiErrorCode::System => 5,
            MsiErrorCode::Handle => 6,
            MsiErrorCode::Undisclosed => 7,
        }
    }

    /// The error of a wire value (`check_enum_high(.., MSI_E_UNDISCLOSED)`).
    pub fn from_u8(value: u8) -> Option<MsiErrorCode> {
        Some(match value {
            0 => MsiErrorCode::None,
            1 => MsiErrorCode::InvalidMessage,
            2 => MsiErrorCode::InvalidParam,
            3 => MsiErrorCode::InvalidState,
            4 => MsiErrorCode::StrayMessage,
            5 => MsiErrorCode::System,
            6 => MsiErrorCode::Handle,
            7 => MsiErrorCode::Undisclosed,
            _ => return None,
        })
    }
}

/// Why [`MsiMessage::parse`] refused a packet (each a `return -1` of `msg_parse_in`, except
/// the first two, which Messenger.c's dispatch decides before MSI sees the packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MsiParseError {
    /// The first byte is not [`PACKET_ID_MSI`] (or there is none).
    #[error("not an MSI packet")]
    WrongId,
    /// Nothing after the id: Messenger.c drops such a packet without answering.
    #[error("empty MSI packet")]
    Empty,
    /// The last byte is not the end marker 0.
    #[error("MSI packet does not end with 0")]
    NoEndMarker,
    /// A field (3 bytes) runs into the end marker.
    #[error("MSI field runs past the end")]
    Truncated,
    /// A field's size byte is not 1.
    #[error("MSI field of size {0}, expected 1")]
    FieldSize(u8),
    /// The request's value is above `REQU_POP`.
    #[error("MSI request {0} unknown")]
    BadRequest(u8),
    /// The error's value is above `MSI_E_UNDISCLOSED`.
    #[error("MSI error {0} unknown")]
    BadError(u8),
    /// A field id other than 1, 2, 3.
    #[error("MSI field id {0} unknown")]
    UnknownField(u8),
    /// No request field.
    #[error("MSI message without a request")]
    NoRequest,
}

/// One MSI message (msi.c's `MSIMessage`): each field present or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MsiMessage {
    /// The request; every message a peer accepts has one.
    pub request: Option<MsiRequest>,
    /// The error, on a `Pop` that reports one.
    pub error: Option<MsiErrorCode>,
    /// The sender's capabilities (`CAP_*` bits), on `Init` and `Push`.
    pub capabilities: Option<u8>,
}

impl MsiMessage {
    /// A message with only a request (`msg_init`).
    pub fn request(request: MsiRequest) -> MsiMessage {
        MsiMessage {
            request: Some(request),
            error: None,
            capabilities: None,
        }
    }

    /// A request with capabilities (`msi_invite`, `msi_answer`, `msi_change_capabilities`).
    pub fn with_capabilities(request: MsiRequest, capabilities: u8) -> MsiMessage {
        MsiMessage {
            capabilities: Some(capabilities),
            ..MsiMessage::request(request)
        }
    }

    /// The error message `send_error` sends: `Pop` with the error.
    pub fn error(code: MsiErrorCode) -> MsiMessage {
        MsiMessage {
            error: Some(code),
            ..MsiMessage::request(MsiRequest::Pop)
        }
    }

    /// Parses a whole packet, id byte first (`msg_parse_in` on what Messenger.c hands it).
    pub fn parse(packet_with_id: &[u8]) -> Result<MsiMessage, MsiParseError> {
        let (&id, body) = packet_with_id.split_first().ok_or(MsiParseError::WrongId)?;
        if id != PACKET_ID_MSI {
            return Err(MsiParseError::WrongId);
        }
        // The end marker is the last byte; fields must end before it.
        let (&last, fields) = body.split_last().ok_or(MsiParseError::Empty)?;
        if last != END {
            return Err(MsiParseError::NoEndMarker);
        }
        let mut message = MsiMessage::default();
        let mut r = Reader::new(fields);
        // The end marker was checked, so running out of field bytes means the loop reached
        // it.
        while let Ok(field) = r.u8() {
            if field == END {
                break;
            }
            if !matches!(field, FIELD_REQUEST | FIELD_ERROR | FIELD_CAPABILITIES) {
                return Err(MsiParseError::UnknownField(field));
            }
            let [size, value] = r.array::<2>().map_err(|_| MsiParseError::Truncated)?;
            if size != FIELD_VALUE_LEN {
                return Err(MsiParseError::FieldSize(size));
            }
            match field {
                FIELD_REQUEST => {
                    message.request =
                        Some(MsiRequest::from_u8(value).ok_or(MsiParseError::BadRequest(value))?);
                }
                FIELD_ERROR => {
                    message.error =
                        Some(MsiErrorCode::from_u8(value).ok_or(MsiParseError::BadError(value))?);
                }
                _ => message.capabilities = Some(value),
            }
        }
        if message.request.is_none() {
            return Err(MsiParseError::NoRequest);
        }
        Ok(message)
    }

    /// The packet, id byte first, as `send_message` writes it. A message without a request
    /// is written without one (every peer refuses it; c-toxcore never sends it).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(11);
        out.push(PACKET_ID_MSI);
        if let Some(request) = self.request {
            out.extend_from_slice(&[FIELD_REQUEST, FIELD_VALUE_LEN, request.to_u8()]);
        }
        if let Some(error) = self.error {
            out.extend_from_slice(&[FIELD_ERROR, FIELD_VALUE_LEN, error.to_u8()]);
        }
        if let Some(capabilities) = self.capabilities {
            out.extend_from_slice(&[FIELD_CAPABILITIES, FIELD_VALUE_LEN, capabilities]);
        }
        out.push(END);
        out
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn invite_is_bytes_of_send_message() {
        // msi_invite: REQU_INIT (0) then capabilities, then the end byte.
        let m = MsiMessage::with_capabilities(MsiRequest::Init, CAP_SEND_AUDIO | CAP_RECV_AUDIO);
        assert_eq!(m.encode(), [69, 1, 1, 0, 3, 1, 20, 0]);
        assert_eq!(MsiMessage::parse(&m.encode()), Ok(m));
    }

    #[test]
    fn answer_hangup_and_error_bytes() {
        let all = CAP_SEND_AUDIO | CAP_SEND_VIDEO | CAP_RECV_AUDIO | CAP_RECV_VIDEO;
        assert_eq!(
            MsiMessage::with_capabilities(MsiRequest::Push, all).encode(),
            [69, 1, 1, 1, 3, 1, 60, 0]
        );
        assert_eq!(
            MsiMessage::request(MsiRequest::Pop).encode(),
            [69, 1, 1, 2, 0]
        );
        // send_error: request, then error, then the end byte.
        assert_eq!(
            MsiMessage::error(MsiErrorCode::StrayMessage).encode(),
            [69, 1, 1, 2, 2, 1, 4, 0]
        );
    }

    #[test]
    fn field_order_is_free_and_last_value_wins() {
        let m = MsiMessage::parse(&[69, 3, 1, 9, 1, 1, 0, 1, 1, 1, 0]).unwrap();
        assert_eq!(m, MsiMessage::with_capabilities(MsiRequest::Push, 9));
    }

    #[test]
    fn bytes_after_an_inner_end_marker_are_ignored() {
        // msg_parse_in stops at the first 0 where a field id would be.
        let m = MsiMessage::parse(&[69, 1, 1, 2, 0, 7, 7, 0]).unwrap();
        assert_eq!(m, MsiMessage::request(MsiRequest::Pop));
    }

    #[test]
    fn malformed_packets_get_typed_errors() {
        use MsiParseError::*;
        let cases: &[(&[u8], MsiParseError)] = &[
            (&[], WrongId),
            (&[70, 1, 1, 0, 0], WrongId),
            (&[69], Empty),
            (&[69, 1, 1, 2], NoEndMarker),
            (&[69, 0], NoRequest),
            (&[69, 3, 1, 4, 0], NoRequest),
            (&[69, 1, 1, 3, 0], BadRequest(3)),
            (&[69, 1, 1, 2, 2, 1, 8, 0], BadError(8)),
            (&[69, 1, 2, 0, 0, 0], FieldSize(2)),
            (&[69, 4, 1, 0, 0], UnknownField(4)),
            // The field would need the end marker as its value.
            (&[69, 1, 1, 0], Truncated),
            (&[69, 1, 1, 0, 3, 1, 0], Truncated),
            (&[69, 1, 0], Truncated),
        ];
        for (bytes, err) in cases {
            assert_eq!(MsiMessage::parse(bytes), Err(*err), "{bytes:?}");
        }
    }

    #[test]
    fn every_truncation_of_valid_packets_is_refused() {
        let full = MsiMessage {
            request: Some(MsiRequest::Pop),
            error: Some(MsiErrorCode::Handle),
            capabilities: Some(60),
        }
        .encode();
        for n in 0..full.len() {
            // Every proper prefix ends in a non-zero byte or splits a field.
            let r = MsiMessage::parse(&full[..n]);
            assert!(r.is_err(), "prefix {n} parsed: {r:?}");
        }
        assert!(MsiMessage::parse(&full).is_ok());
    }

    #[test]
    fn random_input_never_panics() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(69);
        for _ in 0..20_000 {
            let len = rng.gen_range(0..24);
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.gen_range(0..5)).collect();
            if rng.gen_bool(0.8) && !bytes.is_empty() {
                bytes[0] = PACKET_ID_MSI;
            }
            if let Ok(m) = MsiMessage::parse(&bytes) {
                // What parses re-encodes into something that parses the same.
                assert_eq!(MsiMessage::parse(&m.encode()), Ok(m));
            }
        }
    }

    fn any_message() -> impl Strategy<Value = MsiMessage> {
        (
            0u8..3,
            proptest::option::of(0u8..8),
            proptest::option::of(any::<u8>()),
        )
            .prop_map(|(r, e, c)| MsiMessage {
                request: MsiRequest::from_u8(r),
                error: e.and_then(MsiErrorCode::from_u8),
                capabilities: c,
            })
    }

    proptest! {
        #[test]
        fn round_trip(m in any_message()) {
            prop_assert_eq!(MsiMessage::parse(&m.encode()), Ok(m));
        }
    }
}
