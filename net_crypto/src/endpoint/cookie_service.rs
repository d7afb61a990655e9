//! The cookie service (docs/protocol.md §2.2): a cookie request is answered without keeping
//! state. The cookie holds the requester's real and DHT keys and the time, boxed under the
//! endpoint's cookie key; the handshake checks open it again.

use super::output::Transmit;
use super::state::Endpoint;
use crate::crypto::Nonce;
use crate::drop_reason::{crypto_drop, length_drop, DropReason};
use crate::packets::{Cookie, CookieRequest, CookieResponse, CookieResponsePayload};
use crate::path::Destination;
use crate::Timestamp;

impl Endpoint {
    /// Answers a cookie request statelessly (docs/protocol.md §2.2): the cookie holds the
    /// requester's real key and DHT key, boxed under our cookie key with the time.
    pub(super) fn answer_cookie_request(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let request = CookieRequest::parse(datagram).map_err(length_drop)?;
        if let Destination::Relay(sender) = from {
            // The relay names the sender; a request under another key is not its own.
            if sender != request.sender_dht_pk {
                return Err(DropReason::WrongPeer);
            }
        }
        if self.responses.len() >= self.limits.max_queued_responses {
            return Err(DropReason::ResponseQueueFull);
        }
        self.admission.admit_source(now, &from)?;
        let (shared, fresh) = self.requester_key(now, &request.sender_dht_pk)?;
        let payload = request.open(&shared).map_err(crypto_drop)?;
        if fresh {
            // The box opened: the requester holds the key's secret half.
            self.dht_keys
                .insert(now, request.sender_dht_pk, shared.clone());
        }
        let cookie = Cookie {
            time: now.as_secs(),
            real_pk: payload.sender_real_pk,
            dht_pk: request.sender_dht_pk,
        }
        .seal(&self.identity.cookie_key, self.rng.as_mut());
        let response = CookieResponse::seal(
            &shared,
            Nonce::random(self.rng.as_mut()),
            &CookieResponsePayload {
                cookie,
                echo_id: payload.echo_id,
            },
        );
        self.responses.push_back(Transmit {
            destination: from,
            payload: response.to_bytes(),
        });
        Ok(())
    }
}
