//! Data packets out (docs/protocol.md §2.4): framing and sealing under the session key, the
//! nonce advanced after every packet; and how the packet and transport layers' errors read as
//! drop reasons.

use super::state::Connection;
use crate::crypto::{Nonce, PrecomputedKey};
use crate::drop_reason::DropReason;
use crate::packets::{seal_data_into, ParseError};
use crate::transport::TransportError;

impl Connection {
    /// Builds a data packet with any payload under this session's keys, without checking
    /// its id. Consumes a nonce exactly like a real send. For fault injection by tests (a
    /// misbehaving but authenticated peer), behind the `testing` feature; `None` before the
    /// handshake.
    #[cfg(feature = "testing")]
    pub fn forge_data_packet(&mut self, packet_number: u32, payload: &[u8]) -> Option<Vec<u8>> {
        self.sealed_datagram(packet_number, payload)
    }

    /// Frames and encrypts one data packet onto `out`, then advances our nonce (§2.4: after
    /// every data packet, resends included). False when there is no session key yet or the
    /// payload cannot be framed.
    pub(super) fn seal_data(
        &mut self,
        buffer_start: u32,
        packet_number: u32,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> bool {
        seal_and_advance(
            self.data_key.as_ref(),
            &mut self.sent_nonce,
            buffer_start,
            packet_number,
            payload,
            out,
        )
    }

    /// [`Self::seal_data`] into a datagram of its own, for the queue of lossy and kill packets.
    pub(super) fn sealed_datagram(
        &mut self,
        packet_number: u32,
        payload: &[u8],
    ) -> Option<Vec<u8>> {
        let buffer_start = self.transport.recv_buffer_start();
        let mut datagram = Vec::new();
        self.seal_data(buffer_start, packet_number, payload, &mut datagram)
            .then_some(datagram)
    }
}

/// Seals one data packet onto `out` under `key` and, when it was sealed, advances `nonce`
/// (§2.4: after every data packet, resends included). False without a key or for a payload
/// that cannot be framed; then nothing is appended and the nonce stays.
pub(super) fn seal_and_advance(
    key: Option<&PrecomputedKey>,
    nonce: &mut Nonce,
    buffer_start: u32,
    packet_number: u32,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> bool {
    let Some(key) = key else {
        return false;
    };
    let sealed = seal_data_into(key, nonce, buffer_start, packet_number, payload, out).is_ok();
    if sealed {
        nonce.increment();
    }
    sealed
}

pub(super) fn parse_drop(e: ParseError) -> DropReason {
    match e {
        ParseError::Crypto(_) => DropReason::DecryptionFailed,
        ParseError::AllPadding => DropReason::MalformedPlaintext,
        ParseError::LengthOutOfRange { .. } => DropReason::MalformedPlaintext,
        ParseError::WrongLength { .. } | ParseError::WrongKind(_) | ParseError::BadPayload => {
            DropReason::BadLength
        }
    }
}

pub(super) fn transport_drop(e: TransportError) -> DropReason {
    match e {
        TransportError::OutsideWindow => DropReason::PacketOutsideWindow,
        TransportError::Duplicate => DropReason::DuplicatePacket,
        TransportError::MalformedRequest => DropReason::MalformedRequest,
        TransportError::OverBudget => DropReason::MemoryBudget,
        TransportError::SendQueueFull | TransportError::BadLength => DropReason::MalformedPlaintext,
    }
}
