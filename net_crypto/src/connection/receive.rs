//! A data packet in (docs/protocol.md §2.4–§2.6): opened under the session key, checked
//! against the replay window, then the cumulative ack, kill, the session's confirmation, and
//! the payload to the transport or the event queue.

use super::framing::{parse_drop, transport_drop};
use super::state::Connection;
use super::types::{CloseReason, ConnectionEvent, ConnectionStatus, MAX_QUEUED_EVENTS};
use crate::drop_reason::DropReason;
use crate::packets::{DataPacketRef, PayloadKind};
use crate::receive_nonce::ReplayError;
use crate::Timestamp;

impl Connection {
    /// A data packet from the peer's address (docs/protocol.md §2.4–§2.6). Everything that can
    /// refuse the packet is checked before anything changes. `scratch` is the endpoint's
    /// buffer that the plaintext is decrypted into.
    pub(crate) fn handle_data(
        &mut self,
        now: Timestamp,
        packet: &DataPacketRef<'_>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        if !matches!(
            self.status,
            ConnectionStatus::NotConfirmed | ConnectionStatus::Established
        ) {
            return Err(DropReason::WrongState);
        }
        let (Some(key), Some(recv)) = (&self.data_key, &self.recv_nonce) else {
            return Err(DropReason::WrongState);
        };
        let candidate = recv.candidate(packet.nonce_low);
        let plain = packet
            .open_into(key, &candidate.nonce, scratch)
            .map_err(parse_drop)?;
        recv.check(&candidate).map_err(|e| match e {
            ReplayError::Replayed => DropReason::ReplayedNonce,
            ReplayError::Stale => DropReason::StaleNonce,
        })?;
        let Some(&id) = plain.payload.first() else {
            return Err(DropReason::MalformedPlaintext);
        };
        let kind = PayloadKind::of(id);
        if matches!(kind, PayloadKind::Reserved | PayloadKind::Invalid) {
            return Err(DropReason::InvalidPacketId);
        }

        // §2.6 step 2: the cumulative ack first.
        self.transport
            .on_peer_buffer_start(now, plain.buffer_start)
            .map_err(|_| DropReason::AckOutsideWindow)?;
        if let Some(recv) = self.recv_nonce.as_mut() {
            recv.accept(&candidate);
        }

        // Step 3: kill.
        if kind == PayloadKind::Kill {
            self.outgoing.clear();
            self.close(CloseReason::Killed);
            return Ok(());
        }

        // Step 4: the first authentic data packet confirms the session.
        if self.status == ConnectionStatus::NotConfirmed {
            // The temp packet is our handshake: the peer could seal this packet only after
            // that handshake reached it, so the gap is at least one round trip.
            self.handshake_rtt_sample(now);
            // `confirm_pending` stays: the peer may still be waiting for our first packet.
            self.status = ConnectionStatus::Established;
            self.temp = None;
            self.events.push_back(ConnectionEvent::Established);
        }

        // Step 5.
        let payload = plain.payload;
        match kind {
            PayloadKind::Request => {
                self.transport
                    .on_request(now, &payload[1..])
                    .map_err(transport_drop)?;
                self.transport
                    .on_peer_buffer_end(now, plain.packet_number)
                    .map_err(transport_drop)
            }
            PayloadKind::Lossless => self
                .transport
                .on_lossless(now, plain.packet_number, payload)
                .map_err(transport_drop),
            PayloadKind::Lossy => {
                self.transport
                    .on_peer_buffer_end(now, plain.packet_number)
                    .map_err(transport_drop)?;
                if self.events.len() >= MAX_QUEUED_EVENTS {
                    return Err(DropReason::EventQueueFull);
                }
                self.events
                    .push_back(ConnectionEvent::Lossy(payload.to_vec()));
                Ok(())
            }
            PayloadKind::Kill | PayloadKind::Reserved | PayloadKind::Invalid => {
                Err(DropReason::InvalidPacketId)
            }
        }
    }
}
