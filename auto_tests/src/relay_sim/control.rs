//! The segments that open and reset a simulated TCP connection: SYN, SYN-ACK and RST. Data
//! and ACK segments are the TCP model's own ([`crate::tcp::segment`]); these use other kind
//! bytes in the same 24-byte header, so one parse tells them apart.
//!
//! | offset | length | content                                            |
//! |--------|--------|----------------------------------------------------|
//! | 0      | 1      | kind: [`KIND_SYN`], [`KIND_SYN_ACK`], [`KIND_RST`] |
//! | 1      | 19     | 0                                                  |
//! | 20     | 4      | connection (the TCP model's flow id), LE           |
//!
//! A connection is named by the client's address and this id (the client picks it, unique
//! among its own connections), as a real one is by its ports.

use std::net::SocketAddr;

use crate::tcp::SEGMENT_HEADER;

/// Kind byte of a SYN (client → server).
pub const KIND_SYN: u8 = 0x5A;
/// Kind byte of a SYN-ACK (server → client: accepted).
pub const KIND_SYN_ACK: u8 = 0x5B;
/// Kind byte of a RST (either way: refused, closed or unknown).
pub const KIND_RST: u8 = 0x5C;

/// A control segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Open connection `0`.
    Syn(u32),
    /// Connection `0` is accepted.
    SynAck(u32),
    /// Connection `0` is gone.
    Rst(u32),
}

impl Control {
    /// The connection it is about.
    pub fn conn(self) -> u32 {
        match self {
            Control::Syn(c) | Control::SynAck(c) | Control::Rst(c) => c,
        }
    }

    /// Its bytes.
    pub fn encode(self) -> Vec<u8> {
        let kind = match self {
            Control::Syn(_) => KIND_SYN,
            Control::SynAck(_) => KIND_SYN_ACK,
            Control::Rst(_) => KIND_RST,
        };
        let mut b = vec![0u8; SEGMENT_HEADER];
        b[0] = kind;
        b[20..24].copy_from_slice(&self.conn().to_le_bytes());
        b
    }

    /// A control segment, or `None` for anything else (data, ACKs, garbage).
    pub fn parse(bytes: &[u8]) -> Option<Control> {
        if bytes.len() != SEGMENT_HEADER || bytes[1..20].iter().any(|&b| b != 0) {
            return None;
        }
        let mut c = [0u8; 4];
        c.copy_from_slice(&bytes[20..24]);
        let conn = u32::from_le_bytes(c);
        match bytes[0] {
            KIND_SYN => Some(Control::Syn(conn)),
            KIND_SYN_ACK => Some(Control::SynAck(conn)),
            KIND_RST => Some(Control::Rst(conn)),
            _ => None,
        }
    }
}

/// One segment of the TCP model as it arrives on a port: from whom, on which of our
/// addresses, and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Arrival<'a> {
    /// The sender's address.
    pub from: SocketAddr,
    /// Our address it arrived on.
    pub to: SocketAddr,
    /// The segment.
    pub bytes: &'a [u8],
}

/// The connection id of a data or ACK segment of the TCP model (its flow id), if `bytes`
/// is long enough to be one; the segment itself is checked by the socket it goes to.
pub fn segment_conn(bytes: &[u8]) -> Option<u32> {
    let b = bytes.get(20..24)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::segment::{encode_ack, Header, SackBlocks, Segment};

    #[test]
    fn control_segments_round_trip_and_are_not_tcp_segments() {
        for c in [Control::Syn(7), Control::SynAck(7), Control::Rst(u32::MAX)] {
            let b = c.encode();
            assert_eq!(Control::parse(&b), Some(c));
            assert!(Segment::parse(&b).is_err());
        }
        let ack = encode_ack(
            &Header {
                number: 0,
                tsval: 1,
                tsecr: 0,
                flow: 9,
            },
            &SackBlocks::default(),
        );
        assert_eq!(Control::parse(&ack), None);
        assert_eq!(segment_conn(&ack), Some(9));
        assert_eq!(segment_conn(&[0; 3]), None);
    }
}
