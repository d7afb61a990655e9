//! One net_crypto session (docs/protocol.md §2.2–§2.6): the handshake state machine, the session
//! keys and data nonces, and the framing of what the reliability engine ([`Transport`])
//! sends and receives.
//!
//! Roles. The *initiator* (`Endpoint::connect`) sends a cookie request and waits
//! (COOKIE_REQUESTING), then sends its handshake (HANDSHAKE_SENT). The *responder*
//! is created by the endpoint from a valid handshake and answers with its own, using the
//! `other_cookie` the initiator sent, so it never needs a cookie round of its own
//! (NOT_CONFIRMED). When both sides connect at once the handshakes cross: each side takes
//! the other's handshake while in HANDSHAKE_SENT and goes to NOT_CONFIRMED without sending
//! another. The first authentic data packet moves NOT_CONFIRMED to ESTABLISHED (§2.3).
//!
//! Until ESTABLISHED the last handshake packet (the "temp packet") is resent every 1000 ms;
//! after 8 sends without progress the connection closes with [`CloseReason::Timeout`].
//! In NOT_CONFIRMED each send of the temp packet is followed by an empty request packet,
//! which is the data packet that confirms the session to the peer (c-toxcore sends a request
//! packet at once and then every second in that state, §2.7).
//!
//! The endpoint verifies the outer layers (cookie, boxes, hashes) and routes; this type owns
//! what changes per connection.
//!
//! The files: types.rs (what the layer above sees), state.rs (the struct, accessors and the
//! endpoint's setters), handshake.rs, receive.rs (data packets in), framing.rs (data packets
//! sealed), transmit.rs (datagrams out), and here the send API, events and timers.

mod framing;
mod handshake;
mod receive;
mod state;
mod transmit;
mod types;

pub use state::Connection;
pub use types::{CloseReason, ConnectionEvent, ConnectionId, ConnectionStatus, SendError};

use self::types::{MAX_QUEUED_DATAGRAMS, MAX_TEMP_PACKET_SENDS, TEMP_PACKET_INTERVAL};

use self::state::{Queued, Route};
use crate::packets::{PayloadKind, MAX_CRYPTO_DATA_SIZE, PACKET_ID_KILL};
use crate::transport::{PacketClass, TransportError};
use crate::Timestamp;

