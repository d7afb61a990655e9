//! FILE_CONTROL (id 81): accept/resume, pause, kill, seek (docs/protocol.md §3.4).
//!
//! | length | content                                                        |
//! |-------:|----------------------------------------------------------------|
//! | 1      | id = 81                                                        |
//! | 1      | direction: 0 = a file the packet's sender is sending,          |
//! |        |            1 = a file the packet's sender is receiving         |
//! | 1      | file number (0..=255, in the sending side's numbering)         |
//! | 1      | control: 0 ACCEPT (= resume), 1 PAUSE, 2 KILL, 3 SEEK          |
//! | 8      | SEEK only: position, u64 big-endian                            |
//!
//! c-toxcore (`handle_filecontrol`) ignores bytes after the control byte for ACCEPT, PAUSE and
//! KILL, and requires exactly 8 for SEEK; [`ControlPacket::parse`] does the same.

use rustox_net_crypto::wire::Reader;

use super::{expect_id, PacketError, PACKET_ID_FILE_CONTROL};

/// Bytes before the optional seek position.
const HEAD_LENGTH: usize = 4;

/// Which side's file a control is about, from the point of view of the packet's sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// 0: a file the packet's sender is sending (for the receiver of the packet: incoming).
    SenderIsSending,
    /// 1: a file the packet's sender is receiving (for the receiver of the packet: outgoing).
    SenderIsReceiving,
}

impl Direction {
    /// The other direction: how the peer names the same file (used to answer with KILL).
    pub fn flipped(self) -> Direction {
        match self {
            Direction::SenderIsSending => Direction::SenderIsReceiving,
            Direction::SenderIsReceiving => Direction::SenderIsSending,
        }
    }

    fn to_byte(self) -> u8 {
        match self {
            Direction::SenderIsSending => 0,
            Direction::SenderIsReceiving => 1,
        }
    }
}

/// The control carried by a FILE_CONTROL packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlKind {
    /// 0: accept a request, or resume after our pause (`TOX_FILE_CONTROL_RESUME`).
    Accept,
    /// 1: pause (`TOX_FILE_CONTROL_PAUSE`).
    Pause,
    /// 2: kill (`TOX_FILE_CONTROL_CANCEL`).
    Kill,
    /// 3: seek, receiver only, before accepting; carries the position.
    Seek(u64),
}

/// A decoded FILE_CONTROL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlPacket {
    /// Whose file, seen from the packet's sender.
    pub direction: Direction,
    /// The file number in the sending side's numbering.
    pub file_number: u8,
    /// What to do.
    pub control: ControlKind,
}

impl ControlPacket {
    /// Decode a payload (id byte first).
    pub fn parse(payload: &[u8]) -> Result<Self, PacketError> {
        let mut r = Reader::new(payload);
        let [_, direction, file_number, control] = r.array::<HEAD_LENGTH>()?;
        let rest = r.rest();
        expect_id(payload, PACKET_ID_FILE_CONTROL)?;
        let direction = match direction {
            0 => Direction::SenderIsSending,
            1 => Direction::SenderIsReceiving,
            other => return Err(PacketError::BadDirection(other)),
        };
        let control = match control {
            0 => ControlKind::Accept,
            1 => ControlKind::Pause,
            2 => ControlKind::Kill,
            3 => {
                let position: [u8; 8] = rest
                    .try_into()
                    .map_err(|_| PacketError::BadSeekLength(rest.len()))?;
                ControlKind::Seek(u64::from_be_bytes(position))
            }
            other => return Err(PacketError::BadControl(other)),
        };
        Ok(ControlPacket {
            direction,
            file_number,
            control,
        })
    }

    /// Encode as a lossless payload (id byte first); 4 bytes, or 12 for SEEK.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEAD_LENGTH + 8);
        out.push(PACKET_ID_FILE_CONTROL);
        out.push(self.direction.to_byte());
        out.push(self.file_number);
        match self.control {
            ControlKind::Accept => out.push(0),
            ControlKind::Pause => out.push(1),
            ControlKind::Kill => out.push(2),
            ControlKind::Seek(position) => {
                out.push(3);
                out.extend_from_slice(&position.to_be_bytes());
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_bytes() {
        let kill = ControlPacket {
            direction: Direction::SenderIsReceiving,
            file_number: 5,
            control: ControlKind::Kill,
        };
        assert_eq!(kill.encode(), [81, 1, 5, 2]);
        let seek = ControlPacket {
            direction: Direction::SenderIsReceiving,
            file_number: 0,
            control: ControlKind::Seek(0x0102),
        };
        assert_eq!(seek.encode(), [81, 1, 0, 3, 0, 0, 0, 0, 0, 0, 1, 2]);
    }

    #[test]
    fn trailing_bytes_ignored_except_for_seek() {
        assert_eq!(
            ControlPacket::parse(&[81, 0, 1, 1, 9, 9]).unwrap().control,
            ControlKind::Pause
        );
        assert_eq!(
            ControlPacket::parse(&[81, 1, 1, 3, 0, 0, 0]),
            Err(PacketError::BadSeekLength(3))
        );
        assert_eq!(
            ControlPacket::parse(&[81, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(PacketError::BadSeekLength(9))
        );
    }

    #[test]
    fn bad_direction_and_control_are_typed_errors() {
        assert_eq!(
            ControlPacket::parse(&[81, 2, 0, 0]),
            Err(PacketError::BadDirection(2))
        );
        assert_eq!(
            ControlPacket::parse(&[81, 0, 0, 4]),
            Err(PacketError::BadControl(4))
        );
        assert_eq!(
            ControlPacket::parse(&[81, 0, 0]),
            Err(PacketError::TooShort { needed: 4, got: 3 })
        );
    }

    fn any_control() -> impl Strategy<Value = ControlKind> {
        prop_oneof![
            Just(ControlKind::Accept),
            Just(ControlKind::Pause),
            Just(ControlKind::Kill),
            any::<u64>().prop_map(ControlKind::Seek),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(receiving: bool, file_number: u8, control in any_control()) {
            let direction = if receiving { Direction::SenderIsReceiving } else { Direction::SenderIsSending };
            let p = ControlPacket { direction, file_number, control };
            prop_assert_eq!(ControlPacket::parse(&p.encode()).unwrap(), p);
            prop_assert_eq!(direction.flipped().flipped(), direction);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
            let _ = ControlPacket::parse(&bytes);
        }
    }
}
