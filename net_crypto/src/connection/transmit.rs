//! What leaves a connection: queued datagrams on their routes, the confirmation, the
//! transport's requests and data sealed in place, on the path data takes now
//! (docs/protocol.md §2.9), with UDP probes beside relayed datagrams (path.rs).

use super::framing::seal_and_advance;
use super::state::{Connection, Queued, Route};
use super::types::ConnectionStatus;
use crate::packets::PACKET_ID_REQUEST;
use crate::path::{Destination, PathKind};
use crate::Timestamp;

impl Connection {
    /// Appends the next datagram for the peer to `out` and returns where it goes: queued
    /// datagrams (temp packet, lossy, kill), then the confirmation, then the transport's
    /// request packet, then its lossless data — sealed in place there, straight from the
    /// send array. `None` when nothing is due or there is no path to the peer yet.
    pub(crate) fn poll_transmit_into(
        &mut self,
        now: Timestamp,
        out: &mut Vec<u8>,
    ) -> Option<Destination> {
        while let Some(queued) = self.outgoing.pop_front() {
            let destination = match queued.route {
                Route::To(d) => d,
                Route::Every => {
                    let mut all = self.paths.all(self.peer_dht_pk);
                    let (Some(first), second) = (all.next(), all.next()) else {
                        continue; // nowhere to send it yet; the temp packet is resent later
                    };
                    if let Some(second) = second {
                        self.outgoing.push_front(Queued {
                            bytes: queued.bytes.clone(),
                            route: Route::To(second),
                        });
                    }
                    first
                }
                Route::Data => match self.data_destination(now) {
                    Some(d) => d,
                    None => continue,
                },
            };
            out.extend_from_slice(&queued.bytes);
            self.queue_probe(now, destination, &queued.bytes);
            return Some(destination);
        }
        match self.status {
            ConnectionStatus::NotConfirmed | ConnectionStatus::Established => {}
            _ => return None,
        }
        let destination = self.data_destination(now)?;
        let start = out.len();
        if self.poll_data_into(now, out) {
            let probe = out.get(start..).map(<[u8]>::to_vec).unwrap_or_default();
            self.queue_probe(now, destination, &probe);
            Some(destination)
        } else {
            None
        }
    }

    /// Seals the next session packet (confirmation, request, data) onto `out`.
    fn poll_data_into(&mut self, now: Timestamp, out: &mut Vec<u8>) -> bool {
        let buffer_start = self.transport.recv_buffer_start();
        if self.confirm_pending {
            self.confirm_pending = false;
            let packet_number = self.transport.send_buffer_end();
            if self.seal_data(buffer_start, packet_number, &[PACKET_ID_REQUEST], out) {
                return true;
            }
        }
        if self.status != ConnectionStatus::Established {
            return false;
        }
        if let Some(request) = self.transport.poll_request(now) {
            let packet_number = self.transport.send_buffer_end();
            if self.seal_data(buffer_start, packet_number, &request, out) {
                return true;
            }
        }
        let Some(data) = self.transport.poll_send_ref(now) else {
            return false;
        };
        // The payload is borrowed from the transport, so the fields go in one by one.
        seal_and_advance(
            self.data_key.as_ref(),
            &mut self.sent_nonce,
            buffer_start,
            data.packet_number,
            data.payload,
            out,
        )
    }

    /// Where data goes now; tells the transport when that is another path than before.
    fn data_destination(&mut self, now: Timestamp) -> Option<Destination> {
        let udp_was_fresh = self.paths.udp_fresh(now);
        let (path, changed) = self.paths.choose(now)?;
        if changed {
            // Leaving UDP means it has been silent for UDP_DIRECT_TIMEOUT; leaving a relay
            // means UDP came back while the relay still delivers.
            let left_silent_udp = path == PathKind::Relay && !udp_was_fresh;
            self.transport.on_path_change(now, left_silent_udp);
        }
        self.paths.destination(path, self.peer_dht_pk)
    }

    /// A small datagram that went through a relay is also tried over UDP now and then, so
    /// the session finds its way back to UDP when hole punching succeeds (path.rs).
    fn queue_probe(&mut self, now: Timestamp, sent_to: Destination, datagram: &[u8]) {
        if !matches!(sent_to, Destination::Relay(_)) || datagram.is_empty() {
            return;
        }
        if let Some(addr) = self.paths.take_probe(now, datagram.len()) {
            self.outgoing.push_front(Queued {
                bytes: datagram.to_vec(),
                route: Route::To(Destination::Udp(addr)),
            });
        }
    }
}