impl Connection {
    /// Queue a lossless control payload (id 16–191 first); returns its packet number.
    pub fn send_lossless(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SendError> {
        self.queue_lossless(now, PacketClass::Control, payload)
    }

    /// Bulk packets allowed now (0 unless established); see
    /// [`Transport::send_budget`](crate::transport::Transport::send_budget).
    pub fn send_budget(&mut self, now: Timestamp) -> usize {
        if self.status == ConnectionStatus::Established {
            self.transport.send_budget(now)
        } else {
            0
        }
    }

    /// Queue a lossless bulk payload (file data) within `send_budget`; returns its number.
    pub fn send_bulk(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SendError> {
        if self.status == ConnectionStatus::Established && self.transport.send_budget(now) == 0 {
            return Err(SendError::NoBudget);
        }
        self.queue_lossless(now, PacketClass::Bulk, payload)
    }

    fn queue_lossless(
        &mut self,
        now: Timestamp,
        class: PacketClass,
        payload: &[u8],
    ) -> Result<u32, SendError> {
        self.check_payload(payload, PayloadKind::Lossless)?;
        self.transport
            .queue_lossless(now, class, payload)
            .map_err(|e| match e {
                TransportError::BadLength => SendError::BadLength,
                _ => SendError::QueueFull,
            })
    }

    /// Send a lossy payload (id 192–254 first). It is encrypted now and leaves with the
    /// next `poll_transmit`, ahead of every lossless packet waiting for the pacer or the
    /// window (a call's audio never waits behind file chunks); it is never resent. Its
    /// bytes are charged to the pacer ([`Transport::on_lossy_sent`]), so the lossless data
    /// that follows yields them the rate.
    ///
    /// [`Transport::on_lossy_sent`]: crate::transport::Transport::on_lossy_sent
    pub fn send_lossy(&mut self, now: Timestamp, payload: &[u8]) -> Result<(), SendError> {
        self.check_payload(payload, PayloadKind::Lossy)?;
        if self.outgoing.len() >= MAX_QUEUED_DATAGRAMS {
            return Err(SendError::QueueFull);
        }
        let packet_number = self.transport.send_buffer_end();
        let datagram = self
            .sealed_datagram(packet_number, payload)
            .ok_or(SendError::NotEstablished)?;
        self.transport.on_lossy_sent(now, payload.len() as u64);
        self.outgoing.push_back(Queued {
            bytes: datagram,
            route: Route::Data,
        });
        self.transport.on_data_sent(now);
        Ok(())
    }

    fn check_payload(&self, payload: &[u8], kind: PayloadKind) -> Result<(), SendError> {
        if self.status != ConnectionStatus::Established {
            return Err(SendError::NotEstablished);
        }
        let Some(&id) = payload.first() else {
            return Err(SendError::BadLength);
        };
        if payload.len() > MAX_CRYPTO_DATA_SIZE {
            return Err(SendError::BadLength);
        }
        if PayloadKind::of(id) != kind {
            return Err(SendError::InvalidPacketId);
        }
        Ok(())
    }

    /// True once the peer acknowledged `packet_number` (`cryptpacket_received`).
    pub fn is_delivered(&self, packet_number: u32) -> bool {
        self.transport.is_delivered(packet_number)
    }

    /// Closes the connection. An established one first sends a kill packet (id 2), as
    /// c-toxcore's `crypto_kill` does; then the keys are wiped. Reports
    /// `Closed(Local)`.
    pub fn kill(&mut self, now: Timestamp) {
        let _ = now;
        if self.status == ConnectionStatus::Closed {
            return;
        }
        self.outgoing.clear();
        if self.status == ConnectionStatus::Established {
            let packet_number = self.transport.send_buffer_end();
            if let Some(kill) = self.sealed_datagram(packet_number, &[PACKET_ID_KILL]) {
                self.outgoing.push_back(Queued {
                    bytes: kill,
                    route: Route::Data,
                });
            }
        }
        self.close(CloseReason::Local);
    }

    /// The next event: queued ones, then in-order lossless payloads, then the close.
    pub(crate) fn poll_event(&mut self) -> Option<ConnectionEvent> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        if let Some(payload) = self.transport.poll_delivered() {
            return Some(ConnectionEvent::Lossless(payload));
        }
        match self.close_reason {
            Some(reason) if !self.close_reported => {
                self.close_reported = true;
                Some(ConnectionEvent::Closed(reason))
            }
            _ => None,
        }
    }

    /// The earliest time `handle_timeout` has work.
    pub(crate) fn poll_timeout(&self) -> Option<Timestamp> {
        let temp = match self.status {
            ConnectionStatus::Closed | ConnectionStatus::Established => None,
            _ => self
                .temp
                .as_ref()
                .map(|t| t.last_sent + TEMP_PACKET_INTERVAL),
        };
        let transport = match self.status {
            ConnectionStatus::Established => self.transport.poll_timeout(),
            _ => None,
        };
        match (temp, transport) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Resends the temp packet when due (and gives up after 8 sends); runs the transport's
    /// timers.
    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        match self.status {
            ConnectionStatus::Closed => return,
            ConnectionStatus::Established => {
                self.transport.handle_timeout(now);
                return;
            }
            _ => {}
        }
        let Some(temp) = self.temp.as_mut() else {
            return;
        };
        if now < temp.last_sent + TEMP_PACKET_INTERVAL {
            return;
        }
        if temp.sends >= MAX_TEMP_PACKET_SENDS {
            self.outgoing.clear();
            self.close(CloseReason::Timeout);
            return;
        }
        temp.sends += 1;
        temp.last_sent = now;
        let bytes = temp.bytes.clone();
        if self.outgoing.len() < MAX_QUEUED_DATAGRAMS {
            self.outgoing.push_back(Queued {
                bytes,
                route: Route::Every,
            });
        }
        if self.status == ConnectionStatus::NotConfirmed {
            self.confirm_pending = true;
        }
    }

    /// True when the connection is closed and has nothing left to say.
    pub(crate) fn is_finished(&self) -> bool {
        self.status == ConnectionStatus::Closed
            && self.close_reported
            && self.outgoing.is_empty()
            && self.events.is_empty()
    }
}
